// sift's C SDK: the exports of world sift:predicate/plugin@0.7.0 over
// wit-bindgen's C bindings (sift.h says what a plugin sees).
//
// Ownership, as the bindings define it: every argument is the callee's,
// freed here once read unless kept (nodes, placements, groups, namespaces,
// objects and the current pods move into the tables below, and are freed
// when removed or replaced); every result is malloc'd here and freed by the
// bindings' post-return, which frees nothing of an empty list or string, so
// those are never allocated. A zero-length argument's pointer is not from
// malloc either: only the bindings' *_free functions, which check lengths,
// or free_array below release arguments.

#include "sift.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef sift_predicate_types_status_t wit_status_t;

// Slots above this are refused: the host numbers nodes from 0, so a larger
// slot is a host bug, and growing the table to it would exhaust memory.
#define MAX_SLOT (1u << 20)

// --- memory --------------------------------------------------------------

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (p == NULL) abort();
  return p;
}

static void *xrealloc(void *p, size_t n) {
  p = realloc(p, n ? n : 1);
  if (p == NULL) abort();
  return p;
}

// Frees a list argument's array (not its elements): only a non-empty one
// was allocated.
static void free_array(void *ptr, size_t len) {
  if (len > 0) free(ptr);
}

// A malloc'd copy of n bytes as a result string (none when empty).
static sift_str_t str_copy(const void *p, size_t n) {
  sift_str_t s = {NULL, 0};
  if (n > 0) {
    s.ptr = xmalloc(n);
    memcpy(s.ptr, p, n);
    s.len = n;
  }
  return s;
}

static sift_str_t cstr_copy(const char *text) { return str_copy(text, text ? strlen(text) : 0); }

static bool str_same(const sift_str_t *a, const sift_str_t *b) {
  return a->len == b->len && (a->len == 0 || memcmp(a->ptr, b->ptr, a->len) == 0);
}

// --- strings, labels, scores ---------------------------------------------

bool sift_eq(const sift_str_t *s, const char *text) {
  size_t n = strlen(text);
  return s->len == n && (n == 0 || memcmp(s->ptr, text, n) == 0);
}

const sift_str_t *sift_label(const sift_labels_t *labels, const char *key) {
  size_t n = strlen(key);  // once, not per label: filters call this per node
  for (size_t i = 0; i < labels->len; i++) {
    const sift_str_t *k = &labels->ptr[i].key;
    if (k->len == n && (n == 0 || memcmp(k->ptr, key, n) == 0)) return &labels->ptr[i].value;
  }
  return NULL;
}

bool sift_label_is(const sift_labels_t *labels, const char *key, const char *value) {
  const sift_str_t *v = sift_label(labels, key);
  return v != NULL && sift_eq(v, value);
}

int64_t sift_scalar(const sift_resources_t *resources, const char *name) {
  for (size_t i = 0; i < resources->scalar.len; i++) {
    if (sift_eq(&resources->scalar.ptr[i].name, name)) return resources->scalar.ptr[i].amount;
  }
  return 0;
}

void sift_default_normalize(int64_t *scores, size_t n, bool reverse) {
  int64_t top = 0;
  for (size_t i = 0; i < n; i++) {
    if (scores[i] > top) top = scores[i];
  }
  if (top == 0) {
    if (reverse) {
      for (size_t i = 0; i < n; i++) scores[i] = SIFT_MAX_NODE_SCORE;
    }
    return;
  }
  for (size_t i = 0; i < n; i++) {
    int64_t s = SIFT_MAX_NODE_SCORE * scores[i] / top;
    scores[i] = reverse ? SIFT_MAX_NODE_SCORE - s : s;
  }
}

void sift_annotate(sift_reservation_t *out, const char *key, const char *value) {
  sift_predicate_types_list_label_t *l = &out->annotations;
  l->ptr = xrealloc(l->ptr, (l->len + 1) * sizeof *l->ptr);
  l->ptr[l->len++] = (sift_label_t){cstr_copy(key), cstr_copy(value)};
}

void sift_write(sift_reservation_t *out, const char *kind, const char *object) {
  sift_predicate_types_list_object_write_t *l = &out->writes;
  l->ptr = xrealloc(l->ptr, (l->len + 1) * sizeof *l->ptr);
  l->ptr[l->len++] = (sift_predicate_types_object_write_t){cstr_copy(kind), cstr_copy(object)};
}

