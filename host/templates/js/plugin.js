// {{Plugin}}: rejects nodes labelled `sift.io/{{name}}: deny`.
//
// The exports follow the WIT names (wit/predicate.wit) in camelCase: the
// `predicate` interface is the exported object `predicate`, `sync-nodes`
// its method `syncNodes`. Records are objects with camelCase keys, enums
// their case names as strings ("unschedulable-and-unresolvable"), variants
// { tag, val }, flags objects of booleans, tuples arrays. There is no
// console: log through the `sift:predicate/log` import.

const DENY_LABEL = "sift.io/{{name}}";
// Sent with every filter call; rejections point at it by index.
const STATUSES = [
  {
    code: "unschedulable-and-unresolvable",
    reasons: ["node(s) were denied by {{Plugin}}"],
  },
];

// Slot -> whether the node is denied: the host syncs nodes once per
// change, then asks about batches of slots. Kept dense (no holes).
const denied = [];

export const predicate = {
  describe() {
    return { name: "{{Plugin}}", nodeFields: { labels: true } };
  },

  init(_args) {},

  syncNodes(upserts, removals) {
    for (const slot of removals) {
      if (slot < denied.length) denied[slot] = false;
    }
    for (const { slot, node } of upserts) {
      while (denied.length < slot) denied.push(false);
      denied[slot] = node.labels.some(
        (l) => l.key === DENY_LABEL && l.value === "deny",
      );
    }
  },

  prepare(_pod) {
    return { tag: "proceed" };
  },

  filter(slots) {
    const rejections = [];
    for (let i = 0; i < slots.length; i++) {
      if (denied[slots[i]]) rejections.push([i, 0]);
    }
    return { statuses: STATUSES, rejections };
  },
};
