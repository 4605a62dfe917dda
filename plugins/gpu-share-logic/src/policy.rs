//! Node scores of the paper's six policies, as the simulator's score plugins
//! compute them, plus kube-scheduler v1.20's aggregation and host selection.
//!
//! Sources (`hkust-adsl/kubernetes-scheduler-simulator`, `pkg/simulator/plugin/`):
//! `fgd_score.go`, `best_fit_score.go`, `dot_product_score.go`,
//! `gpu_packing_score.go`, `gpu_clustering_score.go`, `random_score.go`,
//! `plugin_utils.go` (`NormalizeScore`, `sigmoid`), and
//! `pkg/utils/utils.go` (`GenerateSchedulingMatchGroups`, `NormalizeVector`).
//!
//! **Profile of the paper's runs** (`scripts/generate_config_and_run.py`):
//! every default scorer is disabled and exactly one of these plugins is
//! enabled with weight 1000, so a node's total is `1000 × score` and only the
//! argmax matters.
//!
//! **Pipeline per pod (v1.20 `genericScheduler.Schedule`)**: filter all nodes
//! (`percentageOfNodesToScore: 100`); 0 feasible → fail; **exactly 1 feasible
//! → bind there without PreScore/Score** (so Random draws nothing); otherwise
//! PreScore, Score, NormalizeScore (BestFit only), range check `[0, 100]`
//! (outside → scheduling error, the pod fails), × weight, sum, `selectHost`.
//!
//! **Tie-breaking — deterministic in the simulator.** Upstream v1.20
//! `selectHost` samples uniformly among the max-score nodes (reservoir
//! sampling), but the simulator vendors a fork (`go.mod`: `k8s.io/kubernetes
//! => github.com/mental2008/kubernetes v1.20.5-minor`) whose
//! `vendor/k8s.io/kubernetes/pkg/scheduler/core/generic_scheduler.go`
//! `selectHost` instead keeps the **lexicographically smallest node name**
//! among equal maxima ("for reproducibility") and draws no random number.
//! The openb nodes are `openb-node-0000…1212` in the row order of the
//! `gpu > 0` rows of the node CSV, so [`TieBreak::FirstIndex`] over nodes in
//! that order *is* the simulator's rule; [`select_host_by_name`] implements
//! it literally. [`TieBreak::Reservoir`] reproduces upstream v1.20 and is what
//! a stock kube-scheduler would do. It matters a lot: ties are common for
//! every policy except Random (GpuPacking/GpuClustering have a handful of
//! distinct values, DotProd and FGD are truncated to integers, BestFit is
//! integer-normalised), and lowest-index tie-breaking acts as an extra
//! packing heuristic. On openb (default trace, seed 42, tune 1.3) FGD gives
//! 94.95 % allocation at arrived = 100 % with first-index ties but 90.09 %
//! with reservoir ties; GpuPacking 91.07 % vs 89.10 %.
//!
//! GPU-device ties inside a node (best-fit and FGD selection) are broken by
//! lowest index in the simulator too, deterministically.

use crate::frag::{TypicalPods, frag_masked};
use crate::model::{
    GpuNode, GpuPod, GpuSelMethod, MAX_SPEC_CPU, MAX_SPEC_GPU, MILLI, exclusive_gpu_ids,
    pod_model_accessible,
};
use crate::rng::RandomSource;

/// `framework.MaxNodeScore`.
pub const MAX_NODE_SCORE: i64 = 100;
/// `framework.MinNodeScore`.
pub const MIN_NODE_SCORE: i64 = 0;
/// The plugin weight in every paper run.
pub const POLICY_WEIGHT: i64 = 1000;

/// The six policies of the paper.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    Random,
    DotProd,
    GpuClustering,
    GpuPacking,
    BestFit,
    Fgd,
}

impl Policy {
    /// The Reserve GPU-selection method the paper's run scripts pair with
    /// each policy (`generate_run_scripts.py`: Random → `random`, FGD →
    /// its own, all others → `best`).
    pub fn gpu_sel(self) -> GpuSelMethod {
        match self {
            Policy::Random => GpuSelMethod::Random,
            Policy::Fgd => GpuSelMethod::Fgd,
            _ => GpuSelMethod::Best,
        }
    }
}

