//! The first check of Volcano's `predicates` plugin: a node already
//! holding its `pods` allocatable takes no more (`node(s) pod number
//! exceeded`). allocate's idle check usually says `Insufficient pods`
//! first; backfill, which has no idle check, meets this one.

use super::node_rule::{Judge, NodeRule};
use crate::engine::plugin::Cycle;
use sift_sdk::{Node, Status};

/// Volcano's `api.NodePodNumberExceeded`.
pub const REASON: &str = "node(s) pod number exceeded";

pub struct PodNumber;

impl NodeRule for PodNumber {
    fn name(&self) -> &str {
        "predicates"
    }

    fn judge<'a>(&'a self, _cycle: &'a Cycle) -> Option<Judge<'a>> {
        Some(Box::new(|_, node| check(node)))
    }
}

fn check(node: &Node) -> Option<Status> {
    (node.allocatable.allowed_pod_number <= node.pod_count as i64)
        .then(|| Status::unschedulable(REASON))
}
