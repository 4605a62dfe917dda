// sift's JavaScript SDK: a scheduler plugin is one object and one line.
//
//   import * as sift from "./sift.js";
//
//   export const { predicate, scorer, reserver } = sift.exportPlugin({
//     name: "AvoidTmp",
//     nodeFields: { labels: true },
//     filter(pod, state, node) {
//       if (node.labels["tier"] === "tmp") return sift.unresolvable("node(s) were tmp nodes");
//     },
//   });
//
// componentize-qjs builds the module into a component of sift's latest
// contract (wit/0.7.0, world `plugin`), whose exports are the module's
// `predicate`, `scorer` and `reserver`; `exportPlugin` makes them. This
// module keeps what the host syncs into the instance (the node table, the
// cluster view, the objects) and turns the contract's batched calls into
// one call per node, so a plugin sees Kubernetes concepts only, as with the
// Rust SDK's `Plugin` trait. Every member of the plugin object but `name`
// is optional:
//
// - a filter implements `filter(pod, state, node)`, returning nothing (the
//   node passes) or a status (`unschedulable`, `unresolvable`, `error`);
// - a scorer sets `extensionPoints: { score: true }` and implements
//   `score(pod, state, node)`, and `normalizeScores(pod, state, scores)`
//   when its raw scores are not in 0..100 (`defaultNormalize` is
//   kube-scheduler's);
// - a reserver (`reserve: true`) implements `reserve(pod, node)` (an object
//   of the annotations the assumed pod carries) and `preBind(pod, node)`
//   (the objects to write before the pod is bound, see `write`);
// - `init(args)` gets the configured arguments (an object) once; throw to
//   refuse them.
//
// `prepare(pod)` and `preScore(pod, nodes)` compute the per-pod `state`
// the other calls get (kube-scheduler's CycleState); return `sift.SKIP` to
// skip the pod, `sift.reject(status)` or `sift.narrow(names, state)` from
// `prepare`. By default a filter proceeds with state undefined, as a
// scorer does.
//
// Records are componentize-qjs's plain objects (camelCase keys), with one
// convenience: `labels`, `annotations` and `nodeSelector` are objects of
// key -> value. An exception thrown by a plugin method becomes an `error`
// status naming it (a thrown status is taken as it is), which the host
// reports, instead of a trap; so does a filter answer that is not a status
// and a score that is not a number. A status is sent as it was returned:
// build it once and do not change it afterwards. `filter` on a node with
// nominated pods (the host's first pass) sees their requests, ports and
// count added to the node; unlike the Rust SDK's `add_pods`, the state is
// not told of them.
//
// The sandbox grants nothing by default: no directory is preopened, so no
// file can be opened, and `Date.now()` reads 1970 (docs/plugin-authors.md).

import wlog from "sift:predicate/log@0.7.0";

/** kube-scheduler's framework.MaxNodeScore. */
export const MAX_NODE_SCORE = 100;

/** Returned from `prepare` or `preScore`: nothing to do for this pod. */
export const SKIP = Symbol("sift.SKIP");

const REJECT = Symbol("sift.reject");
const NONE = Symbol("none");
const NARROW = Symbol("sift.narrow");

/** From `prepare`: the pod fits nowhere; `status` says why. */
export const reject = (status) => ({ [REJECT]: status });
/** From `prepare`: only these nodes (by name) can pass; `state` is what
 * `filter` gets for them. */
export const narrow = (names, state) => ({ [NARROW]: [...names], state });

/** The node does not fit now, but could after preemption. */
export const unschedulable = (...reasons) => ({ code: "unschedulable", reasons });
/** The node does not fit, and preemption would not help. */
export const unresolvable = (...reasons) => ({ code: "unschedulable-and-unresolvable", reasons });
/** Something went wrong inside the plugin: the cycle is aborted. */
export const error = (message) => ({ code: "error", reasons: [String(message)] });

/** One line in the host's log, tagged with the plugin's name; `level`:
 * trace, debug, info, warn or error. */
export function log(message, level = "info") {
  wlog.log(level, String(message));
}

/** kube-scheduler's DefaultNormalizeScore: scale to 0..100 by the highest
 * score, at least 0 (integer division, truncating as Go's does); `reverse`
 * turns the scale over. With no positive score the scores stay as they
 * are (or become 100 each, reversed). */