/// `sigmoid` of `plugin_utils.go`.
pub fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// FGD's per-node evaluation: the score and the GPU ids Reserve would take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FgdEval {
    /// `int64(sigmoid((F_before − F_after)/1000) × 100)`, truncated.
    pub score: i64,
    /// Devices for Reserve; `Some(vec![])` for a CPU-only pod; `None` if
    /// nothing fits (cannot happen on a node that passed the filter).
    pub gpu_ids: Option<Vec<usize>>,
}

/// `NodeResource.Sub` (`pkg/type/resource.go`) on a copy, as FGD uses it for
/// non-sharing pods, including its error paths: if CPU is short or the node
/// has fewer devices than `num_gpu`, the copy is returned **unchanged**;
/// otherwise CPU is subtracted and the pod's GPUs are taken from the devices
/// in ascending-left order (stable, so lowest index among equals), each
/// device at most once; if they run out, the partly modified copy is returned
/// (FGD ignores the error).
fn sub_for_fgd(cpu_left: i64, gpus: &[u32], pod: &GpuPod) -> (i64, Vec<u32>) {
    let mut out = gpus.to_vec();
    if cpu_left < pod.cpu_milli || gpus.len() < pod.num_gpu as usize {
        return (cpu_left, out);
    }
    let cpu = cpu_left - pod.cpu_milli;
    if pod.num_gpu == 0 {
        return (cpu, out);
    }
    let mut order: Vec<usize> = (0..gpus.len()).collect();
    order.sort_by_key(|&i| gpus[i]); // stable
    let mut need = pod.num_gpu;
    for i in order {
        if pod.gpu_milli <= out[i] {
            out[i] -= pod.gpu_milli;
            need -= 1;
            if need == 0 {
                break;
            }
        }
    }
    (cpu, out)
}

/// `calculateGpuShareFragExtendScore`: FGD's score and GPU choice for a
/// node, without the plugin's `Score` shortcuts. Reserve with FGD selection
/// calls exactly this (`allocateGpuIdBasedOnFGDScore`).
/// - **Sharing pod** (`num_gpu == 1, gpu_milli < 1000`): for each device with
///   `left ≥ gpu_milli`, in index order, F of the node with that device and
///   the CPU reduced; score `int(sigmoid((F_before − F_after)/1000)·100)`
///   (truncation); the **first** device with the highest integer score wins.
/// - **Otherwise** (CPU-only, whole GPUs): F after `NodeResource.Sub`
///   (CPU taken, GPUs taken from the devices in ascending-left order, error
///   paths kept); ids = lowest-index free devices
///   ([`exclusive_gpu_ids`]).
///
/// Memory plays no part. `F` is [`crate::frag::node_frag`].
pub fn fgd_eval(node: &GpuNode, pod: &GpuPod, typical: &TypicalPods) -> FgdEval {
    let accessible = typical.accessible_on(&node.model);
    let frag = |cpu: i64, gpus: &[u32]| frag_masked(cpu, gpus, &accessible, typical);
    let before = frag(node.cpu_milli_left, &node.gpus);
    let to_score = |after: f64| (sigmoid((before - after) / 1000.0) * MAX_NODE_SCORE as f64) as i64;

    if pod.num_gpu == 1 && pod.gpu_milli < MILLI {
        let mut best: Option<(i64, usize)> = None;
        let mut gpus = node.gpus.clone();
        let cpu_after = node.cpu_milli_left - pod.cpu_milli;
        for i in 0..node.gpus.len() {
            if node.gpus[i] < pod.gpu_milli {
                continue;
            }
            gpus[i] -= pod.gpu_milli;
            let s = to_score(frag(cpu_after, &gpus));
            gpus[i] += pod.gpu_milli;
            if best.is_none_or(|(bs, _)| s > bs) {
                best = Some((s, i));
            }
        }
        match best {
            Some((s, i)) => FgdEval {
                score: s,
                gpu_ids: Some(vec![i]),
            },
            None => FgdEval {
                score: 0,
                gpu_ids: None,
            },
        }
    } else {
        let (cpu_after, gpus_after) = sub_for_fgd(node.cpu_milli_left, &node.gpus, pod);
        let s = to_score(frag(cpu_after, &gpus_after));
        FgdEval {
            score: s,
            gpu_ids: exclusive_gpu_ids(node, pod),
        }
    }
}

