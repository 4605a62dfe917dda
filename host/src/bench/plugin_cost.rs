//! The per-plugin table of `sift bench --scoring`: what each plugin of a
//! profile costs per pod, native and Wasm, so the whole cycle's cost can be
//! traced to the plugins that make it.
//!
//! Each plugin is called directly (not through the engine, which does not
//! time scores, and whose waves run on several threads), the way a cycle
//! calls it, on the cycle's own nodes:
//!
//! - the nodes come from the native engine's cycle for the same pod, run
//!   untimed just before (so both runtimes are timed over the same nodes):
//!   the nodes it evaluated, from its round-robin start, and the feasible
//!   nodes it found;
//! - a **filter** is timed from its PreFilter (`prepare`) to the end of one
//!   Filter call over the evaluated nodes that the filters before it
//!   passed, as the engine hands them on (a skipped plugin costs its
//!   prepare; a rejecting prepare leaves the later filters no nodes, a
//!   narrowing one fewer). The engine's waves may evaluate a few nodes past
//!   the one that stops the search; those are not timed here;
//! - a **score** is timed over one `score` call on the feasible nodes:
//!   PreScore, Score and NormalizeScore, as [`Scheduler`] calls it (pods
//!   with one feasible node or none are not scored, as upstream).
//!
//! Native and Wasm are timed on the same pod one after the other, pod by
//! pod, so the machine's noise falls on both alike. µs per pod is the
//! plugin's total time over the measured pods divided by their number
//! (pods it skips included).
//!
//! [`Scheduler`]: crate::engine::schedule::Scheduler

use crate::cluster::Snapshot;
use crate::config::{Config, EngineOptions, PluginRef};
use crate::engine::Engine;
use crate::engine::plugin::{Cycle, Plugin, PrepareOutcome};
use crate::plugins::registry::Catalog;
use anyhow::{Result, anyhow};
use sift_sdk::Pod;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What is measured: the snapshot and pods, and the profile's plugins by
/// name (filters in order, then scores in order).
pub struct Setup<'a> {
    pub snapshot: &'a Arc<Snapshot>,
    pub pods: &'a [Pod],
    pub filters: &'a [PluginRef],
    /// The configuration whose score plugins are measured, and its label.
    pub profile: &'a Config,
    pub label: &'a str,
    pub options: &'a EngineOptions,
}

/// One pod's cycle as the native engine ran it: the nodes it evaluated
/// and those it found feasible, by slot.
struct Plan {
    evaluated: Vec<u32>,
    feasible: Vec<u32>,
}

/// Runs the engine's cycle for `pod` and keeps its nodes. The evaluated
/// nodes are the round-robin window from the cycle's start (exact unless a
/// prepare narrowed the nodes, which no pod of the benchmark's mix does).
fn plan(engine: &mut Engine, snapshot: &Arc<Snapshot>, pod: &Pod) -> Result<Plan> {
    let start = engine.next_start_node_index();
    let out = engine.find_nodes_that_fit(snapshot, pod.clone());
    if let Some(e) = out.error {
        return Err(anyhow!("pod {}: {e}", pod.name));
    }
    let order = snapshot.order();
    Ok(Plan {
        evaluated: (0..out.nodes_evaluated)
            .map(|i| order[(start + i) % order.len()])
            .collect(),
        feasible: out.feasible,
    })
}

/// One runtime's plugins of the profile: filters, then scorers.
struct Plugins {
    filters: Vec<Arc<dyn Plugin>>,
    scorers: Vec<Arc<dyn Plugin>>,
}

impl Plugins {
    fn of(catalog: &Catalog, setup: &Setup<'_>) -> Result<Plugins> {
        Ok(Plugins {
            filters: catalog
                .select(setup.filters)?
                .into_iter()
                .map(|c| c.plugin)
                .collect(),
            scorers: catalog
                .select_scorers(setup.profile)?
                .into_iter()
                .map(|s| s.plugin)
                .collect(),
        })
    }

    /// Times each plugin on `pod` over `plan`'s nodes, adding to `costs`
    /// (filters' entries, then scorers').
    fn time(
        &self,
        snapshot: &Arc<Snapshot>,
        pod: &Pod,
        plan: &Plan,
        costs: &mut [Duration],
    ) -> Result<()> {
        let err = |e: crate::engine::plugin::PluginError| anyhow!("pod {}: {e}", pod.name);
        let cycle = Cycle::new(pod.clone(), snapshot.clone());
        let mut candidates = plan.evaluated.clone();
        let mut rejections = Vec::new();
        for (plugin, cost) in self.filters.iter().zip(costs.iter_mut()) {
            rejections.clear();
            let started = Instant::now();
            let prepared = plugin.prepare(&cycle).map_err(err)?;
            let proceed = prepared.outcome == PrepareOutcome::Proceed;
            if proceed && !candidates.is_empty() {
                prepared
                    .filter
                    .filter(&candidates, &mut rejections)
                    .map_err(err)?;
            }
            *cost += started.elapsed();
            match prepared.outcome {
                PrepareOutcome::Proceed => {
                    let mut rejected = vec![false; candidates.len()];
                    for (i, _) in &rejections {
                        rejected[*i as usize] = true;
                    }
                    let mut i = 0;
                    candidates.retain(|_| {
                        i += 1;
                        !rejected[i - 1]
                    });
                }
                PrepareOutcome::Skip => {}
                PrepareOutcome::Reject(_) => candidates.clear(),
                PrepareOutcome::Narrow(names) => {
                    candidates.retain(|s| names.iter().any(|n| **snapshot.name(*s) == **n))
                }
            }
        }
        if plan.feasible.len() > 1 {
            let cycle = Cycle::new(pod.clone(), snapshot.clone());
            let scores = &mut costs[self.filters.len()..];
            for (plugin, cost) in self.scorers.iter().zip(scores) {
                let started = Instant::now();
                plugin.score(&cycle, &plan.feasible).map_err(err)?;
                *cost += started.elapsed();
            }
        }
        Ok(())
    }
}

