"""A small model of kube-scheduler's scheduleOne loop, enough to derive the
expectations of the `sift simulate` cases that gen.py writes. Python 3,
standard library only. Every rule cites the upstream function it restates
(kubernetes/kubernetes, pkg/scheduler/..., master as of v1.36); no upstream
code is copied.

Loop (schedule_one.go, ScheduleOne / schedulingCycle / SchedulePod):
  queue order   PrioritySort.Less (framework/plugins/queuesort/priority_sort.go):
                priority desc, then queue timestamp asc. The cases give every
                pending pod a distinct creationTimestamp in arrival order, so
                creationTimestamp and queue time agree; namespace/name is
                sift's last tie-break and never decides here.
  filter        findNodesThatPassFilters: every filter in order, the first
                rejection is the node's status (short-circuit). With < 100
                nodes every node is evaluated (numFeasibleNodesToFind,
                minFeasibleNodesToFind = 100).
  score         only when more than one node is feasible (SchedulePod returns
                the single feasible node unscored). prioritizeNodes: each
                plugin's Score, NormalizeScore (none for the two plugins
                here), times the plugin weight, summed per node.
  select host   selectHost: highest total; ties are broken at random, so
                the generator refuses any step whose top score is tied.
  assume        assume() adds the pod to the cache: the node's Requested,
                NonZeroRequested and pod count grow before the next pod.
  failure       FitError.Error() (framework/types.go) plus the PostFilter
                message of DefaultPreemption, see post_filter().
  preemption    DefaultPreemption for real (post_filter and what it calls):
                eligibility, potential nodes, victims with reprieve, the
                choice of a node, then victims deleted, the pod nominated and
                the unschedulable pods retried; nominated pods count on their
                node for pods of lower or equal priority (filter_node). See
                simulate() for the loop and README.md for what the cases
                avoid (ties that upstream breaks at random).
"""
import itertools
import math
from decimal import Decimal

MAX_NODE_SCORE = 100            # fwk.MaxNodeScore
MAX_CUSTOM_PRIORITY_SCORE = 10  # config.MaxCustomPriorityScore
DEFAULT_MILLI_CPU = 100         # schedutil.DefaultMilliCPURequest
DEFAULT_MEMORY = 200 * 1024 * 1024  # schedutil.DefaultMemoryRequest (200 MiB)

DEFAULT_FILTERS = ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
                   "NodePorts", "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity"]

UNSCHED = "Unschedulable"
UNRESOLVABLE = "UnschedulableAndUnresolvable"

