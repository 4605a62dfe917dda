//! GpuPackingScore: the FGD paper simulator's GPU packing
//! (`gpu_packing_score.go`), in three tiers: a node where the pod fits on
//! partly used GPUs scores 50..=100 (the fuller the better), one where it
//! needs fully free GPUs of a node already in use 33..=50, an idle node
//! below 33. CPU-only pods score 0 everywhere. No NormalizeScore.

use sift_gpu_share_common::{
    NODE_LABELS, POD_ANNOTATION_KEYS, clamp_score, gpu_node, pre_score_pod,
};
use sift_gpu_share_logic::gpu::GpuPod;
use sift_gpu_share_logic::policy::gpu_packing_score;
use sift_sdk::{
    Args, ClusterView, ExtensionPoints, Node, NodeFields, Plugin, Pod, PreScore, Status,
    export_plugin,
};

pub struct GpuPackingScore;

impl Plugin for GpuPackingScore {
    const NAME: &'static str = "GpuPackingScore";
    const EXTENSION_POINTS: ExtensionPoints = ExtensionPoints::SCORE;
    const NODE_FIELDS: NodeFields = NodeFields::RESOURCES.union(NodeFields::LABELS);
    const NODE_LABELS: Option<&'static [&'static str]> = Some(NODE_LABELS);
    const POD_ANNOTATION_KEYS: &'static [&'static str] = POD_ANNOTATION_KEYS;
    type PodState = GpuPod;

    fn new(args: Args) -> Result<Self, String> {
        if !args.is_empty() {
            return Err("GpuPackingScore takes no arguments".into());
        }
        Ok(GpuPackingScore)
    }

    fn pre_score(&self, pod: &Pod, _: &[&Node], _: &dyn ClusterView) -> PreScore<GpuPod> {
        pre_score_pod(pod)
    }

    fn score(&self, _: &Pod, p: &GpuPod, node: &Node) -> Result<i64, Status> {
        Ok(clamp_score(gpu_packing_score(&gpu_node(node, false), p)))
    }
}

export_plugin!(GpuPackingScore);
