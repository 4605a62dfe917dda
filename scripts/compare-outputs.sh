#!/usr/bin/env bash
# Writes what sift answers on fixed inputs into a directory, so that a
# refactor can be checked to change no output: run it with the binary
# before and after, then `diff -r BEFORE AFTER` (no difference expected).
#
#   scripts/compare-outputs.sh path/to/old/sift /tmp/before
#   scripts/compare-outputs.sh target/release/sift /tmp/after
#   diff -r /tmp/before /tmp/after && echo identical
#
# Inputs: the demo cluster and pods, the demo pods over a 5,000-node dump
# (`sift bench --write-cluster`), the openb replay (3 configs, seed 42,
# as scripts/replay-openb.sh), the batch example, and every conformance
# case. Timings ("seconds") are removed from the JSON; nothing else is.
# Uses the bundled plugins in target/plugins (scripts/build-plugins.sh).
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 SIFT_BINARY OUT_DIR" >&2
  exit 2
fi
sift=$(realpath "$1")
out=$2
cd "$(dirname "$0")/.."
mkdir -p "$out"
out=$(realpath "$out")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export SIFT_PLUGINS_DIR=${SIFT_PLUGINS_DIR:-$PWD/target/plugins}

# Drops every "seconds" key from a JSON document on stdin.
without_seconds() {
  python3 -c '
import json, sys
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k != "seconds"}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
json.dump(strip(json.load(sys.stdin)), sys.stdout, indent=1, sort_keys=True)
print()'
}

"$sift" filter --cluster tests/data/demo/cluster.json --pod tests/data/demo/pods.yaml -o json \
  > "$out/filter-demo.json"

"$sift" bench --nodes 5000 --write-cluster "$work/bench5000.json" > /dev/null
# The dump has no pending pod: the demo's three pods go over its nodes.
"$sift" filter --cluster "$work/bench5000.json" --pod tests/data/demo/pods.yaml -o json \
  > "$out/filter-bench5000.json"

"$sift" trace openb tests/data/openb/openb_node_list_all_node.csv \
  tests/data/openb/openb_pod_list_default.csv --replay fgd --seed 42 -o "$work/openb" > /dev/null
"$sift" simulate --cluster "$work/openb/cluster.json" --workload "$work/openb/workload.ndjson" \
  -c "$work/openb/configs/fgd.yaml" -c "$work/openb/configs/random.yaml" \
  -c "$work/openb/configs/default-scheduler.yaml" --no-retry --at-arrived 100 --json \
  | without_seconds > "$out/simulate-openb.json"

"$sift" simulate --mode batch --cluster tests/data/batch/cluster.yaml \
  --workload tests/data/batch/workload.ndjson --groups-out "$out/batch-groups.jsonl" \
  --pods-out "$out/batch-pods.jsonl" --json | without_seconds > "$out/simulate-batch.json"

# Conformance prints one line per failing case and a total: the same
# cases must pass and fail.
"$sift" conformance tests/cases > "$out/conformance.txt" 2>&1 || true

echo "wrote $(ls "$out" | wc -l) files to $out"
