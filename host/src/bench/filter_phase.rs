//! `sift bench` itself: pods/s of the filter phase on synthetic clusters,
//! native and Wasm side by side, per cluster size and
//! percentageOfNodesToScore, for two pod mixes.

use super::Options;
use crate::cluster::Snapshot;
use crate::cluster::synthetic::{
    synthetic_affinity_pods, synthetic_cluster, synthetic_nodes, synthetic_pods,
};
use crate::config::{Config, EngineOptions, PluginRef};
use crate::engine::Engine;
use crate::plugins::registry::Catalog;
use anyhow::Result;
use sift_sdk::Pod;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One measurement over sequential cycles: (pods/s, average nodes
/// evaluated per cycle).
fn measure(
    engine: &mut Engine,
    snapshot: &Arc<Snapshot>,
    pods: &[Pod],
    budget: Duration,
) -> (f64, f64) {
    // Warm up: instances created and synced outside the timing.
    for p in pods.iter().take(20) {
        engine.find_nodes_that_fit(snapshot, p.clone());
    }
    let started = Instant::now();
    let mut done = 0;
    let mut evaluated = 0;
    for p in pods {
        let o = engine.find_nodes_that_fit(snapshot, p.clone());
        evaluated += o.nodes_evaluated;
        if let Some(e) = o.error {
            eprintln!("bench: cycle error: {e}");
        }
        done += 1;
        if started.elapsed() > budget && done >= 20 {
            break;
        }
    }
    (
        done as f64 / started.elapsed().as_secs_f64(),
        evaluated as f64 / done as f64,
    )
}

/// The tables: for each pod mix, one row per cluster size and percentage.
pub fn run(a: &Options, config: &Config, native: &Catalog, wasm: Option<&Catalog>) -> Result<()> {
    let filters = config.filter_plugins();
    let budget = Duration::from_secs_f64(a.seconds);
    println!(
        "sift bench: {} pods per run (max {:.1}s), parallelism {}, {} CPU(s), filters: {}",
        a.pods,
        a.seconds,
        a.parallelism,
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        filters
            .iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let plain = synthetic_pods(a.pods);
    let affinity = synthetic_affinity_pods(a.pods);
    let runs: [(&str, &[Pod], bool); 2] = [
        (
            "plain mix (requests, node selectors and affinity, taints, ports), nodes without pods",
            &plain,
            false,
        ),
        (
            "0.2 mix (1/4 each: plain, zone spread, hostname spread, hostname anti-affinity), 10 labelled pods per node",
            &affinity,
            true,
        ),
    ];
    for (title, pods, with_pods) in runs {
        println!("\n{title}");
        println!(
            "{:>7} {:>10} {:>11} {:>14} {:>14} {:>12}",
            "nodes", "percentage", "nodes/cycle", "native pods/s", "wasm pods/s", "wasm/native"
        );
        for &n in &a.nodes {
            let snapshot = if with_pods {
                synthetic_cluster(n)?
            } else {
                Arc::new(Snapshot::from_nodes(synthetic_nodes(n))?)
            };
            table_rows(a, n, &snapshot, pods, &filters, native, wasm, budget)?;
        }
    }
    Ok(())
}

/// One row per --percentage for an `n`-node cluster: native and Wasm pods/s.
#[allow(clippy::too_many_arguments)]
fn table_rows(
    a: &Options,
    n: usize,
    snapshot: &Arc<Snapshot>,
    pods: &[Pod],
    filters: &[PluginRef],
    native: &Catalog,
    wasm: Option<&Catalog>,
    budget: Duration,
) -> Result<()> {
    for &pct in &a.percentage {
        let options = EngineOptions {
            percentage_of_nodes_to_score: pct,
            parallelism: a.parallelism,
            ..EngineOptions::default()
        };
        let (native_rate, per_cycle) = if a.wasm_only {
            (f64::NAN, f64::NAN)
        } else {
            let mut native_engine = Engine::new(native.select(filters)?, options.clone())?;
            measure(&mut native_engine, snapshot, pods, budget)
        };
        let mut per_cycle = per_cycle;
        let wasm_rate = match wasm {
            Some(c) => {
                let mut e = Engine::new(c.select(filters)?, options.clone())?;
                let (rate, evaluated) = measure(&mut e, snapshot, pods, budget);
                if per_cycle.is_nan() {
                    per_cycle = evaluated;
                }
                Some(rate)
            }
            None => None,
        };
        let pct_label = if pct == 0 {
            "adaptive".to_string()
        } else {
            pct.to_string()
        };
        match wasm_rate {
            Some(w) => println!(
                "{n:>7} {pct_label:>10} {per_cycle:>11.0} {native_rate:>14.0} {w:>14.0} {:>12.2}",
                native_rate / w
            ),
            None => println!(
                "{n:>7} {pct_label:>10} {per_cycle:>11.0} {native_rate:>14.0} {:>14} {:>12}",
                "-", "-"
            ),
        }
    }
    Ok(())
}
