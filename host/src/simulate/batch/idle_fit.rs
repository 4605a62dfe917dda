//! The resource check Volcano's allocate makes before the predicates: a
//! task's request (one pod included) must fit the node's idle resources,
//! else `Insufficient <first short resource>` (cpu, memory, then scalars
//! by name). As a filter plugin it runs first in the session's engine, so
//! sampling, rotation and the diagnosis are the engine's
//! ([`super::node_rule`]).

use super::node_rule::{Judge, NodeRule};
use super::resource::{MIN_RESOURCE, PODS, Res};
use crate::engine::plugin::Cycle;
use sift_sdk::{Node, Status};

pub struct IdleFit;

impl NodeRule for IdleFit {
    fn name(&self) -> &str {
        "allocate"
    }

    fn judge<'a>(&'a self, cycle: &'a Cycle) -> Option<Judge<'a>> {
        let request = Res::request(&cycle.pod.requests);
        Some(Box::new(move |_, node| check(&request, node)))
    }
}

/// The node's idle amount of one resource, in [`Res`] units.
fn idle(node: &Node, name: &str) -> f64 {
    let (a, r) = (&node.allocatable, &node.requested);
    match name {
        "cpu" => (a.milli_cpu - r.milli_cpu) as f64,
        "memory" => (a.memory - r.memory) as f64,
        PODS => (a.allowed_pod_number - node.pod_count as i64) as f64,
        "ephemeral-storage" => (a.ephemeral_storage - r.ephemeral_storage) as f64 * 1000.0,
        other => (a.scalar(other) - r.scalar(other)) as f64 * 1000.0,
    }
}

/// Whether `request` fits the node's idle resources.
pub fn fits(request: &Res, node: &Node) -> bool {
    check(request, node).is_none()
}

fn check(request: &Res, node: &Node) -> Option<Status> {
    let fits = |want: f64, name: &str| {
        let have = idle(node, name);
        want < have || (want - have).abs() < MIN_RESOURCE
    };
    let short = if !fits(request.cpu, "cpu") {
        Some("cpu")
    } else if !fits(request.memory, "memory") {
        Some("memory")
    } else {
        request
            .scalars
            .iter()
            .find(|(k, v)| !fits(**v, k))
            .map(|(k, _)| k.as_str())
    };
    short.map(|name| Status::unschedulable(format!("Insufficient {name}")))
}
