// GpuModel in C: a pod that asks for GPUs runs only on a node with a GPU of
// a model it accepts. The same predicate as plugins/gpu-model (Rust), the
// same cases (tests/cases/GpuModel), on the C SDK (plugin-sdk/c).

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sift.h"

static const char *const GPU_RESOURCES[] = {
    "alibabacloud.com/gpu-milli",
    "alibabacloud.com/gpu-count",
    "nvidia.com/gpu",
};
static const sift_status_t NO_GPU = SIFT_UNRESOLVABLE("node(s) had no GPU");
static const sift_status_t BAD_MODEL = SIFT_UNRESOLVABLE("node(s) didn't have an accepted GPU model");

// The prepared pod's accepted models: a copy of its label, split on '.'
// (none: any model).
static char *accepted;
static size_t accepted_len;

// The sandbox at work: the plugin may not read the host's files, and its
// clock reads 1970 unless the operator grants a real one.
static const char *init(const char *args) {
  (void)args;  // no arguments
  FILE *f = fopen("/etc/passwd", "r");
  if (f != NULL) {
    fclose(f);
    return "the sandbox let GpuModel read /etc/passwd";
  }
  char when[32];
  time_t now = time(NULL);
  strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", gmtime(&now));
  sift_log(SIFT_LOG_INFO, "GpuModel loaded at %s UTC (the sandbox's clock)", when);
  return NULL;
}

static sift_prepared_t prepare(const sift_pod_t *pod) {
  bool gpu = false;
  for (size_t r = 0; r < sizeof GPU_RESOURCES / sizeof *GPU_RESOURCES; r++) {
    gpu |= sift_scalar(&pod->requests, GPU_RESOURCES[r]) > 0;
  }
  if (!gpu) return sift_skip();
  const sift_str_t *models = sift_label(&pod->labels, "sift.io/gpu-models");
  accepted_len = models ? models->len : 0;
  accepted = realloc(accepted, accepted_len + 1);
  if (accepted == NULL) abort();
  if (accepted_len > 0) memcpy(accepted, models->ptr, accepted_len);
  return sift_proceed();
}

static bool is_accepted(const sift_str_t *model) {
  bool any = true;  // until a non-empty segment is found
  for (size_t start = 0, i = 0; i <= accepted_len; i++) {
    if (i < accepted_len && accepted[i] != '.') continue;
    if (i > start) {
      any = false;
      if (i - start == model->len && memcmp(accepted + start, model->ptr, model->len) == 0) return true;
    }
    start = i + 1;
  }
  return any;
}

#define NODE_MODEL_LABEL "alibabacloud.com/gpu-card-model"

static const sift_status_t *filter(const sift_pod_t *pod, const sift_node_t *node) {
  (void)pod;
  const sift_str_t *model = sift_label(&node->labels, NODE_MODEL_LABEL);
  if (model == NULL || model->len == 0) return &NO_GPU;
  return is_accepted(model) ? NULL : &BAD_MODEL;
}

const sift_plugin_t sift_plugin = {
    .name = "GpuModel",
    .node_fields = SIFT_FIELD_LABELS,
    // Of the nodes' labels, only the model is kept.
    .node_labels = (const char *const[]){NODE_MODEL_LABEL, NULL},
    .init = init,
    .prepare = prepare,
    .filter = filter,
};
