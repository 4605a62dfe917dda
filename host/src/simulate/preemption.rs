//! DefaultPreemption, the PostFilter of a pod that fit nowhere
//! (`default_preemption.go`, `framework/preemption/preemption.go`).
//!
//! 1. A pod with `preemptionPolicy: Never` is not eligible.
//! 2. Only nodes whose filter status is Unschedulable are potential
//!    nodes; the others count as "Preemption is not helpful for
//!    scheduling".
//! 3. On each potential node, in node order, victims are chosen as
//!    `selectVictimsOnNode` does: every bound pod of lower priority is
//!    removed (none: "No preemption victims found for incoming pod"), the
//!    node is filtered again (a rejection there is the node's status),
//!    then the removed pods are put back one by one, most important first
//!    (higher priority, then earlier start), each kept if the pod still
//!    fits: first those whose eviction would violate a
//!    PodDisruptionBudget, then the others. Each violating pod that could
//!    not be kept is one PDB violation of the candidate. The search stops
//!    once it has `max(10% of the potential nodes, 100)` candidates, one
//!    of them without violations (upstream starts it at a random offset;
//!    sift at the first node, deterministically).
//! 4. One candidate is chosen as `pickOneNodeForPreemption` does: fewest
//!    PDB violations, then lowest highest victim priority, then lowest
//!    sum of priorities, then fewest victims, then the latest earliest
//!    start among the highest-priority victims, then the first (those
//!    without violations in node order, then the others).
//! 5. No candidate: the message is "preemption: " and the FitError text of
//!    the nodes' statuses, and the pod loses any nomination it had.
//!
//! Budgets are read as their status says (the disruption controller keeps
//! it; the scheduler never writes it), so a simulation takes them as given.

use crate::cluster::{ClusterState, Evicted, Snapshot};
use crate::engine::diagnosis::no_node_available;
use crate::engine::{CycleOutcome, Engine};
use k8s_openapi::api::core::v1 as k8s;
use sift_sdk::{Code, Pod};
use std::collections::BTreeMap;

/// DefaultPreemption's `minCandidateNodesPercentage` and
/// `minCandidateNodesAbsolute` defaults.
const MIN_CANDIDATE_NODES_PERCENTAGE: usize = 10;
const MIN_CANDIDATE_NODES_ABSOLUTE: usize = 100;

/// What DefaultPreemption concluded for a pod that fit nowhere.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PostFilter {
    /// Not eligible to preempt (`preemptionPolicy: Never`), or the dry run
    /// failed: the text appended to the FitError message; a nomination it
    /// has is kept.
    Ineligible(String),
    /// No candidate: the text appended to the FitError message; a
    /// nomination it has is cleared (upstream's `Preempt` returns an empty
    /// nominated node then).
    NotHelpful(String),
    /// Evicting `victims` (namespace/name, most important first) from
    /// `node` makes room: the pod is nominated there.
    Preempt { node: String, victims: Vec<String> },
}

/// A bound pod preemption may evict.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Victim {
    key: String,
    priority: i32,
    /// When it started (simulated seconds).
    start: u64,
}

struct Candidate {
    node: String,
    /// Most important first.
    victims: Vec<Victim>,
    /// Victims whose eviction violates a PodDisruptionBudget.
    violations: usize,
}

