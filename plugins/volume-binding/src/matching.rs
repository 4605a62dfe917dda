//! Finding a static volume for an unbound `WaitForFirstConsumer` claim
//! (`volume.FindMatchingVolume` in component-helpers, scheduler path).
//!
//! Upstream walks every volume of the claim's class on every node. The
//! checks that do not depend on the node are done here once per pod
//! (`Claim::compile`); what is left per node is the volume's node affinity
//! and the volumes other claims of the pod already took on that node.

use crate::affinity::{Affinity, Anchor};
use crate::json::{self, at, text};
use serde_json::Value;
use sift_sdk::{Labels, PodSelector, Quantity};
use std::collections::HashMap;

/// The annotation the scheduler sets on a claim it chose a node for,
/// for the provisioner (`volume.AnnSelectedNode`).
pub const SELECTED_NODE: &str = "volume.kubernetes.io/selected-node";

/// A volume that may be bound to a claim on some nodes.
#[derive(Debug)]
pub struct Candidate {
    pub name: String,
    pub affinity: Affinity,
}

/// A claim's candidate volumes, smallest first, indexed by the node label
/// that the single-term affinity of most local volumes requires, so a node
/// visits the volumes it may hold rather than all of them.
#[derive(Debug, Default)]
pub struct Candidates {
    /// Sorted by capacity, then in the order the volumes were listed.
    list: Vec<Candidate>,
    /// label key → label value → indices into `list`, ascending.
    anchored: HashMap<String, HashMap<String, Vec<u32>>>,
    /// Indices of the volumes without such a requirement, ascending.
    free: Vec<u32>,
}

impl Candidates {
    fn new(mut sized: Vec<(Quantity, Candidate)>) -> Candidates {
        // Stable: among equal capacities the first listed wins, as
        // upstream keeps the first smallest it meets.
        sized.sort_by_key(|a| a.0);
        let mut c = Candidates::default();
        for (i, (_, cand)) in sized.into_iter().enumerate() {
            let i = i as u32;
            match cand.affinity.anchor() {
                Anchor(Some((key, values))) => {
                    let by_value = c.anchored.entry(key).or_default();
                    for v in values {
                        let ids = by_value.entry(v).or_default();
                        if ids.last() != Some(&i) {
                            ids.push(i);
                        }
                    }
                }
                Anchor(None) => c.free.push(i),
            }
            c.list.push(cand);
        }
        c
    }

    /// The smallest candidate the node may hold that is not taken.
    fn smallest_fit<'a>(&'a self, labels: &Labels, taken: &[&str]) -> Option<&'a Candidate> {
        let fits = |c: &&Candidate| !taken.contains(&c.name.as_str()) && c.affinity.matches(labels);
        if self.anchored.is_empty() {
            return self.list.iter().find(fits);
        }
        let mut ids: Vec<u32> = self.free.clone();
        for (key, by_value) in &self.anchored {
            if let Some(ids_here) = labels.get(key).and_then(|v| by_value.get(v)) {
                ids.extend_from_slice(ids_here);
            }
        }
        ids.sort_unstable();
        ids.dedup();
        ids.into_iter()
            .filter_map(|i| self.list.get(i as usize))
            .find(fits)
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.list.len()
    }
}

/// An unbound `WaitForFirstConsumer` claim of the pod.
#[derive(Debug)]
pub struct Claim {
    /// `namespace/name`, for messages.
    pub key: String,
    /// The storage requested; zero when none (what upstream's sort and
    /// capacity comparison read).
    pub request: Quantity,
    /// Whether the claim requests storage at all (the capacity check
    /// skips a claim that does not).
    pub requests_storage: bool,
    pub class: String,
    /// The node its provisioning was started for, if any.
    pub selected_node: Option<String>,
    /// Why its `spec.selector` does not parse: matching it fails the node.
    pub selector_error: Option<String>,
    /// A volume pre-bound to it (`claimRef` naming it): when there is one,
    /// it is the only answer, on the nodes its affinity admits.
    pub prebound: Option<Candidate>,
    pub candidates: Candidates,
}

