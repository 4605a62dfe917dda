// {{Plugin}}: rejects nodes labelled `sift.io/{{name}}: deny`.
//
// bindings/ holds wit-bindgen's C bindings of the contract (build.sh writes
// them with `sift component bindings c`). Their ownership rules:
// - arguments are owned by the callee: free them once read (*_free);
// - results are freed by the bindings after the host read them, so every
//   string and list returned must come from malloc, never static storage.

#include <stdlib.h>
#include <string.h>

#include "predicate_plugin.h"

static const char DENY_LABEL[] = "sift.io/{{name}}";

// Slot -> whether the node is denied: the host syncs nodes in once per
// change, then asks about batches of slots.
static bool *denied;
static size_t denied_cap;

static bool eq(const predicate_plugin_string_t *s, const char *lit) {
  size_t n = strlen(lit);
  return s->len == n && memcmp(s->ptr, lit, n) == 0;
}

static void set_denied(uint32_t slot, bool value) {
  if (slot >= denied_cap) {
    size_t cap = denied_cap ? denied_cap : 64;
    while (cap <= slot) cap *= 2;
    denied = realloc(denied, cap * sizeof *denied);
    if (denied == NULL) abort();
    memset(denied + denied_cap, 0, (cap - denied_cap) * sizeof *denied);
    denied_cap = cap;
  }
  denied[slot] = value;
}

// Logging: the contract's log import. Messages appear in sift's log with
// the plugin's name (`sift --log-level info` shows info). printf and
// fprintf work too, but only where the config grants
// `sandbox: {stdio: true}` (each line then becomes a log message); without
// the grant their output is discarded.
static void log_info(const char *text) {
  predicate_plugin_string_t message = {(uint8_t *)text, strlen(text)};
  sift_predicate_log_log(SIFT_PREDICATE_LOG_LEVEL_INFO, &message);
}

void exports_sift_predicate_predicate_describe(exports_sift_predicate_predicate_plugin_info_t *ret) {
  predicate_plugin_string_dup(&ret->name, "{{Plugin}}");
  ret->node_fields = SIFT_PREDICATE_TYPES_NODE_FIELDS_LABELS;
}

bool exports_sift_predicate_predicate_init(predicate_plugin_string_t *args, predicate_plugin_string_t *err) {
  (void)err;
  predicate_plugin_string_free(args);
  log_info("{{Plugin}} configured");
  return true;
}

void exports_sift_predicate_predicate_sync_nodes(exports_sift_predicate_predicate_list_node_entry_t *upserts,
                                                 predicate_plugin_list_u32_t *removals) {
  for (size_t i = 0; i < removals->len; i++) set_denied(removals->ptr[i], false);
  for (size_t i = 0; i < upserts->len; i++) {
    const sift_predicate_types_list_label_t *labels = &upserts->ptr[i].node.labels;
    bool deny = false;
    for (size_t l = 0; l < labels->len; l++) {
      if (eq(&labels->ptr[l].key, DENY_LABEL) && eq(&labels->ptr[l].value, "deny")) deny = true;
    }
    set_denied(upserts->ptr[i].slot, deny);
  }
  exports_sift_predicate_predicate_list_node_entry_free(upserts);
  predicate_plugin_list_u32_free(removals);
}

void exports_sift_predicate_predicate_prepare(exports_sift_predicate_predicate_pod_t *pod,
                                              exports_sift_predicate_predicate_prepare_result_t *ret) {
  ret->tag = SIFT_PREDICATE_TYPES_PREPARE_RESULT_PROCEED;
  exports_sift_predicate_predicate_pod_free(pod);
}

void exports_sift_predicate_predicate_filter(predicate_plugin_list_u32_t *slots,
                                             exports_sift_predicate_predicate_verdicts_t *ret) {
  sift_predicate_types_status_t *status = malloc(sizeof *status);
  if (status == NULL) abort();
  status->code = SIFT_PREDICATE_TYPES_CODE_UNSCHEDULABLE_AND_UNRESOLVABLE;
  status->reasons.len = 1;
  status->reasons.ptr = malloc(sizeof *status->reasons.ptr);
  if (status->reasons.ptr == NULL) abort();
  predicate_plugin_string_dup(&status->reasons.ptr[0], "node(s) were denied by {{Plugin}}");
  ret->statuses = (sift_predicate_types_list_status_t){status, 1};

  ret->rejections.len = 0;
  ret->rejections.ptr = malloc((slots->len ? slots->len : 1) * sizeof *ret->rejections.ptr);
  if (ret->rejections.ptr == NULL) abort();
  for (size_t i = 0; i < slots->len; i++) {
    uint32_t slot = slots->ptr[i];
    if (slot < denied_cap && denied[slot]) {
      ret->rejections.ptr[ret->rejections.len++] = (predicate_plugin_tuple2_u32_u32_t){(uint32_t)i, 0};
    }
  }
  predicate_plugin_list_u32_free(slots);
}