/// FGD's Score (`FGDScorePlugin.Score`), no NormalizeScore:
/// - a pod with neither CPU nor memory request scores 100 (the plugin's
///   `len(podReq) == 0` shortcut; GPU demand is in annotations, not requests);
/// - a node whose model the pod may not use scores 0 (an error status in the
///   simulator, unreachable after the filter; see [`score_feasible_nodes`]);
/// - otherwise [`fgd_eval`]'s score.
pub fn fgd_score(node: &GpuNode, pod: &GpuPod, typical: &TypicalPods) -> i64 {
    if pod.cpu_milli == 0 && pod.mem_mib == 0 {
        return MAX_NODE_SCORE;
    }
    if !pod_model_accessible(node, pod) {
        return MIN_NODE_SCORE;
    }
    fgd_eval(node, pod, typical).score
}

/// BestFit's raw score (`getBestFitScore`), before NormalizeScore:
/// `int((1 − Σ_r 0.5·(free_r − req_r)/maxSpec_r)·100)` over r = CPU
/// (maxSpec 128 000 m) and total GPU milli (maxSpec 8000); lower leftover →
/// higher score. `None` where the plugin returns an error (a resource short,
/// or a model mismatch), which in v1.20 fails the whole scheduling attempt;
/// unreachable after the filters.
pub fn best_fit_raw_score(node: &GpuNode, pod: &GpuPod) -> Option<i64> {
    if !pod_model_accessible(node, pod) {
        return None;
    }
    let free = [
        node.cpu_milli_left as f64,
        node.gpu_milli_left_total() as f64,
    ];
    let req = [pod.cpu_milli as f64, pod.total_gpu_milli() as f64];
    let max_spec = [MAX_SPEC_CPU as f64, MAX_SPEC_GPU as f64];
    let weights = [0.5, 0.5];
    let mut score = 0.0;
    for i in 0..2 {
        if free[i] < req[i] {
            return None;
        }
        score += (free[i] - req[i]) / max_spec[i] * weights[i];
    }
    Some(((1.0 - score) * MAX_NODE_SCORE as f64) as i64)
}

/// `NormalizeScore` of `plugin_utils.go` (used by BestFit): min–max to
/// `[0, 100]` with integer arithmetic, `(s − lo)·100/(hi − lo)`; if all
/// scores are equal, all become 0.
pub fn normalize_scores(scores: &mut [i64]) {
    let (Some(&hi), Some(&lo)) = (scores.iter().max(), scores.iter().min()) else {
        return;
    };
    let range = hi - lo;
    for s in scores.iter_mut() {
        *s = if range == 0 {
            MIN_NODE_SCORE
        } else {
            (*s - lo) * (MAX_NODE_SCORE - MIN_NODE_SCORE) / range + MIN_NODE_SCORE
        };
    }
}

/// DotProd (`calculateDotProductScore`) with the paper's `-dimext merge -norm
/// max`, no NormalizeScore: node vector `[cpu_left, Σ gpu_left]`, pod vector
/// `[cpu, num_gpu·gpu_milli]`, both divided by `[128 000, 8000]`;
/// `score = int(100·(1 − dot/2))` (the larger the dot product, the lower the
/// score). A node with too little CPU yields no match group and scores 0.
/// Reserve then uses `best` GPU selection.
pub fn dot_prod_score(node: &GpuNode, pod: &GpuPod) -> i64 {
    if node.cpu_milli_left < pod.cpu_milli {
        return MIN_NODE_SCORE;
    }
    let norm = [MAX_SPEC_CPU as f64, MAX_SPEC_GPU as f64];
    let nv = [
        node.cpu_milli_left as f64,
        node.gpu_milli_left_total() as f64,
    ];
    let pv = [pod.cpu_milli as f64, pod.total_gpu_milli() as f64];
    let mut dot = 0.0;
    for i in 0..2 {
        dot += (nv[i] / norm[i]) * (pv[i] / norm[i]);
    }
    let cur = 1.0 - dot / 2.0;
    // The plugin starts from -1 and keeps a group only if it beats that.
    if cur <= -1.0 {
        return MIN_NODE_SCORE;
    }
    (MAX_NODE_SCORE as f64 * cur) as i64
}

