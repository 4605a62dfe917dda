//! NodeVolumeLimits: a node takes no more volumes of a CSI driver than its
//! CSINode allows (`spec.drivers[].allocatable.count`). Restated from
//! kube-scheduler 1.36's `nodevolumelimits` plugin (`csi.go`, `utils.go`),
//! with the in-tree translations of `k8s.io/csi-translation-lib`
//! ([`translate`]); `docs/upstream/nodevolumelimits.md` has the whole
//! restatement.
//!
//! The volumes counted are unique by `<driver>/<volume handle>`:
//! - a `persistentVolumeClaim` or `ephemeral` volume: its claim's bound PV,
//!   by `spec.csi` (driver, volumeHandle) or, for a PV of an in-tree plugin
//!   whose migration is on, by its translation; a claim not bound yet (or
//!   bound to a PV that does not exist) by its StorageClass's provisioner,
//!   under a handle made of the claim's namespace and name;
//! - an in-line volume of a migrated in-tree plugin (awsElasticBlockStore,
//!   gcePersistentDisk, azureDisk, cinder, portworxVolume), by its
//!   translation.
//!
//! A node's count is the volumes of the pods already on it plus the
//! VolumeAttachments to it (each counted once); the pod's volumes that a
//! pod on the node already uses are not counted again.

use serde_json::Value;
use sift_sdk::{
    Args, ClusterView, Node, NodeFields, Plugin, Pod, PodVolumes, Prepare, Status, Volume,
    export_plugin,
};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

pub mod translate;

/// `ErrReasonMaxVolumeCountExceeded`.
pub const ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED: &str = "node(s) exceed max volume count";

/// The claim's class by the beta annotation first
/// (`GetPersistentVolumeClaimClass`).
const BETA_STORAGE_CLASS: &str = "volume.beta.kubernetes.io/storage-class";

/// What a claim not bound yet is counted as: upstream draws 32 random
/// characters once per plugin instance, so that the handle cannot be a
/// real volume's. A fixed string does the same, and keeps instances (and
/// their components) agreeing.
const UNBOUND_HANDLE_PREFIX: &str = "sift0unbound0claim0nodevolumelim";

pub struct NodeVolumeLimits {
    /// The cluster's objects as the filter reads them, per view generation.
    index: Mutex<Option<(u64, Arc<Index>)>>,
}

/// Volumes by unique name (`<driver>/<handle>`), each with its driver.
type Volumes = BTreeMap<String, String>;

/// What the filter reads of the cluster besides the node: built from the
/// claims, volumes, classes, CSINodes and VolumeAttachments, the same for
/// every pod of one view.
#[derive(Default)]
pub struct Index {
    /// Claims by `namespace/name`.
    claims: HashMap<String, Claim>,
    /// Per node name: its CSINode's limits by driver.
    limits: HashMap<String, BTreeMap<String, i64>>,
    /// Per node name: the volumes attached to it (VolumeAttachments).
    attached: HashMap<String, Volumes>,
}

/// A claim, as the count needs it.
struct Claim {
    /// `(unique name, driver)` when the claim counts (`getCSIDriverInfo`
    /// found a driver and a handle).
    counted: Option<(String, String)>,
    /// The claim's controlling owner (`metadata.ownerReferences[]` with
    /// `controller: true`): its uid and name.
    controller: Option<(String, String)>,
}

/// The pod's own volumes (`newVolumes`), or the status every node gets.
pub struct State {
    new: Result<Volumes, Status>,
    index: Arc<Index>,
}

impl Default for State {
    fn default() -> Self {
        State {
            new: Ok(Volumes::new()),
            index: Arc::default(),
        }
    }
}

impl Default for NodeVolumeLimits {
    fn default() -> Self {
        NodeVolumeLimits {
            index: Mutex::new(None),
        }
    }
}

