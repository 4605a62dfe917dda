//! VolumeRestrictions: a pod may not mount an in-line disk another pod on
//! the node mounts in a way that conflicts (GCE PD, AWS EBS, Ceph RBD,
//! iSCSI), nor use a `ReadWriteOncePod` claim some scheduled pod already
//! uses. Restated from kube-scheduler's `volumerestrictions` plugin.

use serde_json::Value;
use sift_sdk::{
    Args, ClusterView, Node, NodeFields, Plugin, Pod, Prepare, Status, Volume, export_plugin,
};
use std::collections::BTreeSet;

pub const ERR_REASON_DISK_CONFLICT: &str = "node(s) had no available disk";
pub const ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT: &str =
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode";

/// The in-line sources two pods may conflict over.
const CHECKED_SOURCES: [&str; 4] = ["gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi"];

pub struct VolumeRestrictions;

/// What PreFilter computed: the pod's volumes to check against each node's
/// pods, and whether a ReadWriteOncePod claim of it is already in use.
#[derive(Default)]
pub struct State {
    checked: Vec<Value>,
    rwop_in_use: bool,
}

impl Plugin for VolumeRestrictions {
    const NAME: &'static str = "VolumeRestrictions";
    const NODE_FIELDS: NodeFields = NodeFields::VOLUMES;
    const OBJECT_KINDS: &'static [&'static str] = &["PersistentVolumeClaim"];
    type PodState = State;

    fn new(_: Args) -> Result<Self, String> {
        Ok(VolumeRestrictions)
    }

    fn prepare(&self, pod: &Pod, cluster: &dyn ClusterView) -> Prepare<State> {
        let checked: Vec<Value> = pod.volumes.iter().filter_map(checked_source).collect();
        let rwop = match read_write_once_pod_claims(pod, cluster) {
            Ok(claims) => claims,
            Err(status) => return Prepare::Reject(status),
        };
        // At most one scheduled pod can use a ReadWriteOncePod claim: count
        // the claims in use by any pod bound to a node.
        let rwop_in_use = !rwop.is_empty() && {
            let keys: BTreeSet<String> = rwop
                .iter()
                .map(|c| format!("{}/{c}", pod.namespace))
                .collect();
            (0..cluster.slots())
                .filter_map(|s| cluster.node(s))
                .flat_map(|n| &n.volumes)
                .any(|p| {
                    let ns = p.pod.split_once('/').map_or("", |(ns, _)| ns);
                    p.volumes
                        .iter()
                        .filter(|v| is_claim(v))
                        .any(|v| keys.contains(&format!("{ns}/{}", v.claim_name)))
                })
        };
        if checked.is_empty() && !rwop_in_use {
            return Prepare::Skip;
        }
        Prepare::Proceed(State {
            checked,
            rwop_in_use,
        })
    }

    fn filter(&self, _: &Pod, state: &State, node: &Node) -> Status {
        if !state.checked.is_empty() {
            let existing: Vec<Value> = node
                .volumes
                .iter()
                .flat_map(|p| &p.volumes)
                .filter_map(checked_source)
                .collect();
            if state
                .checked
                .iter()
                .any(|v| existing.iter().any(|e| conflict(v, e)))
            {
                return Status::unschedulable(ERR_REASON_DISK_CONFLICT);
            }
        }
        if state.rwop_in_use {
            return Status::unschedulable(ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT);
        }
        Status::success()
    }
}

/// A `persistentVolumeClaim` volume (not an `ephemeral` one).
fn is_claim(v: &Volume) -> bool {
    !v.ephemeral && (!v.claim_name.is_empty() || v.source("persistentVolumeClaim").is_some())
}

/// The volume as JSON when it has a source two pods may conflict over.
fn checked_source(v: &Volume) -> Option<Value> {
    if !CHECKED_SOURCES.iter().any(|k| v.object.contains(k)) {
        return None;
    }
    let value: Value = serde_json::from_str(&v.object).ok()?;
    CHECKED_SOURCES
        .iter()
        .any(|k| value.get(k).is_some())
        .then_some(value)
}

