//! The paper's allocation and fragmentation curves.
//!
//! Follows `ClusterGpuFragReport` (`pkg/simulator/analysis.go`, one `[Alloc]`
//! and one `[Report]` log line per sample), `scripts/analysis.py` (log →
//! CSV) and `experiments/analysis/merge_alloc_discrete.py` /
//! `merge_frag_discrete.py` (bucketing) of
//! `hkust-adsl/kubernetes-scheduler-simulator`.
//!
//! **Samples.** The simulator reports once before any pod (after building the
//! typical pods: arrived 0, used 0) and then after **every** pod attempt,
//! failed ones included (`SchedulePods`). A faithful caller therefore passes
//! `1 + #pods` samples, the first being `(0, 0)`.
//!
//! **Bucketing**, for k = 0..=130:
//! - `arrive_ratio = round(arrived / total_gpus / 10)` with NumPy rounding
//!   (half to even), an integer percent of GPU capacity;
//! - `alloc_ratio = round(used / total_gpus / 10, 2)` (percent, 2 decimals,
//!   NumPy `rint`-based rounding);
//! - column k = `round(mean(alloc_ratio of samples with arrive_ratio == k), 2)`;
//!   if there are none, the samples with `k−1 ≤ arrive_ratio ≤ k+1`; if still
//!   none, the column is missing.
//!
//! Means are plain left-to-right sums here; pandas uses pairwise summation,
//! so the last digit can differ in rare cases.

use crate::frag::{TypicalPods, cluster_frag_amount};
use crate::model::{GpuNode, MILLI};

/// One `[Alloc]` sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocSample {
    /// Cumulative `num_gpu·gpu_milli` of the pods attempted so far.
    pub arrived_gpu_milli: i64,
    /// Allocated GPU milli in the cluster.
    pub used_gpu_milli: i64,
}

/// The numbers of one `[Alloc]` line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClusterAlloc {
    /// Nodes with a touched GPU or requested CPU ([`GpuNode::is_used`]).
    pub used_nodes: usize,
    /// All GPUs of used nodes.
    pub used_gpus: usize,
    /// Σ over used nodes of (GPUs×1000 − milli left) = allocated GPU milli.
    pub used_gpu_milli: i64,
    pub total_gpus: usize,
}

/// `ClusterGpuFragReport`'s allocation figures for the current cluster.
pub fn cluster_alloc<'a, I: IntoIterator<Item = &'a GpuNode>>(nodes: I) -> ClusterAlloc {
    let mut out = ClusterAlloc {
        used_nodes: 0,
        used_gpus: 0,
        used_gpu_milli: 0,
        total_gpus: 0,
    };
    for n in nodes {
        out.total_gpus += n.gpus.len();
        if n.is_used() {
            out.used_nodes += 1;
            out.used_gpus += n.gpus.len();
            out.used_gpu_milli += n.gpus.len() as i64 * i64::from(MILLI) - n.gpu_milli_left_total();
        }
    }
    out
}

/// The `[Report]` "Frag amount" (Σ node F, milli-GPU) for Fig. 7.
pub fn cluster_frag_milli<'a, I: IntoIterator<Item = &'a GpuNode>>(
    nodes: I,
    typical: &TypicalPods,
) -> f64 {
    cluster_frag_amount(nodes, typical).sum_except_q3()
}

/// NumPy's `round(x, decimals)`: scale, round half to even, unscale.
pub fn np_round(x: f64, decimals: i32) -> f64 {
    if decimals == 0 {
        return x.round_ties_even();
    }
    let scale = 10f64.powi(decimals);
    (x * scale).round_ties_even() / scale
}

/// `arrive_ratio` of a sample: integer percent of capacity arrived.
pub fn arrive_ratio(arrived_gpu_milli: i64, total_gpus: usize) -> i64 {
    np_round(arrived_gpu_milli as f64 / total_gpus as f64 / 10.0, 0) as i64
}

/// `alloc_ratio` of a sample: percent of capacity allocated, 2 decimals.
pub fn alloc_ratio(used_gpu_milli: i64, total_gpus: usize) -> f64 {
    np_round(used_gpu_milli as f64 / total_gpus as f64 / 10.0, 2)
}

/// The bucket rule shared by both curves: mean of `values` whose key is `k`,
/// else of those with key in `k−1..=k+1`, else `None`.
fn bucket_mean(keys: &[i64], values: &[f64], k: i64) -> Option<f64> {
    let mean = |pred: &dyn Fn(i64) -> bool| {
        let (mut sum, mut n) = (0.0f64, 0usize);
        for (&key, &v) in keys.iter().zip(values) {
            if pred(key) {
                sum += v;
                n += 1;
            }
        }
        (n > 0).then(|| sum / n as f64)
    };
    mean(&|key| key == k).or_else(|| mean(&|key| (k - 1..=k + 1).contains(&key)))
}

/// Column k of `analysis_allo_discrete.csv`: allocation ratio (%) at
/// arrived = k % of capacity. Figs. 11–14 plot `100 − alloc_ratio_at(.., 100)`.
pub fn alloc_ratio_at(samples: &[AllocSample], total_gpus: usize, k: i64) -> Option<f64> {
    let (keys, vals) = ratios(samples, total_gpus);
    bucket_mean(&keys, &vals, k).map(|m| np_round(m, 2))
}

