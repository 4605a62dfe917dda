//! The pods already placed in the cluster, as the filters that look beyond
//! one node read them (PodTopologySpread, InterPodAffinity): each pod's
//! namespace, labels and required anti-affinity, counted per node.
//!
//! Pods that agree on all of these form one [`PodGroup`]: the replicas of a
//! ReplicaSet usually do, so a selector is matched once per group and the
//! counts are summed, instead of matching every pod. A cluster of 50,000
//! pods from a few hundred controllers is a few hundred groups.

use crate::model::{HostPort, Labels, PodAffinityTerm};
use crate::resources::Resources;
use std::sync::Arc;

/// The hashers live in `hash.rs`, which labels use too; their paths under
/// `cluster` are the ones plugins have always used.
pub use crate::hash::{FastMap, FastSet, IdHasher, IdMap};

/// Pods alike in everything the cluster view shows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodGroup {
    /// Unique while the group has pods; not reused after, so a plugin may
    /// cache what it computed for a group by id within a cycle.
    pub id: u64,
    pub namespace: String,
    pub labels: Labels,
    /// The pods' required anti-affinity terms: InterPodAffinity rejects a
    /// node where an existing pod's term forbids the incoming pod.
    pub anti_affinity: Vec<PodAffinityTerm>,
    /// `metadata.deletionTimestamp` is set. PodTopologySpread does not
    /// count terminating pods; InterPodAffinity does.
    pub terminating: bool,
    /// The pods' required affinity terms (contract 0.4): InterPodAffinity's
    /// scoring weighs them with `hardPodAffinityWeight`.
    pub affinity: Vec<PodAffinityTerm>,
    /// The pods' preferred affinity and anti-affinity terms (contract 0.4).
    pub preferred_affinity: Vec<crate::model::WeightedPodAffinityTerm>,
    pub preferred_anti_affinity: Vec<crate::model::WeightedPodAffinityTerm>,
}

impl PodGroup {
    /// Whether its pods have terms InterPodAffinity's scoring weighs for
    /// another pod: required affinity, preferred affinity or anti-affinity.
    pub fn has_scored_affinity(&self) -> bool {
        !self.affinity.is_empty()
            || !self.preferred_affinity.is_empty()
            || !self.preferred_anti_affinity.is_empty()
    }
}

/// A pending pod nominated to a node (`status.nominatedNodeName`, set by
/// preemption): kube-scheduler checks a node first with the pods nominated
/// to it that have at least the incoming pod's priority, then without.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NominatedPod {
    pub requests: Resources,
    pub host_ports: Vec<HostPort>,
    /// Its namespace, labels and anti-affinity; `id` is 0 (it is in no
    /// group of the cluster view).
    pub group: PodGroup,
}

/// How many pods of a group are on one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupCount {
    pub group: Arc<PodGroup>,
    pub count: u32,
}

/// The nodes and placed pods a plugin's prepare step reads (kube-scheduler
/// hands PreFilter the whole snapshot's NodeInfo list). The host implements
/// it over its snapshot; a component over the tables the host syncs into
/// it. Nodes are addressed by slot; a slot may be empty.
pub trait ClusterView {
    /// One past the highest slot.
    fn slots(&self) -> u32;
    /// The node at `slot`, if any.
    fn node(&self, slot: u32) -> Option<&crate::Node>;
    /// The pods bound to the node at `slot`, by group.
    fn pods_on(&self, slot: u32) -> &[GroupCount];
    /// A namespace's labels; `None` for a namespace the host was not given.
    fn namespace_labels(&self, namespace: &str) -> Option<&Labels>;
    /// Every namespace the host was given, with its labels.
    fn namespaces(&self) -> Vec<(&str, &Labels)>;
    /// The topology domains of label `key`: its distinct values over the
    /// nodes, and each slot's index into them. Hosts cache it per
    /// snapshot, so a prepare step reads a dense column instead of every
    /// node's labels.
    fn domains(&self, key: &str) -> std::sync::Arc<Domains> {
        std::sync::Arc::new(Domains::scan(self, key))
    }

    /// Every pod group and where its pods are. Hosts cache it per
    /// snapshot, so a selector is matched once per group and only the
    /// nodes holding matching pods are visited.
    fn group_index(&self) -> std::sync::Arc<GroupIndex> {
        std::sync::Arc::new(GroupIndex::scan(self))
    }