/// The pod's claims with the ReadWriteOncePod access mode; a claim that
/// does not exist rejects the pod (upstream's lister NotFound).
fn read_write_once_pod_claims(
    pod: &Pod,
    cluster: &dyn ClusterView,
) -> Result<BTreeSet<String>, Status> {
    let mut out = BTreeSet::new();
    for v in pod.volumes.iter().filter(|v| is_claim(v)) {
        let name = &v.claim_name;
        let Some(claim) = cluster.object(
            "PersistentVolumeClaim",
            &format!("{}/{name}", pod.namespace),
        ) else {
            return Err(Status::unresolvable(format!(
                "persistentvolumeclaim \"{name}\" not found"
            )));
        };
        let modes = claim["spec"]["accessModes"].as_array();
        if modes.is_some_and(|m| m.iter().any(|m| m == "ReadWriteOncePod")) {
            out.insert(name.clone());
        }
    }
    Ok(out)
}

fn text<'a>(v: &'a Value, source: &str, field: &str) -> &'a str {
    v[source][field].as_str().unwrap_or("")
}

fn read_only(v: &Value, source: &str) -> bool {
    v[source]["readOnly"].as_bool().unwrap_or(false)
}

/// Whether volume `v` of the incoming pod conflicts with `e`, one of a pod
/// already on the node (upstream's `isVolumeConflict`, one pair).
fn conflict(v: &Value, e: &Value) -> bool {
    let both = |k: &str| v.get(k).is_some() && e.get(k).is_some();
    // The same GCE disk: a conflict unless both mount it read-only.
    if both("gcePersistentDisk")
        && text(v, "gcePersistentDisk", "pdName") == text(e, "gcePersistentDisk", "pdName")
        && !(read_only(v, "gcePersistentDisk") && read_only(e, "gcePersistentDisk"))
    {
        return true;
    }
    // The same EBS volume: always a conflict.
    if both("awsElasticBlockStore")
        && text(v, "awsElasticBlockStore", "volumeID")
            == text(e, "awsElasticBlockStore", "volumeID")
    {
        return true;
    }
    // The same iSCSI IQN: a conflict unless both are read-only.
    if both("iscsi")
        && text(v, "iscsi", "iqn") == text(e, "iscsi", "iqn")
        && !(read_only(v, "iscsi") && read_only(e, "iscsi"))
    {
        return true;
    }
    // The same RBD image (a shared monitor, pool and image): a conflict
    // unless both are read-only. Kubernetes defaults the pool to "rbd".
    if both("rbd") {
        let monitors = |x: &Value| -> BTreeSet<String> {
            x["rbd"]["monitors"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|m| m.as_str().map(str::to_string))
                .collect()
        };
        let pool = |x: &Value| x["rbd"]["pool"].as_str().unwrap_or("rbd").to_string();
        if !monitors(v).is_disjoint(&monitors(e))
            && pool(v) == pool(e)
            && text(v, "rbd", "image") == text(e, "rbd", "image")
            && !(read_only(v, "rbd") && read_only(e, "rbd"))
        {
            return true;
        }
    }
    false
}

export_plugin!(VolumeRestrictions);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn read_only_mounts_of_one_disk_share_and_a_writer_conflicts() {
        let gce = |ro: bool| json!({"gcePersistentDisk": {"pdName": "d", "readOnly": ro}});
        assert!(!conflict(&gce(true), &gce(true)));
        assert!(conflict(&gce(false), &gce(true)));
        let ebs = |id: &str| json!({"awsElasticBlockStore": {"volumeID": id}});
        assert!(conflict(&ebs("a"), &ebs("a")));
        assert!(!conflict(&ebs("a"), &ebs("b")));
        let rbd = |mons: &[&str], ro: bool| json!({"rbd": {"monitors": mons, "image": "i", "readOnly": ro}});
        assert!(conflict(&rbd(&["m1", "m2"], false), &rbd(&["m2"], false)));
        assert!(!conflict(&rbd(&["m1"], false), &rbd(&["m2"], false)));
        assert!(!conflict(&rbd(&["m1"], true), &rbd(&["m1"], true)));
        assert!(!conflict(&gce(false), &ebs("d")));
    }
}
