"""Writes the catalogue (cases.py) as sift case files: one JSON file per
upstream test case, Kubernetes objects as kubectl prints them.

    python3 docs/upstream/pts-model/to_cases.py tests/cases/PodTopologySpread
"""
import json, os, re, sys
sys.path.insert(0, os.path.dirname(__file__))
from cases import CASES
from pts import prefilter, filt

SOURCE = ("kubernetes/kubernetes pkg/scheduler/framework/plugins/podtopologyspread/"
          "filtering_test.go, {suite}: \"{name}\"")
DERIVED = ("sift: derived from upstream's PodTopologySpread rules "
           "(docs/upstream/podtopologyspread.md), not an upstream table case")
REASON = {"Unschedulable": "node(s) didn't match pod topology spread constraints",
          "UnschedulableAndUnresolvable":
          "node(s) didn't match pod topology spread constraints (missing required label)"}

def selector(sel):
    if sel is None:
        return None
    out = {}
    if sel.get("ml"):
        out["matchLabels"] = dict(sel["ml"])
    if sel.get("exists"):
        out["matchExpressions"] = [{"key": k, "operator": "Exists"} for k in sel["exists"]]
    return out

def node(n):
    obj = {"apiVersion": "v1", "kind": "Node",
           "metadata": {"name": n["name"], "labels": n.get("labels", {})},
           "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
    if n.get("taints"):
        obj["spec"] = {"taints": n["taints"]}
    return obj

def bound(p):
    meta = {"name": p["name"], "namespace": p.get("ns", "default"), "labels": p.get("labels", {})}
    if p.get("terminating"):
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"nodeName": p["node"], "containers": [{"name": "c", "image": "registry.example/c:1"}]},
            "status": {"phase": "Running"}}

def incoming(pod):
    spec = {"containers": [{"name": "c", "image": "registry.example/c:1"}], "topologySpreadConstraints": []}
    for c in pod["tsc"]:
        tsc = {"maxSkew": c["maxSkew"], "topologyKey": c["key"], "whenUnsatisfiable": c.get("when", "DoNotSchedule")}
        sel = selector(c["sel"])
        if sel is not None:
            tsc["labelSelector"] = sel
        if "minDomains" in c: tsc["minDomains"] = c["minDomains"]
        if "aff" in c: tsc["nodeAffinityPolicy"] = c["aff"]
        if "taint" in c: tsc["nodeTaintsPolicy"] = c["taint"]
        if "mlk" in c: tsc["matchLabelKeys"] = c["mlk"]
        spec["topologySpreadConstraints"].append(tsc)
    if pod.get("nodeSelector"):
        spec["nodeSelector"] = pod["nodeSelector"]
    if pod.get("affinity"):
        op, key, values = pod["affinity"]
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": op, "values": values}]}]}}}
    if pod.get("tolerations"):
        spec["tolerations"] = [{"key": k, "operator": "Exists"} for k in pod["tolerations"]]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": pod.get("ns", "default"), "labels": pod.get("labels", {})},
            "spec": spec}

def main(out):
    os.makedirs(out, exist_ok=True)
    for i, (suite, name, pod, nodes, pods, want) in enumerate(CASES, 1):
        # The model keeps "" as the default namespace; sift's objects say "default".
        got = {n["name"]: filt(pod, prefilter(pod, nodes, pods), n) for n in nodes}
        assert got == want, (name, got, want)
        statuses = {n: {"code": c, "plugin": "PodTopologySpread", "reasons": [REASON[c]]}
                    for n, c in want.items() if c in REASON}
        expect = {"feasible": [n["name"] for n in nodes if want[n["name"]] == "Success"],
                  "statuses": statuses}
        if not expect["feasible"]:
            hist = {}
            for s in statuses.values():
                hist[s["reasons"][0]] = hist.get(s["reasons"][0], 0) + 1
            parts = sorted(f"{c} {r}" for r, c in hist.items())
            expect["message"] = f"0/{len(nodes)} nodes are available: {', '.join(parts)}."
        case = {"name": name, "source": DERIVED if suite.startswith("sift") else SOURCE.format(suite=suite, name=name),
                "filters": ["PodTopologySpread"], "nodes": [node(n) for n in nodes],
                "pods": [bound(p) for p in pods], "pod": incoming(pod), "expect": expect}
        slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:60]
        with open(os.path.join(out, f"{i:03d}-{slug}.json"), "w") as f:
            json.dump(case, f, indent=2)
            f.write("\n")
    print(f"wrote {len(CASES)} cases to {out}")

if __name__ == "__main__":
    main(sys.argv[1])
