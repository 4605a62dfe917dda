//! GpuPackingScore: the FGD paper simulator's GPU packing
//! (`gpu_packing_score.go`), in three tiers: a node where the pod fits on
//! partly used GPUs scores 50..=100 (the fuller the better), one where it
//! needs fully free GPUs of a node already in use 33..=50, an idle node
//! below 33. CPU-only pods score 0 everywhere. No NormalizeScore.

sift_gpu_share_common::policy_scorer!(
    GpuPackingScore,
    "GpuPackingScore",
    sift_gpu_share_logic::policy::gpu_packing_score
);
