// sift's C SDK: a scheduler plugin is one struct and a few functions.
//
//     #include "sift.h"
//
//     static const sift_status_t TMP = SIFT_UNRESOLVABLE("node(s) were tmp nodes");
//
//     static const sift_status_t *filter(const sift_pod_t *pod, const sift_node_t *node) {
//       (void)pod;
//       return sift_label_is(&node->labels, "tier", "tmp") ? &TMP : NULL;
//     }
//
//     const sift_plugin_t sift_plugin = {
//         .name = "AvoidTmp", .node_fields = SIFT_FIELD_LABELS, .filter = filter};
//
// Build it with sift.c and wit-bindgen's C bindings of contract 0.7.0
// (`sift component bindings c --contract 0.7.0 --out DIR` writes plugin.h,
// plugin.c and plugin_component_type.o), for wasm32-wasi as a reactor, then
// `sift component new`. sift.c implements every export of world `plugin`:
// it keeps what the host syncs (the node table, and the cluster view and
// objects for plugins that ask for them) and turns the batched calls into
// one call of the plugin per node, as the Go, Python and JavaScript SDKs do.
//
// What the SDK hides, so a plugin need not know it:
// - the bindings' ownership rules: arguments belong to the callee and must
//   be freed once read; results must come from malloc, since the bindings
//   free them after the host read them (and never free an empty list, so
//   an empty result must not be allocated). The SDK frees and copies; what
//   a callback receives is borrowed for the call, what it returns is copied
//   before the SDK returns.
// - statuses: a filter returns a pointer to a status, static or rewritten
//   per node (sift_statusf); the SDK sends each distinct status (code and
//   text) once per batch and points the rejections at it.
// - slots: a slot the host never synced is an Error status naming it, not
//   a crash.
//
// The sandbox grants nothing by default, and libc obeys it: fopen fails
// (no directory is preopened), getenv finds nothing, time() and
// clock_gettime read 1970 (the clocks are frozen at the Unix epoch) and
// printf's output is discarded, unless the operator grants those
// capabilities (docs/plugin-authors.md). Use sift_log to be heard.
//
// An instance serves one host thread at a time: a plugin keeps what prepare
// or pre_score computed for the pod in static variables for filter and
// score (kube-scheduler's CycleState), without locking.
#ifndef SIFT_H
#define SIFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

// The contract's records, under shorter names. Strings are not
// NUL-terminated: use sift_eq, sift_label and printf's "%.*s".
typedef plugin_string_t sift_str_t;
typedef sift_predicate_types_pod_t sift_pod_t;
typedef sift_predicate_types_node_t sift_node_t;
typedef sift_predicate_types_label_t sift_label_t;
typedef sift_predicate_types_list_label_t sift_labels_t;
typedef sift_predicate_types_resources_t sift_resources_t;
typedef sift_predicate_types_pod_group_t sift_pod_group_t;
typedef sift_predicate_types_list_group_count_t sift_group_counts_t;
typedef sift_predicate_types_reservation_t sift_reservation_t;

// Node fields (plugin-info.node-fields); 0 in sift_plugin_t means the cheap
// ones, SIFT_FIELDS_CHEAP.
enum {
  SIFT_FIELD_LABELS = SIFT_PREDICATE_TYPES_NODE_FIELDS_LABELS,
  SIFT_FIELD_TAINTS = SIFT_PREDICATE_TYPES_NODE_FIELDS_TAINTS,
  SIFT_FIELD_UNSCHEDULABLE = SIFT_PREDICATE_TYPES_NODE_FIELDS_UNSCHEDULABLE,
  SIFT_FIELD_RESOURCES = SIFT_PREDICATE_TYPES_NODE_FIELDS_RESOURCES,
  SIFT_FIELD_PORTS = SIFT_PREDICATE_TYPES_NODE_FIELDS_PORTS,
  SIFT_FIELD_ANNOTATIONS = SIFT_PREDICATE_TYPES_NODE_FIELDS_ANNOTATIONS,
  SIFT_FIELD_CONDITIONS = SIFT_PREDICATE_TYPES_NODE_FIELDS_CONDITIONS,
  SIFT_FIELD_OBJECT = SIFT_PREDICATE_TYPES_NODE_FIELDS_OBJECT,
  SIFT_FIELD_IMAGES = SIFT_PREDICATE_TYPES_NODE_FIELDS_IMAGES,
  SIFT_FIELD_VOLUMES = SIFT_PREDICATE_TYPES_NODE_FIELDS_VOLUMES,
  SIFT_FIELD_DECLARED_FEATURES = SIFT_PREDICATE_TYPES_NODE_FIELDS_DECLARED_FEATURES,
  SIFT_FIELDS_CHEAP = SIFT_FIELD_LABELS | SIFT_FIELD_TAINTS | SIFT_FIELD_UNSCHEDULABLE | SIFT_FIELD_RESOURCES |
                      SIFT_FIELD_PORTS | SIFT_FIELD_ANNOTATIONS | SIFT_FIELD_CONDITIONS,
};

