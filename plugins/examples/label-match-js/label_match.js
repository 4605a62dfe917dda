// LabelMatch in JavaScript: prefer the nodes that carry the labels a pod
// lists in its annotation `sift.io/preferred-labels` (`key=value` or `key`,
// separated by commas). The same scorer as plugins/label-match (Rust), the
// same cases (tests/cases/Simulate/LabelMatch).

import * as sift from "./sift.js";

export const { predicate, scorer, reserver } = sift.exportPlugin({
  name: "LabelMatch",
  extensionPoints: { score: true },
  nodeFields: { labels: true },

  preScore(pod) {
    const terms = (pod.annotations["sift.io/preferred-labels"] ?? "").split(",")
      .map((t) => t.trim()).filter((t) => t !== "")
      .map((t) => (t.includes("=") ? t.split(/=(.*)/s, 2).map((s) => s.trim()) : [t, null]));
    return terms.length > 0 ? terms : sift.SKIP;
  },

  score(pod, terms, node) {
    return terms.filter(([k, v]) => k in node.labels && (v === null || node.labels[k] === v)).length;
  },

  normalizeScores(pod, terms, scores) {
    return sift.defaultNormalize(scores);
  },
});
