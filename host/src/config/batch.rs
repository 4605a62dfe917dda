//! `batch:` in sift's configuration: batch mode's session, in the shape of
//! Volcano's `volcano-scheduler.conf` (`actions`, `tiers` of plugins with
//! their `enabled*` switches) plus the session period, which Volcano takes
//! as the `--schedule-period` flag.

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// Actions sift runs, in the order a session may list them.
pub const ACTIONS: [&str; 2] = ["allocate", "backfill"];
/// The kube-scheduler filters Volcano's `predicates` plugin runs, in its
/// order (v1.11 `plugins/predicates/predicates.go`; the volume filters are
/// not ported). Before them it checks the node's pod count.
pub const VOLCANO_PREDICATES: [&str; 6] = [
    "NodeUnschedulable",
    "NodeAffinity",
    "TaintToleration",
    "NodePorts",
    "InterPodAffinity",
    "PodTopologySpread",
];

/// Session plugins sift has.
pub const PLUGINS: [&str; 6] = [
    "priority",
    "gang",
    "drf",
    "predicates",
    "proportion",
    "nodeorder",
];

/// Keys of a newer `volcano-scheduler.conf` than sift knows are accepted
/// with a warning naming each, as Volcano's own loader ignores them
/// ([`BatchConfig::session`] warns).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct BatchConfig {
    /// Comma-separated actions; default `allocate, backfill`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actions: Option<String>,
    /// Default: `[{priority, gang}, {drf, predicates, proportion, nodeorder}]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tiers: Option<Vec<Tier>>,
    /// Simulated time between sessions, e.g. `1s` (the default).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedule_period: Option<String>,
    /// Accepted for Volcano files (`configurations:` of actions,
    /// `metrics:`); unused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configurations: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<serde_json::Value>,
    #[serde(flatten)]
    pub unknown: BTreeMap<String, serde_json::Value>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct Tier {
    #[serde(default)]
    pub plugins: Vec<PluginOption>,
    #[serde(flatten)]
    pub unknown: BTreeMap<String, serde_json::Value>,
}

/// One plugin of a tier. Every switch defaults to true, as in Volcano
/// (`plugins/defaults.go`), and takes Volcano's spelling
/// (`enableJobOrder`, ..., `enabledOverused`) or the other one; switches
/// for extension points sift does not run (preemption, reclaim,
/// enqueue...) are accepted. `arguments` are accepted and not used (sift's
/// predicates and node order come from its own plugin configuration).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PluginOption {
    pub name: String,
    #[serde(alias = "enableJobOrder", skip_serializing_if = "Option::is_none")]
    pub enabled_job_order: Option<bool>,
    #[serde(
        alias = "enableNamespaceOrder",
        skip_serializing_if = "Option::is_none"
    )]
    pub enabled_namespace_order: Option<bool>,
    #[serde(alias = "enableHierarchy", skip_serializing_if = "Option::is_none")]
    pub enabled_hierarchy: Option<bool>,
    #[serde(alias = "enableJobReady", skip_serializing_if = "Option::is_none")]
    pub enabled_job_ready: Option<bool>,
    #[serde(alias = "enableJobPipelined", skip_serializing_if = "Option::is_none")]
    pub enabled_job_pipelined: Option<bool>,
    #[serde(alias = "enableTaskOrder", skip_serializing_if = "Option::is_none")]
    pub enabled_task_order: Option<bool>,
    #[serde(alias = "enablePreemptable", skip_serializing_if = "Option::is_none")]
    pub enabled_preemptable: Option<bool>,
    #[serde(alias = "enableReclaimable", skip_serializing_if = "Option::is_none")]
    pub enabled_reclaimable: Option<bool>,
    #[serde(alias = "enabledPreemptive", skip_serializing_if = "Option::is_none")]
    pub enable_preemptive: Option<bool>,
    #[serde(alias = "enableQueueOrder", skip_serializing_if = "Option::is_none")]
    pub enabled_queue_order: Option<bool>,
    #[serde(alias = "EnabledClusterOrder", skip_serializing_if = "Option::is_none")]
    pub enabled_cluster_order: Option<bool>,
    #[serde(alias = "enablePredicate", skip_serializing_if = "Option::is_none")]
    pub enabled_predicate: Option<bool>,
    #[serde(alias = "enableBestNode", skip_serializing_if = "Option::is_none")]
    pub enabled_best_node: Option<bool>,
    #[serde(alias = "enableNodeOrder", skip_serializing_if = "Option::is_none")]
    pub enabled_node_order: Option<bool>,
    #[serde(alias = "enableTargetJob", skip_serializing_if = "Option::is_none")]
    pub enabled_target_job: Option<bool>,
    #[serde(alias = "enableReservedNodes", skip_serializing_if = "Option::is_none")]
    pub enabled_reserved_nodes: Option<bool>,
    #[serde(alias = "enableJobEnqueued", skip_serializing_if = "Option::is_none")]
    pub enabled_job_enqueued: Option<bool>,
    #[serde(alias = "enableVictim", skip_serializing_if = "Option::is_none")]
    pub enabled_victim: Option<bool>,
    #[serde(alias = "enableJobStarving", skip_serializing_if = "Option::is_none")]
    pub enabled_job_starving: Option<bool>,
    #[serde(alias = "enableOverused", skip_serializing_if = "Option::is_none")]
    pub enabled_overused: Option<bool>,
    #[serde(alias = "enableAllocatable", skip_serializing_if = "Option::is_none")]
    pub enabled_allocatable: Option<bool>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub arguments: BTreeMap<String, serde_json::Value>,
    /// Switches of newer Volcano releases (`enabledHyperNodeOrder`,
    /// `enabledSubJobReady`, ...): accepted, warned about, unused.
    #[serde(flatten)]
    pub unknown: BTreeMap<String, serde_json::Value>,
}

