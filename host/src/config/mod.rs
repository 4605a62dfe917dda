//! sift's configuration file, in the spirit of KubeSchedulerConfiguration.
//! Unknown keys are errors (a typo must not silently fall back to a default).
//!
//! ```yaml
//! pluginsDir: ./plugins            # default: the bundled plugins (relative to this file; ~ is $HOME)
//! schedulerName: default-scheduler # pending pods of other schedulers are not placed
//! percentageOfNodesToScore: 0      # 0 = adaptive
//! parallelism: 16                  # 1..=256
//! alwaysCheckAllPredicates: false
//! plugins:
//!   filter:
//!     disabled: [{name: NodePorts}] # or [{name: "*"}] to start from nothing
//!     enabled:                      # appended after the defaults, in order
//!       - {name: GpuModel, ignorable: true}
//! pluginFiles:                     # which file serves a name several components declare
//!   NodePorts: my_node_ports.wasm  # (relative to pluginsDir)
//!   score:                          # weights as KubeSchedulerConfiguration
//!     disabled: [{name: "*"}]       # defaults: kube-scheduler's seven (DEFAULT_SCORES)
//!     enabled: [{name: NodeResourcesFit, weight: 2}]
//! pluginConfig:
//!   - name: NodeResourcesFit
//!     args: {ignoredResources: [example.com/foo]}
//! limits: {callDeadline: 1s, memory: 256Mi}
//! sandbox: {clocks: false, random: false, stdio: false}
//! extenders:                       # HTTP extenders (see [`extenders`])
//!   - {urlPrefix: "http://127.0.0.1:8888", filterVerb: filter, ignorable: true}
//! batch:                           # `sift simulate --mode batch` (see [`batch`])
//!   actions: "allocate, backfill"
//!   tiers: [{plugins: [{name: priority}, {name: gang}]}, {plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]}]
//!   schedulePeriod: 1s
//! ```

pub mod batch;
mod engine_options;
pub mod extenders;
mod limits;

pub use engine_options::{EngineOptions, MAX_PARALLELISM, check_parallelism};
pub use extenders::ExtenderConfig;
pub use limits::{Grants, Limits};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// kube-scheduler's default filter plugins, in its default order (1.36).
pub const DEFAULT_FILTERS: [&str; 14] = [
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "PodTopologySpread",
    "InterPodAffinity",
    "DynamicResources",
    "NodeDeclaredFeatures",
];

/// Serialized ([`Config::to_yaml`]) it leaves out what is unset or at its
/// default, so a written file holds only what it chose.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Config {
    /// Accepted for kubectl-style files; not checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plugins_dir: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_dir: Option<PathBuf>,
    /// The scheduler sift answers for: `sift filter` places only pending
    /// pods whose `spec.schedulerName` is this (as a kube-scheduler
    /// profile does). Default `default-scheduler`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduler_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percentage_of_nodes_to_score: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallelism: Option<usize>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub always_check_all_predicates: bool,
    #[serde(default, skip_serializing_if = "is_default")]
    pub plugins: PluginsSection,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plugin_config: Vec<PluginConfig>,
    /// Plugin name -> component file (in the plugins directory) that
    /// serves it, for names several components declare.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub plugin_files: std::collections::BTreeMap<String, PathBuf>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub limits: LimitsSection,
    #[serde(default, skip_serializing_if = "is_default")]
    pub sandbox: Grants,
    /// HTTP extenders, called after the filters and beside the scorers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extenders: Vec<ExtenderConfig>,
    /// Batch mode's session: actions and tiers of plugins.
    #[serde(default, skip_serializing_if = "is_default")]
    pub batch: batch::BatchConfig,
}

/// Whether a field holds its default, so that serializing leaves it out.
fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// kube-scheduler's default score plugins, in its order and with its
/// weights (`default_plugins.go`). VolumeBinding's capacity score is not
/// among them (sift has no VolumeBinding).
pub const DEFAULT_SCORES: [(&str, i64); 7] = [
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodeResourcesFit", 1),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
];

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PluginsSection {
    #[serde(default, skip_serializing_if = "is_default")]
    pub filter: PluginSet,
    #[serde(default, skip_serializing_if = "is_default")]
    pub score: ScoreSet,
}

