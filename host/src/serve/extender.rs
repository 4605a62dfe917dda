//! sift as a kube-scheduler extender, filter verb: the request as it
//! arrives and the reply from a cycle's outcome (the messages are
//! [`crate::input::extender`]'s).
//!
//! kube-scheduler sends `Nodes` (a v1 NodeList) when the extender is
//! configured with `nodeCacheCapable: false`, else `NodeNames`; sift answers
//! in the form it was asked.

use crate::engine::CycleOutcome;
pub use crate::input::extender::{ExtenderFilterResult, NodeList};
use serde::Deserialize;
use serde_json::value::RawValue;
use sift_sdk::Code;

/// `ExtenderArgs`, with the pod and nodes kept as raw JSON text: each is
/// parsed on its own (so an error can name the node), and node objects go
/// back in the reply as they came, without being serialized again.
#[derive(Debug, Deserialize)]
pub struct ExtenderArgs {
    #[serde(rename = "Pod", alias = "pod")]
    pub pod: Box<RawValue>,
    #[serde(rename = "Nodes", alias = "nodes", default)]
    pub nodes: Option<NodeList>,
    #[serde(
        rename = "NodeNames",
        alias = "nodeNames",
        alias = "nodenames",
        default
    )]
    pub node_names: Option<Vec<String>>,
}

/// The reply to a filter request from a cycle's outcome. `nodes`, when the
/// request carried node objects, gives them back for the feasible names.
///
/// A rejected node's message is its reasons joined with ", " (one string
/// per node is all the protocol carries); Unschedulable goes to
/// FailedNodes, UnschedulableAndUnresolvable to FailedAndUnresolvableNodes.
/// A plugin Error aborts the cycle, as it does in kube-scheduler: the
/// reply carries only `Error` (kube-scheduler then fails the pod's cycle,
/// or skips sift if the extender is `ignorable`). Errors of plugins that
/// sift's config marks `ignorable` never reach the reply.
pub fn filter_result(
    outcome: &CycleOutcome,
    nodes: Option<Vec<(String, Box<RawValue>)>>,
) -> ExtenderFilterResult {
    let mut result = ExtenderFilterResult::default();
    if let Some(error) = &outcome.error {
        result.error = error.clone();
        return result;
    }
    for (name, status) in outcome.statuses() {
        let message = status.reasons().join(", ");
        let map = if status.code() == Code::UnschedulableAndUnresolvable {
            &mut result.failed_and_unresolvable_nodes
        } else {
            &mut result.failed_nodes
        };
        map.insert(name.to_string(), message);
    }
    match nodes {
        Some(objects) => {
            let feasible: std::collections::HashSet<&str> =
                outcome.feasible_nodes().map(|n| &**n).collect();
            result.nodes = Some(NodeList {
                metadata: Default::default(),
                items: objects
                    .into_iter()
                    .filter(|(name, _)| feasible.contains(name.as_str()))
                    .map(|(_, v)| v)
                    .collect(),
            });
        }
        None => {
            result.node_names = Some(outcome.feasible_nodes().map(|n| n.to_string()).collect());
        }
    }
    result
}
