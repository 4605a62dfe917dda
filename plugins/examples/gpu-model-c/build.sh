#!/usr/bin/env bash
# Builds the C GpuModel example with the C SDK's build script
# (plugin-sdk/c/build.sh: clang-19 from Debian, the contract's bindings,
# `sift component new`).
# Output: target/examples/gpu_model_c.wasm
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
[ -n "${SIFT:-}" ] || [ -x "$root/target/release/sift" ] || (cd "$root" && cargo build --quiet --release -p sift-host)
SIFT="${SIFT:-$root/target/release/sift}" \
  bash "$root/plugin-sdk/c/build.sh" "$root/target/examples/gpu_model_c.wasm" "$here/gpu_model.c"
echo "built $root/target/examples/gpu_model_c.wasm"
