//! The cluster as sift knows it between cycles: nodes and the pods bound
//! to them, changed one object at a time (as an informer delivers them),
//! from which immutable snapshots are taken. kube-scheduler's scheduler
//! cache plays this part upstream.
//!
//! Each node keeps its slot for as long as it exists, so a snapshot can
//! tell Wasm instances which slots changed and they resync only those.
//! `Nodes`-mode extender requests get a table of their own (see
//! [`ClusterState`]).

use super::Snapshot;
use super::api_objects::ApiObjects;
use super::disruption::{Budgets, Candidate};
use super::nominated::{Nominated, Nominations};
use super::snapshot::{ClusterView, Namespaces};
use super::table::Table;
use super::workloads::Workloads;
use crate::input::{Objects, kube};
use anyhow::{Result, bail};
use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use sift_sdk::resources::{NonZero, Resources};
use sift_sdk::{
    GroupCount, HostPort, Labels, Node, Pod, PodAffinityTerm, PodAnnotations, PodGroup, PodVolumes,
    WeightedPodAffinityTerm,
};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

/// What a bound pod holds on its node, and what the cluster view shows of
/// it.
#[derive(Clone, Debug, PartialEq)]
struct Usage {
    node: String,
    requests: Resources,
    non_zero: NonZero,
    ports: Vec<HostPort>,
    group: GroupKey,
    /// Its annotations whose keys plugins read on nodes (device
    /// assignments); empty for most pods.
    annotations: Vec<(String, String)>,
    /// spec.priority: who preemption could evict.
    priority: i32,
    /// Its volumes that can concern scheduling (most pods have none).
    volumes: Vec<sift_sdk::Volume>,
}

/// A bound pod taken off its node ([`ClusterState::evict`]).
pub struct Evicted {
    key: String,
    usage: Usage,
}

/// Everything a [`PodGroup`] shows but its id: pods with equal keys share
/// one group.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct GroupKey {
    namespace: String,
    /// Sorted by key.
    labels: Vec<(String, String)>,
    anti_affinity: Vec<PodAffinityTerm>,
    terminating: bool,
    affinity: Vec<PodAffinityTerm>,
    preferred_affinity: Vec<WeightedPodAffinityTerm>,
    preferred_anti_affinity: Vec<WeightedPodAffinityTerm>,
}

impl GroupKey {
    fn of(pod: &Pod) -> GroupKey {
        let mut labels = pod.labels.clone().into_pairs();
        labels.sort();
        GroupKey {
            namespace: pod.namespace.clone(),
            labels,
            anti_affinity: pod.pod_anti_affinity.clone(),
            terminating: pod.terminating,
            affinity: pod.pod_affinity.clone(),
            preferred_affinity: pod.preferred_pod_affinity.clone(),
            preferred_anti_affinity: pod.preferred_pod_anti_affinity.clone(),
        }
    }
}

/// Active bound pods, shared by both node tables.
#[derive(Clone, Default)]
struct Pods {
    /// By "namespace/name".
    by_key: HashMap<String, Usage>,
    /// Keys by node name, for recomputing a node's usage. A pod may name a
    /// node that does not exist (yet): it counts once the node appears.
    on: HashMap<String, BTreeSet<String>>,
    /// The groups of the pods in `by_key`, with how many pods each has.
    groups: HashMap<GroupKey, (Arc<PodGroup>, usize)>,
    next_group: u64,
    /// How many bound pods have each priority (who preemption could evict).
    priorities: BTreeMap<i32, usize>,
}

impl Pods {
    fn join(&mut self, key: &GroupKey) {
        if let Some((_, n)) = self.groups.get_mut(key) {
            *n += 1;
            return;
        }
        self.next_group += 1;
        let group = PodGroup {
            id: self.next_group,
            namespace: key.namespace.clone(),
            labels: Labels::new(key.labels.clone()),
            anti_affinity: key.anti_affinity.clone(),
            terminating: key.terminating,
            affinity: key.affinity.clone(),
            preferred_affinity: key.preferred_affinity.clone(),
            preferred_anti_affinity: key.preferred_anti_affinity.clone(),
        };
        self.groups.insert(key.clone(), (Arc::new(group), 1));
    }

    fn leave(&mut self, key: &GroupKey) {
        if let Some((_, n)) = self.groups.get_mut(key) {
            *n -= 1;
            if *n == 0 {
                self.groups.remove(key);
            }
        }
    }
}

