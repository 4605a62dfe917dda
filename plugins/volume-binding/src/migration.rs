//! CSI migration of bound in-tree volumes (`tryTranslatePVToCSI` in
//! `binder.go`, with `k8s.io/csi-translation-lib`): when a node's CSINode
//! lists a volume's in-tree plugin as migrated, VolumeBinding checks the
//! node affinity of the volume translated to CSI, whose zone requirement is
//! rewritten to the CSI driver's topology key (nodes carry it once the
//! driver registers). Only bound claims are translated; unbound claims are
//! matched against volumes as written.
//!
//! Restated for the two in-tree plugins whose translators were read at the
//! target commit: GCE PD (`kubernetes.io/gce-pd`, key
//! `topology.gke.io/zone`) and Cinder (`kubernetes.io/cinder`, key
//! `topology.cinder.csi.openstack.org/zone`). AWS EBS and Azure Disk
//! volumes are checked as written (see the cases README).

use crate::affinity::{Affinity, RawTerm};
use crate::json::{self, at};
use serde_json::Value;
use sift_sdk::model::SelectorRequirement;
use std::collections::BTreeSet;

/// The CSINode annotation listing the in-tree plugins migrated on the node
/// (`v1.MigratedPluginsAnnotationKey`), comma-separated.
pub const MIGRATED_PLUGINS: &str = "storage.alpha.kubernetes.io/migrated-plugins";

const GA_ZONE: &str = "topology.kubernetes.io/zone";
const GA_REGION: &str = "topology.kubernetes.io/region";
const BETA_ZONE: &str = "failure-domain.beta.kubernetes.io/zone";
const BETA_REGION: &str = "failure-domain.beta.kubernetes.io/region";
/// How a zone label lists several zones (`labelMultiZoneDelimiter`).
const MULTI_ZONE: &str = "__";

/// A bound volume whose plugin may be migrated on the node.
#[derive(Debug)]
pub struct Migration {
    /// The in-tree plugin name, as the CSINode annotation lists it.
    pub plugin: &'static str,
    /// The translated volume's affinity, or the translation error (the
    /// node's Filter then fails with it).
    pub translated: Result<Affinity, String>,
}

/// The migration of `pv`, if its plugin is one upstream migrates
/// (`isCSIMigrationOnForPlugin`) and this restatement translates.
pub fn of_volume(pv: &Value) -> Option<Migration> {
    let source = |k: &str| json::is_set(pv, &["spec", k]);
    let (plugin, key) = if source("gcePersistentDisk") {
        ("kubernetes.io/gce-pd", "topology.gke.io/zone")
    } else if source("cinder") {
        (
            "kubernetes.io/cinder",
            "topology.cinder.csi.openstack.org/zone",
        )
    } else {
        return None;
    };
    let translated = translate(pv, plugin, key)
        .map(|terms| Affinity::compile(terms.as_deref()))
        .map_err(|e| format!("could not translate pv: {e}"));
    Some(Migration { plugin, translated })
}

/// The in-tree plugins a CSINode lists as migrated.
pub fn migrated_plugins(csi_node: &Value) -> BTreeSet<String> {
    json::annotation(csi_node, MIGRATED_PLUGINS)
        .filter(|a| !a.is_empty())
        .map(|a| a.split(',').map(str::to_string).collect())
        .unwrap_or_default()
}

fn label<'a>(pv: &'a Value, key: &str) -> Option<&'a str> {
    at(pv, &["metadata", "labels", key]).and_then(Value::as_str)
}

/// The translated volume's required terms.
fn translate(pv: &Value, plugin: &str, csi_key: &str) -> Result<Option<Vec<RawTerm>>, String> {
    if plugin == "kubernetes.io/gce-pd" {
        // The volume handle names a region for a regional disk (zones
        // joined by "__"), derived from the zones: a zone that is not
        // {locale}-{region}-{zone} fails the translation.
        let zones = match label(pv, BETA_ZONE).unwrap_or("") {
            "" => label(pv, GA_ZONE).unwrap_or(""),
            z => z,
        };
        let zones: Vec<&str> = zones.split(MULTI_ZONE).collect();
        if zones.len() > 1 {
            region_of(&zones).map_err(|e| format!("failed to get region from zones: {e}"))?;
        }
    }
    let mut terms = crate::affinity::raw_terms(pv);
    translate_topology(&mut terms, pv, csi_key);
    Ok(terms)
}

