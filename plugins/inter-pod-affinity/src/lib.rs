//! kube-scheduler's InterPodAffinity: as a filter, the pod's required pod
//! affinity and anti-affinity, and the required anti-affinity of the pods
//! already placed, checked per topology domain; as a scorer, the preferred
//! terms of both sides and the placed pods' required affinity, weighed per
//! topology domain ([`scoring`]).
//!
//! Upstream: `pkg/scheduler/framework/plugins/interpodaffinity/`
//! (`filtering.go`, `scoring.go`) and the framework's `AffinityTerm`,
//! master (1.35+); restated in `docs/upstream/interpodaffinity.md`.
//! matchLabelKeys and mismatchLabelKeys are merged into the selector here,
//! as kube-apiserver does at pod creation (idempotent for pods it already
//! merged). `InterPodAffinityArgs` only affect scoring.
//!
//! 1. [`pre_filter`] counts, per (topology key, value): existing pods whose
//!    anti-affinity forbids the incoming pod, pods matching all of the
//!    pod's affinity terms, and pods matching each anti-affinity term;
//! 2. [`filter`] checks affinity, then anti-affinity, then existing pods'
//!    anti-affinity; the first failure decides.

use sift_sdk::model::LabelKey;
use sift_sdk::{
    Args, ClusterView, Domains, ExtensionPoints, FastMap, IdMap, Labels, Node, NodeFields,
    NominatedPod, Plugin, Pod, PodAffinityTerm, PodSelector, PreScore, Prepare, Status,
    export_plugin,
};

pub mod scoring;

pub use scoring::ScoreArgs;

/// The plugin's name in configuration and statuses.
pub const NAME: &str = "InterPodAffinity";

/// `ErrReasonExistingAntiAffinityRulesNotMatch`.
pub const ERR_REASON_EXISTING_ANTI_AFFINITY: &str =
    "node(s) didn't satisfy existing pods anti-affinity rules";
/// `ErrReasonAffinityRulesNotMatch`.
pub const ERR_REASON_AFFINITY: &str = "node(s) didn't match pod affinity rules";
/// `ErrReasonAntiAffinityRulesNotMatch`.
pub const ERR_REASON_ANTI_AFFINITY: &str = "node(s) didn't match pod anti-affinity rules";

/// A required term, compiled (upstream's `AffinityTerm`).
#[derive(Clone, Debug)]
pub struct Term {
    namespaces: Vec<String>,
    namespace_selector: PodSelector,
    selector: PodSelector,
    topology_key: LabelKey,
}

impl Term {
    /// `owner` is the pod the term belongs to: its namespace is the
    /// default, its labels fill matchLabelKeys and mismatchLabelKeys.
    pub fn new(
        owner_namespace: &str,
        owner_labels: &Labels,
        t: &PodAffinityTerm,
    ) -> Result<Term, String> {
        let mut selector = PodSelector::new(t.label_selector.as_ref())?;
        if t.label_selector.is_some() {
            let value = |k: &String| owner_labels.get(k).map(|v| (k.clone(), v.to_string()));
            selector = selector
                .and_equal(t.match_label_keys.iter().filter_map(value))
                .and_not_equal(t.mismatch_label_keys.iter().filter_map(value));
        }
        let namespaces = if t.namespaces.is_empty() && t.namespace_selector.is_none() {
            vec![owner_namespace.to_string()]
        } else {
            t.namespaces.clone()
        };
        Ok(Term {
            namespaces,
            namespace_selector: PodSelector::new(t.namespace_selector.as_ref())?,
            selector,
            topology_key: LabelKey::new(t.topology_key.clone()),
        })
    }

    /// Upstream's `AffinityTerm.Matches`: the pod's namespace is listed or
    /// selected (by its labels `ns_labels`), and its labels match.
    pub fn matches(&self, namespace: &str, labels: &Labels, ns_labels: &Labels) -> bool {
        (self.namespaces.iter().any(|n| n == namespace)
            || self.namespace_selector.matches(ns_labels))
            && self.selector.matches(labels)
    }

    /// The incoming pod's terms: a namespaceSelector other than `{}` is
    /// replaced by the names of the namespaces it selects
    /// (`mergeAffinityTermNamespacesIfNotEmpty`).
    fn resolve_namespaces(&mut self, cluster: &dyn ClusterView) {
        if self.namespace_selector.is_everything() {
            return;
        }
        for (name, labels) in cluster.namespaces() {
            if self.namespace_selector.matches(labels) && !self.namespaces.iter().any(|n| n == name)
            {
                self.namespaces.push(name.to_string());
            }
        }
        self.namespace_selector = PodSelector::nothing();
    }
}

