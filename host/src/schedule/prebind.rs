//! kube-scheduler's PreBind against the API server: the objects the
//! plugins' reserve steps chose (contract 0.7) are written, then, when a
//! claim's volume is to be bound or provisioned, the pod waits until the
//! volume controller has bound it, as VolumeBinding's `BindPodVolumes`
//! does; only then is the pod bound.
//!
//! - Each object is replaced (`PUT`) conditioned on the resourceVersion it
//!   was read at: a write racing another fails with 409 and the pod is
//!   retried with the object as it is now (upstream's DynamicResources
//!   re-reads and retries in place; the outcome is the same pod on a
//!   fresh cycle). A kind with a `/status` subresource gets its object
//!   written when metadata or spec changed (DynamicResources' finalizer)
//!   and its status through `/status` when status changed (the claim's
//!   allocation and reservation).
//! - The wait polls the API server every second (upstream polls its
//!   informer caches) for up to VolumeBinding's `bindTimeoutSeconds`
//!   (default 600), with `checkBindings`' verdicts and messages.
//!
//! Errors read as upstream's PreBind status: `running PreBind plugin
//! "VolumeBinding": binding volumes: provisioning failed for PVC "data"`.

use super::api_error::error_text;
use crate::engine::schedule::PreBindWrite;
use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::api::resource::v1 as resource;
use k8s_openapi::api::storage::v1 as storage;
use kube::api::{ApiResource, DynamicObject, PostParams};
use serde_json::Value;
use std::time::{Duration, Instant};

const BIND_COMPLETED: &str = "pv.kubernetes.io/bind-completed";
const SELECTED_NODE: &str = "volume.kubernetes.io/selected-node";

/// VolumeBinding's default `bindTimeoutSeconds`.
pub const BIND_TIMEOUT: Duration = Duration::from_secs(600);

/// How long a pod waits for its volumes: VolumeBinding's
/// `bindTimeoutSeconds` from the profile's `pluginConfig` (its JSON
/// arguments), else the default.
pub fn bind_timeout(volume_binding_args: &str) -> Duration {
    serde_json::from_str::<Value>(volume_binding_args)
        .ok()
        .and_then(|a| a.get("bindTimeoutSeconds")?.as_u64())
        .map_or(BIND_TIMEOUT, Duration::from_secs)
}

/// What a pod's PreBind does: its writes, and how long it waits for the
/// volume controller.
#[derive(Clone, Debug)]
pub struct PreBind {
    pub writes: Vec<Planned>,
    pub timeout: Duration,
}

impl PreBind {
    /// Nothing to write: the pod is bound at once.
    pub fn none() -> PreBind {
        PreBind {
            writes: Vec::new(),
            timeout: BIND_TIMEOUT,
        }
    }
}
/// How often the volumes' binding is checked.
const POLL: Duration = Duration::from_secs(1);

/// One object to write: the plugin that chose it, the object as it must
/// be, and which parts change against the version it was read at.
#[derive(Clone, Debug)]
pub struct Planned {
    pub plugin: String,
    pub kind: &'static str,
    pub object: Value,
    pub put_object: bool,
    pub put_status: bool,
}

/// Whether the API serves `kind`'s status through a subresource (then a
/// `PUT` of the object leaves the status as it was).
fn has_status(kind: &str) -> bool {
    matches!(
        kind,
        "PersistentVolumeClaim" | "PersistentVolume" | "VolumeAttachment" | "ResourceClaim"
    )
}

/// What writing `write` takes, given the object as the cache had it.
pub fn plan(write: &PreBindWrite, before: Option<&Value>) -> Planned {
    let object = (*write.object.value).clone();
    let kind = write.object.kind;
    let (put_object, put_status) = match before {
        Some(b) if has_status(kind) => {
            let without = |v: &Value| {
                let mut v = v.clone();
                if let Some(m) = v.as_object_mut() {
                    m.remove("status");
                }
                v
            };
            (
                without(b) != without(&object),
                b.get("status") != object.get("status"),
            )
        }
        Some(b) => (*b != object, false),
        None => (true, false),
    };
    Planned {
        plugin: write.plugin.clone(),
        kind,
        object,
        put_object,
        put_status,
    }
}

/// The REST resource of a kind plugins may write, and whether it is
/// namespaced (its k8s-openapi scope, so no second table says it).
fn api_resource(kind: &str) -> Option<(ApiResource, bool)> {
    fn of<K>() -> (ApiResource, bool)
    where
        K: kube::Resource<DynamicType = ()>,
        K::Scope: 'static,
    {
        let namespaced = std::any::TypeId::of::<K::Scope>()
            == std::any::TypeId::of::<k8s_openapi::NamespaceResourceScope>();
        (ApiResource::erase::<K>(&()), namespaced)
    }
    Some(match kind {
        "PersistentVolumeClaim" => of::<k8s::PersistentVolumeClaim>(),
        "PersistentVolume" => of::<k8s::PersistentVolume>(),
        "StorageClass" => of::<storage::StorageClass>(),
        "CSINode" => of::<storage::CSINode>(),
        "CSIDriver" => of::<storage::CSIDriver>(),
        "CSIStorageCapacity" => of::<storage::CSIStorageCapacity>(),
        "VolumeAttachment" => of::<storage::VolumeAttachment>(),
        "ResourceSlice" => of::<resource::ResourceSlice>(),
        "DeviceClass" => of::<resource::DeviceClass>(),
        "ResourceClaim" => of::<resource::ResourceClaim>(),
        "ResourceClaimTemplate" => of::<resource::ResourceClaimTemplate>(),
        _ => return None,
    })
}

