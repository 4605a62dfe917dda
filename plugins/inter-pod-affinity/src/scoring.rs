//! InterPodAffinity's scoring (upstream's `scoring.go`, restated).
//!
//! PreScore sums weights per topology pair (key, value): for every pod
//! already placed, whose node has the term's topology key,
//! - +weight for each preferred affinity term of the incoming pod the
//!   placed pod matches, -weight for each preferred anti-affinity term;
//! - +`hardPodAffinityWeight` for each required affinity term of the placed
//!   pod the incoming pod matches (when the weight is above 0);
//! - +weight / -weight for each preferred affinity / anti-affinity term of
//!   the placed pod the incoming pod matches,
//!
//! each added to the pair of the placed pod's node. Score is the sum over
//! the pairs of the node's labels; NormalizeScore maps the feasible nodes'
//! scores from [min, max] onto [0, 100] in float64, truncated, all 0 when
//! they are equal. PreScore skips the pod when no pair got anything, and
//! when `ignorePreferredTermsOfExistingPods` is set and the pod has no
//! preferred term of its own.
//!
//! Upstream walks the nodes and each pod on them; here the cluster view's
//! groups are walked instead: a group's terms are matched once, then added
//! for each node holding its pods, times the pods there.

use crate::{Counts, Term};
use sift_sdk::model::LabelKey;
use sift_sdk::{
    ClusterView, Domains, FastMap, Labels, MAX_NODE_SCORE, Node, Pod, PodAffinityTerm,
    WeightedPodAffinityTerm,
};
use std::sync::Arc;

/// `InterPodAffinityArgs`, defaulted (`hardPodAffinityWeight` 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScoreArgs {
    pub hard_pod_affinity_weight: i32,
    pub ignore_preferred_terms_of_existing_pods: bool,
}

impl Default for ScoreArgs {
    fn default() -> ScoreArgs {
        ScoreArgs {
            hard_pod_affinity_weight: 1,
            ignore_preferred_terms_of_existing_pods: false,
        }
    }
}

/// A term with the weight it adds (negative for anti-affinity).
struct Weighted {
    delta: i64,
    term: Term,
}

fn weighted(
    namespace: &str,
    labels: &Labels,
    terms: &[WeightedPodAffinityTerm],
    sign: i64,
) -> Result<Vec<Weighted>, String> {
    terms
        .iter()
        .map(|w| {
            Ok(Weighted {
                delta: sign * i64::from(w.weight),
                term: Term::new(namespace, labels, &w.term)?,
            })
        })
        .collect()
}

fn required(
    namespace: &str,
    labels: &Labels,
    terms: &[PodAffinityTerm],
) -> Result<Vec<Term>, String> {
    terms
        .iter()
        .map(|t| Term::new(namespace, labels, t))
        .collect()
}

/// Sums per domain of each topology key met so far.
#[derive(Default)]
struct Sums {
    columns: Vec<(LabelKey, Arc<Domains>, Vec<i64>)>,
}

impl Sums {
    fn column(&mut self, key: &LabelKey, cluster: &dyn ClusterView) -> usize {
        if let Some(i) = self.columns.iter().position(|(k, _, _)| k == key) {
            return i;
        }
        let domains = cluster.domains(key.as_str());
        let sums = vec![0; domains.values.len()];
        self.columns.push((key.clone(), domains, sums));
        self.columns.len() - 1
    }

    /// The non-zero sums by key, then value.
    fn into_counts(self) -> Counts {
        let mut out = Vec::new();
        for (key, domains, sums) in self.columns {
            let values: FastMap<String, i64> = sums
                .into_iter()
                .enumerate()
                .filter(|&(_, s)| s != 0)
                .map(|(d, s)| (domains.values[d].clone(), s))
                .collect();
            if !values.is_empty() {
                out.push((key, values));
            }
        }
        Counts(out)
    }
}

