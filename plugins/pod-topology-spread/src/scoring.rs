//! PodTopologySpread's scoring (upstream's `scoring.go`, restated):
//! prefer the nodes whose domains hold the fewest pods matching the pod's
//! `ScheduleAnyway` constraints.
//!
//! - PreScore keeps the feasible nodes that have every constraint's key
//!   (the others are ignored: they score 0 and stay out of the min and
//!   max), and for each constraint the domains those nodes span. Each
//!   constraint weighs a pod `ln(domains + 2)` (for the hostname key,
//!   `ln(nodes + 2)`), so a constraint over few domains is not watered
//!   down by one over many.
//! - The matching pods are counted on every node of the cluster, feasible
//!   or not, that has every key and passes the constraint's inclusion
//!   policies, into those domains; for the hostname key, on the node
//!   itself. An empty selector (`{}`) counts nothing, terminating pods and
//!   other namespaces' pods are not counted.
//! - Score sums `count * weight + maxSkew - 1` over the constraints whose
//!   key the node has, rounded half away from zero.
//! - NormalizeScore gives `100 * (max + min - s) / max` (integers), 100 to
//!   every node when the maximum is 0.
//!
//! A pod without constraints of its own is scored by the default
//! constraints over its workload selector ([`Defaults`]); with the system
//! defaults a node need not have every key: a node without a zone label
//! falls in the zone domain "" when counting, and is still scored by host.

use crate::{Constraint, Defaults, has_all_keys, included};
use sift_sdk::selector::RequiredNodeAffinity;
use sift_sdk::{ClusterView, FastMap, MAX_NODE_SCORE, Node, Pod};
use std::collections::HashSet;

/// `kubernetes.io/hostname`: counted per node, not per domain.
const HOSTNAME: &str = "kubernetes.io/hostname";

/// What PreScore computed for one pod: upstream's `preScoreState`.
#[derive(Clone, Debug, Default)]
pub struct ScoreState {
    constraints: Vec<Constraint>,
    /// Feasible nodes lacking a constraint's key, by name.
    ignored: HashSet<String>,
    /// The same, in the order PreScore got the feasible nodes.
    ignored_at: Vec<bool>,
    /// Per constraint: matching pods by domain (hostname: by node name).
    counts: Vec<FastMap<String, i64>>,
    /// Per constraint: `ln(size + 2)`.
    weights: Vec<f64>,
}

/// Upstream's PreScore: `Ok(None)` is Skip (no soft constraint), an error
/// is PreScore's Error status.
pub fn pre_score(
    pod: &Pod,
    defaults: &Defaults,
    feasible: &[&Node],
    cluster: &dyn ClusterView,
) -> Result<Option<ScoreState>, String> {
    let own = !pod.topology_spread_constraints.is_empty();
    let constraints = defaults.constraints(pod, "ScheduleAnyway").map_err(|e| {
        if own {
            format!(
                "calculating preScoreState: obtaining pod's soft topology spread constraints: {e}"
            )
        } else {
            format!(
                "calculating preScoreState: setting default soft topology spread constraints: {e}"
            )
        }
    })?;
    // Only the system defaults spare a node some key.
    let require_all = own || !defaults.is_system();
    if constraints.is_empty() || cluster.slots() == 0 {
        return Ok(None);
    }
    let mut ignored_at = Vec::with_capacity(feasible.len());
    let mut ignored = HashSet::new();
    let mut counts: Vec<FastMap<String, i64>> = vec![FastMap::default(); constraints.len()];
    let mut scored_nodes = 0usize;
    for node in feasible {
        let lacks_key = require_all && !has_all_keys(&node.labels, &constraints);
        ignored_at.push(lacks_key);
        if lacks_key {
            ignored.insert(node.name.clone());
            continue;
        }
        scored_nodes += 1;
        for (i, c) in constraints.iter().enumerate() {
            let key = if c.topology_key.as_str() == HOSTNAME {
                node.name.as_str()
            } else {
                node.labels.get_key(&c.topology_key).unwrap_or_default()
            };
            counts[i].entry(key.to_string()).or_insert(0);
        }
    }
    let weights = constraints
        .iter()
        .zip(&counts)
        .map(|(c, domains)| {
            let size = if c.topology_key.as_str() == HOSTNAME {
                scored_nodes
            } else {
                domains.len()
            };
            (size as f64 + 2.0).ln()
        })
        .collect();
    count(pod, cluster, &constraints, require_all, &mut counts);
    Ok(Some(ScoreState {
        constraints,
        ignored,
        ignored_at,
        counts,
        weights,
    }))
}

