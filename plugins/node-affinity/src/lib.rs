//! NodeAffinity: `spec.nodeSelector` and required node affinity, plus the
//! scheduler-enforced `addedAffinity` from the plugin's arguments; as a
//! scorer, the weights of the preferred terms a node matches, the pod's
//! and `addedAffinity`'s (`nodeaffinity/node_affinity.go`).
//!
//! Its prepare step narrows the nodes when every affinity term pins
//! `metadata.name`, and rejects the pod outright when those pins conflict.

use serde::Deserialize;
use sift_sdk::scoring::default_normalize;
use sift_sdk::selector::{NodeSelector, OBJECT_NAME_FIELD, PreferredTerms, RequiredNodeAffinity};
use sift_sdk::{
    Args, ClusterView, ExtensionPoints, MAX_NODE_SCORE, Node, NodeFields, Plugin, Pod, PreScore,
    Prepare, SelectorRequirement, SelectorTerm, Status, WeightedSelectorTerm, export_plugin,
};
use std::collections::BTreeSet;

pub const ERR_REASON_POD: &str = "node(s) didn't match Pod's node affinity/selector";
pub const ERR_REASON_ENFORCED: &str = "node(s) didn't match scheduler-enforced node affinity";
pub const ERR_REASON_CONFLICT: &str = "pod affinity terms conflict";

pub struct NodeAffinity {
    added: Option<NodeSelector>,
    /// `addedAffinity`'s preferred terms; `None` when it has none.
    added_preferred: Option<PreferredTerms>,
}

/// What a cycle computed: the required side for `filter`, the pod's
/// preferred terms for `score` (`None`: the pod has none).
#[derive(Default)]
pub struct State {
    required: RequiredNodeAffinity,
    preferred: Option<PreferredTerms>,
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
    #[serde(default)]
    preferred_during_scheduling_ignored_during_execution: Vec<WirePreferred>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireSelector {
    #[serde(default)]
    node_selector_terms: Vec<WireTerm>,
}

#[derive(Deserialize)]
struct WirePreferred {
    #[serde(default)]
    weight: i32,
    preference: WireTerm,
}

#[derive(Deserialize, Default)]
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

fn term(t: WireTerm) -> SelectorTerm {
    SelectorTerm {
        match_expressions: requirements(t.match_expressions),
        match_fields: requirements(t.match_fields),
    }
}

impl Plugin for NodeAffinity {
    const NAME: &'static str = "NodeAffinity";
    const NODE_FIELDS: NodeFields = NodeFields::LABELS;
    const EXTENSION_POINTS: ExtensionPoints = ExtensionPoints::FILTER.union(ExtensionPoints::SCORE);
    type PodState = State;

    fn new(args: Args) -> Result<Self, String> {
        let args: NodeAffinityArgs = args.parse()?;
        let (required, preferred) = match args.added_affinity {
            Some(a) => (
                a.required_during_scheduling_ignored_during_execution,
                a.preferred_during_scheduling_ignored_during_execution,
            ),
            None => (None, Vec::new()),
        };
        let added = required.map(|sel| {
            let terms: Vec<SelectorTerm> = sel.node_selector_terms.into_iter().map(term).collect();
            NodeSelector::new(&terms)
        });
        if let Some(errors) = added.as_ref().map(|s| s.errors()).filter(|e| !e.is_empty()) {
            return Err(format!("addedAffinity: {}", errors.join("; ")));
        }
        let preferred: Vec<WeightedSelectorTerm> = preferred
            .into_iter()
            .map(|p| WeightedSelectorTerm {
                weight: p.weight,
                preference: term(p.preference),
            })
            .collect();
        let added_preferred = if preferred.is_empty() {
            None
        } else {
            Some(PreferredTerms::new(&preferred).map_err(|e| {
                format!("addedAffinity.preferredDuringSchedulingIgnoredDuringExecution{e}")
            })?)
        };
        Ok(NodeAffinity {
            added,
            added_preferred,
        })
    }

    fn prepare(&self, pod: &Pod, _cluster: &dyn ClusterView) -> Prepare<State> {
        if pod.required_node_affinity.is_none()
            && self.added.is_none()
            && pod.node_selector.is_empty()
        {
            return Prepare::Skip;
        }
        let state = State {
            required: RequiredNodeAffinity::of(pod),
            preferred: None,
        };
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

    fn filter(&self, _: &Pod, state: &State, node: &Node) -> Status {
        if let Some(added) = &self.added
            && !added.matches(&node.name, &node.labels)
        {
            return Status::unresolvable(ERR_REASON_ENFORCED);
        }
        if !state.required.matches(node) {
            return Status::unresolvable(ERR_REASON_POD);
        }
        Status::success()
    }

    /// Skips a pod without preferred terms when the arguments add none.
    fn pre_score(&self, pod: &Pod, _: &[&Node], _: &dyn ClusterView) -> PreScore<State> {
        if pod.preferred_node_affinity.is_empty() && self.added_preferred.is_none() {
            return PreScore::Skip;
        }
        let preferred = if pod.preferred_node_affinity.is_empty() {
            None
        } else {
            match PreferredTerms::new(&pod.preferred_node_affinity) {
                Ok(t) => Some(t),
                Err(e) => {
                    return PreScore::Error(Status::error(format!(
                        "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution{e}"
                    )));
                }
            }
        };
        PreScore::Proceed(State {
            required: RequiredNodeAffinity::default(),
            preferred,
        })
    }

    fn score(&self, _: &Pod, state: &State, node: &Node) -> Result<i64, Status> {
        let added = self
            .added_preferred
            .as_ref()
            .map_or(0, |t| t.score(&node.name, &node.labels));
        let own = state
            .preferred
            .as_ref()
            .map_or(0, |t| t.score(&node.name, &node.labels));
        Ok(added + own)
    }

    fn normalize_scores(&self, _: &Pod, _: &State, scores: &mut [i64]) -> Result<(), Status> {
        default_normalize(MAX_NODE_SCORE, false, scores);
        Ok(())
    }
}

export_plugin!(NodeAffinity);
