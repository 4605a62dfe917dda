"""GpuModel in Python: a pod that asks for GPUs runs only on a node with a
GPU of a model it accepts. The same predicate as plugins/gpu-model (Rust),
the same cases (tests/cases/GpuModel), on sift's latest contract through
the Python SDK (plugin-sdk/python/sift.py).

It also shows that the standard library works in the sandbox: `time` and
f-strings format the load time (the frozen clock reads 1970), and reading
a file fails, which `__init__` checks, refusing to load if it could.
"""

import time

import sift

NODE_MODEL_LABEL = "alibabacloud.com/gpu-card-model"
POD_MODELS_LABEL = "sift.io/gpu-models"
GPU_RESOURCES = {"alibabacloud.com/gpu-milli", "alibabacloud.com/gpu-count", "nvidia.com/gpu"}
# Built once: the SDK then finds each by identity when it shares statuses.
NO_GPU = sift.unresolvable("node(s) had no GPU")
BAD_MODEL = sift.unresolvable("node(s) didn't have an accepted GPU model")


class GpuModel(sift.Plugin):
    name = "GpuModel"
    node_fields = sift.NodeFields.LABELS

    def __init__(self, args):
        super().__init__(args)
        try:
            with open("/etc/passwd") as f:
                f.read()
        except OSError as e:
            sift.log(f"GpuModel (Python) loaded at {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())}; "
                     f"files are closed to it: {e.__class__.__name__}")
        else:
            raise RuntimeError("the sandbox let this plugin read /etc/passwd")

    def prepare(self, pod):
        if not any(r.amount > 0 and r.name in GPU_RESOURCES for r in pod.requests.scalar):
            return sift.SKIP
        # Dots, not commas: label values cannot hold those. Empty segments
        # are typos, not a model named "".
        return [m for m in pod.labels.get(POD_MODELS_LABEL, "").split(".") if m]

    def filter(self, pod, accepted, node):
        model = node.labels.get(NODE_MODEL_LABEL, "")
        if not model:
            return NO_GPU
        if accepted and model not in accepted:
            return BAD_MODEL


Predicate, Scorer, Reserver = sift.export(GpuModel)