impl PluginOption {
    fn named(name: &str) -> PluginOption {
        PluginOption {
            name: name.to_string(),
            ..Default::default()
        }
    }
}

/// A key sift does not know, from a newer Volcano than it follows.
fn warn_unknown(at: &str) {
    tracing::warn!(
        "{at}: not a setting sift knows (from a newer Volcano release?): accepted and not used"
    );
}

/// The checked form: actions and tiers by name.
#[derive(Clone, Debug)]
pub struct Session {
    pub actions: Vec<String>,
    pub tiers: Vec<Vec<PluginOption>>,
    pub period: Duration,
    /// `nodeorder`'s weights; `None` when it is not configured or
    /// `enableNodeOrder` is off.
    pub node_order: Option<NodeOrderWeights>,
}

/// `nodeorder`'s arguments (Volcano's `calculateWeight`,
/// `plugins/nodeorder/nodeorder.go`): the weight of each kube-scheduler
/// score plugin it runs, 0 switching one off. The defaults are Volcano's,
/// which follow kube-scheduler's default weights; MostAllocated is off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeOrderWeights {
    pub least_requested: i64,
    pub most_requested: i64,
    pub balanced_resource: i64,
    pub node_affinity: i64,
    pub pod_affinity: i64,
    pub taint_toleration: i64,
    pub image_locality: i64,
    pub pod_topology_spread: i64,
}

impl Default for NodeOrderWeights {
    fn default() -> Self {
        NodeOrderWeights {
            least_requested: 1,
            most_requested: 0,
            balanced_resource: 1,
            node_affinity: 2,
            pod_affinity: 2,
            taint_toleration: 3,
            image_locality: 1,
            pod_topology_spread: 2,
        }
    }
}