/// Each sample's (arrive ratio, allocation ratio).
fn ratios(samples: &[AllocSample], total_gpus: usize) -> (Vec<i64>, Vec<f64>) {
    samples
        .iter()
        .map(|s| {
            (
                arrive_ratio(s.arrived_gpu_milli, total_gpus),
                alloc_ratio(s.used_gpu_milli, total_gpus),
            )
        })
        .unzip()
}

/// Columns `0..=max_k` (the paper uses 130) of the allocation curve (Fig. 9a).
pub fn alloc_curve(samples: &[AllocSample], total_gpus: usize, max_k: i64) -> Vec<Option<f64>> {
    let (keys, vals) = ratios(samples, total_gpus);
    (0..=max_k)
        .map(|k| bucket_mean(&keys, &vals, k).map(|m| np_round(m, 2)))
        .collect()
}

/// Column k of `analysis_frag_discrete.csv` (Fig. 7): from samples of
/// (arrived GPU milli, cluster frag milli), `round(100·mean(frag)/1000/total_gpus, 2)`
/// — the frag amount as a percent of GPU capacity (the mean is of raw,
/// unrounded amounts).
pub fn frag_percent_at(samples: &[(i64, f64)], total_gpus: usize, k: i64) -> Option<f64> {
    let keys: Vec<i64> = samples
        .iter()
        .map(|s| arrive_ratio(s.0, total_gpus))
        .collect();
    let vals: Vec<f64> = samples.iter().map(|s| s.1).collect();
    bucket_mean(&keys, &vals, k).map(|m| np_round(100.0 * m / 1000.0 / total_gpus as f64, 2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frag::tests::abc;
    use crate::model::GpuNode;
    use crate::model::tests::ref_node;

    fn s(arrived: i64, used: i64) -> AllocSample {
        AllocSample {
            arrived_gpu_milli: arrived,
            used_gpu_milli: used,
        }
    }

    #[test]
    fn rounding_is_half_even() {
        // 10 GPUs: arrive ratio = arrived / 100.
        assert_eq!(arrive_ratio(250, 10), 2); // 2.5 → 2
        assert_eq!(arrive_ratio(350, 10), 4); // 3.5 → 4
        assert_eq!(arrive_ratio(249, 10), 2);
        assert_eq!(arrive_ratio(251, 10), 3);
        assert_eq!(alloc_ratio(1234, 10), 12.34);
        assert_eq!(alloc_ratio(12345, 1000), 1.23); // 1.2345 → 1.23 (float: 123.45 → 123)
        assert_eq!(np_round(0.125, 2), 0.12);
        assert_eq!(np_round(0.375, 2), 0.38);
    }

    #[test]
    fn buckets_and_fallback() {
        // 10 GPUs = 10 000 milli.
        let samples = [
            s(0, 0),
            s(100, 100), // k 1, 1.00
            s(149, 100), // k 1, 1.00
            s(200, 150), // k 2, 1.50
            s(210, 200), // k 2, 2.00
            s(500, 400), // k 5, 4.00
            s(700, 500), // k 7, 5.00
        ];
        assert_eq!(alloc_ratio_at(&samples, 10, 0), Some(0.0));
        assert_eq!(alloc_ratio_at(&samples, 10, 1), Some(1.0));
        assert_eq!(alloc_ratio_at(&samples, 10, 2), Some(1.75));
        // k 3 missing → samples with key 2..=4 → the two k=2 ones.
        assert_eq!(alloc_ratio_at(&samples, 10, 3), Some(1.75));
        // k 6 missing → keys 5..=7 → mean(4, 5).
        assert_eq!(alloc_ratio_at(&samples, 10, 6), Some(4.5));
        // k 9 missing, nothing in 8..=10.
        assert_eq!(alloc_ratio_at(&samples, 10, 9), None);
        let curve = alloc_curve(&samples, 10, 9);
        assert_eq!(curve.len(), 10);
        assert_eq!(curve[2], Some(1.75));
        assert_eq!(curve[4], Some(4.0)); // keys 3..=5 → only k=5
        assert_eq!(curve[9], None);
    }

    #[test]
    fn cluster_figures() {
        let a = ref_node(); // 4 GPUs, 1500 milli used
        let b = GpuNode::new(8000, 1, 2, "T4"); // idle
        let mut c = GpuNode::new(8000, 1, 2, "T4");
        c.cpu_milli_left = 7000; // CPU-only usage marks it used
        let ca = cluster_alloc([&a, &b, &c]);
        assert_eq!(
            ca,
            ClusterAlloc {
                used_nodes: 2,
                used_gpus: 6,
                used_gpu_milli: 1500,
                total_gpus: 8
            }
        );
        assert_eq!(cluster_frag_milli([&a], &abc()), 750.0);
        // Fig. 7 value: 100 · 750 / 1000 / 8 = 9.375 → 9.38 (half-even at the
        // scaled float 937.5 → 938).
        assert_eq!(frag_percent_at(&[(0, 750.0)], 8, 0), Some(9.38));
    }
}
