//! TaintToleration: a pod must tolerate every NoSchedule and NoExecute
//! taint of the node (PreferNoSchedule only affects scoring).

use sift_sdk::toleration::{find_untolerated, is_do_not_schedule};
use sift_sdk::{Args, ClusterView, Node, NodeFields, Plugin, Pod, Prepare, Status, export_plugin};

pub const ERR_REASON_UNTOLERATED: &str = "node(s) had untolerated taint(s)";

pub struct TaintToleration;

impl Plugin for TaintToleration {
    const NAME: &'static str = "TaintToleration";
    const NODE_FIELDS: NodeFields = NodeFields::TAINTS;
    type PodState = ();

    fn new(_: Args) -> Result<Self, String> {
        Ok(TaintToleration)
    }

    fn prepare(&self, _: &Pod, _cluster: &dyn ClusterView) -> Prepare<()> {
        Prepare::Proceed(())
    }

    fn filter(&self, pod: &Pod, _: &(), node: &Node) -> Status {
        match find_untolerated(&node.taints, &pod.tolerations, is_do_not_schedule) {
            None => Status::success(),
            Some(_) => Status::unresolvable(ERR_REASON_UNTOLERATED),
        }
    }
}

export_plugin!(TaintToleration);