impl NodeOrderWeights {
    /// The weights `arguments` set over the defaults. A key Volcano does
    /// not read is warned about; a value that is not an integer (or a
    /// string of one, as Volcano's `GetInt` also takes) is refused.
    pub fn from_arguments(
        at: &str,
        arguments: &BTreeMap<String, serde_json::Value>,
    ) -> Result<NodeOrderWeights> {
        let mut w = NodeOrderWeights::default();
        for (key, value) in arguments {
            let slot = match key.as_str() {
                "leastrequested.weight" => &mut w.least_requested,
                "mostrequested.weight" => &mut w.most_requested,
                "balancedresource.weight" => &mut w.balanced_resource,
                "nodeaffinity.weight" => &mut w.node_affinity,
                "podaffinity.weight" => &mut w.pod_affinity,
                "tainttoleration.weight" => &mut w.taint_toleration,
                "imagelocality.weight" => &mut w.image_locality,
                "podtopologyspread.weight" => &mut w.pod_topology_spread,
                other => {
                    warn_unknown(&format!("{at}: nodeorder argument {other}"));
                    continue;
                }
            };
            let n = match value {
                serde_json::Value::Number(n) => n.as_i64(),
                serde_json::Value::String(s) => s.trim().parse::<i64>().ok(),
                _ => None,
            };
            match n {
                Some(n) if (0..=i64::from(i32::MAX)).contains(&n) => *slot = n,
                _ => bail!(
                    "{at}: nodeorder argument {key}: {value} is not a weight (an integer from 0)"
                ),
            }
        }
        Ok(w)
    }

    /// kube-scheduler score plugins with their weights, in kube-scheduler's
    /// order, and the arguments Volcano gives each (`None`: the plugin as
    /// configured). Weight 0 leaves a plugin out. NodeResourcesFit comes
    /// twice when both strategies are weighted, as Volcano runs two.
    pub fn score_plugins(&self) -> Vec<(&'static str, i64, Option<serde_json::Value>)> {
        let least = serde_json::json!({"scoringStrategy": {"type": "LeastAllocated",
            "resources": [{"name": "cpu", "weight": 50}, {"name": "memory", "weight": 50}]}});
        let most = serde_json::json!({"scoringStrategy": {"type": "MostAllocated",
            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}});
        let balanced = serde_json::json!({"resources": [{"name": "cpu", "weight": 1},
            {"name": "memory", "weight": 1}, {"name": "nvidia.com/gpu", "weight": 1}]});
        [
            ("TaintToleration", self.taint_toleration, None),
            ("NodeAffinity", self.node_affinity, None),
            ("NodeResourcesFit", self.least_requested, Some(least)),
            ("NodeResourcesFit", self.most_requested, Some(most)),
            ("PodTopologySpread", self.pod_topology_spread, None),
            ("InterPodAffinity", self.pod_affinity, None),
            (
                "NodeResourcesBalancedAllocation",
                self.balanced_resource,
                Some(balanced),
            ),
            ("ImageLocality", self.image_locality, None),
        ]
        .into_iter()
        .filter(|(_, w, _)| *w > 0)
        .collect()
    }
}

