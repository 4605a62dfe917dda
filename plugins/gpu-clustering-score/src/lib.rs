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

sift_gpu_share_common::policy_scorer!(
    GpuClusteringScore,
    "GpuClusteringScore",
    sift_gpu_share_logic::policy::gpu_clustering_score
);
