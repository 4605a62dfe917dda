//! PreBind's effects in a simulation. The objects the reserve steps wrote
//! (contract 0.7) are applied to the cluster state, then what the
//! cluster's controllers do about them follows at once (no controller
//! delay is modelled), so the next pod sees the volumes as bound:
//!
//! - the volume controller binds a claim to the volume whose `claimRef`
//!   names it (VolumeBinding found a static volume): the claim gets
//!   `spec.volumeName`, `pv.kubernetes.io/bind-completed` and
//!   `pv.kubernetes.io/bound-by-controller`, both become `Bound`;
//! - a CSI provisioner provisions a volume for a claim with
//!   `volume.kubernetes.io/selected-node` (VolumeBinding chose to
//!   provision): named `pvc-<claim uid>` as external-provisioner names it
//!   (`pvc-<namespace>-<name>` for a claim without a uid), of the claim's
//!   size, class and access modes, for the class's provisioner as CSI
//!   driver, reachable from the nodes that share the selected node's
//!   values of the topology keys its CSINode lists for that driver; then
//!   bound as above. A class without a provisioner
//!   (`kubernetes.io/no-provisioner`) leaves the claim pending, as a
//!   cluster does.
//!
//! Not modelled: CSIStorageCapacity, which drivers refresh on their own
//! schedule (upstream's scheduler does not decrement it either).
//! DynamicResources' writes (a claim's allocation and reservation) need
//! no controller.

use crate::cluster::ClusterState;
use crate::cluster::api_objects::ApiObjects;
use crate::input::ApiObject;
use anyhow::Result;
use serde_json::{Map, Value, json};
use sift_sdk::Labels;

const BIND_COMPLETED: &str = "pv.kubernetes.io/bind-completed";
const BOUND_BY_CONTROLLER: &str = "pv.kubernetes.io/bound-by-controller";
const SELECTED_NODE: &str = "volume.kubernetes.io/selected-node";
const PROVISIONED_BY: &str = "pv.kubernetes.io/provisioned-by";
const NO_PROVISIONER: &str = "kubernetes.io/no-provisioner";
const BETA_STORAGE_CLASS: &str = "volume.beta.kubernetes.io/storage-class";

/// Applies `writes` to `cluster`, then settles the volumes they concern.
/// `node_labels` are the labels of the node the pod was bound to.
pub fn apply(cluster: &mut ClusterState, writes: &[ApiObject], node_labels: &Labels) -> Result<()> {
    cluster.edit_api_objects(|objects| {
        for w in writes {
            objects.upsert(w);
        }
        for w in writes {
            match w.kind {
                "PersistentVolume" => {
                    if let Some((pv, pvc)) = claimed(objects, &w.value) {
                        bind(objects, pv, pvc)?;
                    }
                }
                "PersistentVolumeClaim" => provision(objects, &w.key, node_labels)?,
                _ => {}
            }
        }
        Ok(())
    })
}

fn text<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    path.iter()
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn namespace_of(v: &Value) -> &str {
    match text(v, &["metadata", "namespace"]) {
        "" => "default",
        ns => ns,
    }
}

/// The volume and the claim its `claimRef` names, when that claim exists,
/// is not bound to another volume and (if the reference has a uid) is the
/// same object.
fn claimed(objects: &ApiObjects, pv: &Value) -> Option<(Value, Value)> {
    let r = pv.get("spec")?.get("claimRef")?;
    let ns = match text(r, &["namespace"]) {
        "" => "default",
        ns => ns,
    };
    let key = format!("{ns}/{}", text(r, &["name"]));
    let pvc = objects.get("PersistentVolumeClaim", &key)?;
    let uid = text(r, &["uid"]);
    let volume = text(pvc, &["spec", "volumeName"]);
    let pv_name = text(pv, &["metadata", "name"]);
    if (!uid.is_empty() && uid != text(pvc, &["metadata", "uid"]))
        || (!volume.is_empty() && volume != pv_name)
    {
        return None;
    }
    Some((pv.clone(), pvc.clone()))
}

