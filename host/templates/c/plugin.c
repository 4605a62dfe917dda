// {{Plugin}}: rejects nodes labelled `sift.io/{{name}}: deny`.
#include "sift.h"

// Built once: the SDK then sends it once per batch of nodes.
static const sift_status_t DENIED = SIFT_UNRESOLVABLE("node(s) were denied by {{Plugin}}");

static const sift_status_t *filter(const sift_pod_t *pod, const sift_node_t *node) {
  (void)pod;
  return sift_label_is(&node->labels, "sift.io/{{name}}", "deny") ? &DENIED : NULL;
}

// The host syncs only the node fields a plugin reads.
const sift_plugin_t sift_plugin = {
    .name = "{{Plugin}}",
    .node_fields = SIFT_FIELD_LABELS,
    .filter = filter,
};
