//! A PodGroup as the cache keeps it between sessions: its phase,
//! condition and event as the last close wrote them, and the counts the
//! report needs. Pods without a PodGroup get the one Volcano's PodGroup
//! controller would make for them.

use crate::input::volcano::{self, PodGroup};
use crate::simulate::report::GroupCondition;
use k8s_openapi::api::core::v1 as k8s;

pub struct GroupRec {
    pub pg: PodGroup,
    /// A job of one for a pod without a group: not reported as a group.
    pub shadow: bool,
    pub phase: String,
    pub condition: Option<GroupCondition>,
    pub event: Option<String>,
    pub placed: Option<u64>,
    pub discarded: u32,
    /// Its tasks in the world.
    pub members: usize,
    /// Closed once with no tasks: later sessions would say the same.
    pub closed_empty: bool,
    /// Its pods ran and all left: the job is over and the PodGroup leaves
    /// the sessions (phase Completed), as when its job is deleted.
    pub finished: bool,
}

impl GroupRec {
    /// A PodGroup as the input (or, `shadow`, the controller) made it;
    /// the controller's start Pending.
    pub fn new(pg: PodGroup, shadow: bool) -> GroupRec {
        let phase = match (&pg.status.phase, shadow) {
            (Some(p), _) => p.clone(),
            (None, true) => "Pending".into(),
            (None, false) => String::new(),
        };
        GroupRec {
            pg,
            shadow,
            phase,
            condition: None,
            event: None,
            placed: None,
            discarded: 0,
            members: 0,
            closed_empty: false,
            finished: false,
        }
    }
}

/// The name of the PodGroup Volcano's PodGroup controller makes for a pod
/// without one: one per controller (`podgroup-<owner uid>`), else per pod.
pub fn controller_group_name(pod: &k8s::Pod) -> String {
    let id = pod
        .metadata
        .owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true))
        .map(|o| o.uid.clone())
        .or_else(|| pod.metadata.uid.clone())
        .unwrap_or_else(|| pod.metadata.name.clone().unwrap_or_default());
    format!("podgroup-{id}")
}

/// The controller's PodGroup `name` in namespace `ns` for `pod`: minMember
/// 1, the pod's queue annotation and PriorityClass.
pub fn controller_group(pod: &k8s::Pod, ns: &str, name: String) -> PodGroup {
    let mut pg = PodGroup::default();
    pg.metadata.name = Some(name);
    pg.metadata.namespace = Some(ns.to_string());
    pg.metadata.creation_timestamp = pod.metadata.creation_timestamp.clone();
    pg.spec.min_member = Some(1);
    pg.spec.queue = pod
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(volcano::QUEUE_NAME_ANNOTATION))
        .cloned();
    pg.spec.priority_class_name = pod
        .spec
        .as_ref()
        .and_then(|s| s.priority_class_name.clone());
    pg
}
