//! RuntimeClassProbe: the escape hatch, end to end. It reads two fields the
//! contract does not model, from the whole objects: the pod's
//! `spec.runtimeClassName` and the node's
//! `status.nodeInfo.containerRuntimeVersion` (e.g. `containerd://1.7.2`),
//! and passes a node only if the runtime's name starts with the class name.
//! Built by `scripts/build-plugins.sh` into `target/test-plugins/`; not a
//! bundled plugin.

use sift_sdk::{
    Args, ClusterView, Node, NodeFields, Pod, Predicate, Prepare, Status, export_predicate,
};

pub const ERR_REASON: &str = "node(s) run another container runtime";

pub struct RuntimeClassProbe;

fn field<'a>(json: &'a serde_json::Value, path: &[&str]) -> Option<&'a str> {
    path.iter()
        .try_fold(json, |v, key| v.get(key))
        .and_then(|v| v.as_str())
}

impl Predicate for RuntimeClassProbe {
    const NAME: &'static str = "RuntimeClassProbe";
    const NODE_FIELDS: NodeFields = NodeFields::OBJECT;
    const POD_OBJECT: bool = true;
    /// The runtime class name.
    type PodState = String;

    fn new(_: Args) -> Result<Self, String> {
        Ok(RuntimeClassProbe)
    }

    fn prepare(&self, pod: &Pod, _cluster: &dyn ClusterView) -> Prepare<String> {
        let Some(object) = &pod.object else {
            return Prepare::Reject(Status::error("the host sent no pod object"));
        };
        let json: serde_json::Value = match serde_json::from_str(object) {
            Ok(v) => v,
            Err(e) => return Prepare::Reject(Status::error(format!("pod object: {e}"))),
        };
        match field(&json, &["spec", "runtimeClassName"]) {
            Some(class) if !class.is_empty() => Prepare::Proceed(class.to_string()),
            _ => Prepare::Skip,
        }
    }

    fn filter(&self, _pod: &Pod, class: &String, node: &Node) -> Status {
        let Some(object) = &node.object else {
            return Status::error("the host sent no node object");
        };
        let json: serde_json::Value = match serde_json::from_str(object) {
            Ok(v) => v,
            Err(e) => return Status::error(format!("node object: {e}")),
        };
        let runtime = field(&json, &["status", "nodeInfo", "containerRuntimeVersion"]);
        if runtime.is_some_and(|r| r.starts_with(class.as_str())) {
            Status::success()
        } else {
            Status::unschedulable(ERR_REASON)
        }
    }
}

export_predicate!(RuntimeClassProbe);
