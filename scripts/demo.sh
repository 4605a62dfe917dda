#!/usr/bin/env bash
# The demo: builds sift and the bundled plugins, then filters the sample
# cluster (tests/data/demo) for three pods.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build-plugins.sh
# Same build as scripts/test.sh, so running both compiles wasmtime once.
cargo build --quiet --release --workspace --all-targets
./target/release/sift filter --cluster tests/data/demo/cluster.json --pod tests/data/demo/pods.yaml
