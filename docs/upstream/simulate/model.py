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
                eligibility, potential nodes, victims with reprieve (PDB
                violating pods first), the choice of a node (fewest PDB
                violations first), then victims deleted, the pod nominated and
                the unschedulable pods retried; nominated pods count on their
                node for pods of lower or equal priority (filter_node). See
                simulate() for the loop and README.md for what the cases
                avoid (ties that upstream breaks at random).
"""
import itertools
import math
import re
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


# ------------------------------------------------------ node selector terms
# component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go (what the
# NodeAffinity plugin's Filter and Score build on) over
# apimachinery/pkg/labels/selector.go NewRequirement / Requirement.Matches and
# apimachinery/pkg/fields (OneTermEqualSelector, OneTermNotEqualSelector).
class BadTerm(ValueError):
    """A node selector term that does not parse (upstream: a parse error)."""


_LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_GO_INT = re.compile(r"^[+-]?[0-9]+$")


def _label_key_ok(key):
    """validation.IsQualifiedName: [prefix/]name, the prefix a DNS subdomain
    of at most 253 characters, the name at most 63 characters of
    alphanumerics, '-', '_', '.', starting and ending alphanumeric."""
    parts = key.split("/")
    if len(parts) == 2:
        prefix, name = parts
        if not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix):
            return False
    elif len(parts) == 1:
        name = parts[0]
    else:
        return False
    return 0 < len(name) <= 63 and bool(_LABEL_NAME.match(name))


def _label_value_ok(v):
    """validation.IsValidLabelValue: empty, or at most 63 characters of the
    label-name alphabet."""
    return v == "" or (len(v) <= 63 and bool(_LABEL_NAME.match(v)))


def _go_parse_int(s):
    """strconv.ParseInt(s, 10, 64), None on error (no spaces, no '_')."""
    if not _GO_INT.match(s):
        return None
    v = int(s)
    return v if -2**63 <= v < 2**63 else None


def _parse_expression(e):
    """One matchExpressions entry: nodeSelectorRequirementsAsSelector maps the
    operator (In, NotIn, Exists, DoesNotExist, Gt, Lt; anything else is an
    error), then labels.NewRequirement checks the key, the number of values
    (In/NotIn at least one, Exists/DoesNotExist none, Gt/Lt exactly one that
    parses as a base-10 int64) and every value as a label value."""
    op, key, vals = e.get("operator"), e.get("key", ""), list(e.get("values") or [])
    if op not in ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"):
        raise BadTerm(f"operator {op!r} is not a node selector operator")
    if not _label_key_ok(key):
        raise BadTerm(f"invalid label key {key!r}")
    if op in ("In", "NotIn") and not vals:
        raise BadTerm(f"{op} on {key!r} without values")
    if op in ("Exists", "DoesNotExist") and vals:
        raise BadTerm(f"{op} on {key!r} with values")
    if op in ("Gt", "Lt"):
        if len(vals) != 1:
            raise BadTerm(f"{op} on {key!r} needs exactly one value")
        if _go_parse_int(vals[0]) is None:
            raise BadTerm(f"{op} on {key!r}: {vals[0]!r} is not an integer")
    for v in vals:
        if not _label_value_ok(v):
            raise BadTerm(f"invalid label value {v!r}")
    return (op, key, vals)


def _expression_matches(req, labels):
    """labels.Requirement.Matches: In needs the key with a listed value; NotIn
    holds for a missing key or an unlisted value; Exists / DoesNotExist test
    the key; Gt / Lt need the key with a value that parses as an integer and
    compare it with the requirement's (a value that does not parse: no
    match)."""
    op, key, vals = req
    has = key in labels
    if op == "In":
        return has and labels[key] in vals
    if op == "NotIn":
        return not has or labels[key] not in vals
    if op == "Exists":
        return has
    if op == "DoesNotExist":
        return not has
    if not has:
        return False
    mine = _go_parse_int(labels[key])
    if mine is None:
        return False
    theirs = _go_parse_int(vals[0])
    return mine > theirs if op == "Gt" else mine < theirs


def _parse_field(e):
    """One matchFields entry (nodeSelectorRequirementsAsFieldSelector): In or
    NotIn with exactly one value, anything else is an error; the key is not
    checked here (API validation allows only metadata.name)."""
    op, vals = e.get("operator"), list(e.get("values") or [])
    if op not in ("In", "NotIn"):
        raise BadTerm(f"operator {op!r} is not a node field selector operator")
    if len(vals) != 1:
        raise BadTerm(f"{op} field selector needs exactly one value")
    return (op, e.get("key", ""), vals[0])


def parse_term(term):
    """newNodeSelectorTerm: its matchExpressions as one label selector (ANDed)
    and its matchFields as one field selector (ANDed); any bad entry makes the
    whole term a parse error. Callers leave out empty terms first."""
    exprs = [_parse_expression(e) for e in term.get("matchExpressions") or []]
    fields = [_parse_field(e) for e in term.get("matchFields") or []]
    return (exprs, fields)


def is_empty_term(term):
    # isEmptyNodeSelectorTerm: neither matchExpressions nor matchFields
    return not (term.get("matchExpressions") or term.get("matchFields"))


def term_matches(parsed, node):
    """nodeSelectorTerm.match: every expression holds on the node's labels
    and every field requirement on its fields, which are {metadata.name}
    (extractNodeFields; a field the set lacks reads as "")."""
    exprs, fields = parsed
    labels = node["metadata"].get("labels") or {}
    if not all(_expression_matches(r, labels) for r in exprs):
        return False
    node_fields = {"metadata.name": node["metadata"]["name"]}
    for op, key, v in fields:
        if (node_fields.get(key, "") == v) != (op == "In"):
            return False
    return True


def preferred_terms(terms):
    """NewPreferredSchedulingTerms: terms of weight 0 and terms with an empty
    preference are dropped unparsed (an empty preference matches no node; it
    does not match every node); any other term that fails to parse is an
    error of the whole list (PreScore then returns it as an Error status).
    Returns [(weight, parsed term)]."""
    out, errs = [], []
    for t in terms:
        pref = t.get("preference") or {}
        if not t.get("weight") or is_empty_term(pref):
            continue
        try:
            out.append((t["weight"], parse_term(pref)))
        except BadTerm as e:
            errs.append(str(e))
    if errs:
        raise BadTerm("; ".join(errs))
    return out


def required_matches(pod, node):
    """RequiredNodeAffinity.Match (GetRequiredNodeAffinity): every nodeSelector
    pair, then, when requiredDuringSchedulingIgnoredDuringExecution is set, at
    least one of its terms (ORed; empty terms are dropped and a term that
    does not parse matches nothing; no term left matches no node)."""
    labels = node["metadata"].get("labels") or {}
    for k, v in (pod["spec"].get("nodeSelector") or {}).items():
        if labels.get(k) != v:
            return False
    na = (pod["spec"].get("affinity") or {}).get("nodeAffinity") or {}
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    if req is None:
        return True
    for t in req.get("nodeSelectorTerms") or []:
        if is_empty_term(t):
            continue
        if t.get("matchFields"):
            # PreFilter turns metadata.name In terms into PreFilterResult
            # node names, which changes the rejected nodes' statuses: not
            # modelled, no case uses it
            raise NotImplementedError("required matchFields (NodeAffinity PreFilter) are not modelled")
        try:
            if term_matches(parse_term(t), node):
                return True
        except BadTerm:
            continue
    return False


def f_node_affinity(pod, ns, _all):
    """nodeaffinity/node_affinity.go Filter: the pod's nodeSelector and
    required node affinity (required_matches); the plugin args'
    addedAffinity.requiredDuringScheduling... is not modelled (score_plugins
    refuses it)."""
    if not required_matches(pod, ns.node):
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


def f_spread(pod, ns, all_states):
    """PodTopologySpread's PreFilter and Filter: see pod_topology_spread_filter
    in the pod topology spread section below."""
    return pod_topology_spread_filter(pod, ns, all_states)


def f_noop(pod, ns, _all):
    return None


def _required_pod_terms(pod, kind):
    aff = (pod["spec"].get("affinity") or {}).get(kind) or {}
    return aff.get("requiredDuringSchedulingIgnoredDuringExecution") or []


def f_inter_pod_affinity(pod, ns, all_states):
    """interpodaffinity/filtering.go, only as far as these cases go: its
    PreFilter skips a pod without required pod affinity or anti-affinity
    when no placed pod has required anti-affinity (every node passes). The
    model refuses anything else (the filter itself is ported and checked by
    the InterPodAffinity filter cases, tests/cases/InterPodAffinity)."""
    if _required_pod_terms(pod, "podAffinity") or _required_pod_terms(pod, "podAntiAffinity"):
        raise NotImplementedError("the InterPodAffinity filter of a pod with required pod (anti-)affinity")
    for s in all_states:
        for p in s.pods:
            if _required_pod_terms(p, "podAntiAffinity"):
                raise NotImplementedError("the InterPodAffinity filter with placed pods' required anti-affinity")
    return None


FILTERS = {
    "NodeUnschedulable": f_node_unschedulable,
    "NodeName": f_noop,          # pending pods here never set spec.nodeName
    "TaintToleration": f_taint,
    "NodeAffinity": f_node_affinity,
    "NodePorts": f_noop,         # no host ports in these cases
    "NodeResourcesFit": f_fit,
    "PodTopologySpread": f_spread,
    "InterPodAffinity": f_inter_pod_affinity,
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
    No config (or no plugins.score): sift's default score set,
    kube-scheduler's default plugins and weights (config.DEFAULT_SCORES),
    NodeResourcesFit LeastAllocated."""
    config = config or {}
    args = {pc["name"]: pc.get("args", {}) for pc in config.get("pluginConfig", [])}
    fit = {"type": "LeastAllocated", "resources": DEFAULT_RESOURCES}
    fit.update(args.get("NodeResourcesFit", {}).get("scoringStrategy", {}))
    bal = args.get("NodeResourcesBalancedAllocation", {}).get("resources", DEFAULT_RESOURCES)
    score = config.get("plugins", {}).get("score")
    enabled = [("TaintToleration", 3), ("NodeAffinity", 2), ("NodeResourcesFit", 1),
               ("PodTopologySpread", 2), ("InterPodAffinity", 2),
               ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1)]
    if score:
        if {"name": "*"} in score.get("disabled", []):
            enabled = []
        enabled = enabled + [(e["name"], e.get("weight", 1)) for e in score.get("enabled", [])]
    na = args.get("NodeAffinity", {})
    if (na.get("addedAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution"):
        raise NotImplementedError("NodeAffinity addedAffinity.requiredDuringScheduling... is not modelled")
    out = []
    for name, w in enabled:
        a = {"NodeResourcesFit": fit, "NodeResourcesBalancedAllocation": bal}.get(name, args.get(name, {}))
        out.append((name, w, a))
    return out


def default_normalize(scores, reverse):
    # helper/normalize_score.go DefaultNormalizeScore(MaxNodeScore, reverse, scores)
    top = max(scores.values(), default=0)
    if top <= 0:
        return {n: MAX_NODE_SCORE for n in scores} if reverse else dict(scores)
    out = {}
    for n, v in scores.items():
        v = go_div(MAX_NODE_SCORE * v, top)
        out[n] = MAX_NODE_SCORE - v if reverse else v
    return out


def taint_scores(pod, states):
    # tainttoleration/taint_toleration.go PreScore, Score, NormalizeScore
    prefer = [t for t in pod["spec"].get("tolerations", [])
              if not t.get("effect") or t["effect"] == "PreferNoSchedule"]
    only = {"spec": {"tolerations": prefer}}
    raw = {s.name: sum(1 for t in s.node["spec"].get("taints", [])
                       if t["effect"] == "PreferNoSchedule" and not tolerates(only, t))
           for s in states}
    return default_normalize(raw, reverse=True)


def node_affinity_scores(pod, states, args):
    """nodeaffinity/node_affinity.go PreScore, Score, NormalizeScore.
    PreScore: the pod's preferredDuringSchedulingIgnoredDuringExecution (None
    when the field is absent) and the args' addedAffinity preferred terms
    (only when there is at least one), each through preferred_terms; a parse
    error is PreScore's Error (the model refuses it); neither present: Skip,
    0 on every node. Score: the sum of the weights of the terms of both lists
    that match the node. NormalizeScore: DefaultNormalizeScore, not reversed
    (the highest sum gets 100, the rest 100 * sum / highest, truncated; all
    0 stays 0)."""
    na = (pod["spec"].get("affinity") or {}).get("nodeAffinity") or {}
    own = na.get("preferredDuringSchedulingIgnoredDuringExecution")
    added = ((args or {}).get("addedAffinity") or {}).get("preferredDuringSchedulingIgnoredDuringExecution") or []
    if own is None and not added:
        return {s.name: 0 for s in states}  # Skip
    terms = preferred_terms(added) + preferred_terms(own or [])
    raw = {s.name: sum(w for w, t in terms if term_matches(t, s.node)) for s in states}
    return default_normalize(raw, reverse=False)


MB = 1024 * 1024
IMAGE_MIN_THRESHOLD = 23 * MB                  # imagelocality minThreshold
IMAGE_MAX_CONTAINER_THRESHOLD = 1000 * MB      # imagelocality maxContainerThreshold


def normalized_image_name(name):
    """imagelocality normalizedImageName: ":latest" is appended when the last
    ':' does not come after the last '/' (no tag; a registry port's colon
    does not count as one). A digest reference (name@sha256:...) has its ':'
    after the last '/' and is kept as is. Only the pod's references are
    normalized, never the names a node reports."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def image_states(all_states):
    """The scheduler cache's image states (backend/cache addNodeImageStates,
    over the snapshot): every name of every status.images entry of every
    node, taken as written, with the set of nodes listing it and its
    sizeBytes. Upstream keeps the size of the first node the cache saw with
    that name, so the model refuses a name listed with two sizes."""
    sizes, nodes = {}, {}
    for s in all_states:
        for img in s.node.get("status", {}).get("images") or []:
            for n in img.get("names") or []:
                if n in sizes and sizes[n] != img["sizeBytes"]:
                    raise AssertionError(f"image {n!r} listed with two sizes: upstream takes the first node's")
                sizes[n] = img["sizeBytes"]
                nodes.setdefault(n, set()).add(s.name)
    return sizes, nodes


def image_locality_scores(pod, states, all_states):
    """imagelocality/image_locality.go Score (no NormalizeScore). The images
    are the pod's init containers', its containers' and its image volumes'
    (volumes[].image.reference), each normalized_image_name'd; the count is
    one per init container, container and image volume, present on the node
    or not (master after kubernetes/kubernetes#138951; v1.36 counted image
    volumes in the sum only, not in the count). For each image the node
    lists: size * spread, spread = float64(nodes listing the name) /
    float64(all nodes of the snapshot, feasible or not), truncated to int64;
    the sum is clamped into [23 MiB, 1000 MiB * count] and scored
    100 * (sum - 23 MiB) / (1000 MiB * count - 23 MiB) in integer division."""
    sizes, where = image_states(all_states)
    total = len(all_states)
    spec = pod["spec"]
    refs = [c["image"] for c in spec.get("initContainers") or []]
    refs += [c["image"] for c in spec["containers"]]
    refs += [v["image"]["reference"] for v in spec.get("volumes") or [] if v.get("image")]
    top = IMAGE_MAX_CONTAINER_THRESHOLD * len(refs)
    out = {}
    for s in states:
        acc = 0
        for r in refs:
            n = normalized_image_name(r)
            if s.name in where.get(n, ()):
                spread = float(len(where[n])) / float(total)
                acc += int(float(sizes[n]) * spread)
        acc = min(max(acc, IMAGE_MIN_THRESHOLD), top) if top >= IMAGE_MIN_THRESHOLD else IMAGE_MIN_THRESHOLD
        out[s.name] = MAX_NODE_SCORE * (acc - IMAGE_MIN_THRESHOLD) // (top - IMAGE_MIN_THRESHOLD)
    return out


# ------------------------------------------------- pod affinity terms
# framework/types.go AffinityTerm (newAffinityTerm, Matches) over
# metav1.LabelSelectorAsSelector, and plugin.go
# mergeAffinityTermNamespacesIfNotEmpty, as InterPodAffinity's scoring uses
# them.
def _pod_selector(sel):
    """LabelSelectorAsSelector: None (unset) selects nothing, {} everything,
    else matchLabels and matchExpressions ANDed; an invalid expression is a
    parse error (InvalidSelector)."""
    if sel is None:
        return lambda labels: False
    pairs = list((sel.get("matchLabels") or {}).items())
    exprs = list(sel.get("matchExpressions") or [])
    for e in exprs:
        _requirement_matches(e, {})  # raises on an invalid one
    return lambda labels: (all(labels.get(k) == v for k, v in pairs)
                           and all(_requirement_matches(e, labels) for e in exprs))


def _is_empty_selector(sel):
    return sel is not None and not sel.get("matchLabels") and not sel.get("matchExpressions")


class PodTerm:
    """A pod (anti-)affinity term of `owner`: its namespaces are the listed
    ones, or the owner's own when neither namespaces nor namespaceSelector
    is set; matchLabelKeys / mismatchLabelKeys are refused (kube-apiserver
    merges them at creation; no case uses them)."""

    def __init__(self, owner, term):
        if term.get("matchLabelKeys") or term.get("mismatchLabelKeys"):
            raise NotImplementedError("matchLabelKeys / mismatchLabelKeys")
        self.key = term["topologyKey"]
        self.selector = _pod_selector(term.get("labelSelector"))
        listed = term.get("namespaces") or []
        ns_sel = term.get("namespaceSelector")
        self.namespaces = set(listed) if listed or ns_sel is not None else {
            owner["metadata"].get("namespace", "default")}
        self.ns_everything = _is_empty_selector(ns_sel)
        self.ns_selector = _pod_selector(ns_sel)

    def merge_namespaces(self, namespaces):
        """mergeAffinityTermNamespacesIfNotEmpty (the incoming pod's terms):
        unless the selector is {} (every namespace), the names of the
        namespaces it selects join `namespaces` and the selector then
        selects nothing."""
        if self.ns_everything:
            return
        self.namespaces |= {n for n, labels in namespaces.items() if self.ns_selector(labels)}
        self.ns_selector = lambda labels: False

    def matches(self, pod, ns_labels):
        """AffinityTerm.Matches: the namespace is listed or selected (by
        `ns_labels`, the labels of the pod's namespace), and the labels
        match."""
        return ((pod["metadata"].get("namespace", "default") in self.namespaces
                 or self.ns_selector(ns_labels or {}))
                and self.selector(pod["metadata"].get("labels") or {}))


def _weighted_terms(owner, kind):
    aff = (owner["spec"].get("affinity") or {}).get(kind) or {}
    return [(w["weight"], PodTerm(owner, w["podAffinityTerm"]))
            for w in aff.get("preferredDuringSchedulingIgnoredDuringExecution") or []]


def _placed_terms(owner, kind, weighted):
    """An existing pod's terms; a list that does not parse is dropped
    (NodeInfo.AddPod ignores NewPodInfo's error, the failing list is nil)."""
    try:
        if weighted:
            return _weighted_terms(owner, kind)
        return [PodTerm(owner, t) for t in _required_pod_terms(owner, kind)]
    except InvalidSelector:
        return []


INTER_POD_AFFINITY_DEFAULT_HARD_WEIGHT = 1  # v1 SetDefaults_InterPodAffinityArgs


def inter_pod_affinity_scores(pod, states, all_states, args, namespaces):
    """interpodaffinity/scoring.go PreScore, Score, NormalizeScore.
    PreScore: with ignorePreferredTermsOfExistingPods and no preferred pod
    (anti-)affinity term of the pod's own, Skip. The pod's preferred terms
    get their namespaceSelector merged into names (merge_namespaces). Then,
    over every placed pod E on every node N of the snapshot (feasible or not)
    that has labels, each time a term holds and N has the term's topology
    key, the pair (key, N's value) gets:
      +w for each preferred affinity term of the pod that E matches
         (matched without namespace labels: the selector was merged),
      -w for each preferred anti-affinity term of the pod that E matches,
      +hardPodAffinityWeight (if above 0) for each required affinity term
         of E that the pod matches (with the labels of the pod's namespace),
      +w / -w for each preferred affinity / anti-affinity term of E that
         the pod matches (likewise).
    (Upstream looks only at pods with affinity when the pod has no preferred
    term; the others would add nothing.) Nothing added anywhere: Skip, 0 on
    every node. Score: the sum over the pairs of the node's labels.
    NormalizeScore over the feasible nodes: min and max of the scores,
    int(100.0 * ((s - min) / (max - min))) in float64, all 0 when max ==
    min. A parse error in the pod's terms fails PreScore (the model
    raises)."""
    args = args or {}
    hard = args.get("hardPodAffinityWeight", INTER_POD_AFFINITY_DEFAULT_HARD_WEIGHT)
    if not 0 <= hard <= 100:
        raise ValueError(f"hardPodAffinityWeight: Invalid value: {hard}: not in valid range [0, 100]")
    ignore = args.get("ignorePreferredTermsOfExistingPods", False)
    zeros = {s.name: 0 for s in states}
    own = [(w, t) for w, t in _weighted_terms(pod, "podAffinity")]
    own += [(-w, t) for w, t in _weighted_terms(pod, "podAntiAffinity")]
    if ignore and not own:
        return zeros  # Skip
    for kind in ("podAffinity", "podAntiAffinity"):
        for t in _required_pod_terms(pod, kind):
            PodTerm(pod, t)  # NewPodInfo parses these too
    for _, t in own:
        t.merge_namespaces(namespaces)
    ns_labels = namespaces.get(pod["metadata"].get("namespace", "default"), {})
    topo = {}
    for s in all_states:
        labels = s.node["metadata"].get("labels") or {}
        if not labels:
            continue
        for e in s.pods:
            held = [(w, t) for w, t in own if t.matches(e, None)]
            if hard > 0:
                held += [(hard, t) for t in _placed_terms(e, "podAffinity", False) if t.matches(pod, ns_labels)]
            held += [(w, t) for w, t in _placed_terms(e, "podAffinity", True) if t.matches(pod, ns_labels)]
            held += [(-w, t) for w, t in _placed_terms(e, "podAntiAffinity", True) if t.matches(pod, ns_labels)]
            for w, t in held:
                if t.key in labels:
                    pair = (t.key, labels[t.key])
                    topo[pair] = topo.get(pair, 0) + w
    if not topo:
        return zeros  # Skip
    raw = {s.name: sum(v for (k, val), v in topo.items()
                       if (s.node["metadata"].get("labels") or {}).get(k) == val)
           for s in states}
    lo, hi = min(raw.values()), max(raw.values())
    if hi == lo:
        return {n: 0 for n in raw}
    return {n: int(float(MAX_NODE_SCORE) * ((v - lo) / (hi - lo))) for n, v in raw.items()}


# ------------------------------------------------- pod topology spread
# podtopologyspread/scoring.go (initPreScoreState, PreScore, Score,
# NormalizeScore, topologyNormalizingWeight, scoreForCount), filtering.go
# (calPreFilterState, minMatchNum, Filter), common.go
# (buildDefaultConstraints, filterTopologySpreadConstraints,
# mergeLabelSetWithSelector, matchNodeInclusionPolicies,
# nodeLabelsMatchSpreadConstraints, countPodsMatchSelector), plugin.go
# (systemDefaultConstraints, New, getConstraints) and
# helper/spread.go (DefaultSelector, GetPodServices), master as of v1.36.
HOSTNAME_LABEL = "kubernetes.io/hostname"  # v1.LabelHostname
ZONE_LABEL = "topology.kubernetes.io/zone"  # v1.LabelTopologyZone
MAX_INT32 = 2 ** 31 - 1

# plugin.go systemDefaultConstraints: what `defaultingType: System` (the v1
# default) spreads a pod without constraints of its own over.
SYSTEM_DEFAULT_CONSTRAINTS = [
    {"maxSkew": 3, "topologyKey": HOSTNAME_LABEL, "whenUnsatisfiable": "ScheduleAnyway"},
    {"maxSkew": 5, "topologyKey": ZONE_LABEL, "whenUnsatisfiable": "ScheduleAnyway"},
]


class SpreadConstraint:
    """One constraint of the incoming pod as the plugin holds it.

    The selector is metav1.LabelSelectorAsSelector of labelSelector: an
    absent labelSelector selects nothing (labels.Nothing, whose Empty() is
    false), `{}` is the "empty" selector (Empty() true), anything else the
    AND of matchLabels and matchExpressions (an invalid expression is a
    parse error, which fails PreFilter / PreScore: the model raises
    InvalidSelector).
    matchLabelKeys (MatchLabelKeysInPodTopologySpread, on by default): the
    pod's own value for each listed key it has becomes one more equality
    requirement, unless no key is found (selector unchanged) or the selector
    selects nothing (it has no requirements to merge into and stays
    nothing). So `{}` plus a key the pod has is no longer empty. minDomains
    (1 when unset) plays a part in filtering only. nodeAffinityPolicy
    defaults to Honor, nodeTaintsPolicy to Ignore
    (NodeInclusionPolicyInPodTopologySpread is GA and locked on). A default
    constraint gets the pod's DefaultSelector instead (use_selector)."""

    def __init__(self, c, pod_labels):
        self.key = c["topologyKey"]
        self.max_skew = c["maxSkew"]
        self.min_domains = c.get("minDomains") or 1
        self.affinity_policy = c.get("nodeAffinityPolicy") or "Honor"
        self.taints_policy = c.get("nodeTaintsPolicy") or "Ignore"
        sel = c.get("labelSelector")
        self.nothing = sel is None
        reqs = []
        if sel is not None:
            reqs = [{"key": k, "operator": "In", "values": [v]}
                    for k, v in sorted((sel.get("matchLabels") or {}).items())]
            for e in sel.get("matchExpressions") or []:
                _requirement_matches(e, {})  # raises on an invalid one
                reqs.append(e)
            from_pod = [{"key": k, "operator": "In", "values": [pod_labels[k]]}
                        for k in c.get("matchLabelKeys") or [] if k in pod_labels]
            reqs = from_pod + reqs
        self.reqs = reqs
        self.empty = not self.nothing and not reqs

    def use_selector(self, reqs):
        """buildDefaultConstraints: the constraint's selector becomes the
        pod's DefaultSelector (never empty here: an empty one means no
        default constraints at all)."""
        self.nothing, self.reqs, self.empty = False, list(reqs), not reqs
        return self

    def matches(self, labels):
        return not self.nothing and all(_requirement_matches(r, labels) for r in self.reqs)

    def includes(self, pod, node):
        """matchNodeInclusionPolicies: Honor node affinity -> the pod's
        nodeSelector and required node affinity must match the node (parse
        errors read as no match); Honor taints -> the node has no NoSchedule
        or NoExecute taint the pod does not tolerate."""
        if self.affinity_policy == "Honor" and not required_matches(pod, node):
            return False
        if self.taints_policy == "Honor":
            for t in node["spec"].get("taints") or []:
                if t["effect"] in ("NoSchedule", "NoExecute") and not tolerates(pod, t):
                    return False
        return True


def pts_args(config):
    """PodTopologySpreadArgs of the case config (pluginConfig), as New takes
    them: (default constraints, systemDefaulted). v1 defaulting makes an
    unset defaultingType System; ValidatePodTopologySpreadArgs rejects
    System with defaultConstraints, a default constraint with a
    labelSelector, and two with the same (topologyKey, whenUnsatisfiable)
    (the model raises ValueError). System: SYSTEM_DEFAULT_CONSTRAINTS;
    List: the listed ones, none when the list is empty or absent."""
    args = {}
    for pc in (config or {}).get("pluginConfig") or []:
        if pc["name"] == "PodTopologySpread":
            args = pc.get("args") or {}
    kind = args.get("defaultingType") or "System"
    listed = args.get("defaultConstraints") or []
    if kind not in ("System", "List"):
        raise ValueError(f"defaultingType {kind!r}")
    if kind == "System":
        if listed:
            raise ValueError("defaultingType System with defaultConstraints")
        return SYSTEM_DEFAULT_CONSTRAINTS, True
    seen = set()
    for c in listed:
        if c.get("labelSelector") is not None:
            raise ValueError("a default constraint must not define a selector")
        pair = (c["topologyKey"], c["whenUnsatisfiable"])
        if pair in seen:
            raise ValueError(f"duplicate default constraint {pair}")
        seen.add(pair)
    return listed, False


# helper/spread.go DefaultSelector: the controller kinds whose selector
# counts, by the owner reference's exact group/version and kind
# (schema.ParseGroupVersion(apiVersion).WithKind(kind) compared with
# v1 ReplicationController, apps/v1 ReplicaSet, apps/v1 StatefulSet).
_RC = ("v1", "ReplicationController")
_SET_KINDS = {("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet")}
WORKLOAD_KINDS = ("Service", "ReplicationController", "ReplicaSet", "StatefulSet")


def _ns(obj):
    return obj["metadata"].get("namespace", "default")


def default_selector(pod, workloads):
    """helper.DefaultSelector over the case's Services and controllers
    (`workloads`, kubectl-style objects), as a list of requirements; [] is
    the empty selector (no default constraints).
      - GetPodServices: the Services of the pod's namespace; one whose
        spec.selector is unset matches nothing and is skipped; one whose
        selector map the pod's labels match (every pair present, `{}`
        matching everything) has its map merged into a label set (a later
        map's value wins on a shared key; Services that all match the pod
        cannot disagree);
      - the pod's controller reference (metav1.GetControllerOfNoCopy: the
        first ownerReference with controller true); none -> done. Its
        apiVersion and kind must be exactly v1 ReplicationController,
        apps/v1 ReplicaSet or apps/v1 StatefulSet (anything else, e.g.
        extensions/v1beta1, adds nothing). The object is looked up by name
        in the pod's namespace (not found: nothing), whether or not it
        selects the pod:
          ReplicationController: its spec.selector map merged into the
            label set (its value wins over a Service's on a shared key);
          ReplicaSet / StatefulSet: LabelSelectorAsSelector(spec.selector);
            a parse error, an unset selector (Nothing) and `{}` add
            nothing, else its requirements (matchLabels as equalities,
            then matchExpressions) are ANDed to the label set's.
    The label set's pairs become equality requirements."""
    ns = pod["metadata"].get("namespace", "default")
    labels = pod["metadata"].get("labels") or {}
    label_set = {}
    for svc in workloads:
        if svc["kind"] != "Service" or _ns(svc) != ns:
            continue
        sel = (svc.get("spec") or {}).get("selector")
        if sel is None:
            continue
        if all(k in labels and labels[k] == v for k, v in sel.items()):
            label_set.update(sel)
    extra = []
    owner = next((o for o in pod["metadata"].get("ownerReferences") or [] if o.get("controller")), None)
    if owner is not None:
        gvk = (owner.get("apiVersion"), owner.get("kind"))
        if gvk == _RC or gvk in _SET_KINDS:
            target = next((o for o in workloads if o["kind"] == gvk[1] and _ns(o) == ns
                           and o["metadata"]["name"] == owner.get("name")), None)
            spec = (target or {}).get("spec") or {}
            if target is not None and gvk == _RC:
                label_set.update(spec.get("selector") or {})
            elif target is not None:
                sel = spec.get("selector")
                if sel is not None:
                    reqs = [{"key": k, "operator": "In", "values": [v]}
                            for k, v in sorted((sel.get("matchLabels") or {}).items())]
                    reqs += list(sel.get("matchExpressions") or [])
                    try:
                        for r in reqs:
                            _requirement_matches(r, {})
                        extra = reqs
                    except InvalidSelector:
                        extra = []
    return [{"key": k, "operator": "In", "values": [v]} for k, v in sorted(label_set.items())] + extra


SPREAD = "_spread"  # the key with_spread puts on the model's copy of a pending pod


def resolve_spread(pod, workloads=(), config=None):
    """The pod's constraints as PreFilter and PreScore take them:
    (hard, soft, require_all).
      - A pod with topologySpreadConstraints of its own: its DoNotSchedule
        ones (PreFilter) and its ScheduleAnyway ones (PreScore), through
        filterTopologySpreadConstraints; no default constraint is added,
        even when one action has none.
      - Otherwise buildDefaultConstraints: the default constraints
        (pts_args) whose whenUnsatisfiable is the action, each with the
        pod's DefaultSelector as its selector (their own selector and
        matchLabelKeys are dropped); none when the DefaultSelector is empty.
    require_all (PreScore's requireAllTopologies) is true unless the pod
    has no constraint of its own and the defaults are the system ones."""
    labels = pod["metadata"].get("labels") or {}
    own = pod["spec"].get("topologySpreadConstraints") or []
    if own:
        return ([SpreadConstraint(c, labels) for c in own if c.get("whenUnsatisfiable") == "DoNotSchedule"],
                [SpreadConstraint(c, labels) for c in own if c.get("whenUnsatisfiable") == "ScheduleAnyway"],
                True)
    defaults, system = pts_args(config)
    reqs = default_selector(pod, workloads)

    def build(action):
        if not reqs:
            return []
        return [SpreadConstraint(c, labels).use_selector(reqs)
                for c in defaults if c.get("whenUnsatisfiable") == action]

    return build("DoNotSchedule"), build("ScheduleAnyway"), not system


def with_spread(pod, workloads=(), config=None):
    """A copy of the pending pod carrying resolve_spread's result (under
    SPREAD), which the filter and the scorer read: the Services and
    controllers never change during a case, so upstream's per-cycle
    DefaultSelector gives the same every cycle."""
    return dict(pod, **{SPREAD: resolve_spread(pod, workloads, config)})


def spread_of(pod):
    return pod[SPREAD] if SPREAD in pod else resolve_spread(pod)


def count_pods_match_selector(pods, c, namespace):
    """countPodsMatchSelector: 0 for the empty selector; terminating pods
    (metadata.deletionTimestamp set) and pods of other namespaces are
    skipped; the rest count when their labels match."""
    if c.empty:
        return 0
    return sum(1 for p in pods
               if not p["metadata"].get("deletionTimestamp")
               and p["metadata"].get("namespace", "default") == namespace
               and c.matches(p["metadata"].get("labels") or {}))


SPREAD_MISMATCH = "node(s) didn't match pod topology spread constraints"  # ErrReasonConstraintsNotMatch
SPREAD_MISSING_LABEL = SPREAD_MISMATCH + " (missing required label)"   # ErrReasonNodeLabelNotMatch


def pod_topology_spread_filter(pod, ns, all_states):
    """filtering.go PreFilter (calPreFilterState) and Filter for the node
    `ns`; `all_states` is the whole snapshot (with any nominated pods the
    caller put on their node, which is what AddPod does upstream).
    The constraints are resolve_spread's hard ones (own DoNotSchedule, or
    DoNotSchedule defaults); none: PreFilter Skip, every node passes.
    PreFilter: every node of the snapshot that has every constraint's key
    adds, per constraint whose inclusion policies admit it, its
    countPodsMatchSelector to the constraint's domain (its value of the
    key), zero counts included; each constraint has its own counts.
    Filter, constraint by constraint in order:
      - the node lacks the key -> UnschedulableAndUnresolvable
        "... (missing required label)";
      - minMatch = the smallest count of the constraint's domains, or 0
        when it has fewer domains than minDomains (so also when it has none);
      - count of the node's domain (0 when absent) + 1 if the constraint's
        selector matches the pod's own labels - minMatch > maxSkew ->
        Unschedulable "node(s) didn't match pod topology spread constraints"."""
    hard, _soft, _all = spread_of(pod)
    if not hard:
        return None
    namespace = pod["metadata"].get("namespace", "default")
    counts = [{} for _ in hard]
    for s in all_states:
        labels = s.node["metadata"].get("labels") or {}
        if not all(c.key in labels for c in hard):
            continue
        for i, c in enumerate(hard):
            if not c.includes(pod, s.node):
                continue
            v = labels[c.key]
            counts[i][v] = counts[i].get(v, 0) + count_pods_match_selector(s.pods, c, namespace)
    labels = ns.node["metadata"].get("labels") or {}
    own = pod["metadata"].get("labels") or {}
    for i, c in enumerate(hard):
        if c.key not in labels:
            return (UNRESOLVABLE, [SPREAD_MISSING_LABEL])
        lo = 0 if len(counts[i]) < c.min_domains else min(counts[i].values())
        skew = counts[i].get(labels[c.key], 0) + (1 if c.matches(own) else 0) - lo
        if skew > c.max_skew:
            return (UNSCHED, [SPREAD_MISMATCH])
    return None


def pod_topology_spread_scores(pod, states, all_states):
    """podtopologyspread/scoring.go PreScore, Score, NormalizeScore over the
    feasible nodes `states`; `all_states` is the whole snapshot.
    PreScore: the constraints are resolve_spread's soft ones (the pod's
    ScheduleAnyway constraints, or the ScheduleAnyway defaults over its
    DefaultSelector). None: Skip, 0 on every node.
    With require_all (the pod's own constraints, or List defaults):
      - a feasible node lacking any key is ignored (score 0, out of the
        normalization);
    without it (the system defaults) no node is ignored, and a node's value
    of a key it lacks is "" (a domain of its own). Then:
      - per constraint, the domains are the values of the non-ignored
        feasible nodes (hostname constraints keep none: counted in Score),
        and the weight is ln(size + 2), size the number of those values, for
        kubernetes.io/hostname the number of non-ignored feasible nodes;
      - every node of the snapshot (feasible or not; with require_all only
        those with all the keys) adds, per constraint whose inclusion
        policies admit it and whose value ("" if it lacks the key) is one
        of the domains, countPodsMatchSelector of its pods to that domain.
    Score: for each constraint whose key the node has (a node lacking it
    skips the constraint), cnt = the domain's count, or for
    kubernetes.io/hostname countPodsMatchSelector of the node's own pods (no
    inclusion policy is applied there); the sum of cnt * weight +
    (maxSkew - 1) in float64, math.Round'ed.
    NormalizeScore: min and max over the non-ignored nodes (max starting at
    0); max 0 -> 100 each; else 100 * (max + min - s) / max in integers;
    ignored nodes 0."""
    zeros = {s.name: 0 for s in states}
    _hard, cons, require_all = spread_of(pod)
    if not cons or not all_states:
        return zeros  # Skip
    namespace = pod["metadata"].get("namespace", "default")

    def labels_of(s):
        return s.node["metadata"].get("labels") or {}

    def has_all_keys(s):
        return all(c.key in labels_of(s) for c in cons)

    ignored = {s.name for s in states if require_all and not has_all_keys(s)}
    domains = [{} for _ in cons]
    for s in states:
        if s.name in ignored:
            continue
        for i, c in enumerate(cons):
            if c.key != HOSTNAME_LABEL:
                domains[i].setdefault(labels_of(s).get(c.key, ""), 0)
    scored = len(states) - len(ignored)
    weights = [math.log(float((scored if c.key == HOSTNAME_LABEL else len(domains[i])) + 2))
               for i, c in enumerate(cons)]
    for s in all_states:
        if require_all and not has_all_keys(s):
            continue
        for i, c in enumerate(cons):
            if not c.includes(pod, s.node):
                continue
            v = labels_of(s).get(c.key, "")
            if v in domains[i]:
                domains[i][v] += count_pods_match_selector(s.pods, c, namespace)
    raw = {}
    for s in states:
        if s.name in ignored:
            continue
        total = 0.0
        for i, c in enumerate(cons):
            v = labels_of(s).get(c.key)
            if v is None:
                continue
            cnt = (count_pods_match_selector(s.pods, c, namespace) if c.key == HOSTNAME_LABEL
                   else domains[i][v])
            total += float(cnt) * weights[i] + float(c.max_skew - 1)
        if abs(total - math.floor(total) - 0.5) < 1e-9:
            raise AssertionError(f"{key(pod)}: raw spread score {total} on {s.name} is too close to .5 "
                                 f"(Go's math.Log and Python's may differ in the last bit)")
        raw[s.name] = go_round(total)
    lo = min(raw.values(), default=0)
    hi = max([0] + list(raw.values()))
    out = {}
    for s in states:
        if s.name in ignored:
            out[s.name] = 0
        elif hi == 0:
            out[s.name] = MAX_NODE_SCORE
        else:
            out[s.name] = MAX_NODE_SCORE * (hi + lo - raw[s.name]) // hi
    return out


def plugin_scores(pod, states, plugins, all_states=None, namespaces=None):
    """{plugin: {node: score}} for the feasible nodes `states`; `all_states`
    are all the snapshot's nodes (ImageLocality's spread counts them all,
    InterPodAffinity and PodTopologySpread the pods on them), `states` when
    not given;
    `namespaces` the labels of each Namespace object of the case."""
    all_states = states if all_states is None else all_states
    namespaces = namespaces or {}
    out = {}
    for name, _w, a in plugins:
        if name == "NodeResourcesFit":
            out[name] = {s.name: fit_score(pod, s, a) for s in states}
        elif name == "NodeResourcesBalancedAllocation":
            if balanced_skip(pod, a):
                out[name] = {s.name: 0 for s in states}  # Skip: contributes nothing
            else:
                out[name] = {s.name: balanced_score(pod, s, a) for s in states}
        elif name == "TaintToleration":
            out[name] = taint_scores(pod, states)
        elif name == "NodeAffinity":
            out[name] = node_affinity_scores(pod, states, a)
        elif name == "ImageLocality":
            out[name] = image_locality_scores(pod, states, all_states)
        elif name == "InterPodAffinity":
            out[name] = inter_pod_affinity_scores(pod, states, all_states, a, namespaces)
        elif name == "PodTopologySpread":
            out[name] = pod_topology_spread_scores(pod, states, all_states)
        else:
            raise ValueError(f"no score plugin {name} in sift")
    return out


# ---------------------------------------------------------------- postfilter
# DefaultPreemption (plugins/defaultpreemption/default_preemption.go) through
# Evaluator.Preempt (framework/preemption/preemption.go), with
# PodDisruptionBudgets (read as given: only metadata.namespace, spec.selector,
# status.disruptionsAllowed and status.disruptedPods; no disruption controller
# runs in a simulation, so a status never changes) and without extenders.
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
MIN_CANDIDATE_NODES_PERCENTAGE = 10  # DefaultPreemptionArgs defaults
MIN_CANDIDATE_NODES_ABSOLUTE = 100
PRIORITY_OFFSET = 2 ** 31            # math.MaxInt32 + 1, added to each victim's priority
MAX_TIE_ORDERS = 5040                # reprieve orders tried when ties could matter


class InvalidSelector(ValueError):
    pass


def _requirement_matches(req, labels):
    """One matchExpressions entry, as labels.Requirement.Matches after
    metav1.LabelSelectorAsSelector: In needs the key with a listed value,
    NotIn is met by a missing key or an unlisted value, Exists / DoesNotExist
    test the key alone. In and NotIn need values, Exists and DoesNotExist
    take none; any other operator is invalid."""
    op, k, vals = req.get("operator"), req.get("key"), req.get("values") or []
    if op in ("In", "NotIn"):
        if not vals:
            raise InvalidSelector(f"{op} on {k!r} without values")
        if op == "In":
            return k in labels and labels[k] in vals
        return k not in labels or labels[k] not in vals
    if op in ("Exists", "DoesNotExist"):
        if vals:
            raise InvalidSelector(f"{op} on {k!r} with values")
        return (k in labels) == (op == "Exists")
    raise InvalidSelector(f"unknown operator {op!r}")


def pdb_selects(pdb, pod):
    """Whether the PDB covers the pod, as filterPodsWithPDBViolation
    (default_preemption.go) decides it: same namespace; a pod without labels
    is covered by no PDB; the selector goes through
    metav1.LabelSelectorAsSelector, an invalid one (an error there) matches
    nothing, and so does an absent (labels.Nothing) or empty one (no
    matchLabels, no matchExpressions: selector.Empty() is skipped); otherwise
    every matchLabels pair and every expression must hold."""
    labels = pod["metadata"].get("labels") or {}
    if not labels:
        return False
    if pdb["metadata"].get("namespace", "default") != pod["metadata"].get("namespace", "default"):
        return False
    sel = pdb.get("spec", {}).get("selector")
    if sel is None:
        return False
    match_labels = sel.get("matchLabels") or {}
    exprs = sel.get("matchExpressions") or []
    if not match_labels and not exprs:
        return False
    try:
        results = [_requirement_matches(e, labels) for e in exprs]
    except InvalidSelector:
        return False
    return all(labels.get(k) == v for k, v in match_labels.items()) and all(results)


def filter_pods_with_pdb_violation(pods, pdbs):
    """filterPodsWithPDBViolation (default_preemption.go): splits `pods`
    (most important first) into (violating, non_violating), each in input
    order. Every PDB starts at its status.disruptionsAllowed, afresh for each
    node (the function runs once per SelectVictimsOnNode). For each pod in
    order, each PDB that covers it (pdb_selects) is charged one disruption,
    unless the pod's name is in that PDB's status.disruptedPods (the API
    server already counted its eviction); the pod is violating when any
    charged PDB drops below zero. Charging does not stop at the first PDB
    that goes negative: every covering PDB is charged."""
    allowed = [pdb.get("status", {}).get("disruptionsAllowed", 0) for pdb in pdbs]
    violating, non_violating = [], []
    for p in pods:
        violated = False
        for i, pdb in enumerate(pdbs):
            if not pdb_selects(pdb, p):
                continue
            if p["metadata"]["name"] in (pdb.get("status", {}).get("disruptedPods") or {}):
                continue
            allowed[i] -= 1
            if allowed[i] < 0:
                violated = True
        (violating if violated else non_violating).append(p)
    return violating, non_violating


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


def _victims_in_order(pod, ns, order, states, filters, nominations, pdbs):
    """The part of SelectVictimsOnNode that depends on the order of the
    potential victims: filter_pods_with_pdb_violation on `order`, then the
    violating pods are put back first and the non-violating ones after (each
    group in `order`); every violating pod that cannot stay counts one PDB
    violation (numViolatingVictim). Returns (victims, violations)."""
    violating, non_violating = filter_pods_with_pdb_violation(order, pdbs)
    victims = _reprieve(pod, ns, violating + non_violating, states, filters, nominations)
    gone = {key(v) for v in victims}
    return victims, sum(1 for p in violating if key(p) in gone)


def select_victims_on_node(pod, ns, states, filters, nominations, start, pdbs=()):
    """DefaultPreemption.SelectVictimsOnNode: (victims, violations, None) or
    (None, 0, status).
      - the potential victims are the node's pods of lower priority
        (isPreemptionAllowed with the default IsEligiblePod); none ->
        UnschedulableAndUnresolvable "No preemption victims found for
        incoming pod";
      - all of them are taken off and the filters run again (with nominated
        pods); a rejection is the node's status;
      - they are sorted most important first and split by
        filter_pods_with_pdb_violation; the violating ones are put back
        first, then the others, each kept if the pod still fits; the rest are
        the victims (sorted most important first again), and each violating
        pod among them is one PDB violation. Without PDBs every pod is
        non-violating and the order is the importance order."""
    lower = [p for p in ns.pods if priority(p) < priority(pod)]
    if not lower:
        return None, 0, (UNRESOLVABLE, [NO_VICTIMS])
    for p in lower:
        ns.remove(p)
    try:
        st = filter_node(pod, ns, states, filters, nominations)
        if st:
            return None, 0, st
        ordered = sorted(lower, key=lambda p: importance(p, start))
        outcomes = set()
        for order in _tie_orders(ordered, start):
            vs, n = _victims_in_order(pod, ns, order, states, filters, nominations, pdbs)
            outcomes.add((tuple(sorted(key(v) for v in vs)), n))
        if len(outcomes) > 1:
            raise AssertionError(f"{key(pod)}: the victims on {ns.name} (or their PDB violations) depend on the "
                                 f"order of pods of equal priority and start time (upstream: unstable sort): "
                                 f"{sorted(outcomes)}")
        victims, violations = _victims_in_order(pod, ns, ordered, states, filters, nominations, pdbs)
        if not victims:
            raise AssertionError(f"{key(pod)}: {ns.name} needs no victim (upstream: 'expected at least one "
                                 f"victim pod' error)")
        return sorted(victims, key=lambda p: importance(p, start)), violations, None
    finally:
        for p in lower:
            ns.add(p)


def _highest(vs):
    return max(priority(v) for v in vs)


# pickOneNodeForPreemption's criteria, each a score where higher is better, in
# upstream's order. A candidate is (node, victims, PDB violations); without
# PDBs the first criterion ties everywhere (0 violations) and the others decide.
PICK_CRITERIA = [
    ("fewest PDB violations", lambda c, start: -c[2]),
    ("lowest highest victim priority", lambda c, start: -_highest(c[1])),
    ("lowest sum of victim priorities, each plus 2^31",
     lambda c, start: -sum(priority(v) + PRIORITY_OFFSET for v in c[1])),
    ("fewest victims", lambda c, start: -len(c[1])),
    ("latest earliest start among the highest-priority victims",
     lambda c, start: min(start[key(v)] for v in c[1] if priority(v) == _highest(c[1]))),
]


def pick_one_node(candidates, start):
    """Evaluator.SelectCandidate / pickOneNodeForPreemption: one candidate is
    taken as is; otherwise each criterion keeps the candidates with its best
    score until one is left. Upstream iterates a map and (on the last tie)
    takes the first, so a tie after every criterion is refused; sift would
    take the first in node order. Returns (node, victims, violations,
    criterion)."""
    if len(candidates) == 1:
        return candidates[0] + ("the only candidate",)
    remaining = list(candidates)
    for name, f in PICK_CRITERIA:
        scores = [f(c, start) for c in remaining]
        best = max(scores)
        remaining = [c for c, sc in zip(remaining, scores) if sc == best]
        if len(remaining) == 1:
            return remaining[0] + (name,)
    raise AssertionError(f"preemption candidates tie on every criterion: {[c[0] for c in remaining]} "
                         f"(upstream: map order)")


def post_filter(pod, statuses, states, filters, nominations, start, pdbs=()):
    """DefaultPreemption.PostFilter -> Evaluator.Preempt. Returns a dict:
    {"message": ...} when preemption does not help (with "clear": whether the
    pod's nomination is cleared: Preempt returns a result with an empty
    nominated node when no candidate is found, nil when the pod is not
    eligible), or {"node", "victims", "violations", "why", "candidates"}
    when it does.
      1. PodEligibleToPreemptOthers: preemptionPolicy Never -> "not eligible
         due to preemptionPolicy=Never." Its other rule (a terminating victim
         of lower priority on the pod's nominated node) never applies: the
         loop deletes victims at once;
      2. findCandidates: the potential nodes are those whose filter status is
         Unschedulable (NodesForStatusCode), in node order; none -> an empty
         status map. Every PDB of the cluster is passed on (the PDB lister,
         all namespaces);
      3. DryRunPreemption: SelectVictimsOnNode on the potential nodes; a
         candidate with no PDB violation goes to the non-violating list, else
         to the violating one, each list holding at most numCandidates =
         max(10% of the potential nodes, 100) capped at their number (more
         are dropped). The search stops once the non-violating list is not
         empty and both lists together hold numCandidates, so it looks past
         numCandidates until it finds a node without PDB violations. The
         candidates are the non-violating ones, then the violating ones.
         Upstream starts at a random offset; this model (like sift) at the
         first node, and refuses a case where the search would stop before
         the last potential node (the offset would decide). With sift's
         fixed defaults numCandidates is the number of potential nodes up to
         100 of them, so there every potential node is dry-run;
      4. no candidate -> a FitError over the dry-run statuses, nodes absent
         from it reading "Preemption is not helpful for scheduling"; its
         Error() text, prefixed "preemption: ", is the PostFilter message;
      5. otherwise SelectCandidate (pick_one_node) chooses the node."""
    if pod["spec"].get("preemptionPolicy") == "Never":
        return {"message": "preemption: not eligible due to preemptionPolicy=Never.", "clear": False}
    potential = [s for s in states if statuses[s.name][0] == UNSCHED]
    hist, non_violating, violating = {}, [], []
    if potential:
        want = min(max(len(potential) * MIN_CANDIDATE_NODES_PERCENTAGE // 100,
                       MIN_CANDIDATE_NODES_ABSOLUTE), len(potential))
        for i, s in enumerate(potential):
            victims, violations, st = select_victims_on_node(pod, s, states, filters, nominations, start, pdbs)
            if victims is None:
                for r in st[1]:
                    hist[r] = hist.get(r, 0) + 1
                continue
            bucket = violating if violations else non_violating
            if len(bucket) < want:
                bucket.append((s.name, victims, violations))
            if non_violating and len(non_violating) + len(violating) >= want and i + 1 < len(potential):
                raise AssertionError(f"{key(pod)}: the dry run stops at {want} candidates before the last "
                                     f"potential node; upstream's random offset would decide which")
    candidates = non_violating + violating
    if not candidates:
        absent = len(states) - len(potential)
        if absent:
            hist[NOT_HELPFUL] = hist.get(NOT_HELPFUL, 0) + absent
        return {"message": "preemption: " + histogram_message(len(states), hist), "clear": True}
    node, victims, violations, why = pick_one_node(candidates, start)
    return {"node": node, "victims": victims, "violations": violations, "why": why,
            "candidates": candidates}


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
def simulate(nodes, pods, workload, config=None, filters=None, pdbs=(), ties_ok=False, namespaces=None,
             workloads=()):
    """The scheduleOne loop over a workload that arrives at once (instant 0).
    A tie between the highest totals is an error unless `ties_ok` (upstream
    picks among them at random; sift takes the first in node order, as here,
    and the trace marks the step "tie").
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
    not change the outcome, see README.md). `pdbs` are the cluster's
    PodDisruptionBudgets, read by the preemption only and never updated;
    `namespaces` the labels of its Namespace objects, by name; `workloads`
    its Services, ReplicationControllers, ReplicaSets and StatefulSets,
    which give each pending pod its DefaultSelector (with_spread), also
    never updated.

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
    filters = DEFAULT_FILTERS if filters is None else filters
    now = 0
    states = [NodeState(n) for n in nodes]
    by_name = {s.name: s for s in states}
    start = {}
    for p in pods:
        by_name[p["spec"]["nodeName"]].add(p)
        start[key(p)] = 0
    plugins = score_plugins(config)
    workload = [with_spread(p, workloads, config) for p in workload]
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
                result = post_filter(pod, statuses, states, filters, nominations, start, pdbs)
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
                                    "violations": result["violations"], "why": result["why"],
                                    "candidates": [(n, [key(v) for v in vs], nv)
                                                   for n, vs, nv in result["candidates"]]}
                active = sorted(active + waiting, key=qkey)
                waiting = []
                continue
            if len(feasible) == 1:
                host = feasible[0]
                trace.append({"pod": k, "only": host.name})
            else:
                ps = plugin_scores(pod, feasible, plugins, states, namespaces)
                total = {s.name: sum(ps[name][s.name] * w for name, w, _ in plugins) for s in feasible}
                best = max(total.values())
                top = [n for n, v in total.items() if v == best]
                if len(top) != 1 and not ties_ok:
                    raise AssertionError(f"{k}: tie between {top} at {best} ({ps})")
                host = by_name[top[0]]
                trace.append({"pod": k, "scores": ps, "total": total, "host": host.name,
                              "tie": top if len(top) > 1 else None})
        assumed = dict(pod, spec=dict(pod["spec"], nodeName=host.name))
        host.add(assumed)
        binds[k] = host.name
        start[k] = now
        messages.pop(k, None)
        nominations.pop(k, None)
    unscheduled = [key(p) for p in waiting]
    return binds, unscheduled, messages, preempted, trace
