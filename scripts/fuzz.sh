#!/usr/bin/env bash
# Fuzzes what sift reads from outside (tests/tests/fuzz.rs): each target
# runs for SECONDS (default 60), on both cores, and prints how many cases
# it ran and how many were accepted. A finding fails with the input; keep
# it as a regression test in tests/tests/fuzz.rs.
#
#   bash scripts/fuzz.sh 300
set -uo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
SIFT_FUZZ_SECONDS="$seconds" cargo test --release -p sift-tests --test fuzz -- \
  --nocapture --test-threads 2 >"$log" 2>&1
status=$?
grep -oE 'fuzz [^:]+: [0-9]+ cases.*finding|test result.*|panicked.*' "$log"
if [ "$status" -ne 0 ]; then
  cat "$log"
  exit "$status"
fi
