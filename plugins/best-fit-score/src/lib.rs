//! BestFitScore: the FGD paper simulator's best fit (`best_fit_score.go`).
//! Raw score `int((1 − Σ_r 0.5 · (free_r − request_r) / maxSpec_r) × 100)`
//! over r = CPU (maxSpec 128 cores) and GPU milli (maxSpec 8 GPUs), so
//! the node left with the least free wins; NormalizeScore maps the raw
//! scores min–max onto 0..=100 (all equal: all 0).
//!
//! A node the pod does not fit (CPU, GPU milli or model) is an error, as
//! in the simulator: use it behind NodeResourcesFit and GpuShare.

use sift_gpu_share_common::{NODE_LABELS, POD_ANNOTATION_KEYS, gpu_node, pre_score_pod};
use sift_gpu_share_logic::gpu::GpuPod;
use sift_gpu_share_logic::policy::{best_fit_raw_score, normalize_scores};
use sift_sdk::{
    Args, ClusterView, ExtensionPoints, Node, NodeFields, Plugin, Pod, PreScore, Status,
    export_plugin,
};

pub struct BestFitScore;

impl Plugin for BestFitScore {
    const NAME: &'static str = "BestFitScore";
    const EXTENSION_POINTS: ExtensionPoints = ExtensionPoints::SCORE;
    const NODE_FIELDS: NodeFields = NodeFields::RESOURCES.union(NodeFields::LABELS);
    const NODE_LABELS: Option<&'static [&'static str]> = Some(NODE_LABELS);
    const POD_ANNOTATION_KEYS: &'static [&'static str] = POD_ANNOTATION_KEYS;
    type PodState = GpuPod;

    fn new(args: Args) -> Result<Self, String> {
        if !args.is_empty() {
            return Err("BestFitScore takes no arguments".into());
        }
        Ok(BestFitScore)
    }

    fn pre_score(&self, pod: &Pod, _: &[&Node], _: &dyn ClusterView) -> PreScore<GpuPod> {
        pre_score_pod(pod)
    }

    fn score(&self, _: &Pod, p: &GpuPod, node: &Node) -> Result<i64, Status> {
        best_fit_raw_score(&gpu_node(node), p).ok_or_else(|| {
            Status::error(format!(
                "pod does not fit node {} (cpu, GPU milli or model): filter with NodeResourcesFit and GpuShare",
                node.name
            ))
        })
    }

    fn normalize_scores(&self, _: &Pod, _: &GpuPod, scores: &mut [i64]) -> Result<(), Status> {
        normalize_scores(scores);
        Ok(())
    }
}

export_plugin!(BestFitScore);