impl BatchConfig {
    /// Validates names and fills Volcano's defaults.
    pub fn session(&self) -> Result<Session> {
        let actions_text = self.actions.as_deref().unwrap_or("allocate, backfill");
        let mut actions = Vec::new();
        for a in actions_text
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
        {
            if !ACTIONS.contains(&a) {
                bail!(
                    "batch.actions: unknown action {a:?} (sift runs {}; Volcano's enqueue, \
                     preempt, reclaim and shuffle are not implemented)",
                    ACTIONS.join(", ")
                );
            }
            actions.push(a.to_string());
        }
        if actions.is_empty() {
            bail!("batch.actions: no action (e.g. \"allocate, backfill\")");
        }
        let tiers: Vec<Vec<PluginOption>> = match &self.tiers {
            Some(t) => t.iter().map(|t| t.plugins.clone()).collect(),
            None => vec![
                vec![PluginOption::named("priority"), PluginOption::named("gang")],
                vec![
                    PluginOption::named("drf"),
                    PluginOption::named("predicates"),
                    PluginOption::named("proportion"),
                    PluginOption::named("nodeorder"),
                ],
            ],
        };
        for key in self.unknown.keys() {
            warn_unknown(&format!("batch.{key}"));
        }
        for (i, tier) in self.tiers.iter().flatten().enumerate() {
            for key in tier.unknown.keys() {
                warn_unknown(&format!("batch.tiers[{i}].{key}"));
            }
        }
        let mut seen = Vec::new();
        for (i, tier) in tiers.iter().enumerate() {
            for p in tier {
                for key in p.unknown.keys() {
                    warn_unknown(&format!("batch.tiers[{i}]: plugin {}: {key}", p.name));
                }
                if !PLUGINS.contains(&p.name.as_str()) {
                    bail!(
                        "batch.tiers[{i}]: unknown plugin {:?} (sift has {})",
                        p.name,
                        PLUGINS.join(", ")
                    );
                }
                if seen.contains(&p.name) {
                    bail!("batch.tiers[{i}]: plugin {:?} is listed twice", p.name);
                }
                seen.push(p.name.clone());
                if !p.arguments.is_empty() && p.name != "nodeorder" {
                    let keys: Vec<&str> = p.arguments.keys().map(String::as_str).collect();
                    tracing::warn!(
                        "batch.tiers[{i}]: plugin {} arguments {} are not used: sift's predicates \
                         and node order come from plugins.filter, plugins.score and pluginConfig",
                        p.name,
                        keys.join(", ")
                    );
                }
                if p.enabled_hierarchy == Some(true) {
                    tracing::warn!(
                        "batch.tiers[{i}]: {}: enableHierarchy (hierarchical drf) is not implemented",
                        p.name
                    );
                }
            }
        }
        let period = match &self.schedule_period {
            Some(s) => super::extenders::parse_go_duration(s)
                .map_err(|e| anyhow::anyhow!("batch.schedulePeriod: {e}"))?,
            None => Duration::from_secs(1),
        };
        if period.is_zero() {
            bail!("batch.schedulePeriod: must be more than zero");
        }
        let node_order = tiers
            .iter()
            .enumerate()
            .flat_map(|(i, t)| t.iter().map(move |p| (i, p)))
            .find(|(_, p)| p.name == "nodeorder")
            .filter(|(_, p)| p.enabled_node_order.unwrap_or(true))
            .map(|(i, p)| {
                NodeOrderWeights::from_arguments(&format!("batch.tiers[{i}]"), &p.arguments)
            })
            .transpose()?;
        Ok(Session {
            actions,
            tiers,
            period,
            node_order,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(pairs: &[(&str, serde_json::Value)]) -> BTreeMap<String, serde_json::Value> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    #[test]
    fn node_order_weights_override_volcanos_defaults() {
        let w = NodeOrderWeights::from_arguments(
            "t",
            &args(&[
                ("mostrequested.weight", serde_json::json!(2)),
                ("leastrequested.weight", serde_json::json!("0")),
                ("somethingnew.weight", serde_json::json!(5)),
            ]),
        )
        .unwrap();
        assert_eq!(w.most_requested, 2);
        assert_eq!(w.least_requested, 0);
        assert_eq!(w.taint_toleration, 3, "untouched default");
        let names: Vec<&str> = w.score_plugins().iter().map(|(n, _, _)| *n).collect();
        assert_eq!(
            names.iter().filter(|n| **n == "NodeResourcesFit").count(),
            1
        );
        assert!(names.contains(&"TaintToleration"));
        let (_, weight, args) = &w.score_plugins()[2];
        assert_eq!(*weight, 2);
        assert_eq!(
            args.as_ref().unwrap()["scoringStrategy"]["type"],
            "MostAllocated"
        );
    }

    #[test]
    fn a_weight_that_is_not_a_count_is_refused_naming_it() {
        for bad in [
            serde_json::json!(-1),
            serde_json::json!("x"),
            serde_json::json!(1.5),
        ] {
            let e = NodeOrderWeights::from_arguments(
                "batch.tiers[1]",
                &args(&[("nodeaffinity.weight", bad)]),
            )
            .unwrap_err()
            .to_string();
            assert!(
                e.contains("batch.tiers[1]") && e.contains("nodeaffinity.weight"),
                "{e}"
            );
        }
    }
}
