#!/usr/bin/env bash
# Builds the JavaScript GpuModel example with the JavaScript SDK
# (plugin-sdk/js). Output: target/examples/gpu_model_js.wasm
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
out="$root/target/examples/gpu_model_js.wasm"
bash "$root/plugin-sdk/js/build.sh" "$here/gpu_model.js" "$root/wit/0.7.0" "$out"
echo "built $out"
