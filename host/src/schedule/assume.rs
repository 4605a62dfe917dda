//! The objects a pod's PreBind writes, assumed in the live cache while the
//! writes are in flight, as upstream's assume cache (`assumecache`) keeps
//! them for VolumeBinding and DynamicResources.
//!
//! Once a pod is assumed on its node, the claims, volumes and device
//! allocations its PreBind will write must count for the next cycle at
//! once, or the next pod could be given the same volume or device. The
//! watch may still bring the object as it was before the write: such an
//! event (a resourceVersion not newer than the one the write was based
//! on) leaves the assumed copy in place. A newer version replaces it:
//! the write landed, or someone else changed the object (then the write
//! fails on its resourceVersion and the pod is retried). When the pod's
//! writes or bind fail, its assumed objects go back to the watch's latest
//! version, as upstream's Unreserve restores its caches.

use crate::cluster::ClusterState;
use crate::engine::schedule::PreBindWrite;
use crate::input::ApiObject;
use std::collections::{BTreeSet, HashMap};

/// One assumed object.
struct Entry {
    /// The watch's latest version (`None`: the object was not cached).
    latest: Option<ApiObject>,
    /// The resourceVersion the writes were based on.
    base: String,
    /// Pods whose in-flight writes assumed it (a claim shared by pods).
    pods: BTreeSet<String>,
}

/// Assumed objects by kind and key.
#[derive(Default)]
pub struct AssumedObjects {
    entries: HashMap<(&'static str, String), Entry>,
}

/// `metadata.resourceVersion`, or "" when unset.
pub fn resource_version(o: &ApiObject) -> &str {
    o.value["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default()
}

/// Whether `new` is a later version than `base`: resourceVersions are
/// compared as integers, as upstream's assume cache does; one that is
/// not an integer counts as newer unless it is the same string.
fn newer(new: &str, base: &str) -> bool {
    match (new.parse::<u64>(), base.parse::<u64>()) {
        (Ok(n), Ok(b)) => n > b,
        _ => new != base,
    }
}

impl AssumedObjects {
    /// Puts `pod`'s PreBind writes in the cache, remembering what the
    /// watch last showed of each object.
    pub fn assume(&mut self, cache: &mut ClusterState, pod: &str, writes: &[PreBindWrite]) {
        for w in writes {
            let o = &w.object;
            let entry = self
                .entries
                .entry((o.kind, o.key.clone()))
                .or_insert_with(|| Entry {
                    latest: cache.api_objects().get(o.kind, &o.key).map(|v| ApiObject {
                        kind: o.kind,
                        key: o.key.clone(),
                        value: std::sync::Arc::new(v.clone()),
                    }),
                    base: resource_version(o).to_string(),
                    pods: BTreeSet::new(),
                });
            entry.pods.insert(pod.to_string());
            cache.edit_api_objects(|os| os.upsert(o));
        }
    }

    /// A watched version of an object: whether the cache takes it (false
    /// while it is not newer than the version an assumed write was based
    /// on; it is remembered as the latest then).
    pub fn observe(&mut self, o: &ApiObject) -> bool {
        // Nothing assumed, the usual case: no key to build per event.
        if self.entries.is_empty() {
            return true;
        }
        let id = (o.kind, o.key.clone());
        let Some(entry) = self.entries.get_mut(&id) else {
            return true;
        };
        if newer(resource_version(o), &entry.base) {
            self.entries.remove(&id);
            return true;
        }
        entry.latest = Some(o.clone());
        false
    }

    /// The object was deleted: nothing of it stays assumed.
    pub fn deleted(&mut self, kind: &'static str, key: &str) {
        self.entries.remove(&(kind, key.to_string()));
    }

    /// `pod`'s writes failed or its bind did: the objects it alone assumed
    /// go back to the watch's latest version.
    pub fn restore(&mut self, cache: &mut ClusterState, pod: &str) {
        let mut back = Vec::new();
        self.entries.retain(|(kind, key), entry| {
            if !entry.pods.remove(pod) || !entry.pods.is_empty() {
                return true;
            }
            back.push((*kind, key.clone(), entry.latest.take()));
            false
        });
        cache.edit_api_objects(|os| {
            for (kind, key, latest) in back {
                match latest {
                    Some(o) => os.upsert(&o),
                    None => os.remove(kind, &key),
                };
            }
        });
    }

    /// `pod` is bound: its writes landed, and the watch brings them.
    pub fn settle(&mut self, pod: &str) {
        for entry in self.entries.values_mut() {
            entry.pods.remove(pod);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn claim(rv: &str, allocated: bool) -> ApiObject {
        let mut v = json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": "gpu", "namespace": "default", "resourceVersion": rv},
            "spec": {}});
        if allocated {
            v["status"] = json!({"allocation": {"devices": {"results": []}}});
        }
        ApiObject::new("ResourceClaim", v).unwrap()
    }

    fn cached(cache: &ClusterState) -> Option<Value> {
        cache
            .api_objects()
            .get("ResourceClaim", "default/gpu")
            .cloned()
    }

    fn write(o: ApiObject) -> PreBindWrite {
        PreBindWrite {
            plugin: "DynamicResources".into(),
            object: o,
        }
    }

    #[test]
    fn an_assumed_write_stands_until_a_newer_version_is_watched() {
        let mut cache = ClusterState::new("sift", &[]);
        cache.edit_api_objects(|os| os.upsert(&claim("5", false)));
        let mut assumed = AssumedObjects::default();
        assumed.assume(&mut cache, "default/a", &[write(claim("5", true))]);
        assert!(cached(&cache).unwrap().get("status").is_some());
        // The watch replays the version the write was based on: ignored.
        assert!(!assumed.observe(&claim("5", false)));
        assert!(!assumed.observe(&claim("4", false)));
        // The write's echo: taken, and nothing stays assumed.
        assert!(assumed.observe(&claim("6", true)));
        assert!(assumed.is_empty());
    }

    #[test]
    fn a_failed_write_restores_the_latest_watched_version() {
        let mut cache = ClusterState::new("sift", &[]);
        cache.edit_api_objects(|os| os.upsert(&claim("5", false)));
        let mut assumed = AssumedObjects::default();
        assumed.assume(&mut cache, "default/a", &[write(claim("5", true))]);
        assumed.assume(&mut cache, "default/b", &[write(claim("5", true))]);
        // Shared by two pods: one's failure keeps it for the other.
        assumed.restore(&mut cache, "default/a");
        assert!(cached(&cache).unwrap().get("status").is_some());
        assumed.restore(&mut cache, "default/b");
        assert_eq!(cached(&cache).unwrap()["metadata"]["resourceVersion"], "5");
        assert!(cached(&cache).unwrap().get("status").is_none());
        // An object the cache did not have goes away again.
        let mut empty = ClusterState::new("sift", &[]);
        assumed.assume(&mut empty, "default/c", &[write(claim("1", true))]);
        assumed.restore(&mut empty, "default/c");
        assert_eq!(cached(&empty), None);
        // A bound pod's objects are not restored by anyone's failure.
        assumed.assume(&mut cache, "default/d", &[write(claim("5", true))]);
        assumed.settle("default/d");
        assumed.restore(&mut cache, "default/d");
        assert!(cached(&cache).unwrap().get("status").is_some());
    }
}
