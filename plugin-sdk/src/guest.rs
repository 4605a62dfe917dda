//! The component side of the contract (0.7): bindings, the node table
//! and cluster view the host syncs into the instance, and conversion from
//! the wire types to the SDK's model. Plugin authors never touch this
//! module.

use crate::cluster::{ClusterView, Domains, GroupCount, GroupIndex, NominatedPod, PodGroup};
use crate::model::{
    ContainerImage, HostPort, LabelSelector, Labels, Node, NodeCondition, OwnerReference, Pod,
    PodAffinityTerm, PodAnnotations, PodVolumes, SelectorRequirement, SelectorTerm, Taint,
    Toleration, TopologySpreadConstraint, WeightedPodAffinityTerm, WeightedSelectorTerm,
};
use crate::resources::Resources;
use crate::{Args, Code, ExtensionPoints, NodeFields, Plugin, PreScore, Prepare, Status};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "../wit/0.7.0",
        world: "plugin",
        pub_export_macro: true,
        export_macro_name: "__export_guest",
        default_bindings_module: "sift_sdk::guest::bindings",
    });
}

pub use bindings::exports::sift::predicate::predicate::Guest;
pub use bindings::exports::sift::predicate::reserver::Guest as ReserverGuest;
pub use bindings::exports::sift::predicate::scorer::Guest as ScorerGuest;
pub use bindings::sift::predicate::types as wit;

/// Sends a message to the host's log, tagged with the plugin's name.
pub fn log(level: crate::LogLevel, message: &str) {
    use bindings::sift::predicate::log::{Level, log};
    let level = match level {
        crate::LogLevel::Trace => Level::Trace,
        crate::LogLevel::Debug => Level::Debug,
        crate::LogLevel::Info => Level::Info,
        crate::LogLevel::Warn => Level::Warn,
        crate::LogLevel::Error => Level::Error,
    };
    log(level, message);
}

pub fn describe<P: Plugin>() -> wit::PluginInfo {
    let f = P::NODE_FIELDS;
    let mut flags = wit::NodeFields::empty();
    for (ours, theirs) in [
        (NodeFields::LABELS, wit::NodeFields::LABELS),
        (NodeFields::TAINTS, wit::NodeFields::TAINTS),
        (NodeFields::UNSCHEDULABLE, wit::NodeFields::UNSCHEDULABLE),
        (NodeFields::RESOURCES, wit::NodeFields::RESOURCES),
        (NodeFields::PORTS, wit::NodeFields::PORTS),
        (NodeFields::ANNOTATIONS, wit::NodeFields::ANNOTATIONS),
        (NodeFields::CONDITIONS, wit::NodeFields::CONDITIONS),
        (NodeFields::OBJECT, wit::NodeFields::OBJECT),
        (NodeFields::IMAGES, wit::NodeFields::IMAGES),
        (NodeFields::VOLUMES, wit::NodeFields::VOLUMES),
        (
            NodeFields::DECLARED_FEATURES,
            wit::NodeFields::DECLARED_FEATURES,
        ),
    ] {
        if f.contains(ours) {
            flags = flags | theirs;
        }
    }
    let mut points = wit::ExtensionPoints::empty();
    for (ours, theirs) in [
        (ExtensionPoints::FILTER, wit::ExtensionPoints::FILTER),
        (ExtensionPoints::SCORE, wit::ExtensionPoints::SCORE),
        (ExtensionPoints::RESERVE, wit::ExtensionPoints::RESERVE),
    ] {
        if P::EXTENSION_POINTS.contains(ours) {
            points = points | theirs;
        }
    }
    wit::PluginInfo {
        name: P::NAME.to_string(),
        node_fields: flags,
        cluster: P::READS_CLUSTER,
        pod_object: P::POD_OBJECT,
        extension_points: points,
        pod_annotation_keys: P::POD_ANNOTATION_KEYS
            .iter()
            .map(|k| k.to_string())
            .collect(),
        object_kinds: P::OBJECT_KINDS.iter().map(|k| k.to_string()).collect(),
    }
}

