#!/usr/bin/env bash
# Builds the Python GpuModel example into a component with componentize-py
# (PyPI). Output: target/examples/gpu_model_python.wasm
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/../../.."
python3 -m pip install --quiet "componentize-py==0.25.1"
out="$root/target/examples"
mkdir -p "$out"
cd "$here"
componentize-py -d "$root/wit/0.1.0" -w predicate-plugin componentize app -o "$out/gpu_model_python.wasm"
echo "built $out/gpu_model_python.wasm"
