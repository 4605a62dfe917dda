//! kube-scheduler's filter phase (`findNodesThatFitPod`): prepare steps in
//! order, then every node through the filters, in parallel, until enough
//! feasible nodes are found.
//!
//! Results are deterministic: nodes are evaluated in parallel in waves, but
//! committed in round-robin order, so a cycle gives exactly the outcome of
//! kube-scheduler with one worker (which node stops the search, which
//! statuses are recorded, where the next cycle starts), whatever the timing.

use crate::cluster::Snapshot;
use crate::cluster::nominated::NominatedPass;
use crate::config::{EngineOptions, check_parallelism};
use crate::engine::diagnosis::{Diagnosis, NodeStatus, plugin_name};
use crate::engine::extender::{Extender, pass_extenders};
use crate::engine::outcome::CycleOutcome;
use crate::engine::plugin::{BatchFilter, ConfiguredPlugin, Cycle, PrepareOutcome};
use crate::engine::sampling::num_feasible_nodes_to_find;
use anyhow::{Context, Result};

use sift_sdk::{Code, Pod, Status};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Which nodes a cycle considers.
enum Scope<'a> {
    /// Every node, sampled from this round-robin start (the scheduler's
    /// own cycle).
    Sampled { start: usize },
    /// Exactly these slots, each evaluated.
    Only(&'a [u32]),
}

/// A prepared plugin taking part in the filter step.
struct Active<'a> {
    /// Interned: every rejection names its plugin, without a refcount.
    name: &'static str,
    ignorable: bool,
    filter: Box<dyn BatchFilter + 'a>,
}

/// What the prepare steps decided for a cycle.
enum PreFilter<'a> {
    Proceed(PreFiltered<'a>),
    /// Every node gets this status; its message is the cycle's message.
    Rejected(NodeStatus),
    /// A plugin failed: the cycle is aborted with this error.
    Failed(String),
}

struct PreFiltered<'a> {
    /// Plugins whose filter runs, in order.
    active: Vec<Active<'a>>,
    /// The node names kept by narrowing, and the plugins that narrowed.
    narrowed: Option<(BTreeSet<String>, BTreeSet<String>)>,
}

/// Told about every plugin call, e.g. to export metrics.
pub trait CallObserver: Send + Sync {
    /// `point` is "PreFilter" or "Filter"; `ok` is false when the call
    /// failed (trap, deadline...), not when it rejected nodes.
    fn plugin_call(&self, plugin: &str, point: &'static str, ok: bool, elapsed: Duration);
}

/// The filter phase with its round-robin position.
pub struct Engine {
    plugins: Vec<ConfiguredPlugin>,
    /// Called after the filters in the scheduler's own cycles (not when
    /// sift answers as an extender itself), in order.
    extenders: Vec<Arc<dyn Extender>>,
    options: EngineOptions,
    observer: Option<Arc<dyn CallObserver>>,
    pool: rayon::ThreadPool,
    cores: usize,
    next_start_node_index: usize,
    /// The share of evaluated nodes recent sampled cycles found feasible
    /// (an average, as f32 bits): sizes a cycle's first wave. Only speed
    /// depends on it; which nodes are committed does not.
    feasibility: AtomicU32,
}

/// The smallest wave.
const MIN_CHUNK: usize = 64;

/// Nodes per task below which a wave is not split: each task needs its own
/// plugin instances prepared for the pod (a Wasm component replays its
/// `prepare` on each), which costs about as much as filtering several
/// hundred nodes. With 64, a second thread made default sampling at 5,000
/// nodes (~1,000 nodes per cycle) slower for Wasm (BENCHMARKS.md).
const MIN_TASK_NODES: usize = 1024;

impl Engine {
    pub fn new(plugins: Vec<ConfiguredPlugin>, options: EngineOptions) -> Result<Engine> {
        check_parallelism(options.parallelism).context("parallelism")?;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        // A wave is split over at most min(parallelism, cores) tasks, so
        // more threads than that only idle: rayon's idle workers spin in
        // sched_yield, which took 30% of the native filter phase on 2 cores
        // with 16 threads (BENCHMARKS.md). kube-scheduler's parallelism
        // shows only in the order nodes are committed, which the round-robin
        // commit below reproduces whatever the thread count.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(options.parallelism.clamp(1, cores))
            .thread_name(|i| format!("sift-filter-{i}"))
            .build()
            .context("cannot start the filter worker threads")?;
        Ok(Engine {
            plugins,
            extenders: Vec::new(),
            options,
            observer: None,
            pool,
            cores,
            next_start_node_index: 0,
            feasibility: AtomicU32::new(1.0f32.to_bits()),
        })
    }

