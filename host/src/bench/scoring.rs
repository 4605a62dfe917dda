//! `sift bench --scoring`: pods/s of whole scheduling cycles (filters,
//! PreScore, Score, NormalizeScore, selecting the host: what
//! [`Scheduler::schedule`] does) under two score profiles in one run, native
//! and Wasm side by side, so the cost of kube-scheduler's complete default
//! score set is read against the two scorers sift had before it, on the
//! same machine at the same moment; then what each plugin of the complete
//! profile costs ([`plugin_cost`]).
//!
//! The cluster is [`synthetic_scoring_cluster`] (bound pods, node images)
//! and the pods [`synthetic_scoring_pods`], whose mix gives every default
//! scorer something to score. Pods are not placed: the snapshot stays the
//! same, so every cycle scores the same cluster (as the filter phase's
//! benchmark measures it), and no reserve plugin is in the default
//! profile, so nothing changes between cycles but the round-robin start.

use super::Options;
use super::plugin_cost::{self, cell};
use crate::cluster::Snapshot;
use crate::cluster::synthetic::{synthetic_scoring_cluster, synthetic_scoring_pods};
use crate::config::{Config, EngineOptions, PluginRef, ScoreRef, ScoreSet};
use crate::engine::Engine;
use crate::engine::schedule::{Scheduler, TieBreak};
use crate::plugins::registry::Catalog;
use anyhow::{Result, anyhow};
use sift_sdk::Pod;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A score profile: its label in the table and the configuration whose
/// `plugins.score` it is.
pub struct Profile {
    pub label: String,
    pub config: Config,
}

/// The profile sift had before issue 34 (NodeResourcesFit and
/// NodeResourcesBalancedAllocation, weight 1 each) and `config`'s, which
/// is the complete default set unless a `--config` edits it. Both keep
/// `config`'s filters and plugin arguments.
pub fn profiles(config: &Config, configured: bool) -> [Profile; 2] {
    let mut before = config.clone();
    before.plugins.score = ScoreSet {
        disabled: vec![ScoreRef {
            name: "*".into(),
            weight: None,
        }],
        enabled: ["NodeResourcesFit", "NodeResourcesBalancedAllocation"]
            .into_iter()
            .map(|name| ScoreRef {
                name: name.into(),
                weight: Some(1),
            })
            .collect(),
    };
    let scores = config.score_plugins();
    let label = match configured {
        false => format!("complete default ({} scores)", scores.len()),
        true => format!("--config's ({} scores)", scores.len()),
    };
    [
        Profile {
            label: "before issue 34 (Fit 1, BalancedAllocation 1)".into(),
            config: before,
        },
        Profile {
            label,
            config: config.clone(),
        },
    ]
}

/// A scheduler of `catalog`'s plugins: `filters`, then `profile`'s scorers,
/// ties to the first node (deterministic).
fn scheduler(
    catalog: &Catalog,
    filters: &[PluginRef],
    profile: &Config,
    options: &EngineOptions,
) -> Result<Scheduler> {
    let engine = Engine::new(catalog.select(filters)?, options.clone())?;
    Ok(Scheduler::new(
        engine,
        catalog.select_scorers(profile)?,
        TieBreak::NodeOrder,
    ))
}

/// One measurement over sequential whole cycles: (pods/s, average feasible
/// nodes per cycle, which is what the scorers score).
fn measure(
    scheduler: &mut Scheduler,
    snapshot: &Arc<Snapshot>,
    pods: &[Pod],
    budget: Duration,
) -> Result<(f64, f64)> {
    // Warm up: instances created and synced outside the timing.
    for p in pods.iter().take(20) {
        scheduler.schedule(snapshot, p.clone());
    }
    let started = Instant::now();
    let mut done = 0;
    let mut feasible = 0;
    for p in pods {
        let attempt = scheduler.schedule(snapshot, p.clone());
        if let Some(e) = attempt.filter.error.as_ref().or(attempt.error.as_ref()) {
            return Err(anyhow!("pod {}: {e}", p.name));
        }
        feasible += attempt.filter.feasible.len();
        done += 1;
        if started.elapsed() > budget && done >= 20 {
            break;
        }
    }
    Ok((
        done as f64 / started.elapsed().as_secs_f64(),
        feasible as f64 / done as f64,
    ))
}

