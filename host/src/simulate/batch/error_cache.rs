//! allocate's predicate error cache (Volcano's `PredicateHelper` with
//! `enablePredicateErrorCache`, on by default): within one job's pass,
//! once a task of a role (`volcano.sh/task-spec`) has failed on some
//! nodes, later tasks of that role fail on those nodes again without
//! being checked, even if the cluster changed since (a spread constraint
//! that the earlier placements now satisfy, say). As the engine's first
//! filter it keeps the engine's sampling: cached nodes count as checked.

use crate::cluster::nominated::NominatedPass;
use crate::engine::plugin::{
    BatchFilter, Cycle, FilterPlugin, PluginError, PrepareOutcome, Prepared,
};
use sift_sdk::{Code, Status};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Node -> the reasons it failed with.
pub type NodeErrors = HashMap<Arc<str>, Vec<String>>;

#[derive(Default)]
pub struct ErrorCache {
    /// The failures the next cycle reuses (set by the session around a
    /// cycle; `None`: no cache for this task).
    current: Mutex<Option<Arc<NodeErrors>>>,
}

impl ErrorCache {
    pub fn set(&self, errors: Option<Arc<NodeErrors>>) {
        if let Ok(mut c) = self.current.lock() {
            *c = errors;
        }
    }
}

impl FilterPlugin for ErrorCache {
    fn name(&self) -> &str {
        "predicate-error-cache"
    }

    fn version(&self) -> &str {
        "native"
    }

    fn prepare<'a>(&'a self, cycle: &'a Cycle) -> Result<Prepared<'a>, PluginError> {
        let errors = self.current.lock().ok().and_then(|c| c.clone());
        let outcome = if errors.is_some() {
            PrepareOutcome::Proceed
        } else {
            PrepareOutcome::Skip
        };
        Ok(Prepared {
            outcome,
            filter: Box::new(Cached {
                errors,
                snapshot: &cycle.snapshot,
            }),
        })
    }
}

struct Cached<'a> {
    errors: Option<Arc<NodeErrors>>,
    snapshot: &'a crate::cluster::Snapshot,
}

impl Cached<'_> {
    fn status(&self, name: &str) -> Option<Status> {
        let reasons = self.errors.as_ref()?.get(name)?;
        Some(Status::new(Code::Unschedulable, reasons.iter().cloned()))
    }
}

impl BatchFilter for Cached<'_> {
    fn filter(
        &self,
        slots: &[u32],
        rejections: &mut Vec<(u32, Arc<Status>)>,
    ) -> Result<(), PluginError> {
        for (i, &slot) in slots.iter().enumerate() {
            if let Some(s) = self.status(self.snapshot.name(slot)) {
                rejections.push((i as u32, Arc::new(s)));
            }
        }
        Ok(())
    }

    fn filter_nominated(&self, slot: u32, _pass: &NominatedPass) -> Result<Status, PluginError> {
        Ok(self
            .status(self.snapshot.name(slot))
            .unwrap_or_else(Status::success))
    }
}
