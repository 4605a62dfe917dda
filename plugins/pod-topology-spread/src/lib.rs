//! kube-scheduler's PodTopologySpread: a pod's `DoNotSchedule` topology
//! spread constraints, checked against the pods already placed in each
//! topology domain, and its `ScheduleAnyway` ones scored ([`scoring`]).
//!
//! Upstream: `pkg/scheduler/framework/plugins/podtopologyspread/`
//! (`filtering.go`, `common.go`, `plugin.go`), master (1.35+); restated in
//! `docs/upstream/podtopologyspread.md`. Behaviour that upstream gates is
//! as in 1.35 with default gates: node inclusion policies (GA) honoured,
//! matchLabelKeys merged into the selector, and an empty (`{}`) selector
//! matching every pod of the namespace (kubernetes#141340).
//!
//! A pod without constraints of its own gets the default constraints
//! (`PodTopologySpreadArgs`; kube-scheduler's system defaults unless
//! `defaultingType: List`) over its workload selector, which the host
//! deduces from the Services and controllers selecting the pod (contract
//! 0.5's `workload-selector`); none when that selector is empty.
//!
//! Filtering runs in two steps, as upstream's PreFilter and Filter:
//! 1. [`pre_filter`] builds the pod's hard constraints and counts, per
//!    constraint, the matching pods in every eligible domain;
//! 2. [`filter`] checks each node's domains against the skew.
//!
//! [`SpreadState::add_pod`] is upstream's AddPod/RemovePod, for nominated
//! pods.

use sift_sdk::selector::RequiredNodeAffinity;
use sift_sdk::toleration::{find_untolerated, is_do_not_schedule};
use sift_sdk::{
    Args, ClusterView, Domains, ExtensionPoints, FastMap, LabelKey, Labels, Node, NodeFields,
    NominatedPod, Plugin, Pod, PodSelector, PreScore, Prepare, Status, export_plugin,
};
use std::collections::HashMap;
use std::sync::Arc;

pub mod scoring;

/// The plugin's name in configuration and statuses.
pub const NAME: &str = "PodTopologySpread";

/// A node's domain holds too many matching pods (`ErrReasonConstraintsNotMatch`).
pub const ERR_REASON_CONSTRAINTS_NOT_MATCH: &str =
    "node(s) didn't match pod topology spread constraints";
/// A node lacks a constraint's topology key (`ErrReasonNodeLabelNotMatch`).
pub const ERR_REASON_NODE_LABEL_NOT_MATCH: &str =
    "node(s) didn't match pod topology spread constraints (missing required label)";

/// One hard (`DoNotSchedule`) constraint, defaults applied.
#[derive(Clone, Debug)]
pub struct Constraint {
    pub max_skew: i32,
    pub topology_key: LabelKey,
    /// The label selector with matchLabelKeys merged in.
    pub selector: PodSelector,
    /// `minDomains`, 1 when unset.
    pub min_domains: i32,
    /// `nodeAffinityPolicy: Honor` (the default).
    pub honor_node_affinity: bool,
    /// `nodeTaintsPolicy: Honor` (default: Ignore).
    pub honor_node_taints: bool,
}

/// Where a pod without constraints of its own takes them from:
/// `PodTopologySpreadArgs.defaultConstraints`, or with `defaultingType:
/// System` kube-scheduler's system defaults, each with the pod's workload
/// selector (see [`Defaults::constraints`]).
#[derive(Clone, Debug, Default)]
pub struct Defaults {
    constraints: Vec<sift_sdk::TopologySpreadConstraint>,
    /// The system defaults are in use: scoring then does not require a
    /// node to have every key (nodes without a zone still spread by host).
    system: bool,
}

impl Defaults {
    /// kube-scheduler's system defaults: hostname (maxSkew 3) then zone
    /// (maxSkew 5), both ScheduleAnyway.
    pub fn system() -> Defaults {
        let soft = |key: &str, max_skew| sift_sdk::TopologySpreadConstraint {
            max_skew,
            topology_key: key.into(),
            when_unsatisfiable: "ScheduleAnyway".into(),
            ..Default::default()
        };
        Defaults {
            constraints: vec![
                soft("kubernetes.io/hostname", 3),
                soft("topology.kubernetes.io/zone", 5),
            ],
            system: true,
        }
    }

