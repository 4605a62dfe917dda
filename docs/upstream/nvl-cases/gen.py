#!/usr/bin/env python3
"""Writes tests/cases/NodeVolumeLimits/: upstream's TestCSILimits rows
(pkg/scheduler/framework/plugins/nodevolumelimits/csi_test.go) as sift
conformance cases, plus the derived cases listed in the README there.

Each row's fixture is upstream's: the listers getFakeCSIPVLister,
getFakeCSIPVCLister, getFakeCSIStorageClassLister and
getFakeVolumeAttachmentLister become the case's "objects", and
getNodeWithPodAndVolumeLimits its node, CSINode and bound pods. The
expectations are upstream's, with the differences the README lists.

    python3 docs/upstream/nvl-cases/gen.py
"""

import json
import os
import re
import shutil

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
OUT = os.path.join(ROOT, "tests", "cases", "NodeVolumeLimits")

SOURCE = ("kubernetes/kubernetes pkg/scheduler/framework/plugins/nodevolumelimits/csi_test.go, "
          "TestCSILimits: ")
NODE = "node-for-max-pd-test-1"
EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
EBS_INTREE = "kubernetes.io/aws-ebs"
HOSTPATH = "kubernetes.io/hostpath"
SC = "csi-sc"
REASON = "node(s) exceed max volume count"
PLUGIN = "NodeVolumeLimits"


def node(name=NODE):
    return {
        "apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def pod(name, volumes, namespace="default", uid=None, node_name=None):
    meta = {"name": name, "namespace": namespace}
    if uid:
        meta["uid"] = uid
    spec = {"containers": [{"name": "c", "image": "registry.example/c:1"}], "volumes": volumes}
    p = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    if node_name:
        spec["nodeName"] = node_name
        p["status"] = {"phase": "Running"}
    return p


def pvc_vol(claim, name=None):
    return {"name": name or vol_name(claim), "persistentVolumeClaim": {"claimName": claim}}


def vol_name(claim):
    # Volume names are DNS labels; upstream's volumes are named after the
    # claim (st.MakePod().PVC) with characters a name cannot hold.
    return re.sub(r"[^a-z0-9-]", "-", claim.lower()).strip("-")[:63]


def ephemeral_vol(name):
    return {"name": name, "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}


def ebs_inline(volume_id, name="ebs-inline"):
    return {"name": name, "awsElasticBlockStore": {"volumeID": volume_id}}


CONFIGMAP = {"name": "config", "configMap": {"name": "config"}}
SECRET = {"name": "secret", "secret": {"secretName": "secret"}}


# Upstream's pods (name, volumes, namespace, uid). Those of st.MakePod()
# have no name; each gets one here.
PODS = {
    "runningPod": ("running-pod", [pvc_vol("csi-ebs.csi.aws.com-3")], "default", None),
    "pendingVolumePod": ("pending-volume-pod", [pvc_vol("csi-4")], "default", None),
    "unboundPVCPod2": ("unbound-pvc-pod-2", [pvc_vol("csi-4")], "default", None),
    "missingPVPod": ("missing-pv-pod", [pvc_vol("csi-6")], "default", None),
    "noSCPVCPod": ("no-sc-pvc-pod", [pvc_vol("csi-5")], "default", None),
    "gceTwoVolPod": ("gce-two-vol-pod", [pvc_vol("csi-pd.csi.storage.gke.io-1"),
                                         pvc_vol("csi-pd.csi.storage.gke.io-2")], "default", None),
    "inTreeOneVolPod": ("in-tree-one-vol-pod", [pvc_vol("csi-kubernetes.io/aws-ebs-0")], "default", None),
    "inTreeTwoVolPod": ("in-tree-two-vol-pod", [pvc_vol("csi-kubernetes.io/aws-ebs-1"),
                                                pvc_vol("csi-kubernetes.io/aws-ebs-2")], "default", None),
    "csiEBSOneVolPod": ("csi-ebs-one-vol-pod", [pvc_vol("csi-ebs.csi.aws.com-0")], "default", None),
    "csiEBSTwoVolPod": ("csi-ebs-two-vol-pod", [pvc_vol("csi-ebs.csi.aws.com-1"),
                                                pvc_vol("csi-ebs.csi.aws.com-2")], "default", None),
    "inTreeNonMigratableOneVolPod": ("in-tree-non-migratable-one-vol-pod",
                                     [pvc_vol("csi-kubernetes.io/hostpath-0")], "default", None),
    "ephemeralVolumePod": ("abc", [ephemeral_vol("xyz")], "test", "12345"),
    "ephemeralTwoVolumePod": ("abc", [ephemeral_vol("x"), ephemeral_vol("y")], "test", "12345II"),
    "inTreeInlineVolPod": ("in-tree-inline-vol-pod", [ebs_inline("aws-inline1")], "default", None),
    "inTreeInlineVolPodWithSameCSIVolumeID": ("in-tree-inline-vol-pod-with-same-csi-volume-id",
                                              [ebs_inline("csi-ebs.csi.aws.com-1")], "default", None),
    "onlyConfigmapAndSecretVolPod": ("only-configmap-and-secret-vol-pod", [CONFIGMAP, SECRET], "default", None),
    "pvcPodWithConfigmapAndSecret": ("pvc-pod-with-configmap-and-secret",
                                     [CONFIGMAP, SECRET, pvc_vol("csi-ebs.csi.aws.com-0")], "default", None),
    "ephemeralPodWithConfigmapAndSecret": ("abc", [CONFIGMAP, SECRET, ephemeral_vol("xyz")], "test", None),
    "inlineMigratablePodWithConfigmapAndSecret": ("inline-migratable-pod-with-configmap-and-secret",
                                                  [CONFIGMAP, SECRET, ebs_inline("aws-inline1")],
                                                  "default", None),
}


def make_pod(key, node_name=None):
    name, vols, ns, uid = PODS[key]
    return pod(name, json.loads(json.dumps(vols)), ns, uid, node_name)


def claim(name, namespace="default", volume_name=None, class_name=None, owner=None, annotations=None):
    meta = {"name": name, "namespace": namespace}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": owner[0],
                                    "uid": owner[1], "controller": True}]
    if annotations:
        meta["annotations"] = annotations
    spec = {}
    if volume_name is not None:
        spec["volumeName"] = volume_name
    if class_name is not None:
        spec["storageClassName"] = class_name
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec}


