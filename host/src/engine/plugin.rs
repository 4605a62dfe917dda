//! What the engine needs from a plugin, whatever runs it (a Wasm
//! component or the same code compiled natively).

use crate::cluster::Snapshot;
use crate::cluster::nominated::{self, NominatedPass};
use crate::input::ApiObject;
use crate::input::kube::FullObjects;
use sift_sdk::{ExtensionPoints, Pod, Status};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

static CYCLE_IDS: AtomicU64 = AtomicU64::new(1);

/// One scheduling cycle: a pod against a snapshot. Plugins key per-pod
/// state on `id`, which is unique for the life of the process.
pub struct Cycle {
    pub id: u64,
    pub pod: Pod,
    pub snapshot: Arc<Snapshot>,
    /// The nodes that get a first pass with pods nominated to them, by
    /// slot (empty when no pod of at least this pod's priority is
    /// nominated anywhere).
    pub nominated: HashMap<u32, NominatedPass>,
}

impl Cycle {
    /// The pod's workload selector comes from the snapshot's Services and
    /// controllers, unless the pod carries one.
    pub fn new(mut pod: Pod, snapshot: Arc<Snapshot>) -> Cycle {
        if pod.workload_selector.is_none() && !snapshot.workloads().is_empty() {
            pod.workload_selector = snapshot.workloads().selector_of(&pod);
        }
        let nominated =
            nominated::passes_for(&pod, snapshot.nominated(), |s| snapshot.node(s).clone());
        Cycle {
            id: CYCLE_IDS.fetch_add(1, Ordering::Relaxed),
            pod,
            snapshot,
            nominated,
        }
    }
}

/// A plugin's PreFilter decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PrepareOutcome {
    Proceed,
    Skip,
    Reject(Status),
    /// Only these node names can pass.
    Narrow(Vec<String>),
}

/// A plugin failed (trap, deadline, memory, bad answer): an Error status,
/// never a verdict on a node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PluginError {
    pub plugin: String,
    pub message: String,
}

impl std::fmt::Display for PluginError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "plugin {}: {}", self.plugin, self.message)
    }
}

impl std::error::Error for PluginError {}

/// A plugin prepared for one cycle.
pub struct Prepared<'a> {
    pub outcome: PrepareOutcome,
    pub filter: Box<dyn BatchFilter + 'a>,
}

/// Filters a batch of nodes for the prepared pod. Called from several
/// threads at once.
pub trait BatchFilter: Send + Sync {
    /// Checks the nodes at `slots`; appends `(index into slots, status)`
    /// for each node that did not pass.
    fn filter(
        &self,
        slots: &[u32],
        rejections: &mut Vec<(u32, Arc<Status>)>,
    ) -> Result<(), PluginError>;

    /// The first pass of a node with pods nominated to it: the node at
    /// `slot` as `pass.node`, with `pass.added` on it (upstream's
    /// `addGENominatedPods`, AddPod included).
    fn filter_nominated(&self, slot: u32, pass: &NominatedPass) -> Result<Status, PluginError>;
}

/// A loaded, configured plugin, whatever runs it: it filters, and by its
/// extension points also scores and reserves (kube-scheduler's `Plugin`
/// with its FilterPlugin, ScorePlugin and ReservePlugin interfaces: one
/// name, several capabilities).
pub trait Plugin: Send + Sync {
    fn name(&self) -> &str;
    /// Content hash of the component, or "native".
    fn version(&self) -> &str;
    /// Live instances (Wasm); 0 for native plugins.
    fn instances(&self) -> usize {
        0
    }
    /// Which whole objects (the escape hatch) it reads: the caller attaches
    /// them to the models only then.
    fn full_objects(&self) -> FullObjects {
        FullObjects::default()
    }
    /// Runs the plugin's prepare step for the cycle's pod.
    fn prepare<'a>(&'a self, cycle: &'a Cycle) -> Result<Prepared<'a>, PluginError>;

    /// What it implements (kube-scheduler's plugin interfaces).
    fn extension_points(&self) -> ExtensionPoints {
        ExtensionPoints::FILTER
    }

    /// Pod annotation keys it reads on nodes' bound pods: the cluster
    /// state keeps those (and only those) for it.
    fn pod_annotation_keys(&self) -> &[String] {
        &[]
    }

    /// PreScore, Score and NormalizeScore of the cycle's pod over the
    /// `feasible` slots: one final score per slot, in `0..=MAX_NODE_SCORE`,
    /// or `None` when the plugin skipped the pod.
    fn score(&self, _cycle: &Cycle, _feasible: &[u32]) -> Result<Option<Vec<i64>>, PluginError> {
        Err(PluginError {
            plugin: self.name().to_string(),
            message: "is not a score plugin".into(),
        })
    }

    /// The same plugin configured with other arguments (JSON): a case or
    /// configuration of its own, without loading the component again.
    fn with_args(&self, _args: &str) -> Result<Arc<dyn Plugin>, PluginError> {
        Err(PluginError {
            plugin: self.name().to_string(),
            message: "cannot be configured again".into(),
        })
    }

    /// Reserve on the chosen node: the annotations the assumed pod
    /// carries, and the objects its PreBind writes.
    fn reserve(&self, _cycle: &Cycle, _slot: u32) -> Result<Reservation, PluginError> {
        Ok(Reservation::default())
    }
}

/// Checks a scorer's final scores: one per feasible node, each in
/// `0..=MAX_NODE_SCORE` (upstream's check after NormalizeScore).
pub fn check_scores(plugin: &str, scores: &[i64], feasible: usize) -> Result<(), PluginError> {
    if scores.len() != feasible {
        return Err(PluginError {
            plugin: plugin.to_string(),
            message: format!(
                "returned {} scores for {feasible} feasible nodes",
                scores.len()
            ),
        });
    }
    if let Some(bad) = scores
        .iter()
        .find(|s| !(0..=sift_sdk::MAX_NODE_SCORE).contains(*s))
    {
        return Err(PluginError {
            plugin: plugin.to_string(),
            message: format!(
                "returns an invalid score {bad}, it should in the range of [0, {}] after normalizing",
                sift_sdk::MAX_NODE_SCORE
            ),
        });
    }
    Ok(())
}

/// What one plugin's Reserve decided on the chosen node.
#[derive(Debug, Default)]
pub struct Reservation {
    /// Annotations the assumed pod carries.
    pub annotations: Vec<(String, String)>,
    /// Objects to write before the pod is bound, in order (kube-scheduler's
    /// PreBind: a claim's selected node, a volume's claim, a device
    /// allocation): a simulation applies them to its state, the live
    /// scheduler writes them to the API server.
    pub writes: Vec<ApiObject>,
}

/// A plugin in the engine's configured order, with its error policy.
#[derive(Clone)]
pub struct ConfiguredPlugin {
    pub plugin: Arc<dyn Plugin>,
    /// When true, an Error from this plugin is logged and the plugin is
    /// treated as passing, like kube-scheduler's `ignorable` extenders.
    pub ignorable: bool,
}
