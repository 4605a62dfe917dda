//! DotProdScore: the FGD paper simulator's dot-product heuristic
//! (`dot_product_score.go`, run with `-dimext merge -norm max`): with the
//! node's free vector `[cpu left, Σ GPU milli left]` and the pod's
//! `[cpu, gpu-count × gpu-milli]`, each divided by `[128 cores, 8 GPUs]`,
//! the score is `int(100 × (1 − dot / 2))`: the node the pod aligns with
//! least wins. A node with too little CPU scores 0. No NormalizeScore.

use sift_gpu_share_common::{
    NODE_LABELS, POD_ANNOTATION_KEYS, clamp_score, gpu_node, pre_score_pod,
};
use sift_gpu_share_logic::gpu::GpuPod;
use sift_gpu_share_logic::policy::dot_prod_score;
use sift_sdk::{
    Args, ClusterView, ExtensionPoints, Node, NodeFields, Plugin, Pod, PreScore, Status,
    export_plugin,
};

pub struct DotProdScore;

impl Plugin for DotProdScore {
    const NAME: &'static str = "DotProdScore";
    const EXTENSION_POINTS: ExtensionPoints = ExtensionPoints::SCORE;
    const NODE_FIELDS: NodeFields = NodeFields::RESOURCES.union(NodeFields::LABELS);
    const NODE_LABELS: Option<&'static [&'static str]> = Some(NODE_LABELS);
    const POD_ANNOTATION_KEYS: &'static [&'static str] = POD_ANNOTATION_KEYS;
    type PodState = GpuPod;

    fn new(args: Args) -> Result<Self, String> {
        if !args.is_empty() {
            return Err("DotProdScore takes no arguments".into());
        }
        Ok(DotProdScore)
    }

    fn pre_score(&self, pod: &Pod, _: &[&Node], _: &dyn ClusterView) -> PreScore<GpuPod> {
        pre_score_pod(pod)
    }

    fn score(&self, _: &Pod, p: &GpuPod, node: &Node) -> Result<i64, Status> {
        Ok(clamp_score(dot_prod_score(&gpu_node(node, false), p)))
    }
}

export_plugin!(DotProdScore);
