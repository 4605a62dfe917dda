"""LabelMatch in Python: prefer the nodes that carry the labels a pod lists
in its annotation `sift.io/preferred-labels` (`key=value` or `key`,
separated by commas). The same scorer as plugins/label-match (Rust), the
same cases (tests/cases/Simulate/LabelMatch).
"""

import sift


class LabelMatch(sift.Plugin):
    name = "LabelMatch"
    extension_points = sift.ExtensionPoints.SCORE
    node_fields = sift.NodeFields.LABELS

    def pre_score(self, pod, nodes):
        # Spaces and tabs only, as the Rust reference trims.
        terms = [t.strip(" \t") for t in pod.annotations.get("sift.io/preferred-labels", "").split(",")]
        terms = [t.partition("=") for t in terms if t]
        return [(k.strip(" \t"), v.strip(" \t") if eq else None) for k, eq, v in terms] or sift.SKIP

    def score(self, pod, terms, node):
        matched = 0
        for key, value in terms:
            have = node.labels.get(key)
            if have is not None and (value is None or have == value):
                matched += 1
        return matched

    def normalize_scores(self, pod, terms, scores):
        return sift.default_normalize(scores)


Predicate, Scorer, Reserver = sift.export(LabelMatch)
