//! DotProdScore: the FGD paper simulator's dot-product heuristic
//! (`dot_product_score.go`, run with `-dimext merge -norm max`): with the
//! node's free vector `[cpu left, Σ GPU milli left]` and the pod's
//! `[cpu, gpu-count × gpu-milli]`, each divided by `[128 cores, 8 GPUs]`,
//! the score is `int(100 × (1 − dot / 2))`: the node the pod aligns with
//! least wins. A node with too little CPU scores 0. No NormalizeScore.

sift_gpu_share_common::policy_scorer!(
    DotProdScore,
    "DotProdScore",
    sift_gpu_share_logic::policy::dot_prod_score
);