/// What matching the claim on a node found.
pub enum Found<'a> {
    Volume(&'a str),
    Nothing,
    /// The claim's selector is invalid (upstream's error).
    Error(&'a str),
}

impl Claim {
    /// The claim with its candidates among `volumes`, the volumes of its
    /// class (`name`, object) in listing order.
    pub fn compile(claim: &Value, key: &str, volumes: &[(&str, &Value)]) -> Claim {
        let (namespace, name) = key.split_once('/').unwrap_or(("", key));
        let storage = json::requested_storage(claim);
        let selector = match at(claim, &["spec", "selector"]).filter(|s| !s.is_null()) {
            None => Ok(None),
            Some(s) => PodSelector::new(Some(&json::label_selector(s)))
                .map(Some)
                .map_err(|e| {
                    format!("error creating internal label selector for claim: {key}: {e}")
                }),
        };
        let mut out = Claim {
            key: key.to_string(),
            request: storage.unwrap_or_default(),
            requests_storage: storage.is_some(),
            class: json::claim_class(claim).to_string(),
            selected_node: json::annotation(claim, SELECTED_NODE).map(str::to_string),
            selector_error: selector.as_ref().err().cloned(),
            prebound: None,
            candidates: Candidates::default(),
        };
        let me = ClaimRef {
            namespace,
            name,
            uid: text(claim, &["metadata", "uid"]),
        };
        let mode = volume_mode(claim);
        let vac = text(claim, &["spec", "volumeAttributesClassName"]);
        let modes = json::strings(claim, &["spec", "accessModes"]);
        let mut sized = Vec::new();
        for &(pv_name, pv) in volumes {
            let bound_here = match at(pv, &["spec", "claimRef"]).filter(|r| !r.is_null()) {
                None => false,
                Some(r) if me.is(r) => true,
                Some(_) => continue,
            };
            let capacity =
                json::quantity(at(pv, &["spec", "capacity", "storage"])).unwrap_or_default();
            if capacity < out.request
                || volume_mode(pv) != mode
                || text(pv, &["spec", "volumeAttributesClassName"]) != vac
                || json::is_set(pv, &["metadata", "deletionTimestamp"])
            {
                continue;
            }
            if bound_here {
                // Upstream returns at the first such volume it meets,
                // before the phase, selector, class and access mode checks.
                if out.prebound.is_none() {
                    out.prebound = Some(Candidate {
                        name: pv_name.to_string(),
                        affinity: Affinity::of_volume(pv),
                    });
                }
                continue;
            }
            if text(pv, &["status", "phase"]) != "Available" {
                continue;
            }
            if let Ok(Some(sel)) = &selector
                && !sel.matches(&json::labels(at(pv, &["metadata", "labels"])))
            {
                continue;
            }
            if json::volume_class(pv) != out.class {
                continue;
            }
            let pv_modes = json::strings(pv, &["spec", "accessModes"]);
            if !modes.iter().all(|m| pv_modes.contains(m)) {
                continue;
            }
            let affinity = Affinity::of_volume(pv);
            if affinity.never() {
                continue;
            }
            sized.push((
                capacity,
                Candidate {
                    name: pv_name.to_string(),
                    affinity,
                },
            ));
        }
        out.candidates = Candidates::new(sized);
        out
    }

    /// The volume it would be bound to on a node with these labels, other
    /// claims of the pod having taken `taken` there.
    pub fn find<'a>(&'a self, labels: &Labels, taken: &[&str]) -> Found<'a> {
        if let Some(e) = &self.selector_error {
            return Found::Error(e);
        }
        // Taken only when the pod mounts this claim twice: upstream then
        // skips it as already chosen and looks further.
        if let Some(p) = self
            .prebound
            .as_ref()
            .filter(|p| !taken.contains(&p.name.as_str()))
        {
            return if p.affinity.matches(labels) {
                Found::Volume(&p.name)
            } else {
                Found::Nothing
            };
        }
        match self.candidates.smallest_fit(labels, taken) {
            Some(c) => Found::Volume(&c.name),
            None => Found::Nothing,
        }
    }
}

/// `spec.volumeMode`, `Filesystem` when unset.
fn volume_mode(v: &Value) -> &str {
    match text(v, &["spec", "volumeMode"]) {
        "" => "Filesystem",
        m => m,
    }
}

/// A claim as a volume's `claimRef` names it.
struct ClaimRef<'a> {
    namespace: &'a str,
    name: &'a str,
    uid: &'a str,
}

