//! GpuClusteringScore: the FGD paper simulator's GPU clustering
//! (`gpu_clustering_score.go`): pods of one GPU shape (`share-gpu` for a
//! fraction of one GPU, `<n>-gpu` for n whole GPUs) gather on the same
//! nodes. With `fill = 25 × (8000 − Σ GPU milli left) / 8000`: a node
//! hosting only pods of the pod's shape scores `fill + 75`, of its shape
//! among others `fill + 50`, no GPU pod `fill + 25`, only other shapes
//! `fill`. CPU-only pods score 0. No NormalizeScore.
//!
//! The shapes on a node come from its bound pods' annotations
//! (`alibabacloud.com/gpu-count`, else the number of ids in
//! `alibabacloud.com/gpu-index`, and `alibabacloud.com/gpu-milli`).

use sift_gpu_share_common::{
    NODE_LABELS, POD_ANNOTATION_KEYS, clamp_score, gpu_node, pre_score_pod,
};
use sift_gpu_share_logic::gpu::GpuPod;
use sift_gpu_share_logic::policy::gpu_clustering_score;
use sift_sdk::{
    Args, ClusterView, ExtensionPoints, Node, NodeFields, Plugin, Pod, PreScore, Status,
    export_plugin,
};

pub struct GpuClusteringScore;

impl Plugin for GpuClusteringScore {
    const NAME: &'static str = "GpuClusteringScore";
    const EXTENSION_POINTS: ExtensionPoints = ExtensionPoints::SCORE;
    const NODE_FIELDS: NodeFields = NodeFields::RESOURCES.union(NodeFields::LABELS);
    const NODE_LABELS: Option<&'static [&'static str]> = Some(NODE_LABELS);
    const POD_ANNOTATION_KEYS: &'static [&'static str] = POD_ANNOTATION_KEYS;
    type PodState = GpuPod;

    fn new(args: Args) -> Result<Self, String> {
        if !args.is_empty() {
            return Err("GpuClusteringScore takes no arguments".into());
        }
        Ok(GpuClusteringScore)
    }

    fn pre_score(&self, pod: &Pod, _: &[&Node], _: &dyn ClusterView) -> PreScore<GpuPod> {
        pre_score_pod(pod)
    }

    fn score(&self, _: &Pod, p: &GpuPod, node: &Node) -> Result<i64, Status> {
        Ok(clamp_score(gpu_clustering_score(&gpu_node(node, true), p)))
    }
}

export_plugin!(GpuClusteringScore);