/// GpuPacking (`getPackingScore`), no NormalizeScore. CPU-only pods and
/// model mismatches score 0. Otherwise, from best to worst:
/// - **idle node** (every device fully free): `max(33 − n_gpus, n_gpus)`
///   (the cap really is `n_gpus`: 29 for 4 GPUs, 25 for 8);
/// - devices are then picked in ascending-left order (each at most once) until
///   `num_gpu` have `left ≥ gpu_milli`; if any picked device is fully free:
///   `max(50 − #free_picked, 33)`;
/// - else (only partly used devices): `max(100 − Σ(left·100/1000)/10, 50)`
///   with `left` before placement and integer division per device.
///
/// Returns 0 if the pod cannot be placed (an error in the simulator).
pub fn gpu_packing_score(node: &GpuNode, pod: &GpuPod) -> i64 {
    if !pod.requests_gpu() || !pod_model_accessible(node, pod) {
        return MIN_NODE_SCORE;
    }
    let free = node.fully_free_gpus() as i64;
    if free == node.gpus.len() as i64 {
        return (MAX_NODE_SCORE / 3 - free).max(free);
    }
    let mut order: Vec<usize> = (0..node.gpus.len()).collect();
    order.sort_by_key(|&i| node.gpus[i]); // stable ascending
    let mut need = pod.num_gpu;
    let mut used = Vec::new();
    let mut free_used = 0i64;
    for i in order {
        if need == 0 {
            break;
        }
        let left = node.gpus[i];
        if pod.gpu_milli <= left {
            need -= 1;
            used.push(i);
            if left == MILLI {
                free_used += 1;
            }
        }
    }
    if need != 0 {
        return MIN_NODE_SCORE;
    }
    if free_used > 0 {
        return (MAX_NODE_SCORE / 2 - free_used).max(MAX_NODE_SCORE / 3);
    }
    let ratio: i64 = used
        .iter()
        .map(|&i| i64::from(node.gpus[i]) * 100 / i64::from(MILLI))
        .sum();
    (MAX_NODE_SCORE - ratio / 10).max(MAX_NODE_SCORE / 2)
}

/// GpuClustering (`GpuClusteringScorePlugin.Score`), no NormalizeScore. With
/// `fill = 25·(8000 − Σ gpu_left)/8000` (integer arithmetic, left to right)
/// and the pod's affinity tag t (`share-gpu` / `<n>-gpu`):
/// - node already hosts t and only t: `fill + 75`;
/// - hosts t among other tags: `fill + 50`;
/// - hosts no GPU pod: `fill + 25`;
/// - hosts only other tags: `fill`;
/// - CPU-only pod, or model mismatch (error in the simulator): 0.
pub fn gpu_clustering_score(node: &GpuNode, pod: &GpuPod) -> i64 {
    if !pod_model_accessible(node, pod) {
        return MIN_NODE_SCORE;
    }
    let Some(tag) = pod.affinity_tag() else {
        return MIN_NODE_SCORE;
    };
    let fill = MAX_NODE_SCORE / 4 * (MAX_SPEC_GPU - node.gpu_milli_left_total()) / MAX_SPEC_GPU;
    let present = node.gpu_affinity.get(&tag).copied().unwrap_or(0) > 0;
    let tags = node.gpu_affinity.values().filter(|&&c| c > 0).count();
    let band = if present {
        if tags == 1 {
            MAX_NODE_SCORE * 3 / 4
        } else {
            MAX_NODE_SCORE * 2 / 4
        }
    } else if tags == 0 {
        MAX_NODE_SCORE / 4
    } else {
        0
    };
    fill + band
}

/// Random's PreScore (`RandomScorePlugin.PreScore`): one `intn(n)` draw over
/// the feasible nodes; that node scores 100 at Score, all others 0.
pub fn random_prescore_pick<R: RandomSource + ?Sized>(num_feasible: usize, rng: &mut R) -> usize {
    rng.intn(num_feasible)
}

/// Why a pod's scoring failed (v1.20 aborts the attempt; the pod fails).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScoreError {
    /// A plugin returned an error status for the node at this index.
    Plugin { node: usize },
    /// A (normalised) score outside `[0, 100]` at this index.
    OutOfRange { node: usize, score: i64 },
}

