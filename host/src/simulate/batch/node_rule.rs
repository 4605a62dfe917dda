//! Batch mode's host-side filters (the idle check, the pod count, the
//! predicate error cache) judge each node by itself from what the cycle's
//! pod needs: one [`NodeRule`] each, run by the engine as a filter plugin
//! ([`RuleFilter`]), so sampling, rotation and the diagnosis are the
//! engine's.

use crate::cluster::Snapshot;
use crate::cluster::nominated::NominatedPass;
use crate::engine::plugin::{BatchFilter, Cycle, Plugin, PluginError, PrepareOutcome, Prepared};
use sift_sdk::{Node, Status};
use std::sync::Arc;

/// A node's verdict: `None` passes.
pub type Judge<'a> = Box<dyn Fn(&str, &Node) -> Option<Status> + Send + Sync + 'a>;

pub trait NodeRule: Send + Sync {
    /// The name its rejections carry (`--explain`).
    fn name(&self) -> &str;
    /// The judge for this cycle's pod; `None` skips the rule.
    fn judge<'a>(&'a self, cycle: &'a Cycle) -> Option<Judge<'a>>;
}

/// A [`NodeRule`] as the engine's filter plugin.
pub struct RuleFilter<R>(pub R);

impl<R: NodeRule> Plugin for RuleFilter<R> {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn version(&self) -> &str {
        "native"
    }

    fn prepare<'a>(&'a self, cycle: &'a Cycle) -> Result<Prepared<'a>, PluginError> {
        let judge = self.0.judge(cycle);
        Ok(Prepared {
            outcome: if judge.is_some() {
                PrepareOutcome::Proceed
            } else {
                PrepareOutcome::Skip
            },
            filter: Box::new(Judging {
                judge,
                snapshot: &cycle.snapshot,
            }),
        })
    }
}

struct Judging<'a> {
    judge: Option<Judge<'a>>,
    snapshot: &'a Snapshot,
}

impl Judging<'_> {
    fn verdict(&self, name: &str, node: &Node) -> Option<Status> {
        self.judge.as_ref().and_then(|j| j(name, node))
    }
}

impl BatchFilter for Judging<'_> {
    fn filter(
        &self,
        slots: &[u32],
        rejections: &mut Vec<(u32, Arc<Status>)>,
    ) -> Result<(), PluginError> {
        for (i, &slot) in slots.iter().enumerate() {
            if let Some(s) = self.verdict(self.snapshot.name(slot), self.snapshot.node(slot)) {
                rejections.push((i as u32, Arc::new(s)));
            }
        }
        Ok(())
    }

    fn filter_nominated(&self, slot: u32, pass: &NominatedPass) -> Result<Status, PluginError> {
        Ok(self
            .verdict(self.snapshot.name(slot), &pass.node)
            .unwrap_or_else(Status::success))
    }
}
