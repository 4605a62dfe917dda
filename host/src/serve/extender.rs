//! kube-scheduler's extender protocol (k8s.io/kube-scheduler/extender/v1),
//! filter verb. The Go structs have no json tags, so the wire names are the
//! Go field names: `Pod`, `Nodes`, `NodeNames`; `FailedNodes`,
//! `FailedAndUnresolvableNodes` and `Error` in the reply.
//!
//! kube-scheduler sends `Nodes` (a v1 NodeList) when the extender is
//! configured with `nodeCacheCapable: false`, else `NodeNames`; sift answers
//! in the form it was asked.

use crate::engine::CycleOutcome;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use sift_sdk::Code;
use std::collections::BTreeMap;

/// `ExtenderArgs`, with the pod and nodes kept as raw JSON text: each is
/// parsed on its own (so an error can name the node), and node objects go
/// back in the reply as they came, without being serialized again.
#[derive(Debug, Deserialize)]
pub struct ExtenderArgs {
    #[serde(rename = "Pod")]
    pub pod: Box<RawValue>,
    #[serde(rename = "Nodes", default)]
    pub nodes: Option<NodeList>,
    #[serde(rename = "NodeNames", default)]
    pub node_names: Option<Vec<String>>,
}

/// A v1 NodeList as Go's encoder writes it: `metadata` and `items`; other
/// fields (apiVersion, kind) are accepted.
#[derive(Debug, Default, Deserialize, Serialize)]
pub struct NodeList {
    #[serde(default)]
    pub metadata: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    pub items: Vec<Box<RawValue>>,
}

/// `ExtenderFilterResult`.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct ExtenderFilterResult {
    #[serde(rename = "Nodes", skip_serializing_if = "Option::is_none", default)]
    pub nodes: Option<NodeList>,
    #[serde(rename = "NodeNames", skip_serializing_if = "Option::is_none", default)]
    pub node_names: Option<Vec<String>>,
    #[serde(rename = "FailedNodes", default)]
    pub failed_nodes: BTreeMap<String, String>,
    #[serde(rename = "FailedAndUnresolvableNodes", default)]
    pub failed_and_unresolvable_nodes: BTreeMap<String, String>,
    #[serde(rename = "Error", default)]
    pub error: String,
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
    for (name, status) in &outcome.statuses {
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
                outcome.feasible_nodes.iter().map(|n| &**n).collect();
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
            result.node_names = Some(
                outcome
                    .feasible_nodes
                    .iter()
                    .map(|n| n.to_string())
                    .collect(),
            );
        }
    }
    result
}