/// Scores of `policy` for the feasible nodes, as kube-scheduler v1.20 sums
/// them with the single plugin at [`POLICY_WEIGHT`]: Score, NormalizeScore
/// (BestFit), range check, × weight.
///
/// With fewer than two feasible nodes v1.20 does not score at all; this
/// returns zeros and **draws nothing** from `rng` then, like the simulator.
/// `typical` is used by FGD only; `rng` by Random only.
pub fn score_feasible_nodes<R: RandomSource + ?Sized>(
    policy: Policy,
    nodes: &[&GpuNode],
    pod: &GpuPod,
    typical: &TypicalPods,
    rng: &mut R,
) -> Result<Vec<i64>, ScoreError> {
    if nodes.len() < 2 {
        return Ok(vec![0; nodes.len()]);
    }
    let mut scores: Vec<i64> = match policy {
        Policy::Random => {
            let pick = random_prescore_pick(nodes.len(), rng);
            (0..nodes.len())
                .map(|i| {
                    if i == pick {
                        MAX_NODE_SCORE
                    } else {
                        MIN_NODE_SCORE
                    }
                })
                .collect()
        }
        Policy::Fgd => {
            let mut v = Vec::with_capacity(nodes.len());
            for (i, n) in nodes.iter().enumerate() {
                if !pod_model_accessible(n, pod) {
                    return Err(ScoreError::Plugin { node: i });
                }
                v.push(fgd_score(n, pod, typical));
            }
            v
        }
        Policy::BestFit => {
            let mut v = Vec::with_capacity(nodes.len());
            for (i, n) in nodes.iter().enumerate() {
                v.push(best_fit_raw_score(n, pod).ok_or(ScoreError::Plugin { node: i })?);
            }
            normalize_scores(&mut v);
            v
        }
        Policy::DotProd => nodes.iter().map(|n| dot_prod_score(n, pod)).collect(),
        Policy::GpuPacking => nodes.iter().map(|n| gpu_packing_score(n, pod)).collect(),
        Policy::GpuClustering => nodes.iter().map(|n| gpu_clustering_score(n, pod)).collect(),
    };
    for (i, s) in scores.iter_mut().enumerate() {
        if !(MIN_NODE_SCORE..=MAX_NODE_SCORE).contains(s) {
            return Err(ScoreError::OutOfRange { node: i, score: *s });
        }
        *s *= POLICY_WEIGHT;
    }
    Ok(scores)
}

/// How to choose among equal maximal totals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TieBreak {
    /// The first maximal entry in the given order. Equals the simulator's
    /// fork when the nodes are given in name order (openb: CSV row order).
    FirstIndex,
    /// Upstream v1.20 `selectHost`: the k-th maximal entry replaces the
    /// current choice if `intn(k) == 0`; one draw per tie after the first
    /// maximal entry.
    Reservoir,
}

/// Picks the host index from the totals; `None` for an empty list.
pub fn select_host<R: RandomSource + ?Sized>(
    totals: &[i64],
    tie: TieBreak,
    rng: &mut R,
) -> Option<usize> {
    let (&first, rest) = totals.split_first()?;
    let mut best = first;
    let mut chosen = 0usize;
    let mut count = 1usize;
    for (j, &s) in rest.iter().enumerate() {
        let i = j + 1;
        if s > best {
            best = s;
            chosen = i;
            count = 1;
        } else if s == best && tie == TieBreak::Reservoir {
            count += 1;
            if rng.intn(count) == 0 {
                chosen = i;
            }
        }
    }
    Some(chosen)
}

