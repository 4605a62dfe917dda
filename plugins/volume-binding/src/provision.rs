//! Whether a claim with no static volume on a node can be provisioned
//! there (`checkVolumeProvisions` and `hasEnoughCapacity` in `binder.go`):
//! its class must name a provisioner, admit the node in its
//! `allowedTopologies`, and, when the provisioner is a CSI driver that
//! publishes capacity (`CSIDriver.spec.storageCapacity: true`), some
//! `CSIStorageCapacity` of the class the node can reach must hold the
//! claim's size.

use crate::affinity::Topology;
use crate::json::{self, at, text};
use crate::matching::Claim;
use serde_json::Value;
use sift_sdk::{ClusterView, Labels, PodSelector};

/// The provisioner name a class uses to say it cannot provision
/// (`volume.NotSupportedProvisioner`).
pub const NOT_SUPPORTED_PROVISIONER: &str = "kubernetes.io/no-provisioner";

/// What a claim's provisioning needs of a node.
#[derive(Debug)]
pub struct Provision {
    /// The class names a provisioner that can provision.
    pub provisionable: bool,
    pub topology: Topology,
    pub capacity: Capacity,
}

/// The storage capacity check.
#[derive(Debug)]
pub enum Capacity {
    /// Not checked: the claim requests no storage, or its provisioner is
    /// not a CSI driver publishing capacity.
    Unchecked,
    /// The topologies of the class's capacity pools large enough for the
    /// claim: a node must be in one of them.
    Pools(Vec<PodSelector>),
}

/// How one claim fares on a node.
pub enum Outcome {
    Provisionable,
    /// No provisioner, or the node outside the allowed topologies.
    NotProvisionable,
    NotEnoughSpace,
}

impl Provision {
    /// The provisioning of `claim`, or upstream's error when its class is
    /// unset or missing (which an unbound `WaitForFirstConsumer` claim
    /// cannot be: its class told the mode).
    pub fn of(claim: &Claim, cluster: &dyn ClusterView) -> Result<Provision, String> {
        if claim.class.is_empty() {
            return Err(format!("no class for claim \"{}\"", claim.key));
        }
        let Some(class) = cluster.object("StorageClass", &claim.class) else {
            return Err(format!("failed to find storage class \"{}\"", claim.class));
        };
        let provisioner = text(class, &["provisioner"]);
        Ok(Provision {
            provisionable: !provisioner.is_empty() && provisioner != NOT_SUPPORTED_PROVISIONER,
            topology: Topology::of_class(class),
            capacity: capacity(claim, provisioner, cluster),
        })
    }

    pub fn on(&self, labels: &Labels) -> Outcome {
        if !self.provisionable || !self.topology.admits(labels) {
            return Outcome::NotProvisionable;
        }
        match &self.capacity {
            Capacity::Unchecked => Outcome::Provisionable,
            Capacity::Pools(pools) if pools.iter().any(|p| p.matches(labels)) => {
                Outcome::Provisionable
            }
            Capacity::Pools(_) => Outcome::NotEnoughSpace,
        }
    }
}

