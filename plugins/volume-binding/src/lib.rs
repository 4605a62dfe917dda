//! VolumeBinding: a pod's PersistentVolumeClaims must be usable on the
//! node. Restated from kube-scheduler's `volumebinding` plugin
//! (`volume_binding.go`, `binder.go`) and the helpers they call.
//!
//! PreFilter (`prepare`) sorts the pod's claims (its `persistentVolumeClaim`
//! volumes and the claims of its `ephemeral` volumes): bound claims, whose
//! volumes' node affinity Filter checks; unbound claims of a
//! `WaitForFirstConsumer` class, for which Filter finds a static volume on
//! the node or checks that one can be provisioned there; and unbound
//! claims of an `Immediate` class (or pre-bound but not yet bound), which
//! reject the pod everywhere until the volume controller binds them.
//!
//! Reserve and PreBind (`pre_bind`, `prebind.rs`): the claim each found
//! volume is bound to, and the node each claim to provision is for, as
//! writes the host applies before binding the pod.
//!
//! StorageCapacityScoring, which gates upstream's Score, is off by default
//! in 1.36 (alpha since 1.33, beta from 1.37), so this plugin does not
//! score.

mod affinity;
mod json;
mod matching;
mod migration;
mod prebind;
mod provision;

use affinity::Affinity;
use json::{at, text};
use matching::{Claim, Found};
use migration::Migration;
use provision::{Outcome, Provision};
use serde_json::Value;
use sift_sdk::{
    Args, ClusterView, Code, ExtensionPoints, Node, NodeFields, ObjectWrite, Plugin, Pod, Prepare,
    Status, export_plugin,
};
use std::collections::{BTreeSet, HashMap};

pub const ERR_REASON_BIND_CONFLICT: &str =
    "node(s) didn't find available persistent volumes to bind";
pub const ERR_REASON_NODE_CONFLICT: &str = "node(s) had volume node affinity conflict";
pub const ERR_REASON_NOT_ENOUGH_SPACE: &str = "node(s) did not have enough free storage";
pub const ERR_REASON_PV_NOT_EXIST: &str =
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)";
pub const ERR_UNBOUND_IMMEDIATE: &str = "pod has unbound immediate PersistentVolumeClaims";

/// The annotation the volume controller sets once it bound a claim
/// (`volume.AnnBindCompleted`): only then is the claim "fully bound".
const BIND_COMPLETED: &str = "pv.kubernetes.io/bind-completed";

pub struct VolumeBinding;

/// A bound claim's volume.
#[derive(Debug)]
enum BoundVolume {
    /// The claim names a volume that does not exist.
    Missing,
    Present {
        affinity: Affinity,
        /// Its CSI translation, when its in-tree plugin may be migrated.
        migration: Option<Migration>,
    },
}

/// What PreFilter found (upstream's `PodVolumeClaims`), compiled for
/// Filter.
#[derive(Debug, Default)]
pub struct State {
    /// The bound claims' volumes, in the pod's volume order.
    bound: Vec<BoundVolume>,
    /// The unbound `WaitForFirstConsumer` claims, in the pod's volume order.
    unbound: Vec<Claim>,
    /// Their provisioning, by index into `unbound`.
    provisions: Vec<Result<Provision, String>>,
    /// Indices into `unbound` of the claims without a selected node,
    /// smallest request first (upstream sorts them so the smaller claims
    /// take the smaller volumes).
    match_order: Vec<usize>,
    /// Node name → in-tree plugins its CSINode lists as migrated; read only
    /// when a bound volume may be migrated.
    migrated: HashMap<String, BTreeSet<String>>,
}

impl Plugin for VolumeBinding {
    const NAME: &'static str = "VolumeBinding";
    const NODE_FIELDS: NodeFields = NodeFields::LABELS;
    const EXTENSION_POINTS: ExtensionPoints =
        ExtensionPoints::FILTER.union(ExtensionPoints::RESERVE);
    const OBJECT_KINDS: &'static [&'static str] = &[
        "PersistentVolumeClaim",
        "PersistentVolume",
        "StorageClass",
        "CSINode",
        "CSIDriver",
        "CSIStorageCapacity",
    ];
    type PodState = State;

    fn new(_: Args) -> Result<Self, String> {
        Ok(VolumeBinding)
    }

    fn prepare(&self, pod: &Pod, cluster: &dyn ClusterView) -> Prepare<State> {
        match prepare(pod, cluster) {
            Ok(Some(state)) => Prepare::Proceed(state),
            Ok(None) => Prepare::Skip,
            Err(status) => Prepare::Reject(status),
        }
    }

    fn filter(&self, _: &Pod, state: &State, node: &Node) -> Status {
        filter(state, node)
    }

    fn pre_bind(
        &self,
        pod: &Pod,
        node: &Node,
        cluster: &dyn ClusterView,
    ) -> Result<Vec<ObjectWrite>, Status> {
        match prepare(pod, cluster)? {
            Some(state) => prebind::writes(&state, node, cluster).map_err(Status::error),
            None => Ok(Vec::new()),
        }
    }
}