impl ClaimRef<'_> {
    /// `IsVolumeBoundToClaim`: the same name and namespace, and the same
    /// UID when the reference has one.
    fn is(&self, r: &Value) -> bool {
        let uid = text(r, &["uid"]);
        text(r, &["name"]) == self.name
            && text(r, &["namespace"]) == self.namespace
            && (uid.is_empty() || uid == self.uid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs.iter().copied().collect()
    }

    fn pv(name: &str, size: &str, node: &str) -> Value {
        json!({"metadata": {"name": name}, "spec": {"storageClassName": "wait",
            "capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"],
            "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}}},
            "status": {"phase": "Available"}})
    }

    fn claim(size: &str) -> Value {
        json!({"metadata": {"name": "c", "namespace": "ns", "uid": "u1"},
               "spec": {"storageClassName": "wait", "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": size}}}})
    }

    fn found(f: Found<'_>) -> Option<&str> {
        match f {
            Found::Volume(v) => Some(v),
            Found::Nothing => None,
            Found::Error(e) => panic!("{e}"),
        }
    }

    #[test]
    fn the_smallest_fitting_volume_on_the_node_wins() {
        let pvs = [
            pv("big", "10Gi", "n1"),
            pv("small", "5Gi", "n1"),
            pv("tiny", "1Gi", "n1"),
            pv("other", "5Gi", "n2"),
        ];
        let list: Vec<(&str, &Value)> = ["big", "small", "tiny", "other"]
            .into_iter()
            .zip(pvs.iter())
            .collect();
        let c = Claim::compile(&claim("2Gi"), "ns/c", &list);
        assert_eq!(c.candidates.len(), 3);
        let n1 = labels(&[("kubernetes.io/hostname", "n1")]);
        assert_eq!(found(c.find(&n1, &[])), Some("small"));
        assert_eq!(found(c.find(&n1, &["small"])), Some("big"));
        assert_eq!(found(c.find(&n1, &["small", "big"])), None);
        let n3 = labels(&[("kubernetes.io/hostname", "n3")]);
        assert_eq!(found(c.find(&n3, &[])), None);
    }

    #[test]
    fn volumes_failing_node_independent_checks_are_never_candidates() {
        let mut claimed = pv("claimed", "5Gi", "n1");
        claimed["spec"]["claimRef"] = json!({"name": "other", "namespace": "ns"});
        let mut released = pv("released", "5Gi", "n1");
        released["status"]["phase"] = json!("Released");
        let mut rwx = pv("rwx", "5Gi", "n1");
        rwx["spec"]["accessModes"] = json!(["ReadWriteMany"]);
        let mut block = pv("block", "5Gi", "n1");
        block["spec"]["volumeMode"] = json!("Block");
        let mut vac = pv("vac", "5Gi", "n1");
        vac["spec"]["volumeAttributesClassName"] = json!("fast");
        let mut deleting = pv("deleting", "5Gi", "n1");
        deleting["metadata"]["deletionTimestamp"] = json!("2025-01-01T00:00:00Z");
        let pvs = [claimed, released, rwx, block, vac, deleting];
        let names = ["claimed", "released", "rwx", "block", "vac", "deleting"];
        let list: Vec<(&str, &Value)> = names.into_iter().zip(pvs.iter()).collect();
        let c = Claim::compile(&claim("1Gi"), "ns/c", &list);
        assert_eq!(c.candidates.len(), 0);
        assert!(c.prebound.is_none());
    }

    #[test]
    fn a_prebound_volume_is_the_only_answer() {
        let small = pv("small", "5Gi", "n1");
        let mut pre = pv("pre", "50Gi", "n2");
        pre["spec"]["claimRef"] = json!({"name": "c", "namespace": "ns", "uid": "u1"});
        // Pre-bound volumes are taken whatever their phase.
        pre["status"]["phase"] = json!("Bound");
        let list = [("pre", &pre), ("small", &small)];
        let c = Claim::compile(&claim("1Gi"), "ns/c", &list);
        assert_eq!(
            found(c.find(&labels(&[("kubernetes.io/hostname", "n2")]), &[])),
            Some("pre")
        );
        assert_eq!(
            found(c.find(&labels(&[("kubernetes.io/hostname", "n1")]), &[])),
            None
        );
        // A claimRef with another UID is another claim's.
        pre["spec"]["claimRef"]["uid"] = json!("u2");
        let list = [("pre", &pre), ("small", &small)];
        let c = Claim::compile(&claim("1Gi"), "ns/c", &list);
        assert!(c.prebound.is_none());
        assert_eq!(
            found(c.find(&labels(&[("kubernetes.io/hostname", "n1")]), &[])),
            Some("small")
        );
    }

    #[test]
    fn selectors_filter_volumes_and_a_bad_one_is_an_error() {
        let mut gold = pv("gold", "5Gi", "n1");
        gold["metadata"]["labels"] = json!({"tier": "gold"});
        let plain = pv("plain", "1Gi", "n1");
        let list = [("gold", &gold), ("plain", &plain)];
        let mut c = claim("1Gi");
        c["spec"]["selector"] = json!({"matchLabels": {"tier": "gold"}});
        let compiled = Claim::compile(&c, "ns/c", &list);
        let n1 = labels(&[("kubernetes.io/hostname", "n1")]);
        assert_eq!(found(compiled.find(&n1, &[])), Some("gold"));
        c["spec"]["selector"] = json!({"matchExpressions": [{"key": "tier", "operator": "In"}]});
        let bad = Claim::compile(&c, "ns/c", &list);
        assert!(
            matches!(bad.find(&n1, &[]), Found::Error(e) if e.starts_with(
            "error creating internal label selector for claim: ns/c: "))
        );
    }
}
