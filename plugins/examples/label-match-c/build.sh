#!/usr/bin/env bash
# Builds the C LabelMatch example into a component.
# Output: target/examples/label_match_c.wasm
#
# Toolchain: Debian's clang-19, lld-19, wasi-libc and clang's wasm32
# builtins (libclang-rt-19-dev-wasm32), installed here when missing, and
# sift itself: `sift component bindings c` writes wit-bindgen's C bindings
# of the contract, `sift component new` makes the linked module a component.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
if ! command -v clang-19 >/dev/null || ! command -v wasm-ld-19 >/dev/null \
  || [ ! -f /usr/lib/wasm32-wasi/libc.a ] \
  || [ ! -f "$(clang-19 --target=wasm32-wasi -print-libgcc-file-name)" ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq clang-19 lld-19 wasi-libc libclang-rt-19-dev-wasm32 >/dev/null
fi
sift="${SIFT:-$root/target/release/sift}"
[ -x "$sift" ] || (cd "$root" && cargo build --quiet --release -p sift-host)
build="$root/target/examples/label-match-c"
mkdir -p "$build"
"$sift" component bindings c --contract 0.7.0 --out "$build" >/dev/null
# Reactor: no main, exports called many times. -Os and LTO keep it small;
# the bindings' object file carries the contract's types into the module.
clang-19 --target=wasm32-wasi -mexec-model=reactor -fuse-ld=lld \
  -Os -flto -Wall -Wextra -Werror -Wl,--gc-sections -Wl,--strip-all \
  -I"$root/plugin-sdk/c" -I"$build" -o "$build/label_match_c.core.wasm" \
  "$here/label_match.c" "$root/plugin-sdk/c/sift.c" "$build/plugin.c" "$build/plugin_component_type.o"
"$sift" component new "$build/label_match_c.core.wasm" -o "$root/target/examples/label_match_c.wasm" >/dev/null
echo "built $root/target/examples/label_match_c.wasm"