// --- statuses ------------------------------------------------------------

static char status_text[1024];
static sift_status_t status_buf;

const sift_status_t *sift_statusf(sift_code_t code, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  vsnprintf(status_text, sizeof status_text, format, ap);
  va_end(ap);
  status_buf = (sift_status_t){code, status_text, false};
  return &status_buf;
}

// The SDK's own messages, in a buffer of their own: a status the plugin
// made with sift_statusf must survive them.
static char sdk_text[256];
static sift_status_t sdk_status;

// Appends text and then n in decimal at *at in sdk_text, as far as it
// fits. Without printf, which a plugin that does not use it should not
// carry (~50 KiB).
static void append(size_t *at, const char *text, uint32_t n, bool number) {
  char digits[10], *d = digits + sizeof digits;
  size_t len = strlen(text);
  if (*at + len < sizeof sdk_text) memcpy(sdk_text + *at, text, len), *at += len;
  if (number) {
    do *--d = (char)('0' + n % 10); while (n /= 10);
    size_t nd = (size_t)(digits + sizeof digits - d);
    if (*at + nd < sizeof sdk_text) memcpy(sdk_text + *at, d, nd), *at += nd;
  }
  sdk_text[*at] = '\0';
}

// The SDK's own errors, worded like the Go SDK's.
static const sift_status_t *slot_error(const char *what, uint32_t slot) {
  size_t at = 0;
  append(&at, what, 0, false);
  append(&at, ": node slot ", slot, true);
  append(&at, " was never synced", 0, false);
  sdk_status = (sift_status_t){SIFT_CODE_ERROR, sdk_text, false};
  return &sdk_status;
}

static const sift_status_t UNPREPARED = SIFT_ERROR("filter called without a prepared pod");

// A result copy of s (NULL: success).
static wit_status_t put_status(const sift_status_t *s) {
  wit_status_t out = {SIFT_CODE_SUCCESS, {NULL, 0}};
  if (s == NULL) return out;
  out.code = (sift_predicate_types_code_t)s->code;
  if (s->code != SIFT_CODE_ERROR && s->code != SIFT_CODE_UNSCHEDULABLE && s->code != SIFT_CODE_UNRESOLVABLE &&
      s->code != SIFT_CODE_SUCCESS) {
    // Skip, or no code at all: only the host may send those.
    static const sift_status_t BAD_CODE = SIFT_ERROR("the plugin returned a status with a code only the host uses");
    s = &BAD_CODE;
    out.code = SIFT_PREDICATE_TYPES_CODE_ERROR;
  }
  if (s->reason != NULL) {
    out.reasons.ptr = xmalloc(sizeof *out.reasons.ptr);
    out.reasons.ptr[0] = cstr_copy(s->reason);
    out.reasons.len = 1;
  }
  return out;
}

// Whether a status already sent says what s says: one pass over the text
// sent, no strlen of s's.
static bool same_status(const wit_status_t *sent, const sift_status_t *s) {
  if (sent->code != (sift_predicate_types_code_t)s->code) return false;
  if (s->reason == NULL) return sent->reasons.len == 0;
  if (sent->reasons.len != 1) return false;
  const sift_str_t *r = &sent->reasons.ptr[0];
  return (r->len == 0 || strncmp((const char *)r->ptr, s->reason, r->len) == 0) && s->reason[r->len] == '\0';
}

static bool failed(const sift_status_t *s) { return s != NULL && s->code != SIFT_CODE_SUCCESS; }

// --- logging -------------------------------------------------------------

static void log_text(sift_level_t level, const char *text) {
  sift_str_t message = {(uint8_t *)text, strlen(text)};  // borrowed by the import
  sift_predicate_log_log((sift_predicate_log_level_t)level, &message);
}

void sift_log(sift_level_t level, const char *format, ...) {
  char small[512];
  va_list ap;
  va_start(ap, format);
  int n = vsnprintf(small, sizeof small, format, ap);
  va_end(ap);
  if (n < 0) return;
  char *text = small;
  if ((size_t)n >= sizeof small) {  // long: format again into the heap
    text = xmalloc((size_t)n + 1);
    va_start(ap, format);
    vsnprintf(text, (size_t)n + 1, format, ap);
    va_end(ap);
  }
  log_text(level, text);
  if (text != small) free(text);
}

// --- the node table and the cluster view ---------------------------------