/// Per --nodes size: a row per profile (native and Wasm measured back to
/// back), then the complete profile's per-plugin costs.
pub fn run(
    a: &Options,
    config: &Config,
    configured: bool,
    native: &Catalog,
    wasm: Option<&Catalog>,
) -> Result<()> {
    let filters = config.filter_plugins();
    let profiles = profiles(config, configured);
    let options = EngineOptions {
        parallelism: a.parallelism,
        ..config.engine_options()
    };
    let budget = Duration::from_secs_f64(a.seconds);
    let pods = synthetic_scoring_pods(a.pods);
    println!(
        "sift bench --scoring: whole cycles (filter, score, select; pods not placed), {} pods per run (max {:.1}s), parallelism {}, {} CPU(s), percentageOfNodesToScore {}",
        a.pods,
        a.seconds,
        a.parallelism,
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        match options.percentage_of_nodes_to_score {
            0 => "adaptive".to_string(),
            p => p.to_string(),
        }
    );
    println!(
        "cluster: synthetic, 10 bound pods per node, up to 20 images per node; pods: the 0.2 mix plus preferred node and pod affinity, PreferNoSchedule tolerations, ScheduleAnyway spread, images"
    );
    println!(
        "filters: {}",
        filters
            .iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    for p in &profiles {
        println!(
            "scores of {}: {}",
            p.label,
            p.config
                .score_plugins()
                .iter()
                .map(|(n, w)| format!("{n} {w}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    for &n in &a.nodes {
        let snapshot = synthetic_scoring_cluster(n)?;
        println!(
            "\n{:>7} {:<48} {:>14} {:>14} {:>14} {:>12}",
            "nodes", "profile", "feasible/cycle", "native pods/s", "wasm pods/s", "wasm/native"
        );
        let mut rates = Vec::new();
        for p in &profiles {
            let (native_rate, mut feasible) = if a.wasm_only {
                (f64::NAN, f64::NAN)
            } else {
                let mut s = scheduler(native, &filters, &p.config, &options)?;
                measure(&mut s, &snapshot, &pods, budget)?
            };
            let wasm_rate = match wasm {
                Some(c) => {
                    let mut s = scheduler(c, &filters, &p.config, &options)?;
                    let (rate, f) = measure(&mut s, &snapshot, &pods, budget)?;
                    if feasible.is_nan() {
                        feasible = f;
                    }
                    rate
                }
                None => f64::NAN,
            };
            println!(
                "{n:>7} {:<48} {feasible:>14.0} {} {} {}",
                p.label,
                cell(native_rate, 14, 0),
                cell(wasm_rate, 14, 0),
                cell(native_rate / wasm_rate, 12, 2)
            );
            rates.push((native_rate, wasm_rate));
        }
        let (before, complete) = (rates[0], rates[1]);
        println!(
            "{:>7} cost of the complete profile over the one before issue 34 (time per cycle): native x{}, wasm x{}",
            "",
            cell(before.0 / complete.0, 0, 2).trim(),
            cell(before.1 / complete.1, 0, 2).trim()
        );
        let cycle_us = (1e6 / complete.0, 1e6 / complete.1);
        let setup = plugin_cost::Setup {
            snapshot: &snapshot,
            pods: &pods,
            filters: &filters,
            profile: &profiles[1].config,
            label: &profiles[1].label,
            options: &options,
        };
        plugin_cost::run(&setup, native, wasm, (!a.wasm_only, budget), cycle_us)?;
    }
    Ok(())
}