def pv(name, source):
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": source}


def storage_class(name, provisioner):
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": name}, "provisioner": provisioner}


def va(name, node_name, attacher, pv_name):
    return {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
            "metadata": {"name": name},
            "spec": {"nodeName": node_name, "attacher": attacher,
                     "source": {"persistentVolumeName": pv_name}}}


def csinode(node_name, drivers, limit, with_limits=True, migrated=EBS_INTREE):
    entries = []
    for d in drivers:
        e = {"name": d, "nodeID": node_name}
        if with_limits:
            e["allocatable"] = {"count": limit}
        entries.append(e)
    meta = {"name": node_name}
    if migrated:
        # enableMigrationOnNode: read by nothing since isCSIMigrationOn
        # stopped reading the annotation; kept as upstream's fixture.
        meta["annotations"] = {"storage.alpha.kubernetes.io/migrated-plugins": migrated}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": meta,
            "spec": {"drivers": entries}}


def listers(drivers, va_count, extra_claims):
    """Upstream's listers for filterName "csi"."""
    objs = []
    for d in drivers:
        for j in range(4):
            handle = f"csi-{d}-{j}"
            if d == EBS_INTREE:
                source = {"awsElasticBlockStore": {"volumeID": handle}}
            elif d == HOSTPATH:
                source = {"hostPath": {"path": "/tmp"}}
            else:
                source = {"csi": {"driver": d, "volumeHandle": handle}}
            objs.append(pv(handle, source))
    for d in drivers:
        for j in range(4):
            v = f"csi-{d}-{j}"
            objs.append(claim(v, volume_name=v))
    objs.append(claim("csi-4", class_name=SC))
    objs.append(claim("csi-5"))
    objs.append(claim("csi-6", class_name=SC, volume_name="missing-in-action"))
    objs.extend(extra_claims)
    objs.append(storage_class(SC, drivers[0]))
    for d in drivers:
        for j in range(va_count):
            objs.append(va(f"va-{d}-{j}", NODE, d, f"csi-{d}-{j}"))
    return objs


EPHEMERAL_CLAIM = claim("abc-xyz", "test", class_name=SC, owner=("abc", "12345"))
CONFLICTING_CLAIM = claim("abc-xyz", "test", class_name=SC)
EPHEMERAL_CLAIM_X = claim("abc-x", "test", class_name=SC, owner=("abc", "12345II"))
EPHEMERAL_CLAIM_Y = claim("abc-y", "test", class_name=SC, owner=("abc", "12345II"))