/// Counts by topology key, then value; entries are never zero and a key
/// without entries is dropped. Keyed by key first so that a Filter looks a
/// node's value up once per key the counts have, without building strings
/// (a `(key, value)` map allocated two strings per label of every node).
#[derive(Clone, Debug, Default)]
struct Counts(Vec<(LabelKey, FastMap<String, i64>)>);

impl Counts {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn add(&mut self, key: &LabelKey, value: &str, by: i64) {
        let i = match self.0.iter().position(|(k, _)| k == key) {
            Some(i) => i,
            None => {
                self.0.push((key.clone(), FastMap::default()));
                self.0.len() - 1
            }
        };
        let values = &mut self.0[i].1;
        let n = values.entry(value.to_string()).or_insert(0);
        *n += by;
        if *n == 0 {
            values.remove(value);
            if values.is_empty() {
                self.0.swap_remove(i);
            }
        }
    }

    fn get(&self, key: &LabelKey, value: &str) -> i64 {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, values)| values.get(value))
            .copied()
            .unwrap_or(0)
    }
}

fn bump(counts: &mut Counts, key: &LabelKey, node: &Node, by: i64) {
    if let Some(value) = node.labels.get_key(key) {
        counts.add(key, value, by);
    }
}

/// As [`bump`], with the node's value from a domain column.
fn bump_domain(counts: &mut Counts, key: &LabelKey, domains: &Domains, slot: u32, by: i64) {
    if let Some(d) = domains.of(slot) {
        counts.add(key, &domains.values[d as usize], by);
    }
}

/// What PreFilter computed for one pod: upstream's `preFilterState`.
#[derive(Clone, Debug, Default)]
pub struct AffinityState {
    affinity_terms: Vec<Term>,
    anti_terms: Vec<Term>,
    existing_anti: Counts,
    affinity: Counts,
    anti: Counts,
    /// The pod matches all of its own affinity terms.
    matches_own_affinity: bool,
    /// The labels of the pod's namespace, which other pods' terms select.
    namespace_labels: Labels,
    /// PreScore's sums by topology pair, for Score (empty in PreFilter's
    /// state).
    topology_score: Counts,
}

fn compile(pod: &Pod, terms: &[PodAffinityTerm]) -> Result<Vec<Term>, String> {
    terms
        .iter()
        .map(|t| Term::new(&pod.namespace, &pod.labels, t))
        .collect()
}

