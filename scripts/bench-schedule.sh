#!/usr/bin/env bash
# End-to-end throughput of `sift schedule` (tests/tests/schedule_bench.rs):
# NODES nodes and PODS pods shaped as kube-scheduler's scheduler_perf
# SchedulingBasic, created as fast as the test can against the fake API
# server over loopback; prints pods bound per second, the p50/p99 time
# from a pod's creation to its bind, sift's peak RSS and CPU time, one
# line per mode (scheduler and batch mode, Wasm and native plugins).
#
#   bash scripts/bench-schedule.sh [--nodes N] [--pods N] [--init-pods N]
#                                  [--creators N] [--sift-args "ARGS"] [--modes LIST]
#
#   --nodes N        nodes (default 5000)
#   --pods N         pods created once sift is ready, measured (default 10000)
#   --init-pods N    pods already bound when sift starts (default 0)
#   --creators N     threads creating the pods (default 1)
#   --sift-args ARGS more arguments for sift schedule ("--bind-concurrency 64")
#   --modes LIST     which modes, comma separated (default: all of
#                    scheduler/wasm, batch/wasm, scheduler/native, batch/native)
#   -v, --verbose    also print the progress each second
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { sed -n 2,19p "$0" | sed 's/^# \{0,1\}//'; }
verbose=""
while [ $# -gt 0 ]; do
  case $1 in
    --nodes) export SIFT_BENCH_NODES=$2; shift 2 ;;
    --pods) export SIFT_BENCH_PODS=$2; shift 2 ;;
    --init-pods) export SIFT_BENCH_INIT_PODS=$2; shift 2 ;;
    --creators) export SIFT_BENCH_CREATORS=$2; shift 2 ;;
    --sift-args) export SIFT_BENCH_SIFT_ARGS=$2; shift 2 ;;
    --modes) export SIFT_BENCH_MODES=$2; shift 2 ;;
    -v|--verbose) verbose=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown argument $1" >&2; usage >&2; exit 2 ;;
  esac
done
[ -d target/plugins ] || bash scripts/build-plugins.sh
cargo build --quiet --release -p sift-host -p sift-tests --tests
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
cargo test --quiet --release -p sift-tests --test schedule_bench -- --ignored --nocapture \
  >"$log" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
  cat "$log"
  exit "$status"
fi
if [ -n "$verbose" ]; then
  grep -E '^schedule-bench' "$log"
else
  grep -E '^schedule-bench' "$log" | grep -v '^schedule-bench-progress '
fi