    /// Extenders to call after the filters, in order (kube-scheduler puts
    /// the ignorable ones last; the caller orders them).
    pub fn with_extenders(mut self, extenders: Vec<Arc<dyn Extender>>) -> Engine {
        self.extenders = extenders;
        self
    }

    pub fn extenders(&self) -> &[Arc<dyn Extender>] {
        &self.extenders
    }

    pub fn with_observer(mut self, observer: Arc<dyn CallObserver>) -> Engine {
        self.observer = Some(observer);
        self
    }

    pub fn options(&self) -> &EngineOptions {
        &self.options
    }

    pub fn plugins(&self) -> &[ConfiguredPlugin] {
        &self.plugins
    }

    /// Which whole objects (the escape hatch) any of its plugins reads.
    pub fn full_objects(&self) -> crate::input::kube::FullObjects {
        self.extenders
            .iter()
            .fold(full_objects(&self.plugins), |f, e| {
                f.union(e.full_objects())
            })
    }

    /// Pod annotation keys its plugins read on nodes (sorted, unique): the
    /// cluster state keeps those of bound pods.
    pub fn pod_annotation_keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self
            .plugins
            .iter()
            .flat_map(|c| c.plugin.pod_annotation_keys().iter().cloned())
            .collect();
        keys.sort();
        keys.dedup();
        keys
    }

    pub fn next_start_node_index(&self) -> usize {
        self.next_start_node_index
    }

    /// Runs one scheduling cycle's filter phase for `pod`, sampling from
    /// where the last cycle stopped.
    pub fn find_nodes_that_fit(&mut self, snapshot: &Arc<Snapshot>, pod: Pod) -> CycleOutcome {
        let scope = Scope::Sampled {
            start: self.next_start_node_index,
        };
        let out = self.cycle(&self.plugins, snapshot, pod, scope);
        self.next_start_node_index = out.next_start_node_index;
        out
    }

    /// Filters exactly `candidates` (slots of `snapshot`) with `plugins`,
    /// evaluating every one: how an extender answers, the scheduler having
    /// sampled already. Takes `&self`: cycles may run concurrently.
    pub fn filter_candidates(
        &self,
        plugins: &[ConfiguredPlugin],
        snapshot: &Arc<Snapshot>,
        pod: Pod,
        candidates: &[u32],
    ) -> CycleOutcome {
        self.cycle(plugins, snapshot, pod, Scope::Only(candidates))
    }

