#!/usr/bin/env python3
"""Writes tests/cases/Simulate/<Group>/NNN-slug.json: `sift simulate` cases
(mode "scheduler") ported from kube-scheduler's tests, kubernetes/kubernetes
master as of v1.36 (see README.md next to this file for files and rules).

Every case states its expectation twice: by hand in the table below, and as
computed by model.py (a restatement of the upstream score formulas, the
scheduleOne loop, DefaultPreemption and the FitError messages). The
generator fails when the two disagree, when a scheduling step has a tied top
score (kube-scheduler would pick at random), when a case ported from a
scoring test does not reproduce upstream's expected scores, when a
preemption's outcome would depend on a tie upstream breaks at random (the
victims' order, the pick between nodes, the dry run's random offset), or
when a pod preempts in a case whose table states no `preempted` (only the
Preemption group does).

Run from anywhere: python3 docs/upstream/simulate/gen.py
Output is deterministic (uids are uuid5 of the case and object names).
"""
import hashlib
import json
import os
import re
import sys
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True
import model  # noqa: E402

OUT = os.path.join(HERE, "..", "..", "..", "tests", "cases", "Simulate")
UPSTREAM = "kubernetes/kubernetes pkg/scheduler/"
NR = UPSTREAM + "framework/plugins/noderesources/"

# Which upstream function decides each message (the model restates them):
#   "0/N nodes are available: <histogram>."   framework/types.go FitError.Error
#   " preemption: ..."                        plugins/defaultpreemption/default_preemption.go
#                                             DefaultPreemption.PostFilter ("preemption: " + msg)
#   "not eligible due to preemptionPolicy=Never."
#                                             DefaultPreemption.PodEligibleToPreemptOthers
#   "0/N nodes are available: ... Preemption is not helpful for scheduling."
#                                             framework/preemption/preemption.go Evaluator.Preempt
#                                             (absent-node status of the dry-run FitError) and
#                                             findCandidates (no Unschedulable node -> empty map)
#   "No preemption victims found for incoming pod"
#                                             DefaultPreemption.SelectVictimsOnNode (no pod of lower
#                                             priority on the node), via Evaluator.DryRunPreemption
#   "Insufficient cpu" inside the preemption part
#                                             SelectVictimsOnNode: the filters still reject the node
#                                             once every lower-priority pod is removed
#   filter reasons                            noderesources/fit.go fitsRequest ("Insufficient <r>",
#                                             "Too many pods"; UnschedulableAndUnresolvable when the
#                                             request exceeds the node's allocatable),
#                                             tainttoleration Filter, nodeaffinity Filter,
#                                             nodeunschedulable Filter, podtopologyspread Filter
#   preemption success                        Evaluator.Preempt returns Success with an empty message:
#                                             the FitError text is the histogram alone; the victims are
#                                             deleted (prepareCandidate), the pod is nominated
#                                             (PostFilterResult.NominatedNodeName) and retried
#   not modelled: a stock v1.34+ scheduler also runs DynamicResources' PostFilter before
#   DefaultPreemption; for a pod without claims it adds "no new claims to deallocate, " in front
#   of "preemption:" (dynamicresources.go PostFilter). sift has no DynamicResources.
#
# Score formulas (model.py; each function names its upstream counterpart), integer math:
#   LeastAllocated  least_score: ((alloc - req) * 100) / alloc, 0 when req > alloc
#                   (noderesources/least_allocated.go leastRequestedScore)
#   MostAllocated   most_score: (min(req, alloc) * 100) / alloc -- req is capped, not zeroed
#                   (noderesources/most_allocated.go mostRequestedScore)
#   both            sum(w * s) / sum(w) over the resources the node has (allocatable 0 skipped;
#                   a scalar resource the pod does not request skipped) (leastResourceScorer,
#                   mostResourceScorer, resource_allocation.go calculateResourceAllocatableRequest)
#   RTCR            fit_score: utilization = req*100/alloc (100 when req >= alloc), shape scores
#                   times 10, broken-linear with Go's truncating division, resources scoring 0
#                   left out of both sums, math.Round (half away from zero) of the mean
#                   (requested_to_capacity_ratio.go, helper/shape_score.go BuildBrokenLinearFunction)
#   requested       node NonZeroRequested + the pod's request with 100m / 200Mi for a container
#                   *missing* a cpu / memory request (resource_allocation.go
#                   calculatePodResourceRequest, framework/types.go getNonMissingContainerRequests)
#   Balanced        balanced_score: actual requests (node Requested + pod), fraction capped at 1,
#                   std = |f0 - f1| / 2 for two resources, population std for more,
#                   int64((1 - std) * 100); PreScore Skip when the pod's requests are all zero
#                   (balanced_allocation.go balancedResourceScorer, PreScore, isBestEffortPod)
#   NodeAffinity    node_affinity_scores: sum of the weights of the matching preferred terms (the
#                   pod's and the args' addedAffinity's), DefaultNormalizeScore not reversed; PreScore
#                   Skip when neither has any (nodeaffinity/node_affinity.go, component-helpers
#                   nodeaffinity.go NewPreferredSchedulingTerms)
#   ImageLocality   image_locality_scores: int64(size * nodes-with-image / all-snapshot-nodes) per
#                   image of the init containers, containers and image volumes, clamped into
#                   [23 MiB, 1000 MiB * count], 100 * (sum - min) / (max - min) in integers
#                   (imagelocality/image_locality.go)
#   InterPodAffinity inter_pod_affinity_scores: per topology pair of a placed pod's node, +w / -w for
#                   the pod's preferred (anti-)affinity terms the placed pod matches, +hardPodAffinityWeight
#                   for the placed pod's required affinity terms the pod matches, +w / -w for the placed
#                   pod's preferred (anti-)affinity terms the pod matches; Score sums the node's pairs;
#                   int(100.0 * ((s - min) / (max - min))) in float64; PreScore Skip when nothing was
#                   added, or with ignorePreferredTermsOfExistingPods and no preferred term of the pod's
#                   (interpodaffinity/scoring.go, plugin.go)
#   PodTopologySpread pod_topology_spread_scores: the pod's ScheduleAnyway constraints, or for a pod with
#                   none of its own the ScheduleAnyway defaults (System: hostname 3, zone 5; List: the args')
#                   over its DefaultSelector (Services selecting it, its controller's selector); a feasible
#                   node lacking a constraint's key is ignored (0, out of min/max), except with the system
#                   defaults (its value is "", Score skips that constraint); per constraint, matching pods
#                   (same namespace, not terminating; `{}` counts none) of every snapshot node the inclusion
#                   policies admit, summed per domain of the feasible nodes (kubernetes.io/hostname: the
#                   node's own pods, no policy); sum of cnt * ln(domains + 2) + maxSkew - 1, math.Round;
#                   100 * (max + min - s) / max, all 100 when max is 0; PreScore Skip without a
#                   ScheduleAnyway constraint (podtopologyspread/scoring.go, common.go, plugin.go,
#                   helper/spread.go); its filter likewise with the DoNotSchedule ones (filtering.go)

CASES = []


# ------------------------------------------------------------------ objects
def uid(*parts):
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "sift-simulate/" + "/".join(parts)))


def node(name, alloc, labels=None, taints=None, unschedulable=False, images=None, hostname=True):
    """images: status.images, [(names, sizeBytes)] (left out when None);
    hostname: False leaves out the kubernetes.io/hostname label (for a
    node that lacks it on purpose)."""
    l = {"kubernetes.io/hostname": name} if hostname else {}
    l.update({"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"})
    l.update(labels or {})
    alloc = dict(alloc)
    alloc.setdefault("pods", "110")
    spec = {}
    if unschedulable:
        spec["unschedulable"] = True
    if taints:
        spec["taints"] = taints
    status = {"allocatable": dict(alloc), "capacity": dict(alloc)}
    if images is not None:
        status["images"] = [{"names": list(names), "sizeBytes": size} for names, size in images]
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": None, "labels": l},
            "spec": spec,
            "status": status}


ZERO = {"cpu": "0", "memory": "0"}  # explicit zero requests: honoured, no 100m/200Mi default


PAUSE = "registry.k8s.io/pause:3.10"


def container(i, requests=None, limits=None, image=PAUSE, prefix="c"):
    res = {}
    if requests is not None:
        res["requests"] = dict(requests)
    if limits is not None:
        res["limits"] = dict(limits)
    return {"name": f"{prefix}{i}", "image": image, "imagePullPolicy": "IfNotPresent",
            "resources": res, "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File"}


def qos(containers):
    reqs = [c["resources"].get("requests", {}) for c in containers]
    lims = [c["resources"].get("limits", {}) for c in containers]
    if not any(reqs) and not any(lims):
        return "BestEffort"
    for r, l in zip(reqs, lims):
        for res in ("cpu", "memory"):
            if res not in l or r.get(res, l[res]) != l[res]:
                return "Burstable"
    return "Guaranteed"


def pod(name, *reqs, node=None, prio=0, ns="default", labels=None, limits=None,
        policy="PreemptLowerPriority", spread=None, node_selector=None, tolerations=None,
        affinity=None, images=None, init_images=None):
    """reqs: one dict of requests per container (None: a container with no
    requests at all). images: one image per container (default: the pause
    image for each); init_images: init containers (named i0, i1...), one per
    image, with explicit zero requests; affinity: spec.affinity."""
    reqs = reqs or (None,)
    images = images or [PAUSE] * len(reqs)
    assert len(images) == len(reqs), (name, images, reqs)
    cs = [container(i, r, limits, image=im) for i, (r, im) in enumerate(zip(reqs, images))]
    spec = {"containers": cs}
    if init_images:
        spec["initContainers"] = [container(i, ZERO, image=im, prefix="i") for i, im in enumerate(init_images)]
    if node:
        spec["nodeName"] = node
    if node_selector:
        spec["nodeSelector"] = node_selector
    if spread:
        spec["topologySpreadConstraints"] = spread
    if tolerations:
        spec["tolerations"] = [dict(t) for t in tolerations]
    if affinity:
        spec["affinity"] = affinity
    spec.update({"restartPolicy": "Always", "schedulerName": "default-scheduler",
                 "dnsPolicy": "ClusterFirst", "terminationGracePeriodSeconds": 30,
                 "enableServiceLinks": True, "preemptionPolicy": policy, "priority": prio})
    meta = {"name": name, "namespace": ns, "uid": None, "creationTimestamp": None}
    if labels:
        meta["labels"] = dict(labels)
    status = {"phase": "Running" if node else "Pending", "qosClass": qos(cs)}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


NO_SELECTOR = object()  # pdb(selector=NO_SELECTOR): spec.selector left out


def pdb(name, selector, allowed, ns="default", disrupted=(), min_available=None, max_unavailable=None):
    """A policy/v1 PodDisruptionBudget as `kubectl get -o json` prints it.
    The scheduler reads only its namespace, spec.selector,
    status.disruptionsAllowed and status.disruptedPods (the names listed,
    here all at one fixed time); those are as the case gives them. The other
    status fields, and spec.minAvailable unless given, are filled in by
    finish() the way the disruption controller would count the case's bound
    pods (pdb_status)."""
    spec = {}
    if min_available is not None:
        spec["minAvailable"] = min_available
    if max_unavailable is not None:
        spec["maxUnavailable"] = max_unavailable
    if selector is not NO_SELECTOR:
        spec["selector"] = selector
    status = {"observedGeneration": 1}
    if disrupted:
        status["disruptedPods"] = {n: "2025-01-01T00:00:00Z" for n in disrupted}
    status["disruptionsAllowed"] = allowed
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": ns, "uid": None, "generation": 1,
                         "creationTimestamp": "2025-01-01T00:00:00Z"},
            "spec": spec, "status": status}


def controller_selects(p, pod_obj):
    """Which pods the disruption controller counts for a PDB (status only, not
    what the scheduler matches): same namespace; under policy/v1 an absent
    selector selects nothing and an empty one every pod of the namespace
    (the scheduler skips both, see model.pdb_selects)."""
    if p["metadata"]["namespace"] != pod_obj["metadata"]["namespace"]:
        return False
    sel = p["spec"].get("selector")
    if sel is None:
        return False
    labels = pod_obj["metadata"].get("labels") or {}
    try:
        return (all(labels.get(k) == v for k, v in (sel.get("matchLabels") or {}).items())
                and all([model._requirement_matches(e, labels) for e in sel.get("matchExpressions") or []]))
    except model.InvalidSelector:
        return False


def pdb_status(p, cluster_pods):
    """Fills the PDB's status counts from the case's bound pods (all Running
    and taken as ready): expectedPods the pods it selects, currentHealthy
    those not listed in disruptedPods, desiredHealthy from minAvailable if
    given (a count or a percentage of expectedPods, rounded up), else
    currentHealthy - disruptionsAllowed, which then also becomes
    spec.minAvailable. disruptionsAllowed itself stays as given."""
    st = p["status"]
    selected = [q for q in cluster_pods if controller_selects(p, q)]
    disrupted = st.get("disruptedPods") or {}
    expected = len(selected)
    healthy = sum(1 for q in selected if q["metadata"]["name"] not in disrupted)
    ma = p["spec"].get("minAvailable")
    if ma is None and "maxUnavailable" not in p["spec"]:
        desired = max(0, healthy - st["disruptionsAllowed"])
        p["spec"] = dict({"minAvailable": desired}, **p["spec"])
    elif isinstance(ma, str) and ma.endswith("%"):
        desired = -(-expected * int(ma[:-1]) // 100)
    elif ma is not None:
        desired = int(ma)
    else:
        mu = p["spec"]["maxUnavailable"]
        mu = -(-expected * int(mu[:-1]) // 100) if isinstance(mu, str) else int(mu)
        desired = max(0, expected - mu)
    st.update({"currentHealthy": healthy, "desiredHealthy": desired, "expectedPods": expected})


def cfg(score, fit=None, balanced=None, added_affinity=None, ipa=None):
    """score: [(plugin, weight)]; fit: a NodeResourcesFit scoringStrategy;
    balanced: BalancedAllocation resources; added_affinity: NodeAffinityArgs
    addedAffinity (a v1 NodeAffinity); ipa: InterPodAffinityArgs."""
    c = {"percentageOfNodesToScore": 100,
         "plugins": {"score": {"disabled": [{"name": "*"}],
                               "enabled": [{"name": n, "weight": w} for n, w in score]}}}
    pcs = []
    if fit is not None:
        pcs.append({"name": "NodeResourcesFit", "args": {"scoringStrategy": fit}})
    if balanced is not None:
        pcs.append({"name": "NodeResourcesBalancedAllocation", "args": {"resources": balanced}})
    if added_affinity is not None:
        pcs.append({"name": "NodeAffinity", "args": {"addedAffinity": added_affinity}})
    if ipa is not None:
        pcs.append({"name": "InterPodAffinity", "args": dict(ipa)})
    if pcs:
        c["pluginConfig"] = pcs
    return c


RES = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
LEAST = {"type": "LeastAllocated", "resources": RES}
MOST = {"type": "MostAllocated", "resources": RES}


def rtcr(resources, shape):
    return {"type": "RequestedToCapacityRatio", "resources": resources,
            "requestedToCapacityRatio": {"shape": [{"utilization": u, "score": s} for u, s in shape]}}


def only_fit(strategy):
    return cfg([("NodeResourcesFit", 1)], fit=strategy)


def only_balanced(resources=RES):
    return cfg([("NodeResourcesBalancedAllocation", 1)], balanced=resources)


def case(group, name, source, nodes, workload, pods=(), config=None, filters=None,
         binds=None, unscheduled=(), messages=True, upstream=None, notes=None, preempted=None,
         objects=(), candidates=None, ties=False, namespaces=(), scores=None):
    """binds: the expected binds, by hand; messages: False leaves FitError
    texts out (an upstream message not certain enough to pin); upstream:
    {node: score} expected by the upstream scoring test for the first
    workload pod (checked against the model's score of the one enabled
    plugin); preempted: {preemptor: [victims]} by hand, the pods that
    preempt nothing left out (the case file lists every workload pod, `[]`
    for those). None: the case must not preempt, and writes no
    `preempted`. objects: the case's "objects" (PodDisruptionBudgets, see
    pdb()), written only when there are some. candidates: {preemptor:
    [(node, [victims], PDB violations), ...]} by hand, the dry run of the
    pod's first preemption in upstream's order (non-violating candidates
    first, each group in node order), checked against the model; it is not
    written to the case (sift reports no candidates), the notes show it.
    objects may also hold Services and controllers (service(),
    replica_set(), stateful_set(), replication_controller()), which give
    pods without spread constraints their default ones.
    ties: the highest totals may tie (upstream then picks at random): a
    pod placed on a tie is left out of `binds` (by hand and written).
    namespaces: the case's Namespace objects (see namespace()), written
    only when there are some. scores: {plugin: {node: score}} by hand for
    the first workload pod over the nodes that pass the case's filters
    (any configured plugins, not only upstream's one), checked against the
    model and written to expect.scores with the upstream ones."""
    CASES.append(dict(group=group, name=name, source=source, nodes=nodes, pods=list(pods),
                      workload=list(workload), config=config, filters=filters,
                      binds=binds or {}, unscheduled=list(unscheduled), messages=messages,
                      upstream=upstream, notes=notes, preempted=preempted, objects=list(objects),
                      candidates=candidates, ties=ties, namespaces=list(namespaces), scores=scores))


def up(test, sub, file):
    return f"{test}/{sub}", NR + file


# ===================================================== LeastAllocated
G = "LeastAllocated"
F = "least_allocated_test.go"

# st.MakeNode().Capacity({"cpu": "4000", ...}) is 4000 cores; the ratios are
# what upstream's comments compute. Pods with no containers upstream
# (st.MakePod().Obj()) are ported as one container with explicit zero
# requests, which NonMissingContainerRequests leaves at zero.
case(G, "nothing scheduled, resources requested, differently sized nodes",
     up("TestLeastAllocatedScoringStrategy", "nothing scheduled, resources requested, differently sized nodes", F),
     [node("node1", {"cpu": "4000", "memory": "10000"}), node("node2", {"cpu": "6000", "memory": "10000"})],
     [pod("incoming", {"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"})],
     config=only_fit(LEAST), filters=["NodeResourcesFit"],
     binds={"default/incoming": "node2"}, upstream={"node1": 37, "node2": 50})

case(G, "no resources requested, pods scheduled with resources",
     up("TestLeastAllocatedScoringStrategy", "no resources requested, pods scheduled with resources", F),
     [node("node1", {"cpu": "10000", "memory": "20000"}), node("node2", {"cpu": "10000", "memory": "20000"})],
     [pod("incoming", ZERO)],
     pods=[pod("p1", {"cpu": "3000", "memory": "0"}, node="node1"),
           pod("p2", {"cpu": "3000", "memory": "0"}, node="node1"),
           pod("p3", {"cpu": "3000", "memory": "0"}, node="node2"),
           pod("p4", {"cpu": "3000", "memory": "5000"}, node="node2")],
     config=only_fit(LEAST), filters=["NodeResourcesFit"],
     binds={"default/incoming": "node1"}, upstream={"node1": 70, "node2": 57},
     notes="The incoming pod has no containers upstream; here it has one container with explicit "
           "cpu/memory requests of 0, which are honoured (not replaced by 100m/200Mi). The existing "
           "pods' explicit memory 0 likewise counts as 0.")

case(G, "resources requested, pods scheduled with resources",
     up("TestLeastAllocatedScoringStrategy", "resources requested, pods scheduled with resources", F),
     [node("node1", {"cpu": "10000", "memory": "20000"}), node("node2", {"cpu": "10000", "memory": "20000"})],
     [pod("incoming", {"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"})],
     pods=[pod("p1", {"cpu": "3000", "memory": "0"}, node="node1"),
           pod("p2", {"cpu": "3000", "memory": "5000"}, node="node2")],
     config=only_fit(LEAST), filters=["NodeResourcesFit"],
     binds={"default/incoming": "node1"}, upstream={"node1": 57, "node2": 45})

case(G, "resources requested, pods scheduled with resources, differently sized nodes",
     up("TestLeastAllocatedScoringStrategy", "resources requested, pods scheduled with resources, differently sized nodes", F),
     [node("node1", {"cpu": "10000", "memory": "20000"}), node("node2", {"cpu": "10000", "memory": "50000"})],
     [pod("incoming", {"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"})],
     pods=[pod("p1", {"cpu": "3000", "memory": "0"}, node="node1"),
           pod("p2", {"cpu": "3000", "memory": "5000"}, node="node2")],
     config=only_fit(LEAST), filters=["NodeResourcesFit"],
     binds={"default/incoming": "node2"}, upstream={"node1": 57, "node2": 60})

case(G, "resources requested with different weight on CPU and memory",
     up("TestLeastAllocatedScoringStrategy", "nothing scheduled, resources requested with different weight on CPU and memory, differently sized nodes", F),
     [node("node1", {"cpu": "4000", "memory": "10000"}), node("node2", {"cpu": "6000", "memory": "10000"})],
     [pod("incoming", {"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"})],
     config=only_fit({"type": "LeastAllocated",
                      "resources": [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}]}),
     filters=["NodeResourcesFit"],
     binds={"default/incoming": "node2"}, upstream={"node1": 41, "node2": 50})

case(G, "honor extended resource if the pod requests",
     up("TestLeastAllocatedScoringStrategy", "honor extended resource if the pod requests", F),
     [node("node1", {"cpu": "6000", "memory": "10000", "abc.com/xyz": "4"}),
      node("node2", {"cpu": "6000", "memory": "10000", "abc.com/xyz": "10"})],
     [pod("incoming", {"cpu": "3000", "memory": "5000", "abc.com/xyz": "2"})],
     config=only_fit({"type": "LeastAllocated",
                      "resources": RES + [{"name": "abc.com/xyz", "weight": 1}]}),
     filters=["NodeResourcesFit"],
     binds={"default/incoming": "node2"}, upstream={"node1": 50, "node2": 60})

case(G, "requested resources exceed node capacity: the pod fits nowhere",
     up("TestLeastAllocatedScoringStrategy", "requested resources exceed node capacity", F),
     [node("node1", {"cpu": "4000", "memory": "10000"}), node("node2", {"cpu": "4000", "memory": "10000"})],
     [pod("incoming", {"cpu": "3000", "memory": "0"})],
     pods=[pod("p1", {"cpu": "3000", "memory": "0"}, node="node1"),
           pod("p2", {"cpu": "3000", "memory": "5000"}, node="node2")],
     config=only_fit(LEAST), filters=["NodeResourcesFit"],
     unscheduled=["default/incoming"],
     notes="Upstream scores node1=50, node2=25 with the filter skipped; run as a scheduling cycle, "
           "NodeResourcesFit rejects both nodes first (3000+3000 > 4000 cores). 3000 fits the "
           "allocatable, so the status is Unschedulable and preemption dry-runs; every pod has "
           "priority 0, so there is no victim.")

# The spread/pack pair: the same cluster and pods, LeastAllocated vs MostAllocated.
SEQ_NODES = lambda: [node("node-a", {"cpu": "4", "memory": "8Gi"}),
                     node("node-b", {"cpu": "4", "memory": "8Gi"}),
                     node("node-c", {"cpu": "4", "memory": "16Gi"})]
SEQ_BOUND = lambda: [pod("base-a", {"cpu": "1", "memory": "512Mi"}, node="node-a")]


def seq_workload():
    return [pod(f"web-{i}", {"cpu": "1", "memory": "1Gi"}) for i in range(4)]


case(G, "sequence: four pods spread over three nodes with LeastAllocated",
     ("sift-derived: scheduleOne loop (schedule_one.go) with assume, LeastAllocated", NR + "least_allocated.go"),
     SEQ_NODES(), seq_workload(), pods=SEQ_BOUND(),
     config=only_fit(LEAST), filters=model.DEFAULT_FILTERS,
     binds={"default/web-0": "node-c", "default/web-1": "node-b",
            "default/web-2": "node-c", "default/web-3": "node-a"},
     notes="Each bind is assumed before the next pod: node-c (16Gi) leads, then node-b (empty), "
           "then node-c again, then node-a, which started with one pod.")

case(G, "sequence: pods without requests spread by their 100m/200Mi defaults",
     ("sift-derived: NonZeroRequested in the scheduleOne loop (framework/types.go getNonMissingContainerRequests)",
      NR + "resource_allocation.go"),
     [node("node-a", {"cpu": "2", "memory": "4Gi"}), node("node-b", {"cpu": "2", "memory": "4Gi"})],
     [pod(f"idle-{i}") for i in range(3)],
     pods=[pod("sidecar", {"cpu": "50m", "memory": "64Mi"}, node="node-a")],
     config=None, filters=model.DEFAULT_FILTERS,
     binds={"default/idle-0": "node-b", "default/idle-1": "node-a", "default/idle-2": "node-b"},
     notes="Default score set (NodeResourcesFit LeastAllocated and BalancedAllocation decide; "
           "TaintToleration adds 300 to every node, the others skip). The pending "
           "pods request nothing, so BalancedAllocation skips them (PreScore Skip) and Fit filters "
           "nothing; LeastAllocated counts each one as 100m/200Mi once assumed, so the second pod "
           "goes back to node-a and the third to node-b.")

# ===================================================== MostAllocated
G = "MostAllocated"
F = "most_allocated_test.go"

case(G, "nothing scheduled, resources requested, differently sized nodes",
     up("TestMostAllocatedScoringStrategy", "nothing scheduled, resources requested, differently sized nodes", F),
     [node("node1", {"cpu": "4000", "memory": "10000"}), node("node2", {"cpu": "6000", "memory": "10000"})],
     [pod("incoming", {"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"})],
     config=only_fit(MOST), filters=["NodeResourcesFit"],
     binds={"default/incoming": "node1"}, upstream={"node1": 62, "node2": 50})

case(G, "no resources requested, pods scheduled with resources",
     up("TestMostAllocatedScoringStrategy", "no resources requested, pods scheduled with resources", F),
     [node("node1", {"cpu": "10000", "memory": "20000"}), node("node2", {"cpu": "10000", "memory": "20000"})],
     [pod("incoming", ZERO)],
     pods=[pod("p1", {"cpu": "3000", "memory": "0"}, node="node1"),
           pod("p2", {"cpu": "3000", "memory": "0"}, node="node1"),
           pod("p3", {"cpu": "3000", "memory": "0"}, node="node2"),
           pod("p4", {"cpu": "3000", "memory": "5000"}, node="node2")],
     config=only_fit(MOST), filters=["NodeResourcesFit"],
     binds={"default/incoming": "node2"}, upstream={"node1": 30, "node2": 42},
     notes="The incoming pod's explicit zero requests are honoured (upstream: a pod with no containers).")

case(G, "resources requested, pods scheduled with resources",
     up("TestMostAllocatedScoringStrategy", "resources requested, pods scheduled with resources", F),
     [node("node1", {"cpu": "10000", "memory": "20000"}), node("node2", {"cpu": "10000", "memory": "20000"})],
     [pod("incoming", {"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"})],
     pods=[pod("p1", {"cpu": "3000", "memory": "0"}, node="node1"),
           pod("p2", {"cpu": "3000", "memory": "5000"}, node="node2")],
     config=only_fit(MOST), filters=["NodeResourcesFit"],
     binds={"default/incoming": "node2"}, upstream={"node1": 42, "node2": 55})

case(G, "resources requested equal node capacity",
     up("TestMostAllocatedScoringStrategy", "resources requested equal node capacity", F),
     [node("node1", {"cpu": "5000", "memory": "10000"}), node("node2", {"cpu": "10000", "memory": "9000"})],
     [pod("incoming", {"cpu": "2000", "memory": "4000"}, {"cpu": "3000", "memory": "5000"})],
     config=only_fit(MOST), filters=["NodeResourcesFit"],
     binds={"default/incoming": "node1"}, upstream={"node1": 95, "node2": 75})

case(G, "resources requested with different weight on CPU and memory",
     up("TestMostAllocatedScoringStrategy", "nothing scheduled, resources requested, differently sized nodes (memory weight 2)", F),
     [node("node1", {"cpu": "4000", "memory": "10000"}), node("node2", {"cpu": "6000", "memory": "10000"})],
     [pod("incoming", {"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"})],
     config=only_fit({"type": "MostAllocated",
                      "resources": [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}]}),
     filters=["NodeResourcesFit"],
     binds={"default/incoming": "node1"}, upstream={"node1": 58, "node2": 50},
     notes="Upstream names this subtest like the first one (\"nothing scheduled, resources requested, "
           "differently sized nodes\"); it is the one with resources memory:2, cpu:1.")

case(G, "no resources requested, pods scheduled, nonzero request for resource",
     up("TestMostAllocatedScoringStrategy", "no resources requested, pods scheduled, nonzero request for resource", F),
     [node("node1", {"cpu": "250m", "memory": "1000Mi"}), node("node2", {"cpu": "250m", "memory": "1000Mi"})],
     [pod("incoming")],
     pods=[pod("p1", node="node1"), pod("p2", node="node1")],
     config=only_fit(MOST), filters=["NodeResourcesFit"],
     binds={"default/incoming": "node1"}, upstream={"node1": 80, "node2": 30},
     notes="Containers without requests count as 100m/200Mi: node1 holds 300m of 250m (capped at "
           "100) and 600Mi of 1000Mi. The pod's actual request is zero, so NodeResourcesFit's filter "
           "passes both nodes.")

