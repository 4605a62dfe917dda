//! `sift bench`: pods/s of the filter phase on a deterministic synthetic
//! cluster, with the Wasm plugins and with the same predicates compiled
//! natively ([`filter_phase`]); or, instead, whole scheduling cycles under
//! two score profiles and each plugin's cost ([`scoring`],
//! [`plugin_cost`]), one plugin ([`plugin_bench`]), `sift serve` under
//! load ([`loadgen`]), the contract designs ([`contract`]) or the cluster
//! view ([`cluster_view`]). A benchmark, not a test: numbers depend on the
//! machine.

pub mod cluster_view;
pub mod contract;
pub mod filter_phase;
pub mod loadgen;
pub mod plugin_bench;
pub mod plugin_cost;
pub mod scoring;

use crate::cluster::synthetic::{kubectl_list, synthetic_nodes};
use crate::config::Config;
use crate::plugins::registry::{Catalog, default_plugins_dir};
use crate::runtime::Runtime;
use crate::runtime::cache::CompileCache;
use anyhow::{Result, anyhow};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `sift bench`'s settings, as plain data (the command line's flags are
/// parsed in the CLI); each field is the flag of the same name.
#[derive(Clone, Debug)]
pub struct Options {
    pub nodes: Vec<usize>,
    pub percentage: Vec<u32>,
    pub pods: usize,
    pub seconds: f64,
    pub parallelism: usize,
    pub plugins_dir: Option<PathBuf>,
    pub config: Option<PathBuf>,
    pub native_only: bool,
    pub wasm_only: bool,
    pub write_cluster: Option<PathBuf>,
    pub contract: bool,
    pub cluster_view: bool,
    pub scoring: bool,
    pub serve: bool,
    pub plugin: Option<PathBuf>,
    pub clients: usize,
}

/// Runs the benchmark the options ask for (the filter phase unless one of
/// the "instead" flags is set).
pub fn run(a: Options) -> Result<()> {
    if let Some(path) = &a.write_cluster {
        return write_cluster(path, a.nodes.first().copied().unwrap_or(5000));
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
        Some(wasm_catalog(&a, &config)?)
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
    if a.scoring {
        return scoring::run(&a, &config, a.config.is_some(), &native, wasm.as_ref());
    }
    filter_phase::run(&a, &config, &native, wasm.as_ref())
}

/// `--write-cluster`: the synthetic cluster of `n` nodes as a kubectl List.
fn write_cluster(path: &Path, n: usize) -> Result<()> {
    let list = kubectl_list(&synthetic_nodes(n));
    std::fs::write(path, serde_json::to_vec(&list)?)
        .map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
    println!("wrote {n} nodes and their pods to {}", path.display());
    Ok(())
}

/// The Wasm plugins of `--plugins` (or the bundled ones), compiled through
/// the default cache.
fn wasm_catalog(a: &Options, config: &Config) -> Result<Catalog> {
    let dir = a
        .plugins_dir
        .clone()
        .or_else(default_plugins_dir)
        .ok_or_else(|| {
            anyhow!(
                "no plugins directory: build them (scripts/build-plugins.sh) or pass --plugins DIR"
            )
        })?;
    let runtime = Arc::new(Runtime::new(
        config.limits()?,
        config.sandbox.clone(),
        CompileCache::default_dir().map(CompileCache::new),
    )?);
    Catalog::load_wasm(&runtime, Some(&dir), &[], config)
}
