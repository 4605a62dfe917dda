//! TaintToleration: a pod must tolerate every NoSchedule and NoExecute
//! taint of the node; as a scorer, the fewer PreferNoSchedule taints it
//! does not tolerate the better (`tainttoleration/taint_toleration.go`).

use sift_sdk::scoring::default_normalize;
use sift_sdk::toleration::{any_tolerates, find_untolerated, is_do_not_schedule};
use sift_sdk::{
    Args, ExtensionPoints, MAX_NODE_SCORE, Node, NodeFields, Plugin, Pod, PreScore, Status,
    Toleration, export_plugin,
};

pub const ERR_REASON_UNTOLERATED: &str = "node(s) had untolerated taint(s)";

pub struct TaintToleration;

/// The pod's tolerations that can tolerate a PreferNoSchedule taint: those
/// with that effect or none (`getAllTolerationPreferNoSchedule`). The
/// filter needs no state and gets an empty list.
#[derive(Default)]
pub struct Preferred(Vec<Toleration>);

impl Plugin for TaintToleration {
    const NAME: &'static str = "TaintToleration";
    const NODE_FIELDS: NodeFields = NodeFields::TAINTS;
    const EXTENSION_POINTS: ExtensionPoints = ExtensionPoints::FILTER.union(ExtensionPoints::SCORE);
    type PodState = Preferred;

    fn new(_: Args) -> Result<Self, String> {
        Ok(TaintToleration)
    }

    fn filter(&self, pod: &Pod, _: &Preferred, node: &Node) -> Status {
        match find_untolerated(&node.taints, &pod.tolerations, is_do_not_schedule) {
            None => Status::success(),
            Some(_) => Status::unresolvable(ERR_REASON_UNTOLERATED),
        }
    }

    /// Never skips: a pod without tolerations still prefers untainted nodes.
    fn pre_score(
        &self,
        pod: &Pod,
        _: &[&Node],
        _: &dyn sift_sdk::ClusterView,
    ) -> PreScore<Preferred> {
        let tolerations = pod
            .tolerations
            .iter()
            .filter(|t| t.effect.is_empty() || t.effect == "PreferNoSchedule")
            .cloned()
            .collect();
        PreScore::Proceed(Preferred(tolerations))
    }

    /// The number of PreferNoSchedule taints no preferred toleration
    /// tolerates (`countIntolerableTaintsPreferNoSchedule`).
    fn score(&self, _: &Pod, state: &Preferred, node: &Node) -> Result<i64, Status> {
        Ok(node
            .taints
            .iter()
            .filter(|t| t.effect == "PreferNoSchedule" && !any_tolerates(&state.0, t))
            .count() as i64)
    }

    /// Fewer intolerable taints score higher.
    fn normalize_scores(&self, _: &Pod, _: &Preferred, scores: &mut [i64]) -> Result<(), Status> {
        default_normalize(MAX_NODE_SCORE, true, scores);
        Ok(())
    }
}

export_plugin!(TaintToleration);