// Extension points (plugin-info.extension-points); 0 means SIFT_FILTER.
enum {
  SIFT_FILTER = SIFT_PREDICATE_TYPES_EXTENSION_POINTS_FILTER,
  SIFT_SCORE = SIFT_PREDICATE_TYPES_EXTENSION_POINTS_SCORE,
  SIFT_RESERVE = SIFT_PREDICATE_TYPES_EXTENSION_POINTS_RESERVE,
};

// kube-scheduler's status codes a plugin returns.
typedef enum {
  SIFT_CODE_SUCCESS = SIFT_PREDICATE_TYPES_CODE_SUCCESS,
  SIFT_CODE_ERROR = SIFT_PREDICATE_TYPES_CODE_ERROR,
  SIFT_CODE_UNSCHEDULABLE = SIFT_PREDICATE_TYPES_CODE_UNSCHEDULABLE,
  SIFT_CODE_UNRESOLVABLE = SIFT_PREDICATE_TYPES_CODE_UNSCHEDULABLE_AND_UNRESOLVABLE,
} sift_code_t;

// A verdict with one reason (none when reason is NULL), e.g. "Insufficient
// cpu". Build the usual ones statically with the macros below; the SDK
// copies what it sends, so the text may live in a buffer rewritten per node.
typedef struct sift_status {
  sift_code_t code;
  const char *reason;
  // Set by the macros, whose reason can only be a string literal: its text
  // cannot change, so the SDK recognises the status by pointer, without
  // comparing the text per node. Never set it on a status whose text is
  // rewritten.
  bool literal;
} sift_status_t;

// The node does not fit now, but could after preemption.
#define SIFT_UNSCHEDULABLE(reason) {SIFT_CODE_UNSCHEDULABLE, "" reason "", true}
// The node does not fit, whatever is preempted (UnschedulableAndUnresolvable).
#define SIFT_UNRESOLVABLE(reason) {SIFT_CODE_UNRESOLVABLE, "" reason "", true}
// The plugin itself failed: the host aborts the cycle.
#define SIFT_ERROR(reason) {SIFT_CODE_ERROR, "" reason "", true}

