// GpuModel in C: a pod that asks for GPUs runs only on a node with a GPU of
// a model it accepts. The same predicate as plugins/gpu-model (Rust), the
// same cases (tests/cases/GpuModel).
//
// predicate_plugin.{h,c} are wit-bindgen's C bindings of the contract,
// written by `sift component bindings c` at build time (build.sh). Their
// ownership rules, which every C plugin must follow:
// - arguments are owned by the callee: free them (the *_free functions)
//   once read, or the instance's memory grows with every call;
// - results are freed by the bindings after the host has read them, so
//   every string and list returned must come from malloc (string_dup), never
//   from static storage.

#include <stdlib.h>
#include <string.h>

#include "predicate_plugin.h"

typedef predicate_plugin_string_t string_t;

static const char NODE_MODEL_LABEL[] = "alibabacloud.com/gpu-card-model";
static const char POD_MODELS_LABEL[] = "sift.io/gpu-models";
static const char *const GPU_RESOURCES[] = {
    "alibabacloud.com/gpu-milli",
    "alibabacloud.com/gpu-count",
    "nvidia.com/gpu",
};
static const char ERR_NO_GPU[] = "node(s) had no GPU";
static const char ERR_MODEL[] = "node(s) didn't have an accepted GPU model";
static const char ERR_UNPREPARED[] = "filter called without a prepared pod";

// Slot -> the node's GPU model (len 0: none). Only this label is kept, so
// the table stays small however many labels nodes carry.
static string_t *models;
static size_t models_cap;

// The prepared pod's accepted models (none: any). `prepared` is false
// until the first prepare.
static bool prepared;
static string_t *accepted;
static size_t accepted_len;

static bool eq(const string_t *s, const char *lit) {
  size_t n = strlen(lit);
  return s->len == n && memcmp(s->ptr, lit, n) == 0;
}

static bool same(const string_t *a, const uint8_t *b, size_t b_len) {
  return a->len == b_len && memcmp(a->ptr, b, b_len) == 0;
}

static void set_model(uint32_t slot, const string_t *value) {
  if (slot >= models_cap) {
    size_t cap = models_cap ? models_cap : 64;
    while (cap <= slot) cap *= 2;
    models = realloc(models, cap * sizeof *models);
    if (models == NULL) abort();
    memset(models + models_cap, 0, (cap - models_cap) * sizeof *models);
    models_cap = cap;
  }
  free(models[slot].ptr);
  models[slot] = (string_t){0};
  if (value != NULL && value->len > 0) {
    predicate_plugin_string_dup_n(&models[slot], (const char *)value->ptr, value->len);
  }
}

void exports_sift_predicate_predicate_describe(exports_sift_predicate_predicate_plugin_info_t *ret) {
  predicate_plugin_string_dup(&ret->name, "GpuModel");
  ret->node_fields = SIFT_PREDICATE_TYPES_NODE_FIELDS_LABELS;
}

bool exports_sift_predicate_predicate_init(string_t *args, string_t *err) {
  (void)err;
  predicate_plugin_string_free(args);  // no arguments
  return true;
}

void exports_sift_predicate_predicate_sync_nodes(exports_sift_predicate_predicate_list_node_entry_t *upserts,
                                                 predicate_plugin_list_u32_t *removals) {
  for (size_t i = 0; i < removals->len; i++) set_model(removals->ptr[i], NULL);
  for (size_t i = 0; i < upserts->len; i++) {
    const sift_predicate_types_node_t *node = &upserts->ptr[i].node;
    const string_t *model = NULL;
    for (size_t l = 0; l < node->labels.len; l++) {
      if (eq(&node->labels.ptr[l].key, NODE_MODEL_LABEL)) model = &node->labels.ptr[l].value;
    }
    set_model(upserts->ptr[i].slot, model);
  }
  exports_sift_predicate_predicate_list_node_entry_free(upserts);
  predicate_plugin_list_u32_free(removals);
}

static void clear_accepted(void) {
  for (size_t i = 0; i < accepted_len; i++) free(accepted[i].ptr);
  free(accepted);
  accepted = NULL;
  accepted_len = 0;
}

