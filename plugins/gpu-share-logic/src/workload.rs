//! Replay preparation: arrival order and workload tuning.
//!
//! Follows `pkg/simulator/core.go` (`Simulate`) and `pkg/simulator/simulator.go`
//! (`SetWorkloadPods`, `SortClusterPods`, `TunePodsByNodeTotalResource`,
//! `tuneUpPods`, `tuneDownPods`) of `hkust-adsl/kubernetes-scheduler-simulator`.
//!
//! Order of operations in the simulator:
//! 1. `rand.Seed(tuneseed)` (then one `rand.Int()` is spent on a debug log);
//! 2. `SortClusterPods` with `shufflePod: true`: sort by name, `rand.Shuffle`;
//! 3. tuning to `ratio × cluster GPU milli`: **up** appends clones of random
//!    pods of the original (name-sorted) list at the **end** of the shuffled
//!    list; **down** removes random pods from the shuffled list.
//!
//! The PRNG is ours ([`crate::rng::Xoshiro256`]), not Go's `math/rand`, so the
//! permutation and the clones differ from the paper's for the same seed;
//! only the procedure is the same. Compare results as distributions over
//! seeds.

use crate::model::GpuPod;
use crate::rng::{RandomSource, Xoshiro256};

/// A named pod of the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedPod {
    pub name: String,
    pub pod: GpuPod,
}

/// Replay knobs; the paper uses `shuffle: true, tune_ratio: 1.3`, seeds 42–51.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReplayConfig {
    pub seed: u64,
    /// `--shuffle-pod`; when false the name order is kept (the simulator would
    /// sort by the creation-time annotation, which the openb YAML omits, so
    /// name order is what it gets).
    pub shuffle: bool,
    /// `-tune`; ≤ 0 disables tuning.
    pub tune_ratio: f64,
}

/// One pod of the prepared arrival sequence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayPod {
    /// Name to submit under: the original name, or `<name>-tuned-<i>` for the
    /// i-th clone (i counts from 0 in append order).
    pub name: String,
    /// Index into the caller's input slice of the pod this is (a copy of).
    pub source: usize,
    /// True for clones appended by tuning up.
    pub tuned_clone: bool,
}

/// Why preparation failed (the simulator panics in these cases).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorkloadError {
    /// Tuning needs pods with GPU demand and a cluster with GPU capacity.
    NoGpuDemandOrCapacity,
}

impl std::fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WorkloadError::NoGpuDemandOrCapacity => {
                write!(f, "workload tuning needs GPU demand and GPU capacity")
            }
        }
    }
}

impl std::error::Error for WorkloadError {}

/// Indices of `pods` sorted by name (`SetWorkloadPods` / `SortClusterPods`).
/// Names are unique in the traces; duplicates keep input order (the Go sort
/// is unstable, so this is our choice).
fn name_order(pods: &[NamedPod]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..pods.len()).collect();
    idx.sort_by(|&a, &b| pods[a].name.cmp(&pods[b].name));
    idx
}

/// Fisher–Yates as Go's `rand.Shuffle` does it: for i from n−1 down to 1,
/// swap i with `intn(i + 1)`.
pub fn shuffle<T, R: RandomSource + ?Sized>(v: &mut [T], rng: &mut R) {
    for i in (1..v.len()).rev() {
        let j = rng.intn(i + 1);
        v.swap(i, j);
    }
}

/// Prepares the arrival sequence with a fresh [`Xoshiro256`] seeded by
/// `cfg.seed`; see [`prepare_replay_with`].
pub fn prepare_replay(
    pods: &[NamedPod],
    cluster_gpu_milli: i64,
    cfg: ReplayConfig,
) -> Result<Vec<ReplayPod>, WorkloadError> {
    let mut rng = Xoshiro256::seed_from_u64(cfg.seed);
    prepare_replay_with(pods, cluster_gpu_milli, cfg, &mut rng)
}