export function defaultNormalize(scores, reverse = false) {
  const top = scores.reduce((m, s) => (s > m ? s : m), 0);
  if (top === 0) return reverse ? scores.map(() => MAX_NODE_SCORE) : [...scores];
  return scores.map((s) => {
    const n = Math.trunc((s * MAX_NODE_SCORE) / top);
    return reverse ? MAX_NODE_SCORE - n : n;
  });
}

/** An object write for `preBind`: `obj` is the whole object, an object or
 * JSON text. */
export const write = (kind, obj) => ({
  kind,
  object: typeof obj === "string" ? obj : JSON.stringify(obj),
});

// What the Rust SDK's NodeFields::ALL holds: everything but the costly
// fields (the whole object, images, volumes, declared features).
const ALL_NODE_FIELDS = {
  labels: true, taints: true, unschedulable: true, resources: true,
  ports: true, annotations: true, conditions: true,
};

function asObject(pairs) {
  const out = Object.create(null);
  for (const { key, value } of pairs) out[key] = value;
  return out;
}

function decodePod(pod) {
  pod.labels = asObject(pod.labels);
  pod.annotations = asObject(pod.annotations);
  pod.nodeSelector = asObject(pod.nodeSelector);
  return pod;
}

/** Whether `v` is a status: `{ code, reasons }`. */
const isStatus = (v) => v !== null && typeof v === "object" && typeof v.code === "string" && Array.isArray(v.reasons);

function describeValue(v) {
  try {
    return typeof v === "symbol" ? v.description ?? "a symbol" : String(v);
  } catch {
    return typeof v;
  }
}

/** An exception from a plugin method as the status the host gets: a
 * thrown status as it is, anything else as an Error naming the method. */
function failed(what, e) {
  if (isStatus(e)) return e;
  return error(`${what}: ${e instanceof Error ? `${e.name}: ${e.message}` : describeValue(e)}`);
}

/** A filter's answer that is neither nothing nor a status. */
const notStatus = (v) => error(`filter returned ${describeValue(v)}, not a status`);

/** The node with nominated pods placed on it: their requests, ports and
 * count added (as the Rust SDK's `Node::add_pod`). */
function withPods(node, added) {
  const r = node.requested;
  const scalar = new Map(r.scalar.map((s) => [s.name, s.amount]));
  const requested = { ...r };
  const usedPorts = [...node.usedPorts];
  for (const a of added) {
    requested.milliCpu += a.requests.milliCpu;
    requested.memory += a.requests.memory;
    requested.ephemeralStorage += a.requests.ephemeralStorage;
    for (const s of a.requests.scalar) scalar.set(s.name, (scalar.get(s.name) ?? 0) + s.amount);
    usedPorts.push(...a.hostPorts);
  }
  requested.scalar = [...scalar].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, amount]) => ({ name, amount }));
  return { ...node, requested, usedPorts, podCount: node.podCount + added.length };
}

/** `scores` as the host takes them (s64): finite numbers, truncated to
 * integers (as Python's `int` does), in the range a JavaScript number holds
 * exactly; anything else is an Error status naming `what`. */
function checkedScores(what, scores) {
  const out = new Array(scores.length);
  for (let i = 0; i < scores.length; i++) {
    const v = typeof scores[i] === "number" ? Math.trunc(scores[i]) : NaN;
    if (!Number.isSafeInteger(v)) {
      throw error(`${what} returned ${describeValue(scores[i])} for node ${i}, not a number`);
    }
    out[i] = v;
  }
  return out;
}