// Splits the label value on '.', dropping empty segments.
static void set_accepted(const string_t *value) {
  accepted = calloc(value->len / 2 + 1, sizeof *accepted);
  if (accepted == NULL) abort();
  size_t start = 0;
  for (size_t i = 0; i <= value->len; i++) {
    if (i == value->len || value->ptr[i] == '.') {
      if (i > start) {
        predicate_plugin_string_dup_n(&accepted[accepted_len++], (const char *)value->ptr + start, i - start);
      }
      start = i + 1;
    }
  }
}

static bool requests_gpu(const sift_predicate_types_pod_t *pod) {
  const sift_predicate_types_list_resource_amount_t *scalar = &pod->requests.scalar;
  for (size_t i = 0; i < scalar->len; i++) {
    for (size_t r = 0; r < sizeof GPU_RESOURCES / sizeof *GPU_RESOURCES; r++) {
      if (scalar->ptr[i].amount > 0 && eq(&scalar->ptr[i].name, GPU_RESOURCES[r])) return true;
    }
  }
  return false;
}

void exports_sift_predicate_predicate_prepare(exports_sift_predicate_predicate_pod_t *pod,
                                              exports_sift_predicate_predicate_prepare_result_t *ret) {
  clear_accepted();
  prepared = false;
  if (!requests_gpu(pod)) {
    ret->tag = SIFT_PREDICATE_TYPES_PREPARE_RESULT_SKIP;
  } else {
    for (size_t l = 0; l < pod->labels.len; l++) {
      if (eq(&pod->labels.ptr[l].key, POD_MODELS_LABEL)) {
        clear_accepted();
        set_accepted(&pod->labels.ptr[l].value);
      }
    }
    prepared = true;
    ret->tag = SIFT_PREDICATE_TYPES_PREPARE_RESULT_PROCEED;
  }
  exports_sift_predicate_predicate_pod_free(pod);
}

static void status(sift_predicate_types_status_t *s, sift_predicate_types_code_t code, const char *reason) {
  s->code = code;
  s->reasons.len = 1;
  s->reasons.ptr = malloc(sizeof *s->reasons.ptr);
  if (s->reasons.ptr == NULL) abort();
  predicate_plugin_string_dup(&s->reasons.ptr[0], reason);
}

static bool is_accepted(const string_t *model) {
  if (accepted_len == 0) return true;
  for (size_t i = 0; i < accepted_len; i++) {
    if (same(&accepted[i], model->ptr, model->len)) return true;
  }
  return false;
}

enum { NO_GPU, BAD_MODEL, UNPREPARED };

void exports_sift_predicate_predicate_filter(predicate_plugin_list_u32_t *slots,
                                             exports_sift_predicate_predicate_verdicts_t *ret) {
  // Each status is sent once; rejections point at them by index.
  ret->statuses.len = 3;
  ret->statuses.ptr = malloc(3 * sizeof *ret->statuses.ptr);
  if (ret->statuses.ptr == NULL) abort();
  status(&ret->statuses.ptr[NO_GPU], SIFT_PREDICATE_TYPES_CODE_UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_NO_GPU);
  status(&ret->statuses.ptr[BAD_MODEL], SIFT_PREDICATE_TYPES_CODE_UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_MODEL);
  status(&ret->statuses.ptr[UNPREPARED], SIFT_PREDICATE_TYPES_CODE_ERROR, ERR_UNPREPARED);

  ret->rejections.len = 0;
  ret->rejections.ptr = malloc((slots->len ? slots->len : 1) * sizeof *ret->rejections.ptr);
  if (ret->rejections.ptr == NULL) abort();
  for (size_t i = 0; i < slots->len; i++) {
    uint32_t slot = slots->ptr[i];
    const string_t none = {0};
    const string_t *model = slot < models_cap ? &models[slot] : &none;
    uint32_t verdict;
    if (!prepared) {
      verdict = UNPREPARED;
    } else if (model->len == 0) {
      verdict = NO_GPU;
    } else if (!is_accepted(model)) {
      verdict = BAD_MODEL;
    } else {
      continue;
    }
    ret->rejections.ptr[ret->rejections.len++] = (predicate_plugin_tuple2_u32_u32_t){(uint32_t)i, verdict};
  }
  predicate_plugin_list_u32_free(slots);
}
