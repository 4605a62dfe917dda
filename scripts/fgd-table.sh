#!/usr/bin/env bash
# The FGD paper's table (USENIX ATC '23, Figs. 11-14): GPU allocation when
# arrived GPU demand reaches 100% of capacity, mean +- sd over seeds, per
# policy, replaying an openb pod list (tests/data/openb) with sift's Wasm
# plugins. Two runs at a time (one per core).
#
#   bash scripts/fgd-table.sh [TRACE] [SEED...]
#   TRACE: default (default), cpu050, gpuspec33, multigpu50; SEEDs: 42..51
#
# Writes target/fgd/TRACE/results.tsv (policy, seed, allocation %, seconds)
# and prints the table. Needs `bash scripts/build-plugins.sh` and a release
# build of sift (scripts/demo.sh does both).
set -euo pipefail
cd "$(dirname "$0")/.."
trace=${1:-default}
shift || true
seeds=${*:-42 43 44 45 46 47 48 49 50 51}
sift=./target/release/sift
out=target/fgd/$trace
policies="random dot-prod gpu-clustering gpu-packing best-fit fgd default-scheduler"
mkdir -p "$out"
for seed in $seeds; do
  "$sift" trace openb tests/data/openb/openb_node_list_all_node.csv \
    "tests/data/openb/openb_pod_list_$trace.csv" --replay fgd --seed "$seed" -o "$out/$seed" >/dev/null
done
run() {
  local dir=$1 policy=$2 seed=$3
  "$sift" simulate --cluster "$dir/$seed/cluster.json" --workload "$dir/$seed/workload.ndjson" \
    -c "$dir/$seed/configs/$policy.yaml" --no-retry --at-arrived 100 --parallelism 1 |
    awk -v p="$policy" -v s="$seed" 'NR == 2 { printf "%s\t%s\t%s\t%s\n", p, s, $(NF-1), $NF }'
}
export -f run
export sift
started=$(date +%s)
for policy in $policies; do for seed in $seeds; do echo "$out $policy $seed"; done; done |
  xargs -P 2 -n 3 bash -c 'run "$@"' _ > "$out/results.tsv"
echo "trace $trace, seeds: $seeds; $(( $(date +%s) - started )) s for $(wc -l < "$out/results.tsv") runs"
echo
echo "| policy | GPU allocation % at 100% arrived (mean ± sd) | runs | mean seconds per run |"
echo "|---|---|---|---|"
for policy in $policies; do
  awk -v p="$policy" -F'\t' '$1 == p { n++; s += $3; ss += $3 * $3; t += $4 }
    END { if (n == 0) exit; m = s / n; sd = (n > 1) ? sqrt((ss - n * m * m) / (n - 1)) : 0;
          printf "| %s | %.2f ± %.2f | %d | %.1f |\n", p, m, sd, n, t / n }' "$out/results.tsv"
done