typedef struct {
  bool present;
  sift_node_t node;
  sift_group_counts_t pods;  // the placement; empty when none
} slot_t;

static slot_t *slots;
static uint32_t slots_len;  // one past the highest slot ever synced

static sift_pod_group_t *groups;  // sorted by id
static size_t groups_len, groups_cap;

static sift_predicate_types_namespace_t *namespaces;
static size_t namespaces_len, namespaces_cap;

typedef struct {
  sift_str_t kind;
  sift_predicate_types_cluster_object_t *objects;
  size_t len, cap;
} kind_t;
static kind_t *kinds;
static size_t kinds_len;

static slot_t *slot_at(uint32_t slot) { return slot < slots_len ? &slots[slot] : NULL; }

// The slot, the table grown to hold it; NULL when beyond MAX_SLOT.
static slot_t *slot_grow(uint32_t slot) {
  if (slot >= MAX_SLOT) {
    size_t at = 0;
    append(&at, "sift C SDK: ignored node slot ", slot, true);
    append(&at, ": beyond the table's limit", 0, false);
    log_text(SIFT_LOG_ERROR, sdk_text);
    return NULL;
  }
  if (slot >= slots_len) {
    uint32_t len = slots_len ? slots_len : 64;
    while (len <= slot) len *= 2;
    slots = xrealloc(slots, len * sizeof *slots);
    memset(slots + slots_len, 0, (len - slots_len) * sizeof *slots);
    slots_len = len;
  }
  return &slots[slot];
}

const sift_node_t *sift_node(uint32_t slot) {
  slot_t *s = slot_at(slot);
  return s && s->present ? &s->node : NULL;
}

uint32_t sift_slot_end(void) { return slots_len; }

const sift_node_t *sift_node_named(const char *name) {
  for (uint32_t i = 0; i < slots_len; i++) {
    if (slots[i].present && sift_eq(&slots[i].node.name, name)) return &slots[i].node;
  }
  return NULL;
}

const sift_group_counts_t *sift_pods_on(uint32_t slot) {
  slot_t *s = slot_at(slot);
  return s && s->pods.len > 0 ? &s->pods : NULL;
}