    fn cycle(
        &self,
        plugins: &[ConfiguredPlugin],
        snapshot: &Arc<Snapshot>,
        pod: Pod,
        scope: Scope<'_>,
    ) -> CycleOutcome {
        let pod_key = format!("{}/{}", pod.namespace, pod.name);
        let (all, start, percentage) = match scope {
            Scope::Sampled { start } => (
                snapshot.order(),
                start,
                self.options.percentage_of_nodes_to_score,
            ),
            Scope::Only(candidates) => (candidates, 0, 100),
        };
        let num_all_nodes = all.len();
        let sampled = matches!(scope, Scope::Sampled { .. });
        let cycle = Cycle::new(pod, snapshot.clone());
        let mut out = CycleOutcome::new(pod_key, snapshot.clone(), start, num_all_nodes);
        if num_all_nodes == 0 {
            out.error = Some("no nodes available to schedule pods".into());
            return out;
        }

        let PreFiltered { active, narrowed } = match pre_filter(
            plugins,
            &cycle,
            self.observer.as_deref(),
            &mut out,
            self.options.use_pre_filter_result,
        ) {
            PreFilter::Proceed(p) => p,
            PreFilter::Failed(error) => {
                out.error = Some(error);
                return out;
            }
            PreFilter::Rejected(status) => {
                let diagnosis = Diagnosis {
                    explicit: Vec::new(),
                    pre_filter_msg: Some(status.message()),
                    absent: Some(status.clone()),
                };
                out.message = Some(diagnosis.fit_error_message(num_all_nodes));
                out.rejected = all.iter().map(|&s| (s, status.clone())).collect();
                return out;
            }
        };

        let mut diagnosis = Diagnosis::default();
        let nominated_slot = snapshot.slot_of(&cycle.pod.nominated_node_name);
        if let Scope::Sampled { .. } = scope
            && let Some(slot) = nominated_slot
            && self.evaluate_nominated_node(&cycle, slot, &active, &mut diagnosis, &mut out)
        {
            return out;
        }

        // The nodes to check: all, or those the prepare steps kept.
        // Borrowed when nothing was narrowed: no copy of the node list per cycle.
        let nodes: std::borrow::Cow<'_, [u32]> = match &narrowed {
            None => std::borrow::Cow::Borrowed(all),
            Some((names, narrowing_plugins)) => {
                let plugins: Vec<&str> = narrowing_plugins.iter().map(String::as_str).collect();
                diagnosis.absent = Some(NodeStatus::new(
                    None,
                    Status::unresolvable(format!(
                        "node(s) didn't satisfy plugin(s) [{}]",
                        plugins.join(" ")
                    )),
                ));
                all.iter()
                    .copied()
                    .filter(|s| names.contains(&snapshot.node(*s).name))
                    .collect::<Vec<u32>>()
                    .into()
            }
        };

        let to_find = num_feasible_nodes_to_find(percentage, nodes.len());
        out.num_feasible_nodes_to_find = to_find;
        let found = self.filter_nodes(
            &cycle,
            &nodes,
            (start, to_find),
            &active,
            &mut diagnosis,
            &mut out,
        );
        // The nominated node, if tried first and reached again, keeps its
        // later status (upstream's NodeToStatus is a map).
        keep_last_status(&mut diagnosis.explicit, nominated_slot);
        let processed = found.len() + diagnosis.explicit.len();
        out.next_start_node_index = (start + processed) % num_all_nodes;
        out.nodes_evaluated = processed;
        out.feasible = found;
        if sampled && out.error.is_none() && !out.feasible.is_empty() {
            self.run_extenders(&cycle, nominated_slot, &mut diagnosis, &mut out);
        }

