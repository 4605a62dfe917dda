//! Hot loading for `sift serve`: the plugins directory and the config file
//! are rescanned (on a file event, SIGHUP, or at start); new or changed
//! components are compiled (through the on-disk cache), validated off the
//! request path, and a new [`Profile`] is swapped in atomically.
//!
//! A cycle loads the current profile once and keeps that `Arc` to its end,
//! so it finishes on the plugin versions it started with. A component that
//! fails validation never replaces the version serving under that file;
//! its failure is kept for `/status`, logged, and counted.

use crate::cluster::Snapshot;
use crate::config::{Config, PluginRef};
use crate::contract::WasmPlugin;
use crate::engine::plugin::{Cycle, Plugin, PrepareOutcome};
use crate::engine::{CallObserver, Engine};
use crate::framework::{Framework, Mode, Overrides};
use crate::plugins::registry::Catalog;
use crate::plugins::registry::component_files;
use crate::runtime::Runtime;
use crate::serve::metrics::Metrics;
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
    /// Why this profile should not take traffic (`/readyz` says 503), e.g.
    /// an enabled plugin name that two components declare.
    pub unready: Vec<String>,
    /// What the engine was built from, so that a live scheduler can build
    /// its whole framework (scores, reserve) from the same swap.
    pub source: Option<Arc<ProfileSource>>,
}

impl Profile {
    /// A profile that never changes, over `catalog` (sift's built-in
    /// plugins: `sift schedule --native` measures the host without Wasm).
    pub fn fixed(config: &Config, catalog: Catalog, metrics: Arc<Metrics>) -> Result<Profile> {
        let overrides = Overrides::default();
        let engine = Framework::build(config, &catalog, Mode::Extender, &overrides)
            .and_then(Framework::into_filter_engine)?
            .with_observer(metrics as Arc<dyn CallObserver>);
        let plugins = config
            .filter_plugins()
            .into_iter()
            .map(|r| PluginVersion {
                name: r.name,
                version: "native".into(),
                contract: "native".into(),
                file: String::new(),
                enabled: true,
                ignorable: r.ignorable,
            })
            .collect();
        Ok(Profile {
            engine,
            generation: 1,
            plugins,
            unready: Vec::new(),
            source: Some(Arc::new(ProfileSource {
                config: config.clone(),
                catalog,
                overrides,
            })),
        })
    }
}

/// The loaded plugins and the configuration a [`Profile`] was built from.
pub struct ProfileSource {
    pub config: Config,
    pub catalog: Catalog,
    pub overrides: Overrides,
}

/// A plugin as `/status` shows it.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct PluginVersion {
    pub name: String,
    /// First 12 hex digits of the component's SHA-256.
    pub version: String,
    /// The contract version the component implements, e.g. "0.2.0".
    pub contract: String,
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
    /// What is wrong now, per component file or plugin name: recomputed
    /// at every rescan, so files removed and plugins no longer enabled
    /// drop out.
    pub errors: BTreeMap<String, String>,
}

