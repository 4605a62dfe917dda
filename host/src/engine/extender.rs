//! Extenders: out-of-process filters and scorers kube-scheduler calls by
//! HTTP after its own filters (`findNodesThatPassExtenders`) and beside its
//! score plugins (`prioritizeNodes`). The engine sees them through
//! [`Extender`]; the HTTP client is `plugins::extender`'s.

use super::diagnosis::NodeStatus;
use super::plugin::Cycle;
use crate::input::kube::FullObjects;
use sift_sdk::Status;
use std::collections::BTreeMap;
use std::sync::Arc;

/// An extender's filter answer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExtenderFilter {
    /// The nodes that pass, in the extender's order.
    pub feasible: Vec<Arc<str>>,
    /// Node name -> message: Unschedulable.
    pub failed: BTreeMap<String, String>,
    /// Node name -> message: UnschedulableAndUnresolvable (wins over
    /// `failed` for a node in both).
    pub failed_and_unresolvable: BTreeMap<String, String>,
}

/// One configured extender.
pub trait Extender: Send + Sync {
    /// How kube-scheduler names it: its URL prefix.
    fn name(&self) -> &str;
    /// An error skips it instead of failing the cycle.
    fn is_ignorable(&self) -> bool;
    /// Whether it wants this pod (its managed resources; all pods when it
    /// manages none).
    fn is_interested(&self, pod: &sift_sdk::Pod) -> bool;
    /// Whether it has a filter verb.
    fn filters(&self) -> bool;
    /// Whether it has a prioritize verb.
    fn prioritizes(&self) -> bool;
    /// The objects its requests carry.
    fn full_objects(&self) -> FullObjects;
    /// Filters `nodes` (names in the cycle's snapshot).
    fn filter(&self, cycle: &Cycle, nodes: &[Arc<str>]) -> Result<ExtenderFilter, String>;
    /// Scores `nodes`: (host, score 0..=10) pairs and the weight.
    fn prioritize(&self, cycle: &Cycle, nodes: &[Arc<str>]) -> Result<Vec<(String, i64)>, String>;
    fn weight(&self) -> i64;
}

/// What the extenders decided for a cycle's feasible nodes (slots of the
/// cycle's snapshot).
pub struct ExtenderPass {
    pub feasible: Vec<u32>,
    /// Statuses for the nodes they rejected, to set in NodeToStatus.
    pub statuses: Vec<(u32, NodeStatus)>,
    /// Errors of ignorable extenders, skipped.
    pub ignored_errors: Vec<String>,
}

/// kube-scheduler's `findNodesThatPassExtenders`: each interested
/// extender in turn filters what the previous left (none is called once
/// nothing is left); an error fails the cycle unless the extender is
/// ignorable. A node an extender lists as failed gets its message as an
/// Unschedulable status (UnschedulableAndUnresolvable from
/// `FailedAndUnresolvableNodes`), whatever status it had.
///
/// Extenders see names. A failed node that is not in the snapshot is
/// dropped (upstream would count it in the FitError message); the
/// feasible ones are checked by the client (`plugins::extender`).
pub fn pass_extenders(
    extenders: &[Arc<dyn Extender>],
    cycle: &Cycle,
    feasible: Vec<u32>,
) -> Result<ExtenderPass, String> {
    let snapshot = &cycle.snapshot;
    let mut feasible: Vec<Arc<str>> = feasible
        .into_iter()
        .map(|s| snapshot.name(s).clone())
        .collect();
    let mut statuses = Vec::new();
    let mut ignored_errors = Vec::new();
    for ext in extenders {
        if feasible.is_empty() {
            break;
        }
        if !ext.is_interested(&cycle.pod) {
            continue;
        }
        let answer = match ext.filter(cycle, &feasible) {
            Ok(a) => a,
            Err(e) if ext.is_ignorable() => {
                tracing::info!(extender = ext.name(), "skipping ignorable extender: {e}");
                ignored_errors.push(format!("extender {}: {e}", ext.name()));
                continue;
            }
            Err(e) => return Err(e),
        };
        let status = |code: sift_sdk::Code, msg: &str| {
            NodeStatus::new(Some(ext.name()), Status::new(code, [msg.to_string()]))
        };
        for (node, msg) in &answer.failed_and_unresolvable {
            if let Some(slot) = snapshot.slot_of(node) {
                let st = status(sift_sdk::Code::UnschedulableAndUnresolvable, msg);
                statuses.push((slot, st));
            }
        }
        for (node, msg) in &answer.failed {
            if answer.failed_and_unresolvable.contains_key(node) {
                continue;
            }
            if let Some(slot) = snapshot.slot_of(node) {
                statuses.push((slot, status(sift_sdk::Code::Unschedulable, msg)));
            }
        }
        feasible = answer.feasible;
    }
    Ok(ExtenderPass {
        feasible: feasible
            .iter()
            .filter_map(|n| snapshot.slot_of(n))
            .collect(),
        statuses,
        ignored_errors,
    })
}

/// One extender's scores, scaled to 0..=100, before its weight.
pub struct ExtenderScores {
    pub extender: String,
    pub weight: i64,
    pub scores: Vec<i64>,
}

/// kube-scheduler's extender part of `prioritizeNodes`: each interested
/// extender's scores times its weight times `MaxNodeScore /
/// MaxExtenderPriority`, per node (aligned with `nodes`); an extender that
/// fails gives no score. Also one row per extender for explanations.
pub fn extender_scores(
    extenders: &[Arc<dyn Extender>],
    cycle: &Cycle,
    nodes: &[Arc<str>],
) -> (Vec<i64>, Vec<ExtenderScores>) {
    let scale = sift_sdk::MAX_NODE_SCORE / crate::input::extender::MAX_EXTENDER_PRIORITY;
    let mut totals = vec![0i64; nodes.len()];
    let mut rows = Vec::new();
    let index: std::collections::HashMap<&str, usize> =
        nodes.iter().enumerate().map(|(i, n)| (&**n, i)).collect();
    for ext in extenders {
        if !ext.prioritizes() || !ext.is_interested(&cycle.pod) {
            continue;
        }
        let list = match ext.prioritize(cycle, nodes) {
            Ok(l) => l,
            Err(e) => {
                tracing::info!(
                    extender = ext.name(),
                    "extender prioritize failed, no score: {e}"
                );
                continue;
            }
        };
        let weight = ext.weight();
        let mut row = vec![0i64; nodes.len()];
        for (host, score) in list {
            if let Some(&i) = index.get(host.as_str()) {
                let s = score.saturating_mul(scale);
                row[i] = row[i].saturating_add(s);
                totals[i] = totals[i].saturating_add(s.saturating_mul(weight));
            }
        }
        rows.push(ExtenderScores {
            extender: ext.name().to_string(),
            weight,
            scores: row,
        });
    }
    (totals, rows)
}