impl Plugin for NodeVolumeLimits {
    const NAME: &'static str = "NodeVolumeLimits";
    const NODE_FIELDS: NodeFields = NodeFields::VOLUMES;
    const OBJECT_KINDS: &'static [&'static str] = &[
        "PersistentVolumeClaim",
        "PersistentVolume",
        "StorageClass",
        "CSINode",
        "VolumeAttachment",
    ];
    type PodState = State;

    fn new(_: Args) -> Result<Self, String> {
        Ok(NodeVolumeLimits::default())
    }

    /// PreFilter skips a pod with no claim, no ephemeral volume and no
    /// in-line volume of a translatable in-tree plugin. Otherwise the
    /// pod's volumes are resolved here, once: they are the same on every
    /// node.
    fn prepare(&self, pod: &Pod, cluster: &dyn ClusterView) -> Prepare<State> {
        let parsed: Vec<Value> = pod.volumes.iter().map(parse).collect();
        let counts = pod
            .volumes
            .iter()
            .zip(&parsed)
            .any(|(v, o)| is_claim(v, o) || v.ephemeral || translate::plugin_of(o).is_some());
        if !counts {
            return Prepare::Skip;
        }
        let index = self.index(cluster);
        let new = new_volumes(pod, &parsed, &index);
        Prepare::Proceed(State { new, index })
    }

    fn filter(&self, _: &Pod, state: &State, node: &Node) -> Status {
        let new = match &state.new {
            Err(status) => return status.clone(),
            Ok(new) => new,
        };
        if new.is_empty() {
            return Status::success();
        }
        let Some(limits) = state.index.limits.get(&node.name).filter(|l| !l.is_empty()) else {
            return Status::success();
        };
        // The volumes of the pods on the node: one count per unique volume.
        let mut used = Volumes::new();
        for pod in &node.volumes {
            if let Err(message) = existing_volumes(pod, &state.index, &mut used) {
                return Status::error(message);
            }
        }
        let mut count: BTreeMap<&str, i64> = BTreeMap::new();
        for driver in used.values() {
            *count.entry(driver).or_default() += 1;
        }
        // VolumeAttachments to the node, unless a pod's volume counted
        // them already. (The pod's own volumes are not checked against
        // them: a volume attached but used by no pod here counts twice.)
        if let Some(attached) = state.index.attached.get(&node.name) {
            for (unique, driver) in attached {
                if !used.contains_key(unique) {
                    *count.entry(driver).or_default() += 1;
                }
            }
        }
        let mut wanted: BTreeMap<&str, i64> = BTreeMap::new();
        for (unique, driver) in new {
            if !used.contains_key(unique) {
                *wanted.entry(driver).or_default() += 1;
            }
        }
        for (driver, n) in wanted {
            if let Some(&limit) = limits.get(driver)
                && count.get(driver).copied().unwrap_or(0) + n > limit
            {
                return Status::unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED);
            }
        }
        Status::success()
    }
}

impl NodeVolumeLimits {
    /// The index of `cluster`, built once per view generation.
    fn index(&self, cluster: &dyn ClusterView) -> Arc<Index> {
        let Some(generation) = cluster.generation() else {
            return Arc::new(Index::build(cluster));
        };
        if let Ok(cached) = self.index.lock()
            && let Some((g, index)) = cached.as_ref()
            && *g == generation
        {
            return index.clone();
        }
        let index = Arc::new(Index::build(cluster));
        if let Ok(mut cached) = self.index.lock() {
            *cached = Some((generation, index.clone()));
        }
        index
    }
}

fn parse(v: &Volume) -> Value {
    serde_json::from_str(&v.object).unwrap_or(Value::Null)
}

/// A `persistentVolumeClaim` volume (an `ephemeral` one is not).
fn is_claim(v: &Volume, object: &Value) -> bool {
    !v.ephemeral
        && (!v.claim_name.is_empty()
            || object
                .get("persistentVolumeClaim")
                .is_some_and(|c| !c.is_null()))
}

fn text<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    path.iter()
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn unique(driver: &str, handle: &str) -> String {
    format!("{driver}/{handle}")
}