        if let (Some(absent), Some((kept, _))) = (&diagnosis.absent, &narrowed) {
            let explicit: std::collections::HashSet<u32> =
                diagnosis.explicit.iter().map(|(s, _)| *s).collect();
            for &slot in all {
                if !kept.contains(&**snapshot.name(slot)) && !explicit.contains(&slot) {
                    out.rejected.push((slot, absent.clone()));
                }
            }
        }
        if out.error.is_some() {
            out.feasible.clear();
        } else if out.feasible.is_empty() {
            out.message = Some(diagnosis.fit_error_message(num_all_nodes));
        }
        out.rejected.append(&mut diagnosis.explicit);
        out
    }

    /// Upstream's `evaluateNominatedNode`: a pod nominated to a node (by an
    /// earlier cycle's preemption) tries that node first, whatever the
    /// prepare steps kept, and takes it if it fits; nothing moves the
    /// round-robin start then. True when it took the node (`out` is then
    /// the cycle's outcome); otherwise the node's statuses are in
    /// `diagnosis` and the search over every node follows.
    fn evaluate_nominated_node(
        &self,
        cycle: &Cycle,
        slot: u32,
        active: &[Active<'_>],
        diagnosis: &mut Diagnosis,
        out: &mut CycleOutcome,
    ) -> bool {
        let mut first = CycleOutcome {
            rejected: Vec::new(),
            error: None,
            ignored_errors: Vec::new(),
            ..out.clone()
        };
        let mut tried = Diagnosis::default();
        let mut found = self.filter_nodes(cycle, &[slot], (0, 1), active, &mut tried, &mut first);
        if first.error.is_none() && !found.is_empty() && !self.extenders.is_empty() {
            match pass_extenders(&self.extenders, cycle, found) {
                Ok(pass) => {
                    found = pass.feasible;
                    tried.explicit.extend(pass.statuses);
                    first.ignored_errors.extend(pass.ignored_errors);
                }
                Err(e) => {
                    found = Vec::new();
                    first.error = Some(e);
                }
            }
        }
        if first.error.is_none() {
            out.ignored_errors.append(&mut first.ignored_errors);
            if !found.is_empty() {
                out.feasible = found;
                out.nodes_evaluated = 1;
                out.num_feasible_nodes_to_find = 1;
                return true;
            }
            diagnosis.explicit = tried.explicit;
        } else {
            // Upstream logs the error and goes on with every node.
            tracing::warn!(
                pod = %out.pod,
                "evaluating the pod's nominated node failed: {}",
                first.error.unwrap_or_default()
            );
        }
        false
    }

    /// The extenders over the feasible nodes; what they reject joins the
    /// diagnosis, a failing extender fails the cycle.
    fn run_extenders(
        &self,
        cycle: &Cycle,
        nominated_slot: Option<u32>,
        diagnosis: &mut Diagnosis,
        out: &mut CycleOutcome,
    ) {
        if self.extenders.is_empty() {
            return;
        }
        let feasible = std::mem::take(&mut out.feasible);
        match pass_extenders(&self.extenders, cycle, feasible) {
            Ok(pass) => {
                out.feasible = pass.feasible;
                out.ignored_errors.extend(pass.ignored_errors);
                if !pass.statuses.is_empty() {
                    diagnosis.explicit.extend(pass.statuses);
                    keep_last_status(&mut diagnosis.explicit, nominated_slot);
                }
            }
            Err(e) => out.error = Some(e),
        }
    }

    /// Evaluates `nodes` from the round-robin start until enough feasible
    /// nodes are found, an Error aborts the cycle, or all were checked.
    fn filter_nodes(
        &self,
        cycle: &Cycle,
        nodes: &[u32],
        (start, to_find): (usize, usize),
        active: &[Active<'_>],
        diagnosis: &mut Diagnosis,
        out: &mut CycleOutcome,
    ) -> Vec<u32> {
        let n = nodes.len();
        let mut feasible = Vec::new();
        if n == 0 {
            return feasible;
        }
        let mut next = 0; // position in round-robin order
        // More tasks than cores only adds instances to prepare: split a wave
        // over at most min(parallelism, cores) tasks.
        let parallelism = self.options.parallelism.max(1).min(self.cores);
        // As kube-scheduler with one worker: once the target is reached, the
        // search goes on until one more feasible node is found, which stops
        // it and is dropped; rejections met on the way are kept and counted.
        'waves: while next < n {
            // Size the wave for the feasible nodes still needed, at the
            // feasibility rate seen so far.
            let needed = (to_find + 1).saturating_sub(feasible.len());
            // A first wave sized for 100% feasibility needed a second (and
            // a third) fork-join in most cycles; the recent average rarely
            // does. Floored so a run of picky pods does not make the next
            // easy pod evaluate more than ~4x what it needs.
            let rate = if next == 0 {
                f64::from(f32::from_bits(self.feasibility.load(Ordering::Relaxed))).max(0.25)
            } else {
                (feasible.len() as f64 / next as f64).max(0.02)
            };
            // 10% slack: a wave that falls just short costs a whole extra
            // round of calls into every plugin.
            let wave = ((needed as f64 / rate * 1.1).ceil() as usize)
                .max(MIN_CHUNK)
                .min(n - next);
            let tasks = (wave / MIN_TASK_NODES).clamp(1, parallelism);
            let chunk = wave.div_ceil(tasks);
            let slots: Vec<u32> = (next..next + wave)
                .map(|i| nodes[(start + i) % n])
                .collect();
            let observer = self.observer.as_deref();
            let eval = |c: &[u32]| {
                evaluate(
                    c,
                    active,
                    &cycle.nominated,
                    self.options.always_check_all_predicates,
                    observer,
                )
            };
            let eval = &eval;
            let chunks: Vec<&[u32]> = slots.chunks(chunk).collect();
            let mut results: Vec<Vec<Verdict>> = chunks.iter().map(|_| Vec::new()).collect();
            if let Some((first, rest)) = results.split_first_mut() {
                // This thread evaluates the first chunk while pool threads
                // take the others.
                self.pool.in_place_scope(|s| {
                    for (c, out) in chunks[1..].iter().zip(rest.iter_mut()) {
                        s.spawn(move |_| *out = eval(c));
                    }
                    *first = eval(chunks[0]);
                });
            }
            for (&slot, verdict) in slots.iter().zip(results.into_iter().flatten()) {
                next += 1;
                match verdict {
                    Verdict::Feasible { .. } if feasible.len() >= to_find => break 'waves,
                    Verdict::Feasible { ignored } => {
                        out.ignored_errors.extend(ignored);
                        feasible.push(slot);
                    }
                    Verdict::Rejected(status) if status.code() == Code::Error => {
                        // Reported, but like upstream not counted as processed.
                        let plugin = status.plugin().unwrap_or_default();
                        out.error = Some(format!(
                            "running {plugin:?} filter plugin: {}",
                            status.message()
                        ));
                        out.rejected.push((slot, status));
                        break 'waves;
                    }
                    Verdict::Rejected(status) => diagnosis.explicit.push((slot, status)),
                }
            }
        }
        if to_find < n && next > 0 {
            let seen = feasible.len() as f32 / next as f32;
            let avg = f32::from_bits(self.feasibility.load(Ordering::Relaxed));
            self.feasibility
                .store((0.75 * avg + 0.25 * seen).to_bits(), Ordering::Relaxed);
        }
        feasible
    }
}