NOT_FOUND_NOTE = ("upstream's fake PVC lister (tf.PersistentVolumeClaimLister) names the resource "
                  "\"persistentvolumeclaims\"; kube-scheduler's client-go lister names it "
                  "\"persistentvolumeclaim\", which this case expects")

# (test name, new pod, existing pods, limitSource, maxVols, drivers, vaCount, extraClaims,
#  want: None (feasible) | (code, reason), note)
ROWS = [
    ("should count VolumeAttachments towards volume limit when no pods exist", "csiEBSOneVolPod", [],
     "csinode", 2, [EBS], 2, [], ("Unschedulable", REASON), None),
    ("should schedule pod when VolumeAttachments count does not exceed limit", "csiEBSOneVolPod", [],
     "csinode", 2, [EBS], 1, [], None, None),
    ("fits when node volume limit >= new pods CSI volume", "csiEBSOneVolPod",
     ["runningPod", "csiEBSTwoVolPod"], "csinode", 4, [EBS], 0, [], None, None),
    ("doesn't when node volume limit <= pods CSI volume", "csiEBSOneVolPod",
     ["runningPod", "csiEBSTwoVolPod"], "csinode", 2, [EBS], 0, [], ("Unschedulable", REASON), None),
    ("should when driver does not support volume limits", "csiEBSOneVolPod",
     ["runningPod", "csiEBSTwoVolPod"], "csinode-with-no-limit", 2, [EBS], 0, [], None, None),
    ("count pending PVCs towards volume limit <= pods CSI volume", "csiEBSOneVolPod",
     ["pendingVolumePod", "csiEBSTwoVolPod"], "csinode", 2, [EBS], 0, [], ("Unschedulable", REASON), None),
    ("count multiple pending pvcs towards volume limit >= pods CSI volume", "csiEBSOneVolPod",
     ["pendingVolumePod", "unboundPVCPod2", "csiEBSTwoVolPod"], "csinode", 4, [EBS], 0, [], None, None),
    ("should count PVCs with invalid PV name but valid SC", "csiEBSOneVolPod",
     ["missingPVPod", "csiEBSTwoVolPod"], "csinode", 2, [EBS], 0, [], ("Unschedulable", REASON), None),
    ("don't count pvcs with missing SC towards volume limit", "csiEBSOneVolPod",
     ["runningPod", "noSCPVCPod"], "csinode", 2, [EBS], 0, [], None, None),
    ("count pvcs with the same type towards volume limit", "csiEBSOneVolPod",
     ["gceTwoVolPod", "csiEBSTwoVolPod"], "csinode", 2, [EBS, GCE], 0, [], ("Unschedulable", REASON), None),
    ("don't count pvcs with different type towards volume limit", "gceTwoVolPod",
     ["csiEBSTwoVolPod", "runningPod"], "csinode", 2, [EBS, GCE], 0, [], None, None),
    ("should count in-tree volumes if migration is enabled", "inTreeOneVolPod",
     ["inTreeTwoVolPod"], "csinode", 2, [EBS_INTREE, EBS], 0, [], ("Unschedulable", REASON), None),
    ("nil csi node", "inTreeInlineVolPod", ["inTreeTwoVolPod"], "", 0, [EBS_INTREE, EBS], 0, [], None, None),
    ("should count unbound in-tree volumes if migration is enabled", "pendingVolumePod",
     ["inTreeTwoVolPod"], "csinode", 2, [EBS_INTREE, EBS], 0, [], ("Unschedulable", REASON), None),
    ("should not limit pod if volume used does not report limits", "inTreeOneVolPod",
     ["inTreeTwoVolPod"], "csinode-with-no-limit", 2, [EBS_INTREE, EBS], 0, [], None, None),
    ("should not count non-migratable in-tree volumes", "inTreeNonMigratableOneVolPod",
     ["csiEBSTwoVolPod"], "csinode", 2, [HOSTPATH, EBS], 0, [], None, None),
    ("should count in-tree inline volumes if migration is enabled", "inTreeInlineVolPod",
     ["inTreeTwoVolPod"], "csinode", 2, [EBS_INTREE, EBS], 0, [], ("Unschedulable", REASON), None),
    ("should count in-tree and csi volumes if migration is enabled (when scheduling in-tree volumes)",
     "inTreeOneVolPod", ["csiEBSTwoVolPod"], "csinode", 2, [EBS_INTREE, EBS], 0, [],
     ("Unschedulable", REASON), None),
    ("should count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
     "inTreeInlineVolPod", ["csiEBSTwoVolPod", "inTreeOneVolPod"], "csinode", 3, [EBS_INTREE, EBS], 0, [],
     ("Unschedulable", REASON), None),
    ("should not count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
     "inTreeInlineVolPodWithSameCSIVolumeID", ["csiEBSTwoVolPod", "inTreeOneVolPod"], "csinode", 3,
     [EBS_INTREE, EBS], 0, [], None, None),
    ("should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)",
     "csiEBSOneVolPod", ["inTreeTwoVolPod"], "csinode", 2, [EBS_INTREE, EBS], 0, [],
     ("Unschedulable", REASON), None),
    ("ephemeral volume missing", "ephemeralVolumePod", [], "csinode-with-no-limit", 0, [EBS], 0, [],
     ("UnschedulableAndUnresolvable",
      'looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found'), NOT_FOUND_NOTE),
    ("ephemeral volume not owned", "ephemeralVolumePod", [], "csinode-with-no-limit", 0, [EBS], 0,
     [CONFLICTING_CLAIM],
     ("Error", "PVC test/abc-xyz was not created for pod test/abc (pod is not owner)"), None),
    ("ephemeral volume unbound", "ephemeralVolumePod", [], "csinode-with-no-limit", 0, [EBS], 0,
     [EPHEMERAL_CLAIM], None, None),
    ("ephemeral doesn't when node volume limit <= pods CSI volume", "ephemeralVolumePod",
     ["runningPod", "csiEBSTwoVolPod"], "csinode", 2, [EBS], 0, [EPHEMERAL_CLAIM],
     ("Unschedulable", REASON), None),
    ("ephemeral doesn't when node volume limit <= pods ephemeral CSI volume", "csiEBSOneVolPod",
     ["runningPod", "ephemeralTwoVolumePod"], "csinode", 2, [EBS], 0, [EPHEMERAL_CLAIM_X, EPHEMERAL_CLAIM_Y],
     ("Unschedulable", REASON), None),
    ("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume, ephemeral disabled",
     "csiEBSOneVolPod", ["runningPod", "ephemeralVolumePod", "csiEBSTwoVolPod"], "csinode", 3, [EBS], 0,
     [EPHEMERAL_CLAIM], ("Unschedulable", REASON),
     "the ephemeralEnabled: false of upstream's row is read by nothing (the gate is gone): the same as the next row"),
    ("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume",
     "csiEBSOneVolPod", ["runningPod", "ephemeralVolumePod", "csiEBSTwoVolPod"], "csinode", 3, [EBS], 0,
     [EPHEMERAL_CLAIM], ("Unschedulable", REASON), None),
    ("persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume",
     "csiEBSOneVolPod", ["runningPod", "ephemeralVolumePod", "csiEBSTwoVolPod"], "csinode", 5, [EBS], 0,
     [EPHEMERAL_CLAIM], None, None),
    ("skip Filter when the pod only uses secrets and configmaps", "onlyConfigmapAndSecretVolPod", [],
     "csinode", 2, [EBS], 0, [], None,
     "upstream expects PreFilter to Skip; sift shows a skip as a feasible node"),
    ("don't skip Filter when the pod has pvcs", "pvcPodWithConfigmapAndSecret", [], "csinode", 2, [EBS], 0,
     [], None, "upstream expects PreFilter not to skip and Filter to pass; both read as a feasible node"),
    ("don't skip Filter when the pod has ephemeral volumes", "ephemeralPodWithConfigmapAndSecret", [],
     "csinode-with-no-limit", 0, [EBS], 0, [],
     ("UnschedulableAndUnresolvable",
      'looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found'), NOT_FOUND_NOTE),
    ("don't skip Filter when the pod has inline migratable volumes", "inlineMigratablePodWithConfigmapAndSecret",
     ["inTreeTwoVolPod"], "csinode", 2, [EBS_INTREE, EBS], 0, [], ("Unschedulable", REASON), None),
]


