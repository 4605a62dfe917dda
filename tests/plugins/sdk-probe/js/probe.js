// SdkProbe in JavaScript: exercises what the JavaScript SDK (plugin-sdk/js)
// promises, against the cases beside it (tests/tests/examples.rs builds it
// and runs them; the Python probe is the same plugin).

import * as sift from "./sift.js";

const DENIED = sift.unresolvable("node(s) were denied by the probe");
const RESERVED = "probe/reserved";

class ValueError extends Error {
  constructor(message) {
    super(message);
    this.name = "ValueError";
  }
}

export const { predicate, scorer, reserver } = sift.exportPlugin({
  name: "SdkProbe",
  extensionPoints: { filter: true, reserve: true },
  nodeFields: { labels: true, resources: true },
  podAnnotationKeys: [RESERVED],

  prepare(pod) {
    const what = pod.labels["probe"];
    if (what === "reject") return sift.reject(sift.unschedulable("the probe rejects this pod"));
    if (what === "narrow") return sift.narrow(["node-b"]);
    if (what === "raise") throw new ValueError("prepare exploded");
    return Number(pod.labels["probe-max-pods"] ?? "0");
  },

  filter(pod, maxPods, node) {
    const what = node.labels["probe"];
    if (what === "deny") return DENIED;
    if (what === "explode") throw new ValueError("boom");
    if (what === "skip") return sift.SKIP; // a mistake: SKIP is for prepare and preScore
    if (maxPods && node.podCount >= maxPods) return sift.unschedulable(`node(s) had ${node.podCount} pods`);
    if (pod.labels["probe"] === "once"
        && node.podAnnotations.some((p) => p.annotations.some((a) => a.key === RESERVED))) {
      return sift.unschedulable("node(s) had a reserved pod");
    }
  },

  reserve(pod, node) {
    return { [RESERVED]: node.name };
  },
});
