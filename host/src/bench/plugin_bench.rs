//! `sift bench --plugin FILE`: what one component costs, for comparing
//! languages: its size, first compile, load from the on-disk cache, one
//! instantiation, and µs per pod when it alone filters 5,000 nodes (or,
//! for a plugin that scores and does not filter, scores them: PreScore,
//! Score and NormalizeScore).
//!
//! The cluster: synthetic nodes, a third of them labelled with a GPU model
//! of the openb trace (`alibabacloud.com/gpu-card-model`); the pods ask for
//! GPUs, half of them with a list of accepted models, so GpuModel-like
//! plugins do real work, and prefer a model (`sift.io/preferred-labels`),
//! so LabelMatch-like scorers do too. Other plugins run on the same
//! inputs.

use crate::cluster::Snapshot;
use crate::cluster::synthetic::{synthetic_nodes, synthetic_pods};
use crate::config::Config;
use crate::config::EngineOptions;
use crate::contract::WasmPlugin;
use crate::engine::Engine;
use crate::engine::plugin::{ConfiguredPlugin, Cycle, Plugin};
use crate::runtime::Runtime;
use crate::runtime::cache::CompileCache;
use anyhow::{Result, anyhow};
use sift_sdk::{ExtensionPoints, Labels, Pod};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

const MODELS: [&str; 6] = ["T4", "G2", "P100", "V100M16", "V100M32", "G3"];
const ACCEPTED: [&str; 4] = ["T4", "V100M16.V100M32", "P100.V100M16.V100M32", "G2.G3"];

pub fn run(file: &Path, nodes: usize, seconds: f64) -> Result<()> {
    let (plugin, load) = load(file)?;
    let snapshot = gpu_cluster(nodes)?;
    let pods = gpu_pods();
    let (per_pod, done, errors) = per_pod(&plugin, &snapshot, &pods, seconds)?;
    let id = plugin.identity();
    println!("plugin:          {} ({})", id.name, file.display());
    println!("size:            {:.1} KiB", id.size as f64 / 1024.0);
    println!(
        "first compile:   {:.1} ms",
        load.first_compile.as_secs_f64() * 1e3
    );
    println!(
        "cached load:     {:.1} ms",
        load.cached_load.as_secs_f64() * 1e3
    );
    println!(
        "instantiate:     {:.2} ms",
        load.instantiate.as_secs_f64() * 1e3
    );
    let what = if scores_only(&plugin) {
        "scoring"
    } else {
        "over"
    };
    println!(
        "per pod:         {:.0} µs {what} {nodes} nodes ({done} pods{})",
        per_pod.as_secs_f64() * 1e6,
        if errors > 0 {
            format!(", {errors} cycle errors")
        } else {
            String::new()
        }
    );
    Ok(())
}

/// What it costs to get the component running.
struct LoadCosts {
    /// Compiled with no cache.
    first_compile: Duration,
    /// Loaded from a fresh on-disk cache, filled once before.
    cached_load: Duration,
    /// One instance, on average over a few.
    instantiate: Duration,
}

/// Loads the component three ways, timing each; returns the cached load.
fn load(file: &Path) -> Result<(Arc<WasmPlugin>, LoadCosts)> {
    let config = Config::default();
    let limits = config.limits()?;
    let args_for = |_: &str| "{}".to_string();
    // First compile: no cache.
    let cold = Arc::new(Runtime::new(limits.clone(), config.sandbox.clone(), None)?);
    let plugin = WasmPlugin::load(&cold, file, &args_for)?;
    let first_compile = plugin.identity().compile_time;
    // Cached load: a fresh cache, filled once, then read.
    let cache_dir = std::env::temp_dir().join(format!("sift-plugin-bench-{}", std::process::id()));
    let cached = Arc::new(Runtime::new(
        limits,
        config.sandbox.clone(),
        Some(CompileCache::new(cache_dir.clone())),
    )?);
    WasmPlugin::load(&cached, file, &args_for)?;
    let started = Instant::now();
    let plugin = Arc::new(WasmPlugin::load(&cached, file, &args_for)?);
    let cached_load = started.elapsed();
    let _ = std::fs::remove_dir_all(&cache_dir);
    let started = Instant::now();
    const INSTANCES: u32 = 5;
    for _ in 0..INSTANCES {
        plugin
            .instantiate_once()
            .map_err(|e| anyhow!("{}", e.message))?;
    }
    let instantiate = started.elapsed() / INSTANCES;
    let costs = LoadCosts {
        first_compile,
        cached_load,
        instantiate,
    };
    Ok((plugin, costs))
}

