//! Finding plugins: the components in a plugins directory (or the built-in
//! predicates compiled natively), by the name each one declares, and the
//! configured selection of them in order.

use crate::config::batch::NodeOrderWeights;
use crate::config::{Config, PluginRef};
use crate::contract::WasmPlugin;
use crate::engine::plugin::{ConfiguredPlugin, Plugin};
use crate::engine::schedule::WeightedScorer;
use crate::plugins::native::{BuiltinPlugin, builtin};
use crate::runtime::Runtime;
use anyhow::{Context, Result, anyhow, bail};
use sift_sdk::ExtensionPoints;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where the bundled plugins are when no directory is configured:
/// `$SIFT_PLUGINS_DIR`, else `plugins/` beside the directory holding the
/// `sift` executable (so `target/release/sift` finds `target/plugins/`,
/// and an installed `bin/sift` finds `plugins/` next to `bin/`).
pub fn default_plugins_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("SIFT_PLUGINS_DIR") {
        return Some(PathBuf::from(d));
    }
    let exe = std::env::current_exe().ok()?;
    let bin_dir = exe.parent()?;
    let candidates = [
        bin_dir.parent().map(|p| p.join("plugins")),
        Some(bin_dir.join("plugins")),
    ];
    candidates.into_iter().flatten().find(|p| p.is_dir())
}

/// The `.wasm` files of a directory, sorted.
pub fn component_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read plugins directory {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "wasm") && p.is_file())
        .collect();
    files.sort();
    Ok(files)
}

/// Loaded plugins by name.
#[derive(Default)]
pub struct Catalog {
    plugins: BTreeMap<String, Arc<dyn Plugin>>,
    wasm: Vec<Arc<WasmPlugin>>,
    /// The names the `extra` files declare, in the order given.
    extra: Vec<String>,
}

impl Catalog {
    /// Loads every component of `dir` and each of `extra` (which may
    /// replace a plugin of the same name from `dir`, saying so on stderr).
    /// Two components of `dir` declaring one name are an error unless the
    /// config's `pluginFiles` names the one that serves it.
    pub fn load_wasm(
        runtime: &Arc<Runtime>,
        dir: Option<&Path>,
        extra: &[PathBuf],
        config: &Config,
    ) -> Result<Catalog> {
        let (catalog, mut unloadable) = Catalog::load_wasm_listing(runtime, dir, extra, config)?;
        match unloadable.is_empty() {
            true => Ok(catalog),
            false => Err(unloadable.swap_remove(0).1),
        }
    }

    /// As [`Catalog::load_wasm`], but a file that cannot be loaded is
    /// returned with its error instead of failing the whole catalog
    /// (`sift plugins list` shows the good ones and why the others fail).
    pub fn load_wasm_listing(
        runtime: &Arc<Runtime>,
        dir: Option<&Path>,
        extra: &[PathBuf],
        config: &Config,
    ) -> Result<(Catalog, Vec<(PathBuf, anyhow::Error)>)> {
        let mut unloadable = Vec::new();
        let mut catalog = Catalog::default();
        let mut origin: BTreeMap<String, PathBuf> = BTreeMap::new();
        let dir_files = match dir {
            Some(d) => component_files(d)?,
            None => Vec::new(),
        };
        if let Some(d) = dir {
            for (name, file) in &config.plugin_files {
                if !dir_files.contains(&d.join(file)) {
                    bail!(
                        "pluginFiles gives {name:?} to {}, which is not a component in {}",
                        file.display(),
                        d.display()
                    );
                }
            }
        }
        let args_for = |name: &str| config.args_for(name);
        for (path, is_extra) in dir_files
            .iter()
            .map(|p| (p, false))
            .chain(extra.iter().map(|p| (p, true)))
        {
            let plugin = match WasmPlugin::load(runtime, path, &args_for) {
                Ok(p) => Arc::new(p),
                Err(e) => {
                    unloadable.push((path.clone(), e));
                    continue;
                }
            };
            let name = plugin.identity().name.clone();
            let pinned = match (dir, config.plugin_files.get(&name)) {
                (Some(d), Some(file)) if !is_extra => Some(d.join(file)),
                _ => None,
            };
            if let Some(pinned) = &pinned
                && pinned != path
            {
                tracing::debug!(plugin = %name, path = %path.display(), "not serving: pluginFiles names {}", pinned.display());
                continue;
            }
            if let Some(prev) = origin.get(&name) {
                if is_extra {
                    tracing::warn!(
                        "--plugin {}: declares {name:?}, so it replaces {}",
                        path.display(),
                        prev.display()
                    );
                } else if pinned.is_none() {
                    bail!(
                        "two components declare the plugin name {name:?}: {} and {} \
                         (remove one, or name the one that serves it in the config: \
                         pluginFiles: {{{name}: FILE}})",
                        prev.display(),
                        path.display()
                    );
                }
            }
            tracing::debug!(plugin = %name, version = plugin.identity().version(), path = %path.display(), "loaded plugin");
            if is_extra && !catalog.extra.contains(&name) {
                catalog.extra.push(name.clone());
            }
            origin.insert(name.clone(), path.clone());
            catalog.wasm.retain(|p| p.identity().name != name);
            catalog.wasm.push(plugin.clone());
            catalog.plugins.insert(name, plugin);
        }
        Ok((catalog, unloadable))
    }