/// kube-scheduler's `RunPreFilterPlugins`: each plugin's prepare step in
/// order. Unresolvable rejects at once; Unschedulable lets the others
/// run, then rejects; narrowing intersects node sets, and an empty
/// intersection rejects with upstream's message.
fn pre_filter<'a>(
    plugins: &'a [ConfiguredPlugin],
    cycle: &'a Cycle,
    observer: Option<&dyn CallObserver>,
    out: &mut CycleOutcome,
    narrowing: bool,
) -> PreFilter<'a> {
    let mut active: Vec<Active<'a>> = Vec::new();
    let mut narrowed: Option<BTreeSet<String>> = None;
    let mut narrowing_plugins: BTreeSet<String> = BTreeSet::new();
    let mut unschedulable: Option<NodeStatus> = None;
    for cp in plugins {
        let name = cp.plugin.name();
        let started = Instant::now();
        let prepared = cp.plugin.prepare(cycle);
        if let Some(o) = observer {
            o.plugin_call(name, "PreFilter", prepared.is_ok(), started.elapsed());
        }
        let prepared = match prepared {
            Ok(p) => p,
            Err(e) if cp.ignorable => {
                out.ignored_errors.push(e.to_string());
                continue;
            }
            Err(e) => {
                return PreFilter::Failed(format!(
                    "running PreFilter plugin {name:?}: {}",
                    e.message
                ));
            }
        };
        let active_plugin = Active {
            name: plugin_name(name),
            ignorable: cp.ignorable,
            filter: prepared.filter,
        };
        match prepared.outcome {
            PrepareOutcome::Proceed => active.push(active_plugin),
            PrepareOutcome::Skip => {}
            PrepareOutcome::Reject(status) => match status.code {
                Code::UnschedulableAndUnresolvable => {
                    return PreFilter::Rejected(NodeStatus::new(Some(name), status));
                }
                Code::Unschedulable => unschedulable = Some(NodeStatus::new(Some(name), status)),
                code => {
                    // Success and Skip are not rejections: a plugin bug,
                    // reported as an Error (as filter's Skip is).
                    let message = if code == Code::Error {
                        status.message()
                    } else {
                        format!(
                            "prepare returned reject with code {}, which is not a rejection \
                             (use proceed or skip, or reject with Unschedulable, \
                             UnschedulableAndUnresolvable or Error)",
                            code.as_str()
                        )
                    };
                    if cp.ignorable {
                        out.ignored_errors.push(format!("plugin {name}: {message}"));
                    } else {
                        return PreFilter::Failed(format!(
                            "running PreFilter plugin {name:?}: {message}"
                        ));
                    }
                }
            },
            // Without narrowing, the plugin's filter judges every node.
            PrepareOutcome::Narrow(_) if !narrowing => active.push(active_plugin),
            PrepareOutcome::Narrow(names) => {
                narrowing_plugins.insert(name.to_string());
                let names: BTreeSet<String> = names.into_iter().collect();
                let kept = match narrowed.take() {
                    None => names,
                    Some(prev) => prev.intersection(&names).cloned().collect(),
                };
                if kept.is_empty() {
                    let list: Vec<&str> = narrowing_plugins.iter().map(String::as_str).collect();
                    let msg = if list.len() == 1 {
                        format!("node(s) didn't satisfy plugin {}", list[0])
                    } else {
                        format!(
                            "node(s) didn't satisfy plugin(s) [{}] simultaneously",
                            list.join(" ")
                        )
                    };
                    return PreFilter::Rejected(NodeStatus::new(None, Status::unresolvable(msg)));
                }
                narrowed = Some(kept);
                active.push(active_plugin);
            }
        }
    }
    match unschedulable {
        Some(status) => PreFilter::Rejected(status),
        None => PreFilter::Proceed(PreFiltered {
            active,
            narrowed: narrowed.map(|kept| (kept, narrowing_plugins)),
        }),
    }
}