/// Nodes by slot, each with its pods' usage added, and the snapshot of the
/// last state. Each node keeps its slot for as long as it exists.
#[derive(Clone, Default)]
struct NodeTable {
    /// The node objects as given, without what pods use.
    bases: Vec<Node>,
    /// The nodes with their pods' usage added: what snapshots share.
    nodes: Table<Arc<Node>>,
    /// The pods on each node, by group (sorted by group id).
    pods: Table<Arc<[GroupCount]>>,
    slots: HashMap<String, u32>,
    /// Slots changed since `current` was taken.
    dirty: BTreeSet<u32>,
    current: Option<Arc<Snapshot>>,
}

impl NodeTable {
    fn upsert(&mut self, node: Node, pods: &Pods) -> bool {
        match self.slots.get(&node.name) {
            Some(&slot) if self.bases[slot as usize] == node => false,
            Some(&slot) => {
                self.bases[slot as usize] = node;
                self.recompute(slot, pods);
                true
            }
            None => {
                let slot = self.bases.len() as u32;
                self.slots.insert(node.name.clone(), slot);
                self.nodes.push(Arc::new(node.clone()));
                self.pods.push(Arc::from([]));
                self.bases.push(node);
                self.recompute(slot, pods);
                true
            }
        }
    }

    /// The last node moves into the freed slot.
    fn remove(&mut self, name: &str) -> bool {
        let Some(slot) = self.slots.remove(name) else {
            return false;
        };
        let last = self.bases.len() as u32 - 1;
        self.bases.swap_remove(slot as usize);
        self.nodes.swap_remove(slot as usize);
        self.pods.swap_remove(slot as usize);
        if slot != last {
            self.slots
                .insert(self.bases[slot as usize].name.clone(), slot);
            self.dirty.insert(slot);
        }
        self.dirty.insert(last);
        true
    }

    fn recompute_named(&mut self, node: &str, pods: &Pods) {
        if let Some(&slot) = self.slots.get(node) {
            self.recompute(slot, pods);
        }
    }

    /// A node's usage from scratch: its base plus each bound pod, in a
    /// fixed (sorted) order so equal states give equal nodes.
    fn recompute(&mut self, slot: u32, pods: &Pods) {
        let mut node = self.bases[slot as usize].clone();
        let mut groups: BTreeMap<u64, GroupCount> = BTreeMap::new();
        for key in pods.on.get(&node.name).into_iter().flatten() {
            if let Some(u) = pods.by_key.get(key) {
                node.add_pod(&u.requests, &u.ports);
                node.non_zero_requested.add(&u.non_zero);
                if !u.annotations.is_empty() {
                    node.pod_annotations.push(PodAnnotations {
                        pod: key.clone(),
                        annotations: Labels::new(u.annotations.clone()),
                    });
                }
                if !u.volumes.is_empty() {
                    node.volumes.push(PodVolumes {
                        pod: key.clone(),
                        volumes: u.volumes.clone(),
                    });
                }
                if let Some((group, _)) = pods.groups.get(&u.group) {
                    groups
                        .entry(group.id)
                        .or_insert_with(|| GroupCount {
                            group: group.clone(),
                            count: 0,
                        })
                        .count += 1;
                }
            }
        }
        self.nodes.set(slot as usize, Arc::new(node));
        self.pods.set(slot as usize, groups.into_values().collect());
        self.dirty.insert(slot);
    }

    fn snapshot(
        &mut self,
        namespaces: &Arc<Namespaces>,
        nominations: &Arc<Nominations>,
        workloads: &Arc<Workloads>,
        api_objects: &Arc<ApiObjects>,
        group_count: usize,
    ) -> Arc<Snapshot> {
        if let Some(current) = &self.current
            && self.dirty.is_empty()
            && Arc::ptr_eq(current.namespaces(), namespaces)
            && Arc::ptr_eq(current.nominations(), nominations)
            && Arc::ptr_eq(current.workloads(), workloads)
            && Arc::ptr_eq(current.api_objects(), api_objects)
        {
            return current.clone();
        }
        let view = ClusterView {
            nodes: self.nodes.clone(),
            pods: self.pods.clone(),
            namespaces: namespaces.clone(),
            group_count,
            nominations: nominations.clone(),
            workloads: workloads.clone(),
            api_objects: api_objects.clone(),
        };
        let next = match &self.current {
            Some(prev) => prev.successor(view, &self.dirty),
            None => Snapshot::from_view(view),
        };
        self.dirty.clear();
        let next = Arc::new(next);
        self.current = Some(next.clone());
        next
    }
}

