//! What upstream's Reserve (`AssumePodVolumes`) decides and its PreBind
//! (`BindPodVolumes`) writes, for the pod's unbound `WaitForFirstConsumer`
//! claims on the chosen node: a static volume found for a claim gets the
//! claim in its `claimRef` (and `pv.kubernetes.io/bound-by-controller`);
//! a claim to provision gets the node in
//! `volume.kubernetes.io/selected-node`. The volume controller and the
//! provisioner do the rest (a simulation models them; a live cluster
//! runs them). Bound claims need no write.

use crate::State;
use crate::json::text;
use crate::matching::Found;
use serde_json::{Value, json};
use sift_sdk::{ClusterView, Node, ObjectWrite};

/// `volume.AnnBoundByController`.
const BOUND_BY_CONTROLLER: &str = "pv.kubernetes.io/bound-by-controller";
/// `volume.AnnSelectedNode`.
pub const SELECTED_NODE: &str = "volume.kubernetes.io/selected-node";

/// The writes for `state`'s unbound claims on `node`, matched as Filter
/// matched them; an error when they no longer fit there.
pub fn writes(
    state: &State,
    node: &Node,
    cluster: &dyn ClusterView,
) -> Result<Vec<ObjectWrite>, String> {
    let mut out = Vec::new();
    let mut taken: Vec<&str> = Vec::new();
    for &i in &state.match_order {
        let claim = &state.unbound[i];
        match claim.find(&node.labels, &taken) {
            Found::Volume(name) => {
                taken.push(name);
                let pv = cluster
                    .object("PersistentVolume", name)
                    .ok_or_else(|| format!("persistentvolume \"{name}\" is gone"))?;
                let pvc = claim_object(cluster, &claim.key)?;
                out.push(bind_volume(pv, pvc));
            }
            Found::Nothing => out.push(select_node(claim_object(cluster, &claim.key)?, node)),
            Found::Error(e) => return Err(e.to_string()),
        }
    }
    // Claims whose provisioning already started for this node keep it.
    Ok(out)
}

fn claim_object<'a>(cluster: &'a dyn ClusterView, key: &str) -> Result<&'a Value, String> {
    cluster
        .object("PersistentVolumeClaim", key)
        .ok_or_else(|| format!("persistentvolumeclaim \"{key}\" is gone"))
}

/// The volume with the claim in its `claimRef`.
fn bind_volume(pv: &Value, pvc: &Value) -> ObjectWrite {
    let mut pv = pv.clone();
    let meta = |f: &str| text(pvc, &["metadata", f]);
    let claim_ref = json!({
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "namespace": if meta("namespace").is_empty() { "default" } else { meta("namespace") },
        "name": meta("name"),
        "uid": meta("uid"),
        "resourceVersion": meta("resourceVersion"),
    });
    if let Some(spec) = object_at(&mut pv, "spec") {
        spec.insert("claimRef".into(), claim_ref);
    }
    annotate(&mut pv, BOUND_BY_CONTROLLER, "yes");
    ObjectWrite {
        kind: "PersistentVolume".into(),
        object: pv,
    }
}

/// The claim with the node its volume is to be provisioned for.
fn select_node(pvc: &Value, node: &Node) -> ObjectWrite {
    let mut pvc = pvc.clone();
    annotate(&mut pvc, SELECTED_NODE, &node.name);
    ObjectWrite {
        kind: "PersistentVolumeClaim".into(),
        object: pvc,
    }
}

fn annotate(object: &mut Value, key: &str, value: &str) {
    let Some(meta) = object_at(object, "metadata") else {
        return;
    };
    let annotations = meta
        .entry("annotations")
        .or_insert_with(|| Value::Object(Default::default()));
    if !annotations.is_object() {
        *annotations = Value::Object(Default::default());
    }
    if let Some(a) = annotations.as_object_mut() {
        a.insert(key.into(), Value::String(value.into()));
    }
}

/// The object at `field` of `v`, made an object if missing.
fn object_at<'a>(v: &'a mut Value, field: &str) -> Option<&'a mut serde_json::Map<String, Value>> {
    let map = v.as_object_mut()?;
    let entry = map
        .entry(field)
        .or_insert_with(|| Value::Object(Default::default()));
    if !entry.is_object() {
        *entry = Value::Object(Default::default());
    }
    entry.as_object_mut()
}