    /// The cluster object of `kind` at `key` (`namespace/name`, or `name`
    /// for cluster-scoped kinds), as `kubectl get -o json` prints it. Only
    /// kinds the plugin names in [`crate::Plugin::OBJECT_KINDS`] are there.
    fn object(&self, _kind: &str, _key: &str) -> Option<&serde_json::Value> {
        None
    }

    /// Every object of `kind`, by key.
    fn objects(&self, _kind: &str) -> Vec<(&str, &serde_json::Value)> {
        Vec::new()
    }

    /// An id of this view's contents: equal ids, equal views (the host's
    /// snapshot generation; a component's count of syncs). Plugins may key
    /// caches on it. `None`: no such id, cache nothing.
    fn generation(&self) -> Option<u64> {
        None
    }

    /// The slots whose pods include some with required anti-affinity
    /// (upstream's `HavePodsWithRequiredAntiAffinityList`): what a pod
    /// without affinity of its own must look at, instead of every pod.
    fn anti_affinity_slots(&self) -> Vec<u32> {
        (0..self.slots())
            .filter(|&s| {
                self.pods_on(s)
                    .iter()
                    .any(|g| !g.group.anti_affinity.is_empty())
            })
            .collect()
    }

    /// The slots whose pods include some with affinity terms a scorer
    /// weighs (required affinity, preferred affinity or anti-affinity:
    /// upstream's `HavePodsWithAffinityList`): what InterPodAffinity's
    /// scoring of a pod without preferred terms must look at.
    fn affinity_slots(&self) -> Vec<u32> {
        (0..self.slots())
            .filter(|&s| {
                self.pods_on(s)
                    .iter()
                    .any(|g| g.group.has_scored_affinity())
            })
            .collect()
    }
}

/// A cluster view over plain tables: tests, and hosts without a snapshot.
#[derive(Clone, Debug, Default)]
pub struct ClusterTables {
    pub nodes: Vec<crate::Node>,
    /// By node index; missing entries mean no pods.
    pub pods: Vec<Vec<GroupCount>>,
    pub namespaces: Vec<(String, Labels)>,
    /// Cluster objects by kind, then key.
    pub objects: ObjectTables,
}

/// Cluster objects by kind, then key (see [`ClusterView::object`]).
pub type ObjectTables =
    std::collections::BTreeMap<String, std::collections::BTreeMap<String, serde_json::Value>>;

/// [`ClusterView::objects`] over [`ObjectTables`].
pub(crate) fn objects_of<'a>(
    tables: &'a ObjectTables,
    kind: &str,
) -> Vec<(&'a str, &'a serde_json::Value)> {
    tables
        .get(kind)
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.as_str(), v))
        .collect()
}

impl ClusterView for ClusterTables {
    fn slots(&self) -> u32 {
        self.nodes.len() as u32
    }
    fn object(&self, kind: &str, key: &str) -> Option<&serde_json::Value> {
        self.objects.get(kind)?.get(key)
    }
    fn objects(&self, kind: &str) -> Vec<(&str, &serde_json::Value)> {
        objects_of(&self.objects, kind)
    }
    fn node(&self, slot: u32) -> Option<&crate::Node> {
        self.nodes.get(slot as usize)
    }
    fn pods_on(&self, slot: u32) -> &[GroupCount] {
        self.pods.get(slot as usize).map_or(&[], |p| &p[..])
    }
    fn namespace_labels(&self, namespace: &str) -> Option<&Labels> {
        self.namespaces
            .iter()
            .find(|(n, _)| n == namespace)
            .map(|(_, l)| l)
    }
    fn namespaces(&self) -> Vec<(&str, &Labels)> {
        self.namespaces
            .iter()
            .map(|(n, l)| (n.as_str(), l))
            .collect()
    }
}

/// The topology domains of one label key (see [`ClusterView::domains`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Domains {
    /// Distinct values, in order of first appearance by slot.
    pub values: Vec<String>,
    /// Per slot: index into `values`, or [`Domains::NONE`] when the slot is
    /// empty or its node lacks the label.
    pub by_slot: Vec<u32>,
}

impl Domains {
    pub const NONE: u32 = u32::MAX;