def expect(want, nodes=(NODE,)):
    if want is None:
        return {"feasible": list(nodes), "statuses": {}}
    code, reason = want
    return {"feasible": [], "statuses": {n: {"code": code, "plugin": PLUGIN, "reasons": [reason]}
                                         for n in nodes}}


def slug(s):
    for op, word in ((">=", " ge "), ("<=", " le "), (">", " gt "), ("<", " lt ")):
        s = s.replace(op, word)
    s = re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")
    return s[:90].rstrip("-")


def upstream_cases():
    cases = []
    for (name, new, existing, limit_source, max_vols, drivers, va_count, extra, want, note) in ROWS:
        objs = listers(drivers, va_count, extra)
        if limit_source == "csinode":
            objs.append(csinode(NODE, drivers, max_vols))
        elif limit_source == "csinode-with-no-limit":
            objs.append(csinode(NODE, drivers, max_vols, with_limits=False))
        case = {
            "name": name,
            "source": SOURCE + json.dumps(name),
        }
        if note:
            case["note"] = note
        case.update({
            "filters": [PLUGIN],
            "nodes": [node()],
            "pods": [make_pod(k, NODE) for k in existing],
            "objects": objs,
            "pod": make_pod(new),
            "expect": expect(want),
        })
        cases.append(case)
    return cases


