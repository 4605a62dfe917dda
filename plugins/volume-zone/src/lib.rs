//! VolumeZone: a pod whose claims are bound to volumes labelled with a zone
//! or region goes only to nodes in that zone or region. Restated from
//! kube-scheduler's `volumezone` plugin: only `persistentVolumeClaim`
//! volumes count, a claim of a `WaitForFirstConsumer` class that is not
//! bound yet is left to VolumeBinding, and a node with none of the four
//! topology labels passes (a single-zone cluster need not label nodes).

use serde_json::Value;
use sift_sdk::{Args, ClusterView, Node, NodeFields, Plugin, Pod, Prepare, Status, export_plugin};
use std::collections::BTreeSet;

pub const ERR_REASON_CONFLICT: &str = "node(s) had no available volume zone";

const BETA_ZONE: &str = "failure-domain.beta.kubernetes.io/zone";
const BETA_REGION: &str = "failure-domain.beta.kubernetes.io/region";
const ZONE: &str = "topology.kubernetes.io/zone";
const REGION: &str = "topology.kubernetes.io/region";

/// The labels read on volumes and nodes, in upstream's order.
const TOPOLOGY_LABELS: [&str; 4] = [BETA_ZONE, BETA_REGION, ZONE, REGION];

/// The claim's class by the beta annotation first, as upstream's
/// `GetPersistentVolumeClaimClass` does.
const BETA_STORAGE_CLASS: &str = "volume.beta.kubernetes.io/storage-class";

pub struct VolumeZone;

/// One topology label of a bound volume: the values a node's label must be
/// among.
#[derive(Debug, PartialEq)]
pub struct PvTopology {
    key: &'static str,
    values: BTreeSet<String>,
}

impl Plugin for VolumeZone {
    const NAME: &'static str = "VolumeZone";
    const NODE_FIELDS: NodeFields = NodeFields::LABELS;
    const NODE_LABELS: Option<&'static [&'static str]> = Some(&TOPOLOGY_LABELS);
    const OBJECT_KINDS: &'static [&'static str] =
        &["PersistentVolumeClaim", "PersistentVolume", "StorageClass"];
    type PodState = Vec<PvTopology>;

    fn new(_: Args) -> Result<Self, String> {
        Ok(VolumeZone)
    }

    fn prepare(&self, pod: &Pod, cluster: &dyn ClusterView) -> Prepare<Vec<PvTopology>> {
        match topologies(pod, cluster) {
            Err(status) => Prepare::Reject(status),
            Ok(t) if t.is_empty() => Prepare::Skip,
            Ok(t) => Prepare::Proceed(t),
        }
    }

    fn filter(&self, _: &Pod, topologies: &Vec<PvTopology>, node: &Node) -> Status {
        if !TOPOLOGY_LABELS.iter().any(|k| node.labels.get(k).is_some()) {
            return Status::success();
        }
        for t in topologies {
            let value = node
                .labels
                .get(t.key)
                .or_else(|| node.labels.get(to_ga(t.key)));
            if !value.is_some_and(|v| t.values.contains(v)) {
                return Status::unresolvable(ERR_REASON_CONFLICT);
            }
        }
        Status::success()
    }
}

/// The beta label's GA name (a beta volume label matches a GA node label).
fn to_ga(key: &str) -> &str {
    match key {
        BETA_ZONE => ZONE,
        BETA_REGION => REGION,
        other => other,
    }
}

fn text<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    path.iter()
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// The topologies of the volumes the pod's claims are bound to
/// (upstream's `getPVbyPod`), or the status that rejects the pod.
fn topologies(pod: &Pod, cluster: &dyn ClusterView) -> Result<Vec<PvTopology>, Status> {
    let mut out = Vec::new();
    for volume in &pod.volumes {
        let is_claim = !volume.ephemeral
            && (!volume.claim_name.is_empty() || volume.source("persistentVolumeClaim").is_some());
        if !is_claim {
            continue;
        }
        let name = &volume.claim_name;
        if name.is_empty() {
            return Err(Status::unresolvable("PersistentVolumeClaim had no name"));
        }
        let key = format!("{}/{name}", pod.namespace);
        let Some(claim) = cluster.object("PersistentVolumeClaim", &key) else {
            return Err(Status::unresolvable(format!(
                "persistentvolumeclaim \"{name}\" not found"
            )));
        };
        let pv_name = text(claim, &["spec", "volumeName"]);
        if pv_name.is_empty() {
            let class = match claim["metadata"]["annotations"].get(BETA_STORAGE_CLASS) {
                Some(v) => v.as_str().unwrap_or(""),
                None => text(claim, &["spec", "storageClassName"]),
            };
            if class.is_empty() {
                return Err(Status::unresolvable(
                    "PersistentVolumeClaim had no pv name and storageClass name",
                ));
            }
            let Some(sc) = cluster.object("StorageClass", class) else {
                return Err(Status::unresolvable(format!(
                    "storageclass.storage.k8s.io \"{class}\" not found"
                )));
            };
            match sc.get("volumeBindingMode").and_then(Value::as_str) {
                None => {
                    return Err(Status::unresolvable(format!(
                        "VolumeBindingMode not set for StorageClass \"{class}\""
                    )));
                }
                // Not bound yet: VolumeBinding picks where it goes.
                Some("WaitForFirstConsumer") => continue,
                Some(_) => return Err(Status::unresolvable("PersistentVolume had no name")),
            }
        }
        let Some(pv) = cluster.object("PersistentVolume", pv_name) else {
            return Err(Status::unresolvable(format!(
                "persistentvolume \"{pv_name}\" not found"
            )));
        };
        for key in TOPOLOGY_LABELS {
            if let Some(value) = pv["metadata"]["labels"].get(key).and_then(Value::as_str) {
                // A label that is not a list of zones is ignored, as upstream
                // logs and ignores it.
                if let Some(values) = label_zones(value) {
                    out.push(PvTopology { key, values });
                }
            }
        }
    }
    Ok(out)
}

/// A volume's zone label as a set (`LabelZonesToSet`): zones joined by
/// `__`, each trimmed; `None` when one is empty.
fn label_zones(value: &str) -> Option<BTreeSet<String>> {
    value
        .split("__")
        .map(|z| {
            let z = z.trim();
            (!z.is_empty()).then(|| z.to_string())
        })
        .collect()
}

export_plugin!(VolumeZone);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zone_labels_split_on_double_underscores_and_reject_empty_zones() {
        let set = |v: &[&str]| Some(v.iter().map(|s| s.to_string()).collect());
        assert_eq!(label_zones("us-east-1a"), set(&["us-east-1a"]));
        assert_eq!(label_zones("a__b"), set(&["a", "b"]));
        assert_eq!(label_zones(" a __b "), set(&["a", "b"]));
        assert_eq!(label_zones("a,b"), set(&["a,b"]));
        assert_eq!(label_zones("a____b"), None);
        assert_eq!(label_zones(""), None);
    }
}