/** The `predicate`, `scorer` and `reserver` exports for `plugin`. */
export function exportPlugin(plugin) {
  if (!plugin || typeof plugin.name !== "string" || plugin.name === "") {
    throw new TypeError("sift.exportPlugin takes an object with a `name`");
  }
  const points = { filter: false, score: false, reserve: false, ...(plugin.extensionPoints ?? { filter: true }) };
  // Slot -> node. Kept dense (no holes, no `delete`): QuickJS turns an
  // array with holes into a slower property map for good.
  const nodes = [];
  const cluster = {
    nodes,
    groups: new Map(),
    placements: new Map(),
    namespaces: new Map(),
    /** kind -> Map of key -> JSON text. */
    objects: new Map(),
    /** The object of `kind` at `key`, parsed; undefined when absent. */
    object(kind, key) {
      const text = this.objects.get(kind)?.get(key);
      return text === undefined ? undefined : JSON.parse(text);
    },
    node(name) {
      return nodes.find((n) => n && n.name === name);
    },
  };
  plugin.cluster = cluster;
  let ready = false;
  // [pod, state] of the filter cycle, and of the scoring one.
  let filtering = null;
  let scoring = null;
  // Bound once: these run per node, where QuickJS feels every
  // allocation (a spread, a closure).
  const filterNode = plugin.filter ? plugin.filter.bind(plugin) : () => undefined;
  const scoreNode = plugin.score ? plugin.score.bind(plugin) : () => 0;

  // One node's verdict with nominated pods added (filter's loop inlines
  // the same steps without them).
  const verdict = (slot, added) => {
    if (!ready || filtering === null) return error("filter called without a prepared pod");
    let node = nodes[slot];
    if (!node) return error(`node slot ${slot} was never synced`);
    if (added.length) node = withPods(node, added);
    let status;
    try {
      status = filterNode(filtering[0], filtering[1], node);
    } catch (e) {
      return failed("filter", e);
    }
    if (status === undefined || status === null) return status;
    return isStatus(status) ? status : notStatus(status);
  };

  const predicate = {
    describe() {
      return {
        name: plugin.name,
        nodeFields: plugin.nodeFields ?? ALL_NODE_FIELDS,
        cluster: Boolean(plugin.readsCluster),
        podObject: Boolean(plugin.podObject),
        extensionPoints: points,
        podAnnotationKeys: [...(plugin.podAnnotationKeys ?? [])],
        objectKinds: [...(plugin.objectKinds ?? [])],
      };
    },
    init(text) {
      let args;
      try {
        args = text.trim() === "" ? {} : JSON.parse(text);
      } catch (e) {
        throw `plugin arguments are not valid JSON: ${e.message}`;
      }
      if (args === null) args = {};
      if (typeof args !== "object" || Array.isArray(args)) {
        throw `plugin arguments must be an object, got ${text}`;
      }
      try {
        if (plugin.init) plugin.init(args);
      } catch (e) {
        throw e instanceof Error ? `${e.name}: ${e.message}` : String(e);
      }
      ready = true;
    },
    syncNodes(upserts, removals) {
      for (const slot of removals) {
        if (slot < nodes.length) nodes[slot] = null;
        cluster.placements.delete(slot);
      }
      for (const { slot, node } of upserts) {
        node.labels = asObject(node.labels);
        node.annotations = asObject(node.annotations);
        while (nodes.length < slot) nodes.push(null);
        nodes[slot] = node;
      }
    },
    syncPodGroups(upserts, removals) {
      for (const id of removals) cluster.groups.delete(id);
      for (const g of upserts) {
        g.labels = asObject(g.labels);
        cluster.groups.set(g.id, g);
      }
    },
    syncPlacements(upserts) {
      for (const p of upserts) cluster.placements.set(p.slot, p.groups);
    },
    syncNamespaces(upserts, removals) {
      for (const name of removals) cluster.namespaces.delete(name);
      for (const ns of upserts) cluster.namespaces.set(ns.name, asObject(ns.labels));
    },
    syncObjects(kind, upserts, removals) {
      if (!cluster.objects.has(kind)) cluster.objects.set(kind, new Map());
      const table = cluster.objects.get(kind);
      for (const key of removals) table.delete(key);
      for (const o of upserts) table.set(o.key, o.object);
    },
    prepare(pod) {
      // Forget the previous pod first: a stray filter call must not see it.
      filtering = null;
      if (!ready) return { tag: "reject", val: error("prepare called before init") };
      pod = decodePod(pod);
      let state;
      try {
        state = plugin.prepare ? plugin.prepare(pod) : points.filter ? undefined : SKIP;
      } catch (e) {
        return { tag: "reject", val: failed("prepare", e) };
      }
      if (state === SKIP) return { tag: "skip" };
      if (state && state[REJECT]) return { tag: "reject", val: state[REJECT] };
      if (state && state[NARROW]) {
        filtering = [pod, state.state];
        return { tag: "narrow", val: state[NARROW] };
      }
      filtering = [pod, state];
      return { tag: "proceed" };
    },
    filter(slots) {
      // Each distinct status is sent once; rejections point at it. A
      // status built once and returned again (a module constant) is found
      // by identity, the last one without even a lookup; others by their
      // text.
      const statuses = [];
      const byObject = new Map();
      const byText = new Map();
      const rejections = [];
      // Never returned by a plugin: `last` matches nothing until a
      // rejection sets it.
      let last = NONE;
      let lastAt = 0;
      const reject = (i, status) => {
        let at = byObject.get(status);
        if (at === undefined) {
          const key = `${status.code}\u0000${status.reasons.join("\u0000")}`;
          at = byText.get(key);
          if (at === undefined) {
            at = statuses.length;
            byText.set(key, at);
            statuses.push(status);
          }
          byObject.set(status, at);
        }
        last = status;
        lastAt = at;
        rejections.push([i, at]);
      };
      if (!ready || filtering === null) {
        const status = error("filter called without a prepared pod");
        for (let i = 0; i < slots.length; i++) reject(i, status);
        return { statuses, rejections };
      }
      const [pod, state] = filtering;
      // One try around the loop, not one per node (QuickJS pays for each):
      // a node whose filter throws gets an Error status and the loop goes
      // on after it.
      let i = 0;
      while (i < slots.length) {
        try {
          for (; i < slots.length; i++) {
            const node = nodes[slots[i]];
            const status = node ? filterNode(pod, state, node)
              : error(`node slot ${slots[i]} was never synced`);
            if (status === last) rejections.push([i, lastAt]);
            else if (status === undefined || status === null) continue;
            else if (!isStatus(status)) reject(i, notStatus(status));
            else if (status.code !== "success") reject(i, status);
          }
        } catch (e) {
          reject(i, failed("filter", e));
          i++;
        }
      }
      return { statuses, rejections };
    },
    filterNominated(slot, added) {
      return verdict(slot, added) || { code: "success", reasons: [] };
    },
  };

  const scorer = {
    preScore(pod, feasible) {
      scoring = null;
      if (!ready) return { tag: "error", val: error("pre-score called before init") };
      pod = decodePod(pod);
      let state;
      try {
        if (plugin.preScore) {
          const fed = new Array(feasible.length);
          for (let i = 0; i < feasible.length; i++) {
            fed[i] = nodes[feasible[i]];
            if (!fed[i]) return { tag: "error", val: error(`node slot ${feasible[i]} was never synced`) };
          }
          state = plugin.preScore(pod, fed);
        } else {
          state = points.score ? undefined : SKIP;
        }
      } catch (e) {
        return { tag: "error", val: failed("preScore", e) };
      }
      if (state === SKIP) return { tag: "skip" };
      scoring = [pod, state];
      return { tag: "proceed" };
    },
    score(slots) {
      if (scoring === null) throw error("score called without a pre-scored pod");
      const [pod, state] = scoring;
      const out = new Array(slots.length);
      for (let i = 0; i < slots.length; i++) {
        if (!nodes[slots[i]]) throw error(`node slot ${slots[i]} was never synced`);
      }
      // One try around the loop (QuickJS pays for each): any exception
      // fails the whole call.
      try {
        for (let i = 0; i < slots.length; i++) {
          out[i] = scoreNode(pod, state, nodes[slots[i]]);
        }
      } catch (e) {
        throw failed("score", e);
      }
      return checkedScores("score", out);
    },
    normalizeScores(scores) {
      if (scoring === null) throw error("normalize-scores called without a pre-scored pod");
      // Scores in range already: nothing to do, and nothing to copy.
      if (!plugin.normalizeScores) return scores;
      let out;
      try {
        out = plugin.normalizeScores(scoring[0], scoring[1], [...scores]);
      } catch (e) {
        throw failed("normalizeScores", e);
      }
      if (!Array.isArray(out) || out.length !== scores.length) {
        throw error(`normalizeScores returned ${out?.length} scores for ${scores.length} nodes`);
      }
      return checkedScores("normalizeScores", out);
    },
  };

  const reserver = {
    reserve(pod, slot) {
      if (!ready) throw error("reserve called before init");
      const node = nodes[slot];
      if (!node) throw error(`node slot ${slot} was never synced`);
      pod = decodePod(pod);
      try {
        const annotations = (plugin.reserve && plugin.reserve(pod, node)) ?? {};
        const writes = (plugin.preBind && plugin.preBind(pod, node)) ?? [];
        if (!Array.isArray(writes) || !writes.every((w) => typeof w?.kind === "string" && typeof w?.object === "string")) {
          throw error("preBind must return a list of sift.write(kind, object)");
        }
        return {
          annotations: Object.entries(annotations).map(([key, value]) => ({ key, value: String(value) })),
          writes,
        };
      } catch (e) {
        throw failed("reserve", e);
      }
    },
  };

  return { predicate, scorer, reserver };
}
