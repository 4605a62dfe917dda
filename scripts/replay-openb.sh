#!/usr/bin/env bash
# The simulation example: replays the openb GPU trace (tests/data/openb,
# the FGD paper's data) the way the paper does (GPU nodes, pods shuffled by
# seed 42 and tuned to 130% of GPU capacity, one attempt each) under three
# policies (the paper's FGD and Random, kube-scheduler's default scoring),
# prints the comparison and writes target/openb/replay.svg.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build-plugins.sh
cargo build --quiet --release --workspace --all-targets
out=target/openb
./target/release/sift trace openb tests/data/openb/openb_node_list_all_node.csv \
  tests/data/openb/openb_pod_list_default.csv --replay fgd --seed 42 -o "$out"
./target/release/sift simulate --cluster "$out/cluster.json" --workload "$out/workload.ndjson" \
  -c "$out/configs/fgd.yaml" -c "$out/configs/random.yaml" -c "$out/configs/default-scheduler.yaml" \
  --no-retry --at-arrived 100 --plot "$out/replay.svg"
echo "plot: $out/replay.svg"