/// The cluster's nodes and bound pods, plus a second node table for the
/// node objects a `Nodes`-mode extender request carries.
///
/// The request table never changes what the cluster table shows: a
/// request's nodes are that request's. It holds exactly the last such
/// request's nodes (so memory is bounded by one request), and keeps their
/// slots between requests, so plugin instances resync only the nodes that
/// differ from the previous request's.
#[derive(Clone, Default)]
pub struct ClusterState {
    cluster: NodeTable,
    request: NodeTable,
    pods: Pods,
    /// Namespace labels by name, for pod affinity's namespaceSelector.
    namespaces: Arc<Namespaces>,
    /// Pending pods nominated to nodes, by pod key.
    nominations: Arc<Nominations>,
    /// The scheduler whose queue nominations count from (`None`:
    /// kube-scheduler's `default-scheduler`).
    scheduler_name: Option<String>,
    /// Pod annotation keys plugins read on nodes: only these are kept.
    pod_annotation_keys: BTreeSet<String>,
    /// PodDisruptionBudgets, which preemption spares pods by.
    budgets: Budgets,
    /// Services and controllers: pods' workload selectors.
    workloads: Arc<Workloads>,
    /// Claims, volumes, classes and CSI objects, which plugins read whole.
    api_objects: Arc<ApiObjects>,
}

impl ClusterState {
    /// The pods bound to `node` with their priorities, by key.
    pub fn bound_pods_on(&self, node: &str) -> Vec<(String, i32)> {
        self.pods
            .on
            .get(node)
            .into_iter()
            .flatten()
            .filter_map(|k| self.pods.by_key.get(k).map(|u| (k.clone(), u.priority)))
            .collect()
    }

    /// Which of the bound pods `keys` (most important first) evicting all
    /// of them would violate a PodDisruptionBudget ([`Budgets::violating`]).
    pub fn violating_budgets(&self, keys: &[&str]) -> Vec<bool> {
        if self.budgets.is_empty() {
            return vec![false; keys.len()];
        }
        let empty = Labels::default();
        let pods: Vec<Candidate> = keys
            .iter()
            .map(|key| {
                let group = self
                    .pods
                    .by_key
                    .get(*key)
                    .and_then(|u| self.pods.groups.get(&u.group));
                let (namespace, name) = key.split_once('/').unwrap_or(("", key));
                Candidate {
                    namespace,
                    name,
                    labels: group.map_or(&empty, |(g, _)| &g.labels),
                }
            })
            .collect();
        self.budgets.violating(&pods)
    }

    /// Adds or replaces a PodDisruptionBudget; whether anything changed.
    pub fn upsert_budget(&mut self, pdb: &PodDisruptionBudget) -> bool {
        self.budgets.upsert(pdb)
    }

    /// Changes the Services and controllers (copied on write: snapshots
    /// share them).
    pub fn edit_workloads(&mut self, edit: impl FnOnce(&mut Workloads)) {
        edit(Arc::make_mut(&mut self.workloads));
    }

    /// The claims, volumes, classes and CSI objects kept.
    pub fn api_objects(&self) -> &ApiObjects {
        &self.api_objects
    }

    /// Changes the objects plugins read whole (copied on write).
    pub fn edit_api_objects<R>(&mut self, edit: impl FnOnce(&mut ApiObjects) -> R) -> R {
        edit(Arc::make_mut(&mut self.api_objects))
    }

    /// Forgets a PodDisruptionBudget by "namespace/name".
    pub fn remove_budget(&mut self, key: &str) -> bool {
        self.budgets.remove(key)
    }

    pub fn budget_count(&self) -> usize {
        self.budgets.len()
    }

    /// Whether any bound pod has a priority below `priority` (else
    /// preemption finds no victim anywhere).
    pub fn has_bound_below(&self, priority: i32) -> bool {
        self.pods
            .priorities
            .keys()
            .next()
            .is_some_and(|p| *p < priority)
    }

    /// What the pod bound under `key` requests, if it is bound.
    pub fn bound_requests(&self, key: &str) -> Option<(&str, &Resources)> {
        self.pods
            .by_key
            .get(key)
            .map(|u| (u.node.as_str(), &u.requests))
    }