/// `plugins.score`: as `plugins.filter`, each entry with a weight.
/// (`disabled` first here and in [`PluginSet`]: a written file reads as
/// the defaults are edited, what is removed, then what is added.)
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ScoreSet {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disabled: Vec<ScoreRef>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub enabled: Vec<ScoreRef>,
}

/// A score plugin and its weight (kube-scheduler: 1 when unset or 0).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ScoreRef {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<i64>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PluginSet {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disabled: Vec<PluginRef>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub enabled: Vec<PluginRef>,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct PluginRef {
    pub name: String,
    /// An Error from this plugin is logged and ignored (the node passes it).
    #[serde(default, skip_serializing_if = "is_default")]
    pub ignorable: bool,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PluginConfig {
    pub name: String,
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub args: serde_json::Value,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LimitsSection {
    /// e.g. "1s", "250ms".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_deadline: Option<String>,
    /// e.g. "256Mi".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
}

impl Config {
    pub fn load(path: &Path) -> Result<Config> {
        let text = crate::input::read::read_text_file(path).context("cannot read the config")?;
        // The YAML dialect of the Kubernetes objects sift reads.
        let mut field = None;
        let config = serde_saphyr::with_deserializer_from_str_with_options(
            &text,
            crate::input::yaml::options(),
            |de| {
                serde_path_to_error::deserialize::<_, Option<Config>>(de).map_err(|e| {
                    field = Some(e.path().to_string());
                    e.into_inner()
                })
            },
        );
        let mut config = config
            .map_err(|e| {
                let at = crate::input::yaml::position(&e, 0);
                let what = crate::input::yaml::message(&e);
                match field.take() {
                    Some(f) if f != "?" && f != "." => {
                        anyhow::anyhow!("{}: {f}: {what}{at}", path.display())
                    }
                    _ => anyhow::anyhow!("{}: {what}{at}", path.display()),
                }
            })?
            .unwrap_or_default();
        if let Some(p) = config.percentage_of_nodes_to_score
            && p > 100
        {
            bail!(
                "{}: percentageOfNodesToScore must be 0..=100, got {p}",
                path.display()
            );
        }
        if let Some(p) = config.parallelism {
            check_parallelism(p).with_context(|| format!("{}: parallelism", path.display()))?;
        }
        // `~/` is the home directory, as in a shell; other relative
        // directories are relative to the config file.
        let base = path.parent().unwrap_or(Path::new("."));
        for dir in [&mut config.plugins_dir, &mut config.cache_dir]
            .into_iter()
            .flatten()
        {
            *dir = expand_home(dir, std::env::var_os("HOME").map(PathBuf::from))
                .with_context(|| format!("{}: {}", path.display(), dir.display()))?;
            if dir.is_relative() {
                *dir = base.join(&*dir);
            }
            // Absolute, so the same file read from another working
            // directory or by another path gives the same config.
            if dir.is_relative()
                && let Ok(cwd) = std::env::current_dir()
            {
                *dir = cwd.join(&*dir);
            }
        }
        config
            .limits()
            .with_context(|| format!("{}: limits", path.display()))?;
        config
            .check_scores()
            .with_context(|| path.display().to_string())?;
        extenders::check_extenders(&config.extenders)
            .with_context(|| path.display().to_string())?;
        Ok(config)
    }

    /// The configuration as YAML that [`Config::load`] reads back to the
    /// same values: block style, two-space indents, list items indented
    /// under their key, unset and default fields left out. Written
    /// configurations (`sift trace openb --replay`) are made this way, so
    /// they cannot drift from what sift reads.
    pub fn to_yaml(&self) -> Result<String> {
        let options = serde_saphyr::ser_options! { compact_list_indent: false };
        serde_saphyr::to_string_with_options(self, options)
            .context("cannot write the configuration as YAML")
    }

    /// `schedulerName`, or kube-scheduler's default.
    pub fn scheduler_name(&self) -> &str {
        self.scheduler_name
            .as_deref()
            .unwrap_or(crate::input::kube::DEFAULT_SCHEDULER_NAME)
    }

    pub fn engine_options(&self) -> EngineOptions {
        let d = EngineOptions::default();
        EngineOptions {
            percentage_of_nodes_to_score: self
                .percentage_of_nodes_to_score
                .unwrap_or(d.percentage_of_nodes_to_score),
            parallelism: self.parallelism.unwrap_or(d.parallelism),
            always_check_all_predicates: self.always_check_all_predicates,
            ..d
        }
    }

    pub fn limits(&self) -> Result<Limits> {
        let mut limits = Limits::default();
        if let Some(d) = &self.limits.call_deadline {
            limits.call_deadline =
                parse_duration(d).with_context(|| format!("limits.callDeadline {d:?}"))?;
        }
        if let Some(m) = &self.limits.memory {
            let q =
                sift_sdk::Quantity::parse(m).map_err(|e| anyhow::anyhow!("limits.memory: {e}"))?;
            if q.value() < 1 << 20 {
                bail!("limits.memory {m:?} is below 1Mi");
            }
            limits.memory_bytes = q.value() as usize;
        }
        Ok(limits)
    }

    /// The filter plugins to run, in order: the defaults minus `disabled`,
    /// then `enabled` (an enabled name already present keeps its place and
    /// takes the entry's options).
    pub fn filter_plugins(&self) -> Vec<PluginRef> {
        self.filter_plugins_from(&DEFAULT_FILTERS)
    }

    /// Batch mode's defaults: Volcano's `nodeorder` balances `nvidia.com/gpu`
    /// too (v1.11 `plugins/nodeorder/nodeorder.go`), so BalancedAllocation
    /// gets cpu, memory and nvidia.com/gpu (weight 1 each) unless
    /// `pluginConfig` sets it.
    pub fn apply_batch_defaults(&mut self) {
        if !self
            .plugin_config
            .iter()
            .any(|p| p.name == "NodeResourcesBalancedAllocation")
        {
            self.plugin_config.push(PluginConfig {
                name: "NodeResourcesBalancedAllocation".into(),
                args: serde_json::json!({"resources": [
                    {"name": "cpu", "weight": 1},
                    {"name": "memory", "weight": 1},
                    {"name": "nvidia.com/gpu", "weight": 1},
                ]}),
            });
        }
    }

    /// Batch mode's: the same edits applied to the kube-scheduler filters
    /// Volcano's `predicates` plugin runs, in its order.
    pub fn batch_filter_plugins(&self) -> Vec<PluginRef> {
        self.filter_plugins_from(&batch::VOLCANO_PREDICATES)
    }

    fn filter_plugins_from(&self, defaults: &[&str]) -> Vec<PluginRef> {
        let disabled = &self.plugins.filter.disabled;
        let all_disabled = disabled.iter().any(|p| p.name == "*");
        let mut list: Vec<PluginRef> = defaults
            .iter()
            .filter(|d| !all_disabled && !disabled.iter().any(|p| p.name == **d))
            .map(|d| PluginRef {
                name: d.to_string(),
                ignorable: false,
            })
            .collect();
        for e in &self.plugins.filter.enabled {
            match list.iter_mut().find(|p| p.name == e.name) {
                Some(existing) => existing.ignorable = e.ignorable,
                None => list.push(e.clone()),
            }
        }
        list
    }

    /// The score plugins with their weights: the defaults minus
    /// `disabled`, then `enabled` (a name already present takes the
    /// entry's weight). A weight of 0 or none is 1, as upstream.
    pub fn score_plugins(&self) -> Vec<(String, i64)> {
        let disabled = &self.plugins.score.disabled;
        let all_disabled = disabled.iter().any(|p| p.name == "*");
        let mut list: Vec<(String, i64)> = DEFAULT_SCORES
            .iter()
            .filter(|(d, _)| !all_disabled && !disabled.iter().any(|p| p.name == *d))
            .map(|(d, w)| (d.to_string(), *w))
            .collect();
        for e in &self.plugins.score.enabled {
            let weight = e.weight.filter(|w| *w != 0).unwrap_or(1);
            match list.iter_mut().find(|(n, _)| *n == e.name) {
                Some(existing) => existing.1 = weight,
                None => list.push((e.name.clone(), weight)),
            }
        }
        list
    }

    /// Checks what loading cannot: score weights are positive int32s (the
    /// type of KubeSchedulerConfiguration's), and the highest total score
    /// fits in an int64 (upstream's `NewFramework` refuses the profile:
    /// "total score of Score plugins could overflow"). sift counts the
    /// extenders' weights too (`weight × MaxNodeScore` each), where
    /// upstream lets their products wrap.
    pub fn check_scores(&self) -> Result<()> {
        for e in &self.plugins.score.enabled {
            if let Some(w) = e.weight {
                if w < 0 {
                    bail!(
                        "plugins.score.enabled: {} has weight {w}; weights are positive",
                        e.name
                    );
                }
                if w > i64::from(i32::MAX) {
                    bail!(
                        "plugins.score.enabled: {} has weight {w}, more than an int32 holds \
                         (KubeSchedulerConfiguration's weights are int32)",
                        e.name
                    );
                }
            }
        }
        let weights = self
            .score_plugins()
            .into_iter()
            .map(|(_, w)| w)
            .chain(self.extenders.iter().map(|e| e.weight.max(0)));
        let mut total: i64 = 0;
        for w in weights {
            match w
                .checked_mul(sift_sdk::MAX_NODE_SCORE)
                .and_then(|m| total.checked_add(m))
            {
                Some(t) => total = t,
                None => bail!("total score of Score plugins could overflow"),
            }
        }
        Ok(())
    }

    /// The JSON arguments configured for a plugin ("{}" when none).
    /// NodeResourcesFit's `ignoredResources` become the extenders'
    /// `ignoredByScheduler` resources when there are any (kube-scheduler's
    /// `buildExtenders` replaces the list).
    pub fn args_for(&self, plugin: &str) -> String {
        let args = self
            .plugin_config
            .iter()
            .find(|c| c.name == plugin)
            .filter(|c| !c.args.is_null())
            .map(|c| c.args.clone());
        let ignored = extenders::ignored_by_scheduler(&self.extenders);
        if plugin == "NodeResourcesFit" && !ignored.is_empty() {
            let mut args = match args {
                Some(serde_json::Value::Object(m)) => m,
                _ => serde_json::Map::new(),
            };
            args.insert("ignoredResources".into(), ignored.into());
            return serde_json::Value::Object(args).to_string();
        }
        args.map(|a| a.to_string()).unwrap_or_else(|| "{}".into())
    }
}

/// `~` or `~/rest` with the home directory put in; other paths unchanged.
fn expand_home(dir: &Path, home: Option<PathBuf>) -> Result<PathBuf> {
    let Ok(rest) = dir.strip_prefix("~") else {
        return Ok(dir.to_path_buf());
    };
    let home = home
        .filter(|h| !h.as_os_str().is_empty())
        .context("starts with ~ but HOME is not set")?;
    Ok(home.join(rest))
}

/// "1s", "250ms", "2m", "1500us".
pub fn parse_duration(s: &str) -> Result<Duration> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: f64 = num
        .parse()
        .with_context(|| format!("{s:?} is not a duration like 1s or 250ms"))?;
    let secs = match unit {
        "ms" => n / 1e3,
        "us" | "µs" => n / 1e6,
        "s" => n,
        "m" => n * 60.0,
        _ => bail!("{s:?}: unknown unit {unit:?} (use ms, s or m)"),
    };
    if !(secs > 0.0 && secs < 3600.0) {
        bail!("{s:?} is out of range");
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(yaml: &str) -> Result<Config> {
        let dir = std::env::temp_dir().join(format!("sift-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(format!("c{}.yaml", yaml.len()));
        std::fs::write(&p, yaml).unwrap();
        let r = Config::load(&p);
        std::fs::remove_file(&p).ok();
        r
    }

    #[test]
    fn defaults_and_ordering() {
        let c = parse("plugins:\n  filter:\n    disabled: [{name: NodePorts}]\n    enabled: [{name: Gpu, ignorable: true}, {name: NodeName, ignorable: true}]\n").unwrap();
        let names: Vec<_> = c
            .filter_plugins()
            .into_iter()
            .map(|p| (p.name, p.ignorable))
            .collect();
        assert_eq!(names[1], ("NodeName".to_string(), true));
        assert_eq!(names.last().unwrap(), &("Gpu".to_string(), true));
        assert!(!names.iter().any(|(n, _)| n == "NodePorts"));
    }

    #[test]
    fn unknown_keys_are_errors_with_path() {
        let err = parse("limits: {callDeadlin: 1s}\n")
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("limits") && err.contains("callDeadlin"),
            "{err}"
        );
    }

    #[test]
    fn score_weights_that_could_overflow_are_refused() {
        let err = |yaml: &str| format!("{:#}", parse(yaml).expect_err("an error"));
        let e = err("plugins: {score: {enabled: [{name: A, weight: 3000000000}]}}\n");
        assert!(e.contains("more than an int32 holds"), "{e}");
        // int32 weights cannot overflow alone; extenders' int64 weights can.
        let e = err(
            "extenders: [{urlPrefix: 'http://a', prioritizeVerb: p, weight: 100000000000000000}]\n",
        );
        assert!(
            e.ends_with("total score of Score plugins could overflow"),
            "{e}"
        );
        let big = i32::MAX;
        let ok = format!("plugins: {{score: {{enabled: [{{name: A, weight: {big}}}]}}}}\n");
        assert!(parse(&ok).is_ok());
        let ok = "extenders: [{urlPrefix: 'http://a', prioritizeVerb: p, weight: 1000000000000}]\n";
        assert!(parse(ok).is_ok());
    }

    #[test]
    fn limits_parse() {
        let c = parse("limits: {callDeadline: 250ms, memory: 64Mi}\n").unwrap();
        let l = c.limits().unwrap();
        assert_eq!(l.call_deadline, Duration::from_millis(250));
        assert_eq!(l.memory_bytes, 64 << 20);
        assert!(parse("limits: {callDeadline: soon}\n").is_err());
        assert!(parse("percentageOfNodesToScore: 101\n").is_err());
        let err = format!("{:#}", parse("limits: {callDeadline: 0s}\n").err().unwrap());
        assert!(err.contains(".yaml: limits"), "{err}");
        let err = format!("{:#}", parse("parallelism: 4000\n").err().unwrap());
        assert!(err.contains("1 to 256"), "{err}");
        assert_eq!(parse("parallelism: 256\n").unwrap().parallelism, Some(256));
    }

    /// What `to_yaml` writes loads back to what was written, every
    /// section included; what is unset stays out.
    #[test]
    fn to_yaml_reads_back_the_same() {
        let c = parse(
            "schedulerName: mine\npercentageOfNodesToScore: 50\nparallelism: 4\n\
             alwaysCheckAllPredicates: true\n\
             plugins: {filter: {disabled: [{name: NodePorts}], enabled: [{name: G, ignorable: true}]},\n\
             \x20 score: {disabled: [{name: \"*\"}], enabled: [{name: NodeResourcesFit, weight: 2}]}}\n\
             pluginConfig: [{name: G, args: {typicalPods: [{gpuSpec: \"1080\", freq: 0.25}], on: \"yes\"}}]\n\
             pluginFiles: {G: g.wasm}\nlimits: {callDeadline: 250ms}\nsandbox: {stdio: true}\n\
             extenders: [{urlPrefix: 'http://a', filterVerb: f, httpTimeout: 2s,\n\
             \x20 managedResources: [{name: example.com/x, ignoredByScheduler: true}]}]\n\
             batch: {actions: allocate, tiers: [{plugins: [{name: gang, enableJobOrder: false}]}]}\n",
        )
        .unwrap();
        let yaml = c.to_yaml().unwrap();
        let again = parse(&yaml).unwrap_or_else(|e| panic!("{e:#}\n{yaml}"));
        assert_eq!(again.to_yaml().unwrap(), yaml);
        assert_eq!(again.args_for("G"), c.args_for("G"));
        assert_eq!(again.extenders, c.extenders);
        assert_eq!(again.batch, c.batch);
        assert!(
            yaml.contains("\"1080\"") && yaml.contains("\"yes\""),
            "{yaml}"
        );
        assert_eq!(Config::default().to_yaml().unwrap().trim(), "{}");
    }

    #[test]
    fn directories_expand_home_and_resolve_against_the_config_file() {
        let home = Some(PathBuf::from("/home/op"));
        let e = |p: &str| expand_home(Path::new(p), home.clone()).unwrap();
        assert_eq!(e("~/.cache/sift"), PathBuf::from("/home/op/.cache/sift"));
        assert_eq!(e("~"), PathBuf::from("/home/op"));
        assert_eq!(e("~other/x"), PathBuf::from("~other/x"));
        assert_eq!(e("plugins"), PathBuf::from("plugins"));
        assert!(expand_home(Path::new("~/x"), None).is_err());
        assert!(expand_home(Path::new("~/x"), Some(PathBuf::new())).is_err());
        let c = parse("pluginsDir: ./p\n").unwrap();
        let dir = c.plugins_dir.unwrap();
        assert!(dir.starts_with(std::env::temp_dir()), "{}", dir.display());
        assert!(dir.ends_with("p"), "{}", dir.display());
    }
}