impl Index {
    fn build(cluster: &dyn ClusterView) -> Index {
        let mut index = Index::default();
        for (key, claim) in cluster.objects("PersistentVolumeClaim") {
            let namespace = key.split_once('/').map_or("", |(ns, _)| ns);
            let controller = claim["metadata"]["ownerReferences"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|r| r["controller"].as_bool() == Some(true))
                .map(|r| {
                    (
                        text(r, &["uid"]).to_string(),
                        text(r, &["name"]).to_string(),
                    )
                });
            let counted = claim_driver(cluster, namespace, claim)
                .filter(|(d, h)| !d.is_empty() && !h.is_empty())
                .map(|(d, h)| (unique(&d, &h), d));
            index.claims.insert(
                key.to_string(),
                Claim {
                    counted,
                    controller,
                },
            );
        }
        for (name, csinode) in cluster.objects("CSINode") {
            let mut limits = BTreeMap::new();
            for d in csinode["spec"]["drivers"].as_array().into_iter().flatten() {
                if let Some(count) = d["allocatable"]["count"].as_i64() {
                    limits.insert(text(d, &["name"]).to_string(), count);
                }
            }
            index.limits.insert(name.to_string(), limits);
        }
        // getNodeVolumeAttachmentInfo.
        for (_, va) in cluster.objects("VolumeAttachment") {
            let attacher = text(va, &["spec", "attacher"]);
            let Some(pv_name) = va["spec"]["source"]["persistentVolumeName"].as_str() else {
                continue;
            };
            if attacher.is_empty() {
                continue;
            }
            let Some(pv) = cluster.object("PersistentVolume", pv_name) else {
                continue;
            };
            let csi = &pv["spec"]["csi"];
            if csi.is_null() {
                continue;
            }
            index
                .attached
                .entry(text(va, &["spec", "nodeName"]).to_string())
                .or_default()
                .insert(
                    unique(attacher, text(csi, &["volumeHandle"])),
                    attacher.to_string(),
                );
        }
        index
    }
}

/// `getCSIDriverInfo`: the driver and handle a claim counts under, or
/// `None` when it is not counted.
fn claim_driver(
    cluster: &dyn ClusterView,
    namespace: &str,
    claim: &Value,
) -> Option<(String, String)> {
    let pv_name = text(claim, &["spec", "volumeName"]);
    if pv_name.is_empty() {
        return class_driver(cluster, namespace, claim);
    }
    // A PV that does not exist (deleted, or the claim pre-bound to one not
    // created yet): counted by the class, as an unbound claim.
    let Some(pv) = cluster.object("PersistentVolume", pv_name) else {
        return class_driver(cluster, namespace, claim);
    };
    let csi = &pv["spec"]["csi"];
    if !csi.is_null() {
        return Some((
            text(csi, &["driver"]).to_string(),
            text(csi, &["volumeHandle"]).to_string(),
        ));
    }
    let plugin = translate::plugin_of(&pv["spec"])?;
    if !translate::migration_on(plugin.plugin) {
        return None;
    }
    // A translation error: not counted (upstream logs it).
    let handle = translate::pv_handle(plugin, pv).ok()?;
    Some((plugin.driver.to_string(), handle))
}

/// `getCSIDriverInfoFromSC`: a claim not bound yet counts under its
/// class's provisioner (the CSI driver of a migrated in-tree provisioner),
/// with a handle of its own; a claim without a class, or whose class does
/// not exist, is not counted (it must be bound before it is scheduled).
fn class_driver(
    cluster: &dyn ClusterView,
    namespace: &str,
    claim: &Value,
) -> Option<(String, String)> {
    let class = match claim["metadata"]["annotations"].get(BETA_STORAGE_CLASS) {
        Some(v) => v.as_str().unwrap_or(""),
        None => text(claim, &["spec", "storageClassName"]),
    };
    if class.is_empty() {
        return None;
    }
    let sc = cluster.object("StorageClass", class)?;
    let handle = format!(
        "{UNBOUND_HANDLE_PREFIX}-{namespace}/{}",
        text(claim, &["metadata", "name"])
    );
    let provisioner = text(sc, &["provisioner"]);
    match translate::by_name(provisioner) {
        Some(p) if translate::migration_on(p.plugin) => Some((p.driver.to_string(), handle)),
        Some(_) => None,
        None => Some((provisioner.to_string(), handle)),
    }
}

