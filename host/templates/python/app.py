"""{{Plugin}}: rejects nodes labelled `sift.io/{{name}}: deny`."""

from typing import Dict, List

from wit_world import exports
from wit_world.imports import types as t

DENY_LABEL = "sift.io/{{name}}"
# Slot -> whether the node is denied: the host syncs nodes in once per
# change, then asks about batches of slots.
denied: Dict[int, bool] = {}


class Predicate(exports.Predicate):
    def describe(self) -> t.PluginInfo:
        return t.PluginInfo(name="{{Plugin}}", node_fields=t.NodeFields.LABELS)

    def init(self, args: str) -> None:
        pass

    def sync_nodes(self, upserts: List[t.NodeEntry], removals: List[int]) -> None:
        for slot in removals:
            denied.pop(slot, None)
        for e in upserts:
            denied[e.slot] = any(
                l.key == DENY_LABEL and l.value == "deny" for l in e.node.labels
            )

    def prepare(self, pod: t.Pod) -> t.PrepareResult:
        return t.PrepareResult_Proceed()

    def filter(self, slots: List[int]) -> t.Verdicts:
        status = t.Status(
            code=t.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            reasons=["node(s) were denied by {{Plugin}}"],
        )
        rejections = [(i, 0) for i, slot in enumerate(slots) if denied.get(slot)]
        return t.Verdicts(statuses=[status], rejections=rejections)