/// A claim of the pod, as PreFilter looked it up.
struct PodClaim<'a> {
    key: String,
    value: &'a Value,
}

/// PreFilter: `None` to skip (the pod has no claim).
fn prepare(pod: &Pod, cluster: &dyn ClusterView) -> Result<Option<State>, Status> {
    let namespace = if pod.namespace.is_empty() {
        "default"
    } else {
        &pod.namespace
    };
    let claims = pod_claims(pod, namespace, cluster)?;
    if claims.is_empty() {
        return Ok(None);
    }

    // `GetPodVolumeClaims`: bound, unbound with delayed binding, unbound
    // otherwise.
    let mut bound = Vec::new();
    let mut delayed = Vec::new();
    let mut immediate = false;
    for c in &claims {
        let volume_name = text(c.value, &["spec", "volumeName"]);
        if !volume_name.is_empty() && json::annotation(c.value, BIND_COMPLETED).is_some() {
            bound.push(volume_name);
        } else if delay_binding(c.value, cluster).map_err(Status::error)? && volume_name.is_empty()
        {
            delayed.push(c);
        } else {
            // Immediate binding (or pre-bound by the user): the volume
            // controller binds these, not the scheduler.
            immediate = true;
        }
    }
    if immediate {
        return Err(Status::unresolvable(ERR_UNBOUND_IMMEDIATE));
    }

    let mut state = State::default();
    for name in bound {
        state
            .bound
            .push(match cluster.object("PersistentVolume", name) {
                None => BoundVolume::Missing,
                Some(pv) => BoundVolume::Present {
                    affinity: Affinity::of_volume(pv),
                    migration: migration::of_volume(pv),
                },
            });
    }
    if state.bound.iter().any(|b| {
        matches!(
            b,
            BoundVolume::Present {
                migration: Some(_),
                ..
            }
        )
    }) {
        state.migrated = cluster
            .objects("CSINode")
            .into_iter()
            .map(|(name, n)| (name.to_string(), migration::migrated_plugins(n)))
            .filter(|(_, plugins)| !plugins.is_empty())
            .collect();
    }

    if !delayed.is_empty() {
        // The volumes of the classes the unbound claims ask for, in one
        // pass over all volumes (a cluster may hold thousands).
        let classes: BTreeSet<&str> = delayed.iter().map(|c| json::claim_class(c.value)).collect();
        let mut by_class: HashMap<&str, Vec<(&str, &Value)>> = HashMap::new();
        for (name, pv) in cluster.objects("PersistentVolume") {
            let class = json::volume_class(pv);
            if let Some(&c) = classes.get(class) {
                by_class.entry(c).or_default().push((name, pv));
            }
        }
        for c in &delayed {
            let volumes = by_class
                .get(json::claim_class(c.value))
                .map_or(&[][..], Vec::as_slice);
            let claim = Claim::compile(c.value, &c.key, volumes);
            state.provisions.push(Provision::of(&claim, cluster));
            state.unbound.push(claim);
        }
        let mut order: Vec<usize> = (0..state.unbound.len())
            .filter(|&i| state.unbound[i].selected_node.is_none())
            .collect();
        order.sort_by_key(|&i| state.unbound[i].request);
        state.match_order = order;
    }
    Ok(Some(state))
}

/// The pod's claims in volume order (upstream's `podHasPVCs`), or the
/// status rejecting the pod: a claim missing, lost, being deleted, or an
/// ephemeral volume's claim that another pod owns.
fn pod_claims<'a>(
    pod: &Pod,
    namespace: &str,
    cluster: &'a dyn ClusterView,
) -> Result<Vec<PodClaim<'a>>, Status> {
    let mut out = Vec::new();
    for v in &pod.volumes {
        let is_claim =
            v.ephemeral || !v.claim_name.is_empty() || v.source("persistentVolumeClaim").is_some();
        if !is_claim {
            continue;
        }
        let name = &v.claim_name;
        let key = format!("{namespace}/{name}");
        let Some(claim) = cluster.object("PersistentVolumeClaim", &key) else {
            // Normal just after an ephemeral volume's pod is created: its
            // claim is on the way.
            return Err(Status::unresolvable(if v.ephemeral {
                format!(
                    "waiting for ephemeral volume controller to create the persistentvolumeclaim \"{name}\""
                )
            } else {
                format!("persistentvolumeclaim \"{name}\" not found")
            }));
        };
        if text(claim, &["status", "phase"]) == "Lost" {
            return Err(Status::unresolvable(format!(
                "persistentvolumeclaim \"{name}\" bound to non-existent persistentvolume \"{}\"",
                text(claim, &["spec", "volumeName"])
            )));
        }
        if json::is_set(claim, &["metadata", "deletionTimestamp"]) {
            return Err(Status::unresolvable(format!(
                "persistentvolumeclaim \"{name}\" is being deleted"
            )));
        }
        if v.ephemeral && !controlled_by(claim, &pod.uid) {
            let claim_ns = match text(claim, &["metadata", "namespace"]) {
                "" => namespace,
                ns => ns,
            };
            return Err(Status::unresolvable(format!(
                "PVC {claim_ns}/{name} was not created for pod {namespace}/{} (pod is not owner)",
                pod.name
            )));
        }
        out.push(PodClaim { key, value: claim });
    }
    Ok(out)
}

