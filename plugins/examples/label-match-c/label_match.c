// LabelMatch in C: prefer the nodes that carry the labels a pod lists in
// its annotation `sift.io/preferred-labels` (`key=value` or `key`,
// separated by commas). The same scorer as plugins/label-match (Rust), the
// same cases (tests/cases/Simulate/LabelMatch), on the C SDK (plugin-sdk/c).

#include <stdlib.h>
#include <string.h>

#include "sift.h"

// A term: key, and value unless any value matches. Both point into text.
typedef struct {
  sift_str_t key, value;
  bool any_value;
} term_t;

// The pre-scored pod's terms, kept by pre_score for score: its annotation
// copied (text), the terms pointing into it.
static char *text;
static term_t *terms;
static size_t n_terms;

// Spaces and tabs only, as the Rust reference trims.
static sift_str_t trim(const char *p, size_t n) {
  while (n > 0 && (*p == ' ' || *p == '\t')) p++, n--;
  while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t')) n--;
  return (sift_str_t){(uint8_t *)p, n};
}

static sift_prepared_t pre_score(const sift_pod_t *pod, const sift_node_t *const *nodes, size_t n) {
  (void)nodes, (void)n;
  const sift_str_t *wanted = sift_label(&pod->annotations, "sift.io/preferred-labels");
  size_t len = wanted ? wanted->len : 0;
  n_terms = 0;
  if (len == 0) return sift_skip();
  text = realloc(text, len);
  terms = realloc(terms, (len / 2 + 1) * sizeof *terms);  // terms are separated by commas
  if (text == NULL || terms == NULL) abort();
  memcpy(text, wanted->ptr, len);
  for (size_t start = 0, i = 0; i <= len; i++) {
    if (i < len && text[i] != ',') continue;
    sift_str_t t = trim(text + start, i - start);
    start = i + 1;
    if (t.len == 0) continue;
    const uint8_t *eq = memchr(t.ptr, '=', t.len);
    term_t *term = &terms[n_terms++];
    term->any_value = eq == NULL;
    term->key = trim((const char *)t.ptr, eq ? (size_t)(eq - t.ptr) : t.len);
    term->value = eq ? trim((const char *)eq + 1, t.len - (size_t)(eq - t.ptr) - 1) : (sift_str_t){NULL, 0};
  }
  return n_terms ? sift_proceed() : sift_skip();
}

static bool same(const sift_str_t *a, const sift_str_t *b) {
  return a->len == b->len && (a->len == 0 || memcmp(a->ptr, b->ptr, a->len) == 0);
}

static const sift_status_t *score(const sift_pod_t *pod, const sift_node_t *node, int64_t *out) {
  (void)pod;
  for (size_t t = 0; t < n_terms; t++) {
    for (size_t l = 0; l < node->labels.len; l++) {
      const sift_label_t *label = &node->labels.ptr[l];
      if (same(&label->key, &terms[t].key)) {
        *out += terms[t].any_value || same(&label->value, &terms[t].value);
        break;
      }
    }
  }
  return NULL;
}

static const sift_status_t *normalize_scores(const sift_pod_t *pod, int64_t *scores, size_t n) {
  (void)pod;
  sift_default_normalize(scores, n, false);
  return NULL;
}

const sift_plugin_t sift_plugin = {
    .name = "LabelMatch",
    .extension_points = SIFT_SCORE,
    .node_fields = SIFT_FIELD_LABELS,
    .pre_score = pre_score,
    .score = score,
    .normalize_scores = normalize_scores,
};