/// Upstream's PreScore: the topology score, `Ok(None)` for Skip; an error
/// for an incoming pod whose terms do not parse (`NewPodInfo`'s, which
/// parses the required terms too).
pub(crate) fn pre_score(
    pod: &Pod,
    cluster: &dyn ClusterView,
    args: ScoreArgs,
) -> Result<Option<Counts>, String> {
    let has_constraints =
        !pod.preferred_pod_affinity.is_empty() || !pod.preferred_pod_anti_affinity.is_empty();
    if args.ignore_preferred_terms_of_existing_pods && !has_constraints {
        return Ok(None);
    }
    let (ns, labels) = (pod.namespace.as_str(), &pod.labels);
    let mut errors = Vec::new();
    if let Err(e) = required(ns, labels, &pod.pod_affinity) {
        errors.push(format!("requiredAffinityTerms: {e}"));
    }
    if let Err(e) = required(ns, labels, &pod.pod_anti_affinity) {
        errors.push(format!("requiredAntiAffinityTerms: {e}"));
    }
    let mut affinity = weighted(ns, labels, &pod.preferred_pod_affinity, 1).unwrap_or_else(|e| {
        errors.push(format!("preferredAffinityTerms: {e}"));
        Vec::new()
    });
    let mut anti = weighted(ns, labels, &pod.preferred_pod_anti_affinity, -1).unwrap_or_else(|e| {
        errors.push(format!("preferredAntiAffinityTerms: {e}"));
        Vec::new()
    });
    match errors.len() {
        0 => {}
        1 => return Err(format!("failed to parse pod: {}", errors[0])),
        _ => return Err(format!("failed to parse pod: [{}]", errors.join(", "))),
    }
    for w in affinity.iter_mut().chain(anti.iter_mut()) {
        w.term.resolve_namespaces(cluster);
    }
    let incoming: Vec<Weighted> = affinity.into_iter().chain(anti).collect();
    let none = Labels::default();
    let ns_labels = cluster.namespace_labels(ns).unwrap_or(&none);

    let mut sums = Sums::default();
    let incoming_columns: Vec<usize> = incoming
        .iter()
        .map(|w| sums.column(&w.term.topology_key, cluster))
        .collect();
    let mut contributed = false;
    // (column, weight per pod) of the terms that hold between the incoming
    // pod and one group's pods.
    let mut hits: Vec<(usize, i64)> = Vec::new();
    let mut visit = |group: &sift_sdk::PodGroup, placements: &[(u32, u32)]| {
        hits.clear();
        for (w, &col) in incoming.iter().zip(&incoming_columns) {
            if w.term.matches(&group.namespace, &group.labels, &none) {
                hits.push((col, w.delta));
            }
        }
        // The group's own terms, each list dropped when it does not parse
        // (upstream ignores an existing pod's parse errors).
        let (gns, glabels) = (group.namespace.as_str(), &group.labels);
        if args.hard_pod_affinity_weight > 0 && !group.affinity.is_empty() {
            for t in required(gns, glabels, &group.affinity).unwrap_or_default() {
                if t.matches(ns, &pod.labels, ns_labels) {
                    let col = sums.column(&t.topology_key, cluster);
                    hits.push((col, i64::from(args.hard_pod_affinity_weight)));
                }
            }
        }
        for (terms, sign) in [
            (&group.preferred_affinity, 1),
            (&group.preferred_anti_affinity, -1),
        ] {
            if terms.is_empty() {
                continue;
            }
            for w in weighted(gns, glabels, terms, sign).unwrap_or_default() {
                if w.term.matches(ns, &pod.labels, ns_labels) {
                    let col = sums.column(&w.term.topology_key, cluster);
                    hits.push((col, w.delta));
                }
            }
        }
        if hits.is_empty() {
            return;
        }
        for &(slot, count) in placements {
            for &(col, delta) in &hits {
                let (_, domains, column) = &mut sums.columns[col];
                if let Some(d) = domains.of(slot) {
                    column[d as usize] += delta * i64::from(count);
                    contributed = true;
                }
            }
        }
    };
    if incoming.is_empty() {
        // Only pods with terms of their own can add anything (upstream
        // walks its nodes with affinity pods): no group index, which a
        // component rebuilds whenever a placement changed.
        for slot in cluster.affinity_slots() {
            for g in cluster.pods_on(slot) {
                if g.group.has_scored_affinity() {
                    visit(&g.group, &[(slot, g.count)]);
                }
            }
        }
    } else {
        let index = cluster.group_index();
        for (group, placements) in &index.groups {
            visit(group, placements);
        }
    }
    // Upstream skips when no node added anything (its `index == -1`).
    Ok(contributed.then(|| sums.into_counts()))
}