/// Everything an instance remembers between calls.
pub struct State<P: Plugin> {
    plugin: Option<P>,
    nodes: Vec<Option<Node>>,
    pod: Option<(Pod, P::PodState)>,
    /// The pod being scored (`pre-score`), with the feasible slots.
    scoring: Option<(Pod, Vec<u32>, P::PodState)>,
    /// The cluster view (plugins that read it): groups by id, each slot's
    /// pods, namespaces.
    groups: HashMap<u64, Arc<PodGroup>>,
    placements: Vec<Vec<GroupCount>>,
    namespaces: HashMap<String, Labels>,
    /// Cluster objects of the kinds the plugin names, by kind, then key.
    objects: crate::cluster::ObjectTables,
    /// Slots holding pods with required anti-affinity.
    anti_slots: std::collections::BTreeSet<u32>,
    /// Slots with pods whose affinity terms a scorer weighs, kept as
    /// placements sync (a rebuilt group index is O(nodes) per cycle).
    affinity_slots: std::collections::BTreeSet<u32>,
    /// Caches of the view, dropped when what they derive from is synced.
    domains: std::cell::RefCell<HashMap<String, Arc<Domains>>>,
    group_index: std::cell::RefCell<Option<Arc<GroupIndex>>>,
    /// Counts the syncs: the view's generation.
    syncs: u64,
}

impl<P: Plugin> Default for State<P> {
    fn default() -> Self {
        State {
            plugin: None,
            nodes: Vec::new(),
            pod: None,
            scoring: None,
            groups: HashMap::new(),
            placements: Vec::new(),
            namespaces: HashMap::new(),
            objects: Default::default(),
            anti_slots: Default::default(),
            affinity_slots: Default::default(),
            domains: Default::default(),
            group_index: Default::default(),
            syncs: 0,
        }
    }
}

impl<P: Plugin> ClusterView for State<P> {
    fn slots(&self) -> u32 {
        self.nodes.len() as u32
    }
    fn generation(&self) -> Option<u64> {
        Some(self.syncs)
    }
    fn node(&self, slot: u32) -> Option<&Node> {
        self.nodes.get(slot as usize).and_then(Option::as_ref)
    }
    fn pods_on(&self, slot: u32) -> &[GroupCount] {
        self.placements.get(slot as usize).map_or(&[], |p| &p[..])
    }
    fn namespace_labels(&self, namespace: &str) -> Option<&Labels> {
        self.namespaces.get(namespace)
    }
    fn namespaces(&self) -> Vec<(&str, &Labels)> {
        self.namespaces
            .iter()
            .map(|(n, l)| (n.as_str(), l))
            .collect()
    }
    fn anti_affinity_slots(&self) -> Vec<u32> {
        self.anti_slots.iter().copied().collect()
    }
    fn object(&self, kind: &str, key: &str) -> Option<&serde_json::Value> {
        self.objects.get(kind)?.get(key)
    }
    fn objects(&self, kind: &str) -> Vec<(&str, &serde_json::Value)> {
        crate::cluster::objects_of(&self.objects, kind)
    }
    fn affinity_slots(&self) -> Vec<u32> {
        self.affinity_slots.iter().copied().collect()
    }
    fn domains(&self, key: &str) -> Arc<Domains> {
        if let Some(d) = self.domains.borrow().get(key) {
            return d.clone();
        }
        let d = Arc::new(Domains::scan(self, key));
        self.domains.borrow_mut().insert(key.to_string(), d.clone());
        d
    }
    fn group_index(&self) -> Arc<GroupIndex> {
        if let Some(i) = self.group_index.borrow().as_ref() {
            return i.clone();
        }
        let i = Arc::new(GroupIndex::scan(self));
        *self.group_index.borrow_mut() = Some(i.clone());
        i
    }
}

impl<P: Plugin> State<P> {
    pub fn init(&mut self, args: &str) -> Result<(), String> {
        self.plugin = Some(P::new(Args::from_json(args)?)?);
        Ok(())
    }

    pub fn sync_nodes(&mut self, upserts: Vec<wit::NodeEntry>, removals: Vec<u32>) {
        self.syncs += 1;
        self.domains.get_mut().clear();
        *self.group_index.get_mut() = None;
        for slot in removals {
            if let Some(n) = self.nodes.get_mut(slot as usize) {
                *n = None;
            }
            if let Some(p) = self.placements.get_mut(slot as usize) {
                p.clear();
            }
            self.anti_slots.remove(&slot);
            self.affinity_slots.remove(&slot);
        }
        for entry in upserts {
            let slot = entry.slot as usize;
            if slot >= self.nodes.len() {
                self.nodes.resize_with(slot + 1, || None);
            }
            self.nodes[slot] = Some(node(entry.node, P::NODE_LABELS));
        }
    }

