//! FGDScore: Fragmentation Gradient Descent (Weng et al., USENIX ATC '23;
//! `fgd_score.go` of the paper's simulator). A node's fragmentation
//! `F = Σ_m p_m · frag_m` is the idle GPU milli that the trace's typical
//! pods m (with frequencies p_m) could not use there; the score is
//! `int(sigmoid((F before − F after placing the pod) / 1000) × 100)`, so
//! the node whose fragmentation grows least (or falls most) wins. For a
//! GPU share the pod is tried on every GPU that fits and the best is
//! kept. No NormalizeScore.
//!
//! Arguments: `typicalPods` (required: without them every PreScore
//! fails), the classes of the original,
//! untuned trace with their frequencies (`sift trace openb --replay fgd`
//! writes them). Reserve with GpuShare's `gpuSelection: fgd` to place the
//! pod on the GPU this score assumed.

use serde::Deserialize;
use sift_gpu_share_common::{
    NODE_LABELS, POD_ANNOTATION_KEYS, TypicalPodArg, clamp_score, gpu_node, pre_score_pod,
    typical_pods_from_args,
};
use sift_gpu_share_logic::frag::TypicalPods;
use sift_gpu_share_logic::gpu::GpuPod;
use sift_gpu_share_logic::policy::fgd_score;
use sift_sdk::{
    Args, ClusterView, ExtensionPoints, Node, NodeFields, Plugin, Pod, PreScore, Status,
    export_plugin,
};

pub struct FgdScore {
    typical: TypicalPods,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FgdArgs {
    #[serde(default)]
    typical_pods: Vec<TypicalPodArg>,
}

impl Plugin for FgdScore {
    const NAME: &'static str = "FGDScore";
    const EXTENSION_POINTS: ExtensionPoints = ExtensionPoints::SCORE;
    const NODE_FIELDS: NodeFields = NodeFields::RESOURCES.union(NodeFields::LABELS);
    const NODE_LABELS: Option<&'static [&'static str]> = Some(NODE_LABELS);
    const POD_ANNOTATION_KEYS: &'static [&'static str] = POD_ANNOTATION_KEYS;
    type PodState = GpuPod;

    fn new(args: Args) -> Result<Self, String> {
        let args: FgdArgs = args.parse()?;
        let typical = typical_pods_from_args(&args.typical_pods)?;
        Ok(FgdScore { typical })
    }

    fn pre_score(&self, pod: &Pod, _: &[&Node], _: &dyn ClusterView) -> PreScore<GpuPod> {
        // Loaded with no arguments (every plugin is, before its
        // pluginConfig applies), it only fails when actually used.
        if self.typical.is_empty() {
            return PreScore::Error(Status::error("FGDScore needs typicalPods in its arguments"));
        }
        pre_score_pod(pod)
    }

    fn score(&self, _: &Pod, p: &GpuPod, node: &Node) -> Result<i64, Status> {
        Ok(clamp_score(fgd_score(&gpu_node(node), p, &self.typical)))
    }
}

export_plugin!(FgdScore);
