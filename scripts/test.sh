#!/usr/bin/env bash
# The test suite: builds the plugins and sift, then runs every test
# (unit, integration, sandbox, CLI, doctests and the conformance cases).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build-plugins.sh
# One build of every target: tests and binaries share one feature
# resolution, so wasmtime compiles once.
cargo build --quiet --release --workspace --all-targets
bash scripts/build-examples.sh
python3 -m pip install --quiet kubernetes-validate==1.37.0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo test --release --workspace 2>&1 | tee "$log"
awk '/^test result:/ { p += $4; f += $6 } END { printf "tests: %d passed, %d failed\n", p, f }' "$log"
