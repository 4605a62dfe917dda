//! Hot loading for `sift serve`: the plugins directory and the config file
//! are rescanned (on a file event, SIGHUP, or at start); new or changed
//! components are compiled (through the on-disk cache), validated off the
//! request path, and a new [`Profile`] is swapped in atomically.
//!
//! A cycle loads the current profile once and keeps that `Arc` to its end,
//! so it finishes on the plugin versions it started with. A component that
//! fails validation never replaces the version serving under that file;
//! its failure is kept for `/status`, logged, and counted.

use crate::config::{Config, PluginRef};
use crate::engine::{CallObserver, Engine};
use crate::metrics::Metrics;
use crate::plugin::{ConfiguredPlugin, Cycle, FilterPlugin, PrepareOutcome};
use crate::registry::component_files;
use crate::runtime::Runtime;
use crate::snapshot::Snapshot;
use crate::wasm::WasmPlugin;
use anyhow::{Result, anyhow};
use arc_swap::ArcSwap;
use serde::Serialize;
use sha2::{Digest, Sha256};
use sift_sdk::{Code, Node, Pod};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// The plugins a cycle runs, in order, with the engine that runs them
/// (kube-scheduler's scheduling profile). Immutable: replaced, not changed.
pub struct Profile {
    pub engine: Engine,
    /// Increases with every swap.
    pub generation: u64,
    pub plugins: Vec<PluginVersion>,
}

/// A plugin as `/status` shows it.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct PluginVersion {
    pub name: String,
    /// First 12 hex digits of the component's SHA-256.
    pub version: String,
    pub file: String,
    pub enabled: bool,
    pub ignorable: bool,
}

/// What the last rescan found wrong, for `/status`.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReloadStatus {
    pub generation: u64,
    /// Seconds since the Unix epoch of the last rescan.
    pub last_rescan: u64,
    pub config_error: Option<String>,
    /// The last failure per component file or plugin name; cleared when a
    /// later version loads.
    pub errors: BTreeMap<String, String>,
}

/// A component loaded from a file.
struct Loaded {
    sha256: String,
    args: String,
    plugin: Arc<WasmPlugin>,
}

pub struct Reloader {
    runtime: Arc<Runtime>,
    dir: PathBuf,
    config_path: Option<PathBuf>,
    /// The last valid configuration.
    config: Config,
    loaded: BTreeMap<PathBuf, Loaded>,
    current: Arc<ArcSwap<Profile>>,
    status: Arc<Mutex<ReloadStatus>>,
    metrics: Arc<Metrics>,
}

impl Reloader {
    /// Loads everything once. Broken components are reported and skipped;
    /// an unreadable config or directory is an error.
    pub fn start(
        runtime: Arc<Runtime>,
        dir: PathBuf,
        config_path: Option<PathBuf>,
        config: Config,
        metrics: Arc<Metrics>,
    ) -> Result<Reloader> {
        component_files(&dir)?;
        let status = Arc::new(Mutex::new(ReloadStatus::default()));
        let empty = Profile {
            engine: Engine::new(Vec::new(), config.engine_options())?,
            generation: 0,
            plugins: Vec::new(),
        };
        let mut r = Reloader {
            runtime,
            dir,
            config_path,
            config,
            loaded: BTreeMap::new(),
            current: Arc::new(ArcSwap::from_pointee(empty)),
            status,
            metrics,
        };
        r.rescan();
        Ok(r)
    }

    pub fn profile(&self) -> Arc<ArcSwap<Profile>> {
        self.current.clone()
    }