case(G, "honor extended resource if the pod request",
     up("TestMostAllocatedScoringStrategy", "honor extended resource if the pod request", F),
     [node("node1", {"cpu": "6000", "memory": "10000", "abc.com/xyz": "4"}),
      node("node2", {"cpu": "6000", "memory": "10000", "abc.com/xyz": "10"})],
     [pod("incoming", {"cpu": "3000", "memory": "5000", "abc.com/xyz": "2"})],
     config=only_fit({"type": "MostAllocated",
                      "resources": RES + [{"name": "abc.com/xyz", "weight": 1}]}),
     filters=["NodeResourcesFit"],
     binds={"default/incoming": "node1"}, upstream={"node1": 50, "node2": 40})

case(G, "sequence: four pods pack onto the fullest node with MostAllocated",
     ("sift-derived: scheduleOne loop (schedule_one.go) with assume, MostAllocated", NR + "most_allocated.go"),
     SEQ_NODES(), seq_workload(), pods=SEQ_BOUND(),
     config=only_fit(MOST), filters=model.DEFAULT_FILTERS,
     binds={"default/web-0": "node-a", "default/web-1": "node-a",
            "default/web-2": "node-a", "default/web-3": "node-b"},
     notes="Same cluster and pods as LeastAllocated's sequence case: node-a, already holding one "
           "pod, takes pods until its 4 CPUs are full, then node-b (8Gi, fuller than node-c's 16Gi).")

# ===================================================== RequestedToCapacityRatio
G = "RequestedToCapacityRatio"
F = "requested_to_capacity_ratio_test.go"
DESC = [(0, 10), (100, 0)]   # TestRequestedToCapacityRatioScoringStrategy's shape
ASC = [(0, 0), (100, 1)]     # TestResourceBinPacking*'s shape

case(G, "nothing scheduled, resources requested, differently sized nodes",
     up("TestRequestedToCapacityRatioScoringStrategy",
        "nothing scheduled, resources requested, differently sized nodes (default - least requested nodes have priority)", F),
     [node("node1", {"cpu": "4000", "memory": "10000"}), node("node2", {"cpu": "6000", "memory": "10000"})],
     [pod("incoming", {"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"})],
     pods=[pod("p1", ZERO, node="node1"), pod("p2", ZERO, node="node1")],
     config=only_fit(rtcr(RES, DESC)), filters=["NodeResourcesFit"],
     binds={"default/incoming": "node2"}, upstream={"node1": 38, "node2": 50},
     notes="node1: cpu 75% -> 25, memory 50% -> 50, math.Round(37.5) = 38. The existing pods have no "
           "containers upstream; here one container with explicit zero requests.")

case(G, "no resources requested, pods scheduled with resources",
     up("TestRequestedToCapacityRatioScoringStrategy",
        "no resources requested, pods scheduled with resources (default - least requested nodes have priority)", F),
     [node("node1", {"cpu": "4000", "memory": "10000"}), node("node2", {"cpu": "6000", "memory": "10000"})],
     [pod("incoming", ZERO)],
     pods=[pod("p1", {"cpu": "3000", "memory": "5000"}, node="node1"),
           pod("p2", {"cpu": "3000", "memory": "5000"}, node="node2")],
     config=only_fit(rtcr(RES, DESC)), filters=["NodeResourcesFit"],
     binds={"default/incoming": "node2"}, upstream={"node1": 38, "node2": 50})

FOO = [{"name": "intel.com/foo", "weight": 1}]
FOOBAR = [{"name": "intel.com/foo", "weight": 3}, {"name": "intel.com/bar", "weight": 5}]
MEM = str(10000 * 1024 * 1024)  # makeNode(name, 4000 (milli), 10000*1024*1024, extended)


def bin_node(name, ext):
    return node(name, dict({"cpu": "4", "memory": MEM}, **ext))


case(G, "single extended resource: resources requested, pods scheduled with less resources",
     up("TestResourceBinPackingSingleExtended", "resources requested, pods scheduled with less resources", F),
     [bin_node("node1", {"intel.com/foo": "8"}), bin_node("node2", {"intel.com/foo": "4"})],
     [pod("incoming", {"intel.com/foo": "2"})],
     config=only_fit(rtcr(FOO, ASC)), filters=["NodeResourcesFit"],
     binds={"default/incoming": "node2"}, upstream={"node1": 2, "node2": 5},
     notes="Shape 0->0, 100->1 is scaled by 10: node2 at 50% scores 5. Upstream's list of existing "
           "pods holds one pod with no node, which a snapshot ignores; it is left out.")

case(G, "single extended resource: on node with existing pod running",
     up("TestResourceBinPackingSingleExtended", "resources requested, pods scheduled with resources, on node with existing pod running ", F),
     [bin_node("node1", {"intel.com/foo": "8"}), bin_node("node2", {"intel.com/foo": "4"})],
     [pod("incoming", {"intel.com/foo": "2"})],
     pods=[pod("p1", {"intel.com/foo": "2"}, node="node2")],
     config=only_fit(rtcr(FOO, ASC)), filters=["NodeResourcesFit"],
     binds={"default/incoming": "node2"}, upstream={"node1": 2, "node2": 10})

case(G, "single extended resource: resources requested, pods scheduled with more resources",
     up("TestResourceBinPackingSingleExtended", "resources requested, pods scheduled with more resources", F),
     [bin_node("node1", {"intel.com/foo": "8"}), bin_node("node2", {"intel.com/foo": "4"})],
     [pod("incoming", {"intel.com/foo": "4"})],
     config=only_fit(rtcr(FOO, ASC)), filters=["NodeResourcesFit"],
     binds={"default/incoming": "node2"}, upstream={"node1": 5, "node2": 10})

case(G, "multiple extended resources: resources requested, pods scheduled with less resources",
     up("TestResourceBinPackingMultipleExtended", "resources requested, pods scheduled with less resources", F),
     [bin_node("node1", {"intel.com/foo": "8", "intel.com/bar": "4"}),
      bin_node("node2", {"intel.com/foo": "4", "intel.com/bar": "8"})],
     [pod("incoming", {"intel.com/foo": "2", "intel.com/bar": "2"})],
     config=only_fit(rtcr(FOOBAR, ASC)), filters=["NodeResourcesFit"],
     binds={"default/incoming": "node1"}, upstream={"node1": 4, "node2": 3},
     notes="Weights foo:3, bar:5: node1 (2*3 + 5*5)/8 = 3.875 -> 4, node2 (5*3 + 2*5)/8 = 3.125 -> 3.")

case(G, "multiple extended resources: the scoring favourite fails the filter",
     up("TestResourceBinPackingMultipleExtended", "resources requested, pods scheduled with resources, on node with existing pod running ", F),
     [bin_node("node1", {"intel.com/foo": "8", "intel.com/bar": "4"}),
      bin_node("node2", {"intel.com/foo": "4", "intel.com/bar": "8"})],
     [pod("incoming", {"intel.com/foo": "2", "intel.com/bar": "2"})],
     pods=[pod("p1", {"intel.com/foo": "4", "intel.com/bar": "2"}, node="node2")],
     config=only_fit(rtcr(FOOBAR, ASC)), filters=["NodeResourcesFit"],
     binds={"default/incoming": "node1"},
     notes="Upstream scores node1=4, node2=7 (foo over capacity scores as 100% utilization) with the "
           "filter skipped. As a scheduling cycle node2 has 4 of 4 intel.com/foo taken, so "
           "NodeResourcesFit leaves only node1, which is taken without scoring.")

# ===================================================== BalancedAllocation
G = "BalancedAllocation"
F = "balanced_allocation_test.go"
CPU_ONLY = ({"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"})
CPU_MEM = ({"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"})
CPU_MEM_GPU = ({"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000", "nvidia.com/gpu": "3"})


def bnode(name, milli, mem, ext=None):
    # makeNode(name, milliCPU, memory, extended)
    return node(name, dict({"cpu": f"{milli}m", "memory": str(mem)}, **(ext or {})))


case(G, "nothing scheduled, resources requested, differently sized nodes",
     up("TestNodeResourcesBalancedAllocation", "nothing scheduled, resources requested, differently sized nodes", F),
     [bnode("node1", 4000, 10000), bnode("node2", 6000, 10000)],
     [pod("incoming", *CPU_MEM)],
     config=only_balanced(), filters=["NodeResourcesFit"],
     binds={"default/incoming": "node2"}, upstream={"node1": 87, "node2": 100})

case(G, "resources requested, pods scheduled with resources",
     up("TestNodeResourcesBalancedAllocation", "resources requested, pods scheduled with resources", F),
     [bnode("node1", 10000, 20000), bnode("node2", 10000, 20000)],
     [pod("incoming", *CPU_MEM)],
     pods=[pod("cpu-only", *CPU_ONLY, node="node1"), pod("cpu-and-memory", *CPU_MEM, node="node2")],
     config=only_balanced(), filters=["NodeResourcesFit"],
     binds={"default/incoming": "node2"}, upstream={"node1": 82, "node2": 95})

case(G, "resources requested, pods scheduled with resources, differently sized nodes",
     up("TestNodeResourcesBalancedAllocation", "resources requested, pods scheduled with resources, differently sized nodes", F),
     [bnode("node1", 10000, 20000), bnode("node2", 10000, 50000)],
     [pod("incoming", *CPU_MEM)],
     pods=[pod("cpu-only", *CPU_ONLY, node="node1"), pod("cpu-and-memory", *CPU_MEM, node="node2")],
     config=only_balanced(), filters=["NodeResourcesFit"],
     binds={"default/incoming": "node1"}, upstream={"node1": 82, "node2": 80})

case(G, "requested resources at node capacity",
     up("TestNodeResourcesBalancedAllocation", "requested resources at node capacity", F),
     [bnode("node1", 6000, 10000), bnode("node2", 6000, 10000)],
     [pod("incoming", *CPU_ONLY)],
     pods=[pod("cpu-only", *CPU_ONLY, node="node1"), pod("cpu-and-memory", *CPU_MEM, node="node2")],
     config=only_balanced(), filters=["NodeResourcesFit"],
     binds={"default/incoming": "node2"}, upstream={"node1": 50, "node2": 75},
     notes="The pod's explicit memory 0 is an actual request of 0, not a default: its requests "
           "[3000m, 0] are not all zero, so BalancedAllocation scores it.")

case(G, "include scalar resource on a node for balanced resource allocation",
     up("TestNodeResourcesBalancedAllocation", "include scalar resource on a node for balanced resource allocation", F),
     [bnode("node1", 3500, 40000, {"nvidia.com/gpu": "8"}), bnode("node2", 3500, 40000, {"nvidia.com/gpu": "8"})],
     [pod("incoming", {"memory": "0", "nvidia.com/gpu": "1"})],
     pods=[pod("cpu-and-memory", *CPU_MEM, node="node2"), pod("cpu-memory-gpu", *CPU_MEM_GPU, node="node1")],
     config=only_balanced(RES + [{"name": "nvidia.com/gpu", "weight": 1}]), filters=["NodeResourcesFit"],
     binds={"default/incoming": "node1"}, upstream={"node1": 70, "node2": 65},
     notes="Three fractions, so the standard deviation is the general one: node1 cpu 3000/3500, "
           "memory 5000/40000, gpu 4/8.")

case(G, "sequence: a memory-heavy pod joins the cpu-heavy node, a cpu-heavy pod the memory-heavy one",
     ("sift-derived: scheduleOne loop with assume, BalancedAllocation only", NR + "balanced_allocation.go"),
     [node("node-a", {"cpu": "16", "memory": "32Gi"}), node("node-b", {"cpu": "16", "memory": "32Gi"})],
     [pod("mem-heavy", {"cpu": "500m", "memory": "8Gi"}), pod("cpu-heavy", {"cpu": "4", "memory": "1Gi"})],
     pods=[pod("batch", {"cpu": "4", "memory": "1Gi"}, node="node-a"),
           pod("cache", {"cpu": "500m", "memory": "6Gi"}, node="node-b")],
     config=only_balanced(), filters=model.DEFAULT_FILTERS,
     binds={"default/mem-heavy": "node-a", "default/cpu-heavy": "node-b"},
     notes="After mem-heavy is assumed on node-a, node-a's cpu and memory fractions are level, so "
           "cpu-heavy would unbalance it; node-b, memory-heavy, is evened out by it.")

MIXED_NODES = lambda: [node("node-a", {"cpu": "8", "memory": "16Gi"}), node("node-b", {"cpu": "8", "memory": "16Gi"})]
MIXED_BOUND = lambda: [pod("batch", {"cpu": "4", "memory": "1Gi"}, node="node-a"),
                       pod("cache", {"cpu": "500m", "memory": "6Gi"}, node="node-b")]

case(G, "default score set: LeastAllocated and BalancedAllocation disagree, the sum decides",
     ("sift-derived: prioritizeNodes summing NodeResourcesFit and BalancedAllocation (schedule_one.go)",
      NR + "balanced_allocation.go"),
     MIXED_NODES(), [pod("mem-heavy", {"cpu": "500m", "memory": "8Gi"})], pods=MIXED_BOUND(),
     config=None, binds={"default/mem-heavy": "node-a"},
     notes="LeastAllocated prefers node-b (49 against 43), BalancedAllocation prefers node-a (100 "
           "against 62); with both at weight 1 they sum to 143 and 111. The rest of the default set "
           "(TaintToleration 100 on both at weight 3; NodeAffinity, InterPodAffinity and "
           "ImageLocality skip) adds 300 to each.")

case(G, "plugin weights: NodeResourcesFit at weight 10 overturns BalancedAllocation",
     ("sift-derived: prioritizeNodes, score times plugin weight (schedule_one.go)",
      NR + "balanced_allocation.go"),
     MIXED_NODES(), [pod("mem-heavy", {"cpu": "500m", "memory": "8Gi"})], pods=MIXED_BOUND(),
     config=cfg([("NodeResourcesFit", 10), ("NodeResourcesBalancedAllocation", 1)]),
     binds={"default/mem-heavy": "node-b"},
     notes="Same cluster and pod as the previous case: 43*10 + 100 = 530 for node-a against "
           "49*10 + 62 = 552 for node-b. No pluginConfig: NodeResourcesFit uses LeastAllocated with "
           "cpu:1, memory:1 and BalancedAllocation cpu and memory.")

# ===================================================== TaintToleration (scoring)
G = "TaintToleration"
F = UPSTREAM + "framework/plugins/tainttoleration/taint_toleration_test.go"
TT = cfg([("TaintToleration", 1)])
TT_ALLOC = {"cpu": "4", "memory": "8Gi"}


def pns(key, value, effect="PreferNoSchedule"):
    return {"key": key, "value": value, "effect": effect}


def tol(key, value, effect="PreferNoSchedule", op="Equal"):
    return {"key": key, "operator": op, "value": value, "effect": effect}


# Upstream's nodes carry taints only; here each also has room for the pod,
# and "filters": ["TaintToleration"] runs the filter the default profile
# runs before scoring (no NoSchedule taint here rejects a node unless said).
for sub, tols, taints, want, binds in [
    ("node with taints tolerated by the pod, gets a higher score than those node with intolerable taints",
     [tol("foo", "bar")],
     {"nodeA": [pns("foo", "bar")], "nodeB": [pns("foo", "blah")]},
     {"nodeA": 100, "nodeB": 0}, {"default/pod1": "nodeA"}),
    ("the nodes that all of their taints are tolerated by the pod, get the same score, no matter how many tolerable taints a node has",
     [tol("cpu-type", "arm64"), tol("disk-type", "ssd")],
     {"nodeA": [], "nodeB": [pns("cpu-type", "arm64")],
      "nodeC": [pns("cpu-type", "arm64"), pns("disk-type", "ssd")]},
     {"nodeA": 100, "nodeB": 100, "nodeC": 100}, {}),
    ("the more intolerable taints a node has, the lower score it gets.",
     [tol("foo", "bar")],
     {"nodeA": [], "nodeB": [pns("cpu-type", "arm64")],
      "nodeC": [pns("cpu-type", "arm64"), pns("disk-type", "ssd")]},
     {"nodeA": 100, "nodeB": 50, "nodeC": 0}, {"default/pod1": "nodeA"}),
    ("only taints and tolerations that have effect PreferNoSchedule are checked by taints-tolerations priority function",
     [tol("cpu-type", "arm64", "NoSchedule"), tol("disk-type", "ssd", "NoSchedule")],
     {"nodeA": [], "nodeB": [pns("cpu-type", "arm64", "NoSchedule")],
      "nodeC": [pns("cpu-type", "arm64"), pns("disk-type", "ssd")]},
     {"nodeA": 100, "nodeB": 100, "nodeC": 0}, {}),
    ("Default behaviour No taints and tolerations, lands on node with no taints",
     [],
     {"nodeA": [], "nodeB": [pns("cpu-type", "arm64")]},
     {"nodeA": 100, "nodeB": 0}, {"default/pod1": "nodeA"}),
]:
    case(G, sub, (f"TestTaintTolerationScore/{sub}", F),
         [node(n, TT_ALLOC, taints=t) for n, t in taints.items()],
         [pod("pod1", ZERO, tolerations=tols)],
         config=TT, filters=["TaintToleration"],
         binds=binds, upstream=want, ties=not binds)

case(G, "an empty-effect toleration counts for PreferNoSchedule taints; a node the filter rejects is not scored",
     ("sift-derived: getAllTolerationPreferNoSchedule keeps tolerations without an effect; "
      "only feasible nodes are scored (schedule_one.go prioritizeNodes)", F),
     [node("nodeA", TT_ALLOC, taints=[pns("gpu", "a100")]),
      node("nodeB", TT_ALLOC, taints=[pns("spot", "true")]),
      node("nodeC", TT_ALLOC, taints=[pns("dedicated", "batch", "NoSchedule")])],
     [pod("pod1", ZERO, tolerations=[{"key": "gpu", "operator": "Exists"}])],
     config=TT, filters=["TaintToleration"],
     binds={"default/pod1": "nodeA"}, upstream={"nodeA": 100, "nodeB": 0},
     notes="The toleration has no effect, so it tolerates nodeA's gpu=a100:PreferNoSchedule; "
           "nodeB's spot taint is intolerable (raw 1, normalized 0); nodeC fails the filter on its "
           "NoSchedule taint and gets no score.")

# ===================================================== NodeAffinity (scoring)
G = "NodeAffinity"
F = UPSTREAM + "framework/plugins/nodeaffinity/node_affinity_test.go"
NA_ALLOC = {"cpu": "4", "memory": "8Gi"}


def expr(key, op, *values):
    e = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


def pref(weight, *exprs, fields=()):
    """A PreferredSchedulingTerm: matchExpressions `exprs`, matchFields `fields`."""
    p = {}
    if exprs:
        p["matchExpressions"] = list(exprs)
    if fields:
        p["matchFields"] = list(fields)
    return {"weight": weight, "preference": p}


def node_aff(preferred=None, required=None):
    na = {}
    if required is not None:
        na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": required}
    if preferred is not None:
        na["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
    return {"nodeAffinity": na}


# TestNodeAffinityPriority's labels and affinities
LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}
AFF1 = [pref(2, expr("foo", "In", "bar"))]
AFF2 = [pref(2, expr("foo", "In", "bar")),
        pref(4, expr("key", "In", "value")),
        pref(5, expr("foo", "In", "bar"), expr("key", "In", "value"), expr("az", "In", "az1"))]
AFF2_NOTES = ("node1 (foo=bar) matches the weight-2 term, node5 (all three labels) all three terms, "
              "2 + 4 + 5 = 11, node2 (key=value) the weight-4 term; normalized against 11: "
              "100*2/11 = 18, 100, 100*4/11 = 36.")

# Upstream's nodes carry labels only; here each also has room for the pod,
# and "filters": ["NodeAffinity"] runs the plugin's own filter, which passes
# every node of these rows (no pod here has a nodeSelector or required node
# affinity, and no args add one).
for sub, aff, labels, want, binds, added, notes in [
    ("all nodes are same priority as NodeAffinity is nil", None,
     {"node1": LABEL1, "node2": LABEL2, "node3": LABEL3},
     {"node1": 0, "node2": 0, "node3": 0}, {}, None,
     "The pod has no affinity: PreScore skips it (upstream's row calls Score directly, which sums no "
     "term), so every node scores 0 and the bind is a tie."),
    ("Skip is returned in PreScore when NodeAffinity is nil", None,
     {"node1": LABEL1}, {"node1": 0}, {"default/pod1": "node1"}, None,
     "Upstream checks that PreScore returns Skip and stops there. A skipped plugin scores 0 on each "
     "feasible node (expect.scores), and with the single node the pod binds without a scoring step."),
    ("no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' priority is zero",
     AFF1, {"node1": LABEL4, "node2": LABEL2, "node3": LABEL3},
     {"node1": 0, "node2": 0, "node3": 0}, {}, None,
     "No node has foo=bar: every sum is 0, and DefaultNormalizeScore leaves all-zero scores at 0."),
    ("only node1 matches the preferred scheduling requirements of pod", AFF1,
     {"node1": LABEL1, "node2": LABEL2, "node3": LABEL3},
     {"node1": 100, "node2": 0, "node3": 0}, {"default/pod1": "node1"}, None,
     "node1 sums 2, the highest, normalized to 100."),
    ("all nodes matches the preferred scheduling requirements of pod but with different priorities", AFF2,
     {"node1": LABEL1, "node5": LABEL5, "node2": LABEL2},
     {"node1": 18, "node5": 100, "node2": 36}, {"default/pod1": "node5"}, None,
     "Upstream's subtest name ends with a space. " + AFF2_NOTES),
    ("added affinity", None,
     {"node1": LABEL1, "node2": LABEL2},
     {"node1": 100, "node2": 0}, {"default/pod1": "node1"}, AFF1,
     "The pod has no affinity, but the plugin args add the weight-2 foo=bar term "
     "(pluginConfig NodeAffinity addedAffinity), so PreScore does not skip: node1 sums 2."),
    ("added affinity and pod has default affinity", AFF1,
     {"node1": LABEL1, "node2": LABEL2, "node3": LABEL5},
     {"node1": 40, "node2": 60, "node3": 100}, {"default/pod1": "node3"},
     [pref(3, expr("key", "In", "value"))],
     "The args' weight-3 key=value term adds to the pod's weight-2 foo=bar term: node1 2, node2 3, "
     "node3 (both labels) 5; normalized against 5: 40, 60, 100."),
    ("calculate the priorities correctly even if PreScore is not called", AFF2,
     {"node1": LABEL1, "node5": LABEL5, "node2": LABEL2},
     {"node1": 18, "node5": 100, "node2": 36}, {"default/pod1": "node5"}, None,
     "In the stored upstream version this row runs PreScore too (runPreScore: true), so it repeats the "
     "\"all nodes matches ...\" row. " + AFF2_NOTES),
]:
    case(G, sub, (f"TestNodeAffinityPriority/{sub}", F),
         [node(n, NA_ALLOC, labels=l) for n, l in labels.items()],
         [pod("pod1", ZERO, affinity=node_aff(preferred=aff) if aff is not None else None)],
         config=cfg([("NodeAffinity", 1)], added_affinity=node_aff(preferred=added)["nodeAffinity"]
                    if added is not None else None),
         filters=["NodeAffinity"], binds=binds, upstream=want, ties=not binds, notes=notes)

case(G, "operators NotIn, DoesNotExist, Gt and Lt, matchFields, and an empty preference",
     ("sift-derived: nodeaffinity PreferredSchedulingTerms.Score over labels.Requirement.Matches, "
      "matchFields on metadata.name, empty preferences dropped (component-helpers nodeaffinity.go)", F),
     [node("node-a", NA_ALLOC, labels={"zone": "z1", "spot": "true", "cpu-gen": "5"}),
      node("node-b", NA_ALLOC, labels={"zone": "z2", "cpu-gen": "10"}),
      node("node-c", NA_ALLOC, labels={"spot": "false", "cpu-gen": "v4"}),
      node("node-d", NA_ALLOC, labels={"zone": "z1", "cpu-gen": "4"}),
      node("node-e", NA_ALLOC, labels={"zone": "z1", "spot": "true", "cpu-gen": "2"})],
     [pod("pod1", ZERO, affinity=node_aff(preferred=[
         pref(1, expr("zone", "NotIn", "z1")),
         pref(2, expr("spot", "DoesNotExist")),
         pref(4, expr("cpu-gen", "Gt", "3"), expr("cpu-gen", "Lt", "12")),
         pref(8, fields=[expr("metadata.name", "In", "node-e")]),
         {"weight": 32, "preference": {}}]))],
     config=cfg([("NodeAffinity", 1)]), filters=["NodeAffinity"],
     binds={"default/pod1": "node-e"},
     upstream={"node-a": 50, "node-b": 87, "node-c": 12, "node-d": 75, "node-e": 100},
     notes="Terms: w1 zone NotIn [z1] (a missing zone matches), w2 spot DoesNotExist, w4 cpu-gen Gt 3 "
           "and Lt 12 (ANDed, compared as integers), w8 matchFields metadata.name In [node-e], w32 an "
           "empty preference, which NewPreferredSchedulingTerms drops: it matches no node (it would "
           "add 32 everywhere if read as match-all). Sums: node-a 4 (cpu-gen 5), node-b 1 + 2 + 4 = 7 "
           "(10 is between 3 and 12 as a number, not as a string), node-c 1 (no zone; spot=false "
           "exists; cpu-gen v4 is not an integer, so Gt fails), node-d 2 + 4 = 6, node-e 8 (its name; "
           "cpu-gen 2 fails Gt 3). Normalized against 8: 50, 87, 12, 75, 100.")

case(G, "the required affinity filter removes the best preferred node; normalization over the rest",
     ("sift-derived: nodeaffinity Filter (RequiredNodeAffinity) before Score; NormalizeScore over the "
      "feasible nodes only (schedule_one.go prioritizeNodes)", F),
     [node("node-a", NA_ALLOC, labels={"disk": "hdd", "gpu": "a100", "zone": "z1"}),
      node("node-b", NA_ALLOC, labels={"disk": "ssd", "zone": "z1"}),
      node("node-c", NA_ALLOC, labels={"disk": "nvme"}),
      node("node-d", NA_ALLOC, labels={"disk": "nvme", "zone": "z1"})],
     [pod("pod1", ZERO, affinity=node_aff(
         required=[{"matchExpressions": [expr("disk", "In", "ssd", "nvme")]}],
         preferred=[pref(10, expr("gpu", "Exists")), pref(4, expr("disk", "In", "nvme")),
                    pref(2, expr("zone", "In", "z1"))]))],
     config=cfg([("NodeAffinity", 1)]), filters=["NodeAffinity"],
     binds={"default/pod1": "node-d"},
     upstream={"node-b": 33, "node-c": 66, "node-d": 100},
     notes="The pod requires disk In [ssd, nvme]: node-a (hdd) fails the NodeAffinity filter and is "
           "not scored, although its preferred sum would be the highest (gpu 10 + zone 2 = 12). The "
           "feasible sums are node-b 2, node-c 4, node-d 4 + 2 = 6, normalized against 6: 33, 66, 100 "
           "(against 12 they would be 16, 33, 50).")

# ===================================================== ImageLocality (scoring)
G = "ImageLocality"
F = UPSTREAM + "framework/plugins/imagelocality/image_locality_test.go"
IL = cfg([("ImageLocality", 1)])
IL_ALLOC = {"cpu": "4", "memory": "8Gi"}
MB = model.MB  # upstream's mb: 1024 * 1024


def gcr(*mbs):
    """status.images entries gcr.io/<n>:latest of n MiB, as the test's node statuses."""
    return [([f"gcr.io/{n}:latest"], n * MB) for n in mbs]


