#!/usr/bin/env bash
# Builds a C plugin on this SDK into a sift plugin component:
#   build.sh OUT.wasm SOURCE.c...
#
# Toolchain: Debian's clang-19, lld-19, wasi-libc and clang's wasm32
# builtins (libclang-rt-19-dev-wasm32), installed here when missing, and
# sift itself: `sift component bindings c` writes wit-bindgen's C bindings
# of the contract sift.c implements, `sift component new` makes the linked
# module a component. Environment: SIFT (the sift binary, default `sift`
# on PATH).
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 OUT.wasm SOURCE.c..." >&2
  exit 2
fi
sdk="$(cd "$(dirname "$0")" && pwd)"
out="$1"
shift
sift="${SIFT:-sift}"
if ! command -v clang-19 >/dev/null || ! command -v wasm-ld-19 >/dev/null \
  || [ ! -f /usr/lib/wasm32-wasi/libc.a ] \
  || [ ! -f "$(clang-19 --target=wasm32-wasi -print-libgcc-file-name)" ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq clang-19 lld-19 wasi-libc libclang-rt-19-dev-wasm32 >/dev/null
fi
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
"$sift" component bindings c --contract 0.7.0 --out "$build" >/dev/null
# Reactor: no main, exports called many times. -Os and LTO keep it small;
# the bindings' object file carries the contract's types into the module.
clang-19 --target=wasm32-wasi -mexec-model=reactor -fuse-ld=lld \
  -Os -flto -Wall -Wextra -Werror -Wl,--gc-sections -Wl,--strip-all \
  -I"$sdk" -I"$build" -o "$build/plugin.core.wasm" \
  "$@" "$sdk/sift.c" "$build/plugin.c" "$build/plugin_component_type.o"
mkdir -p "$(dirname "$out")"
"$sift" component new "$build/plugin.core.wasm" -o "$out" >/dev/null
