// {{Plugin}}: rejects nodes labelled `sift.io/{{name}}: deny`.

import * as sift from "./sift.js";

const LABEL = "sift.io/{{name}}";

export const { predicate, scorer, reserver } = sift.exportPlugin({
  name: "{{Plugin}}",
  // The host syncs only the node fields a plugin reads.
  nodeFields: { labels: true },

  filter(pod, state, node) {
    if (node.labels[LABEL] === "deny") return sift.unresolvable("node(s) were denied by {{Plugin}}");
  },
});