    pub fn sync_pod_groups(&mut self, upserts: Vec<wit::PodGroup>, removals: Vec<u64>) {
        self.syncs += 1;
        *self.group_index.get_mut() = None;
        for id in removals {
            self.groups.remove(&id);
        }
        for g in upserts {
            self.groups.insert(g.id, Arc::new(pod_group(g)));
        }
    }

    pub fn sync_placements(&mut self, upserts: Vec<wit::Placement>) {
        self.syncs += 1;
        *self.group_index.get_mut() = None;
        for p in upserts {
            let slot = p.slot as usize;
            if slot >= self.placements.len() {
                self.placements.resize_with(slot + 1, Vec::new);
            }
            // A group the host never sent is a host bug: it is left out
            // rather than trapping the instance.
            self.placements[slot] = p
                .groups
                .into_iter()
                .filter_map(|c| {
                    self.groups.get(&c.group).map(|g| GroupCount {
                        group: g.clone(),
                        count: c.count,
                    })
                })
                .collect();
            if self.placements[slot]
                .iter()
                .any(|g| !g.group.anti_affinity.is_empty())
            {
                self.anti_slots.insert(p.slot);
            } else {
                self.anti_slots.remove(&p.slot);
            }
            if self.placements[slot]
                .iter()
                .any(|g| g.group.has_scored_affinity())
            {
                self.affinity_slots.insert(p.slot);
            } else {
                self.affinity_slots.remove(&p.slot);
            }
        }
    }

    pub fn sync_namespaces(&mut self, upserts: Vec<wit::Namespace>, removals: Vec<String>) {
        self.syncs += 1;
        for name in removals {
            self.namespaces.remove(&name);
        }
        for ns in upserts {
            self.namespaces.insert(ns.name, labels(ns.labels));
        }
    }

    /// An object the host sent that is not JSON is a host bug: it is left
    /// out rather than trapping the instance.
    pub fn sync_objects(
        &mut self,
        kind: String,
        upserts: Vec<wit::ClusterObject>,
        removals: Vec<String>,
    ) {
        self.syncs += 1;
        let table = self.objects.entry(kind).or_default();
        for key in removals {
            table.remove(&key);
        }
        for o in upserts {
            if let Ok(v) = serde_json::from_str(&o.object) {
                table.insert(o.key, v);
            }
        }
    }

    pub fn prepare(&mut self, wire: wit::Pod) -> wit::PrepareResult {
        self.pod = None;
        let Some(plugin) = &self.plugin else {
            return wit::PrepareResult::Reject(status_to_wire(Status::error(
                "plugin not initialised",
            )));
        };
        let pod = pod(wire);
        match plugin.prepare(&pod, &*self) {
            Prepare::Proceed(s) => {
                self.pod = Some((pod, s));
                wit::PrepareResult::Proceed
            }
            Prepare::Narrow(s, names) => {
                self.pod = Some((pod, s));
                wit::PrepareResult::Narrow(names)
            }
            Prepare::Skip => wit::PrepareResult::Skip,
            Prepare::Reject(status) => wit::PrepareResult::Reject(status_to_wire(status)),
        }
    }

    pub fn filter(&self, slots: &[u32]) -> wit::Verdicts {
        let mut statuses: Vec<Status> = Vec::new();
        let mut rejections = Vec::new();
        let mut reject = |i: usize, status: Status| {
            // Batches share few distinct statuses: a short scan finds them.
            let id = match statuses.iter().rposition(|s| same_status(s, &status)) {
                Some(id) => id,
                None => {
                    statuses.push(status);
                    statuses.len() - 1
                }
            };
            rejections.push((i as u32, id as u32));
        };
        match (&self.plugin, &self.pod) {
            (Some(plugin), Some((pod, state))) => {
                for (i, slot) in slots.iter().enumerate() {
                    let status = match self.nodes.get(*slot as usize) {
                        Some(Some(node)) => plugin.filter(pod, state, node),
                        _ => Status::error(format!("node slot {slot} was never synced")),
                    };
                    if status.code != Code::Success {
                        reject(i, status);
                    }
                }
            }
            _ => {
                for i in 0..slots.len() {
                    reject(i, Status::error("filter called without a prepared pod"));
                }
            }
        }
        wit::Verdicts {
            statuses: statuses.into_iter().map(status_to_wire).collect(),
            rejections,
        }
    }
}

