"""Writes tests/data/spread/cluster.json: a small cluster as
`kubectl get nodes,pods,namespaces -A -o json` prints it, where Deployments
use topology spread constraints, pod affinity and anti-affinity, and pods
wait to be scheduled. tests/tests/cli.rs checks `sift filter` on it against
the verdicts and messages kube-scheduler gives (worked out in the comments
below from the upstream rules restated in docs/upstream/).

Run from the repository root: python3 tests/data/spread/gen.py
"""
import json

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def node(name, zone):
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "uid": f"uid-{name}",
                     "labels": {HOST: name, ZONE: zone, "kubernetes.io/os": "linux"}},
        "spec": {},
        "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                   "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                   "conditions": [{"type": "Ready", "status": "True"}],
                   "nodeInfo": {"kubeletVersion": "v1.35.0",
                                "containerRuntimeVersion": "containerd://1.7.2"}},
    }


def namespace(name, team):
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "labels": {"team": team,
                                                  "kubernetes.io/metadata.name": name}},
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}


def pod(name, ns, app, node=None, cpu="250m", spread=None, affinity=None, owner=None,
        node_selector=None):
    spec = {"containers": [{"name": app, "image": f"registry.example/{app}:1",
                            "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}}}],
            "schedulerName": "default-scheduler", "priority": 0,
            "restartPolicy": "Always", "terminationGracePeriodSeconds": 30}
    if node:
        spec["nodeName"] = node
    if spread:
        spec["topologySpreadConstraints"] = spread
    if affinity:
        spec["affinity"] = affinity
    if node_selector:
        spec["nodeSelector"] = node_selector
    meta = {"name": name, "namespace": ns, "uid": f"uid-{ns}-{name}",
            "labels": {"app": app, "pod-template-hash": "7d9f8"}}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                    "name": owner, "uid": f"uid-{owner}",
                                    "controller": True, "blockOwnerDeletion": True}]
    status = {"phase": "Running" if node else "Pending", "qosClass": "Burstable"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def spread(key, app):
    return [{"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": {"app": app}}}]


def anti(app, key=HOST):
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}]}}


items = [
    node("node-a1", "zone-a"), node("node-a2", "zone-a"),
    node("node-b1", "zone-b"), node("node-c1", "zone-c"),
    namespace("shop", "web"), namespace("data", "storage"),
    # The web Deployment: three replicas placed, spread over zones.
    pod("web-7d9f8-aaaaa", "shop", "web", "node-a1", spread=spread(ZONE, "web"), owner="web-7d9f8"),
    pod("web-7d9f8-bbbbb", "shop", "web", "node-a2", spread=spread(ZONE, "web"), owner="web-7d9f8"),
    pod("web-7d9f8-ccccc", "shop", "web", "node-b1", spread=spread(ZONE, "web"), owner="web-7d9f8"),
    # A guard whose anti-affinity keeps batch pods off its node.
    pod("guard-0", "shop", "guard", "node-c1", affinity=anti("batch"), owner="guard-5c6"),
    # Pending. web's fourth replica: zones a 2, b 1, c 0 (min 0); only
    # zone-c keeps the skew within 1 -> feasible node-c1.
    pod("web-7d9f8-ddddd", "shop", "web", spread=spread(ZONE, "web"), owner="web-7d9f8"),
    # cache: one per host away from web -> only node-c1.
    pod("cache-0", "shop", "cache", affinity=anti("web")),
    # db: must share a zone with web pods of namespaces labelled team=web
    # -> zones a and b; node-c1 fails affinity (UnschedulableAndUnresolvable).
    pod("db-0", "data", "db", affinity={"podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchLabels": {"app": "web"}},
            "namespaceSelector": {"matchLabels": {"team": "web"}},
            "topologyKey": ZONE}]}}),
    # batch: guard-0's anti-affinity forbids node-c1 (Unschedulable).
    pod("batch-0", "shop", "batch"),
    # cache-1: zone anti-affinity against web and a node selector for zones
    # a and b: nothing fits. NodeAffinity rejects node-c1 first.
    pod("cache-1", "shop", "cache", affinity=dict(anti("web", ZONE), nodeAffinity={
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{
            "matchExpressions": [{"key": ZONE, "operator": "In",
                                  "values": ["zone-a", "zone-b"]}]}]}})),
]

with open("tests/data/spread/cluster.json", "w") as f:
    json.dump({"apiVersion": "v1", "kind": "List", "items": items,
               "metadata": {"resourceVersion": ""}}, f, indent=2)
    f.write("\n")
print("wrote tests/data/spread/cluster.json")
