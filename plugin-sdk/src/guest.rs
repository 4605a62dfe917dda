//! The component side of the contract: bindings, the node table the host
//! syncs into the instance, and conversion from the wire types to the
//! SDK's model. Plugin authors never touch this module.

use crate::model::{
    HostPort, Labels, Node, Pod, SelectorRequirement, SelectorTerm, Taint, Toleration,
};
use crate::resources::Resources;
use crate::{Args, Code, NodeFields, Predicate, Prepare, Status};
use std::borrow::Cow;

#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "../wit/0.1.0",
        world: "predicate-plugin",
        pub_export_macro: true,
        export_macro_name: "__export_guest",
        default_bindings_module: "sift_sdk::guest::bindings",
    });
}

pub use bindings::exports::sift::predicate::predicate::Guest;
pub use bindings::sift::predicate::types as wit;

/// Sends a message to the host's log, tagged with the plugin's name.
pub fn log(level: crate::LogLevel, message: &str) {
    use bindings::sift::predicate::log::{Level, log};
    let level = match level {
        crate::LogLevel::Trace => Level::Trace,
        crate::LogLevel::Debug => Level::Debug,
        crate::LogLevel::Info => Level::Info,
        crate::LogLevel::Warn => Level::Warn,
        crate::LogLevel::Error => Level::Error,
    };
    log(level, message);
}

pub fn describe<P: Predicate>() -> wit::PluginInfo {
    let f = P::NODE_FIELDS;
    let mut flags = wit::NodeFields::empty();
    for (ours, theirs) in [
        (NodeFields::LABELS, wit::NodeFields::LABELS),
        (NodeFields::TAINTS, wit::NodeFields::TAINTS),
        (NodeFields::UNSCHEDULABLE, wit::NodeFields::UNSCHEDULABLE),
        (NodeFields::RESOURCES, wit::NodeFields::RESOURCES),
        (NodeFields::PORTS, wit::NodeFields::PORTS),
    ] {
        if f.contains(ours) {
            flags = flags | theirs;
        }
    }
    wit::PluginInfo {
        name: P::NAME.to_string(),
        node_fields: flags,
    }
}

/// Everything an instance remembers between calls.
pub struct State<P: Predicate> {
    plugin: Option<P>,
    nodes: Vec<Option<Node>>,
    pod: Option<(Pod, P::PodState)>,
}

impl<P: Predicate> Default for State<P> {
    fn default() -> Self {
        State {
            plugin: None,
            nodes: Vec::new(),
            pod: None,
        }
    }
}

impl<P: Predicate> State<P> {
    pub fn init(&mut self, args: &str) -> Result<(), String> {
        self.plugin = Some(P::new(Args::from_json(args)?)?);
        Ok(())
    }

    pub fn sync_nodes(&mut self, upserts: Vec<wit::NodeEntry>, removals: Vec<u32>) {
        for slot in removals {
            if let Some(n) = self.nodes.get_mut(slot as usize) {
                *n = None;
            }
        }
        for entry in upserts {
            let slot = entry.slot as usize;
            if slot >= self.nodes.len() {
                self.nodes.resize_with(slot + 1, || None);
            }
            self.nodes[slot] = Some(node(entry.node, P::NODE_LABELS));
        }
    }

    pub fn prepare(&mut self, wire: wit::Pod) -> wit::PrepareResult {
        self.pod = None;
        let Some(plugin) = &self.plugin else {
            return wit::PrepareResult::Reject(status_to_wire(Status::error(
                "plugin not initialised",
            )));
        };
        let pod = pod(wire);
        match plugin.prepare(&pod) {
            Prepare::Proceed(s) => {
                self.pod = Some((pod, s));
                wit::PrepareResult::Proceed
            }
            Prepare::Narrow(s, names) => {
                self.pod = Some((pod, s));
                wit::PrepareResult::Narrow(names)
            }
            Prepare::Skip => wit::PrepareResult::Skip,
            Prepare::Reject(status) => wit::PrepareResult::Reject(status_to_wire(status)),
        }
    }

