"""Writes tests/cases/NominatedPods/: pods nominated to nodes, as upstream's
RunFilterPluginsWithNominatedPods and evaluateNominatedNode treat them
(pkg/scheduler/framework/runtime/framework.go, pkg/scheduler/schedule_one.go).

Each expectation follows from the rules restated in
docs/upstream/podtopologyspread.md §4 and docs/upstream/interpodaffinity.md §4:
pass 1 adds the pods nominated to the node with priority >= the incoming
pod's (not the pod itself) and runs every filter; when pods were added and
pass 1 passed, pass 2 runs without them. A pod with its own nominated node
tries that node first and takes it if it fits.

Run from the repository root: python3 docs/upstream/nominated/gen.py
"""
import json
import os
import re

OUT = "tests/cases/NominatedPods"


def node(name, zone="zone-a", cpu="4", labels=None):
    l = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}
    l.update(labels or {})
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "uid": f"uid-{name}", "labels": l},
        "spec": {},
        "status": {
            "allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
            "capacity": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
        },
    }


def pod(name, cpu="100m", priority=0, labels=None, node_name=None, nominated=None,
        phase="Pending", ports=None, affinity=None, spread=None, uid=None,
        scheduler="default-scheduler"):
    container = {"name": "app", "image": "registry.k8s.io/pause:3.10",
                 "resources": {"requests": {"cpu": cpu}}}
    if ports:
        container["ports"] = [{"containerPort": p, "hostPort": p, "protocol": "TCP"} for p in ports]
    spec = {"containers": [container], "schedulerName": scheduler,
            "priority": priority}
    if node_name:
        spec["nodeName"] = node_name
    if affinity:
        spec["affinity"] = affinity
    if spread:
        spec["topologySpreadConstraints"] = spread
    status = {"phase": phase}
    if nominated:
        status["nominatedNodeName"] = nominated
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": uid or f"uid-{name}",
                     "labels": labels or {}},
        "spec": spec,
        "status": status,
    }


def anti(app, key="kubernetes.io/hostname"):
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}]}}


def aff(app, key="kubernetes.io/hostname"):
    return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}]}}


def st(code, plugin, reason):
    return {"code": code, "plugin": plugin, "reasons": [reason]}


# The pod's request fits the node's allocatable: preemption could help, so
# upstream says Unschedulable; beyond allocatable it is Unresolvable.
CPU = ("Unschedulable", "NodeResourcesFit", "Insufficient cpu")
CPU_NEVER = ("UnschedulableAndUnresolvable", "NodeResourcesFit", "Insufficient cpu")
CASES = []


def case(name, nodes, pods, incoming, feasible, statuses=None, message=None, filters=None):
    c = {"name": name,
         "source": "sift, from upstream's RunFilterPluginsWithNominatedPods / evaluateNominatedNode "
                   "(docs/upstream/nominated/gen.py)",
         "nodes": nodes, "pods": pods, "pod": incoming,
         "expect": {"feasible": feasible, "statuses": statuses or {}}}
    if filters:
        c["filters"] = filters
    if message:
        c["expect"]["message"] = message
    CASES.append(c)


two = lambda: [node("node-a"), node("node-b", zone="zone-b")]

case("a higher-priority pod nominated to a node takes its room",
     two(), [pod("victor", cpu="3500m", priority=100, nominated="node-a")],
     pod("web", cpu="1"), ["node-b"], {"node-a": st(*CPU)})

case("a nominated pod of equal priority counts too",
     two(), [pod("victor", cpu="3500m", priority=5, nominated="node-a")],
     pod("web", cpu="1", priority=5), ["node-b"], {"node-a": st(*CPU)})

case("a nominated pod of lower priority does not count",
     two(), [pod("victor", cpu="3500m", priority=1, nominated="node-a")],
     pod("web", cpu="1", priority=5), ["node-a", "node-b"])

case("the pod's own nomination is not added, and its nominated node is tried first and taken",
     two(), [pod("web", cpu="3500m", nominated="node-b")],
     pod("web", cpu="3500m", nominated="node-b"), ["node-b"])

case("a nominated node that does not fit is reported once, then every node is tried",
     [node("node-a"), node("node-b", zone="zone-b", cpu="1"), node("node-c", zone="zone-c", cpu="1")],
     [], pod("big", cpu="2", nominated="node-b"), ["node-a"],
     {"node-b": st(*CPU_NEVER), "node-c": st(*CPU_NEVER)})

case("nobody fits: the nominated node's status counts once in the message",
     [node("node-a", cpu="1"), node("node-b", zone="zone-b", cpu="1")],
     [], pod("big", cpu="2", nominated="node-b"), [],
     {"node-a": st(*CPU_NEVER), "node-b": st(*CPU_NEVER)},
     "0/2 nodes are available: 2 Insufficient cpu.")

case("a nominated pod's host port is taken on its node",
     two(), [pod("victor", priority=100, ports=[8080], nominated="node-a")],
     pod("web", ports=[8080]), ["node-b"],
     {"node-a": st("Unschedulable", "NodePorts",
                   "node(s) didn't have free ports for the requested pod ports")})