/// Scorers and reservers.
impl<P: Plugin> State<P> {
    pub fn pre_score(&mut self, wire: wit::Pod, feasible: Vec<u32>) -> wit::PreScoreResult {
        self.scoring = None;
        let Some(plugin) = &self.plugin else {
            return wit::PreScoreResult::Error(status_to_wire(Status::error(
                "plugin not initialised",
            )));
        };
        let pod = pod(wire);
        let mut nodes = Vec::with_capacity(feasible.len());
        for slot in &feasible {
            match self.nodes.get(*slot as usize) {
                Some(Some(node)) => nodes.push(node),
                _ => {
                    return wit::PreScoreResult::Error(status_to_wire(Status::error(format!(
                        "node slot {slot} was never synced"
                    ))));
                }
            }
        }
        match plugin.pre_score(&pod, &nodes, &*self) {
            PreScore::Proceed(state) => {
                self.scoring = Some((pod, feasible, state));
                wit::PreScoreResult::Proceed
            }
            PreScore::Skip => wit::PreScoreResult::Skip,
            PreScore::Error(status) => wit::PreScoreResult::Error(status_to_wire(status)),
        }
    }

    pub fn score(&self, slots: &[u32]) -> Result<Vec<i64>, wit::Status> {
        let (Some(plugin), Some((pod, _, state))) = (&self.plugin, &self.scoring) else {
            return Err(status_to_wire(Status::error(
                "score called without pre-score",
            )));
        };
        slots
            .iter()
            .map(|slot| match self.nodes.get(*slot as usize) {
                Some(Some(node)) => plugin.score(pod, state, node).map_err(status_to_wire),
                _ => Err(status_to_wire(Status::error(format!(
                    "node slot {slot} was never synced"
                )))),
            })
            .collect()
    }

    pub fn normalize_scores(&self, mut scores: Vec<i64>) -> Result<Vec<i64>, wit::Status> {
        let (Some(plugin), Some((pod, feasible, state))) = (&self.plugin, &self.scoring) else {
            return Err(status_to_wire(Status::error(
                "normalize-scores called without pre-score",
            )));
        };
        if scores.len() != feasible.len() {
            return Err(status_to_wire(Status::error(format!(
                "normalize-scores got {} scores for {} feasible nodes",
                scores.len(),
                feasible.len()
            ))));
        }
        plugin
            .normalize_scores(pod, state, &mut scores)
            .map_err(status_to_wire)?;
        Ok(scores)
    }

    pub fn reserve(&self, wire: wit::Pod, slot: u32) -> Result<wit::Reservation, wit::Status> {
        let Some(plugin) = &self.plugin else {
            return Err(status_to_wire(Status::error("plugin not initialised")));
        };
        let Some(Some(node)) = self.nodes.get(slot as usize) else {
            return Err(status_to_wire(Status::error(format!(
                "node slot {slot} was never synced"
            ))));
        };
        let pod = pod(wire);
        let annotations = plugin.reserve(&pod, node).map_err(status_to_wire)?;
        let writes = plugin.pre_bind(&pod, node, self).map_err(status_to_wire)?;
        Ok(wit::Reservation {
            annotations: annotations
                .into_iter()
                .map(|(key, value)| wit::Label { key, value })
                .collect(),
            writes: writes
                .into_iter()
                .map(|w| wit::ObjectWrite {
                    kind: w.kind,
                    object: w.object.to_string(),
                })
                .collect(),
        })
    }
}

impl<P: Plugin> State<P> {
    /// The first pass of a node with pods nominated to it: the node with
    /// them added, and the state told of them ([`Plugin::add_pods`]).
    pub fn filter_nominated(&self, slot: u32, added: Vec<wit::NominatedPod>) -> wit::Status {
        let (Some(plugin), Some((pod, state))) = (&self.plugin, &self.pod) else {
            return status_to_wire(Status::error("filter called without a prepared pod"));
        };
        let Some(Some(node)) = self.nodes.get(slot as usize) else {
            return status_to_wire(Status::error(format!("node slot {slot} was never synced")));
        };
        let added: Vec<NominatedPod> = added
            .into_iter()
            .map(|n| NominatedPod {
                requests: resources(n.requests),
                host_ports: n.host_ports.into_iter().map(host_port).collect(),
                group: pod_group(n.group),
            })
            .collect();
        let mut node = node.clone();
        for a in &added {
            node.add_pod(&a.requests, &a.host_ports);
        }
        status_to_wire(crate::filter_nominated(plugin, pod, state, &node, &added))
    }
}

