//! What one filter cycle found ([`CycleOutcome`]), and its wire form: the
//! `-o json` object, with node names where the outcome holds slots.

use crate::cluster::Snapshot;
use crate::engine::diagnosis::NodeStatus;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

/// What one cycle found.
///
/// Nodes are named by their slot in the cycle's snapshot, which the outcome
/// holds: a cycle lists hundreds of nodes, and a refcounted name per node
/// cost two atomic operations each, a fifth of a native cycle
/// (BENCHMARKS.md). [`CycleOutcome::feasible_nodes`] and
/// [`CycleOutcome::statuses`] give the names.
#[derive(Clone)]
pub struct CycleOutcome {
    /// namespace/name of the pod.
    pub pod: String,
    /// The snapshot whose slots `feasible` and `rejected` hold.
    pub(super) snapshot: Arc<Snapshot>,
    /// Feasible nodes (slots), in the order they were found.
    pub feasible: Vec<u32>,
    /// Statuses of the nodes that did not pass, by slot.
    pub rejected: Vec<(u32, NodeStatus)>,
    /// kube-scheduler's FitError message when no node is feasible.
    pub message: Option<String>,
    /// Set when a plugin failed and the cycle was aborted.
    pub error: Option<String>,
    /// Errors of `ignorable` plugins that were ignored.
    pub ignored_errors: Vec<String>,
    pub nodes_evaluated: usize,
    pub num_all_nodes: usize,
    pub num_feasible_nodes_to_find: usize,
    /// Where the next cycle starts in the node list.
    pub next_start_node_index: usize,
}

impl CycleOutcome {
    pub(super) fn new(
        pod: String,
        snapshot: Arc<Snapshot>,
        start: usize,
        num_all_nodes: usize,
    ) -> Self {
        CycleOutcome {
            pod,
            snapshot,
            feasible: Vec::new(),
            rejected: Vec::new(),
            message: None,
            error: None,
            ignored_errors: Vec::new(),
            nodes_evaluated: 0,
            num_all_nodes,
            num_feasible_nodes_to_find: 0,
            next_start_node_index: start,
        }
    }

    /// The snapshot the cycle ran on.
    pub fn snapshot(&self) -> &Arc<Snapshot> {
        &self.snapshot
    }

    /// The name of a node of this outcome.
    pub fn name(&self, slot: u32) -> &Arc<str> {
        self.snapshot.name(slot)
    }

    /// The feasible nodes' names, in the order they were found.
    pub fn feasible_nodes(&self) -> impl ExactSizeIterator<Item = &Arc<str>> + Clone + '_ {
        self.feasible.iter().map(|&s| self.snapshot.name(s))
    }

    /// The rejected nodes' names and statuses.
    pub fn statuses(&self) -> impl ExactSizeIterator<Item = (&Arc<str>, &NodeStatus)> + '_ {
        self.rejected
            .iter()
            .map(|(s, st)| (self.snapshot.name(*s), st))
    }

    /// The status of a node, if it did not pass.
    pub fn status(&self, node: &str) -> Option<&NodeStatus> {
        let slot = self.snapshot.slot_of(node)?;
        self.rejected
            .iter()
            .find(|(s, _)| *s == slot)
            .map(|(_, st)| st)
    }

    /// What `-o json` prints, with node names.
    fn wire(&self) -> WireOutcome<'_> {
        WireOutcome {
            pod: &self.pod,
            feasible_nodes: self.feasible_nodes().map(|n| &**n).collect(),
            statuses: self.statuses().map(|(n, st)| (&**n, st)).collect(),
            message: self.message.as_deref(),
            error: self.error.as_deref(),
            ignored_errors: &self.ignored_errors,
            nodes_evaluated: self.nodes_evaluated,
            num_all_nodes: self.num_all_nodes,
            num_feasible_nodes_to_find: self.num_feasible_nodes_to_find,
            next_start_node_index: self.next_start_node_index,
        }
    }
}

/// A [`CycleOutcome`] with names: statuses as a JSON object by node name.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct WireOutcome<'a> {
    pod: &'a str,
    feasible_nodes: Vec<&'a str>,
    statuses: BTreeMap<&'a str, &'a NodeStatus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    ignored_errors: &'a [String],
    nodes_evaluated: usize,
    num_all_nodes: usize,
    num_feasible_nodes_to_find: usize,
    next_start_node_index: usize,
}

impl Serialize for CycleOutcome {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.wire().serialize(s)
    }
}

impl std::fmt::Debug for CycleOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.wire().fmt(f)
    }
}