/// Sort by name, shuffle (if enabled), then tune (if `tune_ratio > 0`), all
/// from one random stream, in the simulator's order. `cluster_gpu_milli` is
/// Σ over nodes of the `gpu-milli` capacity (1000 × GPUs; 6 212 000 for the
/// 1 213 openb GPU nodes).
pub fn prepare_replay_with<R: RandomSource + ?Sized>(
    pods: &[NamedPod],
    cluster_gpu_milli: i64,
    cfg: ReplayConfig,
    rng: &mut R,
) -> Result<Vec<ReplayPod>, WorkloadError> {
    let sorted = name_order(pods);
    let mut order = sorted.clone();
    if cfg.shuffle {
        shuffle(&mut order, rng);
    }
    let mut seq: Vec<ReplayPod> = order
        .iter()
        .map(|&i| ReplayPod {
            name: pods[i].name.clone(),
            source: i,
            tuned_clone: false,
        })
        .collect();
    if cfg.tune_ratio > 0.0 {
        tune(
            &mut seq,
            pods,
            &sorted,
            cluster_gpu_milli,
            cfg.tune_ratio,
            rng,
        )?;
    }
    Ok(seq)
}

/// `TunePodsByNodeTotalResource`. With `total = Σ num_gpu·gpu_milli` of `seq`
/// and `target = ratio × cluster_gpu_milli` (float):
/// - `total == target`: unchanged;
/// - **down** (`total > target`): while `total > target`, remove
///   `seq[intn(len)]` (order of the rest kept) and subtract its GPU milli;
/// - **up** (`total < target`): repeat — draw `src = sorted[intn(n)]` from the
///   *original* name-sorted list; **stop if `total + src.gpu_milli > target`**,
///   else append it as `<name>-tuned-<i>` and add `num_gpu·gpu_milli`.
///
/// The up-check adds the clone's *per-GPU* milli (`PodResource.MilliGpu`)
/// while the running total adds its *total* (`TotalMilliGpu`): a multi-GPU
/// clone can push the total past the target by up to `(num_gpu − 1)·1000`,
/// and the loop stops at the first clone that does not pass the check even if
/// a smaller one would. Reproduced as is.
fn tune<R: RandomSource + ?Sized>(
    seq: &mut Vec<ReplayPod>,
    pods: &[NamedPod],
    sorted: &[usize],
    cluster_gpu_milli: i64,
    ratio: f64,
    rng: &mut R,
) -> Result<(), WorkloadError> {
    let mut total: i64 = seq
        .iter()
        .map(|r| pods[r.source].pod.total_gpu_milli())
        .sum();
    if total <= 0 || cluster_gpu_milli <= 0 {
        return Err(WorkloadError::NoGpuDemandOrCapacity);
    }
    let target = ratio * cluster_gpu_milli as f64;
    if total as f64 > target {
        while total as f64 > target {
            if seq.is_empty() {
                return Err(WorkloadError::NoGpuDemandOrCapacity);
            }
            let idx = rng.intn(seq.len());
            let gone = seq.remove(idx);
            total -= pods[gone.source].pod.total_gpu_milli();
        }
    } else if (total as f64) < target {
        let mut i = 0usize;
        loop {
            let src = sorted[rng.intn(sorted.len())];
            let p = &pods[src].pod;
            if (total + i64::from(p.gpu_milli)) as f64 > target {
                break;
            }
            total += p.total_gpu_milli();
            seq.push(ReplayPod {
                name: format!("{}-tuned-{}", pods[src].name, i),
                source: src,
                tuned_clone: true,
            });
            i += 1;
        }
    }
    Ok(())
}

