// {{Plugin}}: prefers nodes labelled `sift.io/{{name}}: prefer`.
#include "sift.h"

// Scores already in 0..100, so normalize_scores keeps the default.
static const sift_status_t *score(const sift_pod_t *pod, const sift_node_t *node, int64_t *score) {
  (void)pod;
  *score = sift_label_is(&node->labels, "sift.io/{{name}}", "prefer") ? SIFT_MAX_NODE_SCORE : 0;
  return NULL;
}

// The host syncs only the node fields a plugin reads.
const sift_plugin_t sift_plugin = {
    .name = "{{Plugin}}",
    .extension_points = SIFT_SCORE,
    .node_fields = SIFT_FIELD_LABELS,
    .score = score,
};