    /// The state of nodes (in input order) and the pods bound to them.
    /// Pods in phase Succeeded or Failed hold nothing.
    pub fn from_objects(objects: &Objects) -> Result<ClusterState> {
        ClusterState::from_objects_keeping(objects, false, kube::DEFAULT_SCHEDULER_NAME)
    }

    /// As [`ClusterState::from_objects`]; with `node_objects`, each node
    /// keeps its whole object as JSON (`Node::object`, the escape hatch),
    /// for plugins that read it. Nominations count from the pods of
    /// `scheduler_name`'s queue.
    pub fn from_objects_keeping(
        objects: &Objects,
        node_objects: bool,
        scheduler_name: &str,
    ) -> Result<ClusterState> {
        ClusterState::from_objects_with(objects, node_objects, scheduler_name, &[])
    }

    /// As [`ClusterState::from_objects_keeping`], keeping the bound pods'
    /// annotations with these keys on their nodes
    /// ([`sift_sdk::Node::pod_annotations`]).
    pub fn from_objects_with(
        objects: &Objects,
        node_objects: bool,
        scheduler_name: &str,
        pod_annotation_keys: &[String],
    ) -> Result<ClusterState> {
        let mut cluster = ClusterState::new(scheduler_name, pod_annotation_keys);
        cluster.add_objects(objects, node_objects)?;
        Ok(cluster)
    }

    /// Where a reader hands bound pods so they go into `state` as they are
    /// read ([`Objects::bound_pods_to`]); errors name the object.
    pub fn bound_pods_into(
        state: &std::rc::Rc<std::cell::RefCell<ClusterState>>,
    ) -> crate::input::read::BoundPods {
        let state = state.clone();
        crate::input::read::BoundPods(Box::new(move |pod, origin| {
            state
                .borrow_mut()
                .upsert_pod(&pod)
                .map(|_| ())
                .map_err(|e| anyhow::anyhow!("{origin}: {e:#}"))
        }))
    }

    /// An empty state for `scheduler_name`'s nominations, keeping bound
    /// pods' annotations with these keys.
    pub fn new(scheduler_name: &str, pod_annotation_keys: &[String]) -> ClusterState {
        let mut cluster = ClusterState::default();
        cluster.set_scheduler_name(scheduler_name);
        cluster.pod_annotation_keys = pod_annotation_keys.iter().cloned().collect();
        cluster
    }

    /// Keeps bound pods' annotations with these keys too, from their next
    /// update on; whether any key is new.
    pub fn add_pod_annotation_keys(&mut self, keys: &[String]) -> bool {
        let before = self.pod_annotation_keys.len();
        self.pod_annotation_keys.extend(keys.iter().cloned());
        self.pod_annotation_keys.len() != before
    }

    /// Adds the nodes, pods, namespaces, PodDisruptionBudgets, Services and
    /// controllers of `objects` (pods may come before or after their nodes:
    /// each is kept by key).
    pub fn add_objects(&mut self, objects: &Objects, node_objects: bool) -> Result<()> {
        let cluster = self;
        for (obj, origin) in &objects.nodes {
            let mut node = kube::node(obj).map_err(|e| anyhow::anyhow!("{origin}: {e:#}"))?;
            if node_objects {
                node.object = Some(kube::object_json(obj));
            }
            if node.name.is_empty() {
                bail!("{origin}: node has no metadata.name");
            }
            if cluster.contains_node(&node.name) {
                bail!("{origin}: node {} appears more than once", node.name);
            }
            cluster.upsert_node(node);
        }
        for (pod, origin) in &objects.pods {
            cluster
                .upsert_pod(pod)
                .map_err(|e| anyhow::anyhow!("{origin}: {e:#}"))?;
        }
        for (ns, origin) in &objects.namespaces {
            let name = ns.metadata.name.as_deref().unwrap_or("");
            if name.is_empty() {
                bail!("{origin}: namespace has no metadata.name");
            }
            cluster.upsert_namespace(ns);
        }
        for (pdb, origin) in &objects.budgets {
            if pdb.metadata.name.as_deref().unwrap_or("").is_empty() {
                bail!("{origin}: PodDisruptionBudget has no metadata.name");
            }
            cluster.upsert_budget(pdb);
        }
        for (w, origin) in &objects.workloads {
            let (meta, what) = w.meta();
            if meta.name.as_deref().unwrap_or("").is_empty() {
                bail!("{origin}: {what} has no metadata.name");
            }
            cluster.edit_workloads(|ws| ws.upsert(w));
        }
        for (o, _) in &objects.api_objects {
            cluster.edit_api_objects(|os| os.upsert(o));
        }
        Ok(())
    }