_SUFFIX = {"": 1, "m": Decimal("0.001"), "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12,
           "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}


def quantity(s):
    """resource.Quantity as a Decimal number of base units."""
    s = str(s)
    for suf in ("Ki", "Mi", "Gi", "Ti", "m", "k", "M", "G", "T"):
        if s.endswith(suf):
            return Decimal(s[: -len(suf)]) * _SUFFIX[suf]
    return Decimal(s)


def value(name, s):
    """Quantity.MilliValue() for cpu, Quantity.Value() otherwise (both round
    up; the cases only use whole numbers)."""
    q = quantity(s)
    if name == "cpu":
        q = q * 1000
    v = int(q)
    assert v == q, f"{name}={s} is not a whole number of units"
    return v


def is_scalar(name):
    """schedutil.IsScalarResourceName: extended (domain-prefixed, not
    kubernetes.io/), hugepages-*, attachable-volumes-*."""
    if name.startswith("hugepages-") or name.startswith("attachable-volumes-"):
        return True
    return "/" in name and not name.startswith("kubernetes.io/")


# ------------------------------------------------------------------ requests
def pod_requests(pod):
    """Actual requests (resourcehelper.PodRequests without defaults): sum of
    containers, max with each init container."""
    total = {}
    for c in pod["spec"]["containers"]:
        for k, v in c.get("resources", {}).get("requests", {}).items():
            total[k] = total.get(k, 0) + value(k, v)
    for c in pod["spec"].get("initContainers", []):
        for k, v in c.get("resources", {}).get("requests", {}).items():
            total[k] = max(total.get(k, 0), value(k, v))
    return total


def pod_nonzero(pod):
    """NonMissingContainerRequests (framework/types.go getNonMissingContainerRequests,
    noderesources/resource_allocation.go calculatePodResourceRequest): a
    container with no cpu (memory) request counts as 100m (200 MiB); an
    explicit request, even "0", is taken as is."""
    cpu = mem = 0
    for c in pod["spec"]["containers"]:
        req = c.get("resources", {}).get("requests", {})
        cpu += value("cpu", req["cpu"]) if "cpu" in req else DEFAULT_MILLI_CPU
        mem += value("memory", req["memory"]) if "memory" in req else DEFAULT_MEMORY
    return {"cpu": cpu, "memory": mem}


def priority(pod):
    return pod["spec"].get("priority", 0)


def key(pod):
    return f"{pod['metadata'].get('namespace', 'default')}/{pod['metadata']['name']}"


# --------------------------------------------------------------------- nodes
class NodeState:
    def __init__(self, node):
        self.node = node
        self.name = node["metadata"]["name"]
        alloc = node["status"]["allocatable"]
        self.alloc = {k: value(k, v) for k, v in alloc.items()}
        self.pods = []

    def add(self, pod):
        self.pods.append(pod)

    def remove(self, pod):
        self.pods = [p for p in self.pods if key(p) != key(pod)]

    def requested(self, name):
        return sum(pod_requests(p).get(name, 0) for p in self.pods)

    def nonzero_requested(self, name):
        return sum(pod_nonzero(p)[name] for p in self.pods)


# ------------------------------------------------------------------- filters
def tolerates(pod, taint):
    for t in pod["spec"].get("tolerations", []):
        if t.get("effect") and t["effect"] != taint["effect"]:
            continue
        if t.get("operator") == "Exists" and (not t.get("key") or t["key"] == taint["key"]):
            return True
        if t.get("key") == taint["key"] and t.get("value", "") == taint.get("value", ""):
            return True
    return False


def f_node_unschedulable(pod, ns, _all):
    # nodeunschedulable/node_unschedulable.go Filter
    if ns.node["spec"].get("unschedulable") and not tolerates(
            pod, {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}):
        return (UNRESOLVABLE, ["node(s) were unschedulable"])
    return None


def f_taint(pod, ns, _all):
    # tainttoleration/taint_toleration.go Filter (reason without the taint)
    for t in ns.node["spec"].get("taints", []):
        if t["effect"] in ("NoSchedule", "NoExecute") and not tolerates(pod, t):
            return (UNRESOLVABLE, ["node(s) had untolerated taint(s)"])
    return None


def f_node_affinity(pod, ns, _all):
    # nodeaffinity/node_affinity.go Filter, nodeSelector only
    labels = ns.node["metadata"].get("labels", {})
    for k, v in pod["spec"].get("nodeSelector", {}).items():
        if labels.get(k) != v:
            return (UNRESOLVABLE, ["node(s) didn't match Pod's node affinity/selector"])
    return None


def f_fit(pod, ns, _all):
    """noderesources/fit.go fitsRequest + Filter: pod count, cpu, memory,
    ephemeral-storage, scalar resources; UnschedulableAndUnresolvable when a
    request is larger than the node's whole allocatable."""
    reasons, unresolvable = [], False
    if len(ns.pods) + 1 > ns.alloc.get("pods", 0):
        reasons.append("Too many pods")
    req = pod_requests(pod)
    if any(v for v in req.values()):
        for name in ["cpu", "memory", "ephemeral-storage"] + sorted(
                k for k in req if k not in ("cpu", "memory", "ephemeral-storage")):
            want = req.get(name, 0)
            if want <= 0:
                continue
            alloc = ns.alloc.get(name, 0)
            if want > alloc - ns.requested(name):
                reasons.append(f"Insufficient {name}")
                unresolvable |= want > alloc
    if reasons:
        return (UNRESOLVABLE if unresolvable else UNSCHED, reasons)
    return None


def _selector_matches(sel, labels):
    for k, v in sel.get("matchLabels", {}).items():
        if labels.get(k) != v:
            return False
    for e in sel.get("matchExpressions", []):
        if e["operator"] == "Exists" and e["key"] not in labels:
            return False
        if e["operator"] == "In" and labels.get(e["key"]) not in e["values"]:
            return False
    return True


def f_spread(pod, ns, all_states):
    """podtopologyspread/filtering.go, DoNotSchedule constraints only, no
    minDomains, default policies (nodeAffinityPolicy Honor only matters with
    a node selector, which these cases do not combine with spreading)."""
    for c in pod["spec"].get("topologySpreadConstraints", []):
        if c["whenUnsatisfiable"] != "DoNotSchedule":
            continue
        tk = c["topologyKey"]
        if tk not in ns.node["metadata"].get("labels", {}):
            return (UNRESOLVABLE,
                    ["node(s) didn't match pod topology spread constraints (missing required label)"])
        counts = {}
        for s in all_states:
            v = s.node["metadata"].get("labels", {}).get(tk)
            if v is None:
                continue
            n = sum(1 for p in s.pods
                    if p["metadata"].get("namespace") == pod["metadata"].get("namespace")
                    and _selector_matches(c["labelSelector"], p["metadata"].get("labels", {})))
            counts[v] = counts.get(v, 0) + n
        self_match = 1 if _selector_matches(c["labelSelector"], pod["metadata"].get("labels", {})) else 0
        here = counts[ns.node["metadata"]["labels"][tk]]
        if here + self_match - min(counts.values()) > c["maxSkew"]:
            return (UNSCHED, ["node(s) didn't match pod topology spread constraints"])
    return None


def f_noop(pod, ns, _all):
    return None


FILTERS = {
    "NodeUnschedulable": f_node_unschedulable,
    "NodeName": f_noop,          # pending pods here never set spec.nodeName
    "TaintToleration": f_taint,
    "NodeAffinity": f_node_affinity,
    "NodePorts": f_noop,         # no host ports in these cases
    "NodeResourcesFit": f_fit,
    "PodTopologySpread": f_spread,
    "InterPodAffinity": f_noop,  # no pod (anti-)affinity in these cases
}


def run_filters(pod, ns, states, filters):
    for name in filters:
        st = FILTERS[name](pod, ns, states)
        if st:
            return st
    return None


# -------------------------------------------------------------------- scores
def go_div(a, b):
    """Go's integer division truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def go_round(x):
    """math.Round: half away from zero."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def alloc_request(ns, pod, resource, use_requested, pod_request):
    """resource_allocation.go calculateResourceAllocatableRequest: cpu and
    memory use NonZeroRequested (Requested for BalancedAllocation); a scalar
    resource the pod does not request is left out; ephemeral storage and
    scalars always use Requested."""
    if pod_request == 0 and is_scalar(resource):
        return 0, 0
    if resource in ("cpu", "memory"):
        used = ns.requested(resource) if use_requested else ns.nonzero_requested(resource)
        return ns.alloc.get(resource, 0), used + pod_request
    if resource == "ephemeral-storage" or resource in ns.alloc:
        return ns.alloc.get(resource, 0), ns.requested(resource) + pod_request
    return 0, 0


def pod_request_list(pod, resources, use_requested):
    """calculatePodResourceRequestList."""
    actual = pod_requests(pod)
    nz = pod_nonzero(pod)
    out = []
    for r in resources:
        name = r["name"]
        if not use_requested and name in ("cpu", "memory"):
            out.append(nz[name])
        else:
            out.append(actual.get(name, 0))
    return out


def least_score(req, alloc):
    # least_allocated.go leastRequestedScore
    if alloc == 0 or req > alloc:
        return 0
    return ((alloc - req) * MAX_NODE_SCORE) // alloc


def most_score(req, alloc):
    # most_allocated.go mostRequestedScore: requested is capped at capacity
    if alloc == 0:
        return 0
    req = min(req, alloc)
    return (req * MAX_NODE_SCORE) // alloc


def broken_linear(shape, p):
    # helper/shape_score.go BuildBrokenLinearFunction (integer, truncating)
    for i, (u, s) in enumerate(shape):
        if p <= u:
            if i == 0:
                return shape[0][1]
            u0, s0 = shape[i - 1]
            return s0 + go_div((s - s0) * (p - u0), (u - u0))
    return shape[-1][1]


def fit_score(pod, ns, strategy):
    """NodeResourcesFit Score (fit.go) through resourceAllocationScorer.score:
    per resource (allocatable 0 skipped), then the strategy's combination."""
    resources = strategy["resources"]
    preqs = pod_request_list(pod, resources, use_requested=False)
    pairs = []
    for r, preq in zip(resources, preqs):
        alloc, req = alloc_request(ns, pod, r["name"], False, preq)
        if alloc == 0:
            continue
        pairs.append((r["weight"], req, alloc))
    kind = strategy["type"]
    if kind in ("LeastAllocated", "MostAllocated"):
        fn = least_score if kind == "LeastAllocated" else most_score
        num = sum(w * fn(req, alloc) for w, req, alloc in pairs)
        den = sum(w for w, _, _ in pairs)
        return num // den if den else 0
    # requested_to_capacity_ratio.go: shape scaled by MaxNodeScore/MaxCustomPriorityScore,
    # utilization = requested*100/capacity (capacity when over), resources scoring 0 are
    # left out of both sums, result math.Round(nodeScore/weightSum).
    shape = [(p["utilization"], p["score"] * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE))
             for p in strategy["requestedToCapacityRatio"]["shape"]]
    num = den = 0
    for w, req, alloc in pairs:
        util = 100 if req >= alloc else (req * 100) // alloc if req > 0 else 0
        s = broken_linear(shape, util)
        if s > 0:
            num += s * w
            den += w
    return go_round(num / den) if den else 0


