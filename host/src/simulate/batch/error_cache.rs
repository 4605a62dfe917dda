//! allocate's predicate error cache (Volcano's `PredicateHelper` with
//! `enablePredicateErrorCache`, on by default): within one job's pass,
//! once a task of a role (`volcano.sh/task-spec`) has failed on some
//! nodes, later tasks of that role fail on those nodes again without
//! being checked, even if the cluster changed since (a spread constraint
//! that the earlier placements now satisfy, say). As the engine's first
//! filter it keeps the engine's sampling: cached nodes count as checked.

use super::node_rule::{Judge, NodeRule};
use crate::engine::plugin::Cycle;
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

impl NodeRule for Arc<ErrorCache> {
    fn name(&self) -> &str {
        "predicate-error-cache"
    }

    fn judge<'a>(&'a self, _cycle: &'a Cycle) -> Option<Judge<'a>> {
        let errors = self.current.lock().ok().and_then(|c| c.clone())?;
        Some(Box::new(move |name, _| {
            let reasons = errors.get(name)?;
            Some(Status::new(Code::Unschedulable, reasons.iter().cloned()))
        }))
    }
}
