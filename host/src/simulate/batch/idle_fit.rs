//! The resource check Volcano's allocate makes before the predicates: a
//! task's request (one pod included) must fit the node's idle resources,
//! else `Insufficient <first short resource>` (cpu, memory, then scalars
//! by name). As a filter plugin it runs first in the session's engine, so
//! sampling, rotation and the diagnosis are the engine's.

use super::resource::{MIN_RESOURCE, PODS, Res};
use crate::cluster::Snapshot;
use crate::cluster::nominated::NominatedPass;
use crate::engine::plugin::{
    BatchFilter, Cycle, FilterPlugin, PluginError, PrepareOutcome, Prepared,
};
use sift_sdk::{Node, Status};
use std::sync::Arc;

/// The name its rejections carry in `--explain`.
pub const NAME: &str = "allocate";

pub struct IdleFit;

impl FilterPlugin for IdleFit {
    fn name(&self) -> &str {
        NAME
    }

    fn version(&self) -> &str {
        "native"
    }

    fn prepare<'a>(&'a self, cycle: &'a Cycle) -> Result<Prepared<'a>, PluginError> {
        Ok(Prepared {
            outcome: PrepareOutcome::Proceed,
            filter: Box::new(IdleFilter {
                request: Res::request(&cycle.pod.requests),
                snapshot: &cycle.snapshot,
            }),
        })
    }
}

struct IdleFilter<'a> {
    request: Res,
    snapshot: &'a Snapshot,
}

impl BatchFilter for IdleFilter<'_> {
    fn filter(
        &self,
        slots: &[u32],
        rejections: &mut Vec<(u32, Arc<Status>)>,
    ) -> Result<(), PluginError> {
        for (i, &slot) in slots.iter().enumerate() {
            if let Some(status) = check(&self.request, self.snapshot.node(slot)) {
                rejections.push((i as u32, Arc::new(status)));
            }
        }
        Ok(())
    }

    fn filter_nominated(&self, _slot: u32, pass: &NominatedPass) -> Result<Status, PluginError> {
        Ok(check(&self.request, &pass.node).unwrap_or_else(Status::success))
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