/// Prints the table for one cluster: a row per plugin and extension point,
/// their sum, and the whole cycle's time per pod (`cycle_us`, native and
/// Wasm, from the cycles measured just before) beside it.
pub fn run(
    setup: &Setup<'_>,
    native: &Catalog,
    wasm: Option<&Catalog>,
    (time_native, budget): (bool, Duration),
    cycle_us: (f64, f64),
) -> Result<()> {
    let mut engine = Engine::new(native.select(setup.filters)?, setup.options.clone())?;
    let native_plugins = match time_native {
        true => Some(Plugins::of(native, setup)?),
        false => None,
    };
    let wasm_plugins = wasm.map(|c| Plugins::of(c, setup)).transpose()?;
    let entries: Vec<(String, &str)> = setup
        .filters
        .iter()
        .map(|f| (f.name.clone(), "filter"))
        .chain(
            setup
                .profile
                .score_plugins()
                .into_iter()
                .map(|(n, _)| (n, "score")),
        )
        .collect();
    let runs: Vec<&Plugins> = native_plugins.iter().chain(wasm_plugins.iter()).collect();
    // Warm up: instances created and synced outside the timing.
    let mut scratch = vec![Duration::ZERO; entries.len()];
    for pod in setup.pods.iter().take(5) {
        let plan = plan(&mut engine, setup.snapshot, pod)?;
        for p in &runs {
            p.time(setup.snapshot, pod, &plan, &mut scratch)?;
        }
    }
    let mut costs = vec![vec![Duration::ZERO; entries.len()]; runs.len()];
    let (mut done, mut evaluated, mut feasible) = (0usize, 0usize, 0usize);
    let started = Instant::now();
    for pod in setup.pods {
        let plan = plan(&mut engine, setup.snapshot, pod)?;
        for (p, c) in runs.iter().zip(costs.iter_mut()) {
            p.time(setup.snapshot, pod, &plan, c)?;
        }
        done += 1;
        evaluated += plan.evaluated.len();
        feasible += plan.feasible.len();
        if started.elapsed() > budget && done >= 20 {
            break;
        }
    }
    let per_pod = |d: Duration| d.as_secs_f64() * 1e6 / done as f64;
    let column =
        |run: Option<usize>, entry: usize| run.map_or(f64::NAN, |r| per_pod(costs[r][entry]));
    let (native_run, wasm_run) = match (time_native, wasm.is_some()) {
        (true, true) => (Some(0), Some(1)),
        (true, false) => (Some(0), None),
        (false, _) => (None, Some(0)),
    };
    println!(
        "\nper-plugin cost of the {} profile, µs per pod, over {done} pods ({:.0} nodes evaluated, {:.0} feasible per pod):",
        setup.label,
        evaluated as f64 / done as f64,
        feasible as f64 / done as f64,
    );
    println!(
        "filter = PreFilter + Filter over the evaluated nodes the earlier filters passed; score = PreScore + Score + NormalizeScore over the feasible nodes"
    );
    println!(
        "{:<34} {:<6} {:>12} {:>12} {:>12}",
        "plugin", "point", "native µs", "wasm µs", "wasm/native"
    );
    let (mut native_sum, mut wasm_sum) = (0.0, 0.0);
    for (i, (name, point)) in entries.iter().enumerate() {
        let (n, w) = (column(native_run, i), column(wasm_run, i));
        native_sum += n;
        wasm_sum += w;
        println!(
            "{name:<34} {point:<6} {} {} {}",
            cell(n, 12, 1),
            cell(w, 12, 1),
            cell(w / n, 12, 2)
        );
    }
    println!(
        "{:<41} {} {} {}",
        "sum of the plugins",
        cell(native_sum, 12, 1),
        cell(wasm_sum, 12, 1),
        cell(wasm_sum / native_sum, 12, 2)
    );
    println!(
        "{:<41} {} {} {}",
        "whole cycle (1e6 / pods/s above)",
        cell(cycle_us.0, 12, 1),
        cell(cycle_us.1, 12, 1),
        cell(cycle_us.1 / cycle_us.0, 12, 2)
    );
    Ok(())
}

/// A number right-aligned in `width`, or "-" when it was not measured.
pub fn cell(value: f64, width: usize, decimals: usize) -> String {
    if value.is_finite() {
        format!("{value:>width$.decimals$}")
    } else {
        format!("{:>width$}", "-")
    }
}
