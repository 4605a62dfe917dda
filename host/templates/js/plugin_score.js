// {{Plugin}}: prefers nodes labelled `sift.io/{{name}}: prefer`.

import * as sift from "./sift.js";

const LABEL = "sift.io/{{name}}";

export const { predicate, scorer, reserver } = sift.exportPlugin({
  name: "{{Plugin}}",
  extensionPoints: { score: true },
  // The host syncs only the node fields a plugin reads.
  nodeFields: { labels: true },

  score(pod, state, node) {
    // Already in 0..100: no normalizeScores needed.
    return node.labels[LABEL] === "prefer" ? sift.MAX_NODE_SCORE : 0;
  },
});