enum Verdict {
    Feasible { ignored: Vec<String> },
    Rejected(NodeStatus),
}

/// Which whole objects any of `plugins` reads.
pub fn full_objects(plugins: &[ConfiguredPlugin]) -> crate::input::kube::FullObjects {
    plugins
        .iter()
        .fold(Default::default(), |f, p| f.union(p.plugin.full_objects()))
}

/// Keeps only the last status of `node`. A cycle evaluates each node once,
/// except the pod's nominated node, which is tried first and may be
/// reached again (and then rejected by an extender): only its statuses can
/// repeat, so only they are looked for (a map of every status per cycle
/// cost a quarter of the host's filter time).
fn keep_last_status(statuses: &mut Vec<(u32, NodeStatus)>, node: Option<u32>) {
    let Some(node) = node else {
        return;
    };
    let Some(last) = statuses.iter().rposition(|(n, _)| *n == node) else {
        return;
    };
    let mut i = 0;
    statuses.retain(|(n, _)| {
        let keep = i == last || *n != node;
        i += 1;
        keep
    });
}

/// Records one plugin's status for a node in its verdict; whether the node
/// is now rejected.
fn record(verdict: &mut Verdict, plugin: &Active<'_>, status: Arc<Status>) -> bool {
    if status.code == Code::Success {
        return false;
    }
    // Only prepare may skip; a Skip from filter is a plugin error.
    let status = if status.code == Code::Skip {
        Arc::new(Status::error("filter returned Skip"))
    } else {
        status
    };
    if status.code == Code::Error && plugin.ignorable {
        if let Verdict::Feasible { ignored } = verdict {
            ignored.push(format!("plugin {}: {}", plugin.name, status.message()));
        }
        return false;
    }
    let new = NodeStatus {
        plugin: Some(plugin.name),
        status,
    };
    *verdict = match std::mem::replace(
        verdict,
        Verdict::Feasible {
            ignored: Vec::new(),
        },
    ) {
        Verdict::Rejected(prev) => Verdict::Rejected(merge(prev, new)),
        Verdict::Feasible { .. } => Verdict::Rejected(new),
    };
    true
}