    pub fn contains_node(&self, name: &str) -> bool {
        self.cluster.slots.contains_key(name)
    }

    pub fn node_count(&self) -> usize {
        self.cluster.nodes.len()
    }

    pub fn pod_count(&self) -> usize {
        self.pods.by_key.len()
    }

    /// Distinct pod groups (see [`PodGroup`]) among the bound pods.
    pub fn pod_group_count(&self) -> usize {
        self.pods.groups.len()
    }

    /// Adds or replaces a namespace's labels. Returns whether anything
    /// changed.
    pub fn upsert_namespace(&mut self, ns: &k8s::Namespace) -> bool {
        let name = ns.metadata.name.clone().unwrap_or_default();
        let labels = kube::labels(ns.metadata.labels.as_ref());
        if self.namespaces.get(&name) == Some(&labels) {
            return false;
        }
        Arc::make_mut(&mut self.namespaces).insert(name, labels);
        true
    }

    pub fn remove_namespace(&mut self, name: &str) -> bool {
        if !self.namespaces.contains_key(name) {
            return false;
        }
        Arc::make_mut(&mut self.namespaces).remove(name);
        true
    }

    /// Nodes held for `Nodes`-mode requests: the last request's.
    pub fn request_node_count(&self) -> usize {
        self.request.nodes.len()
    }

    /// Adds or replaces a node (matched by name). Returns whether anything
    /// changed.
    pub fn upsert_node(&mut self, node: Node) -> bool {
        self.cluster.upsert(node, &self.pods)
    }

    /// Removes a node; the last node moves into its slot. Pods bound to it
    /// are kept: they count again if the node comes back.
    pub fn remove_node(&mut self, name: &str) -> bool {
        self.cluster.remove(name)
    }

    /// Whose pods' nominations count: kube-scheduler's nominator holds the
    /// pods of its own queue only (`spec.schedulerName` of one of its
    /// profiles). Set it before adding pods.
    pub fn set_scheduler_name(&mut self, name: &str) {
        self.scheduler_name = Some(name.to_string());
    }

    /// Pending pods nominated to nodes.
    pub fn nominated_count(&self) -> usize {
        self.nominations.len()
    }

    /// Adds, replaces or (when it no longer holds resources: unbound,
    /// Succeeded or Failed) forgets a pod. A pending pod with
    /// `status.nominatedNodeName` is kept as a nomination.
    pub fn upsert_pod(&mut self, pod: &k8s::Pod) -> Result<bool> {
        let key = kube::pod_key(pod);
        let active = kube::pod_is_active(pod);
        let (usage, nomination) = match kube::bound_node(pod) {
            Some(node) if active => {
                let model = kube::pod(pod)?;
                let annotations = if self.pod_annotation_keys.is_empty() {
                    Vec::new()
                } else {
                    model
                        .annotations
                        .iter()
                        .filter(|(k, _)| self.pod_annotation_keys.contains(*k))
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect()
                };
                let usage = Usage {
                    node: node.to_string(),
                    group: GroupKey::of(&model),
                    requests: model.requests,
                    non_zero: model.non_zero_requests,
                    priority: model.priority,
                    ports: model.host_ports,
                    annotations,
                    volumes: model.volumes,
                };
                (Some(usage), None)
            }
            None if active
                && kube::nominated_node(pod).is_some()
                && kube::scheduler_name(pod)
                    == self
                        .scheduler_name
                        .as_deref()
                        .unwrap_or(kube::DEFAULT_SCHEDULER_NAME) =>
            {
                (None, Nominated::of(&kube::pod(pod)?))
            }
            _ => (None, None),
        };
        let nomination_changed = self.set_nomination(&key, nomination);
        if self.pods.by_key.get(&key) == usage.as_ref() {
            return Ok(nomination_changed);
        }
        self.forget_usage(&key);
        if let Some(usage) = usage {
            self.insert_usage(key, usage);
        }
        Ok(true)
    }

