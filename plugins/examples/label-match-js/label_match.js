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
    // Spaces and tabs only, as the Rust reference trims.
    const trim = (s) => s.replace(/^[ \t]+|[ \t]+$/g, "");
    const terms = [];
    for (let term of (pod.annotations["sift.io/preferred-labels"] ?? "").split(",")) {
      term = trim(term);
      if (term === "") continue;
      const eq = term.indexOf("=");
      terms.push(eq < 0 ? { key: term, value: null }
        : { key: trim(term.slice(0, eq)), value: trim(term.slice(eq + 1)) });
    }
    return terms.length > 0 ? terms : sift.SKIP;
  },

  score(pod, terms, node) {
    let matched = 0;
    for (let i = 0; i < terms.length; i++) {
      const have = node.labels[terms[i].key];
      if (have !== undefined && (terms[i].value === null || have === terms[i].value)) matched++;
    }
    return matched;
  },

  normalizeScores(pod, terms, scores) {
    return sift.defaultNormalize(scores);
  },
});
