#!/usr/bin/env bash
# Builds the Python LabelMatch example with the Python SDK (plugin-sdk/python).
# Output: target/examples/label_match_python.wasm
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
out="$root/target/examples"
bash "$root/plugin-sdk/python/build.sh" "$here" "$root/wit/0.7.0" "$out/label_match_python.wasm" "$out/python-venv"
echo "built $out/label_match_python.wasm"