// Where id is in groups, or where it would go.
static size_t group_pos(uint64_t id) {
  size_t lo = 0, hi = groups_len;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (groups[mid].id < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const sift_pod_group_t *sift_group(uint64_t id) {
  size_t i = group_pos(id);
  return i < groups_len && groups[i].id == id ? &groups[i] : NULL;
}

static sift_predicate_types_namespace_t *namespace_find(const sift_str_t *name) {
  for (size_t i = 0; i < namespaces_len; i++) {
    if (str_same(&namespaces[i].name, name)) return &namespaces[i];
  }
  return NULL;
}

const sift_labels_t *sift_namespace_labels(const char *name) {
  sift_str_t n = {(uint8_t *)name, strlen(name)};
  sift_predicate_types_namespace_t *ns = namespace_find(&n);
  return ns ? &ns->labels : NULL;
}

static kind_t *kind_find(const sift_str_t *kind) {
  for (size_t i = 0; i < kinds_len; i++) {
    if (str_same(&kinds[i].kind, kind)) return &kinds[i];
  }
  return NULL;
}

static sift_predicate_types_cluster_object_t *object_find(kind_t *k, const sift_str_t *key) {
  for (size_t i = 0; i < k->len; i++) {
    if (str_same(&k->objects[i].key, key)) return &k->objects[i];
  }
  return NULL;
}

const sift_str_t *sift_object(const char *kind, const char *key) {
  sift_str_t kn = {(uint8_t *)kind, strlen(kind)}, kk = {(uint8_t *)key, strlen(key)};
  kind_t *k = kind_find(&kn);
  sift_predicate_types_cluster_object_t *o = k ? object_find(k, &kk) : NULL;
  return o ? &o->object : NULL;
}

// --- describe, init ------------------------------------------------------

static uint8_t extension_points;

static plugin_list_string_t put_strings(const char *const *texts) {
  plugin_list_string_t l = {NULL, 0};
  size_t n = 0;
  while (texts != NULL && texts[n] != NULL) n++;
  if (n > 0) {
    l.ptr = xmalloc(n * sizeof *l.ptr);
    for (size_t i = 0; i < n; i++) l.ptr[i] = cstr_copy(texts[i]);
    l.len = n;
  }
  return l;
}

void exports_sift_predicate_predicate_describe(exports_sift_predicate_predicate_plugin_info_t *ret) {
  extension_points = sift_plugin.extension_points ? sift_plugin.extension_points : SIFT_FILTER;
  ret->name = cstr_copy(sift_plugin.name);
  ret->node_fields = sift_plugin.node_fields ? sift_plugin.node_fields : SIFT_FIELDS_CHEAP;
  ret->cluster = sift_plugin.cluster;
  ret->pod_object = sift_plugin.pod_object;
  ret->extension_points = extension_points;
  ret->pod_annotation_keys = put_strings(sift_plugin.pod_annotation_keys);
  ret->object_kinds = put_strings(sift_plugin.object_kinds);
}

bool exports_sift_predicate_predicate_init(sift_str_t *args, sift_str_t *err) {
  const char *msg = NULL;
  if (sift_plugin.init != NULL) {
    char *text = xmalloc(args->len + 1);  // NUL-terminated for C
    if (args->len > 0) memcpy(text, args->ptr, args->len);
    text[args->len] = '\0';
    msg = sift_plugin.init(text);
    free(text);
  }
  plugin_string_free(args);
  if (msg == NULL) return true;
  *err = cstr_copy(msg);
  if (err->len == 0) *err = cstr_copy("init failed");  // the host shows it: never empty
  return false;
}

// --- syncs ---------------------------------------------------------------

static void slot_clear(slot_t *s) {
  if (s->present) sift_predicate_types_node_free(&s->node);
  sift_predicate_types_list_group_count_free(&s->pods);
  memset(s, 0, sizeof *s);
}

// Drops the labels sift_plugin.node_labels does not name.
static void keep_labels(sift_labels_t *labels) {
  if (sift_plugin.node_labels == NULL) return;
  size_t kept = 0;
  for (size_t i = 0; i < labels->len; i++) {
    bool keep = false;
    for (const char *const *k = sift_plugin.node_labels; *k != NULL && !keep; k++) {
      keep = sift_eq(&labels->ptr[i].key, *k);
    }
    if (keep) {
      labels->ptr[kept++] = labels->ptr[i];
    } else {
      sift_predicate_types_label_free(&labels->ptr[i]);
    }
  }
  // The bindings free a list's array only when it is not empty.
  if (kept == 0 && labels->len > 0) {
    free(labels->ptr);
    labels->ptr = NULL;
  }
  labels->len = kept;
}

void exports_sift_predicate_predicate_sync_nodes(exports_sift_predicate_predicate_list_node_entry_t *upserts,
                                                 plugin_list_u32_t *removals) {
  for (size_t i = 0; i < removals->len; i++) {
    slot_t *s = slot_at(removals->ptr[i]);
    if (s != NULL) slot_clear(s);
  }
  plugin_list_u32_free(removals);
  for (size_t i = 0; i < upserts->len; i++) {
    sift_predicate_types_node_entry_t *e = &upserts->ptr[i];
    slot_t *s = slot_grow(e->slot);
    if (s == NULL) {
      sift_predicate_types_node_free(&e->node);
      continue;
    }
    if (s->present) sift_predicate_types_node_free(&s->node);
    keep_labels(&e->node.labels);
    s->node = e->node;  // moved: the table owns it now
    s->present = true;
  }
  free_array(upserts->ptr, upserts->len);
}

static void group_free_at(size_t i) {
  sift_predicate_types_pod_group_free(&groups[i]);
  memmove(&groups[i], &groups[i + 1], (groups_len - i - 1) * sizeof *groups);
  groups_len--;
}

void exports_sift_predicate_predicate_sync_pod_groups(exports_sift_predicate_predicate_list_pod_group_t *upserts,
                                                      plugin_list_u64_t *removals) {
  for (size_t r = 0; r < removals->len; r++) {
    size_t i = group_pos(removals->ptr[r]);
    if (i < groups_len && groups[i].id == removals->ptr[r]) group_free_at(i);
  }
  plugin_list_u64_free(removals);
  for (size_t u = 0; u < upserts->len; u++) {
    sift_pod_group_t *g = &upserts->ptr[u];
    size_t i = group_pos(g->id);
    if (i < groups_len && groups[i].id == g->id) {
      sift_predicate_types_pod_group_free(&groups[i]);
    } else {
      if (groups_len == groups_cap) {
        groups_cap = groups_cap ? 2 * groups_cap : 64;
        groups = xrealloc(groups, groups_cap * sizeof *groups);
      }
      memmove(&groups[i + 1], &groups[i], (groups_len - i) * sizeof *groups);
      groups_len++;
    }
    groups[i] = *g;  // moved
  }
  free_array(upserts->ptr, upserts->len);
}

void exports_sift_predicate_predicate_sync_placements(exports_sift_predicate_predicate_list_placement_t *upserts) {
  for (size_t u = 0; u < upserts->len; u++) {
    sift_predicate_types_placement_t *p = &upserts->ptr[u];
    slot_t *s = slot_grow(p->slot);
    if (s == NULL) {
      sift_predicate_types_list_group_count_free(&p->groups);
      continue;
    }
    sift_predicate_types_list_group_count_free(&s->pods);
    s->pods = p->groups;  // moved
  }
  free_array(upserts->ptr, upserts->len);
}

void exports_sift_predicate_predicate_sync_namespaces(exports_sift_predicate_predicate_list_namespace_t *upserts,
                                                      plugin_list_string_t *removals) {
  for (size_t r = 0; r < removals->len; r++) {
    sift_predicate_types_namespace_t *ns = namespace_find(&removals->ptr[r]);
    if (ns != NULL) {
      sift_predicate_types_namespace_free(ns);
      *ns = namespaces[--namespaces_len];
    }
  }
  plugin_list_string_free(removals);
  for (size_t u = 0; u < upserts->len; u++) {
    sift_predicate_types_namespace_t *ns = namespace_find(&upserts->ptr[u].name);
    if (ns != NULL) {
      sift_predicate_types_namespace_free(ns);
    } else {
      if (namespaces_len == namespaces_cap) {
        namespaces_cap = namespaces_cap ? 2 * namespaces_cap : 16;
        namespaces = xrealloc(namespaces, namespaces_cap * sizeof *namespaces);
      }
      ns = &namespaces[namespaces_len++];
    }
    *ns = upserts->ptr[u];  // moved
  }
  free_array(upserts->ptr, upserts->len);
}

void exports_sift_predicate_predicate_sync_objects(sift_str_t *kind,
                                                   exports_sift_predicate_predicate_list_cluster_object_t *upserts,
                                                   plugin_list_string_t *removals) {
  kind_t *k = kind_find(kind);
  if (k == NULL) {
    kinds = xrealloc(kinds, (kinds_len + 1) * sizeof *kinds);
    k = &kinds[kinds_len++];
    *k = (kind_t){*kind, NULL, 0, 0};  // the name moved
  } else {
    plugin_string_free(kind);
  }
  for (size_t r = 0; r < removals->len; r++) {
    sift_predicate_types_cluster_object_t *o = object_find(k, &removals->ptr[r]);
    if (o != NULL) {
      sift_predicate_types_cluster_object_free(o);
      *o = k->objects[--k->len];
    }
  }
  plugin_list_string_free(removals);
  for (size_t u = 0; u < upserts->len; u++) {
    sift_predicate_types_cluster_object_t *o = object_find(k, &upserts->ptr[u].key);
    if (o != NULL) {
      sift_predicate_types_cluster_object_free(o);
    } else {
      if (k->len == k->cap) {
        k->cap = k->cap ? 2 * k->cap : 16;
        k->objects = xrealloc(k->objects, k->cap * sizeof *k->objects);
      }
      o = &k->objects[k->len++];
    }
    *o = upserts->ptr[u];  // moved
  }
  free_array(upserts->ptr, upserts->len);
}

// --- prepare, filter -----------------------------------------------------

// The pod prepare proceeded with (filtering), and the one pre_score
// proceeded with (scoring): owned until the next prepare or pre_score.
static sift_pod_t filter_pod, score_pod;
static bool filtering, scoring;

// Resolves the default (res NULL: proceed when the plugin implements point,
// skip otherwise) and refuses a reject without a status, as Go's settle.
static sift_prepared_t settle(const sift_prepared_t *res, uint8_t point, const sift_status_t *no_status) {
  if (res == NULL) return extension_points & point ? sift_proceed() : sift_skip();
  if (res->decision == SIFT_REJECT && res->status == NULL) return sift_reject(no_status);
  return *res;
}

void exports_sift_predicate_predicate_prepare(exports_sift_predicate_predicate_pod_t *pod,
                                              exports_sift_predicate_predicate_prepare_result_t *ret) {
  // Forget the previous pod first: a stray filter must not see it.
  if (filtering) sift_predicate_types_pod_free(&filter_pod);
  filtering = false;
  static const sift_status_t NO_STATUS = SIFT_ERROR("Prepare rejected the pod with a NULL status");
  sift_prepared_t res = {SIFT_PROCEED, NULL, NULL, 0};
  if (sift_plugin.prepare != NULL) res = sift_plugin.prepare(pod);
  res = settle(sift_plugin.prepare ? &res : NULL, SIFT_FILTER, &NO_STATUS);
  memset(ret, 0, sizeof *ret);
  switch (res.decision) {
  case SIFT_PROCEED:
    ret->tag = SIFT_PREDICATE_TYPES_PREPARE_RESULT_PROCEED;
    break;
  case SIFT_REJECT:
    ret->tag = SIFT_PREDICATE_TYPES_PREPARE_RESULT_REJECT;
    ret->val.reject = put_status(res.status);
    break;
  case SIFT_NARROW:
    ret->tag = SIFT_PREDICATE_TYPES_PREPARE_RESULT_NARROW;
    if (res.n_names > 0) {
      ret->val.narrow.ptr = xmalloc(res.n_names * sizeof *ret->val.narrow.ptr);
      for (size_t i = 0; i < res.n_names; i++) ret->val.narrow.ptr[i] = cstr_copy(res.names[i]);
      ret->val.narrow.len = res.n_names;
    }
    break;
  default:
    ret->tag = SIFT_PREDICATE_TYPES_PREPARE_RESULT_SKIP;
    break;
  }
  if (ret->tag == SIFT_PREDICATE_TYPES_PREPARE_RESULT_PROCEED || ret->tag == SIFT_PREDICATE_TYPES_PREPARE_RESULT_NARROW) {
    filter_pod = *pod;  // kept for filter
    filtering = true;
  } else {
    sift_predicate_types_pod_free(pod);
  }
}

static const sift_status_t *call_filter(const sift_node_t *node) {
  if (sift_plugin.filter == NULL) return NULL;
  return sift_plugin.filter(&filter_pod, node);
}

// One filter call's verdicts: each distinct status (code and text) is sent
// once and rejections point at it. The status of the previous rejection is
// checked first: by pointer alone when built by the macros (its code and
// literal unchanged), else by pointer and text (a buffer reused per node may
// hold new text); then each status of the batch by text.
typedef struct {
  exports_sift_predicate_predicate_verdicts_t *out;
  size_t slots, statuses_cap;
  const sift_status_t *last;
  sift_status_t last_seen;  // *last when it was met
  uint32_t last_at;
} batch_t;

static uint32_t batch_status(batch_t *b, const sift_status_t *s) {
  sift_predicate_types_list_status_t *l = &b->out->statuses;
  if (s == b->last) {
    if (s->literal && b->last_seen.literal && s->code == b->last_seen.code && s->reason == b->last_seen.reason) {
      return b->last_at;
    }
    if (same_status(&l->ptr[b->last_at], s)) return b->last_at;
  }
  size_t at = 0;
  while (at < l->len && !same_status(&l->ptr[at], s)) at++;
  if (at == l->len) {
    if (l->len == b->statuses_cap) {
      b->statuses_cap = b->statuses_cap ? 2 * b->statuses_cap : 4;
      l->ptr = xrealloc(l->ptr, b->statuses_cap * sizeof *l->ptr);
    }
    l->ptr[l->len++] = put_status(s);
  }
  b->last = s;
  b->last_seen = *s;
  b->last_at = (uint32_t)at;
  return (uint32_t)at;
}

static void batch_reject(batch_t *b, size_t i, const sift_status_t *s) {
  plugin_list_tuple2_u32_u32_t *r = &b->out->rejections;
  if (r->ptr == NULL) r->ptr = xmalloc(b->slots * sizeof *r->ptr);  // at most one per slot
  uint32_t at = batch_status(b, s);
  r->ptr[r->len++] = (plugin_tuple2_u32_u32_t){(uint32_t)i, at};
}

void exports_sift_predicate_predicate_filter(plugin_list_u32_t *slots_arg,
                                             exports_sift_predicate_predicate_verdicts_t *ret) {
  memset(ret, 0, sizeof *ret);
  batch_t b = {ret, slots_arg->len, 0, NULL, {0, NULL, false}, 0};
  for (size_t i = 0; i < slots_arg->len; i++) {
    const sift_node_t *node = sift_node(slots_arg->ptr[i]);
    const sift_status_t *s;
    if (!filtering) s = &UNPREPARED;
    else if (node == NULL) s = slot_error("filter", slots_arg->ptr[i]);
    else s = call_filter(node);
    if (failed(s)) batch_reject(&b, i, s);
  }
  plugin_list_u32_free(slots_arg);
}

// Adds a to the scalar resources in *l, a fresh array.
static void add_scalars(sift_predicate_types_list_resource_amount_t *l, size_t *cap,
                        const sift_predicate_types_list_resource_amount_t *a) {
  for (size_t j = 0; j < a->len; j++) {
    size_t i = 0;
    while (i < l->len && !str_same(&l->ptr[i].name, &a->ptr[j].name)) i++;
    if (i == l->len) {
      if (l->len == *cap) {
        *cap = *cap ? 2 * *cap : 8;
        l->ptr = xrealloc(l->ptr, *cap * sizeof *l->ptr);
      }
      l->ptr[l->len++] = (sift_predicate_types_resource_amount_t){a->ptr[j].name, 0};  // name borrowed
    }
    l->ptr[i].amount += a->ptr[j].amount;
  }
}

void exports_sift_predicate_predicate_filter_nominated(uint32_t slot,
                                                       exports_sift_predicate_predicate_list_nominated_pod_t *added,
                                                       exports_sift_predicate_predicate_status_t *ret) {
  const sift_node_t *node = sift_node(slot);
  const sift_status_t *s;
  if (!filtering) {
    s = &UNPREPARED;
  } else if (node == NULL) {
    s = slot_error("filter", slot);
  } else {
    // A shallow copy whose requested resources, ports and pod count have
    // the nominated pods added; the arrays are fresh, their strings
    // borrowed from the node and from added.
    sift_node_t with = *node;
    size_t scalar_cap = 0, ports = node->used_ports.len;
    with.requested.scalar = (sift_predicate_types_list_resource_amount_t){NULL, 0};
    add_scalars(&with.requested.scalar, &scalar_cap, &node->requested.scalar);
    for (size_t i = 0; i < added->len; i++) ports += added->ptr[i].host_ports.len;
    with.used_ports.ptr = ports ? xmalloc(ports * sizeof *with.used_ports.ptr) : NULL;
    with.used_ports.len = 0;
    for (size_t i = 0; i < node->used_ports.len; i++) with.used_ports.ptr[with.used_ports.len++] = node->used_ports.ptr[i];
    for (size_t i = 0; i < added->len; i++) {
      const sift_predicate_types_nominated_pod_t *p = &added->ptr[i];
      with.requested.milli_cpu += p->requests.milli_cpu;
      with.requested.memory += p->requests.memory;
      with.requested.ephemeral_storage += p->requests.ephemeral_storage;
      add_scalars(&with.requested.scalar, &scalar_cap, &p->requests.scalar);
      for (size_t j = 0; j < p->host_ports.len; j++) with.used_ports.ptr[with.used_ports.len++] = p->host_ports.ptr[j];
      with.pod_count++;
    }
    s = call_filter(&with);
    *ret = put_status(failed(s) ? s : NULL);  // copied before what it may point into is freed
    free(with.requested.scalar.ptr);
    free(with.used_ports.ptr);
    exports_sift_predicate_predicate_list_nominated_pod_free(added);
    return;
  }
  *ret = put_status(s);
  exports_sift_predicate_predicate_list_nominated_pod_free(added);
}

// --- scorer --------------------------------------------------------------

static const sift_node_t **score_nodes;  // pre_score's argument, reused
static size_t score_nodes_cap;

void exports_sift_predicate_scorer_pre_score(exports_sift_predicate_scorer_pod_t *pod, plugin_list_u32_t *feasible,
                                             exports_sift_predicate_scorer_pre_score_result_t *ret) {
  static const sift_status_t NARROW = SIFT_ERROR("PreScore cannot narrow");
  static const sift_status_t NO_STATUS = SIFT_ERROR("PreScore rejected the pod with a NULL status");
  if (scoring) sift_predicate_types_pod_free(&score_pod);
  scoring = false;
  sift_prepared_t res = {SIFT_PROCEED, NULL, NULL, 0};
  bool known = true;
  if (feasible->len > score_nodes_cap) {
    score_nodes_cap = feasible->len;
    score_nodes = xrealloc(score_nodes, score_nodes_cap * sizeof *score_nodes);
  }
  for (size_t i = 0; i < feasible->len && known; i++) {
    score_nodes[i] = sift_node(feasible->ptr[i]);
    if (score_nodes[i] == NULL) {
      res = sift_reject(slot_error("pre-score", feasible->ptr[i]));
      known = false;
    }
  }
  if (known) {
    if (sift_plugin.pre_score != NULL) res = sift_plugin.pre_score(pod, score_nodes, feasible->len);
    res = settle(sift_plugin.pre_score ? &res : NULL, SIFT_SCORE, &NO_STATUS);
  }
  if (res.decision == SIFT_NARROW) res = sift_reject(&NARROW);
  plugin_list_u32_free(feasible);
  memset(ret, 0, sizeof *ret);
  if (res.decision == SIFT_PROCEED) {
    ret->tag = SIFT_PREDICATE_TYPES_PRE_SCORE_RESULT_PROCEED;
    score_pod = *pod;  // kept for score and normalize_scores
    scoring = true;
    return;
  }
  if (res.decision == SIFT_SKIP) {
    ret->tag = SIFT_PREDICATE_TYPES_PRE_SCORE_RESULT_SKIP;
  } else {
    static const sift_status_t UNDECIDED = SIFT_ERROR("PreScore decided neither to proceed, skip nor reject");
    ret->tag = SIFT_PREDICATE_TYPES_PRE_SCORE_RESULT_ERROR;
    ret->val.error = put_status(res.decision == SIFT_REJECT && res.status ? res.status : &UNDECIDED);
  }
  sift_predicate_types_pod_free(pod);
}

bool exports_sift_predicate_scorer_score(plugin_list_u32_t *slots_arg, plugin_list_s64_t *ret,
                                         exports_sift_predicate_scorer_status_t *err) {
  static const sift_status_t UNSCORED = SIFT_ERROR("score called without a pre-scored pod");
  const sift_status_t *s = scoring ? NULL : &UNSCORED;
  *ret = (plugin_list_s64_t){NULL, 0};
  if (s == NULL && slots_arg->len > 0) {
    ret->ptr = xmalloc(slots_arg->len * sizeof *ret->ptr);
    ret->len = slots_arg->len;
    for (size_t i = 0; i < slots_arg->len && s == NULL; i++) {
      const sift_node_t *node = sift_node(slots_arg->ptr[i]);
      ret->ptr[i] = 0;
      if (node == NULL) s = slot_error("score", slots_arg->ptr[i]);
      else if (sift_plugin.score != NULL && !failed(s = sift_plugin.score(&score_pod, node, &ret->ptr[i]))) s = NULL;
    }
  }
  plugin_list_u32_free(slots_arg);
  if (s == NULL) return true;
  plugin_list_s64_free(ret);
  *err = put_status(s);
  return false;
}

bool exports_sift_predicate_scorer_normalize_scores(plugin_list_s64_t *scores, plugin_list_s64_t *ret,
                                                    exports_sift_predicate_scorer_status_t *err) {
  static const sift_status_t UNSCORED = SIFT_ERROR("normalize-scores called without a pre-scored pod");
  const sift_status_t *s = scoring ? NULL : &UNSCORED;
  if (s == NULL && sift_plugin.normalize_scores != NULL) {
    s = sift_plugin.normalize_scores(&score_pod, scores->ptr, scores->len);
  }
  if (!failed(s)) {
    *ret = *scores;  // normalized in place: the argument becomes the result
    return true;
  }
  plugin_list_s64_free(scores);
  *err = put_status(s);
  return false;
}

// --- reserver ------------------------------------------------------------

bool exports_sift_predicate_reserver_reserve(exports_sift_predicate_reserver_pod_t *pod, uint32_t slot,
                                             exports_sift_predicate_reserver_reservation_t *ret,
                                             exports_sift_predicate_reserver_status_t *err) {
  const sift_node_t *node = sift_node(slot);
  const sift_status_t *s = NULL;
  memset(ret, 0, sizeof *ret);
  if (node == NULL) s = slot_error("reserve", slot);
  else if (sift_plugin.reserve != NULL) s = sift_plugin.reserve(pod, node, ret);
  if (failed(s)) *err = put_status(s);
  sift_predicate_types_pod_free(pod);
  if (!failed(s)) return true;
  sift_predicate_types_reservation_free(ret);
  return false;
}
