//! Which pods with claims the live scheduler can bind today.
//!
//! VolumeBinding filters every pod with claims, but sift does not write its
//! PreBind yet (the `selected-node` annotation on a claim to provision, the
//! `claimRef` on a volume to bind). A pod whose claims are all bound needs
//! neither (upstream's PreBind does nothing for it): the common case of a
//! StatefulSet's pod recreated beside its volume. A missing claim, or an
//! unbound one of an Immediate class, is VolumeBinding's to reject with
//! upstream's reasons. What remains, an unbound claim of a
//! `WaitForFirstConsumer` class, would be left unprovisioned by a bind
//! without the writes, stranding the pod: such pods are refused.

use crate::cluster::api_objects::ApiObjects;
use k8s_openapi::api::core::v1 as k8s;
use serde_json::Value;

/// The annotation the volume controller sets on a claim it has bound.
const BIND_COMPLETED: &str = "pv.kubernetes.io/bind-completed";
/// The claim's class by the beta annotation first, as upstream reads it.
const BETA_STORAGE_CLASS: &str = "volume.beta.kubernetes.io/storage-class";

/// Why sift cannot bind this pod yet, as the `0/N nodes are available`
/// message its condition carries; `None` when it can.
pub fn awaiting_volume_binding(
    pod: &k8s::Pod,
    objects: &ApiObjects,
    nodes: usize,
) -> Option<String> {
    let namespace = pod.metadata.namespace.as_deref().unwrap_or("default");
    let pod_name = pod.metadata.name.as_deref().unwrap_or_default();
    let claims: Vec<String> = pod
        .spec
        .as_ref()?
        .volumes
        .as_ref()?
        .iter()
        .filter_map(|v| match (&v.persistent_volume_claim, &v.ephemeral) {
            (Some(c), _) => Some(c.claim_name.clone()),
            (None, Some(_)) => Some(format!("{pod_name}-{}", v.name)),
            _ => None,
        })
        .filter(|claim| {
            objects
                .get("PersistentVolumeClaim", &format!("{namespace}/{claim}"))
                .is_some_and(|c| waits_for_first_consumer(c, objects))
        })
        .collect();
    if claims.is_empty() {
        return None;
    }
    Some(format!(
        "0/{nodes} nodes are available: {nodes} pod has unbound PersistentVolumeClaims of a \
         WaitForFirstConsumer class, which sift's live scheduler cannot bind yet (it does \
         not write VolumeBinding's PreBind objects): {}. preemption: 0/{nodes} nodes are available: {nodes} \
         Preemption is not helpful for scheduling.",
        claims.join(", ")
    ))
}

/// An unbound claim (no volume named) of a `WaitForFirstConsumer` class.
fn waits_for_first_consumer(claim: &Value, objects: &ApiObjects) -> bool {
    let volume = claim["spec"]["volumeName"].as_str().unwrap_or_default();
    let bound = claim["metadata"]["annotations"]
        .get(BIND_COMPLETED)
        .is_some();
    if !volume.is_empty() || bound {
        return false;
    }
    let class = claim["metadata"]["annotations"][BETA_STORAGE_CLASS]
        .as_str()
        .or_else(|| claim["spec"]["storageClassName"].as_str())
        .unwrap_or_default();
    objects
        .get("StorageClass", class)
        .is_some_and(|c| c["volumeBindingMode"] == "WaitForFirstConsumer")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::ApiObject;
    use serde_json::json;

    fn objects(items: Vec<Value>) -> ApiObjects {
        let mut os = ApiObjects::default();
        for v in items {
            let kind = match v["kind"].as_str() {
                Some("StorageClass") => "StorageClass",
                _ => "PersistentVolumeClaim",
            };
            os.upsert(&ApiObject::new(kind, v).unwrap());
        }
        os
    }

    fn pod(volumes: Value) -> k8s::Pod {
        serde_json::from_value(json!({"metadata": {"name": "db-0", "namespace": "shop"},
            "spec": {"containers": [], "volumes": volumes}}))
        .unwrap()
    }

    #[test]
    fn only_unbound_claims_of_a_wait_class_hold_a_pod_back() {
        let os = objects(vec![
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                   "metadata": {"name": "wait"}, "provisioner": "x",
                   "volumeBindingMode": "WaitForFirstConsumer"}),
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                   "metadata": {"name": "now"}, "provisioner": "x"}),
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                   "metadata": {"name": "bound", "namespace": "shop",
                                "annotations": {BIND_COMPLETED: "yes"}},
                   "spec": {"volumeName": "pv-1", "storageClassName": "wait"}}),
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                   "metadata": {"name": "later", "namespace": "shop"},
                   "spec": {"storageClassName": "wait"}}),
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                   "metadata": {"name": "db-0-scratch", "namespace": "shop",
                                "annotations": {BETA_STORAGE_CLASS: "wait"}},
                   "spec": {"storageClassName": "now"}}),
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                   "metadata": {"name": "immediate", "namespace": "shop"},
                   "spec": {"storageClassName": "now"}}),
        ]);
        let claim =
            |name: &str| json!({"name": name, "persistentVolumeClaim": {"claimName": name}});
        // Bound, Immediate or missing: VolumeBinding decides.
        for v in [claim("bound"), claim("immediate"), claim("missing")] {
            assert_eq!(awaiting_volume_binding(&pod(json!([v])), &os, 3), None);
        }
        let held =
            awaiting_volume_binding(&pod(json!([claim("bound"), claim("later")])), &os, 3).unwrap();
        assert!(
            held.starts_with("0/3 nodes are available: 3 pod has unbound"),
            "{held}"
        );
        assert!(held.contains("PreBind objects): later."), "{held}");
        // An ephemeral volume's claim, of the class its beta annotation names.
        let eph = json!({"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}});
        let held = awaiting_volume_binding(&pod(json!([eph])), &os, 1).unwrap();
        assert!(held.contains("): db-0-scratch."), "{held}");
    }
}