fn pod_group(g: wit::PodGroup) -> PodGroup {
    PodGroup {
        id: g.id,
        namespace: g.namespace,
        labels: labels(g.labels),
        anti_affinity: g.anti_affinity.into_iter().map(affinity_term).collect(),
        terminating: g.terminating,
        affinity: g.affinity.into_iter().map(affinity_term).collect(),
        preferred_affinity: g
            .preferred_affinity
            .into_iter()
            .map(weighted_term)
            .collect(),
        preferred_anti_affinity: g
            .preferred_anti_affinity
            .into_iter()
            .map(weighted_term)
            .collect(),
    }
}

fn weighted_term(t: wit::WeightedPodAffinityTerm) -> WeightedPodAffinityTerm {
    WeightedPodAffinityTerm {
        weight: t.weight,
        term: affinity_term(t.term),
    }
}

fn selector_term(t: wit::SelectorTerm) -> SelectorTerm {
    SelectorTerm {
        match_expressions: t.match_expressions.into_iter().map(requirement).collect(),
        match_fields: t.match_fields.into_iter().map(requirement).collect(),
    }
}

/// Equality of statuses that compares constant reasons by address first:
/// string comparison is a byte loop inside WebAssembly.
#[inline]
fn same_status(a: &Status, b: &Status) -> bool {
    a.code == b.code
        && a.reasons().len() == b.reasons().len()
        && a.reasons()
            .iter()
            .zip(b.reasons())
            .all(|(x, y)| match (x, y) {
                (Cow::Borrowed(x), Cow::Borrowed(y)) if std::ptr::eq(*x, *y) => true,
                _ => x == y,
            })
}

fn status_to_wire(s: Status) -> wit::Status {
    wit::Status {
        code: match s.code {
            Code::Success => wit::Code::Success,
            Code::Error => wit::Code::Error,
            Code::Unschedulable => wit::Code::Unschedulable,
            Code::UnschedulableAndUnresolvable => wit::Code::UnschedulableAndUnresolvable,
            Code::Skip => wit::Code::Skip,
        },
        reasons: s.into_reasons().map(Cow::into_owned).collect(),
    }
}

fn labels(l: Vec<wit::Label>) -> Labels {
    Labels::new(l.into_iter().map(|l| (l.key, l.value)).collect())
}

fn resources(r: wit::Resources) -> Resources {
    Resources {
        milli_cpu: r.milli_cpu,
        memory: r.memory,
        ephemeral_storage: r.ephemeral_storage,
        allowed_pod_number: r.allowed_pod_number,
        scalar: r.scalar.into_iter().map(|a| (a.name, a.amount)).collect(),
    }
}

fn host_port(p: wit::HostPort) -> HostPort {
    HostPort {
        port: p.port,
        protocol: p.protocol,
        host_ip: p.host_ip,
    }
}

fn requirement(r: wit::SelectorRequirement) -> SelectorRequirement {
    SelectorRequirement {
        key: r.key,
        operator: r.operator,
        values: r.values,
    }
}

/// Converts a synced node, keeping only the labels in `keep` (if given).
fn node(mut n: wit::Node, keep: Option<&[&str]>) -> Node {
    if let Some(keep) = keep {
        n.labels.retain(|l| keep.contains(&l.key.as_str()));
    }
    Node {
        name: n.name,
        labels: labels(n.labels),
        taints: n
            .taints
            .into_iter()
            .map(|t| Taint {
                key: t.key,
                value: t.value,
                effect: t.effect,
            })
            .collect(),
        unschedulable: n.unschedulable,
        allocatable: resources(n.allocatable),
        requested: resources(n.requested),
        non_zero_requested: crate::resources::NonZero {
            milli_cpu: n.non_zero_requested.milli_cpu,
            memory: n.non_zero_requested.memory,
        },
        pod_count: n.pod_count,
        used_ports: n.used_ports.into_iter().map(host_port).collect(),
        annotations: labels(n.annotations),
        conditions: n
            .conditions
            .into_iter()
            .map(|c| NodeCondition {
                type_: c.type_,
                status: c.status,
            })
            .collect(),
        object: object(n.object),
        pod_annotations: n
            .pod_annotations
            .into_iter()
            .map(|p| PodAnnotations {
                pod: p.pod,
                annotations: labels(p.annotations),
            })
            .collect(),
        images: n
            .images
            .into_iter()
            .map(|i| ContainerImage {
                names: i.names,
                size_bytes: i.size_bytes,
            })
            .collect::<Vec<_>>()
            .into(),
        volumes: n
            .volumes
            .into_iter()
            .map(|p| PodVolumes {
                pod: p.pod,
                volumes: p.volumes.into_iter().map(volume).collect(),
            })
            .collect(),
        declared_features: n.declared_features,
        memo: Default::default(),
    }
}

