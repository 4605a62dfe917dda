//! The first check of Volcano's `predicates` plugin: a node already
//! holding its `pods` allocatable takes no more (`node(s) pod number
//! exceeded`). allocate's idle check usually says `Insufficient pods`
//! first; backfill, which has no idle check, meets this one.

use crate::cluster::nominated::NominatedPass;
use crate::engine::plugin::{
    BatchFilter, Cycle, FilterPlugin, PluginError, PrepareOutcome, Prepared,
};
use sift_sdk::{Node, Status};
use std::sync::Arc;

/// Volcano's `api.NodePodNumberExceeded`.
pub const REASON: &str = "node(s) pod number exceeded";

pub struct PodNumber;

impl FilterPlugin for PodNumber {
    fn name(&self) -> &str {
        "predicates"
    }

    fn version(&self) -> &str {
        "native"
    }

    fn prepare<'a>(&'a self, cycle: &'a Cycle) -> Result<Prepared<'a>, PluginError> {
        Ok(Prepared {
            outcome: PrepareOutcome::Proceed,
            filter: Box::new(Filter {
                snapshot: &cycle.snapshot,
            }),
        })
    }
}

struct Filter<'a> {
    snapshot: &'a crate::cluster::Snapshot,
}

fn check(node: &Node) -> Option<Status> {
    (node.allocatable.allowed_pod_number <= node.pod_count as i64)
        .then(|| Status::unschedulable(REASON))
}

impl BatchFilter for Filter<'_> {
    fn filter(
        &self,
        slots: &[u32],
        rejections: &mut Vec<(u32, Arc<Status>)>,
    ) -> Result<(), PluginError> {
        for (i, &slot) in slots.iter().enumerate() {
            if let Some(s) = check(self.snapshot.node(slot)) {
                rejections.push((i as u32, Arc::new(s)));
            }
        }
        Ok(())
    }

    fn filter_nominated(&self, _slot: u32, pass: &NominatedPass) -> Result<Status, PluginError> {
        Ok(check(&pass.node).unwrap_or_else(Status::success))
    }
}
