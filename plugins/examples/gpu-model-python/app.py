"""GpuModel in Python: a pod that asks for GPUs runs only on a node with a
GPU of a model it accepts. The same predicate as plugins/gpu-model (Rust);
the same cases (tests/cases/GpuModel).

componentize-py generates the `wit_world` bindings from wit/0.1.0; this
module implements the exported `predicate` interface. The host syncs node
records into the instance once per snapshot change (`sync_nodes`), then
calls `prepare` once per pod and `filter` over batches of node slots.
"""

from typing import Dict, List, Optional

from wit_world import exports
from wit_world.imports import types as t

NODE_MODEL_LABEL = "alibabacloud.com/gpu-card-model"
POD_MODELS_LABEL = "sift.io/gpu-models"
GPU_RESOURCES = (
    "alibabacloud.com/gpu-milli",
    "alibabacloud.com/gpu-count",
    "nvidia.com/gpu",
)
ERR_NO_GPU = "node(s) had no GPU"
ERR_MODEL = "node(s) didn't have an accepted GPU model"

# Slot -> the node's GPU model ("" = none). Only this label is kept.
models: Dict[int, str] = {}
# The prepared pod's accepted models (empty: any); None: not prepared.
accepted: Optional[List[str]] = None


class Predicate(exports.Predicate):
    def describe(self) -> t.PluginInfo:
        return t.PluginInfo(name="GpuModel", node_fields=t.NodeFields.LABELS)

    def init(self, args: str) -> None:
        pass  # no arguments

    def sync_nodes(self, upserts: List[t.NodeEntry], removals: List[int]) -> None:
        for slot in removals:
            models.pop(slot, None)
        for entry in upserts:
            model = ""
            for label in entry.node.labels:
                if label.key == NODE_MODEL_LABEL:
                    model = label.value
            models[entry.slot] = model

    def prepare(self, pod: t.Pod) -> t.PrepareResult:
        global accepted
        accepted = None
        if not any(r.amount > 0 and r.name in GPU_RESOURCES for r in pod.requests.scalar):
            return t.PrepareResult_Skip()
        wanted: List[str] = []
        for label in pod.labels:
            if label.key == POD_MODELS_LABEL:
                wanted = [m for m in label.value.split(".") if m]
        accepted = wanted
        return t.PrepareResult_Proceed()

    def filter(self, slots: List[int]) -> t.Verdicts:
        # Statuses are sent once each; rejections point at them by index.
        no_gpu = t.Status(code=t.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons=[ERR_NO_GPU])
        bad_model = t.Status(code=t.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons=[ERR_MODEL])
        error = t.Status(code=t.Code.ERROR, reasons=["filter called without a prepared pod"])
        statuses = [no_gpu, bad_model, error]
        rejections = []
        for i, slot in enumerate(slots):
            if accepted is None:
                rejections.append((i, 2))
                continue
            model = models.get(slot, "")
            if not model:
                rejections.append((i, 0))
            elif accepted and model not in accepted:
                rejections.append((i, 1))
        return t.Verdicts(statuses=statuses, rejections=rejections)
