#!/usr/bin/env bash
# The test suite: builds the plugins and sift, then runs every test
# (unit, integration, sandbox, CLI and the conformance cases).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build-plugins.sh
cargo build --quiet --release -p sift-host
cargo test --release --workspace