    fn insert_usage(&mut self, key: String, usage: Usage) {
        let node = usage.node.clone();
        self.pods
            .on
            .entry(node.clone())
            .or_default()
            .insert(key.clone());
        self.pods.join(&usage.group);
        *self.pods.priorities.entry(usage.priority).or_default() += 1;
        self.pods.by_key.insert(key, usage);
        self.recompute_named(&node);
    }

    /// Takes a bound pod off its node, to put back with
    /// [`ClusterState::restore`]: a preemption dry run's reprieve.
    pub fn evict(&mut self, key: &str) -> Option<Evicted> {
        let usage = self.pods.by_key.get(key)?.clone();
        self.forget_usage(key);
        Some(Evicted {
            key: key.to_string(),
            usage,
        })
    }

    /// Puts an evicted pod back where it was.
    pub fn restore(&mut self, evicted: Evicted) {
        if !self.pods.by_key.contains_key(&evicted.key) {
            self.insert_usage(evicted.key, evicted.usage);
        }
    }

    /// The node a pending pod is nominated to.
    pub fn nomination(&self, key: &str) -> Option<&str> {
        self.nominations.get(key).map(|n| n.node.as_str())
    }

    /// Nominates a pending pod (its model) to `node`, as a successful
    /// preemption does; other pods' cycles then count it there.
    pub fn nominate(&mut self, pod: &Pod, node: &str) {
        let mut p = pod.clone();
        p.nominated_node_name = node.to_string();
        let key = format!("{}/{}", pod.namespace, pod.name);
        self.set_nomination(&key, Nominated::of(&p));
    }

    /// Clears a pending pod's nomination; whether it had one.
    pub fn clear_nomination(&mut self, key: &str) -> bool {
        self.set_nomination(key, None)
    }

    /// Clears the nominations to `node` of pods below `priority` (a
    /// preemption's `prepareCandidate`); their keys.
    pub fn clear_nominations_below(&mut self, node: &str, priority: i32) -> Vec<String> {
        let keys: Vec<String> = self
            .nominations
            .values()
            .filter(|n| n.node == node && n.priority < priority)
            .map(|n| n.key.clone())
            .collect();
        for k in &keys {
            self.set_nomination(k, None);
        }
        keys
    }

    pub fn remove_pod(&mut self, pod: &k8s::Pod) -> bool {
        self.remove_pod_key(&kube::pod_key(pod))
    }

    /// Removes a pod by "namespace/name".
    pub fn remove_pod_key(&mut self, key: &str) -> bool {
        let nominated = self.set_nomination(key, None);
        self.forget_usage(key) || nominated
    }

    /// Sets or clears the pod's nomination; whether anything changed.
    fn set_nomination(&mut self, key: &str, nomination: Option<Nominated>) -> bool {
        match nomination {
            Some(n) if self.nominations.get(key).is_some_and(|old| **old == n) => false,
            Some(n) => {
                Arc::make_mut(&mut self.nominations).insert(key.to_string(), Arc::new(n));
                true
            }
            None if self.nominations.contains_key(key) => {
                Arc::make_mut(&mut self.nominations).remove(key);
                true
            }
            None => false,
        }
    }

    fn forget_usage(&mut self, key: &str) -> bool {
        let Some(old) = self.pods.by_key.remove(key) else {
            return false;
        };
        if let Some(n) = self.pods.priorities.get_mut(&old.priority) {
            *n -= 1;
            if *n == 0 {
                self.pods.priorities.remove(&old.priority);
            }
        }
        self.pods.leave(&old.group);
        if let Some(set) = self.pods.on.get_mut(&old.node) {
            set.remove(key);
            if set.is_empty() {
                self.pods.on.remove(&old.node);
            }
        }
        self.recompute_named(&old.node);
        true
    }

    fn recompute_named(&mut self, node: &str) {
        self.cluster.recompute_named(node, &self.pods);
        self.request.recompute_named(node, &self.pods);
    }

    /// The current state as an immutable snapshot; the same one until
    /// something changes.
    pub fn snapshot(&mut self) -> Arc<Snapshot> {
        self.cluster.snapshot(
            &self.namespaces,
            &self.nominations,
            &self.workloads,
            &self.api_objects,
            self.pods.groups.len(),
        )
    }

    /// Drops the last `Nodes`-mode request's nodes (when a watch keeps the
    /// cluster table, a request's nodes are not kept beyond it).
    pub fn forget_request_nodes(&mut self) {
        self.request = NodeTable::default();
    }

