// GpuModel in JavaScript: a pod that asks for GPUs runs only on a node with
// a GPU of a model it accepts. The same predicate as plugins/gpu-model
// (Rust), the same cases (tests/cases/GpuModel), on sift's latest contract
// through the JavaScript SDK (plugin-sdk/js/sift.js).
//
// It also shows what the sandbox leaves a script: Date, JSON and number
// formatting work (the frozen clock reads 1970). A script has no way to
// open a file: componentize-qjs resolves imports at build time, leaves
// out QuickJS's `qjs:std`/`qjs:os` modules, and defines no `require` or
// `process`; `init` refuses to load if one of those appears.

import * as sift from "./sift.js";

const NODE_MODEL_LABEL = "alibabacloud.com/gpu-card-model";
const POD_MODELS_LABEL = "sift.io/gpu-models";
// Asking for any of these (amount > 0) makes a pod a GPU pod.
const GPU_RESOURCES = new Set(["alibabacloud.com/gpu-milli", "alibabacloud.com/gpu-count", "nvidia.com/gpu"]);
// Built once: the SDK then finds each by identity when it shares statuses.
const NO_GPU = sift.unresolvable("node(s) had no GPU");
const BAD_MODEL = sift.unresolvable("node(s) didn't have an accepted GPU model");

export const { predicate, scorer, reserver } = sift.exportPlugin({
  name: "GpuModel",
  nodeFields: { labels: true },

  init() {
    const fileApis = ["require", "process", "Deno", "std", "os"].filter((g) => typeof globalThis[g] !== "undefined");
    if (fileApis.length > 0) throw new Error(`a file API is reachable: ${fileApis.join(", ")}`);
    sift.log(`GpuModel (JavaScript) loaded at ${new Date().toISOString()}; no file API`);
  },

  prepare(pod) {
    if (!pod.requests.scalar.some((r) => r.amount > 0 && GPU_RESOURCES.has(r.name))) return sift.SKIP;
    // Dots, not commas: label values cannot hold those. Empty segments
    // are typos, not a model named "".
    return (pod.labels[POD_MODELS_LABEL] ?? "").split(".").filter((m) => m !== "");
  },

  filter(pod, accepted, node) {
    const model = node.labels[NODE_MODEL_LABEL];
    if (!model) return NO_GPU;
    if (accepted.length > 0 && !accepted.includes(model)) return BAD_MODEL;
  },
});
