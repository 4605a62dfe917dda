#!/usr/bin/env python3
"""Independent model of kube-scheduler InterPodAffinity PreFilter/Filter,
written from docs/upstream/interpodaffinity.md sections 0-3.

Reads each case file, derives the per-node outcome and the FitError
message, and compares them with the file's "expect".
"""
import glob
import json
import os
import sys

AFF_R = "node(s) didn't match pod affinity rules"
ANTI_R = "node(s) didn't match pod anti-affinity rules"
EXIST_R = "node(s) didn't satisfy existing pods anti-affinity rules"
UAU, U = "UnschedulableAndUnresolvable", "Unschedulable"

NOTHING = "nothing"   # nil selector
EVERYTHING = "everything"  # {} selector


# ---------------------------------------------------------------- selectors
def selector(sel):
    """Returns NOTHING, EVERYTHING or a list of (key, op, values)."""
    if sel is None:
        return NOTHING
    reqs = []
    for k, v in (sel.get("matchLabels") or {}).items():
        reqs.append((k, "In", [v]))
    for e in sel.get("matchExpressions") or []:
        op = e["operator"]
        vals = e.get("values") or []
        if op in ("In", "NotIn") and not vals:
            raise ValueError("In/NotIn needs values")
        if op in ("Exists", "DoesNotExist") and vals:
            raise ValueError("Exists/DoesNotExist takes no values")
        if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            raise ValueError(op)
        reqs.append((e["key"], op, vals))
    if not reqs:
        return EVERYTHING
    return reqs


def sel_matches(sel, labels):
    if sel == NOTHING:
        return False
    if sel == EVERYTHING:
        return True
    labels = labels or {}
    for k, op, vals in sel:
        if op == "In":
            ok = k in labels and labels[k] in vals
        elif op == "NotIn":
            ok = k not in labels or labels[k] not in vals
        elif op == "Exists":
            ok = k in labels
        else:
            ok = k not in labels
        if not ok:
            return False
    return True


# ---------------------------------------------------------------- terms
class Term:
    def __init__(self, owner_ns, raw, owner_labels):
        ls = raw.get("labelSelector")
        # apiserver-side matchLabelKeys / mismatchLabelKeys merge
        if ls is not None and (raw.get("matchLabelKeys") or raw.get("mismatchLabelKeys")):
            ls = json.loads(json.dumps(ls))
            ls.setdefault("matchExpressions", [])
            for k in raw.get("matchLabelKeys") or []:
                if k in owner_labels:
                    ls["matchExpressions"].append({"key": k, "operator": "In", "values": [owner_labels[k]]})
            for k in raw.get("mismatchLabelKeys") or []:
                if k in owner_labels:
                    ls["matchExpressions"].append({"key": k, "operator": "NotIn", "values": [owner_labels[k]]})
        self.selector = selector(ls)
        nss = raw.get("namespaces") or []
        nsel = raw.get("namespaceSelector")
        if not nss and nsel is None:
            self.namespaces = {owner_ns}
        else:
            self.namespaces = set(nss)
        self.ns_selector = selector(nsel)
        self.tk = raw["topologyKey"]

    def matches(self, pod, ns_labels):
        return ((pod.ns in self.namespaces or sel_matches(self.ns_selector, ns_labels))
                and sel_matches(self.selector, pod.labels))


class Pod:
    def __init__(self, obj):
        md = obj["metadata"]
        self.name = md["name"]
        self.ns = md.get("namespace") or "default"
        self.labels = md.get("labels") or {}
        spec = obj.get("spec") or {}
        self.node = spec.get("nodeName")
        self.phase = (obj.get("status") or {}).get("phase")
        aff = spec.get("affinity") or {}
        pa = aff.get("podAffinity") or {}
        paa = aff.get("podAntiAffinity") or {}
        self.raw_anti = paa.get("requiredDuringSchedulingIgnoredDuringExecution") or []
        self.aff = [Term(self.ns, t, self.labels) for t in pa.get("requiredDuringSchedulingIgnoredDuringExecution") or []]
        self.anti = [Term(self.ns, t, self.labels) for t in self.raw_anti]