/// Upstream's PreFilter: `Ok(None)` is Skip; an error is the
/// UnschedulableAndUnresolvable status upstream gives a pod whose terms do
/// not parse.
pub fn pre_filter(pod: &Pod, cluster: &dyn ClusterView) -> Result<Option<AffinityState>, String> {
    let mut affinity_terms = compile(pod, &pod.pod_affinity)
        .map_err(|e| format!("parsing pod: requiredAffinityTerms: {e}"))?;
    let mut anti_terms = compile(pod, &pod.pod_anti_affinity)
        .map_err(|e| format!("parsing pod: requiredAntiAffinityTerms: {e}"))?;
    for t in affinity_terms.iter_mut().chain(anti_terms.iter_mut()) {
        t.resolve_namespaces(cluster);
    }
    let none = Labels::default();
    let ns_labels = cluster.namespace_labels(&pod.namespace).unwrap_or(&none);

    // Existing pods' anti-affinity, from the nodes that have such pods.
    let mut existing_anti = Counts::default();
    let mut parsed: IdMap<Vec<Term>> = IdMap::default();
    for slot in cluster.anti_affinity_slots() {
        let Some(node) = cluster.node(slot) else {
            continue;
        };
        for g in cluster.pods_on(slot) {
            let group = &g.group;
            if group.anti_affinity.is_empty() {
                continue;
            }
            // A term list that does not parse contributes nothing, as
            // upstream ignores an existing pod's parse errors.
            let terms = parsed.entry(group.id).or_insert_with(|| {
                group
                    .anti_affinity
                    .iter()
                    .map(|t| Term::new(&group.namespace, &group.labels, t))
                    .collect::<Result<Vec<_>, _>>()
                    .unwrap_or_default()
            });
            for t in terms.iter() {
                if t.matches(&pod.namespace, &pod.labels, ns_labels) {
                    bump(
                        &mut existing_anti,
                        &t.topology_key,
                        node,
                        i64::from(g.count),
                    );
                }
            }
        }
    }
    if existing_anti.is_empty() && affinity_terms.is_empty() && anti_terms.is_empty() {
        return Ok(None);
    }

    // The pods matching the incoming pod's terms, over every node.
    let mut affinity = Counts::default();
    let mut anti = Counts::default();
    if !affinity_terms.is_empty() || !anti_terms.is_empty() {
        // From the group index: a group's terms are matched once, and only
        // the nodes holding matching pods are visited.
        let affinity_domains: Vec<_> = affinity_terms
            .iter()
            .map(|t| cluster.domains(t.topology_key.as_str()))
            .collect();
        let anti_domains: Vec<_> = anti_terms
            .iter()
            .map(|t| cluster.domains(t.topology_key.as_str()))
            .collect();
        let index = cluster.group_index();
        for (group, placements) in &index.groups {
            let all = !affinity_terms.is_empty()
                && affinity_terms
                    .iter()
                    .all(|t| t.matches(&group.namespace, &group.labels, &none));
            let each: Vec<bool> = anti_terms
                .iter()
                .map(|t| t.matches(&group.namespace, &group.labels, &none))
                .collect();
            if !all && !each.contains(&true) {
                continue;
            }
            for &(slot, count) in placements {
                let n = i64::from(count);
                if all {
                    for (t, d) in affinity_terms.iter().zip(&affinity_domains) {
                        bump_domain(&mut affinity, &t.topology_key, d, slot, n);
                    }
                }
                for ((t, d), hit) in anti_terms.iter().zip(&anti_domains).zip(&each) {
                    if *hit {
                        bump_domain(&mut anti, &t.topology_key, d, slot, n);
                    }
                }
            }
        }
    }
    let matches_own_affinity = !affinity_terms.is_empty()
        && affinity_terms
            .iter()
            .all(|t| t.matches(&pod.namespace, &pod.labels, &none));
    Ok(Some(AffinityState {
        affinity_terms,
        anti_terms,
        existing_anti,
        affinity,
        anti,
        matches_own_affinity,
        namespace_labels: ns_labels.clone(),
        topology_score: Counts::default(),
    }))
}

impl AffinityState {
    /// Upstream's AddPod (`updateWithPod` with +1): a pod of `namespace`
    /// with `labels` and required anti-affinity `anti_affinity` placed on
    /// `node`, for the incoming `pod`.
    pub fn add_pod(&mut self, pod: &Pod, added: &sift_sdk::PodGroup, node: &Node) {
        // The added pod's terms that forbid the incoming pod; a list that
        // does not parse counts nothing, as for existing pods.
        let terms: Vec<Term> = added
            .anti_affinity
            .iter()
            .map(|t| Term::new(&added.namespace, &added.labels, t))
            .collect::<Result<_, _>>()
            .unwrap_or_default();
        for t in &terms {
            if t.matches(&pod.namespace, &pod.labels, &self.namespace_labels) {
                bump(&mut self.existing_anti, &t.topology_key, node, 1);
            }
        }
        let none = Labels::default();
        if !self.affinity_terms.is_empty()
            && self
                .affinity_terms
                .iter()
                .all(|t| t.matches(&added.namespace, &added.labels, &none))
        {
            for t in &self.affinity_terms {
                bump(&mut self.affinity, &t.topology_key, node, 1);
            }
        }
        for t in &self.anti_terms {
            if t.matches(&added.namespace, &added.labels, &none) {
                bump(&mut self.anti, &t.topology_key, node, 1);
            }
        }
    }
}

fn count(counts: &Counts, key: &LabelKey, value: &str) -> i64 {
    counts.get(key, value)
}

/// `satisfyPodAffinity`, with the "first pod of a collection" rule: when no
/// pod anywhere matches the terms, a pod matching its own terms may go
/// anywhere that has the topology keys.
fn satisfies_affinity(s: &AffinityState, node: &Node) -> bool {
    let mut pods_exist = true;
    for t in &s.affinity_terms {
        let Some(value) = node.labels.get_key(&t.topology_key) else {
            return false;
        };
        if count(&s.affinity, &t.topology_key, value) <= 0 {
            pods_exist = false;
        }
    }
    pods_exist || (s.affinity.is_empty() && s.matches_own_affinity)
}

fn satisfies_anti_affinity(s: &AffinityState, node: &Node) -> bool {
    s.anti.is_empty()
        || s.anti_terms.iter().all(|t| {
            node.labels
                .get_key(&t.topology_key)
                .is_none_or(|v| count(&s.anti, &t.topology_key, v) <= 0)
        })
}

