"""SdkProbe in Python: exercises what the Python SDK (plugin-sdk/python)
promises, against the cases beside it (tests/tests/examples.rs builds it
and runs them; the JavaScript probe is the same plugin)."""

import sift

DENIED = sift.unresolvable("node(s) were denied by the probe")
RESERVED = "probe/reserved"


class SdkProbe(sift.Plugin):
    name = "SdkProbe"
    extension_points = sift.ExtensionPoints.FILTER | sift.ExtensionPoints.RESERVE
    node_fields = sift.NodeFields.LABELS | sift.NodeFields.RESOURCES
    pod_annotation_keys = [RESERVED]

    def prepare(self, pod):
        what = pod.labels.get("probe")
        if what == "reject":
            return sift.Reject(sift.unschedulable("the probe rejects this pod"))
        if what == "narrow":
            return sift.Narrow(["node-b"])
        if what == "raise":
            raise ValueError("prepare exploded")
        return int(pod.labels.get("probe-max-pods", "0"))

    def filter(self, pod, max_pods, node):
        what = node.labels.get("probe")
        if what == "deny":
            return DENIED
        if what == "explode":
            raise ValueError("boom")
        if what == "skip":
            return sift.SKIP  # a mistake: SKIP is for prepare and pre_score
        if max_pods and node.pod_count >= max_pods:
            return sift.unschedulable(f"node(s) had {node.pod_count} pods")
        if pod.labels.get("probe") == "once" and any(
            a.key == RESERVED for p in node.pod_annotations for a in p.annotations
        ):
            return sift.unschedulable("node(s) had a reserved pod")

    def reserve(self, pod, node):
        return {RESERVED: node.name}


Predicate, Scorer, Reserver = sift.export(SdkProbe)
