//! Why nodes were rejected (kube-scheduler's Diagnosis and NodeToStatus)
//! and the one-line message of a failed cycle (FitError).

use serde::Serialize;
use sift_sdk::{Code, Status};
use std::collections::BTreeMap;

/// A node's verdict: the code, the plugin that gave it, and its reasons.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NodeStatus {
    #[serde(serialize_with = "code_name")]
    pub code: Code,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plugin: Option<String>,
    pub reasons: Vec<String>,
}

fn code_name<S: serde::Serializer>(code: &Code, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(code.as_str())
}

impl NodeStatus {
    pub fn from_plugin(plugin: &str, status: Status) -> NodeStatus {
        NodeStatus {
            code: status.code,
            plugin: Some(plugin.to_string()),
            reasons: status.reasons,
        }
    }

    /// kube-scheduler's `Status.Message()`: the reasons joined by ", ".
    pub fn message(&self) -> String {
        self.reasons.join(", ")
    }
}

/// Statuses of the nodes that were checked (explicit), plus one status for
/// every node that was not (absent: narrowed out by a prepare step, or
/// rejected wholesale by one).
#[derive(Clone, Debug, Default)]
pub struct Diagnosis {
    pub explicit: Vec<(String, NodeStatus)>,
    pub absent: Option<NodeStatus>,
    /// Set when a prepare step rejected the pod: the message replaces the
    /// reason histogram.
    pub pre_filter_msg: Option<String>,
}

/// "0/N nodes are available" (kube-scheduler's `NoNodeAvailableMsg`).
pub fn no_node_available(num_all_nodes: usize) -> String {
    format!("0/{num_all_nodes} nodes are available")
}

impl Diagnosis {
    /// The message of a cycle that found no feasible node, exactly as
    /// kube-scheduler's `FitError.Error()` builds it: the prepare message,
    /// or a histogram "<count> <reason>" over all nodes' reasons, sorted as
    /// strings (so "10 x" sorts before "2 y"), joined by ", ".
    pub fn fit_error_message(&self, num_all_nodes: usize) -> String {
        let mut msg = format!("{}:", no_node_available(num_all_nodes));
        if let Some(pre) = &self.pre_filter_msg {
            msg.push_str(&format!(" {pre}."));
            return msg;
        }
        let mut histogram: BTreeMap<&str, usize> = BTreeMap::new();
        for (_, status) in &self.explicit {
            for r in &status.reasons {
                *histogram.entry(r).or_default() += 1;
            }
        }
        if let Some(absent) = &self.absent {
            let n = num_all_nodes.saturating_sub(self.explicit.len());
            if n > 0 {
                for r in &absent.reasons {
                    *histogram.entry(r).or_default() += n;
                }
            }
        }
        let mut entries: Vec<String> = histogram
            .into_iter()
            .map(|(r, n)| format!("{n} {r}"))
            .collect();
        entries.sort();
        msg.push_str(&format!(" {}.", entries.join(", ")));
        msg
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(reasons: &[&str]) -> NodeStatus {
        NodeStatus {
            code: Code::Unschedulable,
            plugin: Some("P".into()),
            reasons: reasons.iter().map(|r| r.to_string()).collect(),
        }
    }

    #[test]
    fn histogram_sorts_as_strings() {
        let mut d = Diagnosis::default();
        for i in 0..10 {
            d.explicit
                .push((format!("a{i}"), status(&["Insufficient cpu"])));
        }
        d.explicit
            .push(("b".into(), status(&["node(s) were unschedulable"])));
        d.explicit
            .push(("c".into(), status(&["node(s) were unschedulable"])));
        assert_eq!(
            d.fit_error_message(12),
            "0/12 nodes are available: 10 Insufficient cpu, 2 node(s) were unschedulable."
        );
    }

    #[test]
    fn each_reason_of_a_node_counts_and_absent_nodes_count() {
        let mut d = Diagnosis::default();
        d.explicit.push((
            "a".into(),
            status(&["Insufficient cpu", "Insufficient memory"]),
        ));
        d.absent = Some(status(&["node(s) didn't satisfy plugin(s) [NodeAffinity]"]));
        assert_eq!(
            d.fit_error_message(4),
            "0/4 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, \
             3 node(s) didn't satisfy plugin(s) [NodeAffinity]."
        );
    }

    #[test]
    fn prefilter_message_replaces_histogram() {
        let d = Diagnosis {
            pre_filter_msg: Some("pod affinity terms conflict".into()),
            ..Default::default()
        };
        assert_eq!(
            d.fit_error_message(3),
            "0/3 nodes are available: pod affinity terms conflict."
        );
    }
}
