#!/usr/bin/env bash
# Tries `sift serve --kubeconfig` against a real API server, as an operator
# would: starts sift, creates nodes and pods with kubectl, and times how long
# sift's filter answers take to follow (node added, pod bound, pod deleted,
# pod finished). Optionally forces a relist (410 Gone) by restarting the API
# server while objects change through another server of the same etcd.
#
#   bash scripts/watch-acceptance.sh KUBECONFIG [--down-kubeconfig K2 --stop CMD --start CMD]
#
# KUBECONFIG must allow creating nodes, pods and namespaces (use a test
# cluster: it creates and deletes nodes named sift-acc-*). Needs kubectl,
# curl and python3, and a release build (cargo build --release -p sift-host;
# bash scripts/build-plugins.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { sed -n 2,13p "$0"; exit 2; }
K=$1; shift
K2="" STOP="" START=""
while [ $# -gt 0 ]; do
  case $1 in
    --down-kubeconfig) K2=$2; shift 2 ;;
    --stop) STOP=$2; shift 2 ;;
    --start) START=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
NS=sift-acc
kc() { kubectl --kubeconfig "$K" "$@" 2> >(grep -v -i 'version' >&2); }
work=$(mktemp -d)
sift_pid=""
cleanup() {
  [ -n "$sift_pid" ] && kill "$sift_pid" 2>/dev/null || true
  kc delete node sift-acc-1 sift-acc-2 sift-acc-3 sift-acc-4 --ignore-not-found >/dev/null 2>&1 || true
  kc -n $NS delete pod --all --grace-period=0 --force >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

now() { date +%s.%N; }
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.3f}')" "$1" "$(now)"; }
# Whether more than $2 seconds passed since $1.
over() { python3 -c "import sys; sys.exit(float(sys.argv[2]) - float(sys.argv[1]) <= float(sys.argv[3]))" "$1" "$(now)" "$2"; }

./target/release/sift serve --kubeconfig "$K" --plugins target/plugins \
  --listen 127.0.0.1:0 --log-level info >"$work/out" 2>"$work/err" &
sift_pid=$!
for _ in $(seq 100); do grep -q listening "$work/out" 2>/dev/null && break; sleep 0.1; done
addr=$(sed -n 's/^listening on //p' "$work/out")
[ -n "$addr" ] || { cat "$work/err"; exit 1; }
t0=$(now)
until [ "$(curl -s -o /dev/null -w '%{http_code}' "http://$addr/readyz")" = 200 ]; do
  kill -0 $sift_pid || { cat "$work/err"; exit 1; }
  over "$t0" 30 && { curl -s "http://$addr/readyz"; exit 1; }
  sleep 0.05
done
echo "ready after the first lists: $(since "$t0") s"

node() {
  kc apply -f - >/dev/null <<EOF
{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "$1", "labels": {"sift-acc": "yes"}}}
EOF
  kc patch node "$1" --subresource=status --type=merge -p \
    '{"status":{"capacity":{"cpu":"4","memory":"8Gi","pods":"110"},"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}}' >/dev/null
}
kc create namespace $NS >/dev/null 2>&1 || true
# An API server without a controller manager has no default service account.
kc -n $NS create serviceaccount default >/dev/null 2>&1 || true
node sift-acc-1
node sift-acc-2

# A pending pod asking 2 CPUs, tolerating the not-ready taint of nodes
# without a kubelet; the answer for the given node names.
answer() {
  local names
  names=$(printf '"%s",' "$@"); names="[${names%,}]"
  curl -s -X POST "http://$addr/filter" -d '{"Pod":{"metadata":{"name":"probe","namespace":"'$NS'"},
    "spec":{"tolerations":[{"operator":"Exists"}],"containers":[{"name":"c","resources":{"requests":{"cpu":"2"}}}]}},
    "NodeNames":'"$names"'}'
}
feasible() { answer "$@" | python3 -c 'import json,sys; print(" ".join(sorted(json.load(sys.stdin)["NodeNames"] or [])))'; }
# Waits (up to $limit s) until the feasible set for the given nodes is
# $want; prints the time.
limit=10
wait_for() {
  local what=$1 want=$2; shift 2
  local t; t=$(now)
  until [ "$(feasible "$@")" = "$want" ]; do
    over "$t" $limit && { echo "FAIL: $what: got '$(feasible "$@")', want '$want'"; answer "$@"; exit 1; }
    sleep 0.02
  done
  echo "$what: $(since "$t") s"
}
wait_for "two nodes created, seen" "sift-acc-1 sift-acc-2" sift-acc-1 sift-acc-2

