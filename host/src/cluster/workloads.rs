//! The Services and controllers that give a pod its workload selector:
//! kube-scheduler's `helper.DefaultSelector`, which PodTopologySpread's
//! default constraints spread over (the system default spread every
//! Deployment's pods get).
//!
//! The selector merges the `spec.selector` maps of the Services in the
//! pod's namespace that select it (a Service without a selector selects
//! nothing), then, by the pod's controller reference:
//! - a ReplicationController (`v1`): its selector map merged in;
//! - a ReplicaSet or StatefulSet (`apps/v1`): its label selector's
//!   requirements added (an unset selector adds nothing).
//!
//! A controller is found by name in the pod's namespace, whether or not
//! its selector matches the pod; one that is not there adds nothing. The
//! result is `None` when it has no requirement: nothing to spread over.

use crate::input::Workload;
use crate::input::kube::label_selector;
use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::core::v1 as k8s;
use sift_sdk::{LabelSelector, Pod, SelectorRequirement};
use std::collections::{BTreeMap, HashMap};

/// The controller kinds whose selector counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Controller {
    ReplicationController,
    ReplicaSet,
    StatefulSet,
}

impl Controller {
    /// The kind an owner reference names, by its API group and kind.
    fn of(api_version: &str, kind: &str) -> Option<Controller> {
        match (api_version, kind) {
            ("v1", "ReplicationController") => Some(Controller::ReplicationController),
            ("apps/v1", "ReplicaSet") => Some(Controller::ReplicaSet),
            ("apps/v1", "StatefulSet") => Some(Controller::StatefulSet),
            _ => None,
        }
    }
}

/// A controller's selector as its API has it.
#[derive(Clone, Debug, PartialEq)]
enum Selects {
    /// A ReplicationController's `spec.selector` map.
    Map(BTreeMap<String, String>),
    /// A ReplicaSet's or StatefulSet's `spec.selector`.
    Labels(Option<LabelSelector>),
}

/// Services by namespace and name (their selector maps; `None`: unset),
/// and controllers by kind, namespace and name.
#[derive(Clone, Debug, Default)]
pub struct Workloads {
    services: HashMap<String, BTreeMap<String, Option<BTreeMap<String, String>>>>,
    controllers: HashMap<(Controller, String, String), Selects>,
}

