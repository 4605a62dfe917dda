"""sift's Python SDK: a scheduler plugin is one class and one line.

    import sift

    class AvoidTmp(sift.Plugin):
        name = "AvoidTmp"
        node_fields = sift.NodeFields.LABELS

        def filter(self, pod, state, node):
            if node.labels.get("tier") == "tmp":
                return sift.unresolvable("node(s) were tmp nodes")

    Predicate, Scorer, Reserver = sift.export(AvoidTmp)

componentize-py builds the module into a component of sift's latest
contract (wit/0.7.0, world `plugin`) and looks up `Predicate`, `Scorer` and
`Reserver` in it; `export` makes them. This module keeps what the host
syncs into the instance (the node table, the cluster view, the objects)
and turns the contract's batched calls into one call per node, so a
plugin sees Kubernetes concepts only, as with the Rust SDK's `Plugin`
trait:

- a filter implements `filter(pod, state, node)`, returning None (the
  node passes) or a status (`unschedulable`, `unresolvable`, `error`);
- a scorer sets `extension_points = sift.ExtensionPoints.SCORE` and
  implements `score(pod, state, node) -> int`, and `normalize_scores`
  when its raw scores are not in 0..100 (`default_normalize` is
  kube-scheduler's);
- a reserver (`RESERVE`) implements `reserve(pod, node) -> dict` (the
  annotations the assumed pod carries) and `pre_bind(pod, node)` (the
  objects to write before the pod is bound).

`prepare(pod)` and `pre_score(pod, nodes)` compute the per-pod `state`
the other calls get (kube-scheduler's CycleState); return `sift.SKIP` to
skip the pod, `sift.Reject(status)` or `sift.Narrow(names, state)` from
`prepare`. By default a filter proceeds with state None, as a scorer does.

Records are the generated `wit_world` dataclasses, with one convenience:
`labels`, `annotations` and `node_selector` are dicts. An exception
raised by a plugin method becomes an `error` status naming it, which the
host reports (it aborts the cycle, as kube-scheduler does), instead of a
trap that would cost the instance; so does a filter answer that is not a
status and a score that is not a number. A status is sent as it was
returned: build it once and do not change it afterwards. `filter` on a
node with nominated pods (the host's first pass) sees their requests,
ports and count added to the node; unlike the Rust SDK's `add_pods`, the
state is not told of them.

The sandbox grants nothing by default: the standard library works, but
opening a file fails, the environment is empty, and the clocks read 1970
(see docs/plugin-authors.md).
"""

import copy
import json
from typing import Any, Callable, Dict, List, Optional

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import log as _wlog
from wit_world.imports import types as t

NodeFields = t.NodeFields
ExtensionPoints = t.ExtensionPoints
Code = t.Code
Status = t.Status

# kube-scheduler's framework.MaxNodeScore.
MAX_NODE_SCORE = 100

# What the Rust SDK's NodeFields::ALL holds: everything but the costly
# fields (the whole object, images, volumes, declared features).
ALL_NODE_FIELDS = (
    NodeFields.LABELS
    | NodeFields.TAINTS
    | NodeFields.UNSCHEDULABLE
    | NodeFields.RESOURCES
    | NodeFields.PORTS
    | NodeFields.ANNOTATIONS
    | NodeFields.CONDITIONS
)


def unschedulable(*reasons: str) -> Status:
    """The node does not fit now, but could after preemption."""
    return Status(code=Code.UNSCHEDULABLE, reasons=list(reasons))


def unresolvable(*reasons: str) -> Status:
    """The node does not fit, and preemption would not help."""
    return Status(code=Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons=list(reasons))


def error(message: str) -> Status:
    """Something went wrong inside the plugin: the cycle is aborted."""
    return Status(code=Code.ERROR, reasons=[message])


class _Skip:
    def __repr__(self) -> str:
        return "sift.SKIP"


# Returned from `prepare` or `pre_score`: nothing to do for this pod.
SKIP = _Skip()