/// `checkAttachableInlineVolume`: an in-line volume of a migrated in-tree
/// plugin, by its translation; `Err` is the Error status's message.
fn inline_volume(v: &Volume, object: &Value, out: &mut Volumes) -> Result<(), String> {
    let Some(plugin) = translate::plugin_of(object) else {
        return Ok(());
    };
    if !translate::migration_on(plugin.plugin) {
        return Ok(());
    }
    let handle = translate::inline_handle(plugin, object)
        .map_err(|e| format!("converting volume({}) from inline to csi: {e}", v.name))?;
    out.insert(unique(plugin.driver, &handle), plugin.driver.to_string());
    Ok(())
}

/// `filterAttachableVolumes` for the pod to place: a claim that does not
/// exist makes the pod unschedulable everywhere until it is created;
/// anything else wrong is an Error.
fn new_volumes(pod: &Pod, parsed: &[Value], index: &Index) -> Result<Volumes, Status> {
    let mut out = Volumes::new();
    for (v, object) in pod.volumes.iter().zip(parsed) {
        if !is_claim(v, object) && !v.ephemeral {
            inline_volume(v, object, &mut out).map_err(Status::error)?;
            continue;
        }
        let name = &v.claim_name;
        if name.is_empty() {
            return Err(Status::error("PersistentVolumeClaim had no name"));
        }
        let Some(claim) = index.claims.get(&format!("{}/{name}", pod.namespace)) else {
            return Err(Status::unresolvable(format!(
                "looking up PVC {}/{name}: persistentvolumeclaim {} not found",
                pod.namespace,
                translate::go_quote(name)
            )));
        };
        // The claim of an ephemeral volume must be the pod's own
        // (`ephemeral.VolumeIsForPod`: its controller's uid is the pod's).
        if v.ephemeral && claim.controller.as_ref().map(|(uid, _)| uid) != Some(&pod.uid) {
            return Err(Status::error(format!(
                "PVC {ns}/{name} was not created for pod {ns}/{} (pod is not owner)",
                pod.name,
                ns = pod.namespace
            )));
        }
        if let Some((unique, driver)) = &claim.counted {
            out.insert(unique.clone(), driver.clone());
        }
    }
    Ok(out)
}

/// `filterAttachableVolumes` for a pod on the node: a claim that does not
/// exist is not counted; anything else wrong is the Error's message.
///
/// The ownership of an ephemeral volume's claim is checked by the owner's
/// name: the volumes of bound pods carry no pod uid (see the README).
fn existing_volumes(pod: &PodVolumes, index: &Index, out: &mut Volumes) -> Result<(), String> {
    let (namespace, pod_name) = pod.pod.split_once('/').unwrap_or(("", &pod.pod));
    for v in &pod.volumes {
        let object = parse(v);
        if !is_claim(v, &object) && !v.ephemeral {
            inline_volume(v, &object, out)?;
            continue;
        }
        let name = &v.claim_name;
        if name.is_empty() {
            return Err("PersistentVolumeClaim had no name".into());
        }
        let Some(claim) = index.claims.get(&format!("{namespace}/{name}")) else {
            continue;
        };
        if v.ephemeral && claim.controller.as_ref().map(|(_, n)| n.as_str()) != Some(pod_name) {
            return Err(format!(
                "PVC {namespace}/{name} was not created for pod {namespace}/{pod_name} (pod is not owner)"
            ));
        }
        if let Some((unique, driver)) = &claim.counted {
            out.insert(unique.clone(), driver.clone());
        }
    }
    Ok(())
}

export_plugin!(NodeVolumeLimits);

#[cfg(test)]
mod tests;