t=$(now); node sift-acc-3; echo "  (kubectl took $(since "$t") s)"
wait_for "node added, seen" "sift-acc-1 sift-acc-2 sift-acc-3" sift-acc-1 sift-acc-2 sift-acc-3

pod() {
  kc -n $NS apply -f - >/dev/null <<EOF
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "$1"},
 "spec": {"nodeName": "$2", "automountServiceAccountToken": false,
          "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "3"}}}]}}
EOF
}
pod big sift-acc-1
wait_for "pod bound (3 of 4 CPUs), seen" "sift-acc-2 sift-acc-3" sift-acc-1 sift-acc-2 sift-acc-3
kc -n $NS delete pod big --grace-period=0 --force >/dev/null 2>&1
wait_for "pod deleted, seen" "sift-acc-1 sift-acc-2 sift-acc-3" sift-acc-1 sift-acc-2 sift-acc-3
pod done sift-acc-2
wait_for "second pod bound, seen" "sift-acc-1 sift-acc-3" sift-acc-1 sift-acc-2 sift-acc-3
kc -n $NS patch pod done --subresource=status --type=merge -p '{"status":{"phase":"Succeeded"}}' >/dev/null
wait_for "pod Succeeded (leaves the field selector), seen" "sift-acc-1 sift-acc-2 sift-acc-3" sift-acc-1 sift-acc-2 sift-acc-3
kc delete node sift-acc-3 >/dev/null
t=$(now)
until answer sift-acc-3 | grep -q "not in sift's cluster state"; do sleep 0.02; done
echo "node deleted, seen: $(since "$t") s"

if [ -n "$K2" ] && [ -n "$STOP" ] && [ -n "$START" ]; then
  echo "forcing a relist: stopping the API server sift watches"
  pod held sift-acc-1
  wait_for "pod bound, seen" "sift-acc-2" sift-acc-1 sift-acc-2
  bash -c "$STOP"
  # While sift's server is down: a node is added and the pod deleted
  # through the other server, so only a relist can tell sift.
  kubectl --kubeconfig "$K2" apply -f - >/dev/null 2>&1 <<EOF
{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "sift-acc-4"}}
EOF
  kubectl --kubeconfig "$K2" patch node sift-acc-4 --subresource=status --type=merge -p \
    '{"status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}}' >/dev/null 2>&1
  kubectl --kubeconfig "$K2" -n $NS delete pod held --grace-period=0 --force >/dev/null 2>&1
  sleep 2
  echo "while down: /readyz says: $(curl -s "http://$addr/readyz")"
  bash -c "$START"
  # The watch retries with backoff (0.8 s doubling to 30 s, jittered).
  limit=60
  wait_for "after the restart: node added and pod deleted while away, seen" \
    "sift-acc-1 sift-acc-2 sift-acc-4" sift-acc-1 sift-acc-2 sift-acc-4
  curl -s "http://$addr/status" >"$work/status.json"
  python3 - "$work/status.json" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))["watch"]
for k in ("nodes", "pods", "namespaces"):
    v = w[k]
    print("  %s: relists %d, errors %d, healthy %s, last error: %s"
          % (k, v["relists"], v["errors"], v["healthy"], v["lastError"]))
PY
  grep -i "410\|expired\|too old" "$work/err" | head -3 || true
fi
kill -0 $sift_pid && echo "sift still serving; /readyz: $(curl -s "http://$addr/readyz")"