    pub fn is_system(&self) -> bool {
        self.system
    }

    /// The pod's constraints whose `whenUnsatisfiable` is `action`: its
    /// own, or else the defaults over its workload selector (upstream's
    /// `buildDefaultConstraints`: none when that selector is empty).
    pub fn constraints(&self, pod: &Pod, action: &str) -> Result<Vec<Constraint>, String> {
        if !pod.topology_spread_constraints.is_empty() {
            return constraints(&pod.topology_spread_constraints, &pod.labels, action);
        }
        let mut out = constraints(&self.constraints, &pod.labels, action)?;
        if out.is_empty() {
            return Ok(out);
        }
        // An invalid selector (one the API server would refuse) selects
        // nothing here; upstream leaves such a controller out.
        let selector = match pod
            .workload_selector
            .as_ref()
            .map(|s| PodSelector::new(Some(s)))
        {
            Some(Ok(s)) if !s.is_everything() => s,
            _ => return Ok(Vec::new()),
        };
        for c in &mut out {
            c.selector = selector.clone();
        }
        Ok(out)
    }
}

/// The pod's hard constraints, in spec order (upstream's `getConstraints`),
/// its own or the defaults. An invalid selector is an error, which
/// upstream's PreFilter returns as an Error status.
pub fn hard_constraints(pod: &Pod, defaults: &Defaults) -> Result<Vec<Constraint>, String> {
    defaults.constraints(pod, "DoNotSchedule").map_err(|e| {
        if pod.topology_spread_constraints.is_empty() {
            format!("setting default hard topology spread constraints: {e}")
        } else {
            format!("obtaining pod's hard topology spread constraints: {e}")
        }
    })
}

/// The constraints of `list` whose `whenUnsatisfiable` is `action`, in
/// order, defaults applied (upstream's `filterTopologySpreadConstraints`).
pub fn constraints(
    list: &[sift_sdk::TopologySpreadConstraint],
    labels: &Labels,
    action: &str,
) -> Result<Vec<Constraint>, String> {
    let mut out = Vec::new();
    for c in list {
        if c.when_unsatisfiable != action {
            continue;
        }
        let selector = PodSelector::new(c.label_selector.as_ref())?;
        // matchLabelKeys: the pod's own values for the keys it has.
        let pairs: Vec<(String, String)> = c
            .match_label_keys
            .iter()
            .filter_map(|k| labels.get(k).map(|v| (k.clone(), v.to_string())))
            .collect();
        out.push(Constraint {
            max_skew: c.max_skew,
            topology_key: LabelKey::new(c.topology_key.clone()),
            selector: selector.and_equal(pairs),
            min_domains: c.min_domains.unwrap_or(1),
            honor_node_affinity: c.node_affinity_policy.as_deref() != Some("Ignore"),
            honor_node_taints: c.node_taints_policy.as_deref() == Some("Honor"),
        });
    }
    Ok(out)
}

/// What PreFilter computed for one pod: upstream's `preFilterState`.
#[derive(Clone, Debug, Default)]
pub struct SpreadState {
    constraints: Vec<Constraint>,
    /// Per constraint: matching pods by topology value, for the eligible
    /// domains that have some (upstream keeps zeros too; here a domain
    /// missing from the map has 0).
    counts: Vec<FastMap<String, i64>>,
    /// Per constraint: how many eligible domains there are.
    domains: Vec<usize>,
    /// Per constraint: whether the incoming pod matches its own selector.
    self_match: Vec<bool>,
    namespace: String,
    node_affinity: RequiredNodeAffinity,
    tolerations: Vec<sift_sdk::Toleration>,
}

/// Whether `node` counts for constraint `c` of `pod`
/// (`matchNodeInclusionPolicies`).
pub(crate) fn included(
    c: &Constraint,
    node: &Node,
    affinity: &RequiredNodeAffinity,
    tolerations: &[sift_sdk::Toleration],
) -> bool {
    if c.honor_node_affinity && !affinity.matches(node) {
        return false;
    }
    if c.honor_node_taints
        && find_untolerated(&node.taints, tolerations, is_do_not_schedule).is_some()
    {
        return false;
    }
    true
}

