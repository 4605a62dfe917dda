//! NodeAffinity: `spec.nodeSelector` and required node affinity, plus the
//! scheduler-enforced `addedAffinity` from the plugin's arguments.
//!
//! Its prepare step narrows the nodes when every affinity term pins
//! `metadata.name`, and rejects the pod outright when those pins conflict.

use serde::Deserialize;
use sift_sdk::selector::{NodeSelector, OBJECT_NAME_FIELD, RequiredNodeAffinity};
use sift_sdk::{
    Args, ClusterView, Node, NodeFields, Plugin, Pod, Prepare, SelectorRequirement, SelectorTerm,
    Status, export_plugin,
};
use std::collections::BTreeSet;

pub const ERR_REASON_POD: &str = "node(s) didn't match Pod's node affinity/selector";
pub const ERR_REASON_ENFORCED: &str = "node(s) didn't match scheduler-enforced node affinity";
pub const ERR_REASON_CONFLICT: &str = "pod affinity terms conflict";

pub struct NodeAffinity {
    added: Option<NodeSelector>,
}

/// `NodeAffinityArgs` of KubeSchedulerConfiguration.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct NodeAffinityArgs {
    added_affinity: Option<AddedAffinity>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AddedAffinity {
    required_during_scheduling_ignored_during_execution: Option<WireSelector>,
    #[allow(dead_code)]
    preferred_during_scheduling_ignored_during_execution: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireSelector {
    #[serde(default)]
    node_selector_terms: Vec<WireTerm>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireTerm {
    #[serde(default)]
    match_expressions: Vec<WireRequirement>,
    #[serde(default)]
    match_fields: Vec<WireRequirement>,
}

#[derive(Deserialize)]
struct WireRequirement {
    key: String,
    operator: String,
    #[serde(default)]
    values: Vec<String>,
}

fn requirements(w: Vec<WireRequirement>) -> Vec<SelectorRequirement> {
    w.into_iter()
        .map(|r| SelectorRequirement {
            key: r.key,
            operator: r.operator,
            values: r.values,
        })
        .collect()
}

impl Plugin for NodeAffinity {
    const NAME: &'static str = "NodeAffinity";
    const NODE_FIELDS: NodeFields = NodeFields::LABELS;
    type PodState = RequiredNodeAffinity;

    fn new(args: Args) -> Result<Self, String> {
        let args: NodeAffinityArgs = args.parse()?;
        let added = args
            .added_affinity
            .and_then(|a| a.required_during_scheduling_ignored_during_execution)
            .map(|sel| {
                let terms: Vec<SelectorTerm> = sel
                    .node_selector_terms
                    .into_iter()
                    .map(|t| SelectorTerm {
                        match_expressions: requirements(t.match_expressions),
                        match_fields: requirements(t.match_fields),
                    })
                    .collect();
                NodeSelector::new(&terms)
            });
        if let Some(errors) = added.as_ref().map(|s| s.errors()).filter(|e| !e.is_empty()) {
            return Err(format!("addedAffinity: {}", errors.join("; ")));
        }
        Ok(NodeAffinity { added })
    }

    fn prepare(&self, pod: &Pod, _cluster: &dyn ClusterView) -> Prepare<RequiredNodeAffinity> {
        if pod.required_node_affinity.is_none()
            && self.added.is_none()
            && pod.node_selector.is_empty()
        {
            return Prepare::Skip;
        }
        let state = RequiredNodeAffinity::of(pod);
        let Some(terms) = pod
            .required_node_affinity
            .as_deref()
            .filter(|t| !t.is_empty())
        else {
            return Prepare::Proceed(state);
        };
        // Terms are ORed: the pod can only go to named nodes if every term
        // pins metadata.name; within a term the pins are ANDed.
        let mut names: BTreeSet<String> = BTreeSet::new();
        for term in terms {
            let mut term_names: Option<BTreeSet<String>> = None;
            for r in &term.match_fields {
                if r.key == OBJECT_NAME_FIELD && r.operator == "In" {
                    let set: BTreeSet<String> = r.values.iter().cloned().collect();
                    term_names = Some(match term_names {
                        None => set,
                        Some(prev) => prev.intersection(&set).cloned().collect(),
                    });
                }
            }
            match term_names {
                None => return Prepare::Proceed(state),
                Some(t) => names.extend(t),
            }
        }
        if names.is_empty() {
            return Prepare::Reject(Status::unresolvable(ERR_REASON_CONFLICT));
        }
        Prepare::Narrow(state, names.into_iter().collect())
    }

    fn filter(&self, _: &Pod, state: &RequiredNodeAffinity, node: &Node) -> Status {
        if let Some(added) = &self.added
            && !added.matches(&node.name, &node.labels)
        {
            return Status::unresolvable(ERR_REASON_ENFORCED);
        }
        if !state.matches(node) {
            return Status::unresolvable(ERR_REASON_POD);
        }
        Status::success()
    }
}

export_plugin!(NodeAffinity);