/// The escape hatch's JSON: empty on the wire when not asked for.
fn object(json: String) -> Option<Arc<str>> {
    (!json.is_empty()).then(|| Arc::from(json))
}

fn label_selector(s: wit::LabelSelector) -> LabelSelector {
    LabelSelector {
        match_labels: s
            .match_labels
            .into_iter()
            .map(|l| (l.key, l.value))
            .collect(),
        match_expressions: s.match_expressions.into_iter().map(requirement).collect(),
    }
}

fn affinity_term(t: wit::PodAffinityTerm) -> PodAffinityTerm {
    PodAffinityTerm {
        label_selector: t.label_selector.map(label_selector),
        namespaces: t.namespaces,
        namespace_selector: t.namespace_selector.map(label_selector),
        topology_key: t.topology_key,
        match_label_keys: t.match_label_keys,
        mismatch_label_keys: t.mismatch_label_keys,
    }
}

fn pod(p: wit::Pod) -> Pod {
    Pod {
        name: p.name,
        namespace: p.namespace,
        uid: p.uid,
        labels: labels(p.labels),
        node_name: p.node_name,
        node_selector: labels(p.node_selector),
        required_node_affinity: p
            .required_node_affinity
            .map(|terms| terms.into_iter().map(selector_term).collect()),
        tolerations: p
            .tolerations
            .into_iter()
            .map(|t| Toleration {
                key: t.key,
                operator: t.operator,
                value: t.value,
                effect: t.effect,
                toleration_seconds: t.toleration_seconds,
            })
            .collect(),
        host_ports: p.host_ports.into_iter().map(host_port).collect(),
        requests: resources(p.requests),
        non_zero_requests: crate::resources::NonZero {
            milli_cpu: p.non_zero_requests.milli_cpu,
            memory: p.non_zero_requests.memory,
        },
        annotations: labels(p.annotations),
        owner_references: p
            .owner_references
            .into_iter()
            .map(|o| OwnerReference {
                kind: o.kind,
                name: o.name,
                controller: o.controller,
                api_version: o.api_version,
            })
            .collect(),
        priority: p.priority,
        priority_class_name: p.priority_class_name,
        scheduler_name: p.scheduler_name,
        nominated_node_name: p.nominated_node_name,
        terminating: p.terminating,
        topology_spread_constraints: p
            .topology_spread_constraints
            .into_iter()
            .map(|c| TopologySpreadConstraint {
                max_skew: c.max_skew,
                topology_key: c.topology_key,
                when_unsatisfiable: c.when_unsatisfiable,
                label_selector: c.label_selector.map(label_selector),
                min_domains: c.min_domains,
                node_affinity_policy: c.node_affinity_policy,
                node_taints_policy: c.node_taints_policy,
                match_label_keys: c.match_label_keys,
            })
            .collect(),
        pod_affinity: p.pod_affinity.into_iter().map(affinity_term).collect(),
        pod_anti_affinity: p.pod_anti_affinity.into_iter().map(affinity_term).collect(),
        preferred_node_affinity: p
            .preferred_node_affinity
            .into_iter()
            .map(|t| WeightedSelectorTerm {
                weight: t.weight,
                preference: selector_term(t.preference),
            })
            .collect(),
        preferred_pod_affinity: p
            .preferred_pod_affinity
            .into_iter()
            .map(weighted_term)
            .collect(),
        preferred_pod_anti_affinity: p
            .preferred_pod_anti_affinity
            .into_iter()
            .map(weighted_term)
            .collect(),
        images: p.images,
        workload_selector: p.workload_selector.map(label_selector),
        volumes: p.volumes.into_iter().map(volume).collect(),
        object: object(p.object),
    }
}

fn volume(v: wit::Volume) -> crate::model::Volume {
    crate::model::Volume {
        name: v.name,
        claim_name: v.claim_name,
        ephemeral: v.ephemeral,
        object: Arc::from(v.object),
    }
}