/// Runs the active filters over one chunk of nodes: each filter sees the
/// nodes every earlier filter passed (all of them with
/// `always_check_all_predicates`).
///
/// A node in `nominated` is first checked with the pods nominated to it
/// (upstream's `RunFilterPluginsWithNominatedPods`): rejected there, that
/// is its verdict; passed, it goes on to the normal check without them.
fn evaluate(
    slots: &[u32],
    active: &[Active<'_>],
    nominated: &HashMap<u32, NominatedPass>,
    check_all: bool,
    observer: Option<&dyn CallObserver>,
) -> Vec<Verdict> {
    let mut verdicts: Vec<Verdict> = slots
        .iter()
        .map(|_| Verdict::Feasible {
            ignored: Vec::new(),
        })
        .collect();
    let mut candidates: Vec<usize> = (0..slots.len()).collect();
    if !nominated.is_empty() {
        candidates.retain(|&i| {
            let Some(pass) = nominated.get(&slots[i]) else {
                return true;
            };
            let mut rejected = false;
            for a in active {
                let started = Instant::now();
                let result = a.filter.filter_nominated(slots[i], pass);
                if let Some(o) = observer {
                    o.plugin_call(a.name, "Filter", result.is_ok(), started.elapsed());
                }
                let status = result.unwrap_or_else(|e| Status::error(e.message));
                rejected |= record(&mut verdicts[i], a, Arc::new(status));
                if rejected && !check_all {
                    break;
                }
            }
            !rejected
        });
    }
    let mut batch: Vec<u32> = Vec::with_capacity(slots.len());
    let mut rejections: Vec<(u32, Arc<Status>)> = Vec::new();
    let mut rejected: Vec<bool> = Vec::with_capacity(slots.len());
    for a in active {
        if candidates.is_empty() {
            break;
        }
        batch.clear();
        batch.extend(candidates.iter().map(|&i| slots[i]));
        rejections.clear();
        let started = Instant::now();
        let result = a.filter.filter(&batch, &mut rejections);
        if let Some(o) = observer {
            o.plugin_call(a.name, "Filter", result.is_ok(), started.elapsed());
        }
        if let Err(e) = result {
            // The whole batch failed (trap, deadline...): an Error for each.
            rejections.clear();
            let status = Arc::new(Status::error(e.message));
            rejections.extend((0..batch.len() as u32).map(|i| (i, status.clone())));
        }
        rejected.clear();
        rejected.resize(candidates.len(), false);
        for (index, status) in rejections.drain(..) {
            let Some(&pos) = candidates.get(index as usize) else {
                continue; // a plugin naming a node it was not asked about
            };
            if record(&mut verdicts[pos], a, status) {
                rejected[index as usize] = true;
            }
        }
        if !check_all {
            let mut i = 0;
            candidates.retain(|_| {
                let keep = !rejected[i];
                i += 1;
                keep
            });
        }
    }
    verdicts
}

/// With `always_check_all_predicates`: the first failing plugin, the most
/// severe code, and every failing plugin's reasons in order.
fn merge(prev: NodeStatus, next: NodeStatus) -> NodeStatus {
    let reasons = prev.reasons().iter().chain(next.reasons()).cloned();
    NodeStatus {
        plugin: prev.plugin,
        status: Arc::new(Status::new(more_severe(prev.code(), next.code()), reasons)),
    }
}

fn more_severe(a: Code, b: Code) -> Code {
    let rank = |c: Code| match c {
        Code::Error => 3,
        Code::UnschedulableAndUnresolvable => 2,
        Code::Unschedulable => 1,
        _ => 0,
    };
    if rank(b) > rank(a) { b } else { a }
}
