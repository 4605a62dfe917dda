#!/usr/bin/env bash
# Assembles the hand-written WAT GpuModel into a component with
# `sift component new` (wat + wit-component inside sift).
# Output: target/examples/gpu_model_wat.wasm
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
sift="$root/target/release/sift"
[ -x "$sift" ] || (cd "$root" && cargo build --quiet --release -p sift-host)
mkdir -p "$root/target/examples"
"$sift" component new "$here/gpu_model.wat" -o "$root/target/examples/gpu_model_wat.wasm" >/dev/null
echo "built $root/target/examples/gpu_model_wat.wasm"
