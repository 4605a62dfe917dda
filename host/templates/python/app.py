"""{{Plugin}}: rejects nodes labelled `sift.io/{{name}}: deny`."""

import sift

LABEL = "sift.io/{{name}}"


class {{Plugin}}(sift.Plugin):
    name = "{{Plugin}}"
    # The host syncs only the node fields a plugin reads.
    node_fields = sift.NodeFields.LABELS

    def filter(self, pod, state, node):
        if node.labels.get(LABEL) == "deny":
            return sift.unresolvable("node(s) were denied by {{Plugin}}")


Predicate, Scorer, Reserver = sift.export({{Plugin}})