def balanced_skip(pod, resources):
    # balanced_allocation.go PreScore: all-zero actual requests -> Skip
    return all(v == 0 for v in pod_request_list(pod, resources, use_requested=True))


def balanced_score(pod, ns, resources):
    """balanced_allocation.go balancedResourceScorer: fractions of actual
    requests (capped at 1), std over the resources the node has, score
    int64((1 - std) * MaxNodeScore) in float64."""
    preqs = pod_request_list(pod, resources, use_requested=True)
    fractions = []
    for r, preq in zip(resources, preqs):
        alloc, req = alloc_request(ns, pod, r["name"], True, preq)
        if alloc == 0:
            continue
        fractions.append(min(1.0, float(req) / float(alloc)))
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        total = 0.0
        for f in fractions:
            total += f
        mean = total / len(fractions)
        acc = 0.0
        for f in fractions:
            acc = acc + (f - mean) * (f - mean)
        std = math.sqrt(acc / len(fractions))
    return int((1 - std) * float(MAX_NODE_SCORE))


DEFAULT_RESOURCES = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]


def score_plugins(config):
    """The score plugins a case config enables, as (name, weight, args).
    No config (or no plugins.score): NodeResourcesFit LeastAllocated w1 +
    NodeResourcesBalancedAllocation w1, sift's default score set."""
    config = config or {}
    args = {pc["name"]: pc.get("args", {}) for pc in config.get("pluginConfig", [])}
    fit = {"type": "LeastAllocated", "resources": DEFAULT_RESOURCES}
    fit.update(args.get("NodeResourcesFit", {}).get("scoringStrategy", {}))
    bal = args.get("NodeResourcesBalancedAllocation", {}).get("resources", DEFAULT_RESOURCES)
    score = config.get("plugins", {}).get("score")
    enabled = [("NodeResourcesFit", 1), ("NodeResourcesBalancedAllocation", 1)]
    if score:
        if {"name": "*"} in score.get("disabled", []):
            enabled = []
        enabled = enabled + [(e["name"], e.get("weight", 1)) for e in score.get("enabled", [])]
    out = []
    for name, w in enabled:
        out.append((name, w, fit if name == "NodeResourcesFit" else bal))
    return out


