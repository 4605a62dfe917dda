#!/usr/bin/env bash
# Builds the Go LabelMatch example with the Go SDK (plugin-sdk/go).
# Output: target/examples/label_match_go.wasm
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
[ -x "$root/target/release/sift" ] || (cd "$root" && cargo build --quiet --release -p sift-host)
SIFT="$root/target/release/sift" GO_BUILD_DIR="$root/target/examples/go" \
  bash "$root/plugin-sdk/go/component.sh" "$here" "$root/target/examples/label_match_go.wasm"
echo "built $root/target/examples/label_match_go.wasm"