    /// A catalog of plugins already loaded and chosen by name (the
    /// extender's hot reload keeps its own components).
    pub fn of(plugins: impl IntoIterator<Item = (String, Arc<dyn Plugin>)>) -> Catalog {
        Catalog {
            plugins: plugins.into_iter().collect(),
            ..Catalog::default()
        }
    }

    /// The built-in predicates, compiled into the host.
    pub fn native(config: &Config) -> Result<Catalog> {
        let mut catalog = Catalog::default();
        for n in builtin() {
            let p = BuiltinPlugin::new(&n, &config.args_for(n.name))
                .map_err(|e| anyhow!("plugin {}: {e}", n.name))?;
            catalog.plugins.insert(n.name.to_string(), Arc::new(p));
        }
        Ok(catalog)
    }

    pub fn names(&self) -> Vec<&str> {
        self.plugins.keys().map(String::as_str).collect()
    }

    /// The plugins loaded from files named one by one (`--plugin FILE`),
    /// in the order given: the ones a user asked for by hand.
    pub fn extra_names(&self) -> &[String] {
        &self.extra
    }

    pub fn wasm_plugins(&self) -> &[Arc<WasmPlugin>] {
        &self.wasm
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Plugin>> {
        self.plugins.get(name)
    }

    /// The same plugins, those named in `config`'s `pluginConfig`
    /// configured with its arguments (a case file's own configuration).
    pub fn reconfigured(&self, config: &Config) -> Result<Catalog> {
        self.check_plugin_config(config)?;
        let mut plugins = self.plugins.clone();
        for pc in &config.plugin_config {
            let plugin = &self.plugins[&pc.name];
            let args = config.args_for(&pc.name);
            let configured = plugin
                .with_args(&args)
                .map_err(|e| anyhow!("pluginConfig {}: {e}", pc.name))?;
            plugins.insert(pc.name.clone(), configured);
        }
        Ok(Catalog {
            plugins,
            wasm: Vec::new(),
            extra: self.extra.clone(),
        })
    }

    /// The configured score plugins with their weights; each must
    /// implement Score.
    pub fn select_scorers(&self, config: &Config) -> Result<Vec<WeightedScorer>> {
        config
            .score_plugins()
            .into_iter()
            .map(|(name, weight)| {
                Ok(WeightedScorer {
                    plugin: self.scorer(&name)?.clone(),
                    weight,
                })
            })
            .collect()
    }

    /// The loaded plugin `name`, which must score: what `plugins.score`
    /// may name.
    fn scorer(&self, name: &str) -> Result<&Arc<dyn Plugin>> {
        let plugin = self.plugins.get(name).ok_or_else(|| {
            anyhow!(
                "score plugin {name:?} is configured but not loaded (loaded: {})",
                self.names().join(", ")
            )
        })?;
        if !plugin.extension_points().contains(ExtensionPoints::SCORE) {
            bail!(
                "plugin {name:?} is configured under plugins.score but does not score (it implements {})",
                plugin.extension_points()
            );
        }
        Ok(plugin)
    }

    /// Batch mode's score plugins: Volcano's `nodeorder` runs
    /// kube-scheduler's scorers with the weights of its arguments and its
    /// own fixed arguments for the resource scorers ([`NodeOrderWeights`]);
    /// those stand for the default score set, which `plugins.score` then
    /// edits as in scheduler mode (`disabled` removes, `enabled` adds or
    /// re-weights, with the plugin as configured). A mapped plugin that
    /// is not loaded or does not score is left out. No `nodeorder`:
    /// no scorers at all (the schedulers check).
    pub fn select_batch_scorers(
        &self,
        config: &Config,
        weights: Option<NodeOrderWeights>,
    ) -> Result<Vec<WeightedScorer>> {
        let disabled = &config.plugins.score.disabled;
        let all_disabled = disabled.iter().any(|p| p.name == "*");
        let mut out: Vec<WeightedScorer> = Vec::new();
        for (name, weight, args) in weights.unwrap_or_default().score_plugins() {
            if all_disabled || disabled.iter().any(|p| p.name == name) {
                continue;
            }
            let Some(plugin) = self.plugins.get(name) else {
                continue;
            };
            if !plugin.extension_points().contains(ExtensionPoints::SCORE) {
                continue;
            }
            let plugin = match args {
                Some(a) => plugin
                    .with_args(&a.to_string())
                    .map_err(|e| anyhow!("nodeorder: {e}"))?,
                None => plugin.clone(),
            };
            out.push(WeightedScorer { plugin, weight });
        }
        for e in &config.plugins.score.enabled {
            let weight = e.weight.filter(|w| *w != 0).unwrap_or(1);
            let existing: Vec<usize> = out
                .iter()
                .enumerate()
                .filter(|(_, s)| s.plugin.name() == e.name)
                .map(|(i, _)| i)
                .collect();
            if existing.is_empty() {
                out.push(WeightedScorer {
                    plugin: self.scorer(&e.name)?.clone(),
                    weight,
                });
            } else {
                for i in existing {
                    out[i].weight = weight;
                }
            }
        }
        Ok(out)
    }

    /// Checks that every `pluginConfig` entry names a loaded plugin (a
    /// misspelt name would otherwise silently leave a plugin unconfigured).
    pub fn check_plugin_config(&self, config: &Config) -> Result<()> {
        for pc in &config.plugin_config {
            if !self.plugins.contains_key(&pc.name) {
                bail!(
                    "pluginConfig names {:?}, which is not a loaded plugin (loaded: {})",
                    pc.name,
                    self.names().join(", ")
                );
            }
        }
        Ok(())
    }

    /// The configured plugins, in order; every name must be loaded.
    pub fn select(&self, refs: &[PluginRef]) -> Result<Vec<ConfiguredPlugin>> {
        refs.iter()
            .map(|r| {
                let plugin = self.plugins.get(&r.name).ok_or_else(|| {
                    anyhow!(
                        "filter plugin {:?} is configured but not loaded (loaded: {})",
                        r.name,
                        if self.plugins.is_empty() {
                            "none".to_string()
                        } else {
                            self.names().join(", ")
                        }
                    )
                })?;
                if !plugin.extension_points().contains(ExtensionPoints::FILTER) {
                    bail!(
                        "plugin {:?} is configured as a filter but does not filter (it implements {}): list it under plugins.score",
                        r.name,
                        plugin.extension_points()
                    );
                }
                Ok(ConfiguredPlugin {
                    plugin: plugin.clone(),
                    ignorable: r.ignorable,
                })
            })
            .collect()
    }
}