def plugin_scores(pod, states, plugins):
    """{plugin: {node: score}} for the feasible nodes."""
    out = {}
    for name, _w, a in plugins:
        if name == "NodeResourcesFit":
            out[name] = {s.name: fit_score(pod, s, a) for s in states}
        elif name == "NodeResourcesBalancedAllocation":
            if balanced_skip(pod, a):
                out[name] = {s.name: 0 for s in states}  # Skip: contributes nothing
            else:
                out[name] = {s.name: balanced_score(pod, s, a) for s in states}
        else:
            raise ValueError(f"no score plugin {name} in sift")
    return out


# ---------------------------------------------------------------- postfilter
# DefaultPreemption (plugins/defaultpreemption/default_preemption.go) through
# Evaluator.Preempt (framework/preemption/preemption.go), without
# PodDisruptionBudgets and without extenders.
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
MIN_CANDIDATE_NODES_PERCENTAGE = 10  # DefaultPreemptionArgs defaults
MIN_CANDIDATE_NODES_ABSOLUTE = 100
PRIORITY_OFFSET = 2 ** 31            # math.MaxInt32 + 1, added to each victim's priority
MAX_TIE_ORDERS = 5040                # reprieve orders tried when ties could matter


def nominated_here(pod, ns, nominations):
    """addGENominatedPods (framework/runtime/framework.go): the pods nominated
    to this node whose priority is at least the incoming pod's, the pod
    itself excepted. `nominations` maps namespace/name -> (node, pod)."""
    return [np for k, (node, np) in sorted(nominations.items())
            if node == ns.name and k != key(pod) and priority(np) >= priority(pod)]


