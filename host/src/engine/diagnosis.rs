//! Why nodes were rejected (kube-scheduler's Diagnosis and NodeToStatus)
//! and the one-line message of a failed cycle (FitError).

use serde::Serialize;
use sift_sdk::{Code, Status};
use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// A node's verdict: the status a plugin gave and which plugin gave it.
/// Cheap to clone: nodes rejected for the same reason share the status,
/// and plugin names are interned ([`plugin_name`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeStatus {
    pub plugin: Option<&'static str>,
    pub status: Arc<Status>,
}

/// A plugin's (or extender's) name as a `&'static str`. A cycle records one
/// status per rejected node, each naming its plugin; a refcounted name cost
/// two atomic operations per rejected node, and its count's cache line
/// bounced between the cores (BENCHMARKS.md). Each distinct name is leaked
/// once: as many as plugins and extenders ever configured.
pub fn plugin_name(name: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(&interned) = names.get(name) {
        return interned;
    }
    let interned: &'static str = Box::leak(name.into());
    names.insert(interned);
    interned
}

impl NodeStatus {
    pub fn new(plugin: Option<&str>, status: Status) -> NodeStatus {
        NodeStatus {
            plugin: plugin.map(plugin_name),
            status: Arc::new(status),
        }
    }

    pub fn code(&self) -> Code {
        self.status.code
    }

    pub fn reasons(&self) -> &[std::borrow::Cow<'static, str>] {
        self.status.reasons()
    }

    pub fn plugin(&self) -> Option<&str> {
        self.plugin
    }

    /// kube-scheduler's `Status.Message()`: the reasons joined by ", ".
    pub fn message(&self) -> String {
        self.status.message()
    }
}

impl Serialize for NodeStatus {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("NodeStatus", 3)?;
        st.serialize_field("code", self.code().as_str())?;
        if let Some(p) = self.plugin() {
            st.serialize_field("plugin", p)?;
        }
        st.serialize_field("reasons", self.reasons())?;
        st.end()
    }
}

/// Statuses of the nodes that were checked (explicit), plus one status for
/// every node that was not (absent: narrowed out by a prepare step, or
/// rejected wholesale by one).
#[derive(Clone, Debug, Default)]
pub struct Diagnosis {
    /// By slot in the cycle's snapshot.
    pub explicit: Vec<(u32, NodeStatus)>,
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
            for r in status.reasons() {
                *histogram.entry(r).or_default() += 1;
            }
        }
        if let Some(absent) = &self.absent {
            let n = num_all_nodes.saturating_sub(self.explicit.len());
            if n > 0 {
                for r in absent.reasons() {
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
        NodeStatus::new(
            Some("P"),
            Status::new(Code::Unschedulable, reasons.iter().map(|r| r.to_string())),
        )
    }

    #[test]
    fn histogram_sorts_as_strings() {
        let mut d = Diagnosis::default();
        for i in 0..10 {
            d.explicit.push((i, status(&["Insufficient cpu"])));
        }
        d.explicit
            .push((10, status(&["node(s) were unschedulable"])));
        d.explicit
            .push((11, status(&["node(s) were unschedulable"])));
        assert_eq!(
            d.fit_error_message(12),
            "0/12 nodes are available: 10 Insufficient cpu, 2 node(s) were unschedulable."
        );
    }

    #[test]
    fn each_reason_of_a_node_counts_and_absent_nodes_count() {
        let mut d = Diagnosis::default();
        d.explicit
            .push((0, status(&["Insufficient cpu", "Insufficient memory"])));
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
