#!/usr/bin/env python3
"""Generates sift case files for InterPodAffinity from the catalogue in
docs/upstream/interpodaffinity.md section 6 (6.1 and 6.2).

Expectations are transcribed by hand from the catalogue (column "expected").
They are NOT computed here; model.py re-derives them independently.
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# docs/upstream/ipa-model -> the repository root -> tests/cases/InterPodAffinity
OUT = os.path.join(HERE, "..", "..", "..", "tests", "cases", "InterPodAffinity")
TEST_FILE = "kubernetes/kubernetes pkg/scheduler/framework/plugins/interpodaffinity/filtering_test.go"
PLUGIN = "InterPodAffinity"

AFF = ("UnschedulableAndUnresolvable", "node(s) didn't match pod affinity rules")
ANTI = ("Unschedulable", "node(s) didn't match pod anti-affinity rules")
EXIST = ("Unschedulable", "node(s) didn't satisfy existing pods anti-affinity rules")
OK = None

DEFAULT_NS = "default"  # upstream defaultNamespace = ""


# ---------------------------------------------------------------- builders
def req(key, op, values=None):
    r = {"key": key, "operator": op}
    if values is not None:
        r["values"] = list(values)
    return r


def term(exprs, tk, namespaces=None, ns_selector=None, match_labels=None):
    """exprs: list of req(); tk: topologyKey."""
    sel = {}
    if match_labels:
        sel["matchLabels"] = dict(match_labels)
    if exprs:
        sel["matchExpressions"] = exprs
    t = {"labelSelector": sel}
    if namespaces is not None:
        t["namespaces"] = list(namespaces)
    if ns_selector is not None:
        t["namespaceSelector"] = ns_selector
    t["topologyKey"] = tk
    return t


def In(k, vals, tk, **kw):
    return term([req(k, "In", vals)], tk, **kw)


def NotIn(k, vals, tk, **kw):
    return term([req(k, "NotIn", vals)], tk, **kw)


def Exists(k, tk, **kw):
    return term([req(k, "Exists")], tk, **kw)


def affinity(aff=None, anti=None):
    a = {}
    if aff:
        a["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": aff}
    if anti:
        a["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": anti}
    return a or None


def node(name, labels):
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": dict(labels)},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def pod(name, ns=DEFAULT_NS, labels=None, node_name=None, aff=None, anti=None, incoming=False):
    md = {"name": name, "namespace": ns}
    if labels:
        md["labels"] = dict(labels)
    spec = {}
    if node_name is not None:
        spec["nodeName"] = node_name
    spec["containers"] = [{"name": "c", "image": "registry.example/c:1"}]
    a = affinity(aff, anti)
    if a:
        spec["affinity"] = a
    p = {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}
    if not incoming:
        p["status"] = {"phase": "Running"}
    return p


def namespace(name, labels):
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": dict(labels)}}


# ---------------------------------------------------------------- cases
CASES = []  # (catalogue id, dict)
SKIPPED = []  # (catalogue id, test function, name, reason)


def case(cid, func, name, nodes, pods, incoming, expected, namespaces=None, note=None):
    """expected: list aligned with nodes, each OK or one of AFF/ANTI/EXIST."""
    assert len(expected) == len(nodes), cid
    CASES.append((cid, func, name, nodes, pods, incoming, expected, namespaces, note))


def skip(cid, func, name, reason):
    SKIPPED.append((cid, func, name, reason))


S = "TestRequiredAffinitySingleNode"
M = "TestRequiredAffinityMultipleNodes"

# ---- 6.1 fixtures
N1 = [node("node1", {"region": "r1", "zone": "z11"})]
SEC = {"service": "securityscan"}
S1L = {"security": "S1"}
E0 = pod("existing-1", labels=SEC, node_name="node1")
# Namespace names of the fixture contain dots ("subteam1.team1"), which a
# Namespace name (an RFC 1123 DNS label) cannot; dots become hyphens.
NSMAP = {
    "subteam1.team1": "subteam1-team1",
    "subteam2.team1": "subteam2-team1",
    "subteam1.team2": "subteam1-team2",
    "subteam2.team2": "subteam2-team2",
}
NS_FIXTURE = [
    namespace(NSMAP["subteam1.team1"], {"team": "team1"}),
    namespace(NSMAP["subteam2.team1"], {"team": "team1"}),
    namespace(NSMAP["subteam1.team2"], {"team": "team2"}),
    namespace(NSMAP["subteam2.team2"], {"team": "team2"}),
]
NS_NOTE = ("upstream namespace names subteam1.team1, subteam2.team1, subteam1.team2, subteam2.team2 "
           "are not valid Namespace names (DNS labels); dots became hyphens")
SKIP_NOTE = ("upstream PreFilter returns Skip, so Filter never runs and the node is not rejected "
             "by InterPodAffinity")

case("S1", S, "A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
     N1, [], pod("p", incoming=True), [OK], note=SKIP_NOTE)
case("S2", S, "satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches the existing pod",
     N1, [E0], pod("p", labels=S1L, incoming=True, aff=[In("service", ["securityscan", "value2"], "region")]), [OK])
case("S3", S, "satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator in labelSelector that matches the existing pod",
     N1, [E0], pod("p", labels=S1L, incoming=True, aff=[NotIn("service", ["securityscan3", "value3"], "region")]), [OK])
skip("S4", S, "Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
     "the affinity term has no topologyKey (empty string); API validation rejects a required pod affinity term "
     "with an empty topologyKey, so the incoming pod cannot exist as a Kubernetes object. (Its existing pod "
     "is also in namespace \"ns\" and the term names namespace \"DiffNameSpace\", not a valid DNS label.)")
skip("S5", S, "Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
     "the affinity term has an empty topologyKey, which API validation rejects")
case("S6", S, "satisfies the PodAffinity with different label Operators in multiple RequiredDuringSchedulingIgnoredDuringExecution ",
     N1, [E0], pod("p", labels=S1L, incoming=True, aff=[
         term([req("service", "Exists"), req("wrongkey", "DoesNotExist")], "region"),
         term([req("service", "In", ["securityscan"]), req("service", "NotIn", ["WrongValue"])], "region"),
     ]), [OK])
case("S7", S, "The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the node because one of the matchExpression item don't match.",
     N1, [E0], pod("p", labels=S1L, incoming=True, aff=[
         term([req("service", "Exists"), req("wrongkey", "DoesNotExist")], "region"),
         term([req("service", "In", ["securityscan2"]), req("service", "NotIn", ["WrongValue"])], "region"),
     ]), [AFF])
case("S8", S, "satisfies the PodAffinity and PodAntiAffinity with the existing pod",
     N1, [E0], pod("p", labels=S1L, incoming=True,
                   aff=[In("service", ["securityscan", "value2"], "region")],
                   anti=[In("service", ["antivirusscan", "value2"], "node")]), [OK])
case("S9", S, "satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
     N1, [pod("existing-1", labels=SEC, node_name="node1", anti=[In("service", ["antivirusscan", "value2"], "node")])],
     pod("p", labels=S1L, incoming=True,
         aff=[In("service", ["securityscan", "value2"], "region")],
         anti=[In("service", ["antivirusscan", "value2"], "node")]), [OK])
case("S10", S, "satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
     N1, [E0], pod("p", labels=S1L, incoming=True,
                   aff=[In("service", ["securityscan", "value2"], "region")],
                   anti=[In("service", ["securityscan", "value2"], "zone")]), [ANTI])
case("S11", S, "satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the existing pod",
     N1, [pod("existing-1", labels=SEC, node_name="node1", anti=[In("service", ["securityscan", "value2"], "zone")])],
     pod("p", labels=SEC, incoming=True,
         aff=[In("service", ["securityscan", "value2"], "region")],
         anti=[In("service", ["antivirusscan", "value2"], "node")]), [EXIST])
case("S12", S, "pod matches its own Label in PodAffinity and that matches the existing pod Labels",
     N1, [], pod("p", labels=SEC, incoming=True, aff=[NotIn("service", ["securityscan", "value2"], "region")]), [AFF],
     note=("upstream's only existing pod ({service: securityscan}) is bound to node2, which has no Node object in "
           "this test; the spec (section 5 and the S12 porting note) says to treat such a pod as absent, so it "
           "is dropped"))
case("S13", S, "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod",
     N1, [pod("existing-1", labels=SEC, node_name="node1", anti=[In("service", ["securityscan", "value2"], "zone")])],
     pod("p", labels=SEC, incoming=True), [EXIST])
case("S14", S, "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. satisfy PodAntiAffinity symmetry with the existing pod",
     N1, [pod("existing-1", labels=SEC, node_name="node1", anti=[NotIn("service", ["securityscan", "value2"], "zone")])],
     pod("p", labels=SEC, incoming=True), [OK], note=SKIP_NOTE)
case("S15", S, "satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with incoming pod",
     N1, [pod("existing-1", labels=S1L, node_name="node1", anti=[Exists("security", "zone")])],
     pod("p", labels=SEC, incoming=True, anti=[Exists("service", "region"), Exists("security", "region")]), [ANTI])
case("S16", S, "PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms",
     N1, [pod("existing-1", labels=S1L, node_name="node1", anti=[Exists("security", "zone")])],
     pod("p", labels=SEC, incoming=True, anti=[Exists("service", "zone"), Exists("security", "zone")]), [ANTI])
case("S17", S, "PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms",
     N1, [pod("existing-1", labels=SEC, node_name="node1", anti=[Exists("service", "zone"), Exists("security", "zone")])],
     pod("p", labels=S1L, incoming=True, anti=[Exists("security", "zone")]), [EXIST])
ABXY = [Exists("abc", "zone"), Exists("def", "zone")]
case("S18", S, "PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on AffinityTerms",
     N1, [pod("existing-1", labels={"def": "", "xyz": ""}, node_name="node1", anti=ABXY)],
     pod("p", labels={"abc": "", "xyz": ""}, incoming=True, anti=ABXY), [ANTI])
case("S19", S, "PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on AffinityTerms",
     N1, [pod("existing-1", labels={"abc": "", "xyz": ""}, node_name="node1", anti=ABXY)],
     pod("p", labels={"def": "", "xyz": ""}, incoming=True, anti=ABXY), [ANTI])
skip("S20", S, "PodAffinity fails PreFilter with an invalid affinity label syntax",
     "the expectation is a PreFilter error (UnschedulableAndUnresolvable \"parsing pod: ...\"), and the selector "
     "value \"{{.bad-value.}}\" is an invalid label value that API validation rejects")
skip("S21", S, "PodAntiAffinity fails PreFilter with an invalid antiaffinity label syntax",
     "the expectation is a PreFilter error, and the selector value \"{{.bad-value.}}\" is an invalid label value "
     "that API validation rejects")
TEAM1 = {"matchExpressions": [req("team", "In", ["team1"])]}
case("S22", S, "affinity with NamespaceSelector",
     N1, [pod("existing-1", ns=NSMAP["subteam1.team1"], labels=SEC, node_name="node1")],
     pod("p", labels=S1L, incoming=True, aff=[In("service", ["securityscan", "value2"], "region", ns_selector=TEAM1)]),
     [OK], namespaces=NS_FIXTURE, note=NS_NOTE)
case("S23", S, "affinity with non-matching NamespaceSelector",
     N1, [pod("existing-1", ns=NSMAP["subteam1.team2"], labels=SEC, node_name="node1")],
     pod("p", labels=S1L, incoming=True, aff=[In("service", ["securityscan", "value2"], "region", ns_selector=TEAM1)]),
     [AFF], namespaces=NS_FIXTURE, note=NS_NOTE)
case("S24", S, "anti-affinity with matching NamespaceSelector",
     N1, [pod("existing-1", ns=NSMAP["subteam2.team1"], labels=SEC, node_name="node1")],
     pod("p", ns=NSMAP["subteam1.team1"], labels=S1L, incoming=True,
         anti=[In("service", ["securityscan", "value2"], "zone", ns_selector=TEAM1)]),
     [ANTI], namespaces=NS_FIXTURE, note=NS_NOTE)
case("S25", S, "anti-affinity with matching all NamespaceSelector",
     N1, [pod("existing-1", ns=NSMAP["subteam2.team1"], labels=SEC, node_name="node1")],
     pod("p", ns=NSMAP["subteam1.team1"], labels=S1L, incoming=True,
         anti=[In("service", ["securityscan", "value2"], "zone", ns_selector={})]),
     [ANTI], namespaces=NS_FIXTURE, note=NS_NOTE)
case("S26", S, "anti-affinity with non-matching NamespaceSelector",
     N1, [pod("existing-1", ns=NSMAP["subteam1.team2"], labels=SEC, node_name="node1")],
     pod("p", ns=NSMAP["subteam1.team1"], labels=S1L, incoming=True,
         anti=[In("service", ["securityscan", "value2"], "zone", ns_selector=TEAM1)]),
     [OK], namespaces=NS_FIXTURE, note=NS_NOTE)

# ---- 6.2 fixtures
CHINA = {"region": "China"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
INDIA = {"region": "India"}


def R1Z1(h):
    return {"region": "r1", "zone": "z1", "hostname": h}


def R1Z2(h):
    return {"region": "r1", "zone": "z2", "hostname": h}


# Node names nodeA/nodeB/nodeC and pod name podA are not valid object names
# (DNS subdomains are lowercase); they become node-a/node-b/node-c and pod-a.
# Label values (e.g. hostname: nodeA) are valid as they are and stay verbatim.
NA, NB, NC = "node-a", "node-b", "node-c"
NAME_NOTE = ("upstream node names nodeA/nodeB/nodeC are not valid Node names (lowercase DNS subdomains); "
             "they became node-a/node-b/node-c (hostname label values stay verbatim)")


def mnote(*extra):
    return "; ".join((NAME_NOTE,) + extra)


case("M1", M, "A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them has an existing pod that matches the affinity rules",
     [node("node1", CHINA), node("node2", CHINA_AZ1), node("node3", INDIA)],
     [pod("p1", labels={"foo": "bar"}, node_name="node1")],
     pod("p", incoming=True, aff=[In("foo", ["bar"], "region")]),
     [OK, OK, AFF])
case("M2", M, "The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of the collection should not be blocked from being scheduled onto any node, even there's no existing pod that matches the rule anywhere.",
     [node(NA, {"zone": "az1", "hostname": "h1"}), node(NB, {"zone": "az2", "hostname": "h2"})],
     [pod("p1", labels={"foo": "bar"}, node_name=NA)],
     pod("p", labels={"foo": "bar", "service": "securityscan"}, incoming=True,
         aff=[In("foo", ["bar"], "zone"), In("service", ["securityscan"], "zone")]),
     [OK, OK], note=mnote())
case("M3", M, "The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys",
     [node(NA, {"zoneLabel": "az1", "hostname": "h1"}), node(NB, {"zoneLabel": "az2", "hostname": "h2"})],
     [pod("p1", labels={"foo": "bar"}, node_name=NA)],
     pod("p", labels={"foo": "bar", "service": "securityscan"}, incoming=True,
         aff=[In("foo", ["bar"], "zone"), In("service", ["securityscan"], "zone")]),
     [AFF, AFF], note=mnote())
case("M4", M, "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
     [node(NA, {"region": "r1", "hostname": "nodeA"}), node(NB, {"region": "r1", "hostname": "nodeB"})],
     [pod("existing-1", labels={"foo": "abc"}, node_name=NA)],
     pod("p", incoming=True, anti=[In("foo", ["abc"], "region")]),
     [ANTI, ANTI], note=mnote())
case("M5", M, "This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod.",
     [node(NA, {"region": "r1", "zone": "z1", "hostname": "nodeA"}), node(NB, {"region": "r1", "zone": "z2", "hostname": "nodeB"})],
     [pod("existing-1", labels={"foo": "abc", "service": "securityscan"}, node_name=NA)],
     pod("p", incoming=True, anti=[In("foo", ["abc"], "region"), In("service", ["securityscan"], "zone")]),
     [ANTI, ANTI], note=mnote())
case("M6", M, "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
     [node(NA, CHINA), node(NB, CHINA_AZ1), node(NC, INDIA)],
     [pod("existing-1", labels={"foo": "abc"}, node_name=NA)],
     pod("p", incoming=True, anti=[In("foo", ["abc"], "region")]),
     [ANTI, ANTI, OK], note=mnote())
case("M7", M, "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC has an existing pod that match the inter pod affinity rule but in different namespace)",
     [node(NA, CHINA), node(NB, CHINA_AZ1), node(NC, INDIA)],
     [pod("existing-1", ns="ns1", labels={"foo": "bar"}, node_name=NA),
      pod("existing-2", ns="ns2", node_name=NC, anti=[In("foo", ["123"], "region")])],
     pod("p", ns="ns1", labels={"foo": "123"}, incoming=True, anti=[In("foo", ["bar"], "region")]),
     [ANTI, ANTI, OK],
     note=mnote("upstream namespaces NS1/NS2 are not valid Namespace names (lowercase DNS labels); they became "
                "ns1/ns2. No Namespace objects are given: no term uses a namespaceSelector"))
case("M8", M, "Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector of the term is firstly checked, and then topologyKey of the term is also checked",
     [node(NA, R1Z1("nodeA")), node(NB, {"region": "r1", "zone": "z1", "hostname": "nodeB"})],
     [pod("existing-1", node_name=NA, anti=[Exists("foo", "invalid-node-label")])],
     pod("p", labels={"foo": ""}, incoming=True),
     [OK, OK], note=mnote(SKIP_NOTE))
case("M9", M, "Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches",
     [node(NA, R1Z1("nodeA")), node(NB, {"region": "r1", "zone": "z1", "hostname": "nodeB"})],
     [pod("existing-1", labels={"foo": ""}, node_name=NA)],
     pod("p", incoming=True, anti=[Exists("foo", "invalid-node-label")]),
     [OK, OK], note=mnote("upstream's incoming pod also sets spec.nodeName nodeA, which the catalogue marks "
                          "irrelevant to this filter; it is left out because a pod with spec.nodeName is "
                          "already bound and would not be scheduled"))
case("M10", M, "Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each existingPod's terms on all nodes",
     [node(NA, R1Z1("nodeA")), node(NB, R1Z2("nodeB"))],
     [pod("existing-1", node_name=NA, anti=[Exists("foo", "zone")]),
      pod("existing-2", node_name=NA, anti=[Exists("bar", "region")])],
     pod("p", labels={"foo": "", "bar": ""}, incoming=True),
     [EXIST, EXIST], note=mnote())
case("M11", M, "Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least violates one anti-affinity rule of existingPod",
     [node(NA, R1Z1("nodeA")), node(NB, R1Z2("nodeB"))],
     [pod("existing-1", labels={"foo": ""}, node_name=NA),
      pod("existing-2", labels={"bar": ""}, node_name=NB)],
     pod("p", incoming=True, anti=[Exists("foo", "zone"), Exists("bar", "region")]),
     [ANTI, ANTI], note=mnote())
case("M12", M, "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey",
     [node(NA, R1Z1("nodeA")), node(NB, R1Z2("nodeB"))],
     [pod("existing-1", node_name=NA, anti=[Exists("foo", "invalid-node-label"), Exists("bar", "zone")])],
     pod("p", labels={"foo": "", "bar": ""}, incoming=True),
     [EXIST, OK], note=mnote())
case("M13", M, "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey",
     [node(NA, R1Z1("nodeA")), node(NB, R1Z2("nodeB"))],
     [pod("pod-a", labels={"foo": "", "bar": ""}, node_name=NA)],
     pod("p", incoming=True, anti=[Exists("foo", "invalid-node-label"), Exists("bar", "zone")]),
     [ANTI, OK], note=mnote("upstream pod name podA became pod-a (pod names are lowercase DNS subdomains)"))
case("M14", M, "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey",
     [node(NA, R1Z1("nodeA")), node(NB, R1Z2("nodeB"))],
     [pod("existing-1", node_name=NA, anti=[Exists("foo", "region"), Exists("bar", "zone")])],
     pod("p", labels={"foo": "", "bar": ""}, incoming=True),
     [EXIST, EXIST], note=mnote())
case("M15", M, "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey",
     [node(NA, R1Z1("nodeA")), node(NB, R1Z2("nodeB"))],
     [pod("existing-1", labels={"foo": "", "bar": ""}, node_name=NA)],
     pod("p", incoming=True, anti=[Exists("foo", "region"), Exists("bar", "zone")]),
     [ANTI, ANTI], note=mnote())
case("M16", M, "Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity term matches incoming pod, so incoming pod can only be scheduled to nodeC",
     [node(NA, R1Z1("nodeA")), node(NB, R1Z2("nodeB")), node(NC, {"region": "r1", "zone": "z3", "hostname": "nodeC"})],
     [pod("existing-1", node_name=NA, anti=[Exists("foo", "zone"), Exists("labelA", "zone")]),
      pod("existing-2", node_name=NB, anti=[Exists("bar", "zone"), Exists("labelB", "zone")])],
     pod("p", labels={"foo": "", "bar": ""}, incoming=True),
     [EXIST, EXIST, OK], note=mnote())
case("M17", M, "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match",
     [node(NA, R1Z1("nodeA")), node(NB, {"region": "r1", "zone": "z1", "hostname": "nodeB"})],
     [pod("pod1", labels={"foo": "", "bar": ""}, node_name=NA)],
     pod("p", incoming=True, aff=[Exists("foo", "region"), Exists("bar", "zone")]),
     [OK, OK], note=mnote())
case("M18", M, "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match, and the match logic should be satisfied on the same pod",
     [node(NA, R1Z1("nodeA")), node(NB, R1Z2("nodeB"))],
     [pod("pod1", labels={"foo": ""}, node_name=NA),
      pod("pod2", labels={"bar": ""}, node_name=NB)],
     pod("p", incoming=True, aff=[Exists("foo", "region"), Exists("bar", "zone")]),
     [AFF, AFF], note=mnote())


# ---------------------------------------------------------------- output
def slug(name):
    s = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return s[:60].rstrip("-")


def message(nodes, expected):
    counts = {}
    for e in expected:
        counts[e[1]] = counts.get(e[1], 0) + 1
    parts = sorted(f"{c} {r}" for r, c in counts.items())
    return f"0/{len(nodes)} nodes are available: " + ", ".join(parts) + "."


def main():
    for f in os.listdir(OUT):
        if re.match(r"^\d{3}-.*\.json$", f):
            os.remove(os.path.join(OUT, f))
    index = []
    for i, (cid, func, name, nodes, pods, incoming, expected, namespaces, note) in enumerate(CASES, 1):
        feasible = [n["metadata"]["name"] for n, e in zip(nodes, expected) if e is OK]
        statuses = {
            n["metadata"]["name"]: {"code": e[0], "plugin": PLUGIN, "reasons": [e[1]]}
            for n, e in zip(nodes, expected) if e is not OK
        }
        exp = {"feasible": feasible, "statuses": statuses}
        if not feasible:
            exp["message"] = message(nodes, expected)
        doc = {
            "name": name,
            "source": f'{TEST_FILE}, {func}: "{name}"',
        }
        if note:
            doc["note"] = note
        doc["filters"] = [PLUGIN]
        doc["nodes"] = nodes
        doc["pods"] = pods
        if namespaces:
            doc["namespaces"] = namespaces
        doc["pod"] = incoming
        doc["expect"] = exp
        fname = f"{i:03d}-{slug(name)}.json"
        with open(os.path.join(OUT, fname), "w") as fh:
            json.dump(doc, fh, indent=2, ensure_ascii=False)
            fh.write("\n")
        index.append((fname, cid, func))
    # Not .json: `sift conformance` collects every .json file under a directory.
    with open(os.path.join(HERE, "index.tsv"), "w") as fh:
        fh.write("file\tcatalogue\ttest function\n")
        for fname, cid, func in index:
            fh.write(f"{fname}\t{cid}\t{func}\n")
    print(f"wrote {len(CASES)} case files, skipped {len(SKIPPED)}")


if __name__ == "__main__":
    main()