def filter_node(pod, ns, states, filters, nominations):
    """RunFilterPluginsWithNominatedPods: when pods of at least the pod's
    priority are nominated here, the filters first run with them placed on
    the node; only if that passes do they run again without them (the
    second pass matters for filters a nominated pod could help, none here).
    Without such nominations it is run_filters."""
    extra = nominated_here(pod, ns, nominations)
    if extra:
        for np in extra:
            ns.add(np)
        st = run_filters(pod, ns, states, filters)
        for np in extra:
            ns.remove(np)
        if st:
            return st
    return run_filters(pod, ns, states, filters)


def importance(p, start):
    """util.MoreImportantPod (pkg/scheduler/util): higher priority first,
    then the earlier start (GetPodStartTime). Start times here: a pod of the
    case's "pods" started at 0, a pod bound by the loop at the instant it
    was bound (0 in every case: the whole workload arrives at 0). Upstream
    sorts with sort.Slice, so equal (priority, start) pods come in no fixed
    order; sift takes them by namespace/name, and so does this model, but
    select_victims_on_node refuses a node whose victims depend on that
    order."""
    return (-priority(p), start[key(p)], key(p))


def _reprieve(pod, ns, order, states, filters, nominations):
    """The reprieve loop of SelectVictimsOnNode: with every potential victim
    off the node, put each back in `order`; it stays if the pod still fits
    (filters with nominated pods), else it is a victim. Leaves the node as it
    found it (every potential victim off)."""
    victims, kept = [], []
    for p in order:
        ns.add(p)
        if filter_node(pod, ns, states, filters, nominations):
            ns.remove(p)
            victims.append(p)
        else:
            kept.append(p)
    for p in kept:
        ns.remove(p)
    return victims


