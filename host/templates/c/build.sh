#!/usr/bin/env bash
# Builds the component: {{crate}}.wasm
#
# Needs clang with a wasm32-wasi target and its compiler-rt builtins, lld
# and wasi-libc (Debian: `apt-get install clang-19 lld-19 wasi-libc
# libclang-rt-19-dev-wasm32`; set CC to use another clang)
# and sift.
set -euo pipefail
cd "$(dirname "$0")"
# sift: $SIFT, else `sift` on PATH, else the sift that created this project.
sift="${SIFT:-$(command -v sift || echo '{{sift}}')}"
cc="${CC:-clang-19}"
if ! command -v "$cc" >/dev/null; then
  echo "build.sh: $cc not found: install clang for wasm32 (Debian: apt-get install clang-19 lld-19 wasi-libc libclang-rt-19-dev-wasm32), or set CC to a clang that has them" >&2
  exit 1
fi
# wit-bindgen's C bindings of the contract, which sdk/sift.c implements.
"$sift" component bindings c --contract 0.7.0 --out bindings >/dev/null
# Reactor: no main; the exports are called many times. Debug info is
# stripped, function names kept (trap backtraces name them).
"$cc" --target=wasm32-wasi -mexec-model=reactor -fuse-ld=lld \
  -Os -flto -Wall -Wextra -Wl,--gc-sections -Wl,--strip-debug \
  -Isdk -Ibindings -o bindings/{{crate}}.core.wasm \
  plugin.c sdk/sift.c bindings/plugin.c bindings/plugin_component_type.o
"$sift" component new bindings/{{crate}}.core.wasm -o {{crate}}.wasm >/dev/null
echo "built {{crate}}.wasm"