fn text<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    path.iter()
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Writes one object; its version as the API server returned it.
async fn put(client: &kube::Client, w: &Planned) -> Result<Value, String> {
    let (ar, namespaced) =
        api_resource(w.kind).ok_or_else(|| format!("sift cannot write a {}", w.kind))?;
    let name = text(&w.object, &["metadata", "name"]).to_string();
    let api: kube::Api<DynamicObject> = match text(&w.object, &["metadata", "namespace"]) {
        _ if !namespaced => kube::Api::all_with(client.clone(), &ar),
        "" => kube::Api::namespaced_with(client.clone(), "default", &ar),
        ns => kube::Api::namespaced_with(client.clone(), ns, &ar),
    };
    let mut object = w.object.clone();
    let fail = |e: kube::Error| {
        format!(
            "running PreBind plugin {:?}: updating {} {name}: {}",
            w.plugin,
            w.kind,
            error_text(&e)
        )
    };
    let typed = |v: &Value| {
        serde_json::from_value::<DynamicObject>(v.clone()).map_err(|e| {
            format!(
                "running PreBind plugin {:?}: {} {name}: {e}",
                w.plugin, w.kind
            )
        })
    };
    let pp = PostParams::default();
    if w.put_object {
        let written = api
            .replace(&name, &pp, &typed(&object)?)
            .await
            .map_err(fail)?;
        if let Some(rv) = written.metadata.resource_version {
            object["metadata"]["resourceVersion"] = Value::String(rv);
        }
    }
    if w.put_status {
        let written = api
            .replace_status(&name, &pp, &typed(&object)?)
            .await
            .map_err(fail)?;
        if let Some(rv) = written.metadata.resource_version {
            object["metadata"]["resourceVersion"] = Value::String(rv);
        }
    }
    Ok(object)
}

/// A claim whose binding the pod waits for: a volume VolumeBinding bound
/// to it, or a claim it asked to provision.
#[derive(Clone, Debug)]
enum Awaited {
    Volume {
        name: String,
        claim: (String, String),
    },
    Provisioned {
        written: Value,
    },
}

/// What the volume controller still has to do, or why it failed
/// (`checkBindings`).
async fn check(client: &kube::Client, node: &str, awaited: &[Awaited]) -> Result<bool, String> {
    let pvs: kube::Api<k8s::PersistentVolume> = kube::Api::all(client.clone());
    let claims = |ns: &str| -> kube::Api<k8s::PersistentVolumeClaim> {
        kube::Api::namespaced(client.clone(), ns)
    };
    let fully_bound = |c: &k8s::PersistentVolumeClaim| {
        c.spec
            .as_ref()
            .and_then(|s| s.volume_name.as_deref())
            .is_some_and(|v| !v.is_empty())
            && c.metadata
                .annotations
                .as_ref()
                .is_some_and(|a| a.contains_key(BIND_COMPLETED))
    };
    for a in awaited {
        match a {
            Awaited::Volume { name, claim } => {
                let pv = pvs
                    .get_opt(name)
                    .await
                    .map_err(|e| format!("failed to get pv {name:?}: {}", error_text(&e)))?
                    .ok_or_else(|| format!("failed to get pv {name:?}: not found"))?;
                let reference = pv.spec.as_ref().and_then(|s| s.claim_ref.as_ref());
                if reference.is_none_or(|r| r.uid.as_deref().unwrap_or_default().is_empty()) {
                    return Err(format!("ClaimRef got reset for pv {name:?}"));
                }
                let pvc = claims(&claim.0)
                    .get_opt(&claim.1)
                    .await
                    .map_err(|e| format!("failed to check pvc: {}", error_text(&e)))?;
                if !pvc.as_ref().is_some_and(fully_bound) {
                    return Ok(false);
                }
            }
            Awaited::Provisioned { written } => {
                let (ns, name) = (
                    text(written, &["metadata", "namespace"]),
                    text(written, &["metadata", "name"]),
                );
                let pvc = claims(if ns.is_empty() { "default" } else { ns })
                    .get_opt(name)
                    .await
                    .map_err(|e| format!("failed to check provisioning pvc: {}", error_text(&e)))?
                    .ok_or_else(|| {
                        format!(
                            "failed to check provisioning pvc: persistentvolumeclaim {name:?} not found"
                        )
                    })?;
                let theirs = pvc.metadata.resource_version.as_deref().unwrap_or_default();
                let mine = text(written, &["metadata", "resourceVersion"]);
                if let (Ok(t), Ok(m)) = (theirs.parse::<u64>(), mine.parse::<u64>())
                    && m > t
                {
                    return Ok(false);
                }
                let Some(annotations) = pvc.metadata.annotations.as_ref() else {
                    return Err(format!("selectedNode annotation reset for PVC {name:?}"));
                };
                if annotations.get(SELECTED_NODE).map(String::as_str) != Some(node) {
                    return Err(format!("provisioning failed for PVC {name:?}"));
                }
                if !fully_bound(&pvc) {
                    return Ok(false);
                }
            }
        }
    }
    Ok(true)
}

