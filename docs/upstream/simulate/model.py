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
                message of DefaultPreemption, see fit_error_message().
"""
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
def postfilter_message(pod, statuses, states, filters):
    """DefaultPreemption.PostFilter (plugins/defaultpreemption/default_preemption.go)
    -> Evaluator.Preempt (framework/preemption/preemption.go):
      1. PodEligibleToPreemptOthers: preemptionPolicy Never ->
         "not eligible due to preemptionPolicy=Never." (the pods here have no
         nominatedNodeName, so the terminating-victims check never applies);
      2. findCandidates: only nodes whose status is Unschedulable are
         potential nodes; none -> an empty NodeToStatus;
      3. DryRunPreemption / SelectVictimsOnNode per potential node: the
         victims are the pods of lower priority; none -> UnschedulableAndUnresolvable
         "No preemption victims found for incoming pod"; otherwise they are
         removed and the filters run again; a rejection there is the node's
         status; a pass makes the node a candidate (preemption would succeed,
         which these cases never exercise: the generator refuses it);
      4. no candidate -> a FitError over the dry-run statuses whose absent
         nodes read "Preemption is not helpful for scheduling"; its Error()
         text is the status message.
    PostFilter prefixes "preemption: "; FitError.Error appends it after one
    space, with no period of its own."""
    if pod["spec"].get("preemptionPolicy") == "Never":
        return "preemption: not eligible due to preemptionPolicy=Never."
    dry = {}
    for s in states:
        code, _ = statuses[s.name]
        if code != UNSCHED:
            continue
        victims = [p for p in s.pods if priority(p) < priority(pod)]
        if not victims:
            dry[s.name] = (UNRESOLVABLE, ["No preemption victims found for incoming pod"])
            continue
        for v in victims:
            s.remove(v)
        st = run_filters(pod, s, states, filters)
        for v in victims:
            s.add(v)
        if st is None:
            raise AssertionError(f"{key(pod)}: preemption would succeed on {s.name}")
        dry[s.name] = st
    hist = {}
    for code_reasons in dry.values():
        for r in code_reasons[1]:
            hist[r] = hist.get(r, 0) + 1
    absent = len(states) - len(dry)
    if absent:
        hist["Preemption is not helpful for scheduling"] = (
            hist.get("Preemption is not helpful for scheduling", 0) + absent)
    return "preemption: " + histogram_message(len(states), hist)


def histogram_message(n, hist):
    # framework/types.go FitError.Error: "0/N nodes are available:" + " <sorted "count reason">."
    parts = sorted(f"{v} {k}" for k, v in hist.items())
    return f"0/{n} nodes are available: " + ", ".join(parts) + "."


def fit_error_message(pod, statuses, states, filters):
    hist = {}
    for code, reasons in statuses.values():
        for r in reasons:
            hist[r] = hist.get(r, 0) + 1
    return histogram_message(len(states), hist) + " " + postfilter_message(pod, statuses, states, filters)


# ---------------------------------------------------------------------- loop
def simulate(nodes, pods, workload, config=None, filters=None):
    """Returns (binds, unscheduled, messages, trace); trace has one entry per
    scheduling attempt with the per-plugin scores."""
    filters = filters or DEFAULT_FILTERS
    states = [NodeState(n) for n in nodes]
    by_name = {s.name: s for s in states}
    for p in pods:
        by_name[p["spec"]["nodeName"]].add(p)
    plugins = score_plugins(config)
    queue = sorted(workload, key=lambda p: (-priority(p), p["metadata"]["creationTimestamp"],
                                            p["metadata"].get("namespace", "default"),
                                            p["metadata"]["name"]))
    binds, unscheduled, messages, trace = {}, [], {}, []
    for pod in queue:
        statuses = {}
        feasible = []
        for s in states:
            st = run_filters(pod, s, states, filters)
            if st:
                statuses[s.name] = st
            else:
                feasible.append(s)
        if not feasible:
            unscheduled.append(key(pod))
            messages[key(pod)] = fit_error_message(pod, statuses, states, filters)
            trace.append({"pod": key(pod), "failed": statuses})
            continue
        if len(feasible) == 1:
            host = feasible[0]
            trace.append({"pod": key(pod), "only": host.name})
        else:
            ps = plugin_scores(pod, feasible, plugins)
            total = {s.name: sum(ps[name][s.name] * w for name, w, _ in plugins) for s in feasible}
            best = max(total.values())
            top = [n for n, v in total.items() if v == best]
            if len(top) != 1:
                raise AssertionError(f"{key(pod)}: tie between {top} at {best} ({ps})")
            host = by_name[top[0]]
            trace.append({"pod": key(pod), "scores": ps, "total": total, "host": host.name})
        assumed = dict(pod, spec=dict(pod["spec"], nodeName=host.name))
        host.add(assumed)
        binds[key(pod)] = host.name
    return binds, unscheduled, messages, trace
