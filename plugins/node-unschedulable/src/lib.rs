//! NodeUnschedulable: keeps pods off cordoned nodes (`spec.unschedulable`)
//! unless they tolerate the `node.kubernetes.io/unschedulable:NoSchedule` taint.

use sift_sdk::toleration::{TAINT_NODE_UNSCHEDULABLE, any_tolerates};
use sift_sdk::{
    Args, ClusterView, Node, NodeFields, Plugin, Pod, Prepare, Status, Taint, export_plugin,
};

pub const ERR_REASON_UNSCHEDULABLE: &str = "node(s) were unschedulable";

pub struct NodeUnschedulable;

impl Plugin for NodeUnschedulable {
    const NAME: &'static str = "NodeUnschedulable";
    const NODE_FIELDS: NodeFields = NodeFields::UNSCHEDULABLE;
    /// Whether the pod tolerates the unschedulable taint.
    type PodState = bool;

    fn new(_: Args) -> Result<Self, String> {
        Ok(NodeUnschedulable)
    }

    fn prepare(&self, pod: &Pod, _cluster: &dyn ClusterView) -> Prepare<bool> {
        let taint = Taint {
            key: TAINT_NODE_UNSCHEDULABLE.into(),
            value: String::new(),
            effect: "NoSchedule".into(),
        };
        Prepare::Proceed(any_tolerates(&pod.tolerations, &taint))
    }

    fn filter(&self, _: &Pod, tolerates: &bool, node: &Node) -> Status {
        if !node.unschedulable || *tolerates {
            return Status::success();
        }
        Status::unresolvable(ERR_REASON_UNSCHEDULABLE)
    }
}

export_plugin!(NodeUnschedulable);