/// Runs the PreBind of a pod assumed on `node`: every write in order,
/// then the wait for its volumes.
pub async fn run(client: &kube::Client, node: &str, prebind: &PreBind) -> Result<(), String> {
    let mut awaited = Vec::new();
    let mut volume_plugin = None;
    for w in &prebind.writes {
        let written = put(client, w).await?;
        let awaits = match w.kind {
            "PersistentVolume" => {
                let r = &written["spec"]["claimRef"];
                let ns = match text(r, &["namespace"]) {
                    "" => "default",
                    ns => ns,
                };
                Some(Awaited::Volume {
                    name: text(&written, &["metadata", "name"]).to_string(),
                    claim: (ns.to_string(), text(r, &["name"]).to_string()),
                })
            }
            "PersistentVolumeClaim" => Some(Awaited::Provisioned { written }),
            _ => None,
        };
        if let Some(a) = awaits {
            awaited.push(a);
            volume_plugin.get_or_insert_with(|| w.plugin.clone());
        }
    }
    let Some(plugin) = volume_plugin else {
        return Ok(());
    };
    let deadline = Instant::now() + prebind.timeout;
    loop {
        match check(client, node, &awaited).await {
            Ok(true) => return Ok(()),
            Ok(false) if Instant::now() < deadline => tokio::time::sleep(POLL).await,
            Ok(false) => {
                return Err(format!(
                    "running PreBind plugin {plugin:?}: binding volumes: context deadline exceeded"
                ));
            }
            Err(why) => {
                return Err(format!(
                    "running PreBind plugin {plugin:?}: binding volumes: {why}"
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::ApiObject;
    use serde_json::json;

    fn write(kind: &'static str, v: Value) -> PreBindWrite {
        PreBindWrite {
            plugin: "P".into(),
            object: ApiObject::new(kind, v).unwrap(),
        }
    }

    #[test]
    fn only_the_parts_that_change_are_written() {
        let claim = json!({"metadata": {"name": "gpu", "namespace": "a", "resourceVersion": "7"},
            "spec": {"devices": {}}});
        let mut allocated = claim.clone();
        allocated["status"] = json!({"allocation": {}});
        let p = plan(&write("ResourceClaim", allocated.clone()), Some(&claim));
        assert!(!p.put_object && p.put_status);
        allocated["metadata"]["finalizers"] = json!(["resource.kubernetes.io/delete-protection"]);
        let p = plan(&write("ResourceClaim", allocated), Some(&claim));
        assert!(p.put_object && p.put_status);
        let pvc = json!({"metadata": {"name": "data", "namespace": "a"}, "spec": {},
            "status": {"phase": "Pending"}});
        let mut selected = pvc.clone();
        selected["metadata"]["annotations"] = json!({SELECTED_NODE: "n1"});
        let p = plan(&write("PersistentVolumeClaim", selected), Some(&pvc));
        assert!(p.put_object && !p.put_status);
        // A class has no status subresource: the whole object.
        let class = json!({"metadata": {"name": "c"}, "provisioner": "x"});
        let p = plan(&write("StorageClass", class.clone()), Some(&class));
        assert!(!p.put_object && !p.put_status);
        let p = plan(&write("StorageClass", class), None);
        assert!(p.put_object);
        assert!(api_resource("ResourceClaim").is_some_and(|(r, _)| r.plural == "resourceclaims"));
        assert!(api_resource("Pod").is_none());
        // Every kind a plugin reads can be written, namespaced as the
        // input's table says.
        for &(kind, namespaced) in crate::input::API_OBJECT_KINDS {
            assert_eq!(
                api_resource(kind).map(|(_, n)| n),
                Some(namespaced),
                "{kind}"
            );
        }
    }

    #[test]
    fn the_wait_is_volume_bindings_bind_timeout() {
        assert_eq!(bind_timeout("{}"), BIND_TIMEOUT);
        assert_eq!(
            bind_timeout(r#"{"bindTimeoutSeconds": 30}"#),
            Duration::from_secs(30)
        );
        assert_eq!(bind_timeout("not json"), BIND_TIMEOUT);
    }
}