pub(crate) fn has_all_keys(labels: &Labels, constraints: &[Constraint]) -> bool {
    constraints
        .iter()
        .all(|c| labels.get_key(&c.topology_key).is_some())
}

/// Upstream's PreFilter: `Ok(None)` is Skip (no hard constraint), an error
/// is PreFilter's Error status.
pub fn pre_filter(
    pod: &Pod,
    defaults: &Defaults,
    cluster: &dyn ClusterView,
) -> Result<Option<SpreadState>, String> {
    pre_filter_cached(pod, defaults, cluster, &EligibilityCache::default())
}

/// [`pre_filter`], reusing which nodes count for a constraint from `cache`
/// when the view and the pod's inclusion inputs are the same.
pub fn pre_filter_cached(
    pod: &Pod,
    defaults: &Defaults,
    cluster: &dyn ClusterView,
    cache: &EligibilityCache,
) -> Result<Option<SpreadState>, String> {
    let constraints = hard_constraints(pod, defaults)?;
    if constraints.is_empty() {
        return Ok(None);
    }
    let node_affinity = RequiredNodeAffinity::of(pod);
    let no_node_constraints = pod.node_selector.is_empty() && pod.required_node_affinity.is_none();
    let (counts, domains) = if constraints
        .iter()
        .all(|c| !c.honor_node_taints && (!c.honor_node_affinity || no_node_constraints))
    {
        // Every node with the keys is eligible: the host's cached domain
        // columns and group index give the counts without visiting nodes.
        count_by_index(pod, cluster, &constraints)
    } else {
        count_eligible(pod, cluster, &constraints, &node_affinity, cache)
    };
    let self_match = constraints
        .iter()
        .map(|c| c.selector.matches(&pod.labels))
        .collect();
    Ok(Some(SpreadState {
        constraints,
        counts,
        domains,
        self_match,
        namespace: pod.namespace.clone(),
        node_affinity,
        tolerations: pod.tolerations.clone(),
    }))
}

/// Per constraint: matching pods by domain (non-zero only), and how many
/// eligible domains there are.
type Counted = (Vec<FastMap<String, i64>>, Vec<usize>);

/// Which slots count for one constraint (they have every constraint's key
/// and pass its inclusion policies), and how many domains they span.
#[derive(Debug)]
pub struct Eligibility {
    slots: Vec<bool>,
    domains: usize,
}

/// Eligibilities by view generation and inclusion inputs. Pods of one
/// workload share their node affinity and tolerations, so after the first
/// the per-node scan is skipped: PreFilter visits only the nodes holding
/// matching pods. Bounded: dropped when the view changes or it grows past
/// [`EligibilityCache::MAX`] entries.
#[derive(Debug, Default)]
pub struct EligibilityCache(std::sync::Mutex<(Option<u64>, EligibilityByKey)>);

/// Eligibilities by inclusion inputs, for one view generation.
type EligibilityByKey = HashMap<String, Arc<Eligibility>>;

impl EligibilityCache {
    pub const MAX: usize = 256;

    fn get(
        &self,
        generation: Option<u64>,
        key: String,
        compute: impl FnOnce() -> Eligibility,
    ) -> Arc<Eligibility> {
        let Some(generation) = generation else {
            return Arc::new(compute());
        };
        if let Ok(guard) = self.0.lock()
            && guard.0 == Some(generation)
            && let Some(e) = guard.1.get(&key)
        {
            return e.clone();
        }
        let e = Arc::new(compute());
        if let Ok(mut guard) = self.0.lock() {
            if guard.0 != Some(generation) || guard.1.len() >= Self::MAX {
                *guard = (Some(generation), HashMap::new());
            }
            guard.1.insert(key, e.clone());
        }
        e
    }
}

