#!/usr/bin/env bash
# Builds the JavaScript LabelMatch example with the JavaScript SDK
# (plugin-sdk/js). Output: target/examples/label_match_js.wasm
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
out="$root/target/examples/label_match_js.wasm"
bash "$root/plugin-sdk/js/build.sh" "$here/label_match.js" "$root/wit/0.7.0" "$out"
echo "built $out"
