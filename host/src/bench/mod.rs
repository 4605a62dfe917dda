//! `sift bench`: pods/s of the filter phase on a deterministic synthetic
//! cluster, with the Wasm plugins and with the same predicates compiled
//! natively. A benchmark, not a test: numbers depend on the machine.

pub mod cluster_view;
pub mod contract;
pub mod loadgen;
pub mod plugin_bench;

use crate::cluster::Snapshot;
use crate::cluster::synthetic::{
    kubectl_list, synthetic_affinity_pods, synthetic_cluster, synthetic_nodes, synthetic_pods,
};
use crate::config::Config;
use crate::config::EngineOptions;
use crate::engine::Engine;
use crate::plugins::registry::{Catalog, default_plugins_dir};
use crate::runtime::Runtime;
use crate::runtime::cache::CompileCache;
use anyhow::{Result, anyhow};
use sift_sdk::Pod;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(clap::Args)]
pub struct BenchArgs {
    /// Cluster sizes (nodes), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1000,5000,15000")]
    pub nodes: Vec<usize>,
    /// percentageOfNodesToScore values to run (0 = adaptive), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "0,100")]
    pub percentage: Vec<u32>,
    /// Pods to place per measurement (fewer if --seconds runs out first).
    #[arg(long, default_value_t = 5000)]
    pub pods: usize,
    /// Time budget per measurement.
    #[arg(long, default_value_t = 3.0)]
    pub seconds: f64,
    /// Worker threads (default: kube-scheduler's 16).
    #[arg(long, default_value_t = 16)]
    pub parallelism: usize,
    /// Directory of plugin components (default: the bundled plugins).
    #[arg(long = "plugins", value_name = "DIR")]
    pub plugins_dir: Option<PathBuf>,
    /// sift configuration: which filters run (default: the default
    /// filters), their arguments, limits.
    #[arg(long, short = 'c')]
    pub config: Option<PathBuf>,
    /// Skip the Wasm runs (native baseline only).
    #[arg(long, conflicts_with = "wasm_only")]
    pub native_only: bool,
    /// Skip the native runs (for profiling the Wasm path).
    #[arg(long)]
    pub wasm_only: bool,
    /// Instead, write the synthetic cluster of the first --nodes size as a
    /// `kubectl get nodes,pods -A -o json` style List to this file.
    #[arg(long, value_name = "FILE")]
    pub write_cluster: Option<PathBuf>,
    /// Instead, measure the contract designs: per node, one batched call
    /// over a synced node table versus one call carrying the node record.
    #[arg(long)]
    pub contract: bool,
    /// Instead, measure the cluster view's per-cycle cost for a pod with a
    /// zone spread constraint, one with hostname anti-affinity and one
    /// with neither, in the built design (synced into the component) and
    /// the alternative (host accessors, emulated), per --nodes size (10
    /// bound pods per node).
    #[arg(long)]
    pub cluster_view: bool,
    /// Instead, benchmark `sift serve` on loopback: requests/s and p50/p99
    /// latency per --nodes size in both nodeCacheCapable modes, and plugin
    /// swap latency under load (e.g. `--serve --nodes 500,5000`).
    #[arg(long)]
    pub serve: bool,
    /// Instead, measure one plugin component: size, first compile, cached
    /// load, instantiation, µs per pod over the first --nodes size.
    #[arg(long, value_name = "FILE")]
    pub plugin: Option<PathBuf>,
    /// Concurrent clients for --serve.
    #[arg(long, default_value_t = 4)]
    pub clients: usize,
}

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

pub fn run(a: BenchArgs) -> Result<()> {
    if let Some(path) = &a.write_cluster {
        let n = a.nodes.first().copied().unwrap_or(5000);
        let list = kubectl_list(&synthetic_nodes(n));
        std::fs::write(path, serde_json::to_vec(&list)?)
            .map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
        println!("wrote {n} nodes and their pods to {}", path.display());
        return Ok(());
    }
    if let Some(file) = &a.plugin {
        let n = a.nodes.first().copied().unwrap_or(5000);
        return plugin_bench::run(file, n, a.seconds);
    }
    if a.serve {
        let dir = loadgen::plugins_dir(a.plugins_dir.clone())?;
        return loadgen::run(&dir, &a.nodes, a.seconds, a.clients.max(1));
    }
    let config = match &a.config {
        Some(path) => Config::load(path)?,
        None => Config::default(),
    };
    let native = Catalog::native(&config)?;
    let wasm = if a.native_only {
        None
    } else {
        let dir = a
            .plugins_dir
            .clone()
            .or_else(default_plugins_dir)
            .ok_or_else(|| anyhow!("no plugins directory: build them (scripts/build-plugins.sh) or pass --plugins DIR"))?;
        let runtime = Arc::new(Runtime::new(
            config.limits()?,
            config.sandbox.clone(),
            CompileCache::default_dir().map(CompileCache::new),
        )?);
        Some(Catalog::load_wasm(&runtime, Some(&dir), &[], &config)?)
    };
    if a.contract {
        let catalog = wasm
            .as_ref()
            .ok_or_else(|| anyhow!("--contract needs the Wasm plugins"))?;
        return contract::run(catalog, &a.nodes);
    }
    if a.cluster_view {
        let catalog = wasm
            .as_ref()
            .ok_or_else(|| anyhow!("--cluster-view needs the Wasm plugins"))?;
        return cluster_view::run(&native, catalog, &a.nodes);
    }
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
            table_rows(
                &a,
                n,
                &snapshot,
                pods,
                &filters,
                &native,
                wasm.as_ref(),
                budget,
            )?;
        }
    }
    Ok(())
}

/// One row per --percentage for an `n`-node cluster: native and Wasm pods/s.
#[allow(clippy::too_many_arguments)]
fn table_rows(
    a: &BenchArgs,
    n: usize,
    snapshot: &Arc<Snapshot>,
    pods: &[Pod],
    filters: &[crate::config::PluginRef],
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
