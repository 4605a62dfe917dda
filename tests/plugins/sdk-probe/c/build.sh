#!/usr/bin/env bash
# Builds the C SdkProbe: bash build.sh OUT.wasm (sift: $SIFT, else `sift`
# on PATH, else target/release/sift). Needs clang-19, lld-19 and wasi-libc.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
out="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
sift="${SIFT:-$(command -v sift || echo "$root/target/release/sift")}"
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
"$sift" component bindings c --contract 0.7.0 --out "$build" >/dev/null
clang-19 --target=wasm32-wasi -mexec-model=reactor -fuse-ld=lld \
  -Os -flto -Wall -Wextra -Werror -Wl,--gc-sections -Wl,--strip-all \
  -I"$root/plugin-sdk/c" -I"$build" -o "$build/probe.core.wasm" \
  "$here/probe.c" "$root/plugin-sdk/c/sift.c" "$build/plugin.c" "$build/plugin_component_type.o"
"$sift" component new "$build/probe.core.wasm" -o "$out" >/dev/null
echo "built $out"
