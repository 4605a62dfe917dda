//! What the engine needs from a filter plugin, whatever runs it (a Wasm
//! component or the same predicate compiled natively).

use crate::cluster::Snapshot;
use sift_sdk::{Pod, Status};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

static CYCLE_IDS: AtomicU64 = AtomicU64::new(1);

/// One scheduling cycle: a pod against a snapshot. Plugins key per-pod
/// state on `id`, which is unique for the life of the process.
pub struct Cycle {
    pub id: u64,
    pub pod: Pod,
    pub snapshot: Arc<Snapshot>,
}

impl Cycle {
    pub fn new(pod: Pod, snapshot: Arc<Snapshot>) -> Cycle {
        Cycle {
            id: CYCLE_IDS.fetch_add(1, Ordering::Relaxed),
            pod,
            snapshot,
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
}

/// A loaded, configured filter plugin.
pub trait FilterPlugin: Send + Sync {
    fn name(&self) -> &str;
    /// Content hash of the component, or "native".
    fn version(&self) -> &str;
    /// Live instances (Wasm); 0 for native plugins.
    fn instances(&self) -> usize {
        0
    }
    /// Runs the plugin's prepare step for the cycle's pod.
    fn prepare<'a>(&'a self, cycle: &'a Cycle) -> Result<Prepared<'a>, PluginError>;
}

/// A plugin in the engine's configured order, with its error policy.
#[derive(Clone)]
pub struct ConfiguredPlugin {
    pub plugin: Arc<dyn FilterPlugin>,
    /// When true, an Error from this plugin is logged and the plugin is
    /// treated as passing, like kube-scheduler's `ignorable` extenders.
    pub ignorable: bool,
}
