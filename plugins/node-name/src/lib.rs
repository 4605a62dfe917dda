//! NodeName: a pod that names its node (`spec.nodeName`) fits only there.

use sift_sdk::{Args, ClusterView, Node, NodeFields, Plugin, Pod, Prepare, Status, export_plugin};

pub const ERR_REASON: &str = "node(s) didn't match the requested node name";

pub struct NodeName;

impl Plugin for NodeName {
    const NAME: &'static str = "NodeName";
    const NODE_FIELDS: NodeFields = NodeFields::NONE;
    type PodState = ();

    fn new(_: Args) -> Result<Self, String> {
        Ok(NodeName)
    }

    fn prepare(&self, _: &Pod, _cluster: &dyn ClusterView) -> Prepare<()> {
        Prepare::Proceed(())
    }

    fn filter(&self, pod: &Pod, _: &(), node: &Node) -> Status {
        if pod.node_name.is_empty() || pod.node_name == node.name {
            return Status::success();
        }
        Status::unresolvable(ERR_REASON)
    }
}

export_plugin!(NodeName);