DERIVED = "derived from kubernetes/kubernetes pkg/scheduler/framework/plugins/nodevolumelimits/"


def derived_cases():
    cases = []

    # Two nodes, one full: the limit is per node, from each node's CSINode;
    # a node without a CSINode has no limit.
    objs = [storage_class(SC, EBS)]
    for i in range(3):
        objs.append(pv(f"pv-{i}", {"csi": {"driver": EBS, "volumeHandle": f"vol-{i}"}}))
        objs.append(claim(f"data-{i}", volume_name=f"pv-{i}"))
    objs.append(csinode("node-a", [EBS], 2, migrated=None))
    objs.append(csinode("node-b", [EBS], 3, migrated=None))
    pods = [pod("a0", [pvc_vol("data-0")], node_name="node-a"),
            pod("a1", [pvc_vol("data-1")], node_name="node-a"),
            pod("b0", [pvc_vol("data-0")], node_name="node-b"),
            pod("b1", [pvc_vol("data-1")], node_name="node-b"),
            pod("c0", [pvc_vol("data-0"), pvc_vol("data-1")], node_name="node-c")]
    cases.append({
        "name": "the limit is each node's own CSINode count",
        "source": DERIVED + "csi.go: Filter reads the limits of the node's CSINode (getVolumeLimits); "
                  "a node without a CSINode has none",
        "note": "node-a holds 2 of its 2, node-b 2 of its 3, node-c has no CSINode",
        "filters": [PLUGIN],
        "nodes": [node("node-a"), node("node-b"), node("node-c")],
        "pods": pods, "objects": objs,
        "pod": pod("new", [pvc_vol("data-2")]),
        "expect": {"feasible": ["node-b", "node-c"],
                   "statuses": {"node-a": {"code": "Unschedulable", "plugin": PLUGIN, "reasons": [REASON]}}},
    })

    # Only the limit of the volume's driver applies.
    objs = [pv("pv-ebs", {"csi": {"driver": EBS, "volumeHandle": "vol-1"}}),
            pv("pv-gce", {"csi": {"driver": GCE, "volumeHandle": "disk-1"}}),
            claim("ebs", volume_name="pv-ebs"), claim("gce", volume_name="pv-gce"),
            {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": NODE},
             "spec": {"drivers": [{"name": EBS, "nodeID": NODE, "allocatable": {"count": 0}},
                                  {"name": GCE, "nodeID": NODE}]}}]
    for name, claim_name, want in [("a driver with a limit of 0 takes no volume", "ebs", ("Unschedulable", REASON)),
                                   ("a driver without a count is not limited beside one that is", "gce", None)]:
        cases.append({
            "name": name,
            "source": DERIVED + "csi.go: getVolumeLimits keeps the drivers whose allocatable.count is set; "
                      "Filter compares each driver's count with its own limit only",
            "filters": [PLUGIN], "nodes": [node()], "pods": [], "objects": objs,
            "pod": pod("new", [pvc_vol(claim_name)]),
            "expect": expect(want),
        })

    # In-tree migration needs no annotation, and an aws:// URL and a bare
    # id name one volume.
    objs = [pv("pv-url", {"awsElasticBlockStore": {"volumeID": "aws://us-east-1a/vol-0a1"}}),
            pv("pv-csi", {"csi": {"driver": EBS, "volumeHandle": "vol-0b2"}}),
            claim("url", volume_name="pv-url"), claim("csi", volume_name="pv-csi"),
            csinode(NODE, [EBS], 2, migrated=None)]
    cases.append({
        "name": "an in-tree EBS volume counts as ebs.csi.aws.com, by its volume id, without the migrated-plugins annotation",
        "source": DERIVED + "utils.go: isCSIMigrationOn is on for aws-ebs, gce-pd, azure-disk, cinder and "
                  "portworx-volume without reading the CSINode's annotation; csi-translation-lib "
                  "KubernetesVolumeIDToEBSVolumeID takes aws://<zone>/<id> to <id>",
        "note": "the in-line vol-0a1 is the PV's volume: the node holds 2 of 2 and the pod adds none",
        "filters": [PLUGIN], "nodes": [node()],
        "pods": [pod("old", [pvc_vol("url"), pvc_vol("csi")], node_name=NODE)],
        "objects": objs,
        "pod": pod("new", [ebs_inline("vol-0a1")]),
        "expect": expect(None),
    })
    cases.append({
        "name": "an in-line EBS volume that is not on the node is over the limit",
        "source": DERIVED + "utils.go and csi-translation-lib: the same node with another EBS id",
        "filters": [PLUGIN], "nodes": [node()],
        "pods": [pod("old", [pvc_vol("url"), pvc_vol("csi")], node_name=NODE)],
        "objects": objs,
        "pod": pod("new", [ebs_inline("aws://us-east-1a/vol-0c3")]),
        "expect": expect(("Unschedulable", REASON)),
    })
    cases.append({
        "name": "an in-line EBS volume id that is not a volume is an error",
        "source": DERIVED + "csi.go checkAttachableInlineVolume: a translation error is returned "
                  "(\"converting volume(...) from inline to csi\"), and Filter returns it as an Error; "
                  "csi-translation-lib refuses an aws:// URL whose path is not vol-...",
        "filters": [PLUGIN], "nodes": [node()], "pods": [], "objects": objs,
        "pod": pod("new", [ebs_inline("aws://us-east-1a/disk-7", name="disk")]),
        "expect": expect(("Error", "converting volume(disk) from inline to csi: failed to translate "
                                   "Kubernetes ID to EBS Volume ID Invalid format for AWS volume "
                                   "(aws://us-east-1a/disk-7)")),
    })

    # Azure File: translatable, not migrated.
    objs = [pv("pv-file", {"azureFile": {"secretName": "s", "shareName": "share"}}),
            claim("file", volume_name="pv-file"),
            csinode(NODE, ["file.csi.azure.com"], 0, migrated=None)]
    cases.append({
        "name": "an Azure File volume is not counted: its migration is not on",
        "source": DERIVED + "utils.go: isCSIMigrationOn is off for kubernetes.io/azure-file, so "
                  "getCSIDriverInfo does not count its PV (csi-translation-lib could translate it)",
        "note": "file.csi.azure.com has a limit of 0 on the node, yet the pod fits",
        "filters": [PLUGIN], "nodes": [node()], "pods": [], "objects": objs,
        "pod": pod("new", [pvc_vol("file")]),
        "expect": expect(None),
    })

    # VolumeAttachments: only those to this node, with an attacher and a CSI PV.
    objs = [pv("pv-a", {"csi": {"driver": EBS, "volumeHandle": "vol-a"}}),
            pv("pv-b", {"csi": {"driver": EBS, "volumeHandle": "vol-b"}}),
            pv("pv-tree", {"awsElasticBlockStore": {"volumeID": "vol-t"}}),
            pv("pv-new", {"csi": {"driver": EBS, "volumeHandle": "vol-new"}}),
            claim("new", volume_name="pv-new"),
            va("va-other-node", "node-2", EBS, "pv-a"),
            va("va-in-tree", NODE, EBS, "pv-tree"),
            va("va-missing-pv", NODE, EBS, "pv-gone"),
            va("va-counted", NODE, EBS, "pv-b"),
            csinode(NODE, [EBS], 2, migrated=None)]
    cases.append({
        "name": "only attachments to the node of a CSI volume count",
        "source": DERIVED + "csi.go getNodeVolumeAttachmentInfo: an attachment counts when its "
                  "spec.nodeName is the node and its PV exists with a spec.csi; its attacher is the driver",
        "note": "of four attachments only va-counted counts: 1 + the pod's 1 is within 2",
        "filters": [PLUGIN], "nodes": [node()], "pods": [], "objects": objs,
        "pod": pod("new", [pvc_vol("new")]),
        "expect": expect(None),
    })
    objs2 = [o for o in objs if o["kind"] != "CSINode"] + [csinode(NODE, [EBS], 1, migrated=None)]
    cases.append({
        "name": "an attachment to the node fills its last slot",
        "source": DERIVED + "csi.go getNodeVolumeAttachmentInfo: the previous case with a limit of 1",
        "filters": [PLUGIN], "nodes": [node()], "pods": [], "objects": objs2,
        "pod": pod("new", [pvc_vol("new")]),
        "expect": expect(("Unschedulable", REASON)),
    })

    # The beta class annotation wins over spec.storageClassName.
    objs = [storage_class("ebs", EBS), storage_class("other", "example.com/other"),
            claim("pending", class_name="ebs",
                  annotations={"volume.beta.kubernetes.io/storage-class": "other"}),
            pv("pv-0", {"csi": {"driver": EBS, "volumeHandle": "vol-0"}}),
            claim("bound", volume_name="pv-0"),
            csinode(NODE, [EBS], 1, migrated=None)]
    cases.append({
        "name": "an unbound claim counts under the class of its beta annotation",
        "source": DERIVED + "csi.go getCSIDriverInfoFromSC: the class is GetPersistentVolumeClaimClass's, "
                  "the volume.beta.kubernetes.io/storage-class annotation before spec.storageClassName",
        "note": "the claim counts under example.com/other, which has no limit, not under ebs.csi.aws.com, which is full",
        "filters": [PLUGIN], "nodes": [node()],
        "pods": [pod("old", [pvc_vol("bound")], node_name=NODE)],
        "objects": objs,
        "pod": pod("new", [pvc_vol("pending")]),
        "expect": expect(None),
    })

    # An Azure disk of kind Shared (the API server's default) does not migrate.
    objs = [csinode(NODE, ["disk.csi.azure.com"], 4, migrated=None)]
    azure = {"name": "disk", "azureDisk": {"diskName": "d", "diskURI": "/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/disks/d",
                                           "kind": "Shared"}}
    cases.append({
        "name": "an in-line Azure disk of kind Shared is an error",
        "source": DERIVED + "csi.go checkAttachableInlineVolume and csi-translation-lib azure_disk.go: "
                  "only managed disks translate (kind unset or Managed); the API server defaults kind to Shared",
        "filters": [PLUGIN], "nodes": [node()], "pods": [], "objects": objs,
        "pod": pod("new", [azure]),
        "expect": expect(("Error", "converting volume(disk) from inline to csi: kind(Shared) is not "
                                   "supported in csi migration")),
    })

    # An in-line CSI volume (CSI ephemeral) is not counted.
    objs = [csinode(NODE, ["csi.example.com"], 0, migrated=None)]
    inline_csi = {"name": "scratch", "csi": {"driver": "csi.example.com",
                                             "volumeAttributes": {"size": "1Gi"}}}
    cases.append({
        "name": "an in-line CSI volume is not counted",
        "source": DERIVED + "csi.go: PreFilter proceeds only for claims, ephemeral volumes and in-line "
                  "volumes of an in-tree plugin csi-translation-lib translates; filterAttachableVolumes "
                  "counts no other in-line volume",
        "note": "csi.example.com has a limit of 0 on the node, yet the pod fits (PreFilter skips it)",
        "filters": [PLUGIN], "nodes": [node()], "pods": [], "objects": objs,
        "pod": pod("new", [inline_csi]),
        "expect": expect(None),
    })
    return cases


def main():
    if os.path.isdir(OUT):
        for f in os.listdir(OUT):
            if f.endswith(".json"):
                os.remove(os.path.join(OUT, f))
    os.makedirs(OUT, exist_ok=True)
    n = 0
    for prefix, cases in (("", upstream_cases()), ("derived-", derived_cases())):
        for c in cases:
            n += 1
            path = os.path.join(OUT, f"{n:03d}-{prefix}{slug(c['name'])}.json")
            with open(path, "w") as f:
                json.dump(c, f, indent=2)
                f.write("\n")
    print(f"wrote {n} cases to {OUT}")


if __name__ == "__main__":
    main()