fn meta(m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> (String, String) {
    (
        m.namespace.clone().unwrap_or_else(|| "default".into()),
        m.name.clone().unwrap_or_default(),
    )
}

impl Workloads {
    pub fn is_empty(&self) -> bool {
        self.services.is_empty() && self.controllers.is_empty()
    }

    /// Adds or replaces a Service or controller.
    pub fn upsert(&mut self, w: &Workload) {
        match w {
            Workload::Service(s) => self.upsert_service(s),
            Workload::ReplicationController(rc) => self.upsert_replication_controller(rc),
            Workload::ReplicaSet(rs) => self.upsert_replica_set(rs),
            Workload::StatefulSet(ss) => self.upsert_stateful_set(ss),
        }
    }

    pub fn upsert_service(&mut self, s: &k8s::Service) {
        let (namespace, name) = meta(&s.metadata);
        let selector = s.spec.as_ref().and_then(|spec| spec.selector.clone());
        self.services
            .entry(namespace)
            .or_default()
            .insert(name, selector);
    }

    pub fn upsert_replication_controller(&mut self, rc: &k8s::ReplicationController) {
        let (namespace, name) = meta(&rc.metadata);
        let map = rc
            .spec
            .as_ref()
            .and_then(|s| s.selector.clone())
            .unwrap_or_default();
        self.controllers.insert(
            (Controller::ReplicationController, namespace, name),
            Selects::Map(map),
        );
    }

    pub fn upsert_replica_set(&mut self, rs: &apps::ReplicaSet) {
        let (namespace, name) = meta(&rs.metadata);
        let selector = rs.spec.as_ref().map(|s| label_selector(&s.selector));
        self.controllers.insert(
            (Controller::ReplicaSet, namespace, name),
            Selects::Labels(selector),
        );
    }

    pub fn upsert_stateful_set(&mut self, ss: &apps::StatefulSet) {
        let (namespace, name) = meta(&ss.metadata);
        let selector = ss.spec.as_ref().map(|s| label_selector(&s.selector));
        self.controllers.insert(
            (Controller::StatefulSet, namespace, name),
            Selects::Labels(selector),
        );
    }

    /// Forgets a Service or controller by kind (as [`Workload::meta`]
    /// names it), namespace and name; whether it was there.
    pub fn remove(&mut self, kind: &str, namespace: &str, name: &str) -> bool {
        let controller = match kind {
            "Service" => {
                let Some(ns) = self.services.get_mut(namespace) else {
                    return false;
                };
                let had = ns.remove(name).is_some();
                if ns.is_empty() {
                    self.services.remove(namespace);
                }
                return had;
            }
            "ReplicationController" => Controller::ReplicationController,
            "ReplicaSet" => Controller::ReplicaSet,
            "StatefulSet" => Controller::StatefulSet,
            _ => return false,
        };
        self.controllers
            .remove(&(controller, namespace.to_string(), name.to_string()))
            .is_some()
    }

    /// The pod's workload selector (see the module's doc).
    pub fn selector_of(&self, pod: &Pod) -> Option<LabelSelector> {
        let mut set: BTreeMap<String, String> = BTreeMap::new();
        let labels = &pod.labels;
        for selector in self.services.get(&pod.namespace).into_iter().flatten() {
            let Some(map) = selector.1 else {
                continue;
            };
            if map.iter().all(|(k, v)| labels.get(k) == Some(v.as_str())) {
                set.extend(map.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
        let mut expressions = Vec::new();
        let owner = pod.owner_references.iter().find(|o| o.controller);
        let controller = owner.and_then(|o| {
            let kind = Controller::of(&o.api_version, &o.kind)?;
            self.controllers
                .get(&(kind, pod.namespace.clone(), o.name.clone()))
        });
        match controller {
            Some(Selects::Map(map)) => set.extend(map.clone()),
            Some(Selects::Labels(Some(s))) => {
                expressions.extend(s.match_labels.iter().map(|(k, v)| SelectorRequirement {
                    key: k.clone(),
                    operator: "In".into(),
                    values: vec![v.clone()],
                }));
                expressions.extend(s.match_expressions.iter().cloned());
            }
            Some(Selects::Labels(None)) | None => {}
        }
        if set.is_empty() && expressions.is_empty() {
            return None;
        }
        Some(LabelSelector {
            match_labels: set.into_iter().collect(),
            match_expressions: expressions,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use sift_sdk::OwnerReference;

    fn workloads(objects: serde_json::Value) -> Workloads {
        let mut w = Workloads::default();
        for o in objects.as_array().unwrap() {
            let meta = o["metadata"].clone();
            match o["kind"].as_str().unwrap() {
                "Service" => w.upsert_service(&serde_json::from_value(o.clone()).unwrap()),
                "ReplicaSet" => w.upsert_replica_set(&serde_json::from_value(o.clone()).unwrap()),
                "StatefulSet" => w.upsert_stateful_set(&serde_json::from_value(o.clone()).unwrap()),
                "ReplicationController" => {
                    w.upsert_replication_controller(&serde_json::from_value(o.clone()).unwrap())
                }
                k => panic!("{k} {meta}"),
            }
        }
        w
    }

    fn pod(labels: &[(&str, &str)], owner: Option<(&str, &str, &str, bool)>) -> Pod {
        Pod {
            namespace: "default".into(),
            labels: labels.iter().copied().collect(),
            owner_references: owner
                .map(|(api_version, kind, name, controller)| OwnerReference {
                    api_version: api_version.into(),
                    kind: kind.into(),
                    name: name.into(),
                    controller,
                })
                .into_iter()
                .collect(),
            ..Pod::default()
        }
    }

    fn req(key: &str, op: &str, values: &[&str]) -> SelectorRequirement {
        SelectorRequirement {
            key: key.into(),
            operator: op.into(),
            values: values.iter().map(|v| v.to_string()).collect(),
        }
    }

    #[test]
    fn services_that_select_the_pod_merge_their_selectors() {
        let w = workloads(json!([
            {"kind": "Service", "metadata": {"name": "web", "namespace": "default"},
             "spec": {"selector": {"app": "web"}}},
            {"kind": "Service", "metadata": {"name": "tier", "namespace": "default"},
             "spec": {"selector": {"tier": "front"}}},
            // Another namespace, another app, no selector: none selects.
            {"kind": "Service", "metadata": {"name": "web", "namespace": "other"},
             "spec": {"selector": {"app": "web"}}},
            {"kind": "Service", "metadata": {"name": "db", "namespace": "default"},
             "spec": {"selector": {"app": "db"}}},
            {"kind": "Service", "metadata": {"name": "external", "namespace": "default"},
             "spec": {}},
        ]));
        let s = w
            .selector_of(&pod(&[("app", "web"), ("tier", "front")], None))
            .unwrap();
        assert_eq!(
            s.match_labels,
            [
                ("app".into(), "web".into()),
                ("tier".into(), "front".into())
            ]
        );
        assert!(s.match_expressions.is_empty());
        assert_eq!(w.selector_of(&pod(&[("app", "api")], None)), None);
    }

    #[test]
    fn the_controlling_replica_set_adds_its_requirements_by_name_and_api() {
        let w = workloads(json!([
            {"kind": "ReplicaSet", "metadata": {"name": "web-1", "namespace": "default"},
             "spec": {"selector": {"matchLabels": {"app": "web"},
                      "matchExpressions": [{"key": "track", "operator": "NotIn", "values": ["canary"]}]}}},
            {"kind": "ReplicationController", "metadata": {"name": "old", "namespace": "default"},
             "spec": {"selector": {"app": "old"}}},
        ]));
        let owned = pod(
            &[("app", "web")],
            Some(("apps/v1", "ReplicaSet", "web-1", true)),
        );
        let s = w.selector_of(&owned).unwrap();
        assert!(s.match_labels.is_empty());
        assert_eq!(
            s.match_expressions,
            [
                req("app", "In", &["web"]),
                req("track", "NotIn", &["canary"])
            ]
        );
        // Not the controller, another API group, or a missing owner: nothing.
        for owner in [
            ("apps/v1", "ReplicaSet", "web-1", false),
            ("extensions/v1beta1", "ReplicaSet", "web-1", true),
            ("apps/v1", "ReplicaSet", "gone", true),
        ] {
            assert_eq!(w.selector_of(&pod(&[("app", "web")], Some(owner))), None);
        }
        // A ReplicationController's map merges as a Service's does, and it
        // counts whether or not it selects the pod, as upstream looks it up
        // by name.
        let rc = pod(
            &[("app", "web")],
            Some(("v1", "ReplicationController", "old", true)),
        );
        assert_eq!(
            w.selector_of(&rc).unwrap().match_labels,
            [("app".into(), "old".into())]
        );
    }
}