/// `getRegionFromZones`: the one region of GCE zones `{locale}-{region}-{zone}`.
fn region_of(zones: &[&str]) -> Result<String, String> {
    if zones.is_empty() {
        return Err("no zones specified".into());
    }
    let mut regions = BTreeSet::new();
    for zone in zones {
        let parts: Vec<&str> = zone.split('-').collect();
        if parts.len() != 3 {
            return Err(format!(
                "zone in unexpected format, expected: {{locale}}-{{region}}-{{zone}}, got: {zone}"
            ));
        }
        regions.insert(parts[..2].join("-"));
    }
    if regions.len() != 1 {
        let set: Vec<String> = regions.iter().map(|r| format!("{r}:{{}}")).collect();
        return Err(format!(
            "multiple or no regions gotten from zones, got: map[{}]",
            set.join(" ")
        ));
    }
    Ok(regions.into_iter().next().unwrap_or_default())
}

fn key_exists(terms: &Option<Vec<RawTerm>>, key: &str) -> bool {
    terms
        .iter()
        .flatten()
        .any(|t| t.expressions.iter().any(|r| r.key == key))
}

/// `getTopologyLabel`: the zone and region keys the volume uses, GA or
/// beta, from its affinity first, then its labels; GA by default.
fn topology_labels(terms: &Option<Vec<RawTerm>>, pv: &Value) -> (&'static str, &'static str) {
    if key_exists(terms, GA_ZONE) {
        (GA_ZONE, GA_REGION)
    } else if key_exists(terms, BETA_ZONE) {
        (BETA_ZONE, BETA_REGION)
    } else if label(pv, GA_ZONE).is_some() {
        (GA_ZONE, GA_REGION)
    } else if label(pv, BETA_ZONE).is_some() {
        (BETA_ZONE, BETA_REGION)
    } else {
        (GA_ZONE, GA_REGION)
    }
}

/// `getTopologyValues`: the distinct values of `key` in the terms.
fn values(terms: &Option<Vec<RawTerm>>, key: &str) -> BTreeSet<String> {
    terms
        .iter()
        .flatten()
        .flat_map(|t| &t.expressions)
        .filter(|r| r.key == key)
        .flat_map(|r| r.values.iter().cloned())
        .collect()
}

/// `replaceTopology`: renames `old` to `new` in every expression.
fn replace(terms: &mut Option<Vec<RawTerm>>, old: &str, new: &str) {
    for r in terms.iter_mut().flatten().flat_map(|t| &mut t.expressions) {
        if r.key == old {
            r.key = new.to_string();
        }
    }
}

/// `addTopology`: `key In zones` added to every term (to a new one when
/// there is none); nothing when no zone is left after trimming.
fn add(terms: &mut Option<Vec<RawTerm>>, key: &str, zones: &[&str]) {
    let zones: BTreeSet<&str> = zones
        .iter()
        .map(|z| z.trim())
        .filter(|z| !z.is_empty())
        .collect();
    if zones.is_empty() {
        return;
    }
    let terms = terms.get_or_insert_with(Vec::new);
    if terms.is_empty() {
        terms.push(RawTerm::default());
    }
    for t in terms.iter_mut() {
        t.expressions.push(SelectorRequirement {
            key: key.to_string(),
            operator: "In".into(),
            values: zones.iter().map(|z| z.to_string()).collect(),
        });
    }
}