    /// Computed from the nodes' labels.
    pub fn scan(cluster: &(impl ClusterView + ?Sized), key: &str) -> Domains {
        let key = crate::model::LabelKey::new(key);
        let mut index: FastMap<String, u32> = FastMap::default();
        let mut d = Domains::default();
        for slot in 0..cluster.slots() {
            let id = match cluster.node(slot).and_then(|n| n.labels.get_key(&key)) {
                Some(v) => match index.get(v) {
                    Some(&id) => id,
                    None => {
                        let id = d.values.len() as u32;
                        index.insert(v.to_string(), id);
                        d.values.push(v.to_string());
                        id
                    }
                },
                None => Domains::NONE,
            };
            d.by_slot.push(id);
        }
        d
    }

    /// The domain of `slot`, if its node has the label.
    pub fn of(&self, slot: u32) -> Option<u32> {
        self.by_slot
            .get(slot as usize)
            .copied()
            .filter(|&d| d != Domains::NONE)
    }
}

/// Every pod group with the slots its pods are on (see
/// [`ClusterView::group_index`]).
#[derive(Clone, Debug, Default)]
pub struct GroupIndex {
    pub groups: Vec<(Arc<PodGroup>, Placements)>,
}

/// (slot, pods there) pairs.
pub type Placements = Vec<(u32, u32)>;

impl GroupIndex {
    /// Computed from every slot's pods.
    pub fn scan(cluster: &(impl ClusterView + ?Sized)) -> GroupIndex {
        let mut at: IdMap<usize> = IdMap::default();
        let mut index = GroupIndex::default();
        for slot in 0..cluster.slots() {
            if cluster.node(slot).is_none() {
                continue;
            }
            for g in cluster.pods_on(slot) {
                let i = *at.entry(g.group.id).or_insert_with(|| {
                    index.groups.push((g.group.clone(), Vec::new()));
                    index.groups.len() - 1
                });
                index.groups[i].1.push((slot, g.count));
            }
        }
        index
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Node;

    fn tables() -> ClusterTables {
        let node = |name: &str, zone: Option<&str>| Node {
            name: name.into(),
            labels: zone.map(|z| ("zone", z)).into_iter().collect(),
            ..Node::default()
        };
        let group = |id: u64, app: &str| {
            Arc::new(PodGroup {
                id,
                namespace: "default".into(),
                labels: [("app", app)].into_iter().collect(),
                ..PodGroup::default()
            })
        };
        let (web, db) = (group(1, "web"), group(2, "db"));
        let count = |g: &Arc<PodGroup>, count| GroupCount {
            group: g.clone(),
            count,
        };
        ClusterTables {
            nodes: vec![
                node("a", Some("z1")),
                node("b", None),
                node("c", Some("z2")),
                node("d", Some("z1")),
            ],
            pods: vec![
                vec![count(&web, 2), count(&db, 1)],
                vec![count(&web, 1)],
                vec![],
                vec![count(&web, 3)],
            ],
            namespaces: vec![],
            ..Default::default()
        }
    }

    #[test]
    fn affinity_slots_hold_pods_with_terms_a_scorer_weighs() {
        let mut t = tables();
        assert!(t.affinity_slots().is_empty());
        let term = crate::WeightedPodAffinityTerm::default();
        let preferring = Arc::new(PodGroup {
            id: 3,
            preferred_anti_affinity: vec![term],
            ..PodGroup::default()
        });
        // Required anti-affinity alone is the filter's, not the scorer's.
        let avoiding = Arc::new(PodGroup {
            id: 4,
            anti_affinity: vec![PodAffinityTerm::default()],
            ..PodGroup::default()
        });
        t.pods[2].push(GroupCount {
            group: preferring,
            count: 1,
        });
        t.pods[1].push(GroupCount {
            group: avoiding,
            count: 1,
        });
        assert_eq!(t.affinity_slots(), [2]);
        assert_eq!(t.anti_affinity_slots(), [1]);
    }

    #[test]
    fn domains_are_a_dense_column_of_a_labels_values() {
        let d = tables().domains("zone");
        assert_eq!(d.values, ["z1", "z2"]);
        assert_eq!(d.by_slot, [0, Domains::NONE, 1, 0]);
        assert_eq!((d.of(1), d.of(3), d.of(9)), (None, Some(0), None));
    }

    #[test]
    fn the_group_index_lists_each_groups_placements() {
        let index = tables().group_index();
        let by_app: Vec<(&str, &Placements)> = index
            .groups
            .iter()
            .map(|(g, p)| (g.labels.get("app").unwrap(), p))
            .collect();
        assert_eq!(
            by_app,
            [
                ("web", &vec![(0, 2), (1, 1), (3, 3)]),
                ("db", &vec![(0, 1)])
            ]
        );
    }
}