    pub fn status(&self) -> Arc<Mutex<ReloadStatus>> {
        self.status.clone()
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    fn set_error(&self, key: &str, error: Option<String>) {
        if let Ok(mut s) = self.status.lock() {
            match error {
                Some(e) => s.errors.insert(key.to_string(), e),
                None => s.errors.remove(key),
            };
        }
    }

    /// Re-reads the config and the components; swaps in a new profile if
    /// anything a cycle would see changed. Returns whether it swapped.
    pub fn rescan(&mut self) -> bool {
        self.reload_config();
        let files = match component_files(&self.dir) {
            Ok(f) => f,
            Err(e) => {
                tracing::error!("{e:#}");
                self.set_error(&self.dir.display().to_string(), Some(format!("{e:#}")));
                return false;
            }
        };
        self.set_error(&self.dir.display().to_string(), None);
        // Removed files unload their plugins.
        self.loaded.retain(|path, l| {
            let keep = files.contains(path);
            if !keep {
                tracing::info!(plugin = %l.plugin.identity().name, file = %path.display(), "component removed: plugin unloaded");
            }
            keep
        });
        for path in &files {
            self.load_file(path);
        }
        let swapped = self.swap_profile();
        if let Ok(mut s) = self.status.lock() {
            s.generation = self.current.load().generation;
            s.last_rescan = SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
        }
        swapped
    }

    fn reload_config(&mut self) {
        let Some(path) = &self.config_path else {
            return;
        };
        match Config::load(path) {
            Ok(new) => {
                if new.plugins_dir != self.config.plugins_dir
                    || new.cache_dir != self.config.cache_dir
                    || new.limits != self.config.limits
                    || new.sandbox != self.config.sandbox
                {
                    tracing::warn!(
                        config = %path.display(),
                        "pluginsDir, cacheDir, limits and sandbox take effect on restart; \
                         the rest of the change applies now"
                    );
                }
                self.config = new;
                if let Ok(mut s) = self.status.lock() {
                    s.config_error = None;
                }
            }
            Err(e) => {
                tracing::error!("config not reloaded, the previous one stays: {e:#}");
                self.metrics.reload("config", false);
                if let Ok(mut s) = self.status.lock() {
                    s.config_error = Some(format!("{e:#}"));
                }
            }
        }
    }

    /// Loads `path` if it is new or changed (content or arguments); on
    /// failure the version loaded before, if any, stays.
    fn load_file(&mut self, path: &Path) {
        let key = path.display().to_string();
        let bytes = match read_stable(path) {
            Ok(Some(b)) => b,
            Ok(None) => return, // still being written: a later event rescans
            Err(e) => {
                self.set_error(&key, Some(e));
                return;
            }
        };
        let sha256 = hex(&Sha256::digest(&bytes));
        if let Some(l) = self.loaded.get(path)
            && l.sha256 == sha256
            && l.args == self.config.args_for(&l.plugin.identity().name)
        {
            // Back to the version serving: an earlier failure is moot.
            self.set_error(&key, None);
            return;
        }
        // A failure already reported for these very bytes is not retried.
        if self
            .status
            .lock()
            .ok()
            .and_then(|s| s.errors.get(&key).cloned())
            .is_some_and(|e| e.contains(&sha256[..12]))
        {
            return;
        }
        let config = &self.config;
        let args_for = |name: &str| config.args_for(name);
        let result = WasmPlugin::from_bytes(&self.runtime, path, &bytes, &args_for)
            .and_then(|p| smoke_test(&p).map(|_| p));
        match result {
            Ok(plugin) => {
                let name = plugin.identity().name.clone();
                tracing::info!(plugin = %name, version = plugin.identity().version(), file = %key, "plugin loaded");
                self.metrics.reload(&name, true);
                self.set_error(&key, None);
                self.loaded.insert(
                    path.to_path_buf(),
                    Loaded {
                        sha256,
                        args: config.args_for(&name),
                        plugin: Arc::new(plugin),
                    },
                );
            }
            Err(e) => {
                let plugin = self
                    .loaded
                    .get(path)
                    .map(|l| l.plugin.identity().name.clone())
                    .unwrap_or_else(|| file_stem(path));
                let kept = if self.loaded.contains_key(path) {
                    "; the previous version keeps serving"
                } else {
                    ""
                };
                let message = format!("version {} rejected: {e:#}{kept}", &sha256[..12]);
                tracing::error!(plugin = %plugin, file = %key, "{message}");
                self.metrics.reload(&plugin, false);
                self.set_error(&key, Some(message));
            }
        }
    }

    /// Builds the profile the config asks for from the loaded plugins and
    /// swaps it in if it differs from the current one.
    fn swap_profile(&mut self) -> bool {
        let mut by_name: BTreeMap<String, (&PathBuf, &Loaded)> = BTreeMap::new();
        for (path, l) in &self.loaded {
            let name = l.plugin.identity().name.clone();
            if let Some((first, _)) = by_name.get(&name) {
                let message = format!(
                    "declares the plugin name {name:?}, already loaded from {}",
                    first.display()
                );
                tracing::error!(file = %path.display(), "{message}");
                if let Ok(mut s) = self.status.lock() {
                    s.errors.insert(path.display().to_string(), message);
                }
                continue;
            }
            by_name.insert(name, (path, l));
        }
        let refs: Vec<PluginRef> = self.config.filter_plugins();
        let mut plugins = Vec::new();
        let mut versions = Vec::new();
        for r in &refs {
            match by_name.get(&r.name) {
                Some((path, l)) => {
                    plugins.push(ConfiguredPlugin {
                        plugin: l.plugin.clone() as Arc<dyn FilterPlugin>,
                        ignorable: r.ignorable,
                    });
                    versions.push(PluginVersion {
                        name: r.name.clone(),
                        version: l.plugin.identity().version().to_string(),
                        file: path.display().to_string(),
                        enabled: true,
                        ignorable: r.ignorable,
                    });
                    self.set_error(&r.name, None);
                }
                None => {
                    let message = "enabled in the config but no component declares it; \
                                   cycles run without it"
                        .to_string();
                    tracing::error!(plugin = %r.name, "{message}");
                    self.set_error(&r.name, Some(message));
                }
            }
        }
        for (name, (path, l)) in &by_name {
            if !refs.iter().any(|r| &r.name == name) {
                versions.push(PluginVersion {
                    name: name.clone(),
                    version: l.plugin.identity().version().to_string(),
                    file: path.display().to_string(),
                    enabled: false,
                    ignorable: false,
                });
            }
        }
        let current = self.current.load();
        let options = self.config.engine_options();
        if current.generation > 0
            && current.plugins == versions
            && current.engine.options().always_check_all_predicates
                == options.always_check_all_predicates
            && current.engine.options().parallelism == options.parallelism
        {
            return false;
        }
        let engine = match Engine::new(plugins, options) {
            Ok(e) => e.with_observer(self.metrics.clone() as Arc<dyn CallObserver>),
            Err(e) => {
                tracing::error!("{e:#}");
                return false;
            }
        };
        let generation = current.generation + 1;
        tracing::info!(
            generation,
            plugins = %versions.iter().filter(|v| v.enabled).map(|v| format!("{}@{}", v.name, v.version)).collect::<Vec<_>>().join(" "),
            "profile swapped in"
        );
        self.current.store(Arc::new(Profile {
            engine,
            generation,
            plugins: versions,
        }));
        true
    }
}

/// Reads a file unless it changes while being read (a writer that does not
/// write-then-rename is still at work): `Ok(None)` then.
fn read_stable(path: &Path) -> Result<Option<Vec<u8>>, String> {
    let stat = |p: &Path| {
        std::fs::metadata(p)
            .map(|m| (m.len(), m.modified().ok()))
            .map_err(|e| format!("cannot read {}: {e}", p.display()))
    };
    let before = stat(path)?;
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let after = stat(path)?;
    if before != after || after.0 != bytes.len() as u64 {
        return Ok(None);
    }
    Ok(Some(bytes))
}

fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The smoke call a component must pass before it serves: prepare for a
/// plain pod and filter a plain node, each within its deadline, with no
/// Error status.
pub fn smoke_test(plugin: &WasmPlugin) -> Result<()> {
    let mut node = Node {
        name: "sift-smoke-node".into(),
        ..Node::default()
    };
    node.allocatable.milli_cpu = 4000;
    node.allocatable.memory = 8 << 30;
    node.allocatable.allowed_pod_number = 110;
    let hostname = ("kubernetes.io/hostname", "sift-smoke-node");
    node.labels = [hostname].into_iter().collect();
    // Something for each default filter to look at, so none skips.
    let mut pod = Pod {
        name: "sift-smoke-pod".into(),
        namespace: "sift-system".into(),
        node_selector: [hostname].into_iter().collect(),
        host_ports: vec![sift_sdk::HostPort {
            port: 8080,
            protocol: "TCP".into(),
            host_ip: "0.0.0.0".into(),
        }],
        ..Pod::default()
    };
    pod.requests.milli_cpu = 100;
    let snapshot = Arc::new(Snapshot::from_nodes(vec![node])?);
    let cycle = Cycle::new(pod, snapshot);
    let prepared = plugin
        .prepare(&cycle)
        .map_err(|e| anyhow!("smoke test: prepare failed: {}", e.message))?;
    match &prepared.outcome {
        PrepareOutcome::Reject(s) if s.code == Code::Error => {
            return Err(anyhow!(
                "smoke test: prepare returned Error: {}",
                s.message()
            ));
        }
        PrepareOutcome::Proceed | PrepareOutcome::Narrow(_) => {}
        // The engine would not call filter for this pod.
        PrepareOutcome::Skip | PrepareOutcome::Reject(_) => return Ok(()),
    }
    let mut rejections = Vec::new();
    prepared
        .filter
        .filter(&[0], &mut rejections)
        .map_err(|e| anyhow!("smoke test: filter failed: {}", e.message))?;
    if let Some((_, s)) = rejections.iter().find(|(_, s)| s.code == Code::Error) {
        return Err(anyhow!(
            "smoke test: filter returned Error: {}",
            s.message()
        ));
    }
    Ok(())
}