/// `translateTopologyFromInTreeToCSI`: the zone requirement (or, with
/// none, the zone label) becomes the CSI key; a beta region requirement
/// becomes the GA one.
fn translate_topology(terms: &mut Option<Vec<RawTerm>>, pv: &Value, csi_key: &str) {
    let (zone, region) = topology_labels(terms, pv);
    if !values(terms, zone).is_empty() {
        replace(terms, zone, csi_key);
    } else if let Some(l) = label(pv, zone) {
        let zones: Vec<&str> = l.split(MULTI_ZONE).collect();
        add(terms, csi_key, &zones);
    }
    if region == BETA_REGION && !values(terms, BETA_REGION).is_empty() {
        replace(terms, BETA_REGION, GA_REGION);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use sift_sdk::Labels;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs.iter().copied().collect()
    }

    #[test]
    fn a_gce_pd_without_affinity_gets_its_zone_label_as_the_csi_key() {
        let pv = json!({
            "metadata": {"labels": {BETA_ZONE: "us-east-1", BETA_REGION: "us-east-1a"}},
            "spec": {"gcePersistentDisk": {"pdName": "d"}}
        });
        let m = of_volume(&pv).unwrap();
        assert_eq!(m.plugin, "kubernetes.io/gce-pd");
        let a = m.translated.unwrap();
        assert!(a.matches(&labels(&[("topology.gke.io/zone", "us-east-1")])));
        assert!(!a.matches(&labels(&[("topology.gke.io/zone", "us-east-2")])));
        assert!(!a.matches(&labels(&[(BETA_ZONE, "us-east-1")])));
    }

    #[test]
    fn zone_requirements_are_renamed_and_beta_regions_become_ga() {
        let pv = json!({"spec": {"cinder": {"volumeID": "v"}, "nodeAffinity": {"required": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": BETA_ZONE, "operator": "In", "values": ["z1"]},
                {"key": BETA_REGION, "operator": "In", "values": ["r1"]}]}]}}}});
        let a = of_volume(&pv).unwrap().translated.unwrap();
        let key = "topology.cinder.csi.openstack.org/zone";
        assert!(a.matches(&labels(&[(key, "z1"), (GA_REGION, "r1")])));
        assert!(!a.matches(&labels(&[(BETA_ZONE, "z1"), (BETA_REGION, "r1")])));
    }

    #[test]
    fn a_regional_gce_pd_with_malformed_zones_fails_translation() {
        let pv = json!({"metadata": {"labels": {GA_ZONE: "us-central1-a__elsewhere"}},
                        "spec": {"gcePersistentDisk": {"pdName": "d"}}});
        let err = of_volume(&pv).unwrap().translated.unwrap_err();
        assert_eq!(
            err,
            "could not translate pv: failed to get region from zones: zone in unexpected \
             format, expected: {locale}-{region}-{zone}, got: elsewhere"
        );
        let two = json!({"metadata": {"labels": {GA_ZONE: "us-central1-a__us-east1-b"}},
                         "spec": {"gcePersistentDisk": {"pdName": "d"}}});
        assert!(of_volume(&two).unwrap().translated.unwrap_err().ends_with(
            "multiple or no regions gotten from zones, got: map[us-central1:{} us-east1:{}]"
        ));
        let regional = json!({"metadata": {"labels": {GA_ZONE: "us-central1-a__us-central1-b"}},
                              "spec": {"gcePersistentDisk": {"pdName": "d"}}});
        let a = of_volume(&regional).unwrap().translated.unwrap();
        assert!(a.matches(&labels(&[("topology.gke.io/zone", "us-central1-b")])));
    }

    #[test]
    fn other_sources_are_not_translated_and_csinodes_list_plugins() {
        assert!(of_volume(&json!({"spec": {"csi": {"driver": "x"}}})).is_none());
        assert!(of_volume(&json!({"spec": {"awsElasticBlockStore": {"volumeID": "v"}}})).is_none());
        let n = json!({"metadata": {"annotations": {MIGRATED_PLUGINS: "kubernetes.io/gce-pd,kubernetes.io/cinder"}}});
        assert!(migrated_plugins(&n).contains("kubernetes.io/cinder"));
        assert!(migrated_plugins(&json!({})).is_empty());
    }
}
