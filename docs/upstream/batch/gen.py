#!/usr/bin/env python3
"""Writes tests/cases/Batch/NNN-slug.json: batch-mode cases (mode "batch")
ported from Volcano v1.11.0's scheduler unit tests and kube-batch v0.5.0's
allocate test (see README.md next to this file for the list, the upstream
files and commits, and the scenarios left out).

Objects are built the way upstream's test helpers build them
(volcano pkg/scheduler/util/test_utils.go, pkg/scheduler/api/test_utils.go;
kube-batch pkg/scheduler/util/test_utils.go):

  BuildNode(name, alloc, labels)   capacity == allocatable == alloc; "pods" is
                                   only there when the test passes it; no uid.
  BuildPod(ns, name, node, phase,  uid "<ns>-<name>"; annotation
           req, group, labels,     scheduling.k8s.io/group-name=<group>; one
           selector)               container with requests only; no priority
                                   (Volcano's TaskInfo then defaults it to 1),
                                   no creationTimestamp.
  BuildPodWithPriority             the same plus spec.priority.
  BuildPodGroup(name, ns, queue,   minMember always set (0 included);
           min, minTaskMember,     minTaskMember only when non-nil; no uid,
           phase)                  no creationTimestamp (Volcano's job id is
                                   "<ns>/<name>").
  BuildQueue(name, weight, cap)    weight as given (0 included); capability
                                   only when non-nil.
  BuildResourceList(cpu, mem, ...) the quantities exactly as the test writes
                                   them ("4Gi", "1G", "3k", "0G").

Upstream tests build conf.Tier values by hand, and there an unset Enabled*
flag means *disabled* (framework/session_plugins.go isEnabled: nil -> false),
whereas a scheduler config file defaults every unset flag to true
(plugins/defaults.go ApplyPluginConfDefaults). Each plugin entry below
therefore lists every flag explicitly: true where the test sets it, false
otherwise.

The role key volcano.sh/task-spec is written where upstream writes it (pod
labels) and also as an annotation with the same value (Volcano's
getTaskRole reads the annotation first, then the label; the job controller
sets both on real pods).

Run from anywhere: python3 docs/upstream/batch/gen.py
Output is deterministic. Stdlib only.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.normpath(os.path.join(HERE, "..", "..", "..", "tests", "cases", "Batch"))

VOLCANO = "volcano v1.11.0"
KUBE_BATCH = "kube-batch v0.5.0"
ALLOC_TEST = "pkg/scheduler/actions/allocate/allocate_test.go"
PROP_TEST = "pkg/scheduler/plugins/proportion/proportion_test.go"
PRED_TEST = "pkg/scheduler/plugins/predicates/predicates_test.go"
PRIO_TEST = "pkg/scheduler/plugins/priority/priority_test.go"

GROUP_KEY = "scheduling.k8s.io/group-name"
TASK_SPEC = "volcano.sh/task-spec"

# What Volcano v1.11.0's predicates plugin runs with default arguments
# (plugins/predicates/predicates.go OnSessionOpen): NodeUnschedulable,
# NodeAffinity, TaintToleration, NodePorts, InterPodAffinity,
# PodTopologySpread (plus volume filters sift does not have) and its own
# pod-number check (allocatable pods <= pods on node -> "node(s) pod number
# exceeded"). NodeResourcesFit stands in for that pod-number check ("Too many
# pods"); its cpu/memory part repeats the allocate action's own idle check,
# so it rejects nothing that check lets through.
VOLCANO_PREDICATES = [
    "NodeUnschedulable",
    "NodeAffinity",
    "TaintToleration",
    "NodePorts",
    "InterPodAffinity",
    "PodTopologySpread",
    "NodeResourcesFit",
]

FLAGS = [
    "enabledJobOrder",
    "enabledJobReady",
    "enabledJobPipelined",
    "enabledJobStarving",
    "enabledJobEnqueued",
    "enabledTaskOrder",
    "enabledQueueOrder",
    "enabledPredicate",
    "enabledBestNode",
    "enabledNodeOrder",
    "enabledOverused",
    "enabledAllocatable",
    "enabledPreemptable",
    "enabledReclaimable",
    "enabledHierarchy",
]


def plugin(name, *enabled):
    """A conf.PluginOption: the named flags true, every other flag false."""
    for f in enabled:
        if f not in FLAGS:
            sys.exit("unknown flag " + f)
    p = {"name": name}
    for f in FLAGS:
        p[f] = f in enabled
    return p


def config(actions, *plugins):
    return {"batch": {"actions": actions, "tiers": [{"plugins": list(plugins)}]}}


def res(cpu, mem, **scalars):
    """api.BuildResourceList: cpu and memory when non-empty, then scalars."""
    r = {}
    if cpu:
        r["cpu"] = cpu
    if mem:
        r["memory"] = mem
    for k, v in scalars.items():
        r[k.replace("__", "/")] = v
    return r


def node(name, alloc, labels=None):
    md = {"name": name}
    if labels:
        md["labels"] = dict(labels)
    md["annotations"] = {}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": md,
        "spec": {},
        "status": {"allocatable": dict(alloc), "capacity": dict(alloc)},
    }


def pod(ns, name, node_name, phase, req, group, labels=None, selector=None,
        priority=None, affinity=None):
    md = {"name": name, "namespace": ns, "uid": "%s-%s" % (ns, name)}
    if labels:
        md["labels"] = dict(labels)
    ann = {GROUP_KEY: group}
    if labels and TASK_SPEC in labels:
        ann[TASK_SPEC] = labels[TASK_SPEC]
    md["annotations"] = ann
    container = {
        "name": "c0",
        "image": "registry.k8s.io/pause:3.10",
        "resources": {"requests": dict(req)} if req else {},
    }
    spec = {"containers": [container]}
    if node_name:
        spec["nodeName"] = node_name
    if selector:
        spec["nodeSelector"] = dict(selector)
    if affinity:
        spec["affinity"] = affinity
    if priority is not None:
        spec["priority"] = priority
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": md,
        "spec": spec,
        "status": {"phase": phase},
    }


def pod_group(name, ns, queue, min_member, min_task_member=None, phase=None,
              priority_class=None, min_resources=None):
    spec = {"minMember": min_member}
    if min_task_member is not None:
        spec["minTaskMember"] = dict(min_task_member)
    spec["queue"] = queue
    if priority_class:
        spec["priorityClassName"] = priority_class
    if min_resources is not None:
        spec["minResources"] = dict(min_resources)
    pg = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": ns},
        "spec": spec,
    }
    if phase is not None:
        pg["status"] = {"phase": phase}
    return pg


def queue(name, weight, cap=None, priority=None):
    spec = {"weight": weight}
    if cap:
        spec["capability"] = dict(cap)
    if priority is not None:
        spec["priority"] = priority
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": spec,
    }


def priority_class(name, value):
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }


def worker_anti_affinity():
    """getWorkerAffinity() in proportion_test.go / predicates_test.go."""
    return {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "role", "operator": "In", "values": ["worker"]}
                        ]
                    },
                    "topologyKey": "kubernetes.io/hostname",
                }
            ]
        }
    }


CASES = []


def case(num, slug, name, source, notes, cfg, objects, binds, filters=None,
         queues=(), pgs=(), pcs=()):
    """objects: every pod the upstream test adds, in its order; those with a
    nodeName go to "pods" (already bound), the others to "workload"."""
    bound = [p for p in objects if p["spec"].get("nodeName")]
    pending = [p for p in objects if not p["spec"].get("nodeName")]
    keys = ["%s/%s" % (p["metadata"]["namespace"], p["metadata"]["name"]) for p in pending]
    for k in binds:
        if k not in keys:
            sys.exit("%s: bind of %s, which is not a pending pod" % (slug, k))
    c = {
        "name": name,
        "source": source,
        "mode": "batch",
        "notes": notes,
        "sessions": 1,
        "config": cfg,
    }
    if filters is not None:
        c["filters"] = list(filters)
    c["nodes"] = NODES_OF[num]
    c["pods"] = bound
    c["workload"] = pending
    if queues:
        c["queues"] = list(queues)
    if pgs:
        c["podGroups"] = list(pgs)
    if pcs:
        c["priorityClasses"] = list(pcs)
    c["expect"] = {
        "binds": dict(binds),
        "unscheduled": sorted(k for k in keys if k not in binds),
        "bindCount": len(binds),
    }
    CASES.append(("%03d-%s.json" % (num, slug), c))


NODES_OF = {}

# ---------------------------------------------------------------------------
# volcano v1.11.0 pkg/scheduler/actions/allocate/allocate_test.go TestAllocate
# ---------------------------------------------------------------------------
ALLOC_TIERS = config(
    "allocate",
    plugin("gang", "enabledJobOrder", "enabledJobReady", "enabledJobPipelined", "enabledJobStarving"),
    plugin("drf", "enabledPreemptable", "enabledJobOrder"),
    plugin("proportion", "enabledQueueOrder", "enabledReclaimable", "enabledAllocatable"),
    plugin("predicates", "enabledPredicate"),
    plugin("nodeorder", "enabledNodeOrder"),
)
ALLOC_COMMON = (
    "Tiers as in TestAllocate: one tier of gang (jobOrder, jobReady, jobPipelined, jobStarving), "
    "drf (preemptable, jobOrder), proportion (queueOrder, reclaimable, allocatable; overused NOT "
    "enabled), predicates (predicate), nodeorder (nodeOrder); no plugin enables taskOrder, so tasks "
    "follow Volcano's default order (pod-name index 'x-y-N', else creationTimestamp, else uid). "
)


def alloc_node(name, cpu, mem, labels=None):
    return node(name, res(cpu, mem, pods="10"), labels)


NODES_OF[1] = [alloc_node("n1", "2", "4Gi", {"nodeRole": "worker"})]
case(
    1, "prepredicate-failed-node-selector-does-not-match",
    "prepredicate failed: node selector does not match",
    "%s %s: TestAllocate/prepredicate failed: node selector does not match" % (VOLCANO, ALLOC_TEST),
    ALLOC_COMMON +
    "One job (minMember 1, no minTaskMember) with a master pod p1 selecting nodeRole=master and a "
    "worker pod p2 selecting nodeRole=worker; the only node n1 is a worker. Despite the name, the "
    "pre-predicates pass (a nodeSelector is checked in the NodeAffinity filter, not in PrePredicate), "
    "so p1 (uid c1-p1, first) fails the predicates on every node. Its role 'master' has no "
    "minTaskMember, so JobInfo.NeedContinueAllocating is true and allocation goes on with p2 "
    "(different role, so the per-role fit-error cache does not skip it), which fits n1. The job is "
    "then ready (1 >= minMember 1) and the statement commits: upstream expects exactly c1/p2 -> n1.",
    ALLOC_TIERS,
    [
        pod("c1", "p1", "", "Pending", res("1", "1G"), "pg1", {TASK_SPEC: "master"}, {"nodeRole": "master"}),
        pod("c1", "p2", "", "Pending", res("1", "1G"), "pg1", {TASK_SPEC: "worker"}, {"nodeRole": "worker"}),
    ],
    {"c1/p2": "n1"},
    filters=VOLCANO_PREDICATES,
    queues=[queue("c1", 1)],
    pgs=[pod_group("pg1", "c1", "c1", 1, None, "Inqueue")],
)

NODES_OF[2] = [
    alloc_node("n1", "1", "2Gi", {"nodeRole": "master"}),
    alloc_node("n2", "1", "2Gi", {"nodeRole": "worker"}),
]
case(
    2, "prepredicate-failed-tasks-not-used-up-continue-until-min-member-meet",
    "prepredicate failed and tasks are not used up, continue on untill min member meet",
    "%s %s: TestAllocate/prepredicate failed and tasks are not used up, continue on untill min member meet"
    % (VOLCANO, ALLOC_TEST),
    ALLOC_COMMON +
    "Gang of minMember 2 with minTaskMember master:1, worker:1; masters p0, p1 select the 1-cpu master "
    "node n1, workers p2, p3 the 1-cpu worker node n2 (each pod asks 1 cpu). Task order is by uid: "
    "p0 -> n1; p1 finds no node (n1 full, n2 wrong role), but role master already has its 1 allocated, "
    "so NeedContinueAllocating is true; p2 -> n2. Now the job is ready (2 >= 2 and each role meets its "
    "minTaskMember) with p3 still queued, so the job is pushed back and the statement commits p0 and "
    "p2. p3 then gets nothing (proportion's deserved cpu for c1 is the cluster's 2 cpu, already "
    "allocated, and n2 is full). Upstream expects c1/p0 -> n1, c1/p2 -> n2, 2 binds.",
    ALLOC_TIERS,
    [
        pod("c1", "p0", "", "Pending", res("1", "1G"), "pg1", {TASK_SPEC: "master"}, {"nodeRole": "master"}),
        pod("c1", "p1", "", "Pending", res("1", "1G"), "pg1", {TASK_SPEC: "master"}, {"nodeRole": "master"}),
        pod("c1", "p2", "", "Pending", res("1", "1G"), "pg1", {TASK_SPEC: "worker"}, {"nodeRole": "worker"}),
        pod("c1", "p3", "", "Pending", res("1", "1G"), "pg1", {TASK_SPEC: "worker"}, {"nodeRole": "worker"}),
    ],
    {"c1/p0": "n1", "c1/p2": "n2"},
    filters=VOLCANO_PREDICATES,
    queues=[queue("c1", 1)],
    pgs=[pod_group("pg1", "c1", "c1", 2, {"master": 1, "worker": 1}, "Inqueue")],
)

NODES_OF[3] = [
    alloc_node("n1", "1", "2Gi", {"nodeRole": "master"}),
    alloc_node("n2", "2", "2Gi", {"nodeRole": "worker"}),
]
case(
    3, "master-min-member-cannot-be-allocated-break",
    "master's min member can not be allocated, break from allocating",
    "%s %s: TestAllocate/master's min member can not be allocated, break from allocating" % (VOLCANO, ALLOC_TEST),
    ALLOC_COMMON +
    "Gang of minMember 2 with minTaskMember master:2, worker:0; masters p0, p1 select the 1-cpu master "
    "node n1, workers p2, p3 the 2-cpu worker node n2. p0 -> n1 (in the statement); p1 fits no node, "
    "and role master has 1 allocated < its minTaskMember 2, so NeedContinueAllocating is false and "
    "the job's loop breaks before trying the workers. The job is not ready (gang JobReady and "
    "JobPipelined both false: 1 < 2 ready tasks), so the statement is discarded and p0's allocation "
    "is rolled back: upstream expects no binds at all (Statement discard).",
    ALLOC_TIERS,
    [
        pod("c1", "p0", "", "Pending", res("1", "1G"), "pg1", {TASK_SPEC: "master"}, {"nodeRole": "master"}),
        pod("c1", "p1", "", "Pending", res("1", "1G"), "pg1", {TASK_SPEC: "master"}, {"nodeRole": "master"}),
        pod("c1", "p2", "", "Pending", res("1", "1G"), "pg1", {TASK_SPEC: "worker"}, {"nodeRole": "worker"}),
        pod("c1", "p3", "", "Pending", res("1", "1G"), "pg1", {TASK_SPEC: "worker"}, {"nodeRole": "worker"}),
    ],
    {},
    filters=VOLCANO_PREDICATES,
    queues=[queue("c1", 1)],
    pgs=[pod_group("pg1", "c1", "c1", 2, {"master": 2, "worker": 0}, "Inqueue")],
)

NODES_OF[4] = [alloc_node("n1", "2", "4Gi")]
case(
    4, "one-job-with-two-pods-on-one-node",
    "one Job with two Pods on one node",
    "%s %s: TestAllocate/one Job with two Pods on one node" % (VOLCANO, ALLOC_TEST),
    ALLOC_COMMON +
    "One job (minMember 0) with two 1-cpu/1G pods and one 2-cpu/4Gi node. minMember 0 makes the job "
    "ready after every allocation, so each pod is committed in turn (the job is pushed back after p1); "
    "proportion's deserved for queue c1 is min(cluster, request) = 2 cpu, 2G, so both pods are "
    "allocatable. Upstream expects c1/p1 and c1/p2 on n1.",
    ALLOC_TIERS,
    [
        pod("c1", "p1", "", "Pending", res("1", "1G"), "pg1"),
        pod("c1", "p2", "", "Pending", res("1", "1G"), "pg1"),
    ],
    {"c1/p1": "n1", "c1/p2": "n1"},
    filters=VOLCANO_PREDICATES,
    queues=[queue("c1", 1)],
    pgs=[pod_group("pg1", "c1", "c1", 0, None, "Inqueue")],
)

NODES_OF[5] = [alloc_node("n1", "2", "4G")]
case(
    5, "two-jobs-on-one-node",
    "two Jobs on one node",
    "%s %s: TestAllocate/two Jobs on one node" % (VOLCANO, ALLOC_TEST),
    ALLOC_COMMON +
    "Two queues c1, c2 (weight 1 each), one job in each (minMember 0) with two 1-cpu/1G pods named "
    "'<pg>-p-<index>' (the default task order compares that index), one 2-cpu/4G node. proportion "
    "gives each queue deserved 1 cpu, 2G. Queue order: both shares 0, tie broken by queue uid -> c1: "
    "pg1-p-1 -> n1, job ready (minMember 0), pushed back, commit; c1's share is now 1 so c2 goes next: "
    "pg2-p-1 -> n1. The second pod of each job is not allocatable (allocated 1 cpu + 1 > deserved 1 "
    "cpu) and the node is full anyway. Upstream expects c1/pg1-p-1 and c2/pg2-p-1 on n1, 2 binds: the "
    "queues share the node fairly.",
    ALLOC_TIERS,
    [
        pod("c1", "pg1-p-1", "", "Pending", res("1", "1G"), "pg1"),
        pod("c1", "pg1-p-2", "", "Pending", res("1", "1G"), "pg1"),
        pod("c2", "pg2-p-1", "", "Pending", res("1", "1G"), "pg2"),
        pod("c2", "pg2-p-2", "", "Pending", res("1", "1G"), "pg2"),
    ],
    {"c2/pg2-p-1": "n1", "c1/pg1-p-1": "n1"},
    filters=VOLCANO_PREDICATES,
    queues=[queue("c1", 1), queue("c2", 1)],
    pgs=[pod_group("pg1", "c1", "c1", 0, None, "Inqueue"), pod_group("pg2", "c2", "c2", 0, None, "Inqueue")],
)

NODES_OF[6] = [alloc_node("n1", "2", "4G")]
case(
    6, "high-priority-queue-should-not-block-others",
    "high priority queue should not block others",
    "%s %s: TestAllocate/high priority queue should not block others" % (VOLCANO, ALLOC_TEST),
    ALLOC_COMMON +
    "Queue c1 holds pg1 with p1 asking 3 cpu (more than the 2-cpu node has); queue c2 holds pg2 with "
    "p2 asking 1 cpu; both in namespace c1, minMember 0. c1 is popped first (shares tie at 0, queue uid "
    "c1 < c2) but p1 is not allocatable (c1's deserved is 1 cpu, 1G) and would fit no node anyway; "
    "that must not stop c2, whose p2 goes to n1. Upstream expects only c1/p2 -> n1.",
    ALLOC_TIERS,
    [
        pod("c1", "p1", "", "Pending", res("3", "1G"), "pg1"),
        pod("c1", "p2", "", "Pending", res("1", "1G"), "pg2"),
    ],
    {"c1/p2": "n1"},
    filters=VOLCANO_PREDICATES,
    queues=[queue("c1", 1), queue("c2", 1)],
    pgs=[pod_group("pg1", "c1", "c1", 0, None, "Inqueue"), pod_group("pg2", "c1", "c2", 0, None, "Inqueue")],
)

# ---------------------------------------------------------------------------
# TestFareShareAllocate
# ---------------------------------------------------------------------------
FS_TIERS = config(
    "allocate",
    plugin("drf", "enabledPreemptable", "enabledJobOrder"),
    plugin("proportion", "enabledQueueOrder", "enabledReclaimable"),
    plugin("predicates", "enabledPredicate"),
    plugin("nodeorder", "enabledNodeOrder"),
)
FS_COMMON = (
    "Tiers as in TestFareShareAllocate: drf (preemptable, jobOrder), proportion (queueOrder, "
    "reclaimable; allocatable explicitly false, overused unset = off), predicates, nodeorder; no gang, "
    "so every job is ready and every statement commits. Queue order is proportion's share "
    "(max over resources of allocated/deserved; v1.11 drf orders queues only with hierarchy on); job "
    "order is drf's dominant share, ties by job uid '<ns>/<pg>'. One node 5 cpu, 5G, pods 10. "
)
NODES_OF[7] = [node("node-1", res("5", "5G", pods="10"))]
case(
    7, "fair-share-queue-with-low-share-allocates-first",
    "queue with low DRF share value has high priority, should allocate first",
    "%s %s: TestFareShareAllocate/queue with low DRF share value has high priority, should allocate first"
    % (VOLCANO, ALLOC_TEST),
    FS_COMMON +
    "q-1 already runs pod-small-1 (1 cpu, 1G) on node-1 and has pod-large-1 (2 cpu, 2G) pending; q-2 "
    "has pod-large-2 (3 cpu, 2G) pending. q-2's share is 0 < q-1's, so q-2 goes first: pod-large-2 "
    "takes 3 of the 4 idle cpus, and pod-large-1 then no longer fits. Upstream expects only "
    "ns-1/pod-large-2 -> node-1 (the comment reads 'allocate order: q-2/pg-large-2, q-1/pg-large-1').",
    FS_TIERS,
    [
        pod("ns-1", "pod-small-1", "node-1", "Running", res("1", "1G"), "pg-small-1"),
        pod("ns-1", "pod-large-1", "", "Pending", res("2", "2G"), "pg-large-1"),
        pod("ns-1", "pod-large-2", "", "Pending", res("3", "2G"), "pg-large-2"),
    ],
    {"ns-1/pod-large-2": "node-1"},
    filters=VOLCANO_PREDICATES,
    queues=[queue("q-1", 1), queue("q-2", 1)],
    pgs=[
        pod_group("pg-small-1", "ns-1", "q-1", 0, None, "Running"),
        pod_group("pg-large-1", "ns-1", "q-1", 0, None, "Inqueue"),
        pod_group("pg-large-2", "ns-1", "q-2", 0, None, "Inqueue"),
    ],
)

NODES_OF[8] = [node("node-1", res("5", "5G", pods="10"))]
case(
    8, "fair-share-queue-share-updated-before-requeue",
    "queue’s DRF share value will be updated and its priority will change before it is put back into the priority queue",
    "%s %s: TestFareShareAllocate/queue’s DRF share value will be updated and its priority will change before "
    "it is put back into the priority queue" % (VOLCANO, ALLOC_TEST),
    FS_COMMON +
    "q-1 runs pod-small-1 (1 cpu, 1G) and has pod-large-1 (2 cpu, 2G) pending; q-2 has pg-large-2 "
    "(pod-large-2, 2 cpu, 2G) and pg-small-2 (pod-small-2, 1 cpu, 1G). q-2 (share 0) first; its two "
    "jobs tie on drf share 0 and 'ns-1/pg-large-2' < 'ns-1/pg-small-2', so pod-large-2 is placed. "
    "q-2's share rises to 0.8 (2 of deserved 2.5 cpu) above q-1's, so q-1 goes next and pod-large-1 "
    "takes the last 2 cpus; pod-small-2 finds no room. Upstream expects pod-large-1 and pod-large-2 on "
    "node-1 (comment: 'allocate order: q-2/pg-large-2, q-1/pg-large-1, q-2/pg-small-2').",
    FS_TIERS,
    [
        pod("ns-1", "pod-small-1", "node-1", "Running", res("1", "1G"), "pg-small-1"),
        pod("ns-1", "pod-large-1", "", "Pending", res("2", "2G"), "pg-large-1"),
        pod("ns-1", "pod-large-2", "", "Pending", res("2", "2G"), "pg-large-2"),
        pod("ns-1", "pod-small-2", "", "Pending", res("1", "1G"), "pg-small-2"),
    ],
    {"ns-1/pod-large-1": "node-1", "ns-1/pod-large-2": "node-1"},
    filters=VOLCANO_PREDICATES,
    queues=[queue("q-1", 1), queue("q-2", 1)],
    pgs=[
        pod_group("pg-small-1", "ns-1", "q-1", 0, None, "Running"),
        pod_group("pg-large-1", "ns-1", "q-1", 0, None, "Inqueue"),
        pod_group("pg-small-2", "ns-1", "q-2", 0, None, "Inqueue"),
        pod_group("pg-large-2", "ns-1", "q-2", 0, None, "Inqueue"),
    ],
)

NODES_OF[9] = [node("node-1", res("5", "5G", pods="10"))]
case(
    9, "fair-share-queue-job-without-pending-tasks-requeued",
    "queue’s one jobs has no pending tasks, should be put back to queues for next job",
    "%s %s: TestFareShareAllocate/queue’s one jobs has no pending tasks, should be put back to queues for "
    "next job" % (VOLCANO, ALLOC_TEST),
    FS_COMMON +
    "One queue q-1 with a Running job pg-1 (pod-1 running on node-1, nothing pending) and an Inqueue "
    "job pg-2 with pod-2 (2 cpu, 2G) pending. A popped job without pending tasks must put the queue "
    "back so its next job is still tried. Upstream expects ns-1/pod-2 -> node-1.",
    FS_TIERS,
    [
        pod("ns-1", "pod-1", "node-1", "Running", res("1", "1G"), "pg-1"),
        pod("ns-1", "pod-2", "", "Pending", res("2", "2G"), "pg-2"),
    ],
    {"ns-1/pod-2": "node-1"},
    filters=VOLCANO_PREDICATES,
    queues=[queue("q-1", 1)],
    pgs=[
        pod_group("pg-1", "ns-1", "q-1", 0, None, "Running"),
        pod_group("pg-2", "ns-1", "q-1", 0, None, "Inqueue"),
    ],
)

# ---------------------------------------------------------------------------
# volcano v1.11.0 pkg/scheduler/plugins/proportion/proportion_test.go
# ---------------------------------------------------------------------------
ALL_ENABLE = config(
    "allocate",
    plugin("proportion", "enabledAllocatable", "enabledOverused", "enabledJobEnqueued"),
)
ALLOCATABLE = config("allocate", plugin("proportion", "enabledAllocatable"))
EA_NODES = [node("n1", res("2", "2G", pods="10")), node("n2", res("2", "2G", pods="10"))]
EA_QUEUES = [queue("q1", 1, res("2", "2G")), queue("q2", 1, res("3", "3G"))]
EA_COMMON = (
    "TestEnqueueAndAllocable: nodes n1, n2 of 2 cpu, 2G, pods 10; q1 (weight 1, capability 2 cpu, 2G) "
    "runs pg1/pod1 (1 cpu, 2G) on n1, q2 (weight 1, capability 3 cpu, 3G) runs pg2/pod2 (2 cpu, 1G) on "
    "n2 (both PodGroups Running with minResources = their pod's request). The pending job's PodGroup is "
    "Pending. Upstream runs enqueue then allocate; sift has no enqueue, so the Pending PodGroup becomes "
    "Inqueue at allocate, which is what upstream's enqueue does here too (its minResources fit the "
    "queue's capability, and the enqueue verdict only gates entry to allocate). "
)

NODES_OF[10] = EA_NODES
case(
    10, "proportion-memory-exceeds-deserved-cpu-only-job-allocated",
    "case0: memory exceed derserved, job only request cpu can be enqueued and allocated",
    "%s %s: TestEnqueueAndAllocable/case0: memory exceed derserved, job only request cpu can be enqueued "
    "and allocated" % (VOLCANO, PROP_TEST),
    EA_COMMON +
    "Tier 'allEnable': proportion with allocatable, overused and jobEnqueued on. pg3 in q1 asks 1 cpu, "
    "0G (pod3). q1's deserved is 2 cpu, 2G: its memory is all allocated but cpu is not, so q1 is not "
    "overused, and Allocatable compares only the dimensions the task requests (LessEqualWithDimension: "
    "cpu 1+1 <= 2; memory skipped since pod3 asks 0). pod3 fits only n1 (1 idle cpu; n2 has none). "
    "Upstream expects ns1/pod3 -> n1.",
    ALL_ENABLE,
    [
        pod("ns1", "pod1", "n1", "Running", res("1", "2G"), "pg1"),
        pod("ns1", "pod2", "n2", "Running", res("2", "1G"), "pg2"),
        pod("ns1", "pod3", "", "Pending", res("1", "0G"), "pg3"),
    ],
    {"ns1/pod3": "n1"},
    queues=EA_QUEUES,
    pgs=[
        pod_group("pg1", "ns1", "q1", 1, None, "Running", min_resources=res("1", "2G")),
        pod_group("pg2", "ns1", "q2", 1, None, "Running", min_resources=res("2", "1G")),
        pod_group("pg3", "ns1", "q1", 1, None, "Pending", min_resources=res("1", "0G")),
    ],
)

NODES_OF[11] = EA_NODES
case(
    11, "proportion-cpu-exceeds-deserved-memory-only-job-allocated",
    "case1: cpu exceed derserved, job only request memory can be enqueued and allocated",
    "%s %s: TestEnqueueAndAllocable/case1: cpu exceed derserved, job only request memory can be enqueued "
    "and allocated" % (VOLCANO, PROP_TEST),
    EA_COMMON +
    "Tier 'allEnable'. pg4 in q2 asks 0 cpu, 1G (pod4). q2's deserved is 2 cpu, 2G: cpu is all "
    "allocated, memory is not, so q2 is not overused and pod4 is allocatable (memory 1G+1G <= 2G; cpu "
    "skipped since pod4 asks 0). pod4 fits only n2 (1G idle; n1 has none). Upstream expects "
    "ns1/pod4 -> n2.",
    ALL_ENABLE,
    [
        pod("ns1", "pod1", "n1", "Running", res("1", "2G"), "pg1"),
        pod("ns1", "pod2", "n2", "Running", res("2", "1G"), "pg2"),
        pod("ns1", "pod4", "", "Pending", res("0", "1G"), "pg4"),
    ],
    {"ns1/pod4": "n2"},
    queues=EA_QUEUES,
    pgs=[
        pod_group("pg1", "ns1", "q1", 1, None, "Running", min_resources=res("1", "2G")),
        pod_group("pg2", "ns1", "q2", 1, None, "Running", min_resources=res("2", "1G")),
        pod_group("pg4", "ns1", "q2", 1, None, "Pending", min_resources=res("0", "1G")),
    ],
)

NODES_OF[12] = EA_NODES
case(
    12, "proportion-exceeds-deserved-cannot-allocate",
    "case2: exceed deserved, can not allocate",
    "%s %s: TestEnqueueAndAllocable/case2: exceed deserved, can not allocate" % (VOLCANO, PROP_TEST),
    EA_COMMON +
    "Tier 'allocatable': proportion with only allocatable on (overused and jobEnqueued off, so "
    "upstream's enqueue admits pg5). pg5 in q1 asks 1 cpu, 1G (pod5). q1's request is 2 cpu, 3G, its "
    "deserved is capped by its capability at 2 cpu, 2G; 2G allocated + 1G > 2G, so proportion's "
    "Allocatable rejects pod5 (it would fit no node either: n1 has no idle memory, n2 no idle cpu). "
    "Upstream expects no binds.",
    ALLOCATABLE,
    [
        pod("ns1", "pod1", "n1", "Running", res("1", "2G"), "pg1"),
        pod("ns1", "pod2", "n2", "Running", res("2", "1G"), "pg2"),
        pod("ns1", "pod5", "", "Pending", res("1", "1G"), "pg5"),
    ],
    {},
    queues=EA_QUEUES,
    pgs=[
        pod_group("pg1", "ns1", "q1", 1, None, "Running", min_resources=res("1", "2G")),
        pod_group("pg2", "ns1", "q2", 1, None, "Running", min_resources=res("2", "1G")),
        pod_group("pg5", "ns1", "q1", 1, None, "Pending", min_resources=res("1", "1G")),
    ],
)

NODES_OF[13] = [node("n1", res("2", "4Gi", pods="10")), node("n2", res("2", "4Gi", pods="10"))]
case(
    13, "proportion-queue-priority-order",
    "case0: Pods are assigned according to the order of Queue Priority in which PGs are placed",
    "%s %s: TestAllocate/case0: Pods are assigned according to the order of Queue Priority in which PGs "
    "are placed" % (VOLCANO, PROP_TEST),
    "Tier: proportion with only queueOrder on. Queues q1 (priority 5), q2 (priority 1), q3 (priority "
    "10), each weight 1 and capability 2 cpu, 4Gi. n1 is filled by q1's running p1 (2 cpu, 4Gi); q2's "
    "p2 and q3's p3 (2 cpu, 4Gi each) are pending and only one can take n2. proportion orders queues "
    "by spec.priority first, so q3 goes before q2: p3 -> n2, then p2 fits nowhere. Upstream runs "
    "allocate then reclaim and expects p3 -> n2, one bind and no eviction (no plugin enables "
    "reclaimable, so reclaim does nothing); sift runs allocate only, which gives the same binds.",
    config("allocate", plugin("proportion", "enabledQueueOrder")),
    [
        pod("ns1", "p1", "n1", "Running", res("2", "4Gi"), "pg1"),
        pod("ns1", "p2", "", "Pending", res("2", "4Gi"), "pg2"),
        pod("ns1", "p3", "", "Pending", res("2", "4Gi"), "pg3"),
    ],
    {"ns1/p3": "n2"},
    queues=[
        queue("q1", 1, res("2", "4Gi"), priority=5),
        queue("q2", 1, res("2", "4Gi"), priority=1),
        queue("q3", 1, res("2", "4Gi"), priority=10),
    ],
    pgs=[
        pod_group("pg1", "ns1", "q1", 1, None, "Running"),
        pod_group("pg2", "ns1", "q2", 1, None, "Inqueue"),
        pod_group("pg3", "ns1", "q3", 1, None, "Inqueue"),
    ],
)

# ---------------------------------------------------------------------------
# volcano v1.11.0 pkg/scheduler/plugins/predicates/predicates_test.go
# ---------------------------------------------------------------------------
PC_P1 = priority_class("p1", 1)
PC_P2 = priority_class("p2", 2)

NODES_OF[14] = [
    node("node1", res("14", "14k", pods="10"), {"selector": "worker", "kubernetes.io/hostname": "node1"}),
    node("node2", res("3", "3k", pods="10"), {"kubernetes.io/hostname": "node2"}),
]
case(
    14, "predicates-pod-deallocate",
    "pod-deallocate",
    "%s %s: TestEventHandler/pod-deallocate" % (VOLCANO, PRED_TEST),
    "Tier: predicates (predicate), gang (jobReady, jobPipelined), priority (jobOrder). pg1 (minMember "
    "2, priority class p2 = 2) has worker-1 (3 cpu, 3k, nodeSelector selector=worker) and worker-2 "
    "(5 cpu, 5k); pg2 (minMember 1, p1 = 1) has worker-3 (4 cpu, 4k). All three carry role=worker and "
    "a required anti-affinity to role=worker on kubernetes.io/hostname. pg1 goes first (higher job "
    "priority): worker-1 -> node1 (node2 lacks the label); worker-2 is rejected by node1 "
    "(anti-affinity with worker-1) and node2 (5 cpu > 3); minMember == number of tasks, so the loop "
    "breaks; the gang is not ready, the statement is discarded, and the predicates plugin's "
    "deallocate handler takes worker-1 back off node1. pg2's worker-3 then passes node1's "
    "anti-affinity check (only fits node1: 4 cpu > node2's 3). Upstream expects only "
    "ns1/worker-3 -> node1. Queue q1 has weight 0 as upstream builds it (no proportion here).",
    config(
        "allocate",
        plugin("predicates", "enabledPredicate"),
        plugin("gang", "enabledJobReady", "enabledJobPipelined"),
        plugin("priority", "enabledJobOrder"),
    ),
    [
        pod("ns1", "worker-1", "", "Pending", res("3", "3k"), "pg1", {"role": "worker"},
            {"selector": "worker"}, affinity=worker_anti_affinity()),
        pod("ns1", "worker-2", "", "Pending", res("5", "5k"), "pg1", {"role": "worker"},
            affinity=worker_anti_affinity()),
        pod("ns1", "worker-3", "", "Pending", res("4", "4k"), "pg2", {"role": "worker"},
            affinity=worker_anti_affinity()),
    ],
    {"ns1/worker-3": "node1"},
    filters=VOLCANO_PREDICATES,
    queues=[queue("q1", 0)],
    pgs=[
        pod_group("pg1", "ns1", "q1", 2, None, "Inqueue", priority_class="p2"),
        pod_group("pg2", "ns1", "q1", 1, None, "Inqueue", priority_class="p1"),
    ],
    pcs=[PC_P1, PC_P2],
)

NODES_OF[15] = [node("node1", res("4", "4k", pods="2"), {"selector": "worker"})]
case(
    15, "predicates-backfill-node-pod-number",
    "pod-predicate",
    "%s %s: TestNodeNum/pod-predicate" % (VOLCANO, PRED_TEST),
    "Actions allocate, backfill; tier: predicates (predicate) only. Three best-effort pods (no "
    "requests): worker-1 (nodeSelector selector=worker) and worker-2 in pg1 (minMember 2, class p2), "
    "worker-3 in pg2 (minMember 1, class p1); one node allowing 2 pods. allocate skips best-effort "
    "tasks; backfill places them. No plugin orders jobs, so jobs go by creationTimestamp (all zero) "
    "then job uid: ns1/pg1 before ns1/pg2. worker-1 and worker-2 fill the node's 2 pod slots; "
    "worker-3 fails the predicates plugin's pod-number check (here NodeResourcesFit's 'Too many "
    "pods'). Upstream expects worker-1 and worker-2 on node1, 2 binds. Queue q1 has weight 0 as "
    "upstream builds it.",
    config("allocate, backfill", plugin("predicates", "enabledPredicate")),
    [
        pod("ns1", "worker-1", "", "Pending", None, "pg1", {"role": "worker"}, {"selector": "worker"}),
        pod("ns1", "worker-2", "", "Pending", None, "pg1", {"role": "worker"}),
        pod("ns1", "worker-3", "", "Pending", None, "pg2", {"role": "worker"}),
    ],
    {"ns1/worker-1": "node1", "ns1/worker-2": "node1"},
    filters=VOLCANO_PREDICATES,
    queues=[queue("q1", 0)],
    pgs=[
        pod_group("pg1", "ns1", "q1", 2, None, "Inqueue", priority_class="p2"),
        pod_group("pg2", "ns1", "q1", 1, None, "Inqueue", priority_class="p1"),
    ],
    pcs=[PC_P1, PC_P2],
)

HIGH = priority_class("high-priority", 100000)
LOW = priority_class("low-priority", 10)
NODES_OF[16] = [node("n1", res("12", "12G", pods="2"), {"kubernetes.io/hostname": "node1"})]
case(
    16, "predicates-pod-anti-affinity",
    "pod-anti-affinity",
    "%s %s: TestPodAntiAffinity/pod-anti-affinity" % (VOLCANO, PRED_TEST),
    "Tier: predicates (predicate), priority (preemptable, jobStarving). Node n1 (hostname label "
    "node1, 12 cpu, 12G, 2 pods) runs worker-1 (role=worker, anti-affinity to role=worker per "
    "hostname, priority 100000) and worker-2 (priority 10) of pg1 (Running, class low-priority). "
    "worker-3 (pg2, class high-priority, priority 100000, role=worker, same anti-affinity) is "
    "pending: n1 has no pod slot left and worker-1 repels it. Upstream runs allocate then preempt and "
    "expects no bind, no eviction and nothing pipelined (an anti-affinity failure is made "
    "UnschedulableAndUnresolvable, so preempt does not touch worker-2). sift runs allocate only; "
    "the expected outcome (worker-3 unbound, 0 binds) is the same. Queue q1: weight 0, capability "
    "9 cpu, 9G, as upstream builds it.",
    config(
        "allocate",
        plugin("predicates", "enabledPredicate"),
        plugin("priority", "enabledPreemptable", "enabledJobStarving"),
    ),
    [
        pod("ns1", "worker-1", "n1", "Running", res("3", "3G"), "pg1", {"role": "worker"},
            priority=100000, affinity=worker_anti_affinity()),
        pod("ns1", "worker-2", "n1", "Running", res("3", "3G"), "pg1", priority=10),
        pod("ns1", "worker-3", "", "Pending", res("3", "3G"), "pg2", {"role": "worker"},
            priority=100000, affinity=worker_anti_affinity()),
    ],
    {},
    filters=VOLCANO_PREDICATES,
    queues=[queue("q1", 0, res("9", "9G"))],
    pgs=[
        pod_group("pg1", "ns1", "q1", 0, None, "Running", priority_class="low-priority"),
        pod_group("pg2", "ns1", "q1", 1, None, "Inqueue", priority_class="high-priority"),
    ],
    pcs=[HIGH, LOW],
)

# ---------------------------------------------------------------------------
# volcano v1.11.0 pkg/scheduler/plugins/priority/priority_test.go
# ---------------------------------------------------------------------------
NODES_OF[17] = [node("node1", res("3", "3G", pods="10")), node("node2", res("3", "3G", pods="10"))]
case(
    17, "priority-disable-preempt-low-priority",
    "disable preempt low priority: enablePreemptable:false",
    "%s %s: TestPreempt/disable preempt low priority: enablePreemptable:false" % (VOLCANO, PRIO_TEST),
    "Tier: priority with taskOrder, jobOrder and jobStarving on, preemptable and reclaimable off. "
    "Both 3-cpu/3G nodes are full: node1 runs preemptee1, node2 runs preemptee2 (3 cpu, 3G each, pg1, "
    "class low-priority = 100). preemptor1 (3 cpu, 3G; pg2 in ns2, class high-priority = 1000) is "
    "pending in the same queue q1 (weight 1, capability 6 cpu, 6G). allocate finds no room. Upstream "
    "runs allocate then preempt and expects no bind, no eviction, nothing pipelined (preemptable is "
    "disabled); sift runs allocate only, and the bind expectation (none) is the same.",
    config(
        "allocate",
        plugin("priority", "enabledTaskOrder", "enabledJobOrder", "enabledJobStarving"),
    ),
    [
        pod("ns1", "preemptee1", "node1", "Running", res("3", "3G"), "pg1", {"volcano.sh/preemptable": "true"}),
        pod("ns1", "preemptee2", "node2", "Running", res("3", "3G"), "pg1", {"volcano.sh/preemptable": "false"}),
        pod("ns2", "preemptor1", "", "Pending", res("3", "3G"), "pg2"),
    ],
    {},
    queues=[queue("q1", 1, res("6", "6G"))],
    pgs=[
        pod_group("pg1", "ns1", "q1", 1, {}, "Inqueue", priority_class="low-priority"),
        pod_group("pg2", "ns2", "q1", 1, {}, "Inqueue", priority_class="high-priority"),
    ],
    pcs=[priority_class("low-priority", 100), priority_class("high-priority", 1000)],
)

# ---------------------------------------------------------------------------
# kube-batch v0.5.0 pkg/scheduler/actions/allocate/allocate_test.go TestAllocate
# ---------------------------------------------------------------------------
KB_TIERS = config(
    "allocate",
    plugin("drf", "enabledPreemptable", "enabledJobOrder"),
    plugin("proportion", "enabledQueueOrder", "enabledReclaimable"),
)
KB_COMMON = (
    "Ported from kube-batch v0.5.0 and run with Volcano v1.11.0 semantics, which give kube-batch's "
    "expected binds. Tiers as kube-batch's test: drf (preemptable, jobOrder), proportion (queueOrder, "
    "reclaimable); no gang, so every job is ready. kube-batch's helpers put 'nvidia.com/gpu: 0' in "
    "every request and allocatable (kept). Two adaptations: (1) kube-batch's BuildNode sets no 'pods' "
    "allocatable, and Volcano counts pods: 1 in every task's request against the node's idle "
    "resources, so as written no pod would fit anywhere under Volcano; the node gets pods: 110 (the "
    "kubelet default; any value >= 2 gives the same result). (2) The PodGroups are written in "
    "Volcano's apiVersion; as in kube-batch they have no status (phase '' = Pending, which allocate "
    "turns into Inqueue when no enqueue action runs) and minMember 0. "
)
NODES_OF[18] = [node("n1", res("2", "4Gi", **{"nvidia.com__gpu": "0", "pods": "110"}))]
case(
    18, "kube-batch-one-job-with-two-pods-on-one-node",
    "one Job with two Pods on one node",
    "%s %s: TestAllocate/one Job with two Pods on one node" % (KUBE_BATCH, ALLOC_TEST),
    KB_COMMON +
    "One job, two 1-cpu/1G pods, one 2-cpu/4Gi node: both pods bind (p1 first by uid c1-p1; the job "
    "is ready after each, so each is committed). kube-batch expects c1/p1 and c1/p2 on n1.",
    KB_TIERS,
    [
        pod("c1", "p1", "", "Pending", res("1", "1G", **{"nvidia.com__gpu": "0"}), "pg1"),
        pod("c1", "p2", "", "Pending", res("1", "1G", **{"nvidia.com__gpu": "0"}), "pg1"),
    ],
    {"c1/p1": "n1", "c1/p2": "n1"},
    queues=[queue("c1", 1)],
    pgs=[pod_group("pg1", "c1", "c1", 0)],
)

NODES_OF[19] = [node("n1", res("2", "4G", **{"nvidia.com__gpu": "0", "pods": "110"}))]
case(
    19, "kube-batch-two-jobs-on-one-node",
    "two Jobs on one node",
    "%s %s: TestAllocate/two Jobs on one node" % (KUBE_BATCH, ALLOC_TEST),
    KB_COMMON +
    "Queues c1, c2 (weight 1), one job each with pods p1, p2 (1 cpu, 1G), one 2-cpu/4G node. Queue "
    "shares tie at 0 and c1 < c2 by uid: c1's p1 (uid c1-p1 before c1-p2) -> n1; the job is ready with "
    "a task left, so it is pushed back and committed; c1's share is now 1 (1 of deserved 1 cpu), so "
    "c2 goes next and its p1 takes the second cpu. The p2s fit nowhere. kube-batch expects c1/p1 and "
    "c2/p1 on n1.",
    KB_TIERS,
    [
        pod("c1", "p1", "", "Pending", res("1", "1G", **{"nvidia.com__gpu": "0"}), "pg1"),
        pod("c1", "p2", "", "Pending", res("1", "1G", **{"nvidia.com__gpu": "0"}), "pg1"),
        pod("c2", "p1", "", "Pending", res("1", "1G", **{"nvidia.com__gpu": "0"}), "pg2"),
        pod("c2", "p2", "", "Pending", res("1", "1G", **{"nvidia.com__gpu": "0"}), "pg2"),
    ],
    {"c2/p1": "n1", "c1/p1": "n1"},
    queues=[queue("c1", 1), queue("c2", 1)],
    pgs=[pod_group("pg1", "c1", "c1", 0), pod_group("pg2", "c2", "c2", 0)],
)


def main():
    os.makedirs(OUT, exist_ok=True)
    names = set()
    for fname, c in CASES:
        if fname in names:
            sys.exit("duplicate file " + fname)
        names.add(fname)
        with open(os.path.join(OUT, fname), "w", encoding="utf-8") as f:
            json.dump(c, f, indent=2, ensure_ascii=False)
            f.write("\n")
    # Remove files this generator wrote before under names it no longer
    # uses: numbers up to its highest. Cases numbered above it (020 on)
    # are written by hand and stay.
    highest = max(int(n[:3]) for n in names)
    for f in sorted(os.listdir(OUT)):
        if f.endswith(".json") and f not in names and f[:3].isdigit() and int(f[:3]) <= highest:
            os.remove(os.path.join(OUT, f))
    print("wrote %d cases to %s" % (len(CASES), OUT))


if __name__ == "__main__":
    main()