    /// A snapshot of exactly `nodes` (a `Nodes`-mode request's, names
    /// unique) with the usage of the pods bound to them, taken from the
    /// request table; the cluster table is untouched.
    pub fn request_snapshot(&mut self, nodes: Vec<Node>) -> Arc<Snapshot> {
        let keep: HashSet<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
        let gone: Vec<String> = self
            .request
            .slots
            .keys()
            .filter(|n| !keep.contains(n.as_str()))
            .cloned()
            .collect();
        for name in gone {
            self.request.remove(&name);
        }
        for node in nodes {
            self.request.upsert(node, &self.pods);
        }
        self.request.snapshot(
            &self.namespaces,
            &self.nominations,
            &self.workloads,
            &self.api_objects,
            self.pods.groups.len(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str) -> Node {
        Node {
            name: name.into(),
            ..Node::default()
        }
    }

    fn pod(name: &str, node: &str, cpu: &str) -> k8s::Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": node, "containers": [
                {"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
        }))
        .unwrap()
    }

    fn labelled(name: &str, node: &str, ns: &str, app: &str) -> k8s::Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": ns, "labels": {"app": app}},
            "spec": {"nodeName": node, "containers": []}
        }))
        .unwrap()
    }

    fn groups(s: &Snapshot, slot: u32) -> Vec<(String, String, u32)> {
        s.pods_on(slot)
            .iter()
            .map(|g| {
                let app = g.group.labels.get("app").unwrap_or("").to_string();
                (g.group.namespace.clone(), app, g.count)
            })
            .collect()
    }

    #[test]
    fn alike_pods_share_a_group_counted_per_node() {
        let mut c = ClusterState::default();
        for n in ["a", "b"] {
            c.upsert_node(node(n));
        }
        for (i, n) in ["a", "a", "b"].iter().enumerate() {
            c.upsert_pod(&labelled(&format!("web-{i}"), n, "shop", "web"))
                .unwrap();
        }
        c.upsert_pod(&labelled("db-0", "a", "shop", "db")).unwrap();
        // Same labels, other namespace: another group.
        c.upsert_pod(&labelled("web-x", "b", "other", "web"))
            .unwrap();
        assert_eq!(c.pod_group_count(), 3);
        let s = c.snapshot();
        let mut on_a = groups(&s, 0);
        on_a.sort();
        assert_eq!(
            on_a,
            [
                ("shop".into(), "db".into(), 1),
                ("shop".into(), "web".into(), 2)
            ]
        );
        let web = &s.pods_on(0).iter().find(|g| g.count == 2).unwrap().group;
        let web_b = &s
            .pods_on(1)
            .iter()
            .find(|g| g.group.namespace == "shop")
            .unwrap();
        assert!(
            Arc::ptr_eq(web, &web_b.group),
            "one group object for all its pods"
        );
        // A group goes when its last pod goes; a new one gets a fresh id.
        let db_id = s.pods_on(0).iter().find(|g| g.count == 1).unwrap().group.id;
        c.remove_pod_key("shop/db-0");
        assert_eq!(c.pod_group_count(), 2);
        c.upsert_pod(&labelled("db-0", "b", "shop", "db")).unwrap();
        let s = c.snapshot();
        let db = s
            .pods_on(1)
            .iter()
            .find(|g| g.group.labels.get("app") == Some("db"));
        assert!(db.unwrap().group.id > db_id);
        assert_eq!(groups(&s, 0), [("shop".into(), "web".into(), 2)]);
    }

    #[test]
    fn a_namespace_change_makes_a_new_snapshot_without_node_changes() {
        let mut c = ClusterState::default();
        c.upsert_node(node("a"));
        let s1 = c.snapshot();
        let ns: k8s::Namespace = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "shop", "labels": {"team": "t1"}}
        }))
        .unwrap();
        assert!(c.upsert_namespace(&ns));
        assert!(!c.upsert_namespace(&ns), "no change");
        let s2 = c.snapshot();
        assert_ne!(s1.generation(), s2.generation());
        assert_eq!(s2.changes_since(s1.generation()), Some(&[][..]));
        assert_eq!(s2.namespaces()["shop"].get("team"), Some("t1"));
        assert!(c.remove_namespace("shop"));
        assert!(c.snapshot().namespaces().is_empty());
    }

    #[test]
    fn pods_count_against_their_node_and_only_changes_resync() {
        let mut c = ClusterState::default();
        for n in ["a", "b", "c"] {
            c.upsert_node(node(n));
        }
        let s1 = c.snapshot();
        assert!(c.upsert_pod(&pod("p", "b", "500m")).unwrap());
        assert!(!c.upsert_pod(&pod("p", "b", "500m")).unwrap(), "no change");
        let s2 = c.snapshot();
        assert_eq!(s2.changes_since(s1.generation()), Some(&[1][..]));
        let b = s2.node(s2.slot_of("b").unwrap());
        assert_eq!((b.requested.milli_cpu, b.pod_count), (500, 1));
        // Moving the pod changes both nodes.
        c.upsert_pod(&pod("p", "c", "250m")).unwrap();
        let s3 = c.snapshot();
        assert_eq!(s3.changes_since(s2.generation()), Some(&[1, 2][..]));
        assert_eq!(s3.node(1).pod_count, 0);
        assert_eq!(s3.node(2).requested.milli_cpu, 250);
        // Unchanged state: the same snapshot.
        assert!(Arc::ptr_eq(&s3, &c.snapshot()));
    }

    #[test]
    fn removing_a_node_moves_the_last_into_its_slot() {
        let mut c = ClusterState::default();
        for n in ["a", "b", "c"] {
            c.upsert_node(node(n));
        }
        c.upsert_pod(&pod("p", "c", "1")).unwrap();
        let s1 = c.snapshot();
        assert!(c.remove_node("a"));
        let s2 = c.snapshot();
        assert_eq!(s2.len(), 2);
        assert_eq!(s2.slot_of("c"), Some(0));
        assert_eq!(s2.node(0).requested.milli_cpu, 1000);
        assert_eq!(s2.changes_since(s1.generation()), Some(&[0][..]));
        // A pod on a node that comes later counts once it exists.
        c.upsert_pod(&pod("q", "d", "2")).unwrap();
        c.upsert_node(node("d"));
        let s3 = c.snapshot();
        assert_eq!(s3.node(s3.slot_of("d").unwrap()).requested.milli_cpu, 2000);
    }

    #[test]
    fn request_nodes_never_change_the_cluster_and_hold_only_the_last_request() {
        let mut c = ClusterState::default();
        c.upsert_node(node("a"));
        c.upsert_pod(&pod("p", "a", "1")).unwrap();
        let cluster = c.snapshot();
        let mut cordoned = node("a");
        cordoned.unschedulable = true;
        let r1 = c.request_snapshot(vec![cordoned, node("x")]);
        // The request sees its own objects, with the bound pods' usage.
        let a = r1.node(r1.slot_of("a").unwrap());
        assert!(a.unschedulable);
        assert_eq!(a.requested.milli_cpu, 1000);
        // The cluster does not: same snapshot, no unknown node learnt.
        assert!(Arc::ptr_eq(&cluster, &c.snapshot()));
        assert!(!c.contains_node("x"));
        assert!(!c.snapshot().node(0).unschedulable);
        // Only the last request's nodes are held; unchanged ones keep
        // their slots, so only what differs is resynced: "x" goes, "y"
        // takes its slot, the cordoned "a" is back to normal.
        let r2 = c.request_snapshot(vec![node("a"), node("y")]);
        assert_eq!(c.request_node_count(), 2);
        assert_eq!(r2.slot_of("x"), None);
        assert_eq!(r2.changes_since(r1.generation()), Some(&[0, 1][..]));
        let r2b = c.request_snapshot(vec![node("a"), node("z")]);
        assert_eq!(r2b.changes_since(r2.generation()), Some(&[1][..]));
        assert_eq!(r2b.slot_of("a"), Some(0));
        for i in 0..100 {
            c.request_snapshot(vec![node(&format!("m{i}"))]);
        }
        assert_eq!(c.request_node_count(), 1);
        // Pod changes reach the request table too.
        let r3 = c.request_snapshot(vec![node("a")]);
        c.upsert_pod(&pod("q", "a", "2")).unwrap();
        let r4 = c.request_snapshot(vec![node("a")]);
        assert_eq!(r4.node(0).requested.milli_cpu, 3000);
        assert_eq!(r4.changes_since(r3.generation()), Some(&[0][..]));
    }
}