# ---------------------------------------------------------------- algorithm
def run(case):
    nodes = [(n["metadata"]["name"], n["metadata"].get("labels") or {}) for n in case["nodes"]]
    node_names = {n for n, _ in nodes}
    existing = [Pod(p) for p in case.get("pods", [])]
    # terminal pods and pods on unknown nodes are absent
    existing = [p for p in existing if p.phase not in ("Succeeded", "Failed") and p.node in node_names]
    ns_objs = {n["metadata"]["name"]: n["metadata"].get("labels") or {} for n in case.get("namespaces", [])}
    P = Pod(case["pod"])

    # PreFilter step 3: merge namespaceSelector of incoming terms
    for t in P.aff + P.anti:
        if t.ns_selector == EVERYTHING:
            continue
        for name, lbls in ns_objs.items():
            if sel_matches(t.ns_selector, lbls):
                t.namespaces.add(name)
        t.ns_selector = NOTHING
    ns_labels = ns_objs.get(P.ns, {})

    by_node = {n: [] for n in node_names}
    for p in existing:
        by_node[p.node].append(p)
    labels_of = dict(nodes)

    existing_counts = {}
    for n, lbls in nodes:
        for e in by_node[n]:
            if not e.raw_anti:
                continue
            for t in e.anti:
                if t.matches(P, ns_labels) and t.tk in lbls:
                    k = (t.tk, lbls[t.tk])
                    existing_counts[k] = existing_counts.get(k, 0) + 1

    aff_counts, anti_counts = {}, {}
    if P.aff or P.anti:
        for n, lbls in nodes:
            for e in by_node[n]:
                if P.aff and all(t.matches(e, None) for t in P.aff):
                    for t in P.aff:
                        if t.tk in lbls:
                            k = (t.tk, lbls[t.tk])
                            aff_counts[k] = aff_counts.get(k, 0) + 1
                for t in P.anti:
                    if t.matches(e, None) and t.tk in lbls:
                        k = (t.tk, lbls[t.tk])
                        anti_counts[k] = anti_counts.get(k, 0) + 1

    skip = not existing_counts and not P.aff and not P.anti
    result = {}
    for n, L in nodes:
        if skip:
            result[n] = None
            continue
        # satisfyPodAffinity
        aff_ok = True
        pods_exist = True
        missing_key = False
        for t in P.aff:
            if t.tk not in L:
                missing_key = True
                break
            if aff_counts.get((t.tk, L[t.tk]), 0) <= 0:
                pods_exist = False
        if missing_key:
            aff_ok = False
        elif not pods_exist:
            aff_ok = (not aff_counts) and bool(P.aff) and all(t.matches(P, None) for t in P.aff)
        if not aff_ok:
            result[n] = (UAU, AFF_R)
            continue
        anti_ok = True
        if anti_counts:
            for t in P.anti:
                if t.tk in L and anti_counts.get((t.tk, L[t.tk]), 0) > 0:
                    anti_ok = False
                    break
        if not anti_ok:
            result[n] = (U, ANTI_R)
            continue
        ex_ok = True
        if existing_counts:
            for k, v in L.items():
                if existing_counts.get((k, v), 0) > 0:
                    ex_ok = False
                    break
        if not ex_ok:
            result[n] = (U, EXIST_R)
            continue
        result[n] = None
    return [n for n, _ in nodes], result, skip


def derive_expect(case):
    order, result, skip = run(case)
    feasible = [n for n in order if result[n] is None]
    statuses = {n: {"code": r[0], "plugin": "InterPodAffinity", "reasons": [r[1]]}
                for n, r in result.items() if r is not None}
    exp = {"feasible": feasible, "statuses": statuses}
    if not feasible:
        counts = {}
        for r in result.values():
            counts[r[1]] = counts.get(r[1], 0) + 1
        exp["message"] = (f"0/{len(order)} nodes are available: "
                          + ", ".join(sorted(f"{c} {r}" for r, c in counts.items())) + ".")
    return exp, skip


def main(paths):
    files = []
    for p in paths:
        files += sorted(glob.glob(os.path.join(p, "[0-9][0-9][0-9]-*.json"))) if os.path.isdir(p) else [p]
    bad = 0
    for f in files:
        case = json.load(open(f))
        got, skip = derive_expect(case)
        want = case["expect"]
        same = (got["feasible"] == want["feasible"] and got["statuses"] == want.get("statuses", {})
                and got.get("message") == want.get("message"))
        tag = "ok  " if same else "DIFF"
        print(f"{tag} {os.path.basename(f)}{'  (PreFilter Skip)' if skip else ''}")
        if not same:
            bad += 1
            print("     model:    ", json.dumps(got))
            print("     catalogue:", json.dumps(want))
    print(f"{len(files)} files, {bad} disagreements")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests", "cases", "InterPodAffinity")]))