/// The volume controller's binding of `pvc` to `pv`.
fn bind(objects: &mut ApiObjects, mut pv: Value, mut pvc: Value) -> Result<()> {
    let pv_name = text(&pv, &["metadata", "name"]).to_string();
    let claim_uid = text(&pvc, &["metadata", "uid"]).to_string();
    if let Some(r) = field(&mut pv, &["spec", "claimRef"])
        && !claim_uid.is_empty()
    {
        r.insert("uid".into(), Value::String(claim_uid));
    }
    annotate(&mut pv, BOUND_BY_CONTROLLER, "yes");
    if let Some(status) = field(&mut pv, &["status"]) {
        status.insert("phase".into(), json!("Bound"));
    }
    let access = pv.pointer("/spec/accessModes").cloned();
    let capacity = pv.pointer("/spec/capacity").cloned();
    if let Some(spec) = field(&mut pvc, &["spec"]) {
        spec.insert("volumeName".into(), Value::String(pv_name));
    }
    annotate(&mut pvc, BIND_COMPLETED, "yes");
    annotate(&mut pvc, BOUND_BY_CONTROLLER, "yes");
    if let Some(status) = field(&mut pvc, &["status"]) {
        status.insert("phase".into(), json!("Bound"));
        if let Some(a) = access {
            status.insert("accessModes".into(), a);
        }
        if let Some(c) = capacity {
            status.insert("capacity".into(), c);
        }
    }
    upsert(objects, "PersistentVolume", pv)?;
    upsert(objects, "PersistentVolumeClaim", pvc)
}

/// A provisioner's answer to a claim with a selected node.
fn provision(objects: &mut ApiObjects, key: &str, node_labels: &Labels) -> Result<()> {
    let Some(pvc) = objects.get("PersistentVolumeClaim", key).cloned() else {
        return Ok(());
    };
    let node = text(&pvc, &["metadata", "annotations", SELECTED_NODE]);
    if node.is_empty() || !text(&pvc, &["spec", "volumeName"]).is_empty() {
        return Ok(());
    }
    let class = match text(&pvc, &["metadata", "annotations", BETA_STORAGE_CLASS]) {
        "" => text(&pvc, &["spec", "storageClassName"]),
        c => c,
    };
    let Some(sc) = objects.get("StorageClass", class) else {
        return Ok(());
    };
    let driver = text(sc, &["provisioner"]);
    if driver.is_empty() || driver == NO_PROVISIONER {
        return Ok(());
    }
    let uid = text(&pvc, &["metadata", "uid"]);
    let name = if uid.is_empty() {
        format!(
            "pvc-{}-{}",
            namespace_of(&pvc),
            text(&pvc, &["metadata", "name"])
        )
    } else {
        format!("pvc-{uid}")
    };
    // The driver's topology segment on the node: its CSINode's keys, the
    // node's values.
    let keys: Vec<&str> = objects
        .get("CSINode", node)
        .and_then(|n| n.pointer("/spec/drivers"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|d| text(d, &["name"]) == driver)
        .flat_map(|d| {
            d.get("topologyKeys")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        })
        .filter_map(Value::as_str)
        .collect();
    let expressions: Vec<Value> = keys
        .iter()
        .filter_map(|k| {
            let v = node_labels.get(k)?;
            Some(json!({"key": k, "operator": "In", "values": [v]}))
        })
        .collect();
    let mut spec = json!({
        "capacity": {"storage": pvc.pointer("/spec/resources/requests/storage").cloned().unwrap_or(json!("0"))},
        "accessModes": pvc.pointer("/spec/accessModes").cloned().unwrap_or(json!([])),
        "storageClassName": class,
        "persistentVolumeReclaimPolicy": match text(sc, &["reclaimPolicy"]) { "" => "Delete", p => p },
        "volumeMode": match text(&pvc, &["spec", "volumeMode"]) { "" => "Filesystem", m => m },
        "csi": {"driver": driver, "volumeHandle": name},
        "claimRef": {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "namespace": namespace_of(&pvc),
            "name": text(&pvc, &["metadata", "name"]),
            "uid": uid,
        },
    });
    if !expressions.is_empty() {
        spec["nodeAffinity"] =
            json!({"required": {"nodeSelectorTerms": [{"matchExpressions": expressions}]}});
    }
    let pv = json!({
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "annotations": {PROVISIONED_BY: driver}},
        "spec": spec,
    });
    bind(objects, pv, pvc)
}

fn upsert(objects: &mut ApiObjects, kind: &str, value: Value) -> Result<()> {
    let object = ApiObject::from_value(kind, value)
        .ok_or_else(|| anyhow::anyhow!("{kind} is not an object kind plugins read"))??;
    objects.upsert(&object);
    Ok(())
}

/// The object at `path`, made (with its parents) if missing.
fn field<'a>(v: &'a mut Value, path: &[&str]) -> Option<&'a mut Map<String, Value>> {
    let mut cur = v;
    for k in path {
        let map = cur.as_object_mut()?;
        let next = map.entry(*k).or_insert_with(|| json!({}));
        if !next.is_object() {
            *next = json!({});
        }
        cur = next;
    }
    cur.as_object_mut()
}

fn annotate(v: &mut Value, key: &str, value: &str) {
    if let Some(a) = field(v, &["metadata", "annotations"]) {
        a.insert(key.into(), Value::String(value.into()));
    }
}