fn satisfies_existing_anti_affinity(s: &AffinityState, node: &Node) -> bool {
    s.existing_anti.is_empty()
        || s.existing_anti.0.iter().all(|(k, values)| {
            node.labels
                .get_key(k)
                .is_none_or(|v| values.get(v).is_none_or(|n| *n <= 0))
        })
}

/// Upstream's Filter.
pub fn filter(state: &AffinityState, node: &Node) -> Status {
    if !satisfies_affinity(state, node) {
        return Status::unresolvable(ERR_REASON_AFFINITY);
    }
    if !satisfies_anti_affinity(state, node) {
        return Status::unschedulable(ERR_REASON_ANTI_AFFINITY);
    }
    if !satisfies_existing_anti_affinity(state, node) {
        return Status::unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY);
    }
    Status::success()
}

/// The plugin: PreFilter and Filter above, PreScore, Score and
/// NormalizeScore in [`scoring`], behind the SDK's trait.
#[derive(Debug)]
pub struct InterPodAffinity {
    args: ScoreArgs,
}

/// `InterPodAffinityArgs`: both fields only affect scoring.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct AffinityArgs {
    #[serde(default)]
    hard_pod_affinity_weight: Option<i32>,
    #[serde(default)]
    ignore_preferred_terms_of_existing_pods: Option<bool>,
}

/// Upstream's `ValidateInterPodAffinityArgs`, with its defaults
/// (`hardPodAffinityWeight` 1, `ignorePreferredTermsOfExistingPods` false).
pub fn parse_args(args: &Args) -> Result<ScoreArgs, String> {
    let mut out = ScoreArgs::default();
    if args.is_empty() {
        return Ok(out);
    }
    let parsed: AffinityArgs = args.parse()?;
    if let Some(w) = parsed.hard_pod_affinity_weight {
        if !(0..=100).contains(&w) {
            return Err(format!(
                "hardPodAffinityWeight: Invalid value: {w}: not in valid range [0, 100]"
            ));
        }
        out.hard_pod_affinity_weight = w;
    }
    if let Some(ignore) = parsed.ignore_preferred_terms_of_existing_pods {
        out.ignore_preferred_terms_of_existing_pods = ignore;
    }
    Ok(out)
}

impl Plugin for InterPodAffinity {
    const NAME: &'static str = NAME;
    const EXTENSION_POINTS: ExtensionPoints = ExtensionPoints::FILTER.union(ExtensionPoints::SCORE);
    /// Filter and Score read labels only; the cluster view brings the pods.
    const NODE_FIELDS: NodeFields = NodeFields::LABELS;
    const READS_CLUSTER: bool = true;
    type PodState = AffinityState;

    fn new(args: Args) -> Result<Self, String> {
        Ok(InterPodAffinity {
            args: parse_args(&args)?,
        })
    }

    fn prepare(&self, pod: &Pod, cluster: &dyn ClusterView) -> Prepare<AffinityState> {
        match pre_filter(pod, cluster) {
            Ok(Some(state)) => Prepare::Proceed(state),
            Ok(None) => Prepare::Skip,
            Err(e) => Prepare::Reject(Status::unresolvable(e)),
        }
    }

    fn filter(&self, _pod: &Pod, state: &AffinityState, node: &Node) -> Status {
        filter(state, node)
    }

    fn add_pods(
        &self,
        pod: &Pod,
        state: &AffinityState,
        node: &Node,
        added: &[NominatedPod],
    ) -> Option<AffinityState> {
        let mut state = state.clone();
        for a in added {
            state.add_pod(pod, &a.group, node);
        }
        Some(state)
    }

    fn pre_score(
        &self,
        pod: &Pod,
        _feasible: &[&Node],
        cluster: &dyn ClusterView,
    ) -> PreScore<AffinityState> {
        match scoring::pre_score(pod, cluster, self.args) {
            Ok(Some(topology_score)) => PreScore::Proceed(AffinityState {
                topology_score,
                ..AffinityState::default()
            }),
            Ok(None) => PreScore::Skip,
            Err(e) => PreScore::Error(Status::error(e)),
        }
    }

    fn score(&self, _pod: &Pod, state: &AffinityState, node: &Node) -> Result<i64, Status> {
        Ok(scoring::score(&state.topology_score, node))
    }

    fn normalize_scores(
        &self,
        _pod: &Pod,
        _state: &AffinityState,
        scores: &mut [i64],
    ) -> Result<(), Status> {
        scoring::normalize(scores);
        Ok(())
    }
}

export_plugin!(InterPodAffinity);