/// Upstream's Score: the sums of the topology pairs the node has.
pub(crate) fn score(topology: &Counts, node: &Node) -> i64 {
    topology
        .0
        .iter()
        .filter_map(|(key, values)| node.labels.get_key(key).and_then(|v| values.get(v)))
        .sum()
}

/// Upstream's NormalizeScore: `MaxNodeScore * ((s - min) / (max - min))`
/// in float64, truncated; all 0 when every score is the same.
pub fn normalize(scores: &mut [i64]) {
    let (Some(&min), Some(&max)) = (scores.iter().min(), scores.iter().max()) else {
        return;
    };
    let diff = max - min;
    for s in scores.iter_mut() {
        *s = if diff > 0 {
            (MAX_NODE_SCORE as f64 * ((*s - min) as f64 / diff as f64)) as i64
        } else {
            0
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sift_sdk::{ClusterTables, GroupCount, LabelSelector, PodGroup};

    fn normalized(scores: &[i64]) -> Vec<i64> {
        let mut s = scores.to_vec();
        normalize(&mut s);
        s
    }

    #[test]
    fn normalization_maps_min_to_0_and_max_to_100() {
        assert_eq!(normalized(&[0, 2, 10]), [0, 20, 100]);
        // The minimum is the lowest score, not 0: all-positive scores
        // still span 0..=100 (older releases started min and max at 0).
        assert_eq!(normalized(&[5, 10, 7]), [0, 100, 40]);
        // Anti-affinity alone: all negative, the least negative wins.
        assert_eq!(normalized(&[-5, -10, 0]), [50, 0, 100]);
        assert_eq!(normalized(&[-5, -10]), [100, 0]);
    }

    #[test]
    fn normalization_is_float64_then_truncated() {
        // 100 * (29 / 50) is 57.99999999999999 in float64: 57, where
        // integer arithmetic (100 * 29 / 50) would give 58.
        assert_eq!(normalized(&[0, 29, 50]), [0, 57, 100]);
        assert_eq!(normalized(&[0, 29, 100]), [0, 28, 100]);
        assert_eq!(normalized(&[0, 1, 3]), [0, 33, 100]);
    }

    #[test]
    fn normalization_of_equal_scores_is_zero() {
        assert_eq!(normalized(&[4, 4, 4]), [0, 0, 0]);
        assert_eq!(normalized(&[-3]), [0]);
        assert_eq!(normalized(&[]), Vec::<i64>::new());
    }

    fn node(name: &str, zone: Option<&str>) -> Node {
        let mut labels = vec![("kubernetes.io/hostname", name)];
        labels.extend(zone.map(|z| ("zone", z)));
        Node {
            name: name.into(),
            labels: labels.into_iter().collect(),
            ..Node::default()
        }
    }

    fn term(key: &str, value: &str, topology_key: &str) -> PodAffinityTerm {
        PodAffinityTerm {
            label_selector: Some(LabelSelector {
                match_labels: vec![(key.into(), value.into())],
                match_expressions: vec![],
            }),
            topology_key: topology_key.into(),
            ..PodAffinityTerm::default()
        }
    }

    fn weighted_term(weight: i32, t: PodAffinityTerm) -> WeightedPodAffinityTerm {
        WeightedPodAffinityTerm { weight, term: t }
    }

    fn group(id: u64, app: &str) -> PodGroup {
        PodGroup {
            id,
            namespace: "default".into(),
            labels: [("app", app)].into_iter().collect(),
            ..PodGroup::default()
        }
    }

    /// Nodes a, b (zone z1), c (z2), d (no zone); `pods[i]` on node i.
    fn cluster(pods: Vec<Vec<(PodGroup, u32)>>) -> ClusterTables {
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
                        .map(|(g, count)| GroupCount {
                            group: Arc::new(g),
                            count,
                        })
                        .collect()
                })
                .collect(),
            namespaces: vec![],
            ..Default::default()
        }
    }

    fn incoming(app: &str) -> Pod {
        Pod {
            name: "incoming".into(),
            namespace: "default".into(),
            labels: [("app", app)].into_iter().collect(),
            ..Pod::default()
        }
    }

    /// PreScore, Score and NormalizeScore over all four nodes, through the
    /// native registration; `None` when PreScore skips.
    fn scores(args: &str, pod: &Pod, c: &ClusterTables) -> Result<Option<Vec<i64>>, String> {
        let plugin = crate::sift_native_plugin().instantiate(args)?;
        let nodes: Vec<&Node> = c.nodes.iter().collect();
        plugin.score(pod, &nodes, c).map_err(|s| s.message())
    }

    #[test]
    fn a_groups_terms_count_once_per_pod_into_its_nodes_domain() {
        let web = group(1, "web");
        let c = cluster(vec![vec![(web.clone(), 2)], vec![], vec![(web, 1)], vec![]]);
        let mut pod = incoming("api");
        pod.preferred_pod_affinity = vec![weighted_term(5, term("app", "web", "zone"))];
        let state = pre_score(&pod, &c, ScoreArgs::default()).unwrap().unwrap();
        let raw: Vec<i64> = c.nodes.iter().map(|n| score(&state, n)).collect();
        // z1: 2 pods * 5, z2: 1 pod * 5; d has no zone.
        assert_eq!(raw, [10, 10, 5, 0]);
        assert_eq!(scores("{}", &pod, &c), Ok(Some(vec![100, 100, 50, 0])));
    }

    #[test]
    fn anti_affinity_subtracts_and_both_sides_terms_add_up() {
        let mut cache = group(1, "cache");
        // The placed pods prefer to stay away from api pods per zone (-3
        // each) and require api pods in their zone (hard weight).
        cache.preferred_anti_affinity = vec![weighted_term(3, term("app", "api", "zone"))];
        cache.affinity = vec![term("app", "api", "zone")];
        let c = cluster(vec![vec![], vec![], vec![(cache, 2)], vec![]]);
        let mut pod = incoming("api");
        pod.preferred_pod_anti_affinity = vec![weighted_term(1, term("app", "cache", "zone"))];
        // z2: -1 * 2 (the pod's anti) - 3 * 2 (theirs) + hard 4 * 2 = 0.
        let state = pre_score(
            &pod,
            &c,
            ScoreArgs {
                hard_pod_affinity_weight: 4,
                ..ScoreArgs::default()
            },
        )
        .unwrap();
        let raw: Vec<i64> = c
            .nodes
            .iter()
            .map(|n| score(state.as_ref().unwrap(), n))
            .collect();
        assert_eq!(raw, [0, 0, 0, 0], "contributions that cancel still proceed");
        // With the default hard weight 1: z2 -2 - 6 + 2 = -6.
        assert_eq!(scores("{}", &pod, &c), Ok(Some(vec![100, 100, 0, 100])));
        // Hard weight 0 drops the required terms: -8.
        let zero = r#"{"hardPodAffinityWeight": 0}"#;
        assert_eq!(scores(zero, &pod, &c), Ok(Some(vec![100, 100, 0, 100])));
    }

    #[test]
    fn skips_when_nothing_adds_up() {
        let c = cluster(vec![vec![(group(1, "web"), 1)], vec![], vec![], vec![]]);
        // No terms anywhere.
        assert_eq!(scores("{}", &incoming("api"), &c), Ok(None));
        // Terms that match no placed pod.
        let mut pod = incoming("api");
        pod.preferred_pod_affinity = vec![weighted_term(5, term("app", "db", "zone"))];
        assert_eq!(scores("{}", &pod, &c), Ok(None));
        // A matching pod on a node without the topology key.
        let c = cluster(vec![vec![], vec![], vec![], vec![(group(1, "db"), 1)]]);
        assert_eq!(scores("{}", &pod, &c), Ok(None));
    }

    #[test]
    fn ignore_preferred_terms_of_existing_pods_skips_a_pod_without_its_own() {
        let mut web = group(1, "web");
        web.preferred_affinity = vec![weighted_term(5, term("app", "api", "zone"))];
        let c = cluster(vec![vec![(web, 1)], vec![], vec![], vec![]]);
        let pod = incoming("api");
        let ignore = r#"{"ignorePreferredTermsOfExistingPods": true}"#;
        assert_eq!(scores("{}", &pod, &c), Ok(Some(vec![100, 100, 0, 0])));
        assert_eq!(scores(ignore, &pod, &c), Ok(None));
        // A pod with a preferred term of its own still counts theirs.
        let mut own = pod.clone();
        own.preferred_pod_anti_affinity = vec![weighted_term(1, term("app", "none", "zone"))];
        assert_eq!(scores(ignore, &own, &c), Ok(Some(vec![100, 100, 0, 0])));
    }

    #[test]
    fn the_incoming_pods_namespace_selector_becomes_namespace_names() {
        let mut in_a = group(1, "web");
        in_a.namespace = "team-a".into();
        let mut in_b = group(2, "web");
        in_b.namespace = "team-b".into();
        let mut c = cluster(vec![vec![(in_a, 1)], vec![], vec![(in_b, 3)], vec![]]);
        c.namespaces = vec![
            ("team-a".into(), [("team", "a")].into_iter().collect()),
            ("team-b".into(), [("team", "b")].into_iter().collect()),
        ];
        let mut t = term("app", "web", "zone");
        t.namespace_selector = Some(LabelSelector {
            match_labels: vec![("team".into(), "a".into())],
            match_expressions: vec![],
        });
        let mut pod = incoming("api");
        pod.preferred_pod_affinity = vec![weighted_term(2, t)];
        assert_eq!(scores("{}", &pod, &c), Ok(Some(vec![100, 100, 0, 0])));
    }

    #[test]
    fn a_placed_pods_namespace_selector_reads_the_incoming_pods_namespace() {
        let mut web = group(1, "web");
        let mut t = term("app", "api", "zone");
        t.namespace_selector = Some(LabelSelector {
            match_labels: vec![("team".into(), "a".into())],
            match_expressions: vec![],
        });
        web.preferred_affinity = vec![weighted_term(2, t)];
        let mut c = cluster(vec![vec![], vec![], vec![(web, 1)], vec![]]);
        c.namespaces = vec![("team-a".into(), [("team", "a")].into_iter().collect())];
        let mut pod = incoming("api");
        assert_eq!(scores("{}", &pod, &c), Ok(None), "default is not selected");
        pod.namespace = "team-a".into();
        assert_eq!(scores("{}", &pod, &c), Ok(Some(vec![0, 0, 100, 0])));
    }

    #[test]
    fn a_placed_pods_unparsable_list_counts_nothing_an_incoming_ones_fails() {
        let bad = PodAffinityTerm {
            label_selector: Some(LabelSelector {
                match_labels: vec![],
                match_expressions: vec![sift_sdk::SelectorRequirement {
                    key: "app".into(),
                    operator: "In".into(),
                    values: vec!["{{.bad-value.}}".into()],
                }],
            }),
            topology_key: "zone".into(),
            ..PodAffinityTerm::default()
        };
        let mut web = group(1, "web");
        web.preferred_affinity = vec![
            weighted_term(2, term("app", "api", "zone")),
            weighted_term(2, bad.clone()),
        ];
        web.preferred_anti_affinity = vec![weighted_term(1, term("app", "api", "zone"))];
        let c = cluster(vec![vec![], vec![], vec![(web, 1)], vec![]]);
        let mut pod = incoming("api");
        // Only the anti-affinity list parses: z2 -1.
        assert_eq!(scores("{}", &pod, &c), Ok(Some(vec![100, 100, 0, 100])));
        pod.preferred_pod_affinity = vec![weighted_term(1, bad)];
        let err = scores("{}", &pod, &c).unwrap_err();
        assert!(
            err.starts_with("failed to parse pod: preferredAffinityTerms: "),
            "{err}"
        );
    }

    #[test]
    fn args_are_validated_and_defaulted() {
        assert_eq!(
            crate::parse_args(&sift_sdk::Args::default()),
            Ok(ScoreArgs::default())
        );
        let parse = |json: &str| crate::parse_args(&sift_sdk::Args::from_json(json).unwrap());
        assert_eq!(
            parse(r#"{"hardPodAffinityWeight": 100, "ignorePreferredTermsOfExistingPods": true}"#),
            Ok(ScoreArgs {
                hard_pod_affinity_weight: 100,
                ignore_preferred_terms_of_existing_pods: true,
            })
        );
        assert_eq!(
            parse(r#"{"hardPodAffinityWeight": 101}"#),
            Err("hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]".into())
        );
        assert!(parse(r#"{"hardPodAffinityWeight": -1}"#).is_err());
        assert!(parse(r#"{"hardPodAffinityWeigth": 1}"#).is_err());
    }
}