class Reject:
    """Returned from `prepare`: the pod fits nowhere; `status` says why."""

    def __init__(self, status: Status):
        self.status = status


class Narrow:
    """Returned from `prepare`: only these nodes (by name) can pass; `state`
    is what `filter` gets for them."""

    def __init__(self, names: List[str], state: Any = None):
        self.names = list(names)
        self.state = state


def log(message: str, level: str = "info") -> None:
    """Writes one line to the host's log, tagged with the plugin's name.
    `level`: trace, debug, info, warn or error."""
    _wlog.log(_wlog.Level[level.upper()], message)


def _div(a: int, b: int) -> int:
    """Integer division truncating toward zero, as Go's."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def default_normalize(scores: List[int], reverse: bool = False) -> List[int]:
    """kube-scheduler's DefaultNormalizeScore: scale to 0..100 by the
    highest score, at least 0 (integer division, truncating as Go's);
    `reverse` turns the scale over. With no positive score the scores stay
    as they are (or become 100 each, reversed)."""
    top = max([0, *scores])
    if top == 0:
        return [MAX_NODE_SCORE for _ in scores] if reverse else list(scores)
    out = [_div(s * MAX_NODE_SCORE, top) for s in scores]
    return [MAX_NODE_SCORE - s for s in out] if reverse else out


class Cluster:
    """What the host synced into the instance besides nodes: the pods on
    each node by group (with `reads_cluster`), the namespaces' labels, and
    the objects of `object_kinds`, whole, as JSON text by key."""

    def __init__(self) -> None:
        self.nodes: Dict[int, t.Node] = {}
        self.groups: Dict[int, t.PodGroup] = {}
        self.placements: Dict[int, List[t.GroupCount]] = {}
        self.namespaces: Dict[str, Dict[str, str]] = {}
        self.objects: Dict[str, Dict[str, str]] = {}

    def node(self, name: str) -> Optional[t.Node]:
        for node in self.nodes.values():
            if node.name == name:
                return node
        return None

    def object(self, kind: str, key: str) -> Optional[Any]:
        """The object of `kind` at `key` (`namespace/name`, or `name` for a
        cluster-scoped kind), parsed; None when absent."""
        text = self.objects.get(kind, {}).get(key)
        return json.loads(text) if text is not None else None


class Plugin:
    """The base class: every method has a default, so a plugin implements
    only what its extension points need. Instances are built by the host's
    `init` with the configured arguments (a dict)."""

    # The name in configuration and statuses; required.
    name: str = ""
    # What the plugin implements: FILTER (the default), SCORE, RESERVE.
    extension_points: t.ExtensionPoints = ExtensionPoints.FILTER
    # The node fields the plugin reads; the host sends no others.
    node_fields: t.NodeFields = ALL_NODE_FIELDS
    # Whether `prepare` reads the pods on nodes and the namespaces.
    reads_cluster: bool = False
    # Whether the plugin reads `pod.object`, the whole Pod as JSON.
    pod_object: bool = False
    # Pod annotation keys read on nodes' bound pods (`node.pod_annotations`).
    pod_annotation_keys: List[str] = []
    # The kinds of cluster objects the plugin reads (`cluster.objects`).
    object_kinds: List[str] = []

    def __init__(self, args: Dict[str, Any]):
        self.args = args
        # Set by the SDK before any other call.
        self.cluster: Cluster = Cluster()

    def prepare(self, pod: t.Pod) -> Any:
        return None if self.extension_points & ExtensionPoints.FILTER else SKIP

    def filter(self, pod: t.Pod, state: Any, node: t.Node) -> Optional[Status]:
        return None

    def pre_score(self, pod: t.Pod, nodes: List[t.Node]) -> Any:
        return None if self.extension_points & ExtensionPoints.SCORE else SKIP

    def score(self, pod: t.Pod, state: Any, node: t.Node) -> int:
        return 0

    def normalize_scores(self, pod: t.Pod, state: Any, scores: List[int]) -> List[int]:
        return scores

    def reserve(self, pod: t.Pod, node: t.Node) -> Dict[str, str]:
        return {}

    def pre_bind(self, pod: t.Pod, node: t.Node) -> List[t.ObjectWrite]:
        """The objects to write before the pod is bound (see the WIT's
        `object-write`); `sift.write(kind, obj)` builds one from a dict."""
        return []


def write(kind: str, obj: Any) -> t.ObjectWrite:
    """An object write: `obj` is the whole object, a dict or JSON text."""
    return t.ObjectWrite(kind=kind, object=obj if isinstance(obj, str) else json.dumps(obj))


def _as_dict(pairs: Any) -> Dict[str, str]:
    return pairs if isinstance(pairs, dict) else {p.key: p.value for p in pairs}


def _pod(pod: t.Pod) -> t.Pod:
    pod.labels = _as_dict(pod.labels)
    pod.annotations = _as_dict(pod.annotations)
    pod.node_selector = _as_dict(pod.node_selector)
    return pod


def _failed(what: str, e: BaseException) -> Status:
    return error(f"{what}: {type(e).__name__}: {e}")


def _not_status(value: Any) -> Status:
    return error(f"filter returned {value}, not a status")


# What the host's s64 holds.
_S64 = range(-(2**63), 2**63)


def _scores(what: str, values: Any) -> List[int]:
    """Scores as the host takes them: numbers, truncated to integers, in
    s64; anything else raises the Error status naming `what`."""
    # The usual answer, a list of plain ints in range, checked by builtins
    # (no Python loop): about 1 µs per node less at 5,000 nodes.
    if type(values) is list and (
        not values
        or (set(map(type, values)) == {int} and min(values) >= _S64.start and max(values) < _S64.stop)
    ):
        return values
    out = []
    for i, v in enumerate(values):
        try:
            n = int(v)
        except (TypeError, ValueError, OverflowError):
            raise Err(error(f"{what} returned {v!r} for node {i}, not a number"))
        if isinstance(v, bool) or n not in _S64:
            raise Err(error(f"{what} returned {v!r} for node {i}, not a score"))
        out.append(n)
    return out


class _Instance:
    """The plugin and what one cycle holds."""

    def __init__(self, cls: Callable[[Dict[str, Any]], Plugin]):
        self.cls = cls
        self.plugin: Optional[Plugin] = None
        self.cluster = Cluster()
        # (pod, state) of the current filter cycle, and of the scoring one.
        self.filtering: Optional[tuple] = None
        self.scoring: Optional[tuple] = None


def export(cls: type) -> tuple:
    """The classes componentize-py exports for the plugin class `cls`:
    `Predicate, Scorer, Reserver = sift.export(MyPlugin)`."""
    if not (isinstance(cls, type) and issubclass(cls, Plugin)) or not cls.name:
        raise TypeError("sift.export takes a sift.Plugin subclass that sets `name`")
    me = _Instance(cls)

    class Predicate(exports.Predicate):
        def describe(self) -> t.PluginInfo:
            return t.PluginInfo(
                name=cls.name,
                node_fields=cls.node_fields,
                cluster=cls.reads_cluster,
                pod_object=cls.pod_object,
                extension_points=cls.extension_points,
                pod_annotation_keys=list(cls.pod_annotation_keys),
                object_kinds=list(cls.object_kinds),
            )

        def init(self, args: str) -> None:
            try:
                parsed = json.loads(args) if args.strip() else {}
            except ValueError as e:
                raise Err(f"plugin arguments are not valid JSON: {e}")
            if parsed is None:
                parsed = {}
            if not isinstance(parsed, dict):
                raise Err(f"plugin arguments must be an object, got {args}")
            try:
                plugin = cls(parsed)
            except Exception as e:
                raise Err(f"{type(e).__name__}: {e}")
            plugin.cluster = me.cluster
            me.plugin = plugin

        def sync_nodes(self, upserts: List[t.NodeEntry], removals: List[int]) -> None:
            nodes = me.cluster.nodes
            for slot in removals:
                nodes.pop(slot, None)
                me.cluster.placements.pop(slot, None)
            for entry in upserts:
                node = entry.node
                node.labels = _as_dict(node.labels)
                node.annotations = _as_dict(node.annotations)
                nodes[entry.slot] = node

        def sync_pod_groups(self, upserts: List[t.PodGroup], removals: List[int]) -> None:
            for gid in removals:
                me.cluster.groups.pop(gid, None)
            for group in upserts:
                group.labels = _as_dict(group.labels)
                me.cluster.groups[group.id] = group

        def sync_placements(self, upserts: List[t.Placement]) -> None:
            for p in upserts:
                me.cluster.placements[p.slot] = p.groups

        def sync_namespaces(self, upserts: List[t.Namespace], removals: List[str]) -> None:
            for name in removals:
                me.cluster.namespaces.pop(name, None)
            for ns in upserts:
                me.cluster.namespaces[ns.name] = _as_dict(ns.labels)

        def sync_objects(self, kind: str, upserts: List[t.ClusterObject], removals: List[str]) -> None:
            table = me.cluster.objects.setdefault(kind, {})
            for key in removals:
                table.pop(key, None)
            for o in upserts:
                table[o.key] = o.object

        def prepare(self, pod: t.Pod) -> t.PrepareResult:
            # Forget the previous pod first: a stray filter call must not
            # see it.
            me.filtering = None
            if me.plugin is None:
                return t.PrepareResult_Reject(error("prepare called before init"))
            pod = _pod(pod)
            try:
                state = me.plugin.prepare(pod)
            except Exception as e:
                return t.PrepareResult_Reject(_failed("prepare", e))
            if state is SKIP:
                return t.PrepareResult_Skip()
            if isinstance(state, Reject):
                return t.PrepareResult_Reject(state.status)
            if isinstance(state, Narrow):
                me.filtering = (pod, state.state)
                return t.PrepareResult_Narrow(state.names)
            me.filtering = (pod, state)
            return t.PrepareResult_Proceed()

        def filter(self, slots: List[int]) -> t.Verdicts:
            # Each distinct status is sent once; rejections point at it. A
            # status built once and returned again (a module constant) is
            # found by identity, without building its key.
            statuses: List[Status] = []
            by_id: Dict[int, int] = {}
            by_text: Dict[tuple, int] = {}
            kept = []  # keeps each status alive, so that its id stays its own
            rejections = []
            plugin, nodes = me.plugin, me.cluster.nodes
            pod, state = me.filtering if me.filtering is not None else (None, None)
            for i, slot in enumerate(slots):
                node = nodes.get(slot)
                if plugin is None or me.filtering is None:
                    status = error("filter called without a prepared pod")
                elif node is None:
                    status = error(f"node slot {slot} was never synced")
                else:
                    try:
                        status = plugin.filter(pod, state, node)
                    except Exception as e:
                        status = _failed("filter", e)
                    if status is not None and not isinstance(status, Status):
                        status = _not_status(status)
                if status is None or status.code == Code.SUCCESS:
                    continue
                at = by_id.get(id(status))
                if at is None:
                    key = (status.code, tuple(status.reasons))
                    at = by_text.get(key)
                    if at is None:
                        at = len(statuses)
                        by_text[key] = at
                        statuses.append(status)
                    by_id[id(status)] = at
                    kept.append(status)
                rejections.append((i, at))
            return t.Verdicts(statuses=statuses, rejections=rejections)

        def filter_nominated(self, slot: int, added: List[t.NominatedPod]) -> Status:
            # filter's steps for one node, with the nominated pods added.
            if me.filtering is None or me.plugin is None:
                return error("filter called without a prepared pod")
            node = me.cluster.nodes.get(slot)
            if node is None:
                return error(f"node slot {slot} was never synced")
            pod, state = me.filtering
            try:
                status = me.plugin.filter(pod, state, _with_pods(node, added))
            except Exception as e:
                return _failed("filter", e)
            if status is None:
                return Status(code=Code.SUCCESS, reasons=[])
            return status if isinstance(status, Status) else _not_status(status)

    class Scorer(exports.Scorer):
        def pre_score(self, pod: t.Pod, feasible: List[int]) -> t.PreScoreResult:
            me.scoring = None
            if me.plugin is None:
                return t.PreScoreResult_Error(error("pre-score called before init"))
            pod = _pod(pod)
            missing = [s for s in feasible if s not in me.cluster.nodes]
            if missing:
                return t.PreScoreResult_Error(error(f"node slot {missing[0]} was never synced"))
            nodes = [me.cluster.nodes[s] for s in feasible]
            try:
                state = me.plugin.pre_score(pod, nodes)
            except Exception as e:
                return t.PreScoreResult_Error(_failed("pre_score", e))
            if state is SKIP:
                return t.PreScoreResult_Skip()
            me.scoring = (pod, state)
            return t.PreScoreResult_Proceed()

        def score(self, slots: List[int]) -> List[int]:
            if me.scoring is None or me.plugin is None:
                raise Err(error("score called without a pre-scored pod"))
            pod, state = me.scoring
            score, nodes = me.plugin.score, me.cluster.nodes
            out = []
            for slot in slots:
                node = nodes.get(slot)
                if node is None:
                    raise Err(error(f"node slot {slot} was never synced"))
                try:
                    out.append(score(pod, state, node))
                except Exception as e:
                    raise Err(_failed("score", e))
            return _scores("score", out)

        def normalize_scores(self, scores: List[int]) -> List[int]:
            if me.scoring is None or me.plugin is None:
                raise Err(error("normalize-scores called without a pre-scored pod"))
            pod, state = me.scoring
            # Scores in range already: nothing to do, and nothing to copy.
            if type(me.plugin).normalize_scores is Plugin.normalize_scores:
                return scores
            try:
                out = list(me.plugin.normalize_scores(pod, state, list(scores)))
            except Exception as e:
                raise Err(_failed("normalize_scores", e))
            if len(out) != len(scores):
                raise Err(error(f"normalize_scores returned {len(out)} scores for {len(scores)} nodes"))
            return _scores("normalize_scores", out)

    class Reserver(exports.Reserver):
        def reserve(self, pod: t.Pod, slot: int) -> t.Reservation:
            if me.plugin is None:
                raise Err(error("reserve called before init"))
            node = me.cluster.nodes.get(slot)
            if node is None:
                raise Err(error(f"node slot {slot} was never synced"))
            pod = _pod(pod)
            try:
                annotations = me.plugin.reserve(pod, node) or {}
                writes = list(me.plugin.pre_bind(pod, node) or [])
                labels = [t.Label(key=str(k), value=str(v)) for k, v in annotations.items()]
            except Exception as e:
                raise Err(_failed("reserve", e))
            if not all(isinstance(w, t.ObjectWrite) for w in writes):
                raise Err(error("pre_bind must return a list of sift.write(kind, object)"))
            return t.Reservation(annotations=labels, writes=writes)

    return Predicate, Scorer, Reserver


def _with_pods(node: t.Node, added: List[t.NominatedPod]) -> t.Node:
    """The node with nominated pods placed on it: their requests, ports
    and count added (as the Rust SDK's `Node::add_pod`)."""
    node = copy.deepcopy(node)
    r = node.requested
    for a in added:
        q = a.requests
        r.milli_cpu += q.milli_cpu
        r.memory += q.memory
        r.ephemeral_storage += q.ephemeral_storage
        scalar = {s.name: s.amount for s in r.scalar}
        for s in q.scalar:
            scalar[s.name] = scalar.get(s.name, 0) + s.amount
        r.scalar = [t.ResourceAmount(name=k, amount=v) for k, v in sorted(scalar.items())]
        node.pod_count += 1
        node.used_ports.extend(a.host_ports)
    return node
