// SdkProbe in C: exercises what the C SDK (plugin-sdk/c) promises, against
// the cases beside it, as the Python and JavaScript probes do. C has no
// exceptions, so the cases about them (002, 005, 008) do not apply:
// build.sh builds it, then `sift conformance --plugin OUT 001 003 004 006 007`.

#include <stdlib.h>
#include <string.h>

#include "sift.h"

#define RESERVED "probe/reserved"

static const sift_status_t DENIED = SIFT_UNRESOLVABLE("node(s) were denied by the probe");
static const sift_status_t REJECTED = SIFT_UNSCHEDULABLE("the probe rejects this pod");
static const sift_status_t RESERVED_POD = SIFT_UNSCHEDULABLE("node(s) had a reserved pod");
static const char *const NARROWED[] = {"node-b"};
static const char *const ANNOTATION_KEYS[] = {RESERVED, NULL};

// The prepared pod's state: its pod limit, and whether it fits once.
static long max_pods;
static bool once;

static sift_prepared_t prepare(const sift_pod_t *pod) {
  if (sift_label_is(&pod->labels, "probe", "reject")) return sift_reject(&REJECTED);
  if (sift_label_is(&pod->labels, "probe", "narrow")) return sift_narrow(NARROWED, 1);
  const sift_str_t *max = sift_label(&pod->labels, "probe-max-pods");
  char digits[24] = "0";
  if (max != NULL && max->len < sizeof digits) memcpy(digits, max->ptr, max->len), digits[max->len] = '\0';
  max_pods = strtol(digits, NULL, 10);
  once = sift_label_is(&pod->labels, "probe", "once");
  return sift_proceed();
}

static const sift_status_t *filter(const sift_pod_t *pod, const sift_node_t *node) {
  (void)pod;
  if (sift_label_is(&node->labels, "probe", "deny")) return &DENIED;
  if (max_pods > 0 && (long)node->pod_count >= max_pods) {
    // Built per node: the SDK sends one status per text.
    return sift_statusf(SIFT_CODE_UNSCHEDULABLE, "node(s) had %u pods", (unsigned)node->pod_count);
  }
  for (size_t p = 0; once && p < node->pod_annotations.len; p++) {
    if (sift_label(&node->pod_annotations.ptr[p].annotations, RESERVED) != NULL) return &RESERVED_POD;
  }
  return NULL;
}

static const sift_status_t *reserve(const sift_pod_t *pod, const sift_node_t *node, sift_reservation_t *out) {
  (void)pod;
  char name[256];
  size_t n = node->name.len < sizeof name ? node->name.len : sizeof name - 1;
  memcpy(name, node->name.ptr, n);
  name[n] = '\0';
  sift_annotate(out, RESERVED, name);
  return NULL;
}

const sift_plugin_t sift_plugin = {
    .name = "SdkProbe",
    .extension_points = SIFT_FILTER | SIFT_RESERVE,
    .node_fields = SIFT_FIELD_LABELS | SIFT_FIELD_RESOURCES,
    .pod_annotation_keys = ANNOTATION_KEYS,
    .prepare = prepare,
    .filter = filter,
    .reserve = reserve,
};
