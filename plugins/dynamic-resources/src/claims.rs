//! PreFilter's claim lookup: the pod's `spec.resourceClaims` resolved to
//! ResourceClaim objects (upstream's PreEnqueue check, which PreFilter
//! repeats), with upstream's messages.

use crate::json::{at, is_set, list, text};
use serde_json::Value;
use sift_sdk::{ClusterView, Status};

/// A claim of the pod, found in the cluster.
pub struct PodClaim<'a> {
    pub namespace: String,
    pub name: String,
    pub value: &'a Value,
}

impl PodClaim<'_> {
    /// `<namespace>/<name>`, as upstream names claims in messages.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// The pod's claims in `spec.resourceClaims` order; the first failure
/// rejects the pod (`UnschedulableAndUnresolvable`).
pub fn lookup<'a>(
    pod: &Value,
    namespace: &str,
    pod_name: &str,
    pod_uid: &str,
    cluster: &'a dyn ClusterView,
) -> Result<Vec<PodClaim<'a>>, Status> {
    let mut out = Vec::new();
    for entry in list(pod, &["spec", "resourceClaims"]) {
        let entry_name = text(entry, &["name"]);
        let by_name = text(entry, &["resourceClaimName"]);
        let template = text(entry, &["resourceClaimTemplateName"]);
        let (name, owned) = if !by_name.is_empty() {
            (by_name.to_string(), false)
        } else if !template.is_empty() {
            let status = list(pod, &["status", "resourceClaimStatuses"])
                .iter()
                .find(|s| text(s, &["name"]) == entry_name);
            let Some(status) = status else {
                return Err(Status::unresolvable(format!(
                    "pod \"{namespace}/{pod_name}\": ResourceClaim not created yet"
                )));
            };
            match at(status, &["resourceClaimName"]).and_then(Value::as_str) {
                // Deliberately not created by the controller.
                None => continue,
                Some(n) => (n.to_string(), true),
            }
        } else {
            return Err(Status::unresolvable(format!(
                "pod \"{namespace}/{pod_name}\", spec.resourceClaim \"{entry_name}\": none of the supported fields are set"
            )));
        };
        let key = format!("{namespace}/{name}");
        let Some(claim) = cluster.object("ResourceClaim", &key) else {
            return Err(Status::unresolvable(format!(
                "could not find ResourceClaim \"{key}\""
            )));
        };
        if is_set(claim, &["metadata", "deletionTimestamp"]) {
            return Err(Status::unresolvable(format!(
                "resourceclaim \"{name}\" is being deleted"
            )));
        }
        if owned {
            let claim_ns = match text(claim, &["metadata", "namespace"]) {
                "" => namespace,
                ns => ns,
            };
            if claim_ns != namespace {
                return Err(Status::unresolvable(format!(
                    "ResourceClaim {claim_ns}/{name} is not in the same namespace as Pod {namespace}/{pod_name}"
                )));
            }
            if !controlled_by(claim, pod_uid) {
                return Err(Status::unresolvable(format!(
                    "ResourceClaim {namespace}/{name} was not created for Pod {namespace}/{pod_name} (Pod is not owner)"
                )));
            }
        }
        out.push(PodClaim {
            namespace: namespace.to_string(),
            name,
            value: claim,
        });
    }
    Ok(out)
}

/// Whether the object's controller owner reference has this UID.
fn controlled_by(object: &Value, uid: &str) -> bool {
    list(object, &["metadata", "ownerReferences"])
        .iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
        .is_some_and(|r| text(r, &["uid"]) == uid)
}
