#!/usr/bin/env bash
# Assembles the hand-written WAT GpuModel into a component.
# Output: target/examples/gpu_model_wat.wasm
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
mkdir -p "$root/target/examples"
(cd "$root" && cargo build --quiet --release -p sift-tests --bin sift-wat-component)
"$root/target/release/sift-wat-component" "$here/gpu_model.wat" "$root/target/examples/gpu_model_wat.wasm"
echo "built $root/target/examples/gpu_model_wat.wasm"