/// PreFilter's counting when inclusion policies look at nodes: which nodes
/// count (cached, see [`EligibilityCache`]), then the matching groups'
/// placements on them, from the group index.
fn count_eligible(
    pod: &Pod,
    cluster: &dyn ClusterView,
    constraints: &[Constraint],
    node_affinity: &RequiredNodeAffinity,
    cache: &EligibilityCache,
) -> Counted {
    let keys: Vec<&str> = constraints
        .iter()
        .map(|c| c.topology_key.as_str())
        .collect();
    let keys = keys.join("\u{0}");
    let affinity = format!("{:?}{:?}", pod.node_selector, pod.required_node_affinity);
    let tolerations = format!("{:?}", pod.tolerations);
    let doms: Vec<Arc<Domains>> = constraints
        .iter()
        .map(|c| cluster.domains(c.topology_key.as_str()))
        .collect();
    let eligible: Vec<Arc<Eligibility>> = constraints
        .iter()
        .zip(&doms)
        .map(|(c, dom)| {
            let key = format!(
                "{keys}\u{1}{}\u{1}{}\u{1}{}",
                c.topology_key.as_str(),
                if c.honor_node_affinity { &affinity } else { "" },
                if c.honor_node_taints {
                    &tolerations
                } else {
                    ""
                },
            );
            cache.get(cluster.generation(), key, || {
                let mut slots = vec![false; cluster.slots() as usize];
                let mut seen = vec![false; dom.values.len()];
                for slot in 0..cluster.slots() {
                    let Some(node) = cluster.node(slot) else {
                        continue;
                    };
                    if has_all_keys(&node.labels, constraints)
                        && included(c, node, node_affinity, &pod.tolerations)
                        && let Some(d) = dom.of(slot)
                    {
                        slots[slot as usize] = true;
                        seen[d as usize] = true;
                    }
                }
                Eligibility {
                    slots,
                    domains: seen.iter().filter(|b| **b).count(),
                }
            })
        })
        .collect();
    let counts = count_matching(pod, cluster, constraints, &doms, |i, slot| {
        eligible[i].slots.get(slot as usize) == Some(&true)
    });
    (counts, eligible.iter().map(|e| e.domains).collect())
}

/// Per constraint, the pods of `pod`'s namespace matching its selector
/// (not terminating), by domain, on the slots `eligible(constraint, slot)`
/// admits: from the group index, so only matching groups' placements are
/// visited.
fn count_matching(
    pod: &Pod,
    cluster: &dyn ClusterView,
    constraints: &[Constraint],
    doms: &[Arc<Domains>],
    eligible: impl Fn(usize, u32) -> bool,
) -> Vec<FastMap<String, i64>> {
    let mut counts: Vec<Vec<i64>> = doms.iter().map(|d| vec![0; d.values.len()]).collect();
    let index = cluster.group_index();
    for (group, placements) in &index.groups {
        if group.terminating || group.namespace != pod.namespace {
            continue;
        }
        let hits: Vec<usize> = (0..constraints.len())
            .filter(|&i| constraints[i].selector.matches(&group.labels))
            .collect();
        if hits.is_empty() {
            continue;
        }
        for &(slot, count) in placements {
            for &i in &hits {
                if eligible(i, slot) {
                    counts[i][doms[i].by_slot[slot as usize] as usize] += i64::from(count);
                }
            }
        }
    }
    counts
        .iter()
        .zip(doms)
        .map(|(c, d)| {
            c.iter()
                .enumerate()
                .filter(|(_, n)| **n != 0)
                .map(|(v, n)| (d.values[v].clone(), *n))
                .collect()
        })
        .collect()
}

/// PreFilter's counting when no inclusion policy looks at a node beyond
/// its topology labels: from the topology domain columns and the group
/// index (matching groups' placements only), not from every node.
fn count_by_index(pod: &Pod, cluster: &dyn ClusterView, constraints: &[Constraint]) -> Counted {
    let doms: Vec<Arc<Domains>> = constraints
        .iter()
        .map(|c| cluster.domains(c.topology_key.as_str()))
        .collect();
    let eligible = |slot: u32| doms.iter().all(|d| d.of(slot).is_some());
    // Eligible domains: with one constraint, every value of its key; else
    // the values seen on nodes that have every key.
    let domains: Vec<usize> = if doms.len() == 1 {
        vec![doms[0].values.len()]
    } else {
        let mut seen: Vec<Vec<bool>> = doms.iter().map(|d| vec![false; d.values.len()]).collect();
        for slot in 0..cluster.slots() {
            if eligible(slot) {
                for (i, d) in doms.iter().enumerate() {
                    seen[i][d.by_slot[slot as usize] as usize] = true;
                }
            }
        }
        seen.iter()
            .map(|s| s.iter().filter(|b| **b).count())
            .collect()
    };
    let counts = count_matching(pod, cluster, constraints, &doms, |_, slot| eligible(slot));
    (counts, domains)
}