def _tie_orders(ordered, start):
    """Every order MoreImportantPod allows: permutations inside each run of
    equal (priority, start); only the two extreme ones when that is too
    many."""
    groups = [list(g) for _, g in itertools.groupby(
        ordered, key=lambda p: (priority(p), start[key(p)]))]
    count = 1
    for g in groups:
        count *= math.factorial(len(g))
    if count > MAX_TIE_ORDERS:
        choices = [[g, g[::-1]] for g in groups]
    else:
        choices = [list(itertools.permutations(g)) for g in groups]
    for combo in itertools.product(*choices):
        yield [p for g in combo for p in g]


def select_victims_on_node(pod, ns, states, filters, nominations, start):
    """DefaultPreemption.SelectVictimsOnNode: (victims, None) or (None, status).
      - the potential victims are the node's pods of lower priority
        (isPreemptionAllowed with the default IsEligiblePod); none ->
        UnschedulableAndUnresolvable "No preemption victims found for
        incoming pod";
      - all of them are taken off and the filters run again (with nominated
        pods); a rejection is the node's status;
      - they are put back most important first, each kept if the pod still
        fits; the rest are the victims, most important first."""
    lower = [p for p in ns.pods if priority(p) < priority(pod)]
    if not lower:
        return None, (UNRESOLVABLE, [NO_VICTIMS])
    for p in lower:
        ns.remove(p)
    try:
        st = filter_node(pod, ns, states, filters, nominations)
        if st:
            return None, st
        ordered = sorted(lower, key=lambda p: importance(p, start))
        outcomes = {tuple(sorted(key(v) for v in _reprieve(pod, ns, order, states, filters, nominations)))
                    for order in _tie_orders(ordered, start)}
        if len(outcomes) > 1:
            raise AssertionError(f"{key(pod)}: the victims on {ns.name} depend on the order of pods of equal "
                                 f"priority and start time (upstream: unstable sort): {sorted(outcomes)}")
        victims = _reprieve(pod, ns, ordered, states, filters, nominations)
        if not victims:
            raise AssertionError(f"{key(pod)}: {ns.name} needs no victim (upstream: 'expected at least one "
                                 f"victim pod' error)")
        return victims, None
    finally:
        for p in lower:
            ns.add(p)


def _highest(vs):
    return max(priority(v) for v in vs)


# pickOneNodeForPreemption's criteria without PDBs (the PDB-violation count is
# 0 everywhere), each a score where higher is better, in upstream's order.
PICK_CRITERIA = [
    ("lowest highest victim priority", lambda vs, start: -_highest(vs)),
    ("lowest sum of victim priorities, each plus 2^31",
     lambda vs, start: -sum(priority(v) + PRIORITY_OFFSET for v in vs)),
    ("fewest victims", lambda vs, start: -len(vs)),
    ("latest earliest start among the highest-priority victims",
     lambda vs, start: min(start[key(v)] for v in vs if priority(v) == _highest(vs))),
]


def pick_one_node(candidates, start):
    """Evaluator.SelectCandidate / pickOneNodeForPreemption: one candidate is
    taken as is; otherwise each criterion keeps the candidates with its best
    score until one is left. Upstream iterates a map and (on the last tie)
    takes the first, so a tie after every criterion is refused; sift would
    take the first in node order. Returns (node, victims, criterion)."""
    if len(candidates) == 1:
        return candidates[0] + ("the only candidate",)
    remaining = list(candidates)
    for name, f in PICK_CRITERIA:
        scores = [f(vs, start) for _, vs in remaining]
        best = max(scores)
        remaining = [c for c, sc in zip(remaining, scores) if sc == best]
        if len(remaining) == 1:
            return remaining[0] + (name,)
    raise AssertionError(f"preemption candidates tie on every criterion: {[n for n, _ in remaining]} "
                         f"(upstream: map order)")