/// Σ `num_gpu·gpu_milli` over a prepared sequence.
pub fn total_gpu_milli(seq: &[ReplayPod], pods: &[NamedPod]) -> i64 {
    seq.iter()
        .map(|r| pods[r.source].pod.total_gpu_milli())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tests::pod;

    fn named(name: &str, num_gpu: u32, gpu_milli: u32) -> NamedPod {
        NamedPod {
            name: name.into(),
            pod: pod(1000, num_gpu, gpu_milli),
        }
    }

    fn trace(n: usize) -> Vec<NamedPod> {
        // Reverse name order in the input, to check the name sort.
        (0..n)
            .rev()
            .map(|i| named(&format!("pod-{i:03}"), 1, 1000))
            .collect()
    }

    #[test]
    fn no_shuffle_no_tune_is_name_order() {
        let pods = trace(5);
        let cfg = ReplayConfig {
            seed: 1,
            shuffle: false,
            tune_ratio: 0.0,
        };
        let seq = prepare_replay(&pods, 10_000, cfg).unwrap();
        let names: Vec<&str> = seq.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            ["pod-000", "pod-001", "pod-002", "pod-003", "pod-004"]
        );
        assert_eq!(seq[0].source, 4);
    }

    #[test]
    fn shuffle_is_a_seeded_permutation() {
        let pods = trace(50);
        let cfg = |seed| ReplayConfig {
            seed,
            shuffle: true,
            tune_ratio: 0.0,
        };
        let a = prepare_replay(&pods, 1, cfg(42)).unwrap();
        let b = prepare_replay(&pods, 1, cfg(42)).unwrap();
        let c = prepare_replay(&pods, 1, cfg(43)).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        let mut src: Vec<usize> = a.iter().map(|r| r.source).collect();
        src.sort_unstable();
        assert_eq!(src, (0..50).collect::<Vec<_>>());
        // Input order must not matter, only names.
        let mut rev = pods.clone();
        rev.reverse();
        let d = prepare_replay(&rev, 1, cfg(42)).unwrap();
        let na: Vec<&str> = a.iter().map(|r| r.name.as_str()).collect();
        let nd: Vec<&str> = d.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(na, nd);
    }

    #[test]
    fn tune_down_removes_until_at_most_target() {
        // 10 × 1 GPU = 10 000; capacity 5000 × 1.3 = 6500 → 4 removals → 6000.
        let pods = trace(10);
        let cfg = ReplayConfig {
            seed: 9,
            shuffle: true,
            tune_ratio: 1.3,
        };
        let seq = prepare_replay(&pods, 5000, cfg).unwrap();
        assert_eq!(seq.len(), 6);
        assert_eq!(total_gpu_milli(&seq, &pods), 6000);
        assert!(seq.iter().all(|r| !r.tuned_clone));
    }

    #[test]
    fn tune_up_appends_named_clones_at_the_end() {
        // 4 × 1 GPU = 4000; capacity 5000 × 1.3 = 6500 → clones of 1000 until
        // 6000 (the next would reach 7000 > 6500).
        let pods = trace(4);
        let cfg = ReplayConfig {
            seed: 5,
            shuffle: true,
            tune_ratio: 1.3,
        };
        let seq = prepare_replay(&pods, 5000, cfg).unwrap();
        assert_eq!(seq.len(), 6);
        assert_eq!(total_gpu_milli(&seq, &pods), 6000);
        assert!(seq[..4].iter().all(|r| !r.tuned_clone));
        assert!(seq[4..].iter().all(|r| r.tuned_clone));
        assert!(seq[4].name.starts_with("pod-") && seq[4].name.ends_with("-tuned-0"));
        assert!(seq[5].name.ends_with("-tuned-1"));
        assert_eq!(seq[4].name, format!("{}-tuned-0", pods[seq[4].source].name));
    }

    #[test]
    fn tune_up_per_gpu_check_quirk() {
        // One 8-GPU pod (8000) on capacity 10 000 × 1.3 = 13 000: the check
        // sees 8000 + 1000 ≤ 13 000 and appends a full 8000 → 16 000 > target;
        // the next check (17 000) stops.
        let pods = vec![named("big", 8, 1000)];
        let cfg = ReplayConfig {
            seed: 1,
            shuffle: true,
            tune_ratio: 1.3,
        };
        let seq = prepare_replay(&pods, 10_000, cfg).unwrap();
        assert_eq!(seq.len(), 2);
        assert_eq!(seq[1].name, "big-tuned-0");
        assert_eq!(total_gpu_milli(&seq, &pods), 16_000);
    }

    #[test]
    fn tune_up_stops_at_first_misfit() {
        // Sources: a (1 GPU) and b (0.5 GPU). Total 1500, target 0.3 × 10000 =
        // 3000. Whatever is drawn, the loop stops at the first clone whose
        // per-GPU milli would pass 3000, so the final total is in (2000, 3000].
        let pods = vec![named("a", 1, 1000), named("b", 1, 500)];
        for seed in 0..20 {
            let cfg = ReplayConfig {
                seed,
                shuffle: false,
                tune_ratio: 0.3,
            };
            let seq = prepare_replay(&pods, 10_000, cfg).unwrap();
            let t = total_gpu_milli(&seq, &pods);
            assert!(t <= 3000 && t > 2000, "seed {seed}: {t}");
        }
    }

    #[test]
    fn tune_needs_gpu_demand() {
        let pods = vec![NamedPod {
            name: "c".into(),
            pod: pod(1000, 0, 0),
        }];
        let cfg = ReplayConfig {
            seed: 1,
            shuffle: false,
            tune_ratio: 1.3,
        };
        assert_eq!(
            prepare_replay(&pods, 1000, cfg),
            Err(WorkloadError::NoGpuDemandOrCapacity)
        );
    }
}