    pub fn filter(&self, slots: &[u32]) -> wit::Verdicts {
        let mut statuses: Vec<Status> = Vec::new();
        let mut rejections = Vec::new();
        let mut reject = |i: usize, status: Status| {
            // Batches share few distinct statuses: a short scan finds them.
            let id = match statuses.iter().rposition(|s| same_status(s, &status)) {
                Some(id) => id,
                None => {
                    statuses.push(status);
                    statuses.len() - 1
                }
            };
            rejections.push((i as u32, id as u32));
        };
        match (&self.plugin, &self.pod) {
            (Some(plugin), Some((pod, state))) => {
                for (i, slot) in slots.iter().enumerate() {
                    let status = match self.nodes.get(*slot as usize) {
                        Some(Some(node)) => plugin.filter(pod, state, node),
                        _ => Status::error(format!("node slot {slot} was never synced")),
                    };
                    if status.code != Code::Success {
                        reject(i, status);
                    }
                }
            }
            _ => {
                for i in 0..slots.len() {
                    reject(i, Status::error("filter called without a prepared pod"));
                }
            }
        }
        wit::Verdicts {
            statuses: statuses.into_iter().map(status_to_wire).collect(),
            rejections,
        }
    }
}

/// Equality of statuses that compares constant reasons by address first:
/// string comparison is a byte loop inside WebAssembly.
#[inline]
fn same_status(a: &Status, b: &Status) -> bool {
    a.code == b.code
        && a.reasons().len() == b.reasons().len()
        && a.reasons()
            .iter()
            .zip(b.reasons())
            .all(|(x, y)| match (x, y) {
                (Cow::Borrowed(x), Cow::Borrowed(y)) if std::ptr::eq(*x, *y) => true,
                _ => x == y,
            })
}

fn status_to_wire(s: Status) -> wit::Status {
    wit::Status {
        code: match s.code {
            Code::Success => wit::Code::Success,
            Code::Error => wit::Code::Error,
            Code::Unschedulable => wit::Code::Unschedulable,
            Code::UnschedulableAndUnresolvable => wit::Code::UnschedulableAndUnresolvable,
            Code::Skip => wit::Code::Skip,
        },
        reasons: s.into_reasons().map(Cow::into_owned).collect(),
    }
}

fn labels(l: Vec<wit::Label>) -> Labels {
    Labels::new(l.into_iter().map(|l| (l.key, l.value)).collect())
}

fn resources(r: wit::Resources) -> Resources {
    Resources {
        milli_cpu: r.milli_cpu,
        memory: r.memory,
        ephemeral_storage: r.ephemeral_storage,
        allowed_pod_number: r.allowed_pod_number,
        scalar: r.scalar.into_iter().map(|a| (a.name, a.amount)).collect(),
    }
}

fn host_port(p: wit::HostPort) -> HostPort {
    HostPort {
        port: p.port,
        protocol: p.protocol,
        host_ip: p.host_ip,
    }
}

fn requirement(r: wit::SelectorRequirement) -> SelectorRequirement {
    SelectorRequirement {
        key: r.key,
        operator: r.operator,
        values: r.values,
    }
}

/// Converts a synced node, keeping only the labels in `keep` (if given).
fn node(mut n: wit::Node, keep: Option<&[&str]>) -> Node {
    if let Some(keep) = keep {
        n.labels.retain(|l| keep.contains(&l.key.as_str()));
    }
    Node {
        name: n.name,
        labels: labels(n.labels),
        taints: n
            .taints
            .into_iter()
            .map(|t| Taint {
                key: t.key,
                value: t.value,
                effect: t.effect,
            })
            .collect(),
        unschedulable: n.unschedulable,
        allocatable: resources(n.allocatable),
        requested: resources(n.requested),
        pod_count: n.pod_count,
        used_ports: n.used_ports.into_iter().map(host_port).collect(),
        ..Node::default()
    }
}

fn pod(p: wit::Pod) -> Pod {
    Pod {
        name: p.name,
        namespace: p.namespace,
        uid: p.uid,
        labels: labels(p.labels),
        node_name: p.node_name,
        node_selector: labels(p.node_selector),
        required_node_affinity: p.required_node_affinity.map(|terms| {
            terms
                .into_iter()
                .map(|t| SelectorTerm {
                    match_expressions: t.match_expressions.into_iter().map(requirement).collect(),
                    match_fields: t.match_fields.into_iter().map(requirement).collect(),
                })
                .collect()
        }),
        tolerations: p
            .tolerations
            .into_iter()
            .map(|t| Toleration {
                key: t.key,
                operator: t.operator,
                value: t.value,
                effect: t.effect,
                toleration_seconds: t.toleration_seconds,
            })
            .collect(),
        host_ports: p.host_ports.into_iter().map(host_port).collect(),
        requests: resources(p.requests),
        ..Pod::default()
    }
}