/// Adds each constraint's matching pods into its counted domains: from the
/// group index, so only matching groups' placements are visited.
fn count(
    pod: &Pod,
    cluster: &dyn ClusterView,
    constraints: &[Constraint],
    require_all: bool,
    counts: &mut [FastMap<String, i64>],
) {
    let affinity = RequiredNodeAffinity::of(pod);
    let index = cluster.group_index();
    for (group, placements) in &index.groups {
        if group.terminating || group.namespace != pod.namespace {
            continue;
        }
        let hits: Vec<usize> = (0..constraints.len())
            .filter(|&i| {
                let s = &constraints[i].selector;
                !s.is_everything() && s.matches(&group.labels)
            })
            .collect();
        if hits.is_empty() {
            continue;
        }
        for &(slot, n) in placements {
            let Some(node) = cluster.node(slot) else {
                continue;
            };
            for &i in &hits {
                let c = &constraints[i];
                // The node's own pods, for the hostname key: upstream's
                // Score counts them whatever the inclusion policies say.
                let domain = if c.topology_key.as_str() == HOSTNAME {
                    Some(node.name.as_str())
                } else if (!require_all || has_all_keys(&node.labels, constraints))
                    && included(c, node, &affinity, &pod.tolerations)
                {
                    Some(node.labels.get_key(&c.topology_key).unwrap_or_default())
                } else {
                    None
                };
                if let Some(total) = domain.and_then(|d| counts[i].get_mut(d)) {
                    *total += i64::from(n);
                }
            }
        }
    }
}

/// Upstream's Score.
pub fn score(state: &ScoreState, node: &Node) -> i64 {
    if state.ignored.contains(&node.name) {
        return 0;
    }
    let mut total = 0.0;
    for (i, c) in state.constraints.iter().enumerate() {
        let Some(value) = node.labels.get_key(&c.topology_key) else {
            continue;
        };
        let domain = if c.topology_key.as_str() == HOSTNAME {
            node.name.as_str()
        } else {
            value
        };
        let count = state.counts[i].get(domain).copied().unwrap_or(0);
        total += count as f64 * state.weights[i] + f64::from(c.max_skew - 1);
    }
    total.round() as i64
}

