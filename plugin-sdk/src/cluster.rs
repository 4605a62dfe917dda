//! The pods already placed in the cluster, as the filters that look beyond
//! one node read them (PodTopologySpread, InterPodAffinity): each pod's
//! namespace, labels and required anti-affinity, counted per node.
//!
//! Pods that agree on all of these form one [`PodGroup`]: the replicas of a
//! ReplicaSet usually do, so a selector is matched once per group and the
//! counts are summed, instead of matching every pod. A cluster of 50,000
//! pods from a few hundred controllers is a few hundred groups.

use crate::model::{Labels, PodAffinityTerm};
use std::sync::Arc;

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
}

/// How many pods of a group are on one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupCount {
    pub group: Arc<PodGroup>,
    pub count: u32,
}