/// A version of a file that failed to load, and why.
struct Rejected {
    sha256: String,
    /// `pluginConfig` as it was: fixing a plugin's arguments retries it.
    plugin_config: String,
    message: String,
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
    /// Whether `config` was read from `config_path` by this reloader: the
    /// first read (at start) takes the file as given, later ones warn
    /// about settings that need a restart.
    config_path_loaded: bool,
    loaded: BTreeMap<PathBuf, Loaded>,
    /// Files whose current bytes failed to load under the current
    /// `pluginConfig`: not tried again until either changes.
    rejected: BTreeMap<PathBuf, Rejected>,
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
            unready: Vec::new(),
            source: None,
        };
        let mut r = Reloader {
            runtime,
            dir,
            config_path,
            config,
            config_path_loaded: false,
            loaded: BTreeMap::new(),
            rejected: BTreeMap::new(),
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

    /// Publishes what is wrong now, logging only what is new or changed
    /// since the last rescan (a persistent problem is logged once).
    fn publish(&self, problems: BTreeMap<String, String>) {
        let Ok(mut s) = self.status.lock() else {
            return;
        };
        for (key, message) in &problems {
            if s.errors.get(key) != Some(message) {
                tracing::error!(source = %key, "{message}");
            }
        }
        for key in s.errors.keys().filter(|k| !problems.contains_key(*k)) {
            tracing::info!(source = %key, "resolved");
        }
        s.errors = problems;
        s.generation = self.current.load().generation;
        s.last_rescan = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
    }

    /// Re-reads the config and the components; swaps in a new profile if
    /// anything a cycle would see changed. Returns whether it swapped.
    pub fn rescan(&mut self) -> bool {
        self.reload_config();
        let mut problems = BTreeMap::new();
        let files = match component_files(&self.dir) {
            Ok(f) => f,
            Err(e) => {
                problems.insert(self.dir.display().to_string(), format!("{e:#}"));
                self.publish(problems);
                return false;
            }
        };
        // Removed files unload their plugins.
        self.loaded.retain(|path, l| {
            let keep = files.contains(path);
            if !keep {
                tracing::info!(plugin = %l.plugin.identity().name, file = %path.display(), "component removed: plugin unloaded");
            }
            keep
        });
        self.rejected.retain(|path, _| files.contains(path));
        for path in &files {
            self.load_file(path);
        }
        for (path, r) in &self.rejected {
            problems.insert(path.display().to_string(), r.message.clone());
        }
        let swapped = self.swap_profile(&mut problems);
        self.publish(problems);
        swapped
    }

    fn reload_config(&mut self) {
        let Some(path) = &self.config_path else {
            return;
        };
        match Config::load(path) {
            Ok(new) => {
                if self.config_path_loaded
                    && (new.plugins_dir != self.config.plugins_dir
                        || new.cache_dir != self.config.cache_dir
                        || new.limits != self.config.limits
                        || new.sandbox != self.config.sandbox)
                {
                    tracing::warn!(
                        config = %path.display(),
                        "pluginsDir, cacheDir, limits and sandbox take effect on restart; \
                         the rest of the change applies now"
                    );
                }
                self.config = new;
                self.config_path_loaded = true;
                if let Ok(mut s) = self.status.lock() {
                    s.config_error = None;
                }
            }
            Err(e) => {
                let message = format!("{e:#}");
                if let Ok(mut s) = self.status.lock()
                    && s.config_error.as_ref() != Some(&message)
                {
                    tracing::error!("config not reloaded, the previous one stays: {message}");
                    self.metrics.reload("config", false);
                    s.config_error = Some(message);
                }
            }
        }
    }

    /// Loads `path` if it is new or changed (content or arguments); on
    /// failure the version loaded before, if any, stays.
    fn load_file(&mut self, path: &Path) {
        let bytes = match read_stable(path) {
            Ok(Some(b)) => b,
            Ok(None) => return, // still being written: a later event rescans
            Err(e) => {
                self.rejected.insert(
                    path.to_path_buf(),
                    Rejected {
                        sha256: String::new(),
                        plugin_config: String::new(),
                        message: e,
                    },
                );
                return;
            }
        };
        let sha256 = hex(&Sha256::digest(&bytes));
        if let Some(l) = self.loaded.get(path)
            && l.sha256 == sha256
            && l.args == self.config.args_for(&l.plugin.identity().name)
        {
            // Back to the version serving: an earlier failure is moot.
            self.rejected.remove(path);
            return;
        }
        // A failure already reported for these very bytes and arguments is
        // not retried.
        let plugin_config = format!("{:?}", self.config.plugin_config);
        if self
            .rejected
            .get(path)
            .is_some_and(|r| r.sha256 == sha256 && r.plugin_config == plugin_config)
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
                tracing::info!(plugin = %name, version = plugin.identity().version(), file = %path.display(), "plugin loaded");
                self.metrics.reload(&name, true);
                self.rejected.remove(path);
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
                self.metrics.reload(&plugin, false);
                let message = format!("version {} rejected: {e:#}{kept}", &sha256[..12]);
                self.rejected.insert(
                    path.to_path_buf(),
                    Rejected {
                        sha256,
                        plugin_config,
                        message,
                    },
                );
            }
        }
    }

    /// Which loaded component serves each plugin name. A name declared by
    /// several components is served by the one the config's `pluginFiles`
    /// names, else by none of them (the order files happen to be read in
    /// must not decide); each refused file gets a problem saying why.
    fn choose_components(
        &self,
        problems: &mut BTreeMap<String, String>,
    ) -> BTreeMap<String, (&PathBuf, &Loaded)> {
        let mut by_name: BTreeMap<String, Vec<(&PathBuf, &Loaded)>> = BTreeMap::new();
        for (path, l) in &self.loaded {
            by_name
                .entry(l.plugin.identity().name.clone())
                .or_default()
                .push((path, l));
        }
        let mut chosen = BTreeMap::new();
        for (name, candidates) in by_name {
            if let Some(file) = self.config.plugin_files.get(&name) {
                let pinned = self.dir.join(file);
                for (path, l) in candidates {
                    if *path == pinned {
                        chosen.insert(name.clone(), (path, l));
                    } else {
                        problems.insert(
                            path.display().to_string(),
                            format!(
                                "declares the plugin name {name:?}, which the config's \
                                 pluginFiles gives to {}: not serving",
                                file.display()
                            ),
                        );
                    }
                }
                continue;
            }
            if let [(path, l)] = candidates[..] {
                chosen.insert(name, (path, l));
                continue;
            }
            let files: Vec<String> = candidates
                .iter()
                .map(|(p, _)| p.display().to_string())
                .collect();
            for (path, _) in &candidates {
                problems.insert(
                    path.display().to_string(),
                    format!(
                        "declares the plugin name {name:?}, as do {} components ({}): none of \
                         them serves it until the others are removed or the config's \
                         pluginFiles says which file serves {name:?}",
                        files.len() - 1,
                        files.join(", ")
                    ),
                );
            }
        }
        chosen
    }

    /// Builds the profile the config asks for from the loaded plugins and
    /// swaps it in if it differs from the current one.
    fn swap_profile(&mut self, problems: &mut BTreeMap<String, String>) -> bool {
        let by_name = self.choose_components(problems);
        let refs: Vec<PluginRef> = self.config.filter_plugins();
        let mut present = Vec::new();
        let mut versions = Vec::new();
        let mut unready = Vec::new();
        for r in &refs {
            match by_name.get(&r.name) {
                Some((path, l)) => {
                    present.push(r.clone());
                    versions.push(PluginVersion {
                        name: r.name.clone(),
                        version: l.plugin.identity().version().to_string(),
                        contract: l.plugin.identity().contract.to_string(),
                        file: path.display().to_string(),
                        enabled: true,
                        ignorable: r.ignorable,
                    });
                }
                None => {
                    let declared = self
                        .loaded
                        .values()
                        .any(|l| l.plugin.identity().name == r.name);
                    let message = if declared {
                        unready.push(format!(
                            "the enabled plugin {:?} has no component chosen to serve it",
                            r.name
                        ));
                        "enabled in the config, but the components declaring it are refused \
                         (see their files); cycles run without it"
                    } else {
                        "enabled in the config but no component declares it; \
                         cycles run without it"
                    };
                    problems.insert(r.name.clone(), message.to_string());
                }
            }
        }
        for (name, (path, l)) in &by_name {
            if !refs.iter().any(|r| &r.name == name) {
                versions.push(PluginVersion {
                    name: name.clone(),
                    version: l.plugin.identity().version().to_string(),
                    contract: l.plugin.identity().contract.to_string(),
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
            && current.unready == unready
            && current.engine.options().always_check_all_predicates
                == options.always_check_all_predicates
            && current.engine.options().parallelism == options.parallelism
        {
            return false;
        }
        let catalog = Catalog::of(
            by_name
                .iter()
                .map(|(name, (_, l))| (name.clone(), l.plugin.clone() as Arc<dyn Plugin>)),
        );
        let overrides = Overrides {
            filters: Some(present),
            ..Overrides::default()
        };
        let built = Framework::build(&self.config, &catalog, Mode::Extender, &overrides);
        let engine = match built.and_then(Framework::into_filter_engine) {
            Ok(e) => e.with_observer(self.metrics.clone() as Arc<dyn CallObserver>),
            Err(e) => {
                problems.insert("engine".into(), format!("{e:#}"));
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
            unready,
            source: Some(Arc::new(ProfileSource {
                config: self.config.clone(),
                catalog,
                overrides,
            })),
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
    // Size and header first: a stray large file is never held.
    let bytes = crate::runtime::read_component(path).map_err(|e| format!("{e:#}"))?;
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
    // The whole objects too, as kubectl prints them, for plugins that read
    // them (DynamicResources and NodeDeclaredFeatures read the pod's): a
    // component that errs without one would be refused, and its filter
    // would then not run at all.
    pod.object = Some(
        serde_json::json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": pod.name, "namespace": pod.namespace},
            "spec": {"nodeSelector": {hostname.0: hostname.1},
                     "containers": [{"name": "smoke", "image": "smoke",
                         "ports": [{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}],
                         "resources": {"requests": {"cpu": "100m"}}}]}})
        .to_string()
        .into(),
    );
    node.object = Some(
        serde_json::json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": node.name, "labels": {hostname.0: hostname.1}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
        .to_string()
        .into(),
    );
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