# TestImageLocalityPriority's node statuses (names as upstream lists them,
# the repeated gcr.io/40:v1 included)
NODE_403002000 = [(["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40 * MB),
                  (["gcr.io/300:latest", "gcr.io/300:v1"], 300 * MB),
                  (["gcr.io/2000:latest"], 2000 * MB)]
NODE_25010 = [(["gcr.io/250:latest"], 250 * MB), (["gcr.io/10:latest", "gcr.io/10:v1"], 10 * MB)]
NODE_60040900 = gcr(600, 40, 900)
NODE_300600900 = gcr(300, 600, 900)
NODE_400030 = gcr(4000, 30)
NODE_203040 = gcr(20, 30, 40)
NO_IMAGES = None  # v1.NodeStatus{}: no status.images


# Upstream's nodes have a name and images only; here each also has room for
# the pod. "filters": [] runs no filter, as upstream's scoring test, and
# every node of the snapshot is scored. The pods' images have no tag, so
# each is looked up as gcr.io/<n>:latest. MiB below is upstream's mb.
for sub, images, init, nodes, want, binds, notes in [
    ("two images spread on two nodes, prefer the larger image one", ["gcr.io/40", "gcr.io/250"], None,
     {"node1": NODE_403002000, "node2": NODE_25010},
     {"node1": 0, "node2": 5}, {"default/pod1": "node2"},
     "Two containers: the range is 23 MiB to 2 * 1000 MiB. node1 has gcr.io/40 on 1 of 2 nodes: "
     "40 MiB * 1/2 = 20 MiB, below 23 MiB, so 0. node2 has gcr.io/250 on 1 of 2 nodes: 125 MiB, "
     "100 * (125 - 23) / (2000 - 23) = 5 (integer division, in bytes)."),
    ("two images on one node, prefer this node", ["gcr.io/40", "gcr.io/300"], None,
     {"node1": NODE_403002000, "node2": NODE_25010},
     {"node1": 7, "node2": 0}, {"default/pod1": "node1"},
     "node1 has both images, each on 1 of 2 nodes: 20 + 150 = 170 MiB, "
     "100 * (170 - 23) / (2000 - 23) = 7; node2 has neither."),
    ("if exceed limit, use limit", ["gcr.io/10", "gcr.io/4000"], None,
     {"node1": NODE_400030, "node2": NODE_25010},
     {"node1": 100, "node2": 0}, {"default/pod1": "node1"},
     "node1: gcr.io/4000 on 1 of 2 nodes, 2000 MiB, which reaches the 2 * 1000 MiB ceiling: 100. "
     "node2: gcr.io/10 on 1 of 2 nodes, 5 MiB, below the 23 MiB floor: 0."),
    ("if exceed limit, use limit (with node which has no images present)", ["gcr.io/10", "gcr.io/4000"], None,
     {"node1": NODE_400030, "node2": NODE_25010, "node3": NO_IMAGES},
     {"node1": 66, "node2": 0, "node3": 0}, {"default/pod1": "node1"},
     "A third node without images makes every spread n/3: node1 4000 MiB / 3 = 1333 MiB, "
     "100 * (1333.3 - 23) / (2000 - 23) = 66; node2 10 MiB / 3, below the floor."),
    ("pod with multiple large images, node2 is preferred", ["gcr.io/300", "gcr.io/600", "gcr.io/900"], None,
     {"node1": NODE_60040900, "node2": NODE_300600900, "node3": NO_IMAGES},
     {"node1": 32, "node2": 36, "node3": 0}, {"default/pod1": "node2"},
     "Three containers: the ceiling is 3000 MiB. gcr.io/600 and gcr.io/900 are on 2 of 3 nodes, "
     "gcr.io/300 on 1 of 3. node1: 600 * 2/3 + 900 * 2/3 = 1000 MiB, 100 * (1000 - 23) / (3000 - 23) "
     "= 32; node2: 300/3 + 400 + 600 = 1100 MiB, 36."),
    ("pod with multiple small images", ["gcr.io/30", "gcr.io/40"], None,
     {"node1": NODE_203040, "node2": NODE_400030},
     {"node1": 1, "node2": 0}, {"default/pod1": "node1"},
     "gcr.io/30 is on both nodes (spread 1), gcr.io/40 on node1 only (1/2): node1 30 + 20 = 50 MiB, "
     "100 * (50 - 23) / (2000 - 23) = 1; node2 30 MiB, 100 * 7 / 1977 = 0."),
    ("include InitContainers: two images spread on two nodes, prefer the larger image one",
     ["gcr.io/30"], ["gcr.io/300"],
     {"node1": NODE_403002000, "node2": NODE_203040},
     {"node1": 6, "node2": 0}, {"default/pod1": "node1"},
     "The init container counts: its image adds to the sum and to the ceiling (one container and one "
     "init container: 2 * 1000 MiB). node1 has gcr.io/300 (on 1 of 2 nodes): 150 MiB, "
     "100 * (150 - 23) / (2000 - 23) = 6; node2 has gcr.io/30 (1 of 2): 15 MiB, below the floor."),
]:
    case(G, sub, (f"TestImageLocalityPriority/{sub}", F),
         [node(n, IL_ALLOC, images=im) for n, im in nodes.items()],
         [pod("pod1", *[ZERO] * len(images), images=images, init_images=init)],
         config=IL, filters=[], binds=binds, upstream=want, notes=notes)

case(G, "a node the filter rejects still counts in the image's spread",
     ("sift-derived: ImageLocality Score divides by all the snapshot's nodes "
      "(SnapshotSharedLister().NodeInfos().List()), and the image's node count includes filtered-out nodes",
      UPSTREAM + "framework/plugins/imagelocality/image_locality.go"),
     [node("node-a", IL_ALLOC, images=[(["registry.example/app:1.0"], 600 * MB)]),
      node("node-b", IL_ALLOC, images=[(["registry.example/app:1.0"], 600 * MB)],
           taints=[{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]),
      node("node-c", IL_ALLOC, images=[])],
     [pod("pod1", ZERO, images=["registry.example/app:1.0"])],
     config=IL, filters=["TaintToleration"], binds={"default/pod1": "node-a"},
     upstream={"node-a": 38, "node-c": 0},
     notes="node-b fails the TaintToleration filter and is not scored, but it is still one of the 3 "
           "nodes of the snapshot and one of the 2 holding the image: node-a scores 600 MiB * 2/3 = "
           "400 MiB, 100 * (400 - 23) / (1000 - 23) = 38. Counting only the feasible nodes would give "
           "600 * 1/2 = 300 MiB, 28; the image's holders from all nodes over the feasible count, "
           "600 MiB, 59. node-c lists no image.")

TOOL_DIGEST = "registry.example/tool@sha256:" + hashlib.sha256(b"tool").hexdigest()
case(G, "image names: only the pod's references get :latest, a port is no tag, a digest is kept",
     ("sift-derived: imagelocality normalizedImageName applied to the pod's images only; the cache "
      "keys node images by the names status.images lists (backend/cache addNodeImageStates)",
      UPSTREAM + "framework/plugins/imagelocality/image_locality.go"),
     [node("node-a", IL_ALLOC, images=[(["registry.example:5000/app:latest", "registry.example:5000/app:v2"],
                                        500 * MB)]),
      node("node-b", IL_ALLOC, images=[(["registry.example:5000/app"], 500 * MB)]),
      node("node-c", IL_ALLOC, images=[([TOOL_DIGEST, "registry.example/tool:1.2"], 800 * MB)])],
     [pod("pod1", ZERO, ZERO, images=["registry.example:5000/app", TOOL_DIGEST])],
     config=IL, filters=[], binds={"default/pod1": "node-c"},
     upstream={"node-a": 7, "node-b": 0, "node-c": 12},
     notes="registry.example:5000/app has no tag (its last ':' comes before its last '/'), so it is "
           "looked up as registry.example:5000/app:latest, which node-a lists; node-b lists the bare "
           "name, which a node's own names never get normalized into, so node-b has no image of the "
           "pod. The digest reference has its ':' after the last '/' and is looked up as it is "
           "(node-c). Two containers: ceiling 2000 MiB. node-a 500 MiB * 1/3 = 166.7 MiB, "
           "100 * (166.7 - 23) / (2000 - 23) = 7; node-c 800 MiB * 1/3 = 266.7 MiB, 12. Normalizing "
           "node-b's name as well would put the image on 2 of 3 nodes and node-a and node-b at 15 "
           "each, above node-c.")

# ===================================================== InterPodAffinity (scoring)
G = "InterPodAffinity"
F = UPSTREAM + "framework/plugins/interpodaffinity/scoring_test.go"
IPA_ALLOC = {"cpu": "4", "memory": "8Gi"}


def ipa_cfg(**args):
    """InterPodAffinity alone, weight 1; args: InterPodAffinityArgs fields."""
    return cfg([("InterPodAffinity", 1)], ipa=args or None)


def namespace(name, labels):
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": dict(labels)}}


def sel(*exprs):
    return {"matchExpressions": list(exprs)}


def pterm(selector, key, namespaces=None, ns_selector=None):
    """A PodAffinityTerm: labelSelector `selector`, topologyKey `key`."""
    t = {"labelSelector": selector, "topologyKey": key}
    if namespaces is not None:
        t["namespaces"] = list(namespaces)
    if ns_selector is not None:
        t["namespaceSelector"] = ns_selector
    return t


def wterm(weight, term):
    return {"weight": weight, "podAffinityTerm": term}


def pod_aff(preferred=None, required=None, anti_preferred=None, anti_required=None):
    """spec.affinity with podAffinity / podAntiAffinity (only the lists given)."""
    out = {}
    for kind, pref_list, req_list in (("podAffinity", preferred, required),
                                      ("podAntiAffinity", anti_preferred, anti_required)):
        part = {}
        if req_list is not None:
            part["requiredDuringSchedulingIgnoredDuringExecution"] = list(req_list)
        if pref_list is not None:
            part["preferredDuringSchedulingIgnoredDuringExecution"] = list(pref_list)
        if part:
            out[kind] = part
    return out


def merge_aff(a, b):
    out = {k: dict(v) for k, v in a.items()}
    for k, v in b.items():
        out.setdefault(k, {}).update(v)
    return out


# scoring_test.go's fixtures. Upstream's namespaces are named
# subteam1.team1 etc.; a Namespace name is a DNS label, so the dots become
# dashes (as in the InterPodAffinity filter cases). Upstream's pods are in
# namespace "" (its default), here "default", also where a term lists "".
IPA_NAMESPACES = [namespace("subteam1-team1", {"team": "team1"}),
                  namespace("subteam2-team1", {"team": "team1"}),
                  namespace("subteam1-team2", {"team": "team2"}),
                  namespace("subteam2-team2", {"team": "team2"})]
RG_CHINA = {"region": "China"}
RG_INDIA = {"region": "India"}
AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}
RG_CHINA_AZ1 = {"region": "China", "az": "az1"}
S1 = {"security": "S1"}
S2 = {"security": "S2"}
TEAM1 = sel(expr("team", "In", "team1"))
STAY_S1_REGION = pod_aff(preferred=[wterm(5, pterm(sel(expr("security", "In", "S1")), "region"))])
STAY_S2_REGION = pod_aff(preferred=[wterm(6, pterm(sel(expr("security", "In", "S2")), "region"))])
AFFINITY3 = pod_aff(preferred=[
    wterm(8, pterm(sel(expr("security", "NotIn", "S1"), expr("security", "In", "S2")), "region")),
    wterm(2, pterm(sel(expr("security", "Exists"), expr("wrongkey", "DoesNotExist")), "region"))])
HARD_AFFINITY = pod_aff(required=[
    pterm(sel(expr("security", "In", "S1", "value2")), "region"),
    pterm(sel(expr("security", "Exists"), expr("wrongkey", "DoesNotExist")), "region")])
AWAY_S1_AZ = pod_aff(anti_preferred=[wterm(5, pterm(sel(expr("security", "In", "S1")), "az"))])
AWAY_S2_AZ = pod_aff(anti_preferred=[wterm(5, pterm(sel(expr("security", "In", "S2")), "az"))])
STAY_S1_REGION_AWAY_S2_AZ = merge_aff(
    pod_aff(preferred=[wterm(8, pterm(sel(expr("security", "In", "S1")), "region"))]), AWAY_S2_AZ)
NS_SEL_TERM = pterm(sel(expr("security", "In", "S1")), "region", namespaces=["subteam2-team2"], ns_selector=TEAM1)
AFFINITY_NS_SELECTOR = pod_aff(preferred=[wterm(5, NS_SEL_TERM)])
ANTI_AFFINITY_NS_SELECTOR = pod_aff(anti_preferred=[wterm(5, NS_SEL_TERM)])
P = "default"  # upstream's namespace ""


def placed(spec):
    """Bound pods from [(node, namespace, labels, affinity)], named p1, p2..."""
    return [pod(f"p{i}", ZERO, node=n, ns=ns, labels=l, affinity=a) for i, (n, ns, l, a) in enumerate(spec, 1)]


PA = "TestPreferredAffinity"
# Upstream's nodes carry labels only; here each also has room for the pod,
# and "filters": ["InterPodAffinity"] runs the plugin's own filter, which
# passes every node of these rows (no pod has required anti-affinity, the
# incoming pods have no required term; the model checks that).
for sub, incoming, pods_spec, nodes, want, binds, args, notes in [
    ("all nodes are same priority as Affinity is nil",
     (P, S1, None), [],
     {"node1": RG_CHINA, "node2": RG_INDIA, "node3": AZ1},
     {"node1": 0, "node2": 0, "node3": 0}, {}, {},
     "No affinity anywhere: PreScore skips (upstream wants Skip), 0 on every node, a tie."),
    ("Affinity: pod that matches topology key & pods in nodes will get high score comparing to others"
     "which doesn't match either pods in nodes or in topology key",
     (P, S1, STAY_S1_REGION),
     [("node1", P, S1, None), ("node2", P, S2, None), ("node3", P, S1, None)],
     {"node1": RG_CHINA, "node2": RG_INDIA, "node3": AZ1},
     {"node1": 100, "node2": 0, "node3": 0}, {"default/pod1": "node1"}, {},
     "Upstream's subtest name joins \"others\" and \"which\" without a space. The pod prefers (weight 5) "
     "security=S1 pods per region: node1's S1 pod gives region=China 5; node3's S1 pod is on a node "
     "without a region label and counts nowhere. Raw 5, 0, 0."),
    ("All the nodes that have the same topology key & label value with one of them has an existing pod "
     "that match the affinity rules, have the same score",
     (P, None, STAY_S1_REGION), [("node1", P, S1, None)],
     {"node1": RG_CHINA, "node2": RG_CHINA_AZ1, "node3": RG_INDIA},
     {"node1": 100, "node2": 100, "node3": 0}, {}, {},
     "region=China gets 5 from node1's pod, and node2 is in China too: raw 5, 5, 0, a tie."),
    ("Affinity: nodes in one region has more matching pods comparing to other region, so the region which "
     "has more matches will get high score",
     (P, S1, STAY_S2_REGION),
     [("node1", P, S2, None), ("node1", P, S2, None), ("node2", P, S2, None), ("node3", P, S2, None),
      ("node4", P, S2, None), ("node5", P, S2, None)],
     {"node1": RG_CHINA, "node2": RG_INDIA, "node3": RG_CHINA, "node4": RG_CHINA, "node5": RG_INDIA},
     {"node1": 100, "node2": 0, "node3": 100, "node4": 100, "node5": 0}, {}, {},
     "Weight 6 per S2 pod: China has 4 (24), India 2 (12); normalized from min 12 to max 24."),
    ("Affinity: different Label operators and values for pod affinity scheduling preference, including some "
     "match failures ",
     (P, S1, AFFINITY3),
     [("node1", P, S1, None), ("node2", P, S2, None), ("node3", P, S1, None)],
     {"node1": RG_CHINA, "node2": RG_INDIA, "node3": AZ1},
     {"node1": 20, "node2": 100, "node3": 0}, {"default/pod1": "node2"}, {},
     "Upstream's subtest name ends with a space. Terms: weight 8 for security NotIn [S1] and In [S2], "
     "weight 2 for security Exists and wrongkey DoesNotExist, both per region. node1's S1 pod matches the "
     "second only (China 2), node2's S2 pod both (India 10), node3 has no region. 100 * 2 / 10 = 20."),
    ("Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity "
     "symmetry",
     (P, S2, None),
     [("node1", P, S1, STAY_S1_REGION), ("node2", P, S2, STAY_S2_REGION)],
     {"node1": RG_CHINA, "node2": RG_INDIA, "node3": AZ1},
     {"node1": 0, "node2": 100, "node3": 0}, {"default/pod1": "node2"}, {},
     "The incoming S2 pod has no affinity; node2's pod prefers S2 pods in its region (weight 6), so "
     "India gets 6 (the placed pods' preferred terms, matched against the incoming pod)."),
    ("Affinity symmetry with namespace selector",
     ("subteam1-team1", S1, None),
     [("node1", P, S1, AFFINITY_NS_SELECTOR), ("node2", P, S2, STAY_S2_REGION)],
     {"node1": RG_CHINA, "node2": RG_INDIA, "node3": AZ1},
     {"node1": 100, "node2": 0, "node3": 0}, {"default/pod1": "node1"}, {},
     "node1's pod prefers S1 pods in namespaces subteam2-team2 or those labelled team=team1; the "
     "incoming pod's namespace subteam1-team1 has team=team1: China 5. node2's pod's term covers only "
     "its own namespace, default."),
    ("AntiAffinity symmetry with namespace selector",
     ("subteam1-team1", S1, None),
     [("node1", P, S1, ANTI_AFFINITY_NS_SELECTOR), ("node2", P, S2, STAY_S2_REGION)],
     {"node1": RG_CHINA, "node2": RG_INDIA, "node3": AZ1},
     {"node1": 0, "node2": 100, "node3": 100}, {}, {},
     "The same term as anti-affinity: China -5; node2 and node3 score 0 raw, the maximum."),
    ("Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
     (P, S1, None),
     [("node1", P, S1, HARD_AFFINITY), ("node2", P, S2, HARD_AFFINITY)],
     {"node1": RG_CHINA, "node2": RG_INDIA, "node3": AZ1},
     {"node1": 100, "node2": 100, "node3": 0}, {}, {},
     "Both placed pods require, per region, security In [S1, value2] and security Exists with wrongkey "
     "DoesNotExist; the incoming S1 pod matches both terms: hardPodAffinityWeight (1) each, China 2 and "
     "India 2."),
    ("Anti Affinity: pod that does not match existing pods in node will get high score ",
     (P, S1, AWAY_S1_AZ), [("node1", P, S1, None), ("node2", P, S2, None)],
     {"node1": AZ1, "node2": RG_CHINA},
     {"node1": 0, "node2": 100}, {"default/pod1": "node2"}, {},
     "Upstream's subtest name ends with a space. Weight-5 anti-affinity to S1 pods per az: az1 -5."),
    ("Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score "
     "comparing to others ",
     (P, S1, AWAY_S1_AZ), [("node1", P, S1, None), ("node2", P, S1, None)],
     {"node1": AZ1, "node2": RG_CHINA},
     {"node1": 0, "node2": 100}, {"default/pod1": "node2"}, {},
     "Upstream's subtest name ends with a space. node2's S1 pod is on a node without an az label: "
     "only az1 gets -5."),
    ("Anti Affinity: one node has more matching pods comparing to other node, so the node which has more "
     "unmatches will get high score",
     (P, S1, AWAY_S1_AZ), [("node1", P, S1, None), ("node1", P, S1, None), ("node2", P, S2, None)],
     {"node1": AZ1, "node2": RG_INDIA},
     {"node1": 0, "node2": 100}, {"default/pod1": "node2"}, {},
     "Two S1 pods on node1: az1 -10."),
    ("Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
     (P, S2, None), [("node1", P, S1, AWAY_S2_AZ), ("node2", P, S2, AWAY_S1_AZ)],
     {"node1": AZ1, "node2": AZ2},
     {"node1": 0, "node2": 100}, {"default/pod1": "node2"}, {},
     "node1's pod prefers to keep S2 pods out of its az: az1 -5; node2's pod avoids S1 pods, and the "
     "incoming pod is S2."),
    ("Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both "
     "pod affinity & anti affinity",
     (P, S1, STAY_S1_REGION_AWAY_S2_AZ), [("node1", P, S1, None), ("node2", P, S1, None)],
     {"node1": RG_CHINA, "node2": AZ1},
     {"node1": 100, "node2": 0}, {"default/pod1": "node1"}, {},
     "Affinity weight 8 to S1 per region: China 8 (node2 has no region); no S2 pod for the anti term."),
    ("Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and "
     "existing pods have the same labels",
     (P, S1, STAY_S1_REGION_AWAY_S2_AZ),
     [("node1", P, S1, None), ("node1", P, S1, None), ("node2", P, S1, None), ("node3", P, S1, None),
      ("node3", P, S1, None), ("node4", P, S1, None), ("node5", P, S1, None)],
     {"node1": RG_CHINA_AZ1, "node2": RG_INDIA, "node3": RG_CHINA, "node4": RG_CHINA, "node5": RG_INDIA},
     {"node1": 100, "node2": 0, "node3": 100, "node4": 100, "node5": 0}, {}, {},
     "China holds 5 S1 pods (40), India 2 (16); the anti term wants S2 pods and finds none."),
    ("Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution "
     "in both pod affinity & anti affinity & symmetry",
     (P, S1, STAY_S1_REGION_AWAY_S2_AZ),
     [("node1", P, S1, None), ("node2", P, S2, None), ("node3", P, None, STAY_S1_REGION_AWAY_S2_AZ),
      ("node4", P, None, AWAY_S1_AZ)],
     {"node1": RG_CHINA, "node2": AZ1, "node3": RG_INDIA, "node4": AZ2},
     {"node1": 100, "node2": 0, "node3": 100, "node4": 0}, {}, {},
     "Per upstream's comment: affinity 8 (China, node1's S1 pod), anti-affinity -5 (az1, node2's S2 pod), "
     "affinity symmetry 8 (India, node3's pod prefers S1 pods), anti-affinity symmetry -5 (az2, node4's "
     "pod avoids S1 pods): 8, -5, 8, -5."),
    ("Avoid panic when partial nodes in a topology don't have pods with affinity",
     (P, S1, None), [("node1", P, S1, None), ("node2", P, None, STAY_S1_REGION_AWAY_S2_AZ)],
     {"node1": RG_CHINA, "node2": RG_CHINA},
     {"node1": 0, "node2": 0}, {}, {},
     "kubernetes/kubernetes#82796. node2's pod prefers S1 pods per region: China 8, both nodes are in "
     "China, so both score 8 and normalize to 0 (max == min), a tie."),
    ("Affinity with pods matching NamespaceSelector",
     ("subteam1-team1", S1, AFFINITY_NS_SELECTOR),
     [("node1", "subteam1-team1", S1, None), ("node1", "subteam1-team1", S1, None),
      ("node1", "subteam1-team2", S1, None), ("node2", "subteam2-team1", S1, None)],
     {"node1": RG_CHINA, "node2": RG_INDIA},
     {"node1": 100, "node2": 0}, {"default/pod1": "node1"}, {},
     "The pod's term covers subteam2-team2 and the namespaces labelled team=team1 (subteam1-team1, "
     "subteam2-team1): China 2 * 5 = 10 (the subteam1-team2 pod does not count), India 5. Normalized from "
     "the minimum 5, not from 0: node2 gets 0 (it would get 50 from 0)."),
    ("Affinity with pods matching both NamespaceSelector and Namespaces fields",
     ("subteam1-team1", S1, AFFINITY_NS_SELECTOR),
     [("node1", "subteam1-team1", S1, None), ("node1", "subteam1-team1", S1, None),
      ("node1", "subteam2-team2", S1, None), ("node2", "subteam2-team1", S1, None)],
     {"node1": RG_CHINA, "node2": RG_INDIA},
     {"node1": 100, "node2": 0}, {"default/pod1": "node1"}, {},
     "The subteam2-team2 pod is listed by name: China 15, India 5."),
    ("Affinity with pods matching NamespaceSelector#01",
     ("subteam1-team1", S1, ANTI_AFFINITY_NS_SELECTOR),
     [("node1", "subteam1-team1", S1, None), ("node1", "subteam1-team1", S1, None),
      ("node1", "subteam1-team2", S1, None), ("node2", "subteam2-team1", S1, None)],
     {"node1": RG_CHINA, "node2": RG_INDIA},
     {"node1": 0, "node2": 100}, {"default/pod1": "node2"}, {},
     "Upstream repeats the subtest name for the anti-affinity row (Go reports it with #01): China -10, "
     "India -5."),
    ("Affinity with pods matching both NamespaceSelector and Namespaces fields#01",
     ("subteam1-team1", S1, ANTI_AFFINITY_NS_SELECTOR),
     [("node1", "subteam1-team1", S1, None), ("node1", "subteam1-team1", S1, None),
      ("node1", "subteam2-team2", S1, None), ("node2", "subteam2-team1", S1, None)],
     {"node1": RG_CHINA, "node2": RG_INDIA},
     {"node1": 0, "node2": 100}, {"default/pod1": "node2"}, {},
     "The anti-affinity row of the same name: China -15, India -5."),
    ("Ignore preferred terms of existing pods",
     (P, S2, None), [("node1", P, S1, STAY_S1_REGION_AWAY_S2_AZ), ("node2", P, S2, STAY_S2_REGION)],
     {"node1": RG_CHINA, "node2": RG_INDIA},
     {"node1": 0, "node2": 0}, {}, {"ignorePreferredTermsOfExistingPods": True},
     "With ignorePreferredTermsOfExistingPods and no preferred term of its own, PreScore skips the pod "
     "(upstream wants Skip): 0 on both nodes, a tie."),
    ("Do not ignore preferred terms of existing pods",
     (P, S2, None), [("node1", P, S1, STAY_S1_REGION_AWAY_S2_AZ), ("node2", P, S2, STAY_S2_REGION)],
     {"node1": RG_CHINA, "node2": RG_INDIA},
     {"node1": 0, "node2": 100}, {"default/pod1": "node2"}, {"ignorePreferredTermsOfExistingPods": False},
     "The same with the argument false (given explicitly here): node2's pod prefers S2 pods per region, "
     "India 6; node1's pod avoids S2 pods per az, but node1 has no az label."),
]:
    ns, labels, aff = incoming
    case(G, sub, (f"{PA}/{sub}", F),
         [node(n, IPA_ALLOC, labels=l) for n, l in nodes.items()],
         [pod("pod1", ZERO, ns=ns, labels=labels, affinity=aff)],
         pods=placed(pods_spec), namespaces=IPA_NAMESPACES,
         config=ipa_cfg(**args), filters=["InterPodAffinity"],
         binds={f"{ns}/pod1": n for n in binds.values()}, upstream=want, ties=not binds, notes=notes)

HARD_NS = pod_aff(required=[pterm(sel(expr("service", "In", "S1")), "region",
                                  namespaces=[P, "subteam2-team2"], ns_selector=TEAM1)])
for sub, ns, want, args, notes in [
    ("with default weight", P, {"node1": 100, "node2": 100, "node3": 0}, {},
     "The placed pods require service=S1 pods per region in namespaces default (upstream's \"\") and "
     "subteam2-team2 or labelled team=team1. The incoming pod is in default: the default "
     "hardPodAffinityWeight 1 for China and India each (upstream passes 1, "
     "v1.DefaultHardPodAffinitySymmetricWeight; here no argument, so the default is tested)."),
    ("with zero weight", P, {"node1": 0, "node2": 0, "node3": 0}, {"hardPodAffinityWeight": 0},
     "hardPodAffinityWeight 0: the required terms are not weighed, nothing adds up, PreScore skips "
     "(upstream wants Skip)."),
    ("with no matching namespace", "subteam1-team2", {"node1": 0, "node2": 0, "node3": 0}, {},
     "subteam1-team2 is neither listed nor labelled team=team1: PreScore skips (upstream wants Skip)."),
    ("with matching NamespaceSelector", "subteam1-team1", {"node1": 100, "node2": 100, "node3": 0}, {},
     "subteam1-team1 is labelled team=team1: the placed pods' namespaceSelector is read against the "
     "labels of the incoming pod's namespace."),
    ("with matching Namespaces", "subteam2-team2", {"node1": 100, "node2": 100, "node3": 0}, {},
     "subteam2-team2 is listed by name."),
]:
    case(G, sub, (f"TestPreferredAffinityWithHardPodAffinitySymmetricWeight/{sub}", F),
         [node("node1", IPA_ALLOC, labels=RG_CHINA), node("node2", IPA_ALLOC, labels=RG_INDIA),
          node("node3", IPA_ALLOC, labels=AZ1)],
         [pod("pod1", ZERO, ns=ns, labels={"service": "S1"})],
         pods=placed([("node1", P, None, HARD_NS), ("node2", P, None, HARD_NS)]),
         namespaces=IPA_NAMESPACES, config=ipa_cfg(**args), filters=["InterPodAffinity"],
         upstream=want, ties=True, notes="All ties. " + notes)

IPA_SRC = UPSTREAM + "framework/plugins/interpodaffinity/scoring.go"
ZONE = "topology.kubernetes.io/zone"


def zone_node(name, zone, **kw):
    return node(name, IPA_ALLOC, labels={ZONE: zone} if zone else None, **kw)


def app(name):
    return {"app": name}


case(G, "NormalizeScore is float64 arithmetic, truncated: 100 * (29 / 50) gives 57",
     ("sift-derived: InterPodAffinity NormalizeScore, float64(MaxNodeScore) * (float64(s - min) / "
      "float64(max - min)) then int64()", IPA_SRC),
     [zone_node("node-a", "z1"), zone_node("node-b", "z2"), zone_node("node-c", "z3")],
     [pod("pod1", ZERO, labels=app("api"), affinity=pod_aff(preferred=[
         wterm(50, pterm(sel(expr("app", "In", "db")), ZONE)),
         wterm(29, pterm(sel(expr("app", "In", "cache")), ZONE))]))],
     pods=placed([("node-a", P, app("db"), None), ("node-b", P, app("cache"), None)]),
     config=ipa_cfg(), filters=["InterPodAffinity"], binds={"default/pod1": "node-a"},
     upstream={"node-a": 100, "node-b": 57, "node-c": 0},
     notes="Raw 50, 29, 0. 29 / 50 is 0.58 in float64, times 100 is 57.99999999999999, truncated to 57; "
           "integer arithmetic (100 * 29 / 50) would give 58.")

case(G, "only anti-affinity: every score negative, normalized from the lowest to the highest",
     ("sift-derived: InterPodAffinity NormalizeScore takes min and max over the scores (master; older "
      "releases started both at 0)", IPA_SRC),
     [zone_node("node-a", "z1"), zone_node("node-b", "z2"), zone_node("node-c", "z3")],
     [pod("pod1", ZERO, labels=app("api"), affinity=pod_aff(anti_preferred=[
         wterm(10, pterm(sel(expr("app", "In", "batch")), ZONE))]))],
     pods=placed([("node-a", P, app("batch"), None)] * 3 + [("node-b", P, app("batch"), None)]
                 + [("node-c", P, app("batch"), None)] * 2),
     config=ipa_cfg(), filters=["InterPodAffinity"], binds={"default/pod1": "node-b"},
     upstream={"node-a": 0, "node-b": 100, "node-c": 50},
     notes="Weight-10 anti-affinity to batch pods per zone: z1 holds 3 (-30), z2 1 (-10), z3 2 (-20). "
           "From min -30 to max -10: 0, 100, 50. With min and max started at 0 (releases before the "
           "change) node-b would get 66 and node-c 33.")

case(G, "a node the filter rejects still counts for its zone; normalization over the feasible nodes",
     ("sift-derived: InterPodAffinity PreScore walks every node of the snapshot, feasible or not; "
      "NormalizeScore runs over the feasible nodes (schedule_one.go prioritizeNodes)", IPA_SRC),
     [zone_node("node-a", "z1", taints=[{"key": "dedicated", "value": "web", "effect": "NoSchedule"}]),
      zone_node("node-b", "z1"), zone_node("node-c", "z2"), zone_node("node-d", "z3")],
     [pod("pod1", ZERO, labels=app("api"), affinity=pod_aff(preferred=[
         wterm(10, pterm(sel(expr("app", "In", "web")), ZONE))]))],
     pods=placed([("node-a", P, app("web"), None)] * 2 + [("node-c", P, app("web"), None)]),
     config=ipa_cfg(), filters=["TaintToleration", "InterPodAffinity"], binds={"default/pod1": "node-b"},
     upstream={"node-b": 100, "node-c": 50, "node-d": 0},
     notes="node-a fails TaintToleration and is not scored, but its two web pods count for z1: node-b "
           "scores 20 raw, node-c 10, node-d 0. Counting only the feasible nodes' pods would give node-b "
           "0 and put node-c first.")

case(G, "hardPodAffinityWeight, per-pod counts, and the placed pods' preferred terms on a hostname key",
     ("sift-derived: InterPodAffinity processExistingPod; InterPodAffinityArgs.hardPodAffinityWeight",
      IPA_SRC),
     [zone_node("node-a", "z1"), zone_node("node-b", "z2"), zone_node("node-c", "z3")],
     [pod("pod1", ZERO, labels=app("api"), affinity=pod_aff(preferred=[
         wterm(5, pterm(sel(expr("app", "In", "cache")), ZONE))]))],
     pods=placed([("node-a", P, app("frontend"), pod_aff(required=[
                      pterm(sel(expr("app", "In", "api")), ZONE)]))] * 2
                 + [("node-b", P, app("cache"), None),
                    ("node-b", P, app("noisy"), pod_aff(anti_preferred=[
                        wterm(3, pterm(sel(expr("app", "In", "api")), ZONE))])),
                    ("node-c", P, app("batch"), pod_aff(preferred=[
                        wterm(7, pterm(sel(expr("app", "In", "api")), "kubernetes.io/hostname"))]))]),
     config=ipa_cfg(hardPodAffinityWeight=10), filters=["InterPodAffinity"],
     binds={"default/pod1": "node-a"},
     upstream={"node-a": 100, "node-b": 0, "node-c": 27},
     notes="z1: two frontend pods each require api pods in their zone, hardPodAffinityWeight 10 each: 20. "
           "z2: the pod's own weight-5 term for the cache pod, minus the noisy pod's weight-3 "
           "anti-affinity to api pods: 2. node-c's batch pod prefers api pods on its own host (weight 7 on "
           "kubernetes.io/hostname=node-c). Raw 20, 2, 7; 100 * 5 / 18 = 27. With the default weight 1, "
           "z1 would have 2 and node-c would win.")

case(G, "ignorePreferredTermsOfExistingPods keeps the placed pods' terms for a pod with preferred terms",
     ("sift-derived: InterPodAffinity PreScore skips only when the pod has no preferred term of its own",
      IPA_SRC),
     [zone_node("node-a", "z1"), zone_node("node-b", "z2"), zone_node("node-c", "z3")],
     [pod("pod1", ZERO, labels=app("api"), affinity=pod_aff(preferred=[
         wterm(4, pterm(sel(expr("app", "In", "db")), ZONE))]))],
     pods=placed([("node-a", P, app("web"), pod_aff(preferred=[
                      wterm(10, pterm(sel(expr("app", "In", "api")), ZONE))])),
                  ("node-b", P, app("db"), None)]),
     config=ipa_cfg(ignorePreferredTermsOfExistingPods=True), filters=["InterPodAffinity"],
     binds={"default/pod1": "node-a"},
     upstream={"node-a": 100, "node-b": 40, "node-c": 0},
     notes="The pod prefers db pods (weight 4, z2) and so is not skipped; the web pod's own preference for "
           "api pods (weight 10, z1) still counts although the argument asks to ignore existing pods' "
           "preferred terms: that only applies to pods without preferred terms. Raw 10, 4, 0.")

case(G, "ignorePreferredTermsOfExistingPods also drops the placed pods' required affinity",
     ("sift-derived: InterPodAffinity PreScore returns Skip before weighing any term when the pod has no "
      "preferred term and the argument is set", IPA_SRC),
     [zone_node("node-a", "z1"), zone_node("node-b", "z2")],
     [pod("pod1", ZERO, labels=app("api"))],
     pods=placed([("node-a", P, app("frontend"), pod_aff(required=[
         pterm(sel(expr("app", "In", "api")), ZONE)]))]),
     config=ipa_cfg(ignorePreferredTermsOfExistingPods=True), filters=["InterPodAffinity"],
     upstream={"node-a": 0, "node-b": 0}, ties=True,
     notes="The frontend pod requires api pods in its zone, which hardPodAffinityWeight would reward on "
           "node-a; but the incoming pod has no preferred term, so with the argument set PreScore skips "
           "it altogether: 0 on both nodes, a tie.")

case(G, "pods placed by earlier cycles count: three replicas spread over the zones",
     ("sift-derived: InterPodAffinity PreScore reads the snapshot, which holds the pods assumed by "
      "earlier cycles (schedule_one.go assume)", IPA_SRC),
     [zone_node("node-a", "z1"), zone_node("node-b", "z2"), zone_node("node-c", "z3")],
     [pod(f"web-{i}", ZERO, labels=app("web"), affinity=pod_aff(
         preferred=[wterm(2, pterm(sel(expr("app", "In", "db")), ZONE)),
                    wterm(5, pterm(sel(expr("app", "In", "cache")), ZONE))],
         anti_preferred=[wterm(10, pterm(sel(expr("app", "In", "web")), ZONE))])) for i in (1, 2, 3)],
     pods=placed([("node-b", P, app("db"), None), ("node-c", P, app("cache"), None)]),
     config=ipa_cfg(), filters=["InterPodAffinity"],
     binds={"default/web-1": "node-c", "default/web-2": "node-b", "default/web-3": "node-a"},
     upstream={"node-a": 0, "node-b": 40, "node-c": 100},
     notes="Each web replica prefers db pods (2) and cache pods (5) in its zone and avoids other web pods "
           "(-10). web-1: raw 0, 2, 5 -> node-c. web-2 sees web-1 in z3 twice over: web-2's own "
           "anti-affinity (-10) and web-1's, which the incoming web-2 matches (-10): 0, 2, -15 -> node-b "
           "(node-a 100 * 15 / 17 = 88). web-3: z2 2 - 20, z3 5 - 20: 0, -18, -15 -> node-a (node-c 16).")

case(G, "namespaces: a {} namespaceSelector covers every namespace, a list only its names, neither the pod's own",
     ("sift-derived: AffinityTerm namespaces (getNamespacesFromPodAffinityTerm) and "
      "mergeAffinityTermNamespacesIfNotEmpty for the incoming pod's preferred terms", IPA_SRC),
     [zone_node("node-a", "z1"), zone_node("node-b", "z2"), zone_node("node-c", "z3")],
     [pod("pod1", ZERO, ns="shop", labels=app("api"), affinity=pod_aff(preferred=[
         wterm(4, pterm(sel(expr("app", "In", "web")), ZONE, ns_selector={})),
         wterm(2, pterm(sel(expr("app", "In", "db")), ZONE, namespaces=["data"])),
         wterm(1, pterm(sel(expr("app", "In", "cache")), ZONE))]))],
     pods=placed([("node-a", "other", app("web"), None), ("node-a", "other", app("cache"), None),
                  ("node-b", "data", app("db"), None), ("node-b", "shop", app("db"), None),
                  ("node-c", "shop", app("cache"), None)]),
     namespaces=[namespace("shop", {"team": "shop"}), namespace("data", {"team": "data"})],
     config=ipa_cfg(), filters=["InterPodAffinity"], binds={"shop/pod1": "node-a"},
     upstream={"node-a": 100, "node-b": 33, "node-c": 0},
     notes="Weight 4 for web pods in any namespace ({} selector): the web pod in namespace other, which has "
           "no Namespace object, counts (z1 4). Weight 2 for db pods in namespace data only (the listed "
           "names replace the pod's own): z2 2, the db pod in shop does not count. Weight 1 for cache pods "
           "in the pod's own namespace shop: z3 1, the cache pod in other does not count. Raw 4, 2, 1; "
           "100 * 1 / 3 = 33.")

# ===================================================== PodTopologySpread (scoring)
G = "PodTopologySpread"
F = UPSTREAM + "framework/plugins/podtopologyspread/scoring_test.go"
PTS_SRC = UPSTREAM + "framework/plugins/podtopologyspread/scoring.go"
PTS = cfg([("PodTopologySpread", 1)])
PTS_ALLOC = {"cpu": "4", "memory": "8Gi"}
HOSTNAME = "kubernetes.io/hostname"
FOO_SEL = {"matchExpressions": [expr("foo", "Exists")]}  # the test package's fooSelector
BAR_SEL = {"matchExpressions": [expr("bar", "Exists")]}  # barSelector
NO_SEL = None  # SpreadConstraint(..., nil, ...): labelSelector left out
# filtering_test.go's `taints`, shared by the package's tests
UNSCHED_TAINT = [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]
FOO = {"foo": ""}
BAR = {"bar": ""}
FOOBAR = {"foo": "", "bar": ""}


def soft(skew, key, selector, min_domains=None, affinity_policy=None, taints_policy=None,
         match_label_keys=None, when="ScheduleAnyway"):
    """A topologySpreadConstraint (st.PodWrapper.SpreadConstraint's
    arguments); selector None leaves labelSelector out."""
    c = {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": when}
    if selector is not None:
        c["labelSelector"] = selector
    if min_domains is not None:
        c["minDomains"] = min_domains
    if affinity_policy is not None:
        c["nodeAffinityPolicy"] = affinity_policy
    if taints_policy is not None:
        c["nodeTaintsPolicy"] = taints_policy
    if match_label_keys is not None:
        c["matchLabelKeys"] = list(match_label_keys)
    return c


def pts_node(name, labels, failed=False, taints=None):
    """An upstream node given exactly by its labels: kubernetes.io/hostname
    only when the row sets it (node() would add it), plus node()'s os/arch
    labels, which no row's keys read. failed: one of the row's failedNodes
    (in the snapshot, not passed to PreScore), here cordoned and removed by
    the NodeUnschedulable filter."""
    n = node(name, PTS_ALLOC, labels=labels, taints=taints, unschedulable=failed,
             hostname=HOSTNAME in labels)
    assert n["metadata"]["labels"].get(HOSTNAME, name) == name, name
    return n


def host(name, **more):
    return dict({HOSTNAME: name}, **more)


TERMINATING = "terminating"


def bound(spec):
    """Existing pods from [(name, node, labels[, namespace][, TERMINATING])]:
    bound pods with one zero-request container; TERMINATING sets
    metadata.deletionTimestamp (st.PodWrapper.Terminating), with the
    deletionGracePeriodSeconds the API server records along with it."""
    out = []
    for name, n, labels, *rest in spec:
        ns = next((r for r in rest if r != TERMINATING), "default")
        p = pod(name, ZERO, node=n, labels=labels, ns=ns)
        if TERMINATING in rest:
            p["metadata"]["deletionTimestamp"] = "2025-01-01T01:00:00Z"
            p["metadata"]["deletionGracePeriodSeconds"] = 30
        out.append(p)
    return out


def spread_pod(labels, *constraints, **kw):
    return pod("p", ZERO, labels=labels, spread=list(constraints), **kw)


# TestPodTopologySpreadScore, read in jpbetz/kubernetes@2b17d985f747 (a fork
# of master that has the fwk. / tf.BuildNodeInfos / TopologyValueToPodCounts
# version; kubernetes/kubernetes's own stored copy, 38f68d59a73f, is the
# TopologyPairToPodCounts one just before it; compared there, the first
# eleven rows, the last three and the test's loop agree in names, objects and
# expected scores; the rows between were read in the fork only). The test
# builds the plugin with
# DefaultingType: SystemDefaulting (the v1 default, so the cases carry no
# pluginConfig); for a pod with constraints of its own that only sets
# requireAllTopologies, which is true either way. Each row sets the plugin's
# NodeInclusionPolicy and MatchLabelKeys switches itself (off unless the row
# turns them on); in a v1.36 scheduler both are on
# (NodeInclusionPolicyInPodTopologySpread GA and locked since v1.33,
# MatchLabelKeysInPodTopologySpread beta and on by default since v1.27), as
# in sift. The rows that leave them off do not depend on them (no
# nodeSelector, affinity, policy or matchLabelKeys), except "matchLabelKeys
# ignored when feature gate disabled", which is not ported as is: see the
# derived case after the table.
#
# Upstream scores a row's `nodes` and puts `failedNodes` only in the
# snapshot; here every node runs no filter (`filters: []`, as the other
# scoring ports) except where a row has failedNodes: those nodes are
# cordoned and the case runs NodeUnschedulable alone, which removes exactly
# them. Existing pods are bound pods (no containers upstream: one container
# with explicit zero requests here); the incoming pod is "p" with zero
# requests. Node labels are upstream's; node() adds kubernetes.io/os and
# kubernetes.io/arch, which no constraint reads, and kubernetes.io/hostname
# only where upstream has it.
#
# "system defaulting, nodes don't have zone, pods match service" needs a
# Service: it is ported with the default-constraint cases further down.
# Not ported as is (the gate is on here; derived case below):
#   "matchLabelKeys ignored when feature gate disabled"
PTS_ROWS = [
    # (sub, pod, existing pods, nodes, upstream scores, notes)
    ("one constraint on node, no existing pods",
     spread_pod(FOO, soft(1, HOSTNAME, FOO_SEL)), [],
     [pts_node("node-a", host("node-a")), pts_node("node-b", host("node-b"))],
     {"node-a": 100, "node-b": 100},
     "Every count is 0: the highest raw score is 0, so every node gets 100 (a tie)."),
    ("one constraint on node, only one node is candidate",
     spread_pod(FOO, soft(1, HOSTNAME, FOO_SEL)),
     [("p-a1", "node-a", FOO), ("p-a2", "node-a", FOO), ("p-b1", "node-b", FOO)],
     [pts_node("node-a", host("node-a")), pts_node("node-b", host("node-b"), failed=True)],
     {"node-a": 100},
     "node-b is a failed node (cordoned here). node-a alone is feasible: raw 2 * ln 3 = 2.2 -> 2, which "
     "is both min and max: 100 * (2 + 2 - 2) / 2 = 100. With one feasible node the pod binds unscored."),
    ("one constraint on node, all nodes have the same number of matching pods",
     spread_pod(FOO, soft(1, HOSTNAME, FOO_SEL)),
     [("p-a1", "node-a", FOO), ("p-b1", "node-b", FOO)],
     [pts_node("node-a", host("node-a")), pts_node("node-b", host("node-b"))],
     {"node-a": 100, "node-b": 100},
     "Both raw 1 * ln 4 = 1.39 -> 1: min = max, 100 each (a tie)."),
    ("one constraint on node, all 4 nodes are candidates",
     spread_pod(FOO, soft(1, HOSTNAME, FOO_SEL)),
     [("p-a1", "node-a", FOO), ("p-a2", "node-a", FOO), ("p-b1", "node-b", FOO),
      ("p-d1", "node-d", FOO), ("p-d2", "node-d", FOO), ("p-d3", "node-d", FOO)],
     [pts_node(n, host(n)) for n in ("node-a", "node-b", "node-c", "node-d")],
     {"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0},
     "Counts 2/1/0/3, weight ln 6 = 1.79: raw 4, 2, 0, 5; 100 * (5 + 0 - s) / 5."),
    ("one constraint on node, null selector",
     spread_pod(FOO, soft(1, HOSTNAME, NO_SEL)),
     [("p-a1", "node-a", FOO), ("p-a2", "node-a", FOO), ("p-b1", "node-b", FOO),
      ("p-d1", "node-d", FOO), ("p-d2", "node-d", FOO), ("p-d3", "node-d", FOO)],
     [pts_node(n, host(n)) for n in ("node-a", "node-b", "node-c", "node-d")],
     {"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100},
     "No labelSelector: LabelSelectorAsSelector(nil) selects nothing, every count is 0, 100 each (a tie)."),
    ("one constraint on node, all 4 nodes are candidates, maxSkew=2",
     spread_pod(FOO, soft(2, HOSTNAME, FOO_SEL)),
     [("p-a1", "node-a", FOO), ("p-a2", "node-a", FOO), ("p-b1", "node-b", FOO),
      ("p-d1", "node-d", FOO), ("p-d2", "node-d", FOO), ("p-d3", "node-d", FOO)],
     [pts_node(n, host(n)) for n in ("node-a", "node-b", "node-c", "node-d")],
     {"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16},
     "As the maxSkew=1 row plus maxSkew - 1 = 1 on every node: raw 5, 3, 1, 6; 100 * (7 - s) / 6."),
    ("one constraint on node, all 4 nodes are candidates, maxSkew=3",
     spread_pod(FOO, soft(3, HOSTNAME, FOO_SEL)),
     [(f"p-{n}{i}", f"node-{n}", FOO) for n, k in (("a", 4), ("b", 3), ("c", 2), ("d", 1))
      for i in range(1, k + 1)],
     [pts_node(n, host(n)) for n in ("node-a", "node-b", "node-c", "node-d")],
     {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
     "Counts 4/3/2/1 times ln 6 plus 2: raw 9, 7, 6, 4; 100 * (13 - s) / 9."),
    ("one constraint on node, 3 out of 4 nodes are candidates",
     spread_pod(FOO, soft(1, HOSTNAME, FOO_SEL)),
     [("p-a1", "node-a", FOO), ("p-a2", "node-a", FOO), ("p-a3", "node-a", FOO), ("p-a4", "node-a", FOO),
      ("p-b1", "node-b", FOO), ("p-b2", "node-b", FOO), ("p-x1", "node-x", FOO),
      ("p-y1", "node-y", FOO), ("p-y2", "node-y", FOO), ("p-y3", "node-y", FOO)],
     [pts_node("node-a", host("node-a")), pts_node("node-b", host("node-b")),
      pts_node("node-x", host("node-x")), pts_node("node-y", host("node-y"), failed=True)],
     {"node-a": 33, "node-b": 83, "node-x": 100},
     "node-y is a failed node. Weight ln(3 + 2) = 1.61: raw 6, 3, 2; 100 * (8 - s) / 6."),
    ("one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
     spread_pod(FOO, soft(1, HOSTNAME, FOO_SEL)),
     [("p-a1", "node-a", FOO), ("p-a2", "node-a", FOO), ("p-a3", "node-a", FOO), ("p-a4", "node-a", FOO),
      ("p-b1", "node-b", FOO), ("p-b2", "node-b", FOO), ("p-x1", "node-x", FOO),
      ("p-y1", "node-y", FOO), ("p-y2", "node-y", FOO), ("p-y3", "node-y", FOO)],
     [pts_node("node-a", host("node-a")), pts_node("node-b", {"n": "node-b"}),
      pts_node("node-x", host("node-x")), pts_node("node-y", host("node-y"), failed=True)],
     {"node-a": 16, "node-b": 0, "node-x": 100},
     "node-b has no kubernetes.io/hostname label (only n=node-b; the case leaves the label out): it is "
     "ignored, scores 0 and leaves the normalization. Weight ln(2 + 2): raw node-a 6, node-x 1; "
     "100 * (7 - s) / 6. With the label node-b would count and node-a get 33."),
    ("one constraint on zone, 3 out of 4 nodes are candidates",
     spread_pod(FOO, soft(1, "zone", FOO_SEL)),
     [("p-a1", "node-a", FOO), ("p-a2", "node-a", FOO), ("p-a3", "node-a", FOO), ("p-a4", "node-a", FOO),
      ("p-b1", "node-b", FOO), ("p-b2", "node-b", FOO), ("p-x1", "node-x", FOO),
      ("p-y1", "node-y", FOO), ("p-y2", "node-y", FOO), ("p-y3", "node-y", FOO)],
     [pts_node("node-a", host("node-a", zone="zone1")), pts_node("node-b", host("node-b", zone="zone1")),
      pts_node("node-x", host("node-x", zone="zone2")),
      pts_node("node-y", host("node-y", zone="zone2"), failed=True)],
     {"node-a": 75, "node-b": 75, "node-x": 100},
     "The failed node-y's pods count for zone2: zone1 6, zone2 4; weight ln 4: raw 8, 8, 6; "
     "100 * (14 - s) / 8."),
    ("two Constraints on zone and node, 2 out of 4 nodes are candidates",
     spread_pod(FOO, soft(1, "zone", FOO_SEL), soft(1, HOSTNAME, FOO_SEL)),
     [("p-a1", "node-a", FOO), ("p-a2", "node-a", FOO), ("p-b1", "node-b", FOO),
      ("p-x1", "node-x", FOO), ("p-x2", "node-x", FOO),
      ("p-y1", "node-y", FOO), ("p-y2", "node-y", FOO), ("p-y3", "node-y", FOO), ("p-y4", "node-y", FOO)],
     [pts_node("node-a", host("node-a", zone="zone1")), pts_node("node-x", host("node-x", zone="zone2")),
      pts_node("node-b", host("node-b", zone="zone1"), failed=True),
      pts_node("node-y", host("node-y", zone="zone2"), failed=True)],
     {"node-a": 100, "node-x": 63},
     "zone1 3 and zone2 6 (the failed nodes count), hosts 2 and 2, both weights ln 4: raw 7 and 11; "
     "100 * (18 - s) / 11."),
    ("two Constraints on zone, 2 out of 4 nodes are candidates",
     spread_pod(FOOBAR, soft(1, "zone", FOO_SEL), soft(1, "zone", BAR_SEL)),
     [("p-a1", "node-a", FOOBAR), ("p-a2", "node-a", FOO), ("p-b1", "node-b", FOOBAR),
      ("p-y1", "node-y", FOO), ("p-y2", "node-y", FOOBAR), ("p-y3", "node-y", FOO)],
     [pts_node("node-a", {"zone": "zone1"}), pts_node("node-x", {"zone": "zone2"}),
      pts_node("node-b", {"zone": "zone1"}, failed=True), pts_node("node-y", {"zone": "zone2"}, failed=True)],
     {"node-a": 85, "node-x": 100},
     "Upstream's nodes have only a zone label (here no hostname label either). foo: zone1 3, zone2 3; "
     "bar: zone1 2, zone2 1; weight ln 4: raw 7 and 6; 100 * (13 - s) / 7."),
    ("two Constraints on zone and node, with different labelSelectors",
     spread_pod(FOOBAR, soft(1, "zone", FOO_SEL), soft(1, HOSTNAME, BAR_SEL)),
     [("p-a1", "node-a", FOO), ("p-b1", "node-b", FOOBAR), ("p-y1", "node-y", FOO), ("p-y2", "node-y", BAR)],
     [pts_node("node-a", host("node-a", zone="zone1")), pts_node("node-b", host("node-b", zone="zone1")),
      pts_node("node-x", host("node-x", zone="zone2")), pts_node("node-y", host("node-y", zone="zone2"))],
     {"node-a": 60, "node-b": 20, "node-x": 100, "node-y": 60},
     "foo per zone 2/2/1/1 (weight ln 4), bar per host 0/1/0/1 (weight ln 6): raw 3, 5, 1, 3; "
     "100 * (6 - s) / 5."),
    ("two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
     spread_pod(FOOBAR, soft(1, "zone", FOO_SEL), soft(1, HOSTNAME, BAR_SEL)),
     [("p-b1", "node-b", BAR), ("p-x1", "node-x", FOO), ("p-y1", "node-y", FOOBAR)],
     [pts_node("node-a", host("node-a", zone="zone1")), pts_node("node-b", host("node-b", zone="zone1")),
      pts_node("node-x", host("node-x", zone="zone2")), pts_node("node-y", host("node-y", zone="zone2"))],
     {"node-a": 100, "node-b": 60, "node-x": 40, "node-y": 0},
     "foo per zone 0/0/2/2, bar per host 0/1/0/1: raw 0, 2, 3, 5; 100 * (5 - s) / 5."),
    ("two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
     spread_pod(FOOBAR, soft(1, "zone", FOO_SEL), soft(1, HOSTNAME, BAR_SEL)),
     [("p-a1", "node-a", FOO), ("p-b1", "node-b", FOOBAR), ("p-y1", "node-y", FOO), ("p-y2", "node-y", BAR)],
     [pts_node("node-a", host("node-a", zone="zone1")), pts_node("node-b", host("node-b", zone="zone1")),
      pts_node("node-x", host("node-x", zone="zone2")),
      pts_node("node-y", host("node-y", zone="zone2"), failed=True)],
     {"node-a": 50, "node-b": 25, "node-x": 100},
     "foo per zone 2/2/1 (node-y's pod counts for zone2), bar per host 0/1/0 (weight ln 5): raw 3, 4, 1; "
     "100 * (5 - s) / 4."),
    ("existing pods in a different namespace do not count",
     spread_pod(FOO, soft(1, HOSTNAME, FOO_SEL)),
     [("p-a1", "node-a", FOO, "ns1"), ("p-a2", "node-a", FOO), ("p-b1", "node-b", FOO), ("p-b2", "node-b", FOO)],
     [pts_node("node-a", host("node-a")), pts_node("node-b", host("node-b"))],
     {"node-a": 100, "node-b": 33},
     "p-a1 is in namespace ns1, the incoming pod in default: counts 1 and 2, weight ln 4: raw 1 and 3; "
     "100 * (4 - s) / 3."),
    ("terminating Pods should be excluded",
     spread_pod(FOO, soft(1, HOSTNAME, FOO_SEL)),
     [("p-a", "node-a", FOO, TERMINATING), ("p-b", "node-b", FOO)],
     [pts_node("node-a", host("node-a")), pts_node("node-b", host("node-b"))],
     {"node-a": 100, "node-b": 0},
     "p-a has metadata.deletionTimestamp (and deletionGracePeriodSeconds 30): not counted. Raw 0 and 1."),
    ("minDomains has no effect when ScheduleAnyway",
     spread_pod(FOO, soft(2, "node", FOO_SEL, min_domains=10)),
     [("p-a1", "node-a", FOO), ("p-a2", "node-a", FOO), ("p-b1", "node-b", FOO), ("p-b2", "node-b", FOO),
      ("p-c1", "node-c", FOO)],
     [pts_node(n, {"node": n}) for n in ("node-a", "node-b", "node-c")],
     {"node-a": 75, "node-b": 75, "node-c": 100},
     "Upstream calls the row artificial: API validation rejects minDomains with ScheduleAnyway; the case "
     "carries it as upstream does. Key `node` (not the hostname label), weight ln 5, plus 1 for maxSkew 2: "
     "raw 4, 4, 3; 100 * (7 - s) / 4."),
    ("NodeAffinityPolicy honoed with labelSelectors",
     spread_pod(FOO, soft(1, "node", FOO_SEL), node_selector={"foo": ""}),
     [("p-a1", "node-a", FOO), ("p-a2", "node-a", FOO), ("p-b1", "node-b", FOO), ("p-c1", "node-c", FOO)],
     [pts_node("node-a", {"node": "node-a", "foo": ""}), pts_node("node-b", {"node": "node-b", "foo": ""}),
      pts_node("node-c", {"node": "node-c"})],
     {"node-a": 0, "node-b": 33, "node-c": 100},
     "Upstream's subtest name says \"honoed\". No filter runs, so node-c, which the pod's nodeSelector "
     "rejects, is scored; with nodeAffinityPolicy Honor (the default) its pod is not counted. Weight ln 5: "
     "raw 3, 2, 0; 100 * (3 - s) / 3."),
    ("NodeAffinityPolicy ignored with labelSelectors",
     spread_pod(FOO, soft(1, "node", FOO_SEL, affinity_policy="Ignore"), node_selector={"foo": ""}),
     [("p-a1", "node-a", FOO), ("p-a2", "node-a", FOO), ("p-b1", "node-b", FOO), ("p-c1", "node-c", FOO)],
     [pts_node("node-a", {"node": "node-a", "foo": ""}), pts_node("node-b", {"node": "node-b", "foo": ""}),
      pts_node("node-c", {"node": "node-c"})],
     {"node-a": 66, "node-b": 100, "node-c": 100},
     "nodeAffinityPolicy Ignore: node-c's pod counts. Raw 3, 2, 2; 100 * (5 - s) / 3 (node-b and node-c tie)."),
    ("NodeAffinityPolicy honoed with nodeAffinity",
     spread_pod(FOO, soft(1, "node", FOO_SEL),
                affinity=node_aff(required=[{"matchExpressions": [expr("foo", "In", "")]}])),
     [("p-a1", "node-a", FOO), ("p-a2", "node-a", FOO), ("p-b1", "node-b", FOO), ("p-c1", "node-c", FOO)],
     [pts_node("node-a", {"node": "node-a", "foo": ""}), pts_node("node-b", {"node": "node-b", "foo": ""}),
      pts_node("node-c", {"node": "node-c"})],
     {"node-a": 0, "node-b": 33, "node-c": 100},
     "Upstream's subtest name says \"honoed\". As the nodeSelector row, with required node affinity "
     "foo In [\"\"]."),
    ("NodeAffinityPolicy ignored with nodeAffinity",
     spread_pod(FOO, soft(1, "node", FOO_SEL, affinity_policy="Ignore"),
                affinity=node_aff(required=[{"matchExpressions": [expr("foo", "In", "")]}])),
     [("p-a1", "node-a", FOO), ("p-a2", "node-a", FOO), ("p-b1", "node-b", FOO), ("p-c1", "node-c", FOO)],
     [pts_node("node-a", {"node": "node-a", "foo": ""}), pts_node("node-b", {"node": "node-b", "foo": ""}),
      pts_node("node-c", {"node": "node-c"})],
     {"node-a": 66, "node-b": 100, "node-c": 100},
     "As the nodeSelector row with Ignore (node-b and node-c tie)."),
    ("NodeTaintsPolicy honored",
     spread_pod(FOO, soft(1, "node", FOO_SEL, taints_policy="Honor")),
     [("p-a1", "node-a", FOO), ("p-a2", "node-a", FOO), ("p-b1", "node-b", FOO), ("p-c1", "node-c", FOO)],
     [pts_node("node-a", {"node": "node-a"}), pts_node("node-b", {"node": "node-b"}),
      pts_node("node-c", {"node": "node-c"}, taints=UNSCHED_TAINT)],
     {"node-a": 0, "node-b": 33, "node-c": 100},
     "node-c has the untolerated taint node.kubernetes.io/unschedulable:NoSchedule; no filter runs, so it "
     "is scored, and with nodeTaintsPolicy Honor its pod is not counted: raw 3, 2, 0."),
    ("NodeTaintsPolicy ignored",
     spread_pod(FOO, soft(1, "node", FOO_SEL)),
     [("p-a1", "node-a", FOO), ("p-a2", "node-a", FOO), ("p-b1", "node-b", FOO), ("p-c1", "node-c", FOO)],
     [pts_node("node-a", {"node": "node-a"}), pts_node("node-b", {"node": "node-b"}),
      pts_node("node-c", {"node": "node-c"}, taints=UNSCHED_TAINT)],
     {"node-a": 66, "node-b": 100, "node-c": 100},
     "nodeTaintsPolicy Ignore (the default): node-c's pod counts. Raw 3, 2, 2 (node-b and node-c tie)."),
    ("matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
     spread_pod(FOOBAR, soft(1, "zone", {}, match_label_keys=["foo"]),
                soft(1, HOSTNAME, {}, match_label_keys=["bar"])),
     [("p-a1", "node-a", FOO), ("p-b1", "node-b", FOOBAR), ("p-y1", "node-c", FOO), ("p-y2", "node-c", BAR)],
     [pts_node(n, host(n, zone=z)) for n, z in (("node-a", "zone1"), ("node-b", "zone1"),
                                                 ("node-c", "zone2"), ("node-d", "zone2"))],
     {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100},
     "The `{}` selectors become foo=\"\" and bar=\"\" with the pod's values for the keys, so they are no "
     "longer empty and count: foo per zone 2/2/1/1, bar per host 0/1/1/0; raw 3, 5, 3, 1; "
     "100 * (6 - s) / 5."),
    ("matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
     spread_pod({"foo": "", "bar": "", "baz": ""}, soft(1, "zone", FOO_SEL),
                soft(1, HOSTNAME, BAR_SEL, match_label_keys=["baz"])),
     [("p-a1", "node-a", FOO), ("p-b1", "node-b", {"foo": "", "bar": "", "baz": ""}),
      ("p-c1", "node-c", FOO), ("p-c2", "node-c", BAR), ("p-d3", "node-c", {"bar": "", "baz": ""})],
     [pts_node(n, host(n, zone=z)) for n, z in (("node-a", "zone1"), ("node-b", "zone1"),
                                                 ("node-c", "zone2"), ("node-d", "zone2"))],
     {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100},
     "The hostname constraint counts bar pods with baz=\"\" only: 0/1/1/0 (p-c2 has no baz); foo per zone "
     "2/2/1/1; raw 3, 5, 3, 1."),
]

for sub, incoming, existing, nodes, want, notes in PTS_ROWS:
    failed = any(n["spec"].get("unschedulable") for n in nodes)
    top = max(want.values())
    best = [n for n, v in want.items() if v == top]
    case(G, sub, (f"TestPodTopologySpreadScore/{sub}", F),
         nodes, [incoming], pods=bound(existing),
         config=PTS, filters=["NodeUnschedulable"] if failed else [],
         binds={"default/p": best[0]} if len(best) == 1 else {}, upstream=want, ties=len(best) > 1,
         notes=notes)

WEB = {"app": "web"}
WEB_SEL = {"matchLabels": {"app": "web"}}

case(G, "matchLabelKeys with the gate on: upstream's \"ignored when feature gate disabled\" row",
     ("sift-derived: TestPodTopologySpreadScore/matchLabelKeys ignored when feature gate disabled, run with "
      "MatchLabelKeysInPodTopologySpread on (its default since v1.27); common.go filterTopologySpreadConstraints",
      F),
     [pts_node(n, host(n, zone=z)) for n, z in (("node-a", "zone1"), ("node-b", "zone1"),
                                                 ("node-c", "zone2"), ("node-d", "zone2"))],
     [spread_pod({"foo": "", "bar": "", "baz": ""}, soft(1, "zone", FOO_SEL, match_label_keys=["baz"]),
                 soft(1, HOSTNAME, BAR_SEL, match_label_keys=["baz"]))],
     pods=bound([("p-a1", "node-a", FOO), ("p-b1", "node-b", FOOBAR), ("p-y1", "node-c", FOO),
                 ("p-y2", "node-c", BAR)]),
     config=PTS, filters=[], upstream={"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100}, ties=True,
     notes="Upstream runs this row with the gate off and expects node-a=60, node-b=20, node-c=60, node-d=100 "
           "(the keys ignored). sift has no such gate: the pod's baz=\"\" joins both selectors, no existing "
           "pod has baz, every count is 0 and every node gets 100 (a tie).")

case(G, "an empty {} labelSelector counts no pod",
     ("sift-derived: countPodsMatchSelector returns 0 for an empty selector (common.go)", F),
     [pts_node(n, host(n, **{ZONE: z})) for n, z in (("node-a", "z1"), ("node-b", "z1"), ("node-c", "z2"))],
     [spread_pod(FOO, soft(1, ZONE, {}), soft(1, HOSTNAME, FOO_SEL))],
     pods=bound([("web-1", "node-a", WEB), ("web-2", "node-a", WEB), ("web-3", "node-a", WEB),
                 ("foo-a", "node-a", FOO), ("foo-c", "node-c", FOO)]),
     config=PTS, filters=[], binds={"default/p": "node-b"},
     upstream={"node-a": 0, "node-b": 100, "node-c": 0},
     notes="The zone constraint's labelSelector is {}: LabelSelectorAsSelector makes it the selector that "
           "matches everything, whose Empty() is true, and countPodsMatchSelector counts 0 for it (no "
           "matchLabelKeys here to fill it). So only the hostname constraint (foo Exists, weight ln 5) "
           "weighs: foo pods 1/0/1, raw 2, 0, 2. Counting every pod for {} would give zone z1 4 and z2 1 "
           "(weight ln 4) and send the pod to node-c.")

case(G, "a DoNotSchedule constraint is not scored, and its key is not required",
     ("sift-derived: initPreScoreState keeps only the ScheduleAnyway constraints "
      "(filterTopologySpreadConstraints); requireAllTopologies checks their keys", PTS_SRC),
     [pts_node("node-a", host("node-a", **{ZONE: "z1"})), pts_node("node-b", host("node-b", **{ZONE: "z1"})),
      pts_node("node-c", host("node-c"))],
     [spread_pod(WEB, soft(1, ZONE, WEB_SEL, when="DoNotSchedule"), soft(1, HOSTNAME, WEB_SEL))],
     pods=bound([("web-1", "node-a", WEB), ("web-2", "node-b", WEB), ("web-3", "node-b", WEB)]),
     config=PTS, filters=[], binds={"default/p": "node-c"},
     upstream={"node-a": 33, "node-b": 0, "node-c": 100},
     notes="Only the hostname constraint is scored (weight ln 5): web pods 1/2/0, raw 2, 3, 0; 100 * (3 - s) / 3. "
           "node-c has no zone label, but zone is the key of the DoNotSchedule constraint only, so node-c is "
           "not ignored. (No filter runs, so the hard constraint does not reject anything here either.) "
           "Requiring the zone key would ignore node-c and send the pod to node-a.")

case(G, "a hostname constraint counts the node's own pods whatever the inclusion policies",
     ("sift-derived: Score counts kubernetes.io/hostname per node with countPodsMatchSelector, "
      "without matchNodeInclusionPolicies (scoring.go)", PTS_SRC),
     [pts_node("node-a", host("node-a")), pts_node("node-b", host("node-b")),
      pts_node("node-c", host("node-c"), taints=UNSCHED_TAINT)],
     [spread_pod(FOO, soft(1, HOSTNAME, FOO_SEL, taints_policy="Honor"))],
     pods=bound([("p-a1", "node-a", FOO), ("p-a2", "node-a", FOO), ("p-b1", "node-b", FOO),
                 ("p-c1", "node-c", FOO), ("p-c2", "node-c", FOO), ("p-c3", "node-c", FOO)]),
     config=PTS, filters=[], binds={"default/p": "node-b"},
     upstream={"node-a": 80, "node-b": 100, "node-c": 40},
     notes="nodeTaintsPolicy Honor and node-c has an untolerated NoSchedule taint, but no filter runs, so "
           "node-c is scored. PreScore skips it for a zone-like key; for kubernetes.io/hostname nothing is "
           "counted in PreScore, and Score counts each node's own pods with no policy check: 2/1/3, weight "
           "ln 5, raw 3, 2, 5; 100 * (7 - s) / 5. Applying the policy there would count node-c as 0 and send "
           "the pod to node-c. (With the default filters TaintToleration would reject node-c first.)")

case(G, "sequence: three replicas spread over zones and hosts as each is assumed",
     ("sift-derived: PodTopologySpread PreScore reads the snapshot, which holds the pods assumed by earlier "
      "cycles (schedule_one.go assume)", PTS_SRC),
     [pts_node(n, host(n, **{ZONE: z})) for n, z in (("node-a", "z1"), ("node-b", "z1"), ("node-c", "z2"),
                                                      ("node-d", "z2"), ("node-e", "z3"))],
     [pod(f"web-{i}", ZERO, labels=WEB, spread=[soft(2, ZONE, WEB_SEL), soft(1, HOSTNAME, WEB_SEL)])
      for i in (1, 2, 3)],
     pods=bound([("old-a1", "node-a", WEB), ("old-a2", "node-a", WEB), ("old-c1", "node-c", WEB)]),
     config=PTS, filters=[],
     binds={"default/web-1": "node-e", "default/web-2": "node-d", "default/web-3": "node-b"},
     upstream={"node-a": 12, "node-b": 62, "node-c": 50, "node-d": 75, "node-e": 100},
     notes="Zone maxSkew 2 (weight ln 5, plus 1), hostname maxSkew 1 (weight ln 7). web-1: zones 2/1/0, hosts "
           "2/0/1/0/0: raw 8, 4, 5, 3, 1 -> node-e. web-2 sees web-1 on node-e (z3 1): node-e raw 5, "
           "node-d 3 is lowest -> node-d (100 * (11 - 3) / 8). web-3: z2 now 2, node-c and node-d raw 6, "
           "node-e 5, node-a 8, node-b 4 -> node-b.")

# ----------------------------------------------- PodTopologySpread: default constraints
# A pod without topologySpreadConstraints of its own gets the plugin's default
# constraints (plugin.go; `defaultingType: System`, the v1 default: hostname
# maxSkew 3 and topology.kubernetes.io/zone maxSkew 5, both ScheduleAnyway;
# `defaultingType: List`: the args' defaultConstraints), each spreading over
# the pod's DefaultSelector (helper/spread.go), built from the case's
# Services, ReplicationControllers, ReplicaSets and StatefulSets (objects,
# kubectl-style) and the pod's controller ownerReference; model.py
# default_selector / resolve_spread restate both. With the system defaults,
# scoring does not require a node to have every key (requireAllTopologies
# is false): a node without a zone label is scored, its zone constraint
# skipped in Score, and "" is a zone domain of its own in the weight.
#
# Ported (same stored versions as above):
#   scoring_test.go TestPodTopologySpreadScore "system defaulting, nodes don't
#     have zone, pods match service" (the row left out before);
#   scoring_test.go TestPreScoreStateEmptyNodes, its three rows with default
#     constraints and a ReplicaSet ("system default constraints and a
#     replicaset", "default constraints and a replicaset", "default
#     constraints and a replicaset, but pod has constraints"): upstream
#     compares the PreScore state (constraints, ignored nodes, domains,
#     weights) of a cluster without pods; here the same nodes, objects and
#     pod, with the scores that state gives (by hand, `scores`);
#   scoring_test.go TestPreScoreSkip, both rows: PreScore Skip, so 0 on
#     every node;
#   filtering_test.go (kubernetes/kubernetes e7827879dbc2) TestPreFilterState,
#     its four rows with defaultConstraints (ListDefaulting): upstream
#     compares the PreFilter state of a cluster with no node (or expects
#     Skip); here the same pod, defaults and Service on added nodes and
#     pods, so that the state decides binds (each case says what was added);
#   helper/spread_test.go (kubernetes/kubernetes cb6ff2d8ce35)
#     TestGetPodServices, all five rows: which Service selects which pod,
#     as the system default spread over the existing pods.
# Not ported: the other TestPreScoreStateEmptyNodes rows (pods' own
# constraints, no default), TestPreFilterState's other rows (own
# constraints); nothing else in the stored tests read uses defaults
# (helper/spread_test.go, read in cb6ff2d8ce35 and 650c573d625b, has no
# DefaultSelector test, only TestGetPodServices).
FT = UPSTREAM + "framework/plugins/podtopologyspread/filtering_test.go"
HT = UPSTREAM + "framework/plugins/helper/spread_test.go"
HELPER_SRC = UPSTREAM + "framework/plugins/helper/spread.go"
OBJ_TIME = "2025-01-01T00:00:00Z"


def _obj_meta(name, ns, labels=None, generation=None):
    m = {"name": name, "namespace": ns, "uid": None}
    if generation is not None:
        m["generation"] = generation
    m["creationTimestamp"] = OBJ_TIME
    if labels:
        m["labels"] = dict(labels)
    return m


def service(name, selector, ns="default", headless=False):
    """A v1 Service as kubectl prints it; selector None leaves spec.selector
    out (a Service for endpoints managed by hand)."""
    h = hashlib.sha256(f"{ns}/{name}".encode()).digest()
    ip = "None" if headless else f"10.96.{h[0]}.{h[1] % 254 + 1}"
    spec = {"clusterIP": ip, "clusterIPs": [ip], "internalTrafficPolicy": "Cluster", "ipFamilies": ["IPv4"],
            "ipFamilyPolicy": "SingleStack",
            "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080}]}
    if selector is not None:
        spec["selector"] = dict(selector)
    spec.update({"sessionAffinity": "None", "type": "ClusterIP"})
    return {"apiVersion": "v1", "kind": "Service", "metadata": _obj_meta(name, ns),
            "spec": spec, "status": {"loadBalancer": {}}}


def _template(labels, requests=ZERO):
    return {"metadata": {"labels": dict(labels)},
            "spec": {"containers": [container(0, requests)], "dnsPolicy": "ClusterFirst",
                     "restartPolicy": "Always", "schedulerName": "default-scheduler",
                     "terminationGracePeriodSeconds": 30}}


def replica_set(name, selector, labels, replicas, ns="default", requests=ZERO):
    """An apps/v1 ReplicaSet; selector: its spec.selector (a LabelSelector),
    labels: its template's (and its own) labels."""
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": _obj_meta(name, ns, labels, generation=1),
            "spec": {"replicas": replicas, "selector": selector, "template": _template(labels, requests)},
            "status": {"availableReplicas": replicas, "fullyLabeledReplicas": replicas, "observedGeneration": 1,
                       "readyReplicas": replicas, "replicas": replicas}}


def stateful_set(name, selector, labels, replicas, service_name, ns="default"):
    rev = f"{name}-{hashlib.sha256(name.encode()).hexdigest()[:10]}"
    return {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": _obj_meta(name, ns, labels, generation=1),
            "spec": {"podManagementPolicy": "OrderedReady", "replicas": replicas, "revisionHistoryLimit": 10,
                     "selector": selector, "serviceName": service_name, "template": _template(labels),
                     "updateStrategy": {"rollingUpdate": {"partition": 0}, "type": "RollingUpdate"}},
            "status": {"availableReplicas": replicas, "collisionCount": 0, "currentReplicas": replicas,
                       "currentRevision": rev, "observedGeneration": 1, "readyReplicas": replicas,
                       "replicas": replicas, "updateRevision": rev, "updatedReplicas": replicas}}


def replication_controller(name, selector, labels, replicas, ns="default"):
    """A v1 ReplicationController; selector: its spec.selector map."""
    return {"apiVersion": "v1", "kind": "ReplicationController",
            "metadata": _obj_meta(name, ns, labels, generation=1),
            "spec": {"replicas": replicas, "selector": dict(selector), "template": _template(labels)},
            "status": {"availableReplicas": replicas, "fullyLabeledReplicas": replicas, "observedGeneration": 1,
                       "readyReplicas": replicas, "replicas": replicas}}


def owned(p, kind, name, api="apps/v1", controller=True):
    """Sets the pod's metadata.ownerReferences to one reference (its uid is
    filled in by finish(): the owner's when the case has it)."""
    p["metadata"]["ownerReferences"] = [{"apiVersion": api, "blockOwnerDeletion": True, "controller": controller,
                                         "kind": kind, "name": name, "uid": None}]
    return p


def owned_all(pods, kind, name, **kw):
    return [owned(p, kind, name, **kw) for p in pods]


def pts_list(*defaults):
    """PodTopologySpread args with `defaultingType: List`."""
    return {"name": "PodTopologySpread", "args": {"defaultingType": "List", "defaultConstraints": list(defaults)}}


def pts_only(plugin_config=None):
    """Only PodTopologySpread scores (weight 1), with these args."""
    c = cfg([("PodTopologySpread", 1)])
    if plugin_config is not None:
        c["pluginConfig"] = [plugin_config]
    return c


def dflt(skew, key, when):
    """A default constraint (no selector: the pod's DefaultSelector is used)."""
    return {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": when}


SA, DNS = "ScheduleAnyway", "DoNotSchedule"
FOO_EXISTS = {"matchExpressions": [expr("foo", "Exists")]}

# -- TestPodTopologySpreadScore
case(G, "system defaulting, nodes don't have zone, pods match service",
     ("TestPodTopologySpreadScore/system defaulting, nodes don't have zone, pods match service", F),
     [pts_node(n, host(n)) for n in ("node-a", "node-b", "node-c", "node-d")],
     [pod("p", ZERO, labels=FOO)],
     pods=bound([(f"p-{n}{i}", f"node-{n}", FOO) for n, k in (("a", 4), ("b", 3), ("c", 2), ("d", 1))
                 for i in range(1, k + 1)]),
     objects=[service("svc", FOO)],
     config=PTS, filters=[], binds={"default/p": "node-d"},
     upstream={"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
     notes="p has no constraint of its own; the test's plugin uses the system defaults. Upstream's Service has "
           "no name or namespace (nor has its pod): here svc in default. Its selector foo=\"\" matches p, so "
           "the DefaultSelector is foo=\"\" and p spreads by hostname (maxSkew 3) and zone (maxSkew 5). No "
           "node has a zone label: with the system defaults none is ignored, their zone is the domain \"\", "
           "and Score skips the zone constraint on each. Hostname weight ln(4 + 2), plus 2: counts 4/3/2/1 "
           "give raw 9, 7, 6, 4; 100 * (13 - s) / 9, as upstream says the same as one constraint.")

# -- TestPreScoreStateEmptyNodes
case(G, "system default constraints and a replicaset",
     ("TestPreScoreStateEmptyNodes/system default constraints and a replicaset", F),
     [pts_node("node-a", host("node-a", **{ZONE: "mars"})), pts_node("node-b", host("node-b", **{ZONE: "mars"})),
      pts_node("node-c", host("node-c")), pts_node("node-d", host("node-d"))],
     [owned(pod("p", ZERO, labels={"foo": "tar", "baz": "sup"}), "ReplicaSet", "rs1")],
     objects=[replica_set("rs1", FOO_EXISTS, {"foo": "tar"}, 1)],
     config=PTS, filters=[], ties=True,
     scores={"PodTopologySpread": {"node-a": 33, "node-b": 33, "node-c": 100, "node-d": 100}},
     notes="Upstream's state: the two system defaults with rs1's selector (foo Exists), no ignored node "
           "(\"Nodes with no zone are not excluded. They are considered a separate zone.\"), zone domains mars "
           "and \"\" (weight ln(2 + 2)), hostname weight ln(4 + 2). Here rs1 is an apps/v1 ReplicaSet whose "
           "template has foo=tar. No pod exists, so each constraint adds only maxSkew - 1: node-a and node-b 2 "
           "+ 4 = 6, node-c and node-d 2 (no zone label: the zone constraint is skipped); 100 * (8 - s) / 6. "
           "The zoneless nodes tie at 100.")

case(G, "default constraints and a replicaset",
     ("TestPreScoreStateEmptyNodes/default constraints and a replicaset", F),
     [pts_node("node-a", {"rack": "rack1", HOSTNAME: "node-a", "planet": "mars"})],
     [owned(pod("p", ZERO, labels={"foo": "tar", "baz": "sup"}), "ReplicaSet", "rs1")],
     objects=[replica_set("rs1", FOO_EXISTS, {"foo": "tar"}, 1)],
     config=pts_only(pts_list(dflt(1, HOSTNAME, SA), dflt(2, "rack", DNS), dflt(2, "planet", SA))),
     filters=["PodTopologySpread"], binds={"default/p": "node-a"},
     scores={"PodTopologySpread": {"node-a": 100}},
     notes="defaultingType List: hostname 1 and planet 2 (ScheduleAnyway), rack 2 (DoNotSchedule), each with "
           "rs1's selector. Upstream's state: the two soft ones, planet domain mars, both weights ln(1 + 2). "
           "Here the plugin's filter also runs: the rack default is a hard constraint, node-a has the key "
           "and rack1 holds no pod (skew 0 + 1 - 0 = 1 <= 2), so node-a passes. One node: raw 0 + 1 = 1, "
           "both min and max: 100. With one feasible node the pod binds unscored.")

case(G, "default constraints and a replicaset, but pod has constraints",
     ("TestPreScoreStateEmptyNodes/default constraints and a replicaset, but pod has constraints", F),
     [pts_node("node-a", {"planet": "mars", "galaxy": "andromeda"})],
     [owned(spread_pod({"foo": "bar", "baz": "sup"}, soft(1, "zone", BAR_SEL, when=DNS),
                       soft(2, "planet", {"matchLabels": {"baz": "sup"}})), "ReplicaSet", "rs1")],
     objects=[replica_set("rs1", FOO_EXISTS, {"foo": "bar"}, 1)],
     config=pts_only(pts_list(dflt(2, "galaxy", SA))), filters=[], binds={"default/p": "node-a"},
     scores={"PodTopologySpread": {"node-a": 100}},
     notes="The pod's own constraints replace the galaxy default. Upstream's state: the planet constraint "
           "alone (baz=sup), domain mars, weight ln(1 + 2); the zone constraint is DoNotSchedule, not "
           "scored. No filter runs (as upstream's PreScore test; the zone constraint would reject node-a, "
           "which has no zone label). One node, raw 1: 100.")

# -- TestPreScoreSkip
case(G, "the pod doesn't have soft topology spread Constraints",
     ("TestPreScoreSkip/the pod doesn't have soft topology spread Constraints", F),
     [pts_node(n, host(n)) for n in ("node-a", "node-b")],
     [pod("p", ZERO)],
     config=pts_only({"name": "PodTopologySpread", "args": {"defaultingType": "List"}}), filters=[], ties=True,
     scores={"PodTopologySpread": {"node-a": 0, "node-b": 0}},
     notes="defaultingType List with no defaultConstraints, a pod without constraints: PreScore returns Skip, "
           "so the plugin scores 0 on every node (a tie).")

case(G, "default constraints and a replicaset that doesn't match",
     ("TestPreScoreSkip/default constraints and a replicaset that doesn't match", F),
     [pts_node("node-a", {"planet": "mars"})],
     [owned(pod("p", ZERO, labels={"foo": "bar", "baz": "sup"}), "ReplicaSet", "rs2")],
     objects=[replica_set("rs1", {"matchExpressions": [expr("tar", "Exists")]}, {"tar": ""}, 1)],
     config=pts_only(pts_list(dflt(2, "planet", SA))), filters=[], binds={"default/p": "node-a"},
     scores={"PodTopologySpread": {"node-a": 0}},
     notes="p's controller is ReplicaSet rs2, which does not exist (rs1 does, selecting tar); no Service: the "
           "DefaultSelector is empty, there are no default constraints and PreScore returns Skip (0).")

# -- TestPreFilterState (ListDefaulting), expressed as filter cases
case(G, "default constraints and a service",
     ("TestPreFilterState/default constraints and a service (nodes and pods added)", FT),
     [pts_node("node-a", {"node": "node-a", "rack": "rack1"}), pts_node("node-b", {"node": "node-b", "rack": "rack1"}),
      pts_node("node-c", {"node": "node-c"})],
     [pod("p", ZERO, labels={"foo": "bar", "baz": "kar"})],
     pods=bound([(f"p-a{i}", "node-a", {"foo": "bar"}) for i in range(1, 5)]
                + [(f"p-b{i}", "node-b", {"baz": "kar"}) for i in range(1, 4)]),
     objects=[service("svc", {"foo": "bar"})],
     config=pts_only(pts_list(dflt(3, "node", DNS), dflt(2, "node", SA), dflt(5, "rack", DNS))),
     filters=["PodTopologySpread"], binds={"default/p": "node-b"},
     notes="Upstream's pod, defaults and Service (selector foo=bar), on a cluster without nodes; its state: "
           "the two DoNotSchedule defaults (node 3, rack 5) with selector foo=bar. Added here: node-a and "
           "node-b (rack1), node-c without a rack label, four foo=bar pods on node-a and three baz=kar pods "
           "on node-b (which the Service's selector does not count). node-a: 4 + 1 - 0 = 5 > 3 "
           "(Unschedulable); node-b: node 0 + 1 - 0 and rack 4 + 1 - 4 pass; node-c lacks rack "
           "(UnschedulableAndUnresolvable). Only node-b is left.")

case(G, "default constraints and a service that doesn't match",
     ("TestPreFilterState/default constraints and a service that doesn't match (nodes and pods added)", FT),
     [pts_node("node-a", {"node": "node-a"}), pts_node("node-b", {})],
     [pod("p", ZERO, labels={"foo": "bar"})],
     pods=bound([(f"p-a{i}", "node-a", {"foo": "bar"}) for i in range(1, 6)]),
     objects=[service("svc", {"baz": "kep"})],
     config=pts_only(pts_list(dflt(3, "node", DNS))), filters=["PodTopologySpread"], ties=True,
     scores={"PodTopologySpread": {"node-a": 0, "node-b": 0}},
     notes="Upstream expects PreFilter Skip: the Service selects baz=kep, not p, so no default constraint. "
           "Added: node-a with five foo=bar pods, node-b with no `node` label; both pass (applied, the "
           "default would reject node-a for skew and node-b for the missing label). No soft default: "
           "PreScore skips too, 0 each (a tie).")

case(G, "default constraints and a service, but pod has constraints",
     ("TestPreFilterState/default constraints and a service, but pod has constraints (nodes and pods added)", FT),
     [pts_node("node-a", {"zone": "zone1", "planet": "mars"}), pts_node("node-b", {"zone": "zone2", "planet": "mars"})],
     [spread_pod({"foo": "bar", "baz": "tar"}, soft(1, "zone", {"matchLabels": {"baz": "tar"}}, when=DNS),
                 soft(2, "planet", {"matchLabels": {"fot": "rok"}}))],
     pods=bound([("p-a1", "node-a", {"baz": "tar"}), ("p-a2", "node-a", {"baz": "tar"})]
                + [(f"p-b{i}", "node-b", {"foo": "bar"}) for i in range(1, 4)]),
     objects=[service("svc", {"foo": "bar"})],
     config=pts_only(pts_list(dflt(2, "node", DNS))), filters=["PodTopologySpread"], binds={"default/p": "node-b"},
     notes="Upstream's state: the pod's own zone constraint only (baz=tar), not the node default. Added: two "
           "zones, neither node with a `node` label (the default would reject both), two baz=tar pods on "
           "node-a and three foo=bar pods (the Service's) on node-b. zone1 2 + 1 - 0 > 1 rejects node-a; "
           "node-b passes alone.")

case(G, "default soft constraints and a service",
     ("TestPreFilterState/default soft constraints and a service (nodes and pods added)", FT),
     [pts_node("node-a", {"node": "node-a"}), pts_node("node-b", {"node": "node-b"}), pts_node("node-c", {})],
     [pod("p", ZERO, labels={"foo": "bar"})],
     pods=bound([(f"p-a{i}", "node-a", {"foo": "bar"}) for i in range(1, 4)]),
     objects=[service("svc", {"foo": "bar"})],
     config=pts_only(pts_list(dflt(2, "node", SA))), filters=["PodTopologySpread"], binds={"default/p": "node-b"},
     scores={"PodTopologySpread": {"node-a": 20, "node-b": 100, "node-c": 0}},
     notes="Upstream expects PreFilter Skip: the only default is ScheduleAnyway, so the filter passes every "
           "node, node-c (no `node` label) included. Added: three foo=bar pods on node-a. Scoring with List "
           "defaults requires every key: node-c is ignored (0). Weight ln(2 + 2), plus 1: raw 5 and 1; "
           "100 * (6 - s) / 5.")

# -- TestGetPodServices, as the system default spread
GPS_PODS = [("test-0", "node-a", 2), ("test-0", "node-b", 1), ("test-1", "node-b", 2), ("test-1", "node-c", 1),
            ("test-2", "node-a", 1), ("test-2", "node-c", 2), ("test-3", "node-a", 2)]
for i, want, winner in [
        (0, {"node-a": 40, "node-b": 60, "node-c": 100}, "node-c"),
        (1, {"node-a": 100, "node-b": 40, "node-c": 60}, "node-a"),
        (2, {"node-a": 60, "node-b": 100, "node-c": 40}, "node-b"),
        (3, {"node-a": 0, "node-b": 0, "node-c": 0}, None),
        (4, {"node-a": 0, "node-b": 0, "node-c": 0}, None)]:
    sub = f"GetPodServices for pod-{i}"
    case(G, sub, (f"TestGetPodServices/{sub}", HT),
         [pts_node(n, host(n)) for n in ("node-a", "node-b", "node-c")],
         [pod(f"test-pod-{i}", ZERO, ns="test", labels={"app": f"test-{i}", "label": f"label-{i}"})],
         pods=[pod(f"{a}-{n[-1]}{k}", ZERO, node=n, ns="test", labels={"app": a, "label": f"other-{k}"})
               for a, n, count in GPS_PODS for k in range(1, count + 1)],
         objects=[service(f"service-{j}", {"app": f"test-{j}"}, ns="test") for j in range(3)],
         config=PTS, filters=[], binds={f"test/test-pod-{i}": winner} if winner else {}, ties=winner is None,
         scores={"PodTopologySpread": want},
         notes=(f"Upstream: service-{i} (selector app=test-{i}) is the one Service selecting test-pod-{i}. "
                f"Here that decides the system default spread: the existing app=test-{i} pods of namespace test "
                "count, whatever their `label`. No zone labels: hostname only, weight ln(3 + 2), plus 2; "
                "counts 2/1/0 give raw 5, 4, 2 and 40, 60, 100." if winner else
                f"Upstream: no Service selects test-pod-{i} (app=test-{i}); the DefaultSelector is empty, no "
                "default constraint, PreScore Skip: 0 on every node (a tie)"
                + (", although two app=test-3 pods exist on node-a." if i == 3 else ".")))

# -- derived: default constraints in whole scheduling runs
DER = "sift-derived: "
WEB_RS = {"app": "web", "pod-template-hash": "7c9d"}
WEB_RS_SEL = {"matchLabels": dict(WEB_RS)}
WEB_REQ = {"cpu": "500m", "memory": "512Mi"}


def zn(name, zone, cpu="4", mem="8Gi", **labels):
    """A node with room, kubernetes.io/hostname and (unless zone is None) a zone label."""
    l = dict(labels)
    if zone is not None:
        l[ZONE] = zone
    return node(name, {"cpu": cpu, "memory": mem}, labels=l)


def web(name, node_name=None, labels=WEB_RS, rs="web-7c9d", req=WEB_REQ, **kw):
    return owned(pod(name, req, node=node_name, labels=labels, **kw), "ReplicaSet", rs)


def deploy_cluster():
    """Four nodes in two zones; ReplicaSet web-7c9d (a Deployment's current
    one) has three replicas, one on node-a and two on node-b (zone z1); z2 runs
    db pods, which use more of their nodes than the web pods do."""
    nodes = [zn("node-a", "z1"), zn("node-b", "z1"), zn("node-c", "z2"), zn("node-d", "z2")]
    pods = [web("web-7c9d-1", "node-a"), web("web-7c9d-2", "node-b"), web("web-7c9d-3", "node-b"),
            pod("db-1", {"cpu": "2500m", "memory": "4Gi"}, node="node-c", labels={"app": "db"}),
            pod("db-2", {"cpu": "2", "memory": "3Gi"}, node="node-d", labels={"app": "db"})]
    return nodes, pods, [replica_set("web-7c9d", WEB_RS_SEL, WEB_RS, 4, requests=WEB_REQ)]


nodes, pods, objs = deploy_cluster()
case(G, "a Deployment's new replica: the system default spread outweighs the free room",
     (DER + "the system default constraints over a ReplicaSet's selector (helper.DefaultSelector), in the "
      "default score set", PTS_SRC),
     nodes, [web("web-7c9d-4")], pods=pods, objects=objs,
     binds={"default/web-7c9d-4": "node-d"},
     scores={"PodTopologySpread": {"node-a": 57, "node-b": 42, "node-c": 100, "node-d": 100},
             "NodeResourcesFit": {"node-a": 81, "node-b": 71, "node-c": 34, "node-d": 46}},
     notes="No config: sift's default score set (PodTopologySpread weight 2, system defaults). web-7c9d-4 is "
           "owned by ReplicaSet web-7c9d, whose selector (app=web, pod-template-hash=7c9d) is the "
           "DefaultSelector. Hostname weight ln(4 + 2), counts 1/2/0/0, plus 2; zone weight ln(2 + 2), z1 3 "
           "and z2 0, plus 4: raw 12, 14, 6, 6; 100 * (20 - s) / 14. Without the spread (Fit, Balanced and "
           "the constant plugins) node-a would win, 474 against node-d's 436; with it node-d wins, 636 "
           "against node-a's 588 (node-c, as good for spreading, has less room than node-d).")

nodes, pods, objs = deploy_cluster()
case(G, "defaultingType List without defaultConstraints turns the default spread off",
     (DER + "PodTopologySpreadArgs defaultingType List with no defaultConstraints: buildDefaultConstraints "
      "has none (plugin.go New, common.go)", PTS_SRC),
     nodes, [web("web-7c9d-4")], pods=pods, objects=objs,
     config={"pluginConfig": [{"name": "PodTopologySpread", "args": {"defaultingType": "List"}}]},
     binds={"default/web-7c9d-4": "node-a"},
     scores={"PodTopologySpread": {"node-a": 0, "node-b": 0, "node-c": 0, "node-d": 0}},
     notes="The previous case's cluster and pod, with the default score set and PodTopologySpread's args "
           "set to List with no constraints: PreScore skips the pod, and the free room sends it to node-a "
           "(474 against node-b's 461).")

nodes, pods, objs = deploy_cluster()
case(G, "sequence: three new replicas of a Deployment, each counting the ones assumed before it",
     (DER + "the DefaultSelector counts the pods assumed in earlier cycles (schedule_one.go assume)", PTS_SRC),
     nodes, [web(f"web-7c9d-{i}") for i in (4, 5, 6)], pods=pods, objects=objs,
     binds={"default/web-7c9d-4": "node-d", "default/web-7c9d-5": "node-c", "default/web-7c9d-6": "node-a"},
     notes="The first case's cluster with three new replicas and the default score set. web-7c9d-4 goes to "
           "node-d as there. web-7c9d-5 sees it (hosts 1/2/0/1, z2 1): raw 12, 14, 7, 9, spread scores 64, "
           "50, 100, 85, and takes node-c. web-7c9d-6 finds hosts 1/2/1/1 and zones 3 and 2: raw 12, 14, "
           "11, 11, spread scores 92, 78, 100, 100, nearly even, and the room left on node-a decides (658 "
           "against node-d's 624).")

case(G, "a pod without a controller or a Service has no default spread",
     (DER + "helper.DefaultSelector: no Service of the pod's namespace selects it and it has no "
      "ownerReference; a ReplicaSet that selects its labels does not count", HELPER_SRC),
     [zn("node-a", "z1"), zn("node-b", "z1"), zn("node-c", "z2")],
     [pod("api-x", {"cpu": "500m", "memory": "512Mi"}, labels={"app": "api"})],
     pods=[pod(f"api-{i}", {"cpu": "100m", "memory": "128Mi"}, node="node-c", labels={"app": "api"})
           for i in (1, 2)] + [pod("api-3", {"cpu": "100m", "memory": "128Mi"}, node="node-b", labels={"app": "api"})]
     + [pod("batch-1", {"cpu": "2", "memory": "2Gi"}, node="node-a", labels={"app": "batch"}),
        pod("batch-2", {"cpu": "1", "memory": "1Gi"}, node="node-b", labels={"app": "batch"})],
     objects=[service("api", {"app": "api"}, ns="other"),
              replica_set("api-6d4b", {"matchLabels": {"app": "api"}}, {"app": "api"}, 3)],
     binds={"default/api-x": "node-c"},
     scores={"PodTopologySpread": {"node-a": 0, "node-b": 0, "node-c": 0}},
     notes="api-x (app=api) has no ownerReference. The Service api selects app=api but lives in namespace "
           "other; ReplicaSet api-6d4b selects app=api, but DefaultSelector only follows the pod's controller "
           "reference, it never searches controllers by selector. So no default constraint: PreScore Skip, "
           "0 each, and the free room decides: node-c, whose two small api pods leave it the emptiest, though "
           "it holds the most app=api pods (the spread over app=api would have preferred node-a).")

case(G, "Services that select the pod merge their selectors",
     (DER + "helper.GetPodServices and DefaultSelector: the matching Services' selector maps merged; one "
      "without a selector, or selecting other labels, is left out", HELPER_SRC),
     [zn("node-a", "z1"), zn("node-b", "z1"), zn("node-c", "z2"), zn("node-d", None)],
     [pod("api-new", ZERO, labels={"app": "api", "tier": "backend"})],
     pods=bound([("api-a1", "node-a", {"app": "api", "tier": "backend"}),
                 ("api-a2", "node-a", {"app": "api", "tier": "backend"}),
                 ("api-c1", "node-c", {"app": "api", "tier": "backend"})]
                + [(f"canary-b{i}", "node-b", {"app": "api", "tier": "canary"}) for i in (1, 2, 3)]
                + [(f"web-d{i}", "node-d", {"app": "web"}) for i in (1, 2, 3)]),
     objects=[service("api", {"app": "api"}), service("api-backend", {"app": "api", "tier": "backend"}),
              service("frontend", {"app": "web"}), service("external-db", None)],
     config=PTS, filters=[], binds={"default/api-new": "node-d"},
     scores={"PodTopologySpread": {"node-a": 15, "node-b": 46, "node-c": 46, "node-d": 100}},
     notes="Services api (app=api) and api-backend (app=api, tier=backend) select api-new; frontend (app=web) "
           "does not, external-db has no selector and is skipped. The DefaultSelector is app=api AND "
           "tier=backend, so the three canary pods on node-b do not count (with api's selector alone they "
           "would, and node-b would score lowest). Hostname weight ln(4 + 2), counts 2/0/1/0, plus 2; zone "
           "weight ln(3 + 2): node-d has no zone label and is not ignored (system defaults), \"\" is a third "
           "domain; z1 2, z2 1, plus 4, and Score skips the zone constraint on node-d: raw 13, 9, 9, 2; "
           "100 * (15 - s) / 13. So the zoneless node-d wins: it misses the zone constraint's maxSkew - 1.")

DB = {"app": "db"}
case(G, "a StatefulSet's pods spread by its selector",
     (DER + "helper.DefaultSelector: an apps/v1 StatefulSet controller adds its selector's requirements",
      HELPER_SRC),
     [zn("node-a", "z1"), zn("node-b", "z1"), zn("node-c", "z2"), zn("node-d", "z2")],
     [owned(pod("db-3", ZERO, labels=dict(DB, **{"statefulset.kubernetes.io/pod-name": "db-3"})),
            "StatefulSet", "db")],
     pods=owned_all([pod(f"db-{i}", ZERO, node=n, labels=dict(DB, **{"statefulset.kubernetes.io/pod-name": f"db-{i}"}))
                     for i, n in ((0, "node-a"), (1, "node-b"), (2, "node-c"))], "StatefulSet", "db")
     + bound([(f"cache-d{i}", "node-d", {"app": "cache"}) for i in (1, 2)]),
     objects=[service("db", DB, headless=True),
              stateful_set("db", {"matchExpressions": [expr("app", "In", "db")]}, DB, 4, "db")],
     config=PTS, filters=[], binds={"default/db-3": "node-d"},
     scores={"PodTopologySpread": {"node-a": 63, "node-b": 63, "node-c": 81, "node-d": 100}},
     notes="db-3's controller is StatefulSet db (apps/v1), selector app In (db); its headless Service db "
           "selects app=db: the DefaultSelector is app=db AND app In (db). The cache pods on node-d do not "
           "count. Hostname weight ln(4 + 2), counts 1/1/1/0, plus 2; zone weight ln(2 + 2), z1 2 and z2 1, "
           "plus 4: raw 11, 11, 9, 7; 100 * (18 - s) / 11.")

case(G, "an owner reference that is not the controller gives no default spread",
     (DER + "metav1.GetControllerOfNoCopy takes only an ownerReference with controller true "
      "(helper.DefaultSelector)", HELPER_SRC),
     [zn("node-a", "z1"), zn("node-b", "z2")],
     [owned(pod("web-x", ZERO, labels=WEB_RS), "ReplicaSet", "web-7c9d", controller=False)],
     pods=[web(f"web-7c9d-{i}", "node-b", req=ZERO) for i in (1, 2, 3)],
     objects=[replica_set("web-7c9d", WEB_RS_SEL, WEB_RS, 4)],
     config=PTS, filters=[], ties=True,
     scores={"PodTopologySpread": {"node-a": 0, "node-b": 0}},
     notes="web-x names ReplicaSet web-7c9d in its ownerReferences with controller false: no controller, no "
           "Service, so no default constraint and PreScore skips (0 each, a tie). As the controller, the "
           "ReplicaSet's selector would count the three pods on node-b and send web-x to node-a.")

case(G, "an owner of another API version is not looked up",
     (DER + "helper.DefaultSelector matches the owner's group/version/kind exactly: extensions/v1beta1 "
      "ReplicaSet is none of v1 ReplicationController, apps/v1 ReplicaSet, apps/v1 StatefulSet", HELPER_SRC),
     [zn("node-a", "z1"), zn("node-b", "z2")],
     [owned(pod("web-x", ZERO, labels=WEB_RS), "ReplicaSet", "web-7c9d", api="extensions/v1beta1")],
     pods=[web(f"web-7c9d-{i}", "node-b", req=ZERO) for i in (1, 2, 3)],
     objects=[replica_set("web-7c9d", WEB_RS_SEL, WEB_RS, 4)],
     config=PTS, filters=[], ties=True,
     scores={"PodTopologySpread": {"node-a": 0, "node-b": 0}},
     notes="web-x's controller reference says apiVersion extensions/v1beta1, kind ReplicaSet; the apps/v1 "
           "ReplicaSet of that name is not consulted. No Service: no default constraint, 0 each (a tie).")

case(G, "a controller is looked up in the pod's namespace only",
     (DER + "helper.DefaultSelector gets the controller from the lister of the pod's namespace", HELPER_SRC),
     [zn("node-a", "z1"), zn("node-b", "z2")],
     [owned(pod("web-x", ZERO, labels=WEB_RS), "ReplicaSet", "web-7c9d")],
     pods=[web(f"web-7c9d-{i}", "node-b", req=ZERO) for i in (1, 2, 3)],
     objects=[replica_set("web-7c9d", WEB_RS_SEL, WEB_RS, 4, ns="staging")],
     config=PTS, filters=[], ties=True,
     scores={"PodTopologySpread": {"node-a": 0, "node-b": 0}},
     notes="web-x (namespace default) names ReplicaSet web-7c9d as its controller, but the only ReplicaSet of "
           "that name is in namespace staging: not found, no default constraint, 0 each (a tie).")

case(G, "an owning ReplicaSet decides the spread even if it does not select the pod",
     (DER + "helper.DefaultSelector looks the controller up by name and adds its selector as is", HELPER_SRC),
     [pts_node(n, host(n)) for n in ("node-a", "node-b", "node-c")],
     [owned(pod("web-x", ZERO, labels={"app": "web"}), "ReplicaSet", "legacy")],
     pods=bound([(f"legacy-a{i}", "node-a", {"app": "legacy"}) for i in (1, 2, 3)]
                + [(f"web-b{i}", "node-b", {"app": "web"}) for i in (1, 2, 3)]
                + [("legacy-c1", "node-c", {"app": "legacy"}), ("web-c1", "node-c", {"app": "web"})]),
     objects=[replica_set("legacy", {"matchLabels": {"app": "legacy"}}, {"app": "legacy"}, 4)],
     config=PTS, filters=[], binds={"default/web-x": "node-b"},
     scores={"PodTopologySpread": {"node-a": 28, "node-b": 100, "node-c": 71}},
     notes="web-x (app=web) names ReplicaSet legacy as its controller; legacy selects app=legacy, not web-x. "
           "DefaultSelector takes the selector anyway, so web-x spreads over the legacy pods (3/0/1) and goes "
           "where they are fewest, onto the three web pods of node-b. No zone labels: hostname only, weight "
           "ln(3 + 2), plus 2: raw 7, 2, 4; 100 * (9 - s) / 7. (The API server lets any client set "
           "ownerReferences; the ReplicaSet controller would not adopt web-x.)")

case(G, "a ReplicationController's selector map joins the Services', and wins on a shared key",
     (DER + "helper.DefaultSelector: labels.Merge of the Services' maps, then the ReplicationController's "
      "(the second map wins on a key both have)", HELPER_SRC),
     [pts_node(n, host(n)) for n in ("node-a", "node-b", "node-c")],
     [owned(pod("web-x", ZERO, labels={"app": "web", "tier": "front"}), "ReplicationController", "old", api="v1")],
     pods=bound([(f"old-a{i}", "node-a", {"app": "old", "tier": "front"}) for i in (1, 2, 3)]
                + [(f"web-b{i}", "node-b", {"app": "web", "tier": "front"}) for i in (1, 2, 3)]
                + [("old-c1", "node-c", {"app": "old", "tier": "front"}), ("web-c1", "node-c", {"app": "web", "tier": "front"}),
                   ("old-c2", "node-c", {"app": "old"})]),
     objects=[service("web", {"app": "web"}), service("front", {"tier": "front"}),
              replication_controller("old", {"app": "old"}, {"app": "old"}, 4)],
     config=PTS, filters=[], binds={"default/web-x": "node-b"},
     scores={"PodTopologySpread": {"node-a": 28, "node-b": 100, "node-c": 71}},
     notes="Services web (app=web) and front (tier=front) select web-x: label set app=web, tier=front. Its "
           "controller is ReplicationController old (v1), looked up by name although its selector app=old "
           "does not select web-x; labels.Merge puts its map second, so app becomes old: the DefaultSelector "
           "is app=old AND tier=front. That counts old-a1..3 and old-c1 (not old-c2, without tier): 3/0/1. "
           "Hostname weight ln(3 + 2), plus 2: raw 7, 2, 4; 100 * (9 - s) / 7. With the Services' app=web "
           "kept, node-b would have been the crowded one; with both app values required, no pod would "
           "count and every node would tie. (A contrived state: the ReplicationController would not adopt "
           "web-x.)")

case(G, "a ReplicationController controller spreads its pods",
     (DER + "helper.DefaultSelector: a v1 ReplicationController controller merges its selector map",
      HELPER_SRC),
     [zn("node-a", "z1"), zn("node-b", "z1"), zn("node-c", "z2")],
     [owned(pod("frontend-x", ZERO, labels={"app": "frontend"}), "ReplicationController", "frontend", api="v1")],
     pods=owned_all([pod(f"frontend-{i}", ZERO, node=n, labels={"app": "frontend"})
                     for i, n in ((1, "node-a"), (2, "node-c"), (3, "node-c"))], "ReplicationController",
                    "frontend", api="v1"),
     objects=[replication_controller("frontend", {"app": "frontend"}, {"app": "frontend"}, 4)],
     config=PTS, filters=[], binds={"default/frontend-x": "node-b"},
     scores={"PodTopologySpread": {"node-a": 83, "node-b": 100, "node-c": 58}},
     notes="frontend-x's controller is ReplicationController frontend (v1), selector app=frontend: the "
           "DefaultSelector (no Service). Hostname weight ln(3 + 2), counts 1/0/2, plus 2; zone weight "
           "ln(2 + 2), z1 1 and z2 2, plus 4: raw 9, 7, 12; 100 * (19 - s) / 12.")

case(G, "the system defaults honour the pod's node selector when counting",
     (DER + "default constraints get nodeAffinityPolicy Honor (filterTopologySpreadConstraints); PreScore "
      "counts only nodes matching the pod's required node affinity (matchNodeInclusionPolicies)", PTS_SRC),
     [zn("node-a", "z1", disk="ssd"), zn("node-b", "z1"), zn("node-c", "z2", disk="ssd"), zn("node-d", "z2", disk="ssd")],
     [web("web-x", req=ZERO, node_selector={"disk": "ssd"})],
     pods=[web(f"web-7c9d-b{i}", "node-b", req=ZERO) for i in (1, 2, 3, 4)]
     + [web("web-7c9d-c1", "node-c", req=ZERO), web("web-7c9d-d1", "node-d", req=ZERO)],
     objects=[replica_set("web-7c9d", WEB_RS_SEL, WEB_RS, 7)],
     config=PTS, filters=["NodeAffinity"], binds={"default/web-x": "node-a"},
     scores={"PodTopologySpread": {"node-a": 100, "node-c": 60, "node-d": 60}},
     notes="web-x (ReplicaSet web-7c9d) has nodeSelector disk=ssd; the case runs the NodeAffinity filter, "
           "which removes node-b. The system defaults carry nodeAffinityPolicy Honor, so PreScore does not "
           "count node-b's four web pods either: z1 0, z2 2 (zone weight ln(2 + 2)), hosts 0/1/1 (weight "
           "ln(3 + 2)): raw 6, 10, 10; 100 * (16 - s) / 10. Counting node-b (z1 4) would give raw 12, 10, 10 "
           "and a tie between node-c and node-d.")

# List defaults with a DoNotSchedule constraint: the filter applies them
LIST_ZONE = {"pluginConfig": [pts_list(dflt(1, ZONE, DNS))]}
case(G, "List default constraints that are DoNotSchedule filter each replica",
     (DER + "buildDefaultConstraints for DoNotSchedule in PreFilter (filtering.go calPreFilterState, Filter)",
      UPSTREAM + "framework/plugins/podtopologyspread/filtering.go"),
     [zn("node-a", "z1"), zn("node-b", "z2", cpu="2"), zn("node-c", None, cpu="8", mem="16Gi")],
     [web(f"web-7c9d-{i}", req={"cpu": "1", "memory": "1Gi"}) for i in (3, 4, 5, 6)],
     pods=[web(f"web-7c9d-{i}", "node-a", req={"cpu": "1", "memory": "1Gi"}) for i in (1, 2)],
     objects=[replica_set("web-7c9d", WEB_RS_SEL, WEB_RS, 6, requests={"cpu": "1", "memory": "1Gi"})],
     config=LIST_ZONE,
     binds={"default/web-7c9d-3": "node-b", "default/web-7c9d-4": "node-b", "default/web-7c9d-5": "node-a"},
     unscheduled=["default/web-7c9d-6"],
     notes="PodTopologySpread's args: defaultingType List with one default, zone maxSkew 1 DoNotSchedule; "
           "each replica's DefaultSelector is its ReplicaSet's selector. No soft default, so the plugin does "
           "not score. Two replicas (1 cpu each) run on node-a (z1); node-b (z2) has room for two; node-c, "
           "the roomiest, has no zone label and fails every replica (missing required label, "
           "UnschedulableAndUnresolvable). web-7c9d-3: z1 2, z2 0, node-a 2 + 1 - 0 > 1: node-b alone. "
           "web-7c9d-4: min 1, node-a 2 + 1 - 1 > 1: node-b again. web-7c9d-5: z1 2, z2 2, node-a passes "
           "and node-b is full: node-a. web-7c9d-6: z1 3, z2 2, node-a 3 + 1 - 2 > 1, node-b full: no node. "
           "node-a and node-b are Unschedulable, but every pod has priority 0, so preemption finds no "
           "victim there; node-c is not helped by preemption.")

# ===================================================== PrioritySort
G = "PrioritySort"
F = "queuesort/priority_sort_test.go"
PS = UPSTREAM + "framework/plugins/" + F
ONE_SLOT = lambda: [node("node1", {"cpu": "2", "memory": "4Gi"})]
FULL1 = ("0/1 nodes are available: 1 Insufficient cpu. "
         "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.")


for sub, p1prio, p2prio, order, winner, loser in [
        ("p1.priority less than p2.priority", 10, 100, ["p1", "p2"], "p2", "p1"),
        ("p1.priority greater than p2.priority", 100, 10, ["p2", "p1"], "p1", "p2"),
        ("equal priority. p1 is added to schedulingQ earlier than p2", 100, 100, ["p1", "p2"], "p1", "p2"),
        ("equal priority. p2 is added to schedulingQ earlier than p1", 100, 100, ["p2", "p1"], "p2", "p1")]:
    prios = {"p1": p1prio, "p2": p2prio}
    case(G, sub, (f"TestLess/{sub}", PS), ONE_SLOT(),
         [pod(n, {"cpu": "1500m", "memory": "1Gi"}, prio=prios[n]) for n in order],
         binds={f"default/{winner}": "node1"}, unscheduled=[f"default/{loser}"],
         notes="Both pods need 1500m of node1's 2 CPUs; the workload lists them in arrival "
               "(creationTimestamp) order " + " then ".join(order) + ". The loser finds the winner "
               "assumed on node1; the winner's priority is not lower than its own, so preemption "
               "finds no victim.")

case(G, "three priorities, two nodes: the lowest priority arrives first and is left out",
     ("sift-derived: PrioritySort.Less ordering with scoring and assume", PS),
     [node("node-a", {"cpu": "2", "memory": "4Gi"}), node("node-b", {"cpu": "2500m", "memory": "4Gi"})],
     [pod("low", {"cpu": "1500m", "memory": "1Gi"}, prio=5),
      pod("mid", {"cpu": "1500m", "memory": "1Gi"}, prio=50),
      pod("high", {"cpu": "1500m", "memory": "1Gi"}, prio=500)],
     config=None,
     binds={"default/high": "node-b", "default/mid": "node-a"}, unscheduled=["default/low"],
     notes="high goes first and takes node-b (more room left under LeastAllocated), mid takes "
           "node-a, low fits nowhere; both nodes hold pods of higher priority only.")

# ===================================================== ScheduleOne
G = "ScheduleOne"
SO = UPSTREAM + "schedule_one_test.go"

case(G, "one hundred nodes too small: histogram and no preemption help",
     ("TestSchedulerFailedSchedulingReasons", SO),
     [node(f"node{i}", {"cpu": "2", "memory": "100", "pods": "10"}) for i in range(100)],
     [pod("bar", {"cpu": "4", "memory": "500"}, limits={"cpu": "4", "memory": "500"})],
     filters=["NodeResourcesFit"], unscheduled=["default/bar"],
     notes="Upstream's test registers no PostFilter plugin, so its FitError stops after the "
           "histogram; sift simulate runs DefaultPreemption, which adds the preemption part. The "
           "request exceeds every node's allocatable (UnschedulableAndUnresolvable), so no node is "
           "a preemption candidate.")

SPREAD_FOO = lambda skew: [{"maxSkew": skew, "topologyKey": "kubernetes.io/hostname",
                            "whenUnsatisfiable": "DoNotSchedule",
                            "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}}]
HOST_NODES = lambda n: [node(f"node{i}", {"cpu": "4", "memory": "8Gi"}) for i in range(1, n + 1)]

case(G, "test podtopologyspread plugin - 2 nodes with maxskew=1",
     ("TestSchedulerSchedulePod/test podtopologyspread plugin - 2 nodes with maxskew=1", SO),
     HOST_NODES(2), [pod("p", labels={"foo": ""}, spread=SPREAD_FOO(1))],
     pods=[pod("pod1", labels={"foo": ""}, node="node1")],
     binds={"default/p": "node2"})

case(G, "test podtopologyspread plugin - 3 nodes with maxskew=2",
     ("TestSchedulerSchedulePod/test podtopologyspread plugin - 3 nodes with maxskew=2", SO),
     HOST_NODES(3), [pod("p", labels={"foo": ""}, spread=SPREAD_FOO(2))],
     pods=[pod("pod1a", labels={"foo": ""}, node="node1"), pod("pod1b", labels={"foo": ""}, node="node1"),
           pod("pod2", labels={"foo": ""}, node="node2")],
     binds={"default/p": "node3"},
     notes="Upstream accepts node2 or node3 (an equal-score plugin). Here the default scorers decide: "
           "the existing pods have a container without requests, which LeastAllocated counts as "
           "100m/200Mi, so the empty node3 scores 97 against node2's 95.")

case(G, "assumed pods fill the nodes: the third pod gets a FitError",
     ("sift-derived: assume in scheduleOne, then FitError + DefaultPreemption (no victims)", SO),
     [node("node-a", {"cpu": "2", "memory": "4Gi"}), node("node-b", {"cpu": "2500m", "memory": "4Gi"})],
     [pod(f"job-{i}", {"cpu": "1500m", "memory": "1Gi"}) for i in range(3)],
     binds={"default/job-0": "node-b", "default/job-1": "node-a"}, unscheduled=["default/job-2"],
     notes="Each node fits one 1500m pod. The third pod's request fits the allocatable, so the "
           "status is Unschedulable and the dry run looks for victims; the assumed pods have the "
           "same priority (0), so there are none.")

case(G, "failures of both codes: taint is not helped by preemption, cpu has no victims",
     ("sift-derived: FitError histogram + Evaluator.Preempt over mixed statuses", SO),
     [node("node-a", {"cpu": "4", "memory": "8Gi"},
           taints=[{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]),
      node("node-b", {"cpu": "4", "memory": "8Gi"}), node("node-c", {"cpu": "4", "memory": "8Gi"})],
     [pod("analytics", {"cpu": "3", "memory": "1Gi"})],
     pods=[pod("svc-b", {"cpu": "2", "memory": "1Gi"}, node="node-b"),
           pod("svc-c", {"cpu": "2", "memory": "1Gi"}, node="node-c")],
     unscheduled=["default/analytics"],
     notes="node-a's taint is UnschedulableAndUnresolvable, so node-a is not a preemption candidate "
           "(absent from the dry run: \"Preemption is not helpful\"); node-b and node-c lack cpu "
           "(Unschedulable) but hold only priority-0 pods.")

case(G, "preemptionPolicy Never: not eligible to preempt",
     ("sift-derived: DefaultPreemption.PodEligibleToPreemptOthers", SO),
     [node("node1", {"cpu": "2", "memory": "4Gi"})],
     [pod("urgent", {"cpu": "1", "memory": "1Gi"}, prio=1000, policy="Never")],
     pods=[pod("filler", {"cpu": "1500m", "memory": "1Gi"}, node="node1")],
     unscheduled=["default/urgent"],
     notes="filler (priority 0) would be a victim for a priority-1000 pod, but preemptionPolicy "
           "Never stops preemption before any dry run.")

case(G, "victims exist but removing them does not make room",
     ("sift-derived: DefaultPreemption.SelectVictimsOnNode re-running the filters", SO),
     [node("node1", {"cpu": "4", "memory": "8Gi"})],
     [pod("api", {"cpu": "2", "memory": "1Gi"}, prio=100)],
     pods=[pod("system", {"cpu": "3", "memory": "1Gi"}, prio=1000, node="node1"),
           pod("batch", {"cpu": "500m", "memory": "1Gi"}, node="node1")],
     unscheduled=["default/api"],
     notes="batch (priority 0) is the only lower-priority pod; without it node1 still has 3 of 4 "
           "CPUs taken by system (priority 1000), so the dry run's filters reject the node again "
           "with Insufficient cpu.")

case(G, "every node fails unresolvably: preemption is not helpful",
     ("sift-derived: Evaluator.findCandidates with no Unschedulable node", SO),
     [node("node-a", {"cpu": "4", "memory": "8Gi"}, labels={"disk": "hdd"}),
      node("node-b", {"cpu": "4", "memory": "8Gi"}, labels={"disk": "ssd"}, unschedulable=True),
      node("node-c", {"cpu": "4", "memory": "8Gi"}, labels={"disk": "hdd"})],
     [pod("db", {"cpu": "1", "memory": "1Gi"}, prio=100, node_selector={"disk": "ssd"})],
     pods=[pod("old", {"cpu": "1", "memory": "1Gi"}, node="node-a")],
     unscheduled=["default/db"],
     notes="node-b is cordoned, node-a and node-c do not match the selector: every status is "
           "UnschedulableAndUnresolvable, so the priority-0 pod on node-a is never considered.")

case(G, "the pod-count limit fills up",
     ("sift-derived: NodeResourcesFit fitsRequest pod count in the scheduleOne loop", SO),
     [node("node-a", {"cpu": "2", "memory": "8Gi", "pods": "2"}),
      node("node-b", {"cpu": "4", "memory": "16Gi", "pods": "1"})],
     [pod(f"tiny-{i}", {"cpu": "100m", "memory": "128Mi"}) for i in range(4)],
     binds={"default/tiny-0": "node-b", "default/tiny-1": "node-a", "default/tiny-2": "node-a"},
     unscheduled=["default/tiny-3"], messages=False,
     notes="No FitError text is pinned: whether \"Too many pods\" is Unschedulable (then the "
           "preemption part reads \"No preemption victims found\") was not confirmed in upstream's "
           "current fit.go.")


# ===================================================== Preemption
G = "Preemption"
DP = UPSTREAM + "framework/plugins/defaultpreemption/default_preemption_test.go"
PRE = UPSTREAM + "framework/preemption/preemption.go"
SO = UPSTREAM + "schedule_one_test.go"
# default_preemption_test.go's priorities and resources (cpu in millicores,
# memory in bytes); its nodes are st.MakeNode().Capacity(veryLargeRes), which
# also sets 32 pods.
NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
DP_NOTE = ("Nodes are default_preemption_test.go's (cpu 500m, memory 500, pods 32) and only NodeResourcesFit "
           "filters, as the test registers. Every pod here started at time 0 (sift: pods of the case's "
           "\"pods\"), so start time never decides.")


def dp_node(name, labels=None):
    return node(name, dict(VERY_LARGE, pods="32"), labels=labels)


def dp_pod(name, res, prio, node=None, **kw):
    return pod(name, dict(res), node=node, prio=prio, **kw)


case(G, "basic preemption logic",
     ("TestPreempt/basic preemption logic", DP),
     [dp_node("node1"), dp_node("node2"), dp_node("node3")],
     [dp_pod("p", VERY_LARGE, HIGH)],
     pods=[dp_pod("p1.1", SMALL, LOW, node="node1"), dp_pod("p1.2", SMALL, LOW, node="node1"),
           dp_pod("p2.1", LARGE, HIGH, node="node2"), dp_pod("p3.1", MEDIUM, MID, node="node3")],
     filters=["NodeResourcesFit"],
     binds={"default/p": "node1"}, preempted={"default/p": ["default/p1.1", "default/p1.2"]},
     notes=DP_NOTE + " Upstream: nominated node1, victims p1.1 and p1.2. p (500m) fits no node; node2 holds "
           "only a pod of p's own priority (\"No preemption victims found\"), node1's victims have priority "
           "0 and node3's 100, so node1 wins on the lowest highest victim priority. p needs the whole node, "
           "so neither victim is reprieved. The victims leave, p is retried at once and binds to its "
           "nominated node1.")

case(G, "mixed priority pods are preempted: a higher-priority pod is reprieved",
     ("TestDryRunPreemption/mixed priority pods are preempted", DP),
     [dp_node("node1"), dp_node("node2")],
     [dp_pod("p", LARGE, HIGH)],
     pods=[dp_pod("p1.1", SMALL, MID, node="node1"), dp_pod("p1.2", SMALL, LOW, node="node1"),
           dp_pod("p1.3", MEDIUM, MID, node="node1"), dp_pod("p1.4", SMALL, HIGH, node="node1"),
           dp_pod("p2", LARGE, HIGH, node="node2")],
     filters=["NodeResourcesFit"],
     binds={"default/p": "node1"}, preempted={"default/p": ["default/p1.2", "default/p1.3"]},
     notes=DP_NOTE + " Upstream: one candidate, node1, victims p1.2 and p1.3. Without p1.1, p1.2 and p1.3 "
           "(the pods below priority 1000) p fits node1; they are put back most important first: p1.1 "
           "(100, 100m) stays (100 + 100 + 300 = 500m), p1.3 (100, 200m) and p1.2 (0, 100m) do not. So "
           "p1.1, of higher priority than the victim p1.2, is spared. Putting p1.3 back before p1.1 (their "
           "priority and start tie) gives the same victims. node2 holds only a priority-1000 pod.")

case(G, "when highest priorities are the same, minimum sum of priorities is picked",
     ("TestSelectBestCandidate/when highest priorities are the same, minimum sum of priorities is picked", DP),
     [dp_node("node1"), dp_node("node2"), dp_node("node3")],
     [dp_pod("p", VERY_LARGE, HIGH)],
     pods=[dp_pod("p1.1", MEDIUM, MID, node="node1"), dp_pod("p1.2", LARGE, MID, node="node1"),
           dp_pod("p2.1", LARGE, MID, node="node2"), dp_pod("p2.2", MEDIUM, LOW, node="node2"),
           dp_pod("p3.1", MEDIUM, MID, node="node3"), dp_pod("p3.2", MEDIUM, MID, node="node3")],
     filters=["NodeResourcesFit"],
     binds={"default/p": "node2"}, preempted={"default/p": ["default/p2.1", "default/p2.2"]},
     notes=DP_NOTE + " Upstream: node2. p needs a whole node, so every pod of a node is a victim; the highest "
           "victim priority is 100 everywhere, and node2's victims (100 and 0) have the lowest sum.")

case(G, "sum of adjusted priorities is considered",
     ("TestSelectBestCandidate/sum of adjusted priorities is considered", DP),
     [dp_node("node1"), dp_node("node2"), dp_node("node3")],
     [dp_pod("p", VERY_LARGE, HIGH)],
     pods=[dp_pod("p1.1", SMALL, MID, node="node1"), dp_pod("p1.2", SMALL, NEG, node="node1"),
           dp_pod("p1.3", SMALL, NEG, node="node1"),
           dp_pod("p2.1", LARGE, MID, node="node2"), dp_pod("p2.2", MEDIUM, NEG, node="node2"),
           dp_pod("p3.1", MEDIUM, MID, node="node3"), dp_pod("p3.2", SMALL, NEG, node="node3"),
           dp_pod("p3.3", SMALL, LOW, node="node3")],
     filters=["NodeResourcesFit"],
     binds={"default/p": "node2"}, preempted={"default/p": ["default/p2.1", "default/p2.2"]},
     notes=DP_NOTE + " Upstream: node2. Every pod of the chosen node is a victim. The raw sums of the "
           "victims' priorities are -100 (node1), 0 (node2) and 0 (node3), which would pick node1; "
           "pickOneNodeForPreemption adds 2^31 to each priority first, so the sums are 3*2^31 - 100, "
           "2*2^31 and 3*2^31, and node2, with fewer victims, wins.")

BIG_NEG = -(2 ** 30)
case(G, "when highest priority and adjusted sum tie, the fewest victims win",
     ("sift-derived: pickOneNodeForPreemption criterion \"minimum number of pods\" "
      "(TestSelectBestCandidate/when highest priority and sum are the same, minimum number of pods is picked)",
      PRE),
     [dp_node("node1"), dp_node("node2")],
     [dp_pod("p", VERY_LARGE, HIGH)],
     pods=[dp_pod("a", MEDIUM, LOW, node="node1"),
           dp_pod("b", {"cpu": "150m", "memory": "150"}, BIG_NEG, node="node1"),
           dp_pod("c", {"cpu": "150m", "memory": "150"}, BIG_NEG, node="node1"),
           dp_pod("d", {"cpu": "250m", "memory": "250"}, LOW, node="node2"),
           dp_pod("e", {"cpu": "250m", "memory": "250"}, LOW, node="node2")],
     filters=["NodeResourcesFit"],
     binds={"default/p": "node2"}, preempted={"default/p": ["default/d", "default/e"]},
     notes=DP_NOTE + " Upstream's own subtest for this criterion is decided earlier, by the adjusted sum "
           "(its nodes have 4, 2 and 3 victims, sums 4, 2 and 3 times 2^31). Here the sums really tie: "
           "node1's victims have priorities 0, -2^30, -2^30 (sum 3*2^31 - 2^31 = 2^32), node2's 0 and 0 "
           "(2*2^31 = 2^32); the highest is 0 on both, so the third criterion, the fewest victims, picks "
           "node2 although node1 comes first.")

case(G, "pod can be made schedulable on one node (pod count)",
     ("TestPostFilter/pod can be made schedulable on one node", DP),
     [node("node1", {"cpu": "1", "memory": "1Gi", "pods": "1"}),
      node("node2", {"cpu": "1", "memory": "1Gi", "pods": "1"})],
     [pod("p", prio=MID)],
     pods=[pod("p1", node="node1", prio=HIGH), pod("p2", node="node2", prio=LOW)],
     filters=["NodeResourcesFit"],
     binds={"default/p": "node2"}, preempted={"default/p": ["default/p2"]},
     notes="Upstream: nominated node2. The nodes allow one pod each (upstream: Capacity(pods: 1) only; cpu "
           "and memory added here, which nothing requests). \"Too many pods\" is Unschedulable, so both "
           "nodes are potential; node1's pod outranks p, node2's does not. The pods have no containers "
           "upstream; here one container without requests.")

case(G, "no preempting in pod: preemptionPolicy Never",
     ("TestPreempt/no preempting in pod", DP),
     [dp_node("node1"), dp_node("node2"), dp_node("node3")],
     [dp_pod("p", VERY_LARGE, HIGH, policy="Never")],
     pods=[dp_pod("p1.1", SMALL, LOW, node="node1"), dp_pod("p1.2", SMALL, LOW, node="node1"),
           dp_pod("p2.1", LARGE, HIGH, node="node2"), dp_pod("p3.1", MEDIUM, MID, node="node3")],
     filters=["NodeResourcesFit"],
     unscheduled=["default/p"], preempted={},
     notes=DP_NOTE + " Upstream: no nomination, nothing deleted. The cluster of \"basic preemption logic\", "
           "with p's preemptionPolicy Never: the victims on node1 stay.")

SPREAD_ZONE_HOST = [
    {"maxSkew": 1, "topologyKey": k, "whenUnsatisfiable": "DoNotSchedule",
     "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}}
    for k in ("zone", "hostname")]


def zone_node(name, zone):
    return dp_node(name, labels={"hostname": name, "zone": zone})


case(G, "preemption for topology spread constraints",
     ("TestPreempt/preemption for topology spread constraints", DP),
     [zone_node("node-a", "zone1"), zone_node("node-b", "zone1"), zone_node("node-x", "zone2")],
     [pod("p", prio=HIGH, labels={"foo": ""}, spread=SPREAD_ZONE_HOST)],
     pods=[pod("p-a1", node="node-a", prio=HIGH, labels={"foo": ""}),
           pod("p-a2", node="node-a", prio=HIGH, labels={"foo": ""}),
           pod("p-b1", node="node-b", prio=LOW, labels={"foo": ""}),
           pod("p-x1", node="node-x", prio=HIGH, labels={"foo": ""}),
           pod("p-x2", node="node-x", prio=HIGH, labels={"foo": ""})],
     filters=["PodTopologySpread"],
     binds={"default/p": "node-b"}, preempted={"default/p": ["default/p-b1"]},
     notes="Upstream: nominated node-b, victim p-b1; the test registers only PodTopologySpread and labels "
           "the nodes hostname/zone. p (labels foo) must keep skew 1 per zone (zone1 holds 3 matching "
           "pods, zone2 2) and per host (2, 1, 2): node-a and node-b break the zone constraint, node-x the "
           "host one; all three are Unschedulable. Only node-b has a pod below p's priority; without it "
           "zone1 and zone2 hold 2 each and node-b 0, so p fits there.")

ONE_NODE = lambda: [node("node1", {"cpu": "2", "memory": "4Gi"})]
BATCH = lambda: pod("batch", {"cpu": "2", "memory": "1Gi"}, node="node1", prio=0)

case(G, "the preemptor binds to its nominated node; a lower-priority pod does not take the room",
     ("sift-derived: Evaluator.prepareCandidate then the next scheduleOne cycles (schedule_one.go, "
      "RunFilterPluginsWithNominatedPods)", SO),
     ONE_NODE(),
     [pod("late", {"cpu": "1", "memory": "512Mi"}, prio=0),
      pod("urgent", {"cpu": "2", "memory": "1Gi"}, prio=100)],
     pods=[BATCH()],
     binds={"default/urgent": "node1"}, unscheduled=["default/late"],
     preempted={"default/urgent": ["default/batch"]},
     notes="late arrives first but urgent (priority 100) is popped first. urgent fits nowhere, evicts "
           "batch (priority 0), is nominated to node1 and, retried at once, binds there. late (priority "
           "0) then finds node1 full. Upstream holds urgent in backoff for a moment, so late may be tried "
           "before urgent binds: node1 then holds batch (terminating) or urgent's nomination, which counts "
           "for a pod of lower priority; either way late gets the same status, and batch (priority 0) is no "
           "victim for it, so the message is the same in every order.")

case(G, "a pod of equal priority respects the nomination",
     ("sift-derived: addGENominatedPods (framework/runtime/framework.go) counts nominated pods of equal or "
      "higher priority", SO),
     ONE_NODE(),
     [pod("early", {"cpu": "1", "memory": "512Mi"}, prio=100, policy="Never"),
      pod("urgent", {"cpu": "2", "memory": "1Gi"}, prio=100)],
     pods=[BATCH()],
     binds={"default/urgent": "node1"}, unscheduled=["default/early"],
     preempted={"default/urgent": ["default/batch"]},
     notes="early and urgent share priority 100; early arrives first, fits nowhere and may not preempt "
           "(preemptionPolicy Never). urgent evicts batch and is nominated to node1; batch leaving wakes "
           "both, and early, queued first, is retried before urgent. node1 is empty, but urgent's "
           "nomination (priority 100, not lower than early's) fills it in the filter's first pass, so "
           "early fails again and urgent binds. Ignoring the nomination would give node1 to early and "
           "leave urgent pending. Upstream retries early first too (it failed first, so its backoff ends "
           "first); in the other order urgent binds first and early fails with the same message.")

case(G, "a higher-priority pod ignores a lower-priority nomination",
     ("sift-derived: addGENominatedPods skips nominated pods of lower priority; the preemptor may lose the "
      "node (schedule_one.go)", SO),
     ONE_NODE(),
     [pod("vip", {"cpu": "2", "memory": "1Gi"}, prio=1000, policy="Never"),
      pod("urgent", {"cpu": "2", "memory": "1Gi"}, prio=100)],
     pods=[BATCH()],
     binds={"default/vip": "node1"}, unscheduled=["default/urgent"],
     preempted={"default/urgent": ["default/batch"]},
     notes="vip (priority 1000, preemptionPolicy Never) fails first. urgent evicts batch and is nominated "
           "to node1; both are retried, vip first (higher priority). urgent's nomination has lower "
           "priority than vip, so it does not count for vip, which binds to node1. urgent fails again: "
           "vip outranks it, so there is no victim left (upstream then clears urgent's nomination). Upstream "
           "retries vip first too: it failed earlier, so its backoff ends first.")

case(G, "two preemptors: the second one preempts on the other node",
     ("sift-derived: two scheduleOne cycles with DefaultPreemption (schedule_one.go, "
      "pickOneNodeForPreemption)", SO),
     [node("node1", {"cpu": "2", "memory": "4Gi"}), node("node2", {"cpu": "2", "memory": "4Gi"})],
     [pod("job-a", {"cpu": "2", "memory": "1Gi"}, prio=100),
      pod("job-b", {"cpu": "2", "memory": "1Gi"}, prio=100)],
     pods=[pod("low", {"cpu": "2", "memory": "1Gi"}, node="node1", prio=0),
           pod("mid", {"cpu": "2", "memory": "1Gi"}, node="node2", prio=10)],
     binds={"default/job-a": "node1", "default/job-b": "node2"},
     preempted={"default/job-a": ["default/low"], "default/job-b": ["default/mid"]},
     notes="job-a may evict low (priority 0) on node1 or mid (priority 10) on node2 and picks node1 (lowest "
           "highest victim priority), then binds there. job-b finds node1 held by job-a, of its own "
           "priority (no victim), and evicts mid on node2. Upstream may try job-b while job-a is only "
           "nominated: node1 then still fails with low removed, since job-a's nomination counts for an "
           "equal priority; the outcome is the same.")



case(G, "a preemptor that finds no victim on its retry loses its nomination",
     ("sift-derived: Evaluator.Preempt returns NewPostFilterResultWithNominatedNode(\"\") when no candidate is "
      "found; handleSchedulingFailure passes it to the nominator, which drops the nomination", PRE),
     [node("node1", {"cpu": "3", "memory": "8Gi"})],
     [pod("vip", {"cpu": "1", "memory": "1Gi"}, prio=1000, policy="Never"),
      pod("urgent", {"cpu": "2", "memory": "1Gi"}, prio=100),
      pod("small", {"cpu": "1", "memory": "1Gi"}, prio=50)],
     pods=[pod("base", {"cpu": "1", "memory": "1Gi"}, node="node1", prio=2000),
           pod("batch", {"cpu": "2", "memory": "1Gi"}, node="node1", prio=0)],
     binds={"default/vip": "node1", "default/small": "node1"}, unscheduled=["default/urgent"],
     preempted={"default/urgent": ["default/batch"]},
     notes="node1 (3 CPUs) is full. vip (1000, preemptionPolicy Never) fails; urgent (100) evicts batch "
           "and is nominated to node1, which now has 2 CPUs free; both are retried, vip first, and vip "
           "(ignoring the lower nomination) takes 1 CPU. urgent fails again with no victim left (base and "
           "vip outrank it): Preempt returns an empty nominated node, so urgent's nomination is cleared. "
           "small (50) then fits the last CPU. Were urgent's nomination kept, it would count for small "
           "(lower priority) and leave small pending. Upstream may try small once before (while urgent "
           "is nominated and batch terminating; it fails then), but after batch leaves the pods come back "
           "in the order vip, urgent, small (priority, and backoffs that end in failure order).")


# --- PodDisruptionBudgets. The scheduler reads a PDB's status as it finds it;
# in a simulation no disruption controller runs, so every status stays as the
# case gives it (deleting a victim changes no PDB).
DPGO = UPSTREAM + "framework/plugins/defaultpreemption/default_preemption.go"
FOO = {"app": "foo"}
PDB_DRY_NOTE = (" Upstream's PDB has no name and, like the test's pods, the empty namespace; here it is pdb-foo in "
                "default. Its selector is matchLabels app=foo.")

case(G, "preemption with violation of same pdb",
     ("TestDryRunPreemption/preemption with violation of same pdb", DP),
     [dp_node("node1")],
     [dp_pod("p", VERY_LARGE, HIGH)],
     pods=[dp_pod("p1.1", MEDIUM, MID, node="node1", labels=FOO),
           dp_pod("p1.2", MEDIUM, MID, node="node1", labels=FOO)],
     objects=[pdb("pdb-foo", {"matchLabels": FOO}, 1)],
     filters=["NodeResourcesFit"],
     binds={"default/p": "node1"}, preempted={"default/p": ["default/p1.1", "default/p1.2"]},
     candidates={"default/p": [("node1", ["default/p1.1", "default/p1.2"], 1)]},
     notes=DP_NOTE + PDB_DRY_NOTE + " Upstream: one candidate, node1, victims p1.1 and p1.2 with NumPDBViolations "
           "1. The PDB allows one disruption: the first pod in importance order uses it, the second is "
           "violating. p needs the whole node, so both go, and the violating one counts one violation. A PDB "
           "is best effort: with no other node, p still preempts and binds. Which of the two (equal priority "
           "and start) is the violating one does not change the victims or the count.")

case(G, "preemption with violation of the pdb, the victim doesn't belong to DisruptedPods",
     ("TestDryRunPreemption/preemption with violation of the pdb with pod whose eviction was processed, "
      "the victim doesn't belong to DisruptedPods", DP),
     [dp_node("node1")],
     [dp_pod("p", VERY_LARGE, HIGH)],
     pods=[dp_pod("p1.1", MEDIUM, MID, node="node1", labels=FOO),
           dp_pod("p1.2", MEDIUM, MID, node="node1", labels=FOO)],
     objects=[pdb("pdb-foo", {"matchLabels": FOO}, 1, disrupted=["p2"])],
     filters=["NodeResourcesFit"],
     binds={"default/p": "node1"}, preempted={"default/p": ["default/p1.1", "default/p1.2"]},
     candidates={"default/p": [("node1", ["default/p1.1", "default/p1.2"], 1)]},
     notes=DP_NOTE + PDB_DRY_NOTE + " Upstream: victims p1.1 and p1.2, NumPDBViolations 1. status.disruptedPods "
           "lists p2, a pod that is not on the node (not in the cluster at all), so it changes nothing: the "
           "same outcome as \"preemption with violation of same pdb\".")

case(G, "preemption with violation of the pdb, the victim belongs to DisruptedPods",
     ("TestDryRunPreemption/preemption with violation of the pdb with pod whose eviction was processed, "
      "the victim belongs to DisruptedPods", DP),
     [dp_node("node1")],
     [dp_pod("p", VERY_LARGE, HIGH)],
     pods=[dp_pod("p1.1", MEDIUM, MID, node="node1", labels=FOO),
           dp_pod("p1.2", MEDIUM, MID, node="node1", labels=FOO)],
     objects=[pdb("pdb-foo", {"matchLabels": FOO}, 1, disrupted=["p1.2"])],
     filters=["NodeResourcesFit"],
     binds={"default/p": "node1"}, preempted={"default/p": ["default/p1.1", "default/p1.2"]},
     candidates={"default/p": [("node1", ["default/p1.1", "default/p1.2"], 0)]},
     notes=DP_NOTE + PDB_DRY_NOTE + " Upstream: victims p1.1 and p1.2, NumPDBViolations 0. p1.2 is in "
           "status.disruptedPods (its eviction was already processed by the API server), so it is not "
           "charged to the PDB; p1.1 alone uses the one allowed disruption. Only the violation count differs "
           "from \"preemption with violation of same pdb\"; with a single candidate it decides nothing "
           "here (Preemption/022 makes it decide the node).")

case(G, "preemption with violation of the pdb, the victim in DisruptedPods is treated as non-violating",
     ("TestDryRunPreemption/preemption with violation of the pdb with pod whose eviction was processed, "
      "the victim which belongs to DisruptedPods is treated as 'nonViolating'", DP),
     [dp_node("node1")],
     [dp_pod("p", VERY_LARGE, HIGH)],
     pods=[dp_pod("p1.1", SMALL, MID, node="node1", labels=FOO),
           dp_pod("p1.2", SMALL, MID, node="node1", labels=FOO),
           dp_pod("p1.3", SMALL, MID, node="node1", labels=FOO)],
     objects=[pdb("pdb-foo", {"matchLabels": FOO}, 1, disrupted=["p1.3"])],
     filters=["NodeResourcesFit"],
     binds={"default/p": "node1"},
     preempted={"default/p": ["default/p1.1", "default/p1.2", "default/p1.3"]},
     candidates={"default/p": [("node1", ["default/p1.1", "default/p1.2", "default/p1.3"], 1)]},
     notes=DP_NOTE + PDB_DRY_NOTE + " Upstream: victims p1.1, p1.2, p1.3, NumPDBViolations 1. Upstream's three "
           "pods request 200m each on a 500m node (600m: the test's snapshot does not check); here they "
           "request 100m (SMALL), which still leaves no room for p (500m) beside any of them, so all three "
           "are victims as upstream. p1.3, in status.disruptedPods, is non-violating and not charged; of "
           "p1.1 and p1.2 the first uses the one allowed disruption and the second is violating: one "
           "violation, whatever the order of the three equal pods.")

case(G, "preemption looks past the candidates a PDB violates to a node without violations",
     ("TestDryRunPreemption/preemption looks past numCandidates until a non-PDB violating node is found", DP),
     [dp_node(f"node{i}") for i in range(1, 6)],
     [dp_pod("p", LARGE, HIGH)],
     pods=[dp_pod("p1", LARGE, MID, node="node1", labels=FOO),
           dp_pod("p2", LARGE, MID, node="node2", labels=FOO),
           dp_pod("p3", LARGE, MID, node="node3"),
           dp_pod("p4", LARGE, MID, node="node4", labels=FOO),
           dp_pod("p5", LARGE, MID, node="node5", labels=FOO)],
     objects=[pdb("pdb-foo", {"matchLabels": FOO}, 0)],
     filters=["NodeResourcesFit"],
     binds={"default/p": "node3"}, preempted={"default/p": ["default/p3"]},
     candidates={"default/p": [("node3", ["default/p3"], 0), ("node1", ["default/p1"], 1),
                               ("node2", ["default/p2"], 1), ("node4", ["default/p4"], 1),
                               ("node5", ["default/p5"], 1)]},
     notes=DP_NOTE + PDB_DRY_NOTE + " Upstream sets minCandidateNodesPercentage 40 / minCandidateNodesAbsolute "
           "2 (numCandidates 2) and offset 4, and expects candidates node1 and node5 (one PDB violation "
           "each) and node3 (none): the dry run visits node5, node1, node2 (violating, dropped: the "
           "violating list is full) and stops at node3, the first node without a violation. sift's "
           "minCandidateNodes are the defaults 10%/100, so numCandidates is 5 and all five nodes are dry-run; "
           "with upstream's pods node3 and node4 would both be free of violations and tie on every "
           "criterion (upstream: map order). Adapted: p4 also carries app=foo, so node3 is the only node "
           "whose victim the PDB (0 disruptions allowed) does not cover. The candidates are then the "
           "non-violating node3 and the violating node1, node2, node4, node5, and p preempts p3 on node3 on "
           "the first criterion, fewest PDB violations, although node1 comes first (without PDBs the five "
           "candidates would tie on every criterion). With upstream's args and offset the adapted case also "
           "stops at node3 and picks it.")

IS_VIOLATING = "test.kubernetes.io/is-violating-pdb"
case(G, "pod can be made schedulable on minHighestPriority node (PDB violations tie)",
     ("TestPostFilter/pod can be made schedulable on minHighestPriority node", DP),
     [node("node1", {"cpu": "1", "memory": "4Gi"}), node("node2", {"cpu": "1", "memory": "4Gi"})],
     [pod("p", {"cpu": "1", "memory": "512Mi"}, prio=VERY_HIGH)],
     pods=[pod("p1", {"cpu": "500m", "memory": "256Mi"}, node="node1", prio=HIGH,
               labels={IS_VIOLATING: "non-violating"}),
           pod("p2", {"cpu": "500m", "memory": "256Mi"}, node="node1", prio=LOW,
               labels={IS_VIOLATING: "violating"}),
           pod("p3", {"cpu": "1", "memory": "512Mi"}, node="node2", prio=MID,
               labels={IS_VIOLATING: "violating"})],
     objects=[pdb("violating-pdb", {"matchLabels": {IS_VIOLATING: "violating"}}, 0, min_available="100%"),
              pdb("non-violating-pdb", {"matchLabels": {IS_VIOLATING: "non-violating"}}, 2 ** 31 - 1,
                  min_available=0)],
     filters=["NodeResourcesFit"],
     binds={"default/p": "node2"}, preempted={"default/p": ["default/p3"]},
     candidates={"default/p": [("node1", ["default/p1", "default/p2"], 1), ("node2", ["default/p3"], 1)]},
     notes="Upstream: nominated node2. Upstream's nodes allow one pod each (Capacity(pods: 1)) and node1 holds "
           "two; p requests nothing, so any pod left on a node keeps p out. Adapted to cpu so that no node "
           "is overfull: each node has 1 CPU, p requests 1 CPU, p1 and p2 500m each, p3 1 CPU; every "
           "pod still has to go from the node p takes. The PDBs are upstream's: violating-pdb (minAvailable "
           "100%, 0 disruptions allowed) covers p2 and p3, non-violating-pdb (minAvailable 0, "
           "disruptionsAllowed 2147483647 as upstream sets it; a disruption controller would report 1) "
           "covers p1. node1: p2 is violating and put back first, but p does not fit beside it; p1 "
           "(non-violating) neither: victims p1 and p2, one violation. node2: victim p3, one violation. "
           "The first criterion ties at one violation each, and node2 wins on the lowest highest victim "
           "priority (100 against node1's 1000).")

case(G, "a PDB decides the node: the preemptor avoids the victim it covers",
     ("sift-derived: pickOneNodeForPreemption's first criterion, the fewest PDB violations", PRE),
     [node("node1", {"cpu": "2", "memory": "4Gi"}), node("node2", {"cpu": "2", "memory": "4Gi"})],
     [pod("urgent", {"cpu": "2", "memory": "1Gi"}, prio=100)],
     pods=[pod("ledger-0", {"cpu": "2", "memory": "1Gi"}, node="node1", prio=0, labels={"app": "ledger"}),
           pod("report", {"cpu": "2", "memory": "1Gi"}, node="node2", prio=10)],
     objects=[pdb("ledger", {"matchLabels": {"app": "ledger"}}, 0)],
     binds={"default/urgent": "node2"}, preempted={"default/urgent": ["default/report"]},
     candidates={"default/urgent": [("node2", ["default/report"], 0), ("node1", ["default/ledger-0"], 1)]},
     notes="Both nodes are full; urgent (priority 100) needs a whole node. node1's only pod, ledger-0 "
           "(priority 0), is covered by the PDB ledger, which allows no disruption; node2's, report (priority "
           "10), by none. Without PDBs node1 would win (lowest highest victim priority, 0 against 10); with "
           "them node1's candidate has one PDB violation and node2's none, and the first criterion picks "
           "node2. urgent evicts report and binds to node2; ledger-0 stays.")

case(G, "a PDB that allows one disruption changes which victim is reprieved",
     ("sift-derived: SelectVictimsOnNode reprieves the PDB-violating pods first "
      "(filterPodsWithPDBViolation)", DPGO),
     [node("node1", {"cpu": "2", "memory": "4Gi"})],
     [pod("urgent", {"cpu": "1", "memory": "1Gi"}, prio=100)],
     pods=[pod("web-a", {"cpu": "1", "memory": "1Gi"}, node="node1", prio=10, labels={"app": "web"}),
           pod("web-b", {"cpu": "1", "memory": "1Gi"}, node="node1", prio=5, labels={"app": "web"})],
     objects=[pdb("web", {"matchLabels": {"app": "web"}}, 1)],
     binds={"default/urgent": "node1"}, preempted={"default/urgent": ["default/web-a"]},
     candidates={"default/urgent": [("node1", ["default/web-a"], 0)]},
     notes="node1 (2 CPUs) holds web-a (priority 10) and web-b (priority 5), 1 CPU each; urgent (priority 100, "
           "1 CPU) needs one of them gone. Without PDBs the reprieve goes most important first: web-a stays, "
           "web-b is the victim. The PDB web covers both and allows one disruption: in importance order "
           "web-a uses it (non-violating) and web-b would exceed it (violating). Violating pods are put back "
           "first, so web-b stays and web-a, the pod of higher priority, is evicted, with no PDB violation. "
           "(With 0 disruptions allowed both would be violating and web-b would go, one violation.)")

case(G, "a victim listed in the PDB's disruptedPods is not charged",
     ("sift-derived: filterPodsWithPDBViolation skips pods in status.disruptedPods; pickOneNodeForPreemption",
      DPGO),
     [node(f"node{i}", {"cpu": "2", "memory": "4Gi"}) for i in range(1, 4)],
     [pod("urgent", {"cpu": "2", "memory": "1Gi"}, prio=100)],
     pods=[pod("web-a", {"cpu": "2", "memory": "1Gi"}, node="node1", prio=0, labels={"app": "web"}),
           pod("web-b", {"cpu": "2", "memory": "1Gi"}, node="node2", prio=5, labels={"app": "web"}),
           pod("job", {"cpu": "2", "memory": "1Gi"}, node="node3", prio=10)],
     objects=[pdb("web", {"matchLabels": {"app": "web"}}, 0, disrupted=["web-b"])],
     binds={"default/urgent": "node2"}, preempted={"default/urgent": ["default/web-b"]},
     candidates={"default/urgent": [("node2", ["default/web-b"], 0), ("node3", ["default/job"], 0),
                                    ("node1", ["default/web-a"], 1)]},
     notes="Three full nodes, one pod each; urgent needs a whole node. The PDB web (minAvailable 1) covers "
           "web-a and web-b and allows no disruption; web-b is in its status.disruptedPods (an eviction the "
           "API server already granted), so it is not charged. node1's web-a is one violation, node2's web-b "
           "and node3's job none; of node2 and node3, node2 has the lower victim priority (5 against 10). "
           "Without PDBs urgent would take node1 (priority 0); charging web-b too would leave node3 alone "
           "without a violation.")

case(G, "every PDB that covers a victim is charged",
     ("sift-derived: filterPodsWithPDBViolation decrements every matching PDB, also after one is violated",
      DPGO),
     [node("node1", {"cpu": "2", "memory": "4Gi"}), node("node2", {"cpu": "2", "memory": "4Gi"})],
     [pod("urgent", {"cpu": "2", "memory": "1Gi"}, prio=100)],
     pods=[pod("api-0", {"cpu": "1", "memory": "1Gi"}, node="node1", prio=20,
               labels={"app": "api", "team": "core"}),
           pod("worker-0", {"cpu": "1", "memory": "1Gi"}, node="node1", prio=10,
               labels={"app": "worker", "team": "core"}),
           pod("api-1", {"cpu": "2", "memory": "1Gi"}, node="node2", prio=30, labels={"app": "api"})],
     objects=[pdb("api", {"matchLabels": {"app": "api"}}, 0),
              pdb("team-core", {"matchLabels": {"team": "core"}}, 1)],
     binds={"default/urgent": "node2"}, preempted={"default/urgent": ["default/api-1"]},
     candidates={"default/urgent": [("node1", ["default/api-0", "default/worker-0"], 2),
                                    ("node2", ["default/api-1"], 1)]},
     notes="urgent needs a whole node. On node1, api-0 (priority 20, first in importance order) is covered by "
           "the PDB api (0 allowed: violating) and by team-core (1 allowed: charged down to 0); worker-0 "
           "(priority 10) by team-core alone, now exhausted, so it is violating too: two violations. On "
           "node2 api-1 is covered by api: one violation. node2 wins on the fewest PDB violations. Stopping "
           "at the first violated PDB would leave team-core's disruption for worker-0, node1 at one "
           "violation, and node1 would win on priority (20 against 30), as it would without PDBs.")

case(G, "PDB label selectors: In, NotIn, Exists, DoesNotExist, namespace, empty and absent selectors",
     ("sift-derived: filterPodsWithPDBViolation matching through metav1.LabelSelectorAsSelector", DPGO),
     [node(f"node{i}", {"cpu": "1", "memory": "4Gi"}) for i in range(1, 5)],
     [pod("urgent", {"cpu": "1", "memory": "1Gi"}, prio=100)],
     pods=[pod("db-0", {"cpu": "1", "memory": "1Gi"}, node="node1", prio=10, labels={"app": "db"}),
           pod("web-0", {"cpu": "1", "memory": "1Gi"}, node="node2", prio=20,
               labels={"app": "web", "tier": "front"}),
           pod("api-0", {"cpu": "1", "memory": "1Gi"}, node="node3", prio=30, labels={"app": "api"}),
           pod("api-canary", {"cpu": "1", "memory": "1Gi"}, node="node4", prio=40,
               labels={"app": "api", "tier": "back", "track": "canary", "canary": "true"})],
     objects=[pdb("db-or-cache", {"matchExpressions": [
                  {"key": "app", "operator": "In", "values": ["db", "cache"]}]}, 0),
              pdb("tiered-not-canary", {"matchExpressions": [
                  {"key": "track", "operator": "NotIn", "values": ["canary"]},
                  {"key": "tier", "operator": "Exists"}]}, 0),
              pdb("api-stable", {"matchLabels": {"app": "api"}, "matchExpressions": [
                  {"key": "canary", "operator": "DoesNotExist"}]}, 0),
              pdb("api", {"matchLabels": {"app": "api"}}, 0, ns="other"),
              pdb("empty-selector", {}, 0),
              pdb("no-selector", NO_SELECTOR, 0)],
     binds={"default/urgent": "node4"}, preempted={"default/urgent": ["default/api-canary"]},
     candidates={"default/urgent": [("node4", ["default/api-canary"], 0), ("node1", ["default/db-0"], 1),
                                    ("node2", ["default/web-0"], 1), ("node3", ["default/api-0"], 1)]},
     notes="Four full nodes, one pod each (priorities 10, 20, 30, 40); urgent needs a whole node. Every PDB "
           "allows no disruption. db-0 is covered by db-or-cache (app In [db, cache]); web-0 by "
           "tiered-not-canary (track NotIn [canary] holds for a pod without the key; tier Exists); api-0 by "
           "api-stable (matchLabels app=api, canary DoesNotExist). api-canary is covered by none: app=api "
           "is not In [db, cache], track=canary fails NotIn, its canary label fails DoesNotExist; the PDB "
           "api selects it by label but lives in namespace other; empty-selector ({}) and no-selector "
           "(spec.selector absent) match nothing for the scheduler (under policy/v1 the disruption controller "
           "counts every pod of the namespace for an empty selector, hence its status). So node4 is the only "
           "candidate without a PDB violation and wins on the first criterion. A matcher that missed In "
           "would pick node1, one that missed NotIn on a missing key or Exists node2, one that missed "
           "DoesNotExist node3; one that matched api-canary (DoesNotExist always true, namespace ignored, "
           "an empty or absent selector matching all) node1, as would no PDB support.")

case(G, "a pod without labels is covered by no PDB",
     ("sift-derived: filterPodsWithPDBViolation skips pods without labels", DPGO),
     [node(f"node{i}", {"cpu": "1", "memory": "4Gi"}) for i in range(1, 4)],
     [pod("urgent", {"cpu": "1", "memory": "1Gi"}, prio=100)],
     pods=[pod("x-0", {"cpu": "1", "memory": "1Gi"}, node="node1", prio=10, labels={"app": "x"}),
           pod("plain", {"cpu": "1", "memory": "1Gi"}, node="node2", prio=20),
           pod("canary-0", {"cpu": "1", "memory": "1Gi"}, node="node3", prio=30, labels={"canary": "true"})],
     objects=[pdb("x", {"matchLabels": {"app": "x"}}, 0),
              pdb("non-canary", {"matchExpressions": [{"key": "canary", "operator": "DoesNotExist"}]}, 0)],
     binds={"default/urgent": "node2"}, preempted={"default/urgent": ["default/plain"]},
     candidates={"default/urgent": [("node2", ["default/plain"], 0), ("node3", ["default/canary-0"], 0),
                                    ("node1", ["default/x-0"], 1)]},
     notes="Three full nodes, one pod each; urgent needs a whole node. Both PDBs allow no disruption. x-0 "
           "(priority 10) is covered by x (and by non-canary): one violation. plain (priority 20) has no "
           "labels; non-canary's selector (canary DoesNotExist) would match it, but upstream checks a pod's "
           "labels first and a pod without any is covered by no PDB. canary-0 (priority 30) fails "
           "DoesNotExist. node2 and node3 are free of violations and node2 has the lower victim priority. "
           "Matching plain would leave node3 alone without a violation; without PDBs node1 would win.")


# =================================================================== writer
def slug(s):
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")[:70]


def finish(c, cid):
    """Fills uids and timestamps, runs the model, checks, returns the JSON object."""
    for n in c["nodes"]:
        n["metadata"]["uid"] = uid(cid, "node", n["metadata"]["name"])
    for i, p in enumerate(c["pods"]):
        p["metadata"]["uid"] = uid(cid, "pod", p["metadata"]["namespace"], p["metadata"]["name"])
        p["metadata"]["creationTimestamp"] = f"2025-01-01T00:{i // 60:02d}:{i % 60:02d}Z"
    for i, p in enumerate(c["workload"]):
        p["metadata"]["uid"] = uid(cid, "pod", p["metadata"]["namespace"], p["metadata"]["name"])
        p["metadata"]["creationTimestamp"] = f"2025-01-02T00:{i // 60:02d}:{i % 60:02d}Z"

    for o in c["objects"]:
        if o["kind"] == "PodDisruptionBudget":
            o["metadata"]["uid"] = uid(cid, "pdb", o["metadata"]["namespace"], o["metadata"]["name"])
            pdb_status(o, c["pods"])
        else:
            assert o["kind"] in model.WORKLOAD_KINDS, o["kind"]
            o["metadata"]["uid"] = uid(cid, o["kind"].lower(), o["metadata"]["namespace"], o["metadata"]["name"])
    pdbs = [o for o in c["objects"] if o["kind"] == "PodDisruptionBudget"]
    workloads = [o for o in c["objects"] if o["kind"] in model.WORKLOAD_KINDS]
    for p in c["pods"] + c["workload"]:
        for ref in p["metadata"].get("ownerReferences") or []:
            # the owner's uid when the case has it (same kind, namespace, name), else a made-up one
            found = next((o for o in workloads if o["kind"] == ref["kind"]
                          and o["metadata"]["namespace"] == p["metadata"]["namespace"]
                          and o["metadata"]["name"] == ref["name"]), None)
            ref["uid"] = (found["metadata"]["uid"] if found is not None
                          else uid(cid, "owner", ref["apiVersion"], ref["kind"], ref["name"]))

    ns_labels = {n["metadata"]["name"]: n["metadata"].get("labels") or {} for n in c["namespaces"]}
    binds, unscheduled, messages, preempted, trace = model.simulate(
        c["nodes"], c["pods"], c["workload"], c["config"], c["filters"], pdbs, c["ties"], ns_labels, workloads)
    bound_total = len(binds)
    tied = {t["pod"] for t in trace if t.get("tie")}
    binds = {k: v for k, v in binds.items() if k not in tied}
    if binds != c["binds"]:
        raise AssertionError(f"{cid}: model binds {binds}, table says {c['binds']}\n{trace}")
    if sorted(unscheduled) != sorted(c["unscheduled"]):
        raise AssertionError(f"{cid}: model unscheduled {unscheduled}, table says {c['unscheduled']}")
    got_preempted = {k: sorted(v) for k, v in preempted.items()}
    if c["preempted"] is None:
        if got_preempted:
            raise AssertionError(f"{cid}: the model preempts {got_preempted}; the table states no `preempted`")
    else:
        want_preempted = {k: sorted(v) for k, v in c["preempted"].items() if v}
        if got_preempted != want_preempted:
            raise AssertionError(f"{cid}: model preempts {got_preempted}, table says {want_preempted}\n{trace}")
    for k, want in (c["candidates"] or {}).items():
        got = next((t["preempt"]["candidates"] for t in trace if t["pod"] == k and "preempt" in t), None)
        want = [(n, sorted(vs), nv) for n, vs, nv in want]
        got = got and [(n, sorted(vs), nv) for n, vs, nv in got]
        if got != want:
            raise AssertionError(f"{cid}: model dry run for {k} gives {got}, table says {want}\n{trace}")
    if c["upstream"] is not None or c["scores"] is not None:
        # the first workload pod, scored over the nodes that pass the case's filters
        states = [model.NodeState(n) for n in c["nodes"]]
        by = {s.name: s for s in states}
        for p in c["pods"]:
            by[p["spec"]["nodeName"]].add(p)
        plugins = model.score_plugins(c["config"])
        first = model.with_spread(c["workload"][0], workloads, c["config"])
        filters = c["filters"] if c["filters"] is not None else model.DEFAULT_FILTERS
        feasible = [s for s in states if model.run_filters(first, s, states, filters) is None]
        got = model.plugin_scores(first, feasible, plugins, states, ns_labels)
        if c["upstream"] is not None:
            # upstream's scoring tests: the one enabled plugin
            assert len(plugins) == 1, cid
            if got[plugins[0][0]] != c["upstream"]:
                raise AssertionError(f"{cid}: model scores {got[plugins[0][0]]}, upstream expects {c['upstream']}")
        for plugin, want in (c["scores"] or {}).items():
            if got[plugin] != want:
                raise AssertionError(f"{cid}: model scores {plugin} {got[plugin]}, table says {want}")

    test, path = c["source"]
    out = {"name": c["name"], "source": test, "mode": "scheduler"}
    notes = [f"Upstream: {path}."]
    if c["upstream"] is not None:
        notes.append("Upstream expected scores: " + ", ".join(
            f"{k}={v}" for k, v in c["upstream"].items()) + "; the pod binds to the highest.")
    if c["scores"]:
        notes.append("Expected scores of the first workload pod (by hand, checked against the model): " + "; ".join(
            f"{plugin} " + ", ".join(f"{k}={v}" for k, v in want.items()) for plugin, want in c["scores"].items())
            + ".")
    if c["notes"]:
        notes.append(c["notes"])
    steps = []
    for t in trace:
        if "total" in t:
            steps.append(f"{t['pod']}: " + ", ".join(f"{n}={v}" for n, v in t["total"].items())
                         + (f" -> a tie ({', '.join(t['tie'])})" if t.get("tie") else f" -> {t['host']}"))
        elif "only" in t:
            steps.append(f"{t['pod']}: only {t['only']} passes the filters")
        elif "nominated" in t:
            steps.append(f"{t['pod']}: its nominated node {t['nominated']} passes the filters")
        elif "preempt" in t:
            pr = t["preempt"]
            if c["objects"]:
                cands = ", ".join(f"{n} [{', '.join(vs)}] ({nv} PDB violation{'' if nv == 1 else 's'})"
                                  for n, vs, nv in pr["candidates"])
            else:
                cands = ", ".join(f"{n} [{', '.join(vs)}]" for n, vs, _ in pr["candidates"])
            steps.append(f"{t['pod']}: no node passes the filters, preempts {', '.join(pr['victims'])} "
                         f"on {pr['node']} (candidates {cands}; picked: {pr['why']}), is nominated there")
        else:
            steps.append(f"{t['pod']}: no node passes the filters")
    notes.append("Model (docs/upstream/simulate/model.py), weighted totals per step: " + "; ".join(steps) + ".")
    out["notes"] = " ".join(notes)
    if c["config"] is not None:
        out["config"] = c["config"]
    if c["filters"] is not None:
        out["filters"] = c["filters"]
    out["nodes"] = c["nodes"]
    if c["namespaces"]:
        out["namespaces"] = c["namespaces"]
    out["pods"] = c["pods"]
    out["workload"] = c["workload"]
    if c["objects"]:
        out["objects"] = c["objects"]
    expect = {}
    if binds:
        expect["binds"] = binds
    if unscheduled:
        expect["unscheduled"] = sorted(unscheduled)
        if c["messages"]:
            expect["messages"] = {k: messages[k] for k in sorted(messages)}
    if c["preempted"] is not None:
        keys = sorted(model.key(p) for p in c["workload"])
        expect["preempted"] = {k: got_preempted.get(k, []) for k in keys}
    expect["bindCount"] = bound_total
    if c["upstream"] is not None and not c["unscheduled"]:
        # upstream's scores, node by node (its scoring tests run no filter;
        # here every scored node passes the case's filters)
        expect["scores"] = {model.score_plugins(c["config"])[0][0]: c["upstream"]}
    if c["scores"]:
        expect.setdefault("scores", {}).update(c["scores"])
    out["expect"] = expect
    return out


# Messages pinned by hand, checked against the model (the model computes them
# from the rules above; these literals are what a reader can compare with a
# real cluster's events).
WANT_MESSAGES = {
    ("LeastAllocated", "requested resources exceed node capacity: the pod fits nowhere"): {
        "default/incoming": "0/2 nodes are available: 2 Insufficient cpu. "
                            "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."},
    ("ScheduleOne", "one hundred nodes too small: histogram and no preemption help"): {
        "default/bar": "0/100 nodes are available: 100 Insufficient cpu, 100 Insufficient memory. "
                       "preemption: 0/100 nodes are available: 100 Preemption is not helpful for scheduling."},
    ("ScheduleOne", "assumed pods fill the nodes: the third pod gets a FitError"): {
        "default/job-2": "0/2 nodes are available: 2 Insufficient cpu. "
                         "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."},
    ("ScheduleOne", "failures of both codes: taint is not helped by preemption, cpu has no victims"): {
        "default/analytics": "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. "
                             "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
                             "2 No preemption victims found for incoming pod."},
    ("ScheduleOne", "preemptionPolicy Never: not eligible to preempt"): {
        "default/urgent": "0/1 nodes are available: 1 Insufficient cpu. "
                          "preemption: not eligible due to preemptionPolicy=Never."},
    ("ScheduleOne", "victims exist but removing them does not make room"): {
        "default/api": "0/1 nodes are available: 1 Insufficient cpu. "
                       "preemption: 0/1 nodes are available: 1 Insufficient cpu."},
    ("ScheduleOne", "every node fails unresolvably: preemption is not helpful"): {
        "default/db": "0/3 nodes are available: 1 node(s) were unschedulable, "
                      "2 node(s) didn't match Pod's node affinity/selector. "
                      "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."},
    ("Preemption", "no preempting in pod: preemptionPolicy Never"): {
        "default/p": "0/3 nodes are available: 3 Insufficient cpu, 3 Insufficient memory. "
                     "preemption: not eligible due to preemptionPolicy=Never."},
    ("Preemption", "the preemptor binds to its nominated node; a lower-priority pod does not take the room"): {
        "default/late": "0/1 nodes are available: 1 Insufficient cpu. "
                        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."},
    ("Preemption", "a pod of equal priority respects the nomination"): {
        "default/early": "0/1 nodes are available: 1 Insufficient cpu. "
                         "preemption: not eligible due to preemptionPolicy=Never."},
    ("Preemption", "a higher-priority pod ignores a lower-priority nomination"): {
        "default/urgent": "0/1 nodes are available: 1 Insufficient cpu. "
                          "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."},
    ("Preemption", "a preemptor that finds no victim on its retry loses its nomination"): {
        "default/urgent": "0/1 nodes are available: 1 Insufficient cpu. "
                          "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."},
    ("PodTopologySpread", "List default constraints that are DoNotSchedule filter each replica"): {
        "default/web-7c9d-6": "0/3 nodes are available: 1 Insufficient cpu, "
                              "1 node(s) didn't match pod topology spread constraints, "
                              "1 node(s) didn't match pod topology spread constraints (missing required label). "
                              "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
                              "2 No preemption victims found for incoming pod."},
    ("PrioritySort", "three priorities, two nodes: the lowest priority arrives first and is left out"): {
        "default/low": "0/2 nodes are available: 2 Insufficient cpu. "
                       "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."},
}
for sub in ("p1.priority less than p2.priority", "p1.priority greater than p2.priority",
            "equal priority. p1 is added to schedulingQ earlier than p2",
            "equal priority. p2 is added to schedulingQ earlier than p1"):
    loser = "default/p1" if sub in ("p1.priority less than p2.priority",
                                    "equal priority. p2 is added to schedulingQ earlier than p1") else "default/p2"
    WANT_MESSAGES[("PrioritySort", sub)] = {loser: FULL1}


def self_check():
    """requested_to_capacity_ratio_test.go TestBrokenLinearFunction, against the model."""
    for points, assertions in [
            ([(10, 1), (90, 9)], [(-10, 1), (0, 1), (9, 1), (10, 1), (15, 1), (19, 1), (20, 2),
                                  (89, 8), (90, 9), (99, 9), (100, 9), (110, 9)]),
            ([(0, 2), (40, 10), (100, 0)], [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5),
                                            (100, 0), (110, 0)]),
            ([(0, 2), (40, 2), (100, 2)], [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2),
                                           (100, 2), (110, 2)])]:
        for p, want in assertions:
            got = model.broken_linear(points, p)
            if got != want:
                raise AssertionError(f"BuildBrokenLinearFunction{points}({p}) = {got}, want {want}")


def main():
    self_check()
    groups = {}
    for c in CASES:
        groups.setdefault(c["group"], []).append(c)
    if os.path.isdir(OUT):
        for g in os.listdir(OUT):
            d = os.path.join(OUT, g)
            if os.path.isdir(d):
                for f in os.listdir(d):
                    if f.endswith(".json"):
                        os.remove(os.path.join(d, f))
    total = 0
    seen_messages = set()
    for g, cs in groups.items():
        d = os.path.join(OUT, g)
        os.makedirs(d, exist_ok=True)
        for i, c in enumerate(cs, 1):
            cid = f"{g}/{i:03d}-{slug(c['name'])}"
            obj = finish(c, cid)
            want = WANT_MESSAGES.get((g, c["name"]))
            got = obj["expect"].get("messages")
            if want is not None or got is not None:
                if want != got:
                    raise AssertionError(f"{cid}: model messages {got}, table says {want}")
                seen_messages.add((g, c["name"]))
            with open(os.path.join(OUT, cid + ".json"), "w") as fh:
                json.dump(obj, fh, indent=2)
                fh.write("\n")
            total += 1
    missing = set(WANT_MESSAGES) - seen_messages
    if missing:
        raise AssertionError(f"messages for unknown cases: {missing}")
    print(f"wrote {total} cases to {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()
