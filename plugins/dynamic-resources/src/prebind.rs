//! What upstream's Reserve decides and its PreBind writes (`bindClaim`):
//! each claim of the pod gets the pod in `status.reservedFor` and, if it
//! was not allocated yet, the allocation chosen on the node in
//! `status.allocation`. Each `shareID` is made unique to its claim, pod
//! and result (upstream draws a random UID; sift derives one, so runs
//! repeat).

use crate::State;
use crate::claims;
use serde_json::{Value, json};
use sift_sdk::{ClusterView, Node, ObjectWrite, Pod};

/// The claims as they must be once the pod is bound to `node`.
pub fn writes(
    state: &State,
    pod: &Pod,
    object: &Value,
    node: &Node,
    cluster: &dyn ClusterView,
) -> Result<Vec<ObjectWrite>, String> {
    let namespace = if pod.namespace.is_empty() {
        "default"
    } else {
        &pod.namespace
    };
    let allocations = state
        .allocations(node)
        .map_err(|e| format!("{e:?}"))?
        .ok_or_else(|| format!("the pod's claims no longer fit on node {}", node.name))?;
    let found =
        claims::lookup(object, namespace, &pod.name, &pod.uid, cluster).map_err(|s| s.message())?;
    let mut out = Vec::new();
    for c in found {
        let key = c.key();
        let mut claim = c.value.clone();
        let allocation = allocations.iter().find(|(k, _)| *k == key);
        if allocation.is_some() {
            protect(&mut claim);
        }
        let Some(status) = status_of(&mut claim) else {
            continue;
        };
        if let Some((_, allocation)) = allocation {
            let mut allocation = allocation.clone();
            unique_share_ids(&mut allocation, &pod.uid, &key);
            status.insert("allocation".into(), allocation);
        }
        let consumer = json!({"resource": "pods", "name": pod.name, "uid": pod.uid});
        let reserved = status
            .entry("reservedFor")
            .or_insert_with(|| Value::Array(Vec::new()));
        if !reserved.is_array() {
            *reserved = Value::Array(Vec::new());
        }
        if let Some(list) = reserved.as_array_mut() {
            let present = list.iter().any(|r| {
                r.get("resource").and_then(Value::as_str) == Some("pods")
                    && r.get("uid").and_then(Value::as_str) == Some(pod.uid.as_str())
                    && r.get("name").and_then(Value::as_str) == Some(pod.name.as_str())
            });
            if present {
                continue;
            }
            list.push(consumer);
        }
        out.push(ObjectWrite {
            kind: "ResourceClaim".into(),
            object: claim,
        });
    }
    Ok(out)
}

/// Adds the finalizer upstream's PreBind puts on a claim it allocates,
/// so that the claim is not deleted while its devices are in use.
fn protect(claim: &mut Value) {
    const FINALIZER: &str = "resource.kubernetes.io/delete-protection";
    let Some(meta) = claim.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let list = meta
        .entry("finalizers")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Some(list) = list.as_array_mut()
        && !list.iter().any(|f| f == FINALIZER)
    {
        list.push(json!(FINALIZER));
    }
}

/// `status` of the claim, made an object if missing.
fn status_of(claim: &mut Value) -> Option<&mut serde_json::Map<String, Value>> {
    let map = claim.as_object_mut()?;
    let status = map.entry("status").or_insert_with(|| json!({}));
    if !status.is_object() {
        *status = json!({});
    }
    status.as_object_mut()
}

/// Replaces the allocator's per-attempt `shareID`s with UIDs derived from
/// the pod, the claim and the result's index.
fn unique_share_ids(allocation: &mut Value, pod_uid: &str, claim: &str) {
    let Some(results) = allocation
        .pointer_mut("/devices/results")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for (i, r) in results.iter_mut().enumerate() {
        if r.get("shareID").is_some_and(|s| !s.is_null()) {
            let a = fnv(&format!("{pod_uid}/{claim}/{i}"));
            let b = fnv(&format!("{i}/{claim}/{pod_uid}"));
            r["shareID"] = json!(format!(
                "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
                a >> 32,
                (a >> 16) & 0xffff,
                a & 0xfff,
                b >> 52,
                b & 0xffff_ffff_ffff
            ));
        }
    }
}

/// 64-bit FNV-1a: a stable hash (std's is seeded per process).
fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