/// Upstream's NormalizeScore, over the feasible nodes in PreScore's order.
pub fn normalize(state: &ScoreState, scores: &mut [i64]) {
    let ignored = |i: usize| state.ignored_at.get(i).copied().unwrap_or(false);
    let (mut min, mut max) = (i64::MAX, 0);
    for (i, s) in scores.iter().enumerate() {
        if !ignored(i) {
            min = min.min(*s);
            max = max.max(*s);
        }
    }
    for (i, s) in scores.iter_mut().enumerate() {
        *s = if ignored(i) {
            0
        } else if max == 0 {
            MAX_NODE_SCORE
        } else {
            MAX_NODE_SCORE * (max + min - *s) / max
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sift_sdk::{ClusterTables, GroupCount, LabelSelector, PodGroup, TopologySpreadConstraint};
    use std::sync::Arc;

    fn node(name: &str, zone: Option<&str>) -> Node {
        let mut labels = vec![(HOSTNAME, name)];
        labels.extend(zone.map(|z| ("zone", z)));
        Node {
            name: name.into(),
            labels: labels.into_iter().collect(),
            ..Node::default()
        }
    }

    fn group(id: u64, namespace: &str, app: &str, terminating: bool) -> Arc<PodGroup> {
        Arc::new(PodGroup {
            id,
            namespace: namespace.into(),
            labels: [("app", app)].into_iter().collect(),
            terminating,
            ..PodGroup::default()
        })
    }

    /// Nodes a, b (zone z1), c (z2), d (no zone); `pods[i]` on node i.
    fn cluster(pods: Vec<Vec<(Arc<PodGroup>, u32)>>) -> ClusterTables {
        ClusterTables {
            nodes: vec![
                node("a", Some("z1")),
                node("b", Some("z1")),
                node("c", Some("z2")),
                node("d", None),
            ],
            pods: pods
                .into_iter()
                .map(|on| {
                    on.into_iter()
                        .map(|(group, count)| GroupCount { group, count })
                        .collect()
                })
                .collect(),
            namespaces: vec![],
            ..Default::default()
        }
    }

    fn spread(key: &str, max_skew: i32, app: Option<&str>) -> TopologySpreadConstraint {
        TopologySpreadConstraint {
            max_skew,
            topology_key: key.into(),
            when_unsatisfiable: "ScheduleAnyway".into(),
            label_selector: Some(LabelSelector {
                match_labels: app.map(|a| ("app".into(), a.into())).into_iter().collect(),
                match_expressions: vec![],
            }),
            ..Default::default()
        }
    }

    fn incoming(constraints: Vec<TopologySpreadConstraint>) -> Pod {
        Pod {
            name: "incoming".into(),
            namespace: "default".into(),
            labels: [("app", "web")].into_iter().collect(),
            topology_spread_constraints: constraints,
            ..Pod::default()
        }
    }

    /// PreScore, Score and NormalizeScore over every node, raw and normalized.
    fn scores(pod: &Pod, c: &ClusterTables) -> Option<(Vec<i64>, Vec<i64>)> {
        let nodes: Vec<&Node> = c.nodes.iter().collect();
        let state = pre_score(pod, &Defaults::default(), &nodes, c).unwrap()?;
        let raw: Vec<i64> = nodes.iter().map(|n| score(&state, n)).collect();
        let mut normalized = raw.clone();
        normalize(&state, &mut normalized);
        Some((raw, normalized))
    }

    #[test]
    fn fewer_matching_pods_in_the_domain_score_higher_and_nodes_without_the_key_score_0() {
        let web = group(1, "default", "web", false);
        let c = cluster(vec![vec![(web.clone(), 2)], vec![], vec![(web, 1)], vec![]]);
        let pod = incoming(vec![spread("zone", 1, Some("web"))]);
        // Two zones: weight ln 4; z1 holds 2 pods, z2 1; d lacks the key.
        let w = 4f64.ln();
        let (raw, normalized) = scores(&pod, &c).unwrap();
        let (z1, z2) = ((2.0 * w).round() as i64, w.round() as i64);
        assert_eq!(raw, [z1, z1, z2, 0]);
        assert_eq!(normalized, [100 * z2 / z1, 100 * z2 / z1, 100, 0]);
    }

    #[test]
    fn terminating_pods_other_namespaces_and_an_empty_selector_count_nothing() {
        let c = cluster(vec![
            vec![(group(1, "default", "web", true), 5)],
            vec![(group(2, "other", "web", false), 5)],
            vec![],
            vec![],
        ]);
        let pod = incoming(vec![spread(HOSTNAME, 2, Some("web"))]);
        // Nothing counts: every node scores maxSkew - 1 and normalizes to 100.
        let (raw, normalized) = scores(&pod, &c).unwrap();
        assert_eq!(raw, [1, 1, 1, 1]);
        assert_eq!(normalized, [100; 4]);
        let everyone = cluster(vec![
            vec![(group(3, "default", "db", false), 4)],
            vec![],
            vec![],
            vec![],
        ]);
        let (raw, _) = scores(&incoming(vec![spread(HOSTNAME, 1, None)]), &everyone).unwrap();
        assert_eq!(raw, [0; 4], "an empty selector counts no pod");
    }

    #[test]
    fn the_hostname_key_counts_the_nodes_own_pods_weighted_by_the_node_count() {
        let web = group(1, "default", "web", false);
        let c = cluster(vec![vec![(web.clone(), 3)], vec![(web, 1)], vec![], vec![]]);
        let pod = incoming(vec![spread(HOSTNAME, 1, Some("web"))]);
        let w = 6f64.ln();
        let (raw, normalized) = scores(&pod, &c).unwrap();
        assert_eq!(raw, [(3.0 * w).round() as i64, w.round() as i64, 0, 0]);
        let max = raw[0];
        assert_eq!(
            normalized,
            raw.iter()
                .map(|s| 100 * (max - s) / max)
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_pod_without_schedule_anyway_constraints_is_skipped() {
        let c = cluster(vec![vec![], vec![], vec![], vec![]]);
        assert!(scores(&incoming(vec![]), &c).is_none());
        let mut hard = spread("zone", 1, Some("web"));
        hard.when_unsatisfiable = "DoNotSchedule".into();
        assert!(scores(&incoming(vec![hard]), &c).is_none());
    }

    #[test]
    fn an_invalid_selector_fails_pre_score_with_upstreams_message() {
        let mut bad = spread("zone", 1, None);
        bad.label_selector = Some(LabelSelector {
            match_labels: vec![("bad key".into(), "x".into())],
            match_expressions: vec![],
        });
        let c = cluster(vec![vec![], vec![], vec![], vec![]]);
        let nodes: Vec<&Node> = c.nodes.iter().collect();
        let e = pre_score(&incoming(vec![bad]), &Defaults::default(), &nodes, &c).unwrap_err();
        assert!(
            e.starts_with(
                "calculating preScoreState: obtaining pod's soft topology spread constraints:"
            ),
            "{e}"
        );
    }
}
