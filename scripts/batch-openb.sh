#!/usr/bin/env bash
# Batch mode on the openb GPU trace (tests/data/openb): the pods grouped into
# gangs of 2-8 (one Queue per QoS class) and replayed through Volcano's
# sessions (allocate, backfill; priority, gang | drf, predicates, proportion,
# nodeorder). Prints the summary and writes target/openb-batch/batch.svg
# (allocation, pending pods, and each queue's allocated vs deserved GPU
# share), groups.jsonl (each PodGroup's outcome) and queues.csv.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build-plugins.sh
cargo build --quiet --release -p sift-host
out=target/openb-batch
./target/release/sift trace openb tests/data/openb/openb_node_list_all_node.csv \
  tests/data/openb/openb_pod_list_default.csv --gangs 2-8 -o "$out"
./target/release/sift simulate --mode batch --cluster "$out/cluster.json" "$out/batch.json" \
  --workload "$out/workload.ndjson" --groups-out "$out/groups.jsonl" \
  --queues-out "$out/queues.csv" --plot "$out/batch.svg"
echo "plot: $out/batch.svg"