impl SpreadState {
    /// The hard constraints, in spec order.
    pub fn constraints(&self) -> &[Constraint] {
        &self.constraints
    }

    /// Matching pods in constraint `i`'s domain `value`.
    pub fn count(&self, i: usize, value: &str) -> i64 {
        self.counts
            .get(i)
            .and_then(|c| c.get(value))
            .copied()
            .unwrap_or(0)
    }

    /// The global minimum of constraint `i` over its eligible domains: 0
    /// when there are fewer of them than `minDomains`.
    pub fn min_match(&self, i: usize) -> i64 {
        let domains = self.domains[i];
        if (domains as i64) < i64::from(self.constraints[i].min_domains) {
            return 0;
        }
        let counts = &self.counts[i];
        // Eligible domains missing from the map have 0 pods.
        let zero = (counts.len() < domains).then_some(0);
        counts
            .values()
            .copied()
            .chain(zero)
            .min()
            .unwrap_or(i64::from(i32::MAX))
    }

    /// Upstream's AddPod (`delta` 1) and RemovePod (`delta` -1): a pod of
    /// `namespace` with `labels` placed on (or taken off) `node`, which
    /// need not be the node the pod names. Terminating or not, it counts,
    /// as upstream's `updateWithPod` has it.
    pub fn add_pod(&mut self, namespace: &str, labels: &Labels, node: &Node, delta: i64) {
        if namespace != self.namespace || !has_all_keys(&node.labels, &self.constraints) {
            return;
        }
        for (i, c) in self.constraints.iter().enumerate() {
            if !c.selector.matches(labels)
                || !included(c, node, &self.node_affinity, &self.tolerations)
            {
                continue;
            }
            let value = node.labels.get_key(&c.topology_key).unwrap_or_default();
            let entry = self.counts[i].entry(value.to_string()).or_insert(0);
            *entry += delta;
            if *entry == 0 {
                self.counts[i].remove(value);
            }
        }
    }
}

/// Upstream's Filter: the first constraint, in order, the node fails
/// decides its status.
pub fn filter(state: &SpreadState, node: &Node) -> Status {
    for (i, c) in state.constraints.iter().enumerate() {
        let Some(value) = node.labels.get_key(&c.topology_key) else {
            return Status::unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH);
        };
        let matching = state.count(i, value);
        let skew = matching + i64::from(state.self_match[i]) - state.min_match(i);
        if skew > i64::from(c.max_skew) {
            return Status::unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH);
        }
    }
    Status::success()
}

/// `PodTopologySpreadArgs` of KubeSchedulerConfiguration, validated as
/// upstream's `ValidatePodTopologySpreadArgs`.
#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SpreadArgs {
    #[serde(default)]
    default_constraints: Vec<DefaultConstraint>,
    /// `System` (the default) or `List`.
    #[serde(default)]
    defaulting_type: Option<String>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct DefaultConstraint {
    max_skew: i32,
    #[serde(default)]
    topology_key: String,
    #[serde(default)]
    when_unsatisfiable: String,
    /// Refused by validation: the selector is deduced for each pod.
    #[serde(default)]
    label_selector: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    min_domains: Option<i32>,
    #[serde(default)]
    node_affinity_policy: Option<String>,
    #[serde(default)]
    node_taints_policy: Option<String>,
    #[serde(default)]
    match_label_keys: Vec<String>,
}

impl SpreadArgs {
    /// The validated arguments' defaults.
    fn defaults(self) -> Defaults {
        if self.defaulting_type.as_deref().unwrap_or("System") == "System" {
            return Defaults::system();
        }
        Defaults {
            constraints: self
                .default_constraints
                .into_iter()
                .map(|c| sift_sdk::TopologySpreadConstraint {
                    max_skew: c.max_skew,
                    topology_key: c.topology_key,
                    when_unsatisfiable: c.when_unsatisfiable,
                    label_selector: None,
                    min_domains: c.min_domains,
                    node_affinity_policy: c.node_affinity_policy,
                    node_taints_policy: c.node_taints_policy,
                    match_label_keys: c.match_label_keys,
                })
                .collect(),
            system: false,
        }
    }
}