// A status whose reason is printf-formatted into a buffer of the SDK's,
// valid until the next sift_statusf: e.g. "node(s) had 12 pods".
const sift_status_t *sift_statusf(sift_code_t code, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

// What prepare and pre_score decide for the pod.
typedef enum {
  SIFT_PROCEED,  // filter (or score) the nodes
  SIFT_SKIP,     // nothing to say about this pod: every node passes / scores nothing
  SIFT_REJECT,   // prepare: no node fits (status says why); pre_score: an error
  SIFT_NARROW,   // prepare only: only the nodes named can fit
} sift_decision_t;

typedef struct sift_prepared {
  sift_decision_t decision;
  const sift_status_t *status;  // SIFT_REJECT
  const char *const *names;     // SIFT_NARROW: n_names node names
  size_t n_names;
} sift_prepared_t;

static inline sift_prepared_t sift_proceed(void) { return (sift_prepared_t){SIFT_PROCEED, NULL, NULL, 0}; }
static inline sift_prepared_t sift_skip(void) { return (sift_prepared_t){SIFT_SKIP, NULL, NULL, 0}; }
static inline sift_prepared_t sift_reject(const sift_status_t *status) {
  return (sift_prepared_t){SIFT_REJECT, status, NULL, 0};
}
static inline sift_prepared_t sift_narrow(const char *const *names, size_t n) {
  return (sift_prepared_t){SIFT_NARROW, NULL, names, n};
}

// The plugin: define one, named sift_plugin. Callbacks left NULL get the
// defaults of the Go SDK's Base: prepare proceeds if the plugin filters and
// skips otherwise; pre_score proceeds if it scores and skips otherwise;
// filter passes every node; score is 0; normalize_scores leaves the scores;
// reserve returns nothing. A callback returning a status returns NULL for
// success. Pods and nodes are borrowed: valid during the call only.
typedef struct sift_plugin {
  // As in configuration and statuses, e.g. "GpuModel".
  const char *name;
  // SIFT_FILTER | SIFT_SCORE | SIFT_RESERVE; 0 means SIFT_FILTER.
  uint8_t extension_points;
  // SIFT_FIELD_*; 0 means SIFT_FIELDS_CHEAP.
  uint16_t node_fields;
  // NULL-terminated, optional: the only node labels the SDK keeps (others
  // read as absent), so the node table stays small and sift_label cheap;
  // as the Rust SDK's NODE_LABELS.
  const char *const *node_labels;
  // Sync the cluster view (pods placed by group, namespaces): sift_group,
  // sift_pods_on, sift_namespace_labels.
  bool cluster;
  // Send pod->object, the whole Pod as JSON.
  bool pod_object;
  // NULL-terminated: the pod annotation keys sent in node->pod_annotations.
  const char *const *pod_annotation_keys;
  // NULL-terminated: the kinds of cluster objects to sync (sift_object).
  const char *const *object_kinds;

  // Configure the instance with its arguments as JSON ("{}" when none):
  // NULL, or why the configuration is refused.
  const char *(*init)(const char *args);
  // Start filtering a pod (PreFilter).
  sift_prepared_t (*prepare)(const sift_pod_t *pod);
  // Whether the prepared pod fits node: NULL (it does) or a status.
  const sift_status_t *(*filter)(const sift_pod_t *pod, const sift_node_t *node);
  // Start scoring a pod over the feasible nodes (PreScore): proceed, skip,
  // or reject with an error.
  sift_prepared_t (*pre_score)(const sift_pod_t *pod, const sift_node_t *const *nodes, size_t n);
  // Rate node for the pre-scored pod into *score (0 on entry); a status is
  // an error.
  const sift_status_t *(*score)(const sift_pod_t *pod, const sift_node_t *node, int64_t *score);
  // Bring the scores (in the order scored) into 0..100, in place.
  const sift_status_t *(*normalize_scores)(const sift_pod_t *pod, int64_t *scores, size_t n);
  // The pod is assumed onto node: add the annotations it carries and the
  // objects to write before binding with sift_annotate and sift_write.
  const sift_status_t *(*reserve)(const sift_pod_t *pod, const sift_node_t *node, sift_reservation_t *out);
} sift_plugin_t;

extern const sift_plugin_t sift_plugin;

// Strings and labels.

// Whether s holds exactly the C string text.
bool sift_eq(const sift_str_t *s, const char *text);
// The value of key in labels (or annotations, a node selector), or NULL.
const sift_str_t *sift_label(const sift_labels_t *labels, const char *key);
// Whether labels hold key with exactly value.
bool sift_label_is(const sift_labels_t *labels, const char *key, const char *value);
// The amount of a scalar resource (e.g. "nvidia.com/gpu"), 0 when absent.
int64_t sift_scalar(const sift_resources_t *resources, const char *name);

// kube-scheduler's framework.MaxNodeScore.
#define SIFT_MAX_NODE_SCORE 100

// kube-scheduler's DefaultNormalizeScore: scores scaled to 0..100 by the
// highest (at least 0), truncating; reverse turns high into low. With no
// positive score they stay as they are (all 100 when reverse).
void sift_default_normalize(int64_t *scores, size_t n, bool reverse);

// Reserve: the assumed pod carries the annotation key=value.
void sift_annotate(sift_reservation_t *out, const char *key, const char *value);
// Reserve: write object (whole, JSON) of kind before the pod is bound.
void sift_write(sift_reservation_t *out, const char *kind, const char *object);

// The cluster as the host synced it. Pointers are valid until the next
// sync, i.e. during the current call.

// The node at slot, or NULL.
const sift_node_t *sift_node(uint32_t slot);
// A bound on the slots: iterate 0..sift_slot_end() with sift_node, which
// is NULL where no node is.
uint32_t sift_slot_end(void);
// The node named name, or NULL (a scan of the table).
const sift_node_t *sift_node_named(const char *name);
// Cluster view: the pods on the node at slot by group (NULL: none).
const sift_group_counts_t *sift_pods_on(uint32_t slot);
// Cluster view: the pod group id, or NULL.
const sift_pod_group_t *sift_group(uint64_t id);
// Cluster view: the labels of namespace name, or NULL when unknown.
const sift_labels_t *sift_namespace_labels(const char *name);
// The object of kind at key (namespace/name, or name) as JSON, or NULL.
const sift_str_t *sift_object(const char *kind, const char *key);

// Logging into the host's log, tagged with the plugin's name.
typedef enum {
  SIFT_LOG_TRACE = SIFT_PREDICATE_LOG_LEVEL_TRACE,
  SIFT_LOG_DEBUG = SIFT_PREDICATE_LOG_LEVEL_DEBUG,
  SIFT_LOG_INFO = SIFT_PREDICATE_LOG_LEVEL_INFO,
  SIFT_LOG_WARN = SIFT_PREDICATE_LOG_LEVEL_WARN,
  SIFT_LOG_ERROR = SIFT_PREDICATE_LOG_LEVEL_ERROR,
} sift_level_t;

void sift_log(sift_level_t level, const char *format, ...) __attribute__((format(printf, 2, 3)));

#ifdef __cplusplus
}
#endif

#endif