/// Synthetic nodes, every third labelled with a GPU model.
fn gpu_cluster(nodes: usize) -> Result<Arc<Snapshot>> {
    let mut cluster = synthetic_nodes(nodes);
    for (i, n) in cluster.iter_mut().enumerate() {
        if i % 3 == 0 {
            let mut pairs = n.labels.clone().into_pairs();
            pairs.push((
                "alibabacloud.com/gpu-card-model".into(),
                MODELS[i / 3 % MODELS.len()].into(),
            ));
            n.labels = Labels::new(pairs);
        }
    }
    Ok(Arc::new(Snapshot::from_nodes(cluster)?))
}

/// Whether the plugin scores and does not filter: what the benchmark
/// then times is its scoring.
fn scores_only(plugin: &WasmPlugin) -> bool {
    let points = plugin.extension_points();
    points.contains(ExtensionPoints::SCORE) && !points.contains(ExtensionPoints::FILTER)
}

/// Pods asking for a GPU, every other one with a list of accepted models;
/// each prefers one model and any GPU-model label.
fn gpu_pods() -> Vec<Pod> {
    synthetic_pods(400)
        .into_iter()
        .enumerate()
        .map(|(i, mut p)| {
            p.requests
                .scalar
                .push(("alibabacloud.com/gpu-milli".into(), 1000));
            if i % 2 == 0 {
                let mut labels = p.labels.clone().into_pairs();
                labels.push(("sift.io/gpu-models".into(), ACCEPTED[i / 2 % 4].into()));
                p.labels = Labels::new(labels);
            }
            let mut annotations = p.annotations.clone().into_pairs();
            annotations.push((
                "sift.io/preferred-labels".into(),
                format!(
                    "alibabacloud.com/gpu-card-model={},alibabacloud.com/gpu-card-model",
                    MODELS[i % MODELS.len()]
                ),
            ));
            p.annotations = Labels::new(annotations);
            p
        })
        .collect()
}

/// Cycles with `plugin` alone over every node, for `seconds` (at least 10
/// pods) after a warm-up: (time per pod, pods, cycles that failed).
fn per_pod(
    plugin: &Arc<WasmPlugin>,
    snapshot: &Arc<Snapshot>,
    pods: &[Pod],
    seconds: f64,
) -> Result<(Duration, u32, u32)> {
    if scores_only(plugin) {
        let all = snapshot.order().to_vec();
        let mut cycle = |p: &Pod| {
            let cycle = Cycle::new(p.clone(), snapshot.clone());
            plugin.score(&cycle, &all).is_err()
        };
        return Ok(timed(pods, seconds, &mut cycle));
    }
    let options = EngineOptions {
        percentage_of_nodes_to_score: 100,
        ..EngineOptions::default()
    };
    let mut engine = Engine::new(
        vec![ConfiguredPlugin {
            plugin: plugin.clone() as Arc<dyn Plugin>,
            ignorable: false,
        }],
        options,
    )?;
    let mut cycle = |p: &Pod| {
        engine
            .find_nodes_that_fit(snapshot, p.clone())
            .error
            .is_some()
    };
    Ok(timed(pods, seconds, &mut cycle))
}

/// Runs `cycle` (which says whether it failed) over `pods` in turn for
/// `seconds` (at least 10 pods) after a warm-up of 10: (time per pod,
/// pods, cycles that failed).
fn timed(pods: &[Pod], seconds: f64, cycle: &mut dyn FnMut(&Pod) -> bool) -> (Duration, u32, u32) {
    for p in pods.iter().take(10) {
        cycle(p);
    }
    let budget = Duration::from_secs_f64(seconds);
    let started = Instant::now();
    let mut done = 0u32;
    let mut errors = 0;
    for p in pods.iter().cycle() {
        if cycle(p) {
            errors += 1;
        }
        done += 1;
        if started.elapsed() > budget && done >= 10 {
            break;
        }
    }
    (started.elapsed() / done, done, errors)
}