fn validate(args: &SpreadArgs) -> Result<(), String> {
    let defaulting = args.defaulting_type.as_deref().unwrap_or("System");
    if !matches!(defaulting, "System" | "List") {
        return Err(format!(
            "defaultingType: Unsupported value: {defaulting:?}: supported values: \"System\", \"List\""
        ));
    }
    if defaulting == "System" && !args.default_constraints.is_empty() {
        return Err(
            "defaultingType: Invalid value: \"System\": when .defaultConstraints are not empty"
                .into(),
        );
    }
    let mut seen = Vec::new();
    for (i, c) in args.default_constraints.iter().enumerate() {
        let at = format!("defaultConstraints[{i}]");
        if c.max_skew <= 0 {
            return Err(format!(
                "{at}.maxSkew: Invalid value: {}: not in valid range (0, inf)",
                c.max_skew
            ));
        }
        if !sift_sdk::selector::is_qualified_name(&c.topology_key) {
            return Err(format!(
                "{at}.topologyKey: Invalid value: {:?}: must be a valid label key",
                c.topology_key
            ));
        }
        if !matches!(
            c.when_unsatisfiable.as_str(),
            "DoNotSchedule" | "ScheduleAnyway"
        ) {
            return Err(format!(
                "{at}.whenUnsatisfiable: Unsupported value: {:?}: supported values: \"DoNotSchedule\", \"ScheduleAnyway\"",
                c.when_unsatisfiable
            ));
        }
        if c.label_selector.is_some() {
            return Err(format!(
                "{at}.labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod"
            ));
        }
        let pair = (c.topology_key.as_str(), c.when_unsatisfiable.as_str());
        if seen.contains(&pair) {
            return Err(format!(
                "{at}: Duplicate value: {{{:?}, {:?}}}",
                pair.0, pair.1
            ));
        }
        seen.push(pair);
    }
    Ok(())
}

/// What one cycle computed for a pod: PreFilter's state for Filter, and
/// PreScore's for Score.
#[derive(Clone, Debug, Default)]
pub struct CycleState {
    pub filter: SpreadState,
    pub score: scoring::ScoreState,
}

/// The plugin: PreFilter, Filter and the scoring above, behind the SDK's
/// trait.
#[derive(Debug, Default)]
pub struct PodTopologySpread {
    defaults: Defaults,
    eligibility: EligibilityCache,
}

impl Plugin for PodTopologySpread {
    const NAME: &'static str = NAME;
    const EXTENSION_POINTS: ExtensionPoints = ExtensionPoints::FILTER.union(ExtensionPoints::SCORE);
    /// Filter reads labels; PreFilter also taints (nodeTaintsPolicy).
    const NODE_FIELDS: NodeFields = NodeFields::LABELS.union(NodeFields::TAINTS);
    const READS_CLUSTER: bool = true;
    type PodState = CycleState;

    fn new(args: Args) -> Result<Self, String> {
        let args: SpreadArgs = if args.is_empty() {
            SpreadArgs::default()
        } else {
            args.parse()?
        };
        validate(&args)?;
        Ok(PodTopologySpread {
            defaults: args.defaults(),
            eligibility: EligibilityCache::default(),
        })
    }

    fn prepare(&self, pod: &Pod, cluster: &dyn ClusterView) -> Prepare<CycleState> {
        match pre_filter_cached(pod, &self.defaults, cluster, &self.eligibility) {
            Ok(Some(filter)) => Prepare::Proceed(CycleState {
                filter,
                ..CycleState::default()
            }),
            Ok(None) => Prepare::Skip,
            Err(e) => Prepare::Reject(Status::error(format!("get constraints from pod: {e}"))),
        }
    }

    fn filter(&self, _pod: &Pod, state: &CycleState, node: &Node) -> Status {
        filter(&state.filter, node)
    }