case("a nominated pod's pod count fills the node",
     [dict(node("node-a"), status={"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "1"},
                                   "capacity": {"cpu": "4", "memory": "8Gi", "pods": "1"}}),
      node("node-b", zone="zone-b")],
     [pod("victor", priority=100, nominated="node-a")],
     pod("web"), ["node-b"],
     {"node-a": st("Unschedulable", "NodeResourcesFit", "Too many pods")})

case("a nominated pod's anti-affinity is not seen when InterPodAffinity skips the pod",
     two(), [pod("guard", priority=100, labels={"app": "guard"}, affinity=anti("web"),
                 nominated="node-a")],
     pod("web", labels={"app": "web"}), ["node-a", "node-b"])

case("a nominated pod's anti-affinity forbids the incoming pod on its node",
     [node("node-a"), node("node-b", zone="zone-b"), node("node-c", zone="zone-c")],
     [pod("guard-0", labels={"app": "guard"}, affinity=anti("web"), node_name="node-c",
          phase="Running"),
      pod("guard-1", priority=100, labels={"app": "guard"}, affinity=anti("web"),
          nominated="node-a")],
     pod("web", labels={"app": "web"}), ["node-b"],
     {"node-a": st("Unschedulable", "InterPodAffinity",
                   "node(s) didn't satisfy existing pods anti-affinity rules"),
      "node-c": st("Unschedulable", "InterPodAffinity",
                   "node(s) didn't satisfy existing pods anti-affinity rules")})

case("the incoming pod's anti-affinity counts a nominated pod",
     two(), [pod("web-0", priority=100, labels={"app": "web"}, nominated="node-a")],
     pod("web-1", labels={"app": "web"}, affinity=anti("web")), ["node-b"],
     {"node-a": st("Unschedulable", "InterPodAffinity",
                   "node(s) didn't match pod anti-affinity rules")})

case("a nominated pod never satisfies pod affinity: the pass without it fails",
     two(), [pod("db-0", priority=100, labels={"app": "db"}, nominated="node-a")],
     pod("web", labels={"app": "web"}, affinity=aff("db")), [],
     {"node-a": st("UnschedulableAndUnresolvable", "InterPodAffinity",
                   "node(s) didn't match pod affinity rules"),
      "node-b": st("UnschedulableAndUnresolvable", "InterPodAffinity",
                   "node(s) didn't match pod affinity rules")},
     "0/2 nodes are available: 2 node(s) didn't match pod affinity rules.")

spread = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
           "whenUnsatisfiable": "DoNotSchedule",
           "labelSelector": {"matchLabels": {"app": "web"}}}]
case("a nominated pod counts in its node's spread domain, for that node only",
     two(), [pod("web-0", labels={"app": "web"}, node_name="node-a"),
             pod("web-1", labels={"app": "web"}, node_name="node-b"),
             pod("web-2", priority=100, labels={"app": "web"}, nominated="node-a")],
     pod("web-3", labels={"app": "web"}, spread=spread), ["node-b"],
     {"node-a": st("Unschedulable", "PodTopologySpread",
                   "node(s) didn't match pod topology spread constraints")})

case("a nominated pod of another namespace does not count for spreading",
     two(), [pod("web-0", labels={"app": "web"}, node_name="node-a"),
             pod("web-1", labels={"app": "web"}, node_name="node-b"),
             dict(pod("web-2", priority=100, labels={"app": "web"}, nominated="node-a"),
                  metadata={"name": "web-2", "namespace": "other", "uid": "uid-web-2",
                            "labels": {"app": "web"}})],
     pod("web-3", labels={"app": "web"}, spread=spread), ["node-a", "node-b"])

case("finished pods are not nominated",
     two(), [pod("victor", cpu="3500m", priority=100, nominated="node-a", phase="Failed")],
     pod("web", cpu="1"), ["node-a", "node-b"])

case("a pod of another scheduler is not in this scheduler's queue: its nomination does not count",
     two(), [pod("victor", cpu="3500m", priority=100, nominated="node-a",
                 scheduler="other-scheduler")],
     pod("web", cpu="1"), ["node-a", "node-b"])

case("a pod nominated to a node that does not exist is ignored",
     two(), [pod("victor", cpu="3500m", priority=100, nominated="node-x")],
     pod("web", cpu="1"), ["node-a", "node-b"])

case("pods nominated to one node add up",
     two(), [pod("v1", cpu="2", priority=100, nominated="node-a"),
             pod("v2", cpu="1500m", priority=100, nominated="node-a")],
     pod("web", cpu="1"), ["node-b"], {"node-a": st(*CPU)})

case("a bound pod's leftover nominatedNodeName is not a nomination",
     two(), [pod("victor", cpu="3", priority=100, node_name="node-b", nominated="node-a",
                 phase="Running")],
     pod("web", cpu="2"), ["node-a"], {"node-b": st(*CPU)})


def slug(s):
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")[:70]


os.makedirs(OUT, exist_ok=True)
for f in os.listdir(OUT):
    if f.endswith(".json"):
        os.remove(os.path.join(OUT, f))
for i, c in enumerate(CASES, 1):
    with open(os.path.join(OUT, f"{i:03d}-{slug(c['name'])}.json"), "w") as fh:
        json.dump(c, fh, indent=2)
        fh.write("\n")
print(f"wrote {len(CASES)} cases to {OUT}")