def post_filter(pod, statuses, states, filters, nominations, start):
    """DefaultPreemption.PostFilter -> Evaluator.Preempt. Returns a dict:
    {"message": ...} when preemption does not help (with "clear": whether the
    pod's nomination is cleared: Preempt returns a result with an empty
    nominated node when no candidate is found, nil when the pod is not
    eligible), or {"node", "victims", "why", "candidates"} when it does.
      1. PodEligibleToPreemptOthers: preemptionPolicy Never -> "not eligible
         due to preemptionPolicy=Never." Its other rule (a terminating victim
         of lower priority on the pod's nominated node) never applies: the
         loop deletes victims at once;
      2. findCandidates: the potential nodes are those whose filter status is
         Unschedulable (NodesForStatusCode), in node order; none -> an empty
         status map;
      3. DryRunPreemption: SelectVictimsOnNode on the potential nodes until
         max(10% of them, 100) capped at their number are candidates.
         Upstream starts at a random offset; this model (like sift) at the
         first node, and refuses a case where the cap would stop the search
         early (the offset would decide);
      4. no candidate -> a FitError over the dry-run statuses, nodes absent
         from it reading "Preemption is not helpful for scheduling"; its
         Error() text, prefixed "preemption: ", is the PostFilter message;
      5. otherwise SelectCandidate (pick_one_node) chooses the node."""
    if pod["spec"].get("preemptionPolicy") == "Never":
        return {"message": "preemption: not eligible due to preemptionPolicy=Never.", "clear": False}
    potential = [s for s in states if statuses[s.name][0] == UNSCHED]
    hist, candidates = {}, []
    if potential:
        want = min(max(len(potential) * MIN_CANDIDATE_NODES_PERCENTAGE // 100,
                       MIN_CANDIDATE_NODES_ABSOLUTE), len(potential))
        for s in potential:
            if len(candidates) >= want:
                raise AssertionError(f"{key(pod)}: the dry run stops at {want} candidates before the last "
                                     f"potential node; upstream's random offset would decide which")
            victims, st = select_victims_on_node(pod, s, states, filters, nominations, start)
            if victims is not None:
                candidates.append((s.name, victims))
                continue
            for r in st[1]:
                hist[r] = hist.get(r, 0) + 1
    if not candidates:
        absent = len(states) - len(potential)
        if absent:
            hist[NOT_HELPFUL] = hist.get(NOT_HELPFUL, 0) + absent
        return {"message": "preemption: " + histogram_message(len(states), hist), "clear": True}
    node, victims, why = pick_one_node(candidates, start)
    return {"node": node, "victims": victims, "why": why, "candidates": candidates}


def histogram_message(n, hist):
    # framework/types.go FitError.Error: "0/N nodes are available:" + " <sorted "count reason">."
    parts = sorted(f"{v} {k}" for k, v in hist.items())
    return f"0/{n} nodes are available: " + ", ".join(parts) + "."


def fit_error_histogram(statuses, states):
    hist = {}
    for code, reasons in statuses.values():
        for r in reasons:
            hist[r] = hist.get(r, 0) + 1
    return histogram_message(len(states), hist)


