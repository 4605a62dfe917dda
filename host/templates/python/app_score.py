"""{{Plugin}}: prefers nodes labelled `sift.io/{{name}}: prefer`."""

import sift

LABEL = "sift.io/{{name}}"


class {{Plugin}}(sift.Plugin):
    name = "{{Plugin}}"
    extension_points = sift.ExtensionPoints.SCORE
    # The host syncs only the node fields a plugin reads.
    node_fields = sift.NodeFields.LABELS

    def score(self, pod, state, node):
        # Already in 0..100: no normalize_scores needed.
        return sift.MAX_NODE_SCORE if node.labels.get(LABEL) == "prefer" else 0


Predicate, Scorer, Reserver = sift.export({{Plugin}})