fn capacity(claim: &Claim, provisioner: &str, cluster: &dyn ClusterView) -> Capacity {
    if !claim.requests_storage {
        return Capacity::Unchecked;
    }
    let opted_in = cluster
        .object("CSIDriver", provisioner)
        .and_then(|d| at(d, &["spec", "storageCapacity"]))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if !opted_in {
        return Capacity::Unchecked;
    }
    let size = claim.request.value();
    let pools = cluster
        .objects("CSIStorageCapacity")
        .into_iter()
        .map(|(_, c)| c)
        .filter(|c| text(c, &["storageClassName"]) == claim.class)
        .filter(|c| {
            // The largest volume it can create: `maximumVolumeSize` when
            // published (it is more precise), else the capacity left.
            let limit = match at(c, &["maximumVolumeSize"]).filter(|v| !v.is_null()) {
                Some(max) => json::quantity(Some(max)),
                None => json::quantity(at(c, &["capacity"])),
            };
            limit.is_some_and(|l| l.value() >= size)
        })
        // A pool without a topology is reachable from no node; one whose
        // selector does not parse, likewise.
        .filter_map(|c| at(c, &["nodeTopology"]).filter(|t| !t.is_null()))
        .filter_map(|t| PodSelector::new(Some(&json::label_selector(t))).ok())
        .collect();
    Capacity::Pools(pools)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use sift_sdk::ClusterTables;

    fn tables(objects: Vec<(&str, &str, Value)>) -> ClusterTables {
        let mut t = ClusterTables::default();
        for (kind, key, v) in objects {
            t.objects
                .entry(kind.to_string())
                .or_default()
                .insert(key.to_string(), v);
        }
        t
    }

    fn claim(size: Option<&str>) -> Claim {
        let mut c = json!({"metadata": {"name": "c", "namespace": "ns"},
                           "spec": {"storageClassName": "fast"}});
        if let Some(s) = size {
            c["spec"]["resources"] = json!({"requests": {"storage": s}});
        }
        Claim::compile(&c, "ns/c", &[])
    }

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs.iter().copied().collect()
    }

    fn cluster(capacity: Value) -> ClusterTables {
        tables(vec![
            (
                "StorageClass",
                "fast",
                json!({"provisioner": "csi.example"}),
            ),
            (
                "CSIDriver",
                "csi.example",
                json!({"spec": {"storageCapacity": true}}),
            ),
            ("CSIStorageCapacity", "ns/cap", capacity),
        ])
    }

    #[test]
    fn capacity_pools_must_reach_the_node_and_hold_the_claim() {
        let c = cluster(json!({"storageClassName": "fast", "capacity": "10Gi",
                               "nodeTopology": {"matchLabels": {"zone": "a"}}}));
        let p = Provision::of(&claim(Some("10Gi")), &c).unwrap();
        assert!(matches!(
            p.on(&labels(&[("zone", "a")])),
            Outcome::Provisionable
        ));
        assert!(matches!(
            p.on(&labels(&[("zone", "b")])),
            Outcome::NotEnoughSpace
        ));
        let p = Provision::of(&claim(Some("11Gi")), &c).unwrap();
        assert!(matches!(
            p.on(&labels(&[("zone", "a")])),
            Outcome::NotEnoughSpace
        ));
        // No request: nothing to check.
        let p = Provision::of(&claim(None), &c).unwrap();
        assert!(matches!(
            p.on(&labels(&[("zone", "b")])),
            Outcome::Provisionable
        ));
    }

    #[test]
    fn maximum_volume_size_wins_over_capacity_and_no_topology_reaches_nothing() {
        let c = cluster(json!({"storageClassName": "fast", "capacity": "10Gi",
                               "maximumVolumeSize": "1Gi", "nodeTopology": {}}));
        let p = Provision::of(&claim(Some("2Gi")), &c).unwrap();
        assert!(matches!(p.on(&labels(&[])), Outcome::NotEnoughSpace));
        let c = cluster(json!({"storageClassName": "fast", "capacity": "10Gi"}));
        let p = Provision::of(&claim(Some("2Gi")), &c).unwrap();
        assert!(matches!(p.on(&labels(&[])), Outcome::NotEnoughSpace));
    }

    #[test]
    fn classes_without_a_provisioner_cannot_provision() {
        for provisioner in ["", NOT_SUPPORTED_PROVISIONER] {
            let c = tables(vec![(
                "StorageClass",
                "fast",
                json!({"provisioner": provisioner}),
            )]);
            let p = Provision::of(&claim(Some("1Gi")), &c).unwrap();
            assert!(matches!(p.on(&labels(&[])), Outcome::NotProvisionable));
        }
        let none = tables(vec![]);
        assert_eq!(
            Provision::of(&claim(None), &none).unwrap_err(),
            "failed to find storage class \"fast\""
        );
    }
}