# ---------------------------------------------------------------------- loop
def simulate(nodes, pods, workload, config=None, filters=None):
    """The scheduleOne loop over a workload that arrives at once (instant 0).
    Returns (binds, unscheduled, messages, preempted, trace): `messages` holds
    the last FitError text of each pod left unscheduled, `preempted` maps
    each pod whose PostFilter preempted to its victims (namespace/name, most
    important first), `trace` has one entry per scheduling attempt.

    Queue (backend/queue, PrioritySort): the active queue pops by priority
    desc, then queue time (0 for every pod here, as a pod that fails goes
    back with its time refreshed to the current instant), then
    creationTimestamp, then namespace/name (sift's tie-break). A pod that
    fits nowhere waits in the unschedulable pool. Only a preemption's
    victims leaving wakes the pool here (no other event happens): every
    waiting pod, the preemptor included, goes back to the active queue and
    is retried at once, the preemptor first by queue order (upstream would
    hold them in backoff for a second; the cases are built so that this does
    not change the outcome, see README.md).

    A cycle: a pod with a nominated node tries it first and takes it if it
    passes the filters (findNodesThatFitPod / evaluateNominatedNode); else
    every node is filtered (filter_node: nominated pods of at least the
    pod's priority count on their node), then scored and selected as before.
    A pod that fits nowhere gets FitError.Error(): the histogram, then one
    space and the PostFilter message, if any. When DefaultPreemption
    succeeds the PostFilter status is Success with an empty message, so the
    text is the histogram alone; then (prepareCandidate) the victims are
    deleted and leave the simulation (no controller recreates them), the
    lower-priority pods nominated to that node lose their nomination, and
    the pod is nominated to it. A pod that binds loses its nomination."""
    filters = filters or DEFAULT_FILTERS
    now = 0
    states = [NodeState(n) for n in nodes]
    by_name = {s.name: s for s in states}
    start = {}
    for p in pods:
        by_name[p["spec"]["nodeName"]].add(p)
        start[key(p)] = 0
    plugins = score_plugins(config)
    queued = {key(p): now for p in workload}

    def qkey(p):
        return (-priority(p), queued[key(p)], p["metadata"]["creationTimestamp"],
                p["metadata"].get("namespace", "default"), p["metadata"]["name"])

    active = sorted(workload, key=qkey)
    waiting = []
    nominations = {}
    binds, messages, preempted, trace = {}, {}, {}, []
    attempts = 0
    while active:
        attempts += 1
        if attempts > 20 * len(workload) + 100:
            raise AssertionError(f"no end after {attempts} attempts")
        pod = active.pop(0)
        k = key(pod)
        host = None
        nominated = nominations.get(k)
        if nominated and filter_node(pod, by_name[nominated[0]], states, filters, nominations) is None:
            host = by_name[nominated[0]]
            trace.append({"pod": k, "nominated": host.name})
        else:
            statuses = {}
            feasible = []
            for s in states:
                st = filter_node(pod, s, states, filters, nominations)
                if st:
                    statuses[s.name] = st
                else:
                    feasible.append(s)
            if not feasible:
                histogram = fit_error_histogram(statuses, states)
                result = post_filter(pod, statuses, states, filters, nominations, start)
                entry = {"pod": k, "failed": statuses}
                trace.append(entry)
                queued[k] = now
                waiting.append(pod)
                if "message" in result:
                    messages[k] = histogram + " " + result["message"]
                    if result["clear"]:
                        nominations.pop(k, None)
                    continue
                messages[k] = histogram
                node = by_name[result["node"]]
                for v in result["victims"]:
                    if key(v) in binds:
                        raise AssertionError(f"{key(v)}: a victim the loop bound (sift's report would keep it bound)")
                    node.remove(v)
                    preempted.setdefault(k, []).append(key(v))
                for other, (n, np) in list(nominations.items()):
                    if n == node.name and priority(np) < priority(pod):
                        del nominations[other]
                nominations[k] = (node.name, pod)
                entry["preempt"] = {"node": node.name, "victims": [key(v) for v in result["victims"]],
                                    "why": result["why"],
                                    "candidates": [(n, [key(v) for v in vs]) for n, vs in result["candidates"]]}
                active = sorted(active + waiting, key=qkey)
                waiting = []
                continue
            if len(feasible) == 1:
                host = feasible[0]
                trace.append({"pod": k, "only": host.name})
            else:
                ps = plugin_scores(pod, feasible, plugins)
                total = {s.name: sum(ps[name][s.name] * w for name, w, _ in plugins) for s in feasible}
                best = max(total.values())
                top = [n for n, v in total.items() if v == best]
                if len(top) != 1:
                    raise AssertionError(f"{k}: tie between {top} at {best} ({ps})")
                host = by_name[top[0]]
                trace.append({"pod": k, "scores": ps, "total": total, "host": host.name})
        assumed = dict(pod, spec=dict(pod["spec"], nodeName=host.name))
        host.add(assumed)
        binds[k] = host.name
        start[k] = now
        messages.pop(k, None)
        nominations.pop(k, None)
    unscheduled = [key(p) for p in waiting]
    return binds, unscheduled, messages, preempted, trace
