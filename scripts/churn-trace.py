#!/usr/bin/env python3
"""A long churning workload for `sift simulate`'s memory benchmark.

One pod arrives every second and leaves LIFETIME seconds later, so about
LIFETIME pods are live at any time however long the trace is; the cluster
has room for them all. Pods look like `sift trace openb`'s CPU pods (cpu
and memory requests = limits, schedulerName, an app label, phase Pending).
Departures come before arrivals at the same second, as `sift trace`
writes them.

    scripts/churn-trace.py --events 1000000 --out /tmp/churn
    sift simulate --cluster /tmp/churn/cluster.json \\
        --workload /tmp/churn/workload.ndjson

Writes OUT/cluster.json (nodes, as `kubectl get nodes -o json` prints
them) and OUT/workload.ndjson (EVENTS watch events: EVENTS/2 ADDED, as
many DELETED).
"""

import argparse
import json
import os

# Requests cycle through these (cpu millicores, memory MiB): about 1 cpu
# and 3 GiB a pod on average.
SIZES = [(500, 1024), (1000, 2048), (2000, 4096), (250, 512), (1250, 6144)]


def pod(i: int, cpu: int, mem: int) -> dict:
    requests = {"cpu": f"{cpu}m", "memory": f"{mem}Mi"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"churn-{i:07d}",
            "namespace": "default",
            "labels": {"app": "churn"},
        },
        "spec": {
            "schedulerName": "default-scheduler",
            "containers": [
                {
                    "name": "main",
                    "image": "churn",
                    "resources": {"requests": requests, "limits": requests},
                }
            ],
        },
        "status": {"phase": "Pending"},
    }


def node(i: int, cpu: int, mem_gib: int) -> dict:
    name = f"node-{i:04d}"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {
            "capacity": {"cpu": str(cpu), "memory": f"{mem_gib}Gi", "pods": "110"},
            "allocatable": {"cpu": str(cpu), "memory": f"{mem_gib}Gi", "pods": "110"},
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=1_000_000, help="events (even)")
    ap.add_argument("--lifetime", type=int, default=2000, help="seconds a pod stays")
    ap.add_argument("--out", required=True, help="output directory")
    a = ap.parse_args()
    pods = a.events // 2
    # Live pods need about lifetime cpus and 3 x lifetime GiB: 32-cpu,
    # 128 GiB nodes with a quarter to spare (and at most 110 pods each).
    nodes = max(1, (a.lifetime * 5 // 4 + 31) // 32, a.lifetime * 5 // 4 // 100 + 1)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "cluster.json"), "w") as f:
        json.dump(
            {"apiVersion": "v1", "kind": "List", "items": [node(i, 32, 128) for i in range(nodes)]},
            f,
        )
    dumps = json.JSONEncoder(separators=(",", ":")).encode
    with open(os.path.join(a.out, "workload.ndjson"), "w") as f:
        def emit(kind: str, t: int, i: int) -> None:
            cpu, mem = SIZES[i % len(SIZES)]
            f.write(dumps({"type": kind, "time": t, "object": pod(i, cpu, mem)}))
            f.write("\n")

        for t in range(pods + a.lifetime):
            gone = t - a.lifetime
            if 0 <= gone < pods:
                emit("DELETED", t, gone)
            if t < pods:
                emit("ADDED", t, t)
    print(f"{nodes} nodes, {pods} pods, {2 * pods} events in {a.out}")


if __name__ == "__main__":
    main()