    fn add_pods(
        &self,
        _pod: &Pod,
        state: &CycleState,
        node: &Node,
        added: &[NominatedPod],
    ) -> Option<CycleState> {
        let mut filter = state.filter.clone();
        for a in added {
            filter.add_pod(&a.group.namespace, &a.group.labels, node, 1);
        }
        Some(CycleState {
            filter,
            ..CycleState::default()
        })
    }

    fn pre_score(
        &self,
        pod: &Pod,
        feasible: &[&Node],
        cluster: &dyn ClusterView,
    ) -> PreScore<CycleState> {
        match scoring::pre_score(pod, &self.defaults, feasible, cluster) {
            Ok(Some(score)) => PreScore::Proceed(CycleState {
                score,
                ..CycleState::default()
            }),
            Ok(None) => PreScore::Skip,
            Err(e) => PreScore::Error(Status::error(e)),
        }
    }

    fn score(&self, _pod: &Pod, state: &CycleState, node: &Node) -> Result<i64, Status> {
        Ok(scoring::score(&state.score, node))
    }

    fn normalize_scores(
        &self,
        _pod: &Pod,
        state: &CycleState,
        scores: &mut [i64],
    ) -> Result<(), Status> {
        scoring::normalize(&state.score, scores);
        Ok(())
    }
}

export_plugin!(PodTopologySpread);

#[cfg(test)]
mod tests {
    use super::*;

    fn new(json: &str) -> Result<PodTopologySpread, String> {
        PodTopologySpread::new(Args::from_json(json)?)
    }

    #[test]
    fn arguments_are_validated_as_upstream() {
        assert!(new("{}").is_ok());
        assert!(new(r#"{"defaultingType": "List"}"#).is_ok());
        let list = r#"{"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule"}]}"#;
        assert!(new(list).is_ok());
        let system = list.replace("List", "System");
        assert!(
            new(&system)
                .unwrap_err()
                .contains("when .defaultConstraints are not empty")
        );
        for (bad, why) in [
            (
                r#""maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule""#,
                "maxSkew",
            ),
            (
                r#""maxSkew": 1, "topologyKey": "", "whenUnsatisfiable": "DoNotSchedule""#,
                "topologyKey",
            ),
            (
                r#""maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Maybe""#,
                "whenUnsatisfiable",
            ),
            (
                r#""maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {}"#,
                "labelSelector",
            ),
        ] {
            let json =
                format!(r#"{{"defaultingType": "List", "defaultConstraints": [{{{bad}}}]}}"#);
            assert!(new(&json).unwrap_err().contains(why), "{bad}");
        }
        let twice = r#"{"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
            {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]}"#;
        assert!(new(twice).unwrap_err().contains("Duplicate value"));
        assert!(
            new(r#"{"defaultingType": "Other"}"#)
                .unwrap_err()
                .contains("Unsupported value")
        );
        assert!(new(r#"{"typo": 1}"#).is_err());
    }

    #[test]
    fn an_invalid_selector_is_an_error_status_from_prepare() {
        let pod = Pod {
            topology_spread_constraints: vec![sift_sdk::TopologySpreadConstraint {
                max_skew: 1,
                topology_key: "zone".into(),
                when_unsatisfiable: "DoNotSchedule".into(),
                label_selector: Some(sift_sdk::LabelSelector {
                    match_labels: vec![("bad key".into(), "x".into())],
                    match_expressions: vec![],
                }),
                ..Default::default()
            }],
            ..Default::default()
        };
        let cluster = sift_sdk::ClusterTables::default();
        match PodTopologySpread::new(Args::default())
            .unwrap()
            .prepare(&pod, &cluster)
        {
            Prepare::Reject(s) => {
                assert_eq!(s.code, sift_sdk::Code::Error);
                assert!(s.reasons()[0].starts_with(
                    "get constraints from pod: obtaining pod's hard topology spread constraints:"
                ));
            }
            _ => panic!("expected an Error"),
        }
        // A pod without DoNotSchedule constraints is not this plugin's business.
        assert!(matches!(
            PodTopologySpread::default().prepare(&Pod::default(), &cluster),
            Prepare::Skip
        ));
    }
}
