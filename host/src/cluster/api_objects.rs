//! The objects plugins read whole through the cluster view (contract
//! 0.6's `sync-objects`): PersistentVolumeClaims, PersistentVolumes,
//! StorageClasses and the CSI objects, by kind and key. Kept as parsed
//! JSON: the host never interprets them, the volume plugins do, as
//! upstream's plugins read them from their listers.

use crate::input::ApiObject;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Objects by kind, then key (`namespace/name` or `name`). Snapshots share
/// it; the state copies it on write.
#[derive(Clone, Debug, Default)]
pub struct ApiObjects {
    kinds: BTreeMap<&'static str, BTreeMap<String, Arc<Value>>>,
}

impl ApiObjects {
    /// Adds or replaces an object; whether anything changed.
    pub fn upsert(&mut self, o: &ApiObject) -> bool {
        let table = self.kinds.entry(o.kind).or_default();
        match table.get(&o.key) {
            Some(old) if **old == *o.value => false,
            _ => {
                table.insert(o.key.clone(), o.value.clone());
                true
            }
        }
    }

    /// Forgets an object; whether it was there.
    pub fn remove(&mut self, kind: &str, key: &str) -> bool {
        self.kinds
            .get_mut(kind)
            .is_some_and(|t| t.remove(key).is_some())
    }

    pub fn get(&self, kind: &str, key: &str) -> Option<&Value> {
        self.kinds.get(kind)?.get(key).map(|v| &**v)
    }

    /// Every object of `kind`, by key.
    pub fn of_kind(&self, kind: &str) -> impl Iterator<Item = (&str, &Arc<Value>)> {
        self.kinds
            .get(kind)
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.as_str(), v))
    }

    pub fn is_empty(&self) -> bool {
        self.kinds.values().all(BTreeMap::is_empty)
    }

    /// What a holder of `old` needs to hold `self` for `kind`: the objects
    /// that are new or changed (compared by address: an unchanged object
    /// keeps its `Arc`), and the keys gone.
    pub fn changes_since<'a>(
        &'a self,
        old: Option<&ApiObjects>,
        kind: &str,
    ) -> (Vec<(&'a str, &'a Arc<Value>)>, Vec<String>) {
        let before = old.and_then(|o| o.kinds.get(kind));
        let upserts = self
            .of_kind(kind)
            .filter(|(k, v)| {
                before
                    .and_then(|b| b.get(*k))
                    .is_none_or(|o| !Arc::ptr_eq(o, v))
            })
            .collect();
        let now = self.kinds.get(kind);
        let removals = before
            .into_iter()
            .flatten()
            .filter(|(k, _)| now.is_none_or(|n| !n.contains_key(*k)))
            .map(|(k, _)| k.clone())
            .collect();
        (upserts, removals)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pvc(name: &str, volume: &str) -> ApiObject {
        ApiObject::from_value(
            "PersistentVolumeClaim",
            json!({"metadata": {"name": name, "namespace": "ns"}, "spec": {"volumeName": volume}}),
        )
        .unwrap()
        .unwrap()
    }

    #[test]
    fn changes_name_new_changed_and_gone_objects_only() {
        let mut a = ApiObjects::default();
        a.upsert(&pvc("keep", "v1"));
        a.upsert(&pvc("change", "v1"));
        a.upsert(&pvc("drop", "v1"));
        let old = a.clone();
        assert!(
            !a.upsert(&pvc("keep", "v1")),
            "an equal object is no change"
        );
        assert!(a.upsert(&pvc("change", "v2")));
        assert!(a.remove("PersistentVolumeClaim", "ns/drop"));
        a.upsert(&pvc("new", "v1"));
        let (up, gone) = a.changes_since(Some(&old), "PersistentVolumeClaim");
        let up: Vec<&str> = up.iter().map(|(k, _)| *k).collect();
        assert_eq!(up, ["ns/change", "ns/new"]);
        assert_eq!(gone, ["ns/drop"]);
        let (all, none) = a.changes_since(None, "PersistentVolumeClaim");
        assert_eq!(all.len(), 3);
        assert!(none.is_empty());
        assert_eq!(
            a.get("PersistentVolumeClaim", "ns/change").unwrap()["spec"]["volumeName"],
            "v2"
        );
    }

    #[test]
    fn a_claim_without_a_namespace_is_in_default_and_one_without_a_name_is_refused() {
        let o = ApiObject::from_value("PersistentVolumeClaim", json!({"metadata": {"name": "c"}}))
            .unwrap()
            .unwrap();
        assert_eq!(o.key, "default/c");
        let e = ApiObject::from_value("StorageClass", json!({"metadata": {}, "provisioner": "x"}))
            .unwrap()
            .unwrap_err();
        assert!(
            e.to_string().contains("StorageClass has no metadata.name"),
            "{e}"
        );
        let e = ApiObject::from_value(
            "PersistentVolume",
            json!({"metadata": {"name": "v"}, "spec": {"capacity": 5}}),
        )
        .unwrap()
        .unwrap_err();
        assert!(e.to_string().contains("spec.capacity"), "{e}");
        assert!(ApiObject::from_value("ConfigMap", json!({})).is_none());
    }
}