/// Runs DefaultPreemption for `pod` after a cycle on `snapshot` (the state
/// of `cluster`) that found no node (`failed`). `start_time` gives a bound
/// pod's start.
pub fn post_filter(
    engine: &Engine,
    cluster: &ClusterState,
    snapshot: &Snapshot,
    object: &k8s::Pod,
    pod: &Pod,
    failed: &CycleOutcome,
    start_time: &dyn Fn(&str) -> u64,
) -> PostFilter {
    let never = object
        .spec
        .as_ref()
        .and_then(|s| s.preemption_policy.as_deref())
        == Some("Never");
    if never {
        return PostFilter::Ineligible(
            "preemption: not eligible due to preemptionPolicy=Never.".into(),
        );
    }
    let all = snapshot.len();
    let code_of: std::collections::HashMap<&str, Code> =
        failed.statuses().map(|(n, s)| (&**n, s.code())).collect();
    let potential: Vec<&str> = (0..all as u32)
        .map(|slot| &**snapshot.name(slot))
        .filter(|name| code_of.get(name).copied() == Some(Code::Unschedulable))
        .collect();
    let mut histogram: BTreeMap<String, usize> = BTreeMap::new();
    let not_helpful = all - potential.len();
    let wanted = (potential.len() * MIN_CANDIDATE_NODES_PERCENTAGE / 100)
        .max(MIN_CANDIDATE_NODES_ABSOLUTE)
        .min(potential.len());
    let mut candidates = Vec::new();
    let mut without_violations = 0;
    let mut errors: Vec<String> = Vec::new();
    // One copy of the cluster for every dry run: pods are taken off a
    // node and put back before the next.
    let mut dry: Option<ClusterState> = None;
    let any_victim = cluster.has_bound_below(pod.priority);
    for name in potential {
        // Upstream looks past `wanted` until a candidate violates no
        // budget.
        if candidates.len() >= wanted && without_violations > 0 {
            break;
        }
        let lower: Vec<Victim> = if any_victim {
            cluster
                .bound_pods_on(name)
                .into_iter()
                .filter(|(_, p)| *p < pod.priority)
                .map(|(key, priority)| Victim {
                    start: start_time(&key),
                    key,
                    priority,
                })
                .collect()
        } else {
            Vec::new()
        };
        if lower.is_empty() {
            *histogram
                .entry("No preemption victims found for incoming pod".into())
                .or_default() += 1;
            continue;
        }
        let dry = dry.get_or_insert_with(|| cluster.clone());
        match select_victims_on_node(engine, dry, pod, name, lower) {
            Ok((victims, violations)) if !victims.is_empty() => {
                without_violations += usize::from(violations == 0);
                candidates.push(Candidate {
                    node: name.to_string(),
                    victims,
                    violations,
                })
            }
            // The filters pass without evicting anything: what rejected
            // the node (an extender) is not something preemption can
            // change. Upstream's DryRunPreemption makes this an error.
            Ok(_) => errors.push(format!("expected at least one victim pod on node {name:?}")),
            Err(reasons) => {
                for r in reasons {
                    *histogram.entry(r).or_default() += 1;
                }
            }
        }
    }
    if let Some(best) = pick_one_node(candidates) {
        return PostFilter::Preempt {
            node: best.node,
            victims: best.victims.into_iter().map(|v| v.key).collect(),
        };
    }
    // No candidate and a node in error: upstream's Preempt returns the
    // errors (an aggregate) as the PostFilter's message; the nomination
    // is left as it was.
    if !errors.is_empty() {
        return PostFilter::Ineligible(if errors.len() == 1 {
            errors.remove(0)
        } else {
            format!("[{}]", errors.join(", "))
        });
    }
    if not_helpful > 0 {
        *histogram
            .entry("Preemption is not helpful for scheduling".into())
            .or_default() += not_helpful;
    }
    let mut entries: Vec<String> = histogram
        .into_iter()
        .map(|(r, n)| format!("{n} {r}"))
        .collect();
    entries.sort();
    PostFilter::NotHelpful(format!(
        "preemption: {}: {}.",
        no_node_available(all),
        entries.join(", ")
    ))
}

/// Whether `pod` passes the filters on `node` in `dry`'s current state;
/// else the reasons.
fn fits(engine: &Engine, dry: &mut ClusterState, pod: &Pod, node: &str) -> Result<(), Vec<String>> {
    let snapshot = dry.snapshot();
    let Some(slot) = snapshot.slot_of(node) else {
        return Err(vec![format!("node {node} is gone")]);
    };
    let out = engine.filter_candidates(engine.plugins(), &snapshot, pod.clone(), &[slot]);
    match (out.status(node), &out.error) {
        (None, None) => Ok(()),
        (None, Some(e)) => Err(vec![e.clone()]),
        (Some(status), _) => Err(status.reasons().iter().map(|r| r.to_string()).collect()),
    }
}