/// Whether the object's controller (its first owner reference marked
/// `controller: true`) has this UID (`metav1.IsControlledBy`).
fn controlled_by(object: &Value, uid: &str) -> bool {
    at(object, &["metadata", "ownerReferences"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
        .is_some_and(|r| text(r, &["uid"]) == uid)
}

/// `IsDelayBindingMode`: the claim's class binds at the first consumer. No
/// class, or a class that does not exist, binds immediately; a class
/// without a binding mode is an error.
fn delay_binding(claim: &Value, cluster: &dyn ClusterView) -> Result<bool, String> {
    let class = json::claim_class(claim);
    if class.is_empty() {
        return Ok(false);
    }
    let Some(sc) = cluster.object("StorageClass", class) else {
        return Ok(false);
    };
    match sc.get("volumeBindingMode").and_then(Value::as_str) {
        None => Err(format!(
            "VolumeBindingMode not set for StorageClass \"{class}\""
        )),
        Some(mode) => Ok(mode == "WaitForFirstConsumer"),
    }
}

/// Filter (upstream's `FindPodVolumes`).
fn filter(state: &State, node: &Node) -> Status {
    let labels = &node.labels;
    let mut node_conflict = false;
    let mut pv_missing = false;

    // Bound claims: their volumes' node affinity, the first failure ending
    // the check.
    for b in &state.bound {
        let BoundVolume::Present {
            affinity,
            migration,
        } = b
        else {
            pv_missing = true;
            break;
        };
        let migrated = migration.as_ref().filter(|m| {
            state
                .migrated
                .get(&node.name)
                .is_some_and(|p| p.contains(m.plugin))
        });
        let affinity = match migrated {
            None => affinity,
            Some(m) => match &m.translated {
                Ok(a) => a,
                Err(e) => return Status::error(e.clone()),
            },
        };
        if !affinity.matches(labels) {
            node_conflict = true;
            break;
        }
    }

    let (bind_conflict, no_space) = match unbound(state, node) {
        Ok(v) => v,
        Err(e) => return Status::error(e.to_string()),
    };

    let reasons: Vec<&'static str> = [
        (node_conflict, ERR_REASON_NODE_CONFLICT),
        (bind_conflict, ERR_REASON_BIND_CONFLICT),
        (no_space, ERR_REASON_NOT_ENOUGH_SPACE),
        (pv_missing, ERR_REASON_PV_NOT_EXIST),
    ]
    .into_iter()
    .filter_map(|(failed, reason)| failed.then_some(reason))
    .collect();
    if reasons.is_empty() {
        Status::success()
    } else {
        Status::new(Code::UnschedulableAndUnresolvable, reasons)
    }
}

/// The unbound claims on a node: (no volume found or provisionable, not
/// enough storage), or the error that fails the node.
fn unbound<'a>(state: &'a State, node: &Node) -> Result<(bool, bool), &'a str> {
    if state.unbound.is_empty() {
        return Ok((false, false));
    }
    let labels = &node.labels;
    // A claim whose provisioning started for another node cannot come
    // here.
    let mut to_provision = Vec::new();
    for (i, c) in state.unbound.iter().enumerate() {
        match &c.selected_node {
            Some(n) if *n != node.name => return Ok((true, false)),
            Some(_) => to_provision.push(i),
            None => {}
        }
    }
    // Static volumes, smallest claims first; a volume one claim takes is
    // not another's.
    let mut satisfied = true;
    let mut taken: Vec<&str> = Vec::new();
    for &i in &state.match_order {
        match state.unbound[i].find(labels, &taken) {
            Found::Volume(v) => taken.push(v),
            Found::Nothing => {
                to_provision.push(i);
                satisfied = false;
            }
            Found::Error(e) => return Err(e),
        }
    }
    // The rest is provisioned, or the node does not fit.
    if to_provision.is_empty() {
        return Ok((!satisfied, false));
    }
    for i in to_provision {
        let provision = state.provisions[i].as_ref().map_err(String::as_str)?;
        match provision.on(labels) {
            Outcome::Provisionable => {}
            Outcome::NotProvisionable => return Ok((true, false)),
            Outcome::NotEnoughSpace => return Ok((false, true)),
        }
    }
    Ok((false, false))
}

export_plugin!(VolumeBinding);

#[cfg(test)]
mod tests;
