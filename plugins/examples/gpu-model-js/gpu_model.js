// GpuModel in JavaScript: a pod that asks for GPUs runs only on a node with
// a GPU of a model it accepts. The same predicate as plugins/gpu-model
// (Rust) and the same cases (tests/cases/GpuModel).
//
// build.sh turns this ES module into a component with componentize-qjs:
// QuickJS compiled to Wasm, with this module evaluated at build time and
// the engine's memory snapshotted, so an instance starts with it loaded.
// The exports follow the WIT names in camelCase: the `predicate` interface
// is the exported object `predicate`, `sync-nodes` its method `syncNodes`.
// WIT values are plain JS values: records are objects with camelCase keys,
// enums their case names as strings, variants { tag, val }, flags objects
// of booleans, tuples arrays, s64/u32 numbers.
//
// Module-level state lives as long as the instance, which the host reuses
// across many pods (see the WIT file for the call order).

const NODE_MODEL_LABEL = "alibabacloud.com/gpu-card-model";
const POD_MODELS_LABEL = "sift.io/gpu-models";
// Asking for any of these (amount > 0) makes a pod a GPU pod.
const GPU_RESOURCES = new Set([
  "alibabacloud.com/gpu-milli",
  "alibabacloud.com/gpu-count",
  "nvidia.com/gpu",
]);
const ERR_NO_GPU = "node(s) had no GPU";
const ERR_MODEL = "node(s) didn't have an accepted GPU model";

// Sent with every filter call, once each; rejections point at them by index,
// so a batch of thousands of rejected nodes costs a few strings only.
// Built once and never mutated: returning them copies them out to the host.
const STATUSES = [
  { code: "unschedulable-and-unresolvable", reasons: [ERR_NO_GPU] },
  { code: "unschedulable-and-unresolvable", reasons: [ERR_MODEL] },
  { code: "error", reasons: ["filter called without a prepared pod"] },
];
const STATUS_NO_GPU = 0;
const STATUS_MODEL = 1;
const STATUS_ERROR = 2;

// Slot -> the node's GPU model ("" = none). Only this label is kept: the
// host sends nodes once per change, not once per pod, so filter reads this
// table instead of node records. Slots are small integers, hence an array
// indexed by slot, kept dense (no holes, no `delete`): QuickJS turns an
// array with holes into a slower property-map array and never turns it
// back, which would slow every later filter call of the instance.
const models = [];
// The prepared pod's accepted models (empty: any); null: no pod prepared,
// which filter must report as an error rather than pass every node.
let accepted = null;

export const predicate = {
  describe() {
    // Only labels: the host then leaves taints, resources and ports out of
    // sync-nodes, which is most of the bytes crossing into the instance.
    return { name: "GpuModel", nodeFields: { labels: true } };
  },

  init(_args) {
    // No arguments. Returning normally is result::ok; throwing a string
    // would be result::err, shown to the operator.
  },

  syncNodes(upserts, removals) {
    // "" rather than delete (see above): a removed slot then reads as a
    // node without GPU, as a missing entry does in the Python and Rust
    // versions.
    for (const slot of removals) {
      if (slot < models.length) models[slot] = "";
    }
    for (const { slot, node } of upserts) {
      let model = "";
      for (const label of node.labels) {
        if (label.key === NODE_MODEL_LABEL) model = label.value;
      }
      while (models.length < slot) models.push("");
      models[slot] = model;
    }
  },

  prepare(pod) {
    // Forget the previous pod first, so that a skipped pod never leaves
    // the previous pod's models behind for a stray filter call.
    accepted = null;
    const wantsGpu = pod.requests.scalar.some(
      (r) => r.amount > 0 && GPU_RESOURCES.has(r.name),
    );
    if (!wantsGpu) return { tag: "skip" };
    let wanted = [];
    for (const label of pod.labels) {
      // Dots, not commas or bars: label values cannot hold those. Empty
      // segments ("A..B", a trailing dot) are typos, not a model named "".
      if (label.key === POD_MODELS_LABEL) {
        wanted = label.value.split(".").filter((m) => m !== "");
      }
    }
    accepted = wanted;
    return { tag: "proceed" };
  },

  filter(slots) {
    const rejections = [];
    if (accepted === null) {
      for (let i = 0; i < slots.length; i++) rejections.push([i, STATUS_ERROR]);
      return { statuses: STATUSES, rejections };
    }
    // A pod lists a handful of models at most, so includes() is as fast
    // as a Set. The match is exact and case-sensitive ("t4" is not "T4"),
    // as in the Rust reference.
    const any = accepted.length === 0;
    for (let i = 0; i < slots.length; i++) {
      const model = models[slots[i]];
      if (!model) {
        rejections.push([i, STATUS_NO_GPU]);
      } else if (!any && !accepted.includes(model)) {
        rejections.push([i, STATUS_MODEL]);
      }
    }
    return { statuses: STATUSES, rejections };
  },
};