/// `selectVictimsOnNode`: the victims on `node` (most important first)
/// and how many of them violate a PodDisruptionBudget, or why the pod does
/// not fit there even without them. `dry` is left as it was.
fn select_victims_on_node(
    engine: &Engine,
    dry: &mut ClusterState,
    pod: &Pod,
    node: &str,
    mut lower: Vec<Victim>,
) -> Result<(Vec<Victim>, usize), Vec<String>> {
    let mut taken: Vec<(Victim, Evicted, bool)> = Vec::new();
    lower.sort_by(more_important);
    // Which victims a budget protects, asked while they are still bound.
    let keys: Vec<&str> = lower.iter().map(|v| v.key.as_str()).collect();
    let violating = dry.violating_budgets(&keys);
    for (v, violates) in lower.into_iter().zip(violating) {
        if let Some(e) = dry.evict(&v.key) {
            taken.push((v, e, violates));
        }
    }
    if let Err(reasons) = fits(engine, dry, pod, node) {
        for (_, e, _) in taken {
            dry.restore(e);
        }
        return Err(reasons);
    }
    // Reprieve: put each back, those a budget protects first; it stays
    // if the pod still fits.
    let (protected, unprotected): (Vec<_>, Vec<_>) =
        taken.into_iter().partition(|(_, _, violates)| *violates);
    let mut victims = Vec::new();
    let mut violations = 0;
    let mut evicted = Vec::new();
    for (v, e, violates) in protected.into_iter().chain(unprotected) {
        dry.restore(e);
        if fits(engine, dry, pod, node).is_err() {
            if let Some(e) = dry.evict(&v.key) {
                evicted.push(e);
            }
            violations += usize::from(violates);
            victims.push(v);
        }
    }
    for e in evicted {
        dry.restore(e);
    }
    victims.sort_by(more_important);
    Ok((victims, violations))
}

/// `MoreImportantPod`: higher priority, then earlier start; key order for
/// a deterministic rest.
fn more_important(a: &Victim, b: &Victim) -> std::cmp::Ordering {
    b.priority
        .cmp(&a.priority)
        .then(a.start.cmp(&b.start))
        .then(a.key.cmp(&b.key))
}

/// `pickOneNodeForPreemption`; ties go to the earlier candidate, those
/// without PDB violations first (upstream's candidate order).
fn pick_one_node(mut candidates: Vec<Candidate>) -> Option<Candidate> {
    candidates.sort_by_key(|c| c.violations > 0);
    // (PDB violations, highest victim priority, sum of priorities,
    // victims, -latest start)
    let key = |c: &Candidate| {
        let highest = c
            .victims
            .iter()
            .map(|v| v.priority)
            .max()
            .unwrap_or(i32::MIN);
        let sum: i64 = c
            .victims
            .iter()
            .map(|v| i64::from(v.priority) + i64::from(i32::MAX) + 1)
            .sum();
        let earliest_of_highest = c
            .victims
            .iter()
            .filter(|v| v.priority == highest)
            .map(|v| v.start)
            .min()
            .unwrap_or(0);
        (
            c.violations,
            highest,
            sum,
            c.victims.len(),
            std::cmp::Reverse(earliest_of_highest),
        )
    };
    let mut best: Option<(Candidate, _)> = None;
    for c in candidates {
        let k = key(&c);
        if best.as_ref().is_none_or(|(_, bk)| k < *bk) {
            best = Some((c, k));
        }
    }
    best.map(|(c, _)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(node: &str, victims: &[(i32, u64)]) -> Candidate {
        Candidate {
            node: node.into(),
            violations: 0,
            victims: victims
                .iter()
                .enumerate()
                .map(|(i, (p, s))| Victim {
                    key: format!("{node}-{i}"),
                    priority: *p,
                    start: *s,
                })
                .collect(),
        }
    }

    #[test]
    fn picks_as_upstream_orders_the_criteria() {
        let pick = |cs: Vec<Candidate>| pick_one_node(cs).unwrap().node;
        // 1. Fewest PDB violations, before anything else.
        let mut violating = cand("a", &[(1, 0)]);
        violating.violations = 1;
        assert_eq!(pick(vec![violating, cand("b", &[(5, 0), (5, 0)])]), "b");
        // 2. Lowest highest-priority victim.
        assert_eq!(
            pick(vec![cand("a", &[(5, 0)]), cand("b", &[(3, 0), (3, 0)])]),
            "b"
        );
        // 3. Then lowest sum of priorities.
        assert_eq!(
            pick(vec![
                cand("a", &[(3, 0), (2, 0)]),
                cand("b", &[(3, 0), (1, 0)])
            ]),
            "b"
        );
        // 4. Then fewest victims (sums count each pod's offset).
        assert_eq!(
            pick(vec![cand("a", &[(3, 0), (3, 0)]), cand("b", &[(3, 0)])]),
            "b"
        );
        // 5. Then the latest start among the highest-priority victims.
        assert_eq!(
            pick(vec![cand("a", &[(3, 10)]), cand("b", &[(3, 20)])]),
            "b"
        );
        // 6. Then node order.
        assert_eq!(
            pick(vec![cand("a", &[(3, 10)]), cand("b", &[(3, 10)])]),
            "a"
        );
        assert!(pick_one_node(Vec::new()).is_none());
    }
}