/// The simulator's fork of `selectHost` literally: the highest total, ties
/// to the lexicographically (bytewise) smallest name; independent of the
/// order of the list. `None` for an empty list.
///
/// # Panics
/// If `names` and `totals` differ in length.
pub fn select_host_by_name(totals: &[i64], names: &[&str]) -> Option<usize> {
    assert_eq!(totals.len(), names.len(), "one name per total");
    let mut chosen: Option<usize> = None;
    for i in 0..totals.len() {
        chosen = match chosen {
            None => Some(i),
            Some(c) if totals[i] > totals[c] => Some(i),
            Some(c) if totals[i] == totals[c] && names[i] < names[c] => Some(i),
            keep => keep,
        };
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frag::tests::abc;
    use crate::model::GpuNode;
    use crate::model::tests::{pod, ref_node};
    use crate::rng::Xoshiro256;

    #[test]
    fn fgd_sharing_pod_hand_computed() {
        // ref node [1000, 500, 0, 1000], 16 cores; table A/B/C; F_before = 750.
        // GPU 0 → [700,500,0,1000]: B no longer fits (Q2, .25·2200), C .25·2200 → F 1100
        //   → int(sigmoid(-0.35)·100) = int(41.34) = 41
        // GPU 1 → [1000,200,0,1000]: A frag .5·200, B frag .25·200, C .25·2200 → F 700
        //   → int(sigmoid(0.05)·100) = int(51.25) = 51
        // GPU 3 → symmetric to GPU 0 → 41
        let n = ref_node();
        let t = abc();
        let p = pod(1000, 1, 300);
        assert!((sigmoid(-0.35) * 100.0 - 41.338).abs() < 1e-3);
        assert_eq!(
            fgd_eval(&n, &p, &t),
            FgdEval {
                score: 51,
                gpu_ids: Some(vec![1])
            }
        );
        assert_eq!(fgd_score(&n, &p, &t), 51);
    }

    #[test]
    fn fgd_ties_take_lowest_index() {
        // Two identical partial devices: same score, GPU 0 wins.
        let mut n = GpuNode::new(16_000, 1, 2, "T4");
        n.gpus = vec![600, 600];
        let t = abc();
        let e = fgd_eval(&n, &pod(1000, 1, 100), &t);
        assert_eq!(e.gpu_ids, Some(vec![0]));
    }

    #[test]
    fn fgd_whole_and_cpu_pods() {
        let n = ref_node();
        let t = abc();
        // Whole GPU: Sub takes GPU 0 (first 1000 in stable ascending order) →
        // [0,500,0,1000], 14 cores: A Q3 frag 0, B Q2 .25·1500, C .25·1500 → F 750 → Δ 0 → 50.
        assert_eq!(
            fgd_eval(&n, &pod(2000, 1, 1000), &t),
            FgdEval {
                score: 50,
                gpu_ids: Some(vec![0])
            }
        );
        // CPU-only 4 cores: classes unchanged → Δ 0 → 50, no ids.
        assert_eq!(
            fgd_eval(&n, &pod(4000, 0, 0), &t),
            FgdEval {
                score: 50,
                gpu_ids: Some(vec![])
            }
        );
        // CPU-only 13 cores: 3 left → A and B become Q4 (.5·2500, .25·2500), C XL
        // → F = 1250 + 625 + 625 = 2500 → int(sigmoid(-1.75)·100) = int(14.81) = 14.
        assert_eq!(fgd_score(&n, &pod(13_000, 0, 0), &t), 14);
        // No CPU/memory requests at all → 100 (even with GPU demand), but
        // Reserve still selects devices through fgd_eval (gpu.rs's tests).
        let mut empty = pod(0, 1, 300);
        empty.mem_mib = 0;
        assert_eq!(fgd_score(&n, &empty, &t), 100);
        // Model mismatch → 0.
        let mut p = pod(1000, 1, 300);
        p.gpu_spec = vec!["T4".into()];
        assert_eq!(fgd_score(&n, &p, &t), 0);
    }

    #[test]
    fn sub_error_paths() {
        let p = pod(5000, 2, 1000);
        // CPU short → unchanged.
        assert_eq!(
            sub_for_fgd(4000, &[1000, 1000], &p),
            (4000, vec![1000, 1000])
        );
        // Not enough devices → unchanged.
        assert_eq!(sub_for_fgd(9000, &[1000], &p), (9000, vec![1000]));
        // Not enough free devices → CPU taken and partial GPU subtraction kept.
        assert_eq!(sub_for_fgd(9000, &[1000, 200], &p), (4000, vec![0, 200]));
        // Ascending-left order: the 500 device before the free ones.
        let s = pod(0, 2, 400);
        assert_eq!(
            sub_for_fgd(0, &[1000, 500, 0, 1000], &s),
            (0, vec![600, 100, 0, 1000])
        );
    }

    #[test]
    fn best_fit_and_normalize() {
        let n = ref_node();
        // free [16000, 2500], req [1000, 300]:
        // .5·15000/128000 + .5·2200/8000 = .05859375 + .1375 → (1 − .19609375)·100 = 80.39 → 80
        assert_eq!(best_fit_raw_score(&n, &pod(1000, 1, 300)), Some(80));
        // Whole GPU, 2 cores: .5·14000/128000 + .5·1500/8000 = .0546875 + .09375 → 85.15 → 85
        assert_eq!(best_fit_raw_score(&n, &pod(2000, 1, 1000)), Some(85));
        assert_eq!(best_fit_raw_score(&n, &pod(1000, 3, 1000)), None); // 3000 > 2500 left

        let mut v = vec![80, 70, 90];
        normalize_scores(&mut v);
        assert_eq!(v, vec![50, 0, 100]);
        let mut v = vec![80, 71, 90];
        normalize_scores(&mut v);
        assert_eq!(v, vec![47, 0, 100]); // 9·100/19 = 47
        let mut v = vec![77, 77];
        normalize_scores(&mut v);
        assert_eq!(v, vec![0, 0]);
    }

    #[test]
    fn dot_prod() {
        let n = ref_node();
        // node [.125, .3125], pod [.0078125, .0375]: dot .0126953125
        // → 1 − .00634765625 = .99365… → 99
        assert_eq!(dot_prod_score(&n, &pod(1000, 1, 300)), 99);
        // Empty 8-GPU, 96-core node, 8-core 1-GPU pod:
        // .75·.0625 + 1·.125 = .171875 → 1 − .0859375 → 91
        let e = GpuNode::new(96_000, 1, 8, "G2");
        assert_eq!(dot_prod_score(&e, &pod(8000, 1, 1000)), 91);
        // CPU short → 0.
        assert_eq!(dot_prod_score(&n, &pod(17_000, 0, 0)), 0);
    }

    #[test]
    fn packing() {
        let n = ref_node();
        // Sharing 300m: ascending [2(0), 1(500), 0, 3] → GPU 1, partly used:
        // 500·100/1000 = 50 → 100 − 5 = 95.
        assert_eq!(gpu_packing_score(&n, &pod(1000, 1, 300)), 95);
        // 600m: needs a free device → 50 − 1 = 49.
        assert_eq!(gpu_packing_score(&n, &pod(1000, 1, 600)), 49);
        assert_eq!(gpu_packing_score(&n, &pod(1000, 2, 1000)), 48);
        // Idle nodes: max(33 − n, n).
        assert_eq!(
            gpu_packing_score(&GpuNode::new(1, 1, 4, "T4"), &pod(1, 1, 500)),
            29
        );
        assert_eq!(
            gpu_packing_score(&GpuNode::new(1, 1, 8, "T4"), &pod(1, 1, 500)),
            25
        );
        assert_eq!(
            gpu_packing_score(&GpuNode::new(1, 1, 1, "T4"), &pod(1, 1, 500)),
            32
        );
        // CPU pod → 0; cannot place → 0.
        assert_eq!(gpu_packing_score(&n, &pod(1000, 0, 0)), 0);
        assert_eq!(gpu_packing_score(&n, &pod(1000, 3, 1000)), 0);
        // The simulator's own gpu_packing_score_test.go cases.
        let mut m = GpuNode::new(1000, 1, 4, "1080");
        m.gpus = vec![200, 1000, 1000, 500];
        assert_eq!(gpu_packing_score(&m, &pod(100, 2, 1000)), 48);
        assert_eq!(gpu_packing_score(&m, &pod(100, 2, 200)), 93);
        // Many partly used devices: the floor of 50.
        let mut f = GpuNode::new(1000, 1, 8, "G2");
        f.gpus = vec![990, 990, 990, 990, 990, 990, 990, 1000];
        assert_eq!(gpu_packing_score(&f, &pod(100, 1, 100)), 91); // one device: 100 − 99/10
    }

    #[test]
    fn clustering() {
        let n = ref_node(); // 2500 left, tags {share-gpu: 3}
        // fill = 25·(8000 − 2500)/8000 = 137500/8000 = 17
        assert_eq!(gpu_clustering_score(&n, &pod(1000, 1, 300)), 17 + 75);
        assert_eq!(gpu_clustering_score(&n, &pod(1000, 1, 1000)), 17); // other tag only
        let mut m = n.clone();
        m.gpu_affinity.insert("1-gpu".into(), 1);
        assert_eq!(gpu_clustering_score(&m, &pod(1000, 1, 300)), 17 + 50);
        assert_eq!(gpu_clustering_score(&m, &pod(1000, 1, 1000)), 17 + 50);
        // Idle nodes: fill 0 for 8 GPUs, 25·6000/8000 = 18 for 2 GPUs.
        assert_eq!(
            gpu_clustering_score(&GpuNode::new(1, 1, 8, "G2"), &pod(1, 1, 500)),
            25
        );
        assert_eq!(
            gpu_clustering_score(&GpuNode::new(1, 1, 2, "G2"), &pod(1, 1, 500)),
            18 + 25
        );
        assert_eq!(gpu_clustering_score(&n, &pod(1000, 0, 0)), 0);
    }

    #[test]
    fn aggregate_and_select() {
        let a = ref_node();
        let b = GpuNode::new(32_000, 131_072, 4, "V100M16");
        let nodes = [&a, &b];
        let p = pod(1000, 1, 300);
        let t = abc();
        let mut rng = Xoshiro256::seed_from_u64(3);

        // BestFit: raw a = 80; b: .5·31000/128000 + .5·3700/8000 = .12109375 + .23125
        // → 64.77 → 64; normalised [100, 0] → ×1000.
        let s = score_feasible_nodes(Policy::BestFit, &nodes, &p, &t, &mut rng).unwrap();
        assert_eq!(s, vec![100_000, 0]);

        let s = score_feasible_nodes(Policy::GpuPacking, &nodes, &p, &t, &mut rng).unwrap();
        assert_eq!(s, vec![95_000, 29_000]);

        let s = score_feasible_nodes(Policy::Random, &nodes, &p, &t, &mut rng).unwrap();
        assert_eq!(s.iter().filter(|&&x| x == 100_000).count(), 1);
        assert_eq!(s.iter().sum::<i64>(), 100_000);

        // One feasible node: no scoring, no draw.
        let mut calls = 0;
        let mut counting = || {
            calls += 1;
            0u64
        };
        let s = score_feasible_nodes(Policy::Random, &nodes[..1], &p, &t, &mut counting).unwrap();
        assert_eq!(s, vec![0]);
        assert_eq!(calls, 0);

        // Model mismatch surfaces as a plugin error for FGD/BestFit.
        let mut q = p.clone();
        q.gpu_spec = vec!["T4".into()];
        assert_eq!(
            score_feasible_nodes(Policy::Fgd, &nodes, &q, &t, &mut rng),
            Err(ScoreError::Plugin { node: 0 })
        );

        assert_eq!(
            select_host(&[5, 9, 9, 1], TieBreak::FirstIndex, &mut rng),
            Some(1)
        );
        let names = [
            "openb-node-0003",
            "openb-node-0002",
            "openb-node-0001",
            "openb-node-0000",
        ];
        assert_eq!(select_host_by_name(&[5, 9, 9, 1], &names), Some(2));
        assert_eq!(select_host_by_name(&[9, 9, 9, 9], &names), Some(3));
        assert_eq!(select_host_by_name(&[], &[]), None);
        assert_eq!(select_host(&[], TieBreak::FirstIndex, &mut rng), None);
        // Reservoir: draws intn(2) at index 2; a zero draw moves the choice.
        // (a source returning 1 makes every intn(k) return 0 without rejection)
        let mut zero = || 1u64;
        assert_eq!(
            select_host(&[5, 9, 9, 1], TieBreak::Reservoir, &mut zero),
            Some(2)
        );
        let mut hits = [0usize; 3];
        for _ in 0..3000 {
            hits[select_host(&[7, 7, 7], TieBreak::Reservoir, &mut rng).unwrap()] += 1;
        }
        for h in hits {
            assert!((850..=1150).contains(&h), "{hits:?}");
        }
    }

    #[test]
    fn policy_gpu_sel_pairing() {
        assert_eq!(Policy::Random.gpu_sel(), GpuSelMethod::Random);
        assert_eq!(Policy::Fgd.gpu_sel(), GpuSelMethod::Fgd);
        assert_eq!(Policy::DotProd.gpu_sel(), GpuSelMethod::Best);
        assert_eq!(Policy::BestFit.gpu_sel(), GpuSelMethod::Best);
    }
}
