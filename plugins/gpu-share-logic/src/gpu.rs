//! Node and pod model for GPU sharing, the Open-Gpu-Share filter, GPU-id
//! selection at Reserve, and applying an allocation.
//!
//! Follows `hkust-adsl/kubernetes-scheduler-simulator`:
//! - `pkg/simulator/plugin/open_gpu_share.go` (`Filter`, `Reserve`,
//!   `allocateGpuIdBasedOn{BestFit,RandomFit}`),
//! - `pkg/type/open-gpu-share/cache/gpunodeinfo.go` (`GpuNodeInfo.AllocateGpuId`,
//!   the feasibility test used by `Filter`),
//! - `pkg/type/resource.go` (`AllocateExclusiveGpuId`, `NodeResource.Sub`),
//! - `pkg/utils/utils.go` (`IsNodeAccessibleToPodByType`).
//!
//! GPU capacity is tracked per device in milli-GPU: `gpus[i]` is the milli
//! still free on device `i` (1000 = untouched, 0 = full).

use std::collections::BTreeMap;

use crate::frag::TypicalPods;
use crate::rng::RandomSource;

/// One whole GPU in milli-GPU (`gpushareutils.MILLI`).
pub const MILLI: u32 = 1000;
/// CPU normaliser of BestFit/DotProd (`gpushareutils.MaxSpecCpu`, milli-CPU).
pub const MAX_SPEC_CPU: i64 = 128_000;
/// GPU normaliser of BestFit/DotProd/GpuClustering (`gpushareutils.MaxSpecGpu`,
/// i.e. 8 GPUs in milli).
pub const MAX_SPEC_GPU: i64 = 8_000;

/// A node as the simulator's plugins see it (`simontype.NodeResource` plus the
/// memory that kube-scheduler's NodeResourcesFit checks).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuNode {
    /// Allocatable milli-CPU.
    pub cpu_milli_total: i64,
    /// Allocatable minus the sum of scheduled pods' CPU requests.
    pub cpu_milli_left: i64,
    /// Allocatable memory, MiB.
    pub mem_mib_total: i64,
    /// Allocatable minus scheduled pods' memory requests, MiB.
    pub mem_mib_left: i64,
    /// GPU card model (label `alibabacloud.com/gpu-card-model`); empty for a
    /// CPU-only node.
    pub model: String,
    /// Milli-GPU left per device, indexed by device id.
    pub gpus: Vec<u32>,
    /// Count of scheduled GPU pods per affinity tag (see
    /// [`GpuPod::affinity_tag`]). Needed only by GpuClustering; the simulator
    /// derives it from the pods on the node (`GetNodeResourceViaNodeInfo`).
    pub gpu_affinity: BTreeMap<String, u32>,
}

impl GpuNode {
    /// An empty node with `num_gpus` fully free devices.
    pub fn new(cpu_milli: i64, mem_mib: i64, num_gpus: usize, model: impl Into<String>) -> Self {
        GpuNode {
            cpu_milli_total: cpu_milli,
            cpu_milli_left: cpu_milli,
            mem_mib_total: mem_mib,
            mem_mib_left: mem_mib,
            model: model.into(),
            gpus: vec![MILLI; num_gpus],
            gpu_affinity: BTreeMap::new(),
        }
    }

    /// Σ milli-GPU left over all devices (`GetTotalMilliGpuLeft`).
    pub fn gpu_milli_left_total(&self) -> i64 {
        self.gpus.iter().map(|&g| i64::from(g)).sum()
    }

    /// Number of devices with all 1000 milli free (`GetFullyFreeGpuNum`).
    pub fn fully_free_gpus(&self) -> usize {
        self.gpus.iter().filter(|&&g| g == MILLI).count()
    }

    /// Allocated milli-GPU on this node (GPUs×1000 − left).
    pub fn gpu_milli_used(&self) -> i64 {
        self.gpus.len() as i64 * i64::from(MILLI) - self.gpu_milli_left_total()
    }

    /// The "used node" test of `ClusterGpuFragReport` (`pkg/simulator/analysis.go`):
    /// some GPU is touched or some CPU is requested.
    pub fn is_used(&self) -> bool {
        self.fully_free_gpus() < self.gpus.len() || self.cpu_milli_left < self.cpu_milli_total
    }
}

/// A pod's scheduling-relevant demand (`simontype.PodResource` plus memory).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct GpuPod {
    /// CPU request, milli. The simulator's `GetPodResource` uses v1.20's
    /// `GetNonzeroRequests`, which substitutes 100m only when the CPU request
    /// is *absent*; the openb YAML always sets it, so the raw value is right.
    pub cpu_milli: i64,
    /// Memory request, MiB.
    pub mem_mib: i64,
    /// Number of GPUs (annotation `alibabacloud.com/gpu-count`).
    pub num_gpu: u32,
    /// Milli-GPU per GPU (annotation `alibabacloud.com/gpu-milli`); a sharing
    /// pod has `num_gpu == 1, gpu_milli < 1000`.
    pub gpu_milli: u32,
    /// Allowed GPU models (annotation `gpu-card-model`, `|`-separated); empty =
    /// any model. Empty strings inside are ignored, as in the simulator.
    pub gpu_spec: Vec<String>,
}

impl GpuPod {
    /// `num_gpu × gpu_milli` (`PodResource.TotalMilliGpu`).
    pub fn total_gpu_milli(&self) -> i64 {
        i64::from(self.num_gpu) * i64::from(self.gpu_milli)
    }

    /// Whether the GPU filter / Reserve treat the pod as a GPU pod: the
    /// simulator tests the `gpu-milli` annotation only (`> 0`).
    pub fn requests_gpu(&self) -> bool {
        self.gpu_milli > 0
    }

    /// `PodResource.IsGpuShare`: exactly one GPU, less than a whole one.
    pub fn is_gpu_share(&self) -> bool {
        self.num_gpu == 1 && self.gpu_milli < MILLI
    }

    /// The spec as the simulator stores it: models joined with `|`.
    pub fn gpu_spec_string(&self) -> String {
        self.gpu_spec.join("|")
    }

    /// Splits a trace `gpu_spec` cell (`"V100M16|V100M32"`) into models.
    pub fn parse_gpu_spec(s: &str) -> Vec<String> {
        s.split('|')
            .filter(|m| !m.is_empty())
            .map(str::to_owned)
            .collect()
    }

    /// `GetGpuAffinityFromPodAnnotation`: `None` for `num_gpu == 0`
    /// ("no-gpu"), `"share-gpu"` for one partial GPU, `"<n>-gpu"` for whole
    /// GPUs. The simulator panics on other shapes (several partial GPUs); we
    /// return a distinct `"<n>x<milli>-gpu"` tag instead.
    pub fn affinity_tag(&self) -> Option<String> {
        if self.num_gpu == 0 {
            None
        } else if self.num_gpu == 1 && self.gpu_milli < MILLI {
            Some("share-gpu".to_owned())
        } else if self.gpu_milli == MILLI {
            Some(format!("{}-gpu", self.num_gpu))
        } else {
            Some(format!("{}x{}-gpu", self.num_gpu, self.gpu_milli))
        }
    }
}

/// `IsNodeAccessibleToPodByType` (`pkg/utils/utils.go`) on the raw
/// `|`-joined spec string: an empty spec allows any node (even a CPU-only
/// one); otherwise a node without a model is refused, and the node model must
/// be one of the non-empty entries (a spec made only of empty entries, such as
/// `"|"`, allows any GPU node).
pub fn model_accessible_str(node_model: &str, spec: &str) -> bool {
    if spec.is_empty() {
        return true;
    }
    if node_model.is_empty() {
        return false;
    }
    let mut listed = 0usize;
    for m in spec.split('|') {
        if m.is_empty() {
            continue;
        }
        listed += 1;
        if m == node_model {
            return true;
        }
    }
    listed == 0
}

/// [`model_accessible_str`] for a split spec, without joining it: the joined
/// string is empty exactly when the list is empty or a single empty entry.
pub fn model_accessible(node_model: &str, spec: &[String]) -> bool {
    let joined_empty = spec.is_empty() || (spec.len() == 1 && spec[0].is_empty());
    if joined_empty {
        return true;
    }
    if node_model.is_empty() {
        return false;
    }
    let mut listed = 0usize;
    for m in spec.iter().filter(|m| !m.is_empty()) {
        listed += 1;
        if m == node_model {
            return true;
        }
    }
    listed == 0
}

/// [`model_accessible`] for a pod.
pub fn pod_model_accessible(node: &GpuNode, pod: &GpuPod) -> bool {
    model_accessible(&node.model, &pod.gpu_spec)
}

/// The Open-Gpu-Share `Filter` (`open_gpu_share.go`), exactly:
/// 1. pass if the pod asks for no GPU milli (`gpu_milli == 0`);
/// 2. reject a node without GPUs;
/// 3. reject if the node model is not in the pod's `gpu_spec` (empty = any);
/// 4. pass iff `GpuNodeInfo.AllocateGpuId` finds a placement: a one-GPU pod
///    needs a device with `left ≥ gpu_milli`; a multi-GPU pod uses a
///    two-pointer greedy that may put *several* of its GPUs on one device, so
///    the test is `Σ_i ⌊left_i / gpu_milli⌋ ≥ num_gpu`. For whole-GPU pods
///    (the only multi-GPU shape in openb) this is "`num_gpu` fully free
///    devices". A pod with `gpu_milli > 0` but `num_gpu == 0` is rejected.
///
/// CPU, memory and pod-count fit are kube-scheduler's NodeResourcesFit, see
/// [`fits_cpu_mem`].
pub fn fits(node: &GpuNode, pod: &GpuPod) -> bool {
    if !pod.requests_gpu() {
        return true;
    }
    if node.gpus.is_empty() {
        return false;
    }
    if !pod_model_accessible(node, pod) {
        return false;
    }
    if pod.num_gpu == 0 {
        return false;
    }
    let need = u64::from(pod.num_gpu);
    let mut slots = 0u64;
    for &left in &node.gpus {
        slots += u64::from(left / pod.gpu_milli);
        if slots >= need {
            return true;
        }
    }
    false
}

/// NodeResourcesFit's CPU and memory part: requests fit in what is left.
/// (The pod-count limit, 1001 in the openb node YAML, never binds.)
pub fn fits_cpu_mem(node: &GpuNode, pod: &GpuPod) -> bool {
    node.cpu_milli_left >= pod.cpu_milli && node.mem_mib_left >= pod.mem_mib
}

/// How Reserve picks GPU devices (`OpenGpuSharePluginCfg.GpuSelMethod`).
///
/// The paper's runs (`experiments/run_scripts/generate_run_scripts.py` +
/// `scripts/generate_config_and_run.py`): Random uses `random`; FGD uses its
/// own plugin (`-gpusel FGD` with `dimext share` becomes `gpuSelMethod:
/// FGDScore`); DotProd, GpuClustering, GpuPacking and BestFit use `best`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuSelMethod {
    /// `allocateGpuIdBasedOnBestFit`.
    Best,
    /// `allocateGpuIdBasedOnRandomFit`.
    Random,
    /// `allocateGpuIdBasedOnFGDScore`.
    Fgd,
}

/// `simontype.AllocateExclusiveGpuId`: the lowest-index fully free devices,
/// one per 1000 milli of `num_gpu × gpu_milli` (rounded up). `None` when
/// there are not enough (the simulator panics there).
pub fn exclusive_gpu_ids(node: &GpuNode, pod: &GpuPod) -> Option<Vec<usize>> {
    let mut need = pod.total_gpu_milli();
    let mut ids = Vec::new();
    for (i, &left) in node.gpus.iter().enumerate() {
        if need <= 0 {
            break;
        }
        if left == MILLI {
            ids.push(i);
            need -= i64::from(MILLI);
        }
    }
    if need > 0 { None } else { Some(ids) }
}

/// Reserve with `-gpusel best` (the default): a sharing pod
/// (`gpu_milli < 1000`) gets the **tightest** device, i.e. the smallest
/// `left ≥ gpu_milli`, lowest index on ties (so a fully free device only if
/// no partly used one fits); a whole-GPU pod gets [`exclusive_gpu_ids`].
///
/// Returns `Some(vec![])` for a pod without GPU milli (Reserve skips it) and
/// `None` when nothing fits or for several partial GPUs (simulator panics).
pub fn select_gpus_best(node: &GpuNode, pod: &GpuPod) -> Option<Vec<usize>> {
    if !pod.requests_gpu() {
        return Some(Vec::new());
    }
    if pod.gpu_milli < MILLI {
        if pod.num_gpu > 1 {
            return None;
        }
        let mut best: Option<usize> = None;
        for (i, &left) in node.gpus.iter().enumerate() {
            if left >= pod.gpu_milli && best.is_none_or(|b| left < node.gpus[b]) {
                best = Some(i);
            }
        }
        best.map(|i| vec![i])
    } else {
        exclusive_gpu_ids(node, pod)
    }
}

/// Reserve with `-gpusel random`: a sharing pod gets a uniformly random device
/// among those with `left ≥ gpu_milli`, by reservoir sampling in index order
/// (one `intn(k)` draw for the k-th candidate, as the simulator does); a
/// whole-GPU pod gets [`exclusive_gpu_ids`] (no randomness).
pub fn select_gpus_random<R: RandomSource + ?Sized>(
    node: &GpuNode,
    pod: &GpuPod,
    rng: &mut R,
) -> Option<Vec<usize>> {
    if !pod.requests_gpu() {
        return Some(Vec::new());
    }
    if pod.gpu_milli < MILLI {
        if pod.num_gpu > 1 {
            return None;
        }
        let mut count = 0usize;
        let mut chosen = None;
        for (i, &left) in node.gpus.iter().enumerate() {
            if left >= pod.gpu_milli {
                count += 1;
                if rng.intn(count) == 0 {
                    chosen = Some(i);
                }
            }
        }
        chosen.map(|i| vec![i])
    } else {
        exclusive_gpu_ids(node, pod)
    }
}

/// Reserve with FGD's own selection (`allocateGpuIdBasedOnFGDScore` →
/// `calculateGpuShareFragExtendScore`): for a sharing pod, the device whose
/// hypothetical use gives the highest **integer** FGD score, lowest index on
/// ties. Because the score is `int64(sigmoid(Δ/1000)·100)`, devices whose
/// fragmentation deltas differ by less than one score point tie and the
/// lowest index wins, which is not always the exact frag minimiser. Whole-GPU
/// pods get [`exclusive_gpu_ids`]. See [`crate::policy::fgd_eval`].
pub fn select_gpus_fgd(node: &GpuNode, pod: &GpuPod, typical: &TypicalPods) -> Option<Vec<usize>> {
    if !pod.requests_gpu() {
        return Some(Vec::new());
    }
    if pod.gpu_milli < MILLI && pod.num_gpu > 1 {
        return None;
    }
    crate::policy::fgd_eval(node, pod, typical).gpu_ids
}

/// Dispatches on `method`. `typical` is needed only for [`GpuSelMethod::Fgd`]
/// and `rng` only for [`GpuSelMethod::Random`].
pub fn select_gpus<R: RandomSource + ?Sized>(
    method: GpuSelMethod,
    node: &GpuNode,
    pod: &GpuPod,
    typical: Option<&TypicalPods>,
    rng: &mut R,
) -> Option<Vec<usize>> {
    match method {
        GpuSelMethod::Best => select_gpus_best(node, pod),
        GpuSelMethod::Random => select_gpus_random(node, pod, rng),
        GpuSelMethod::Fgd => select_gpus_fgd(node, pod, typical?),
    }
}

/// Why [`allocate`] refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AllocError {
    /// CPU or memory request exceeds what is left.
    CpuMem,
    /// `ids.len()` does not match the pod (must be `num_gpu` ids for a GPU
    /// pod, none for a pod without GPU milli).
    IdCount { expected: usize, got: usize },
    /// A device id is out of range.
    BadId(usize),
    /// A device (counting repeats in `ids`) lacks `gpu_milli`.
    GpuShort(usize),
}

impl std::fmt::Display for AllocError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AllocError::CpuMem => write!(f, "cpu/memory request exceeds node's free capacity"),
            AllocError::IdCount { expected, got } => {
                write!(f, "expected {expected} GPU ids, got {got}")
            }
            AllocError::BadId(i) => write!(f, "GPU id {i} out of range"),
            AllocError::GpuShort(i) => write!(f, "GPU {i} has too little milli left"),
        }
    }
}

impl std::error::Error for AllocError {}

/// Applies a pod to a node, as Reserve + assume do: CPU and memory requests
/// are subtracted, each listed device loses `gpu_milli` (the device cache sums
/// the per-GPU milli of the pods on it, `deviceinfo.go`), and the pod's
/// affinity tag is counted for GpuClustering. All-or-nothing: on error the
/// node is unchanged.
pub fn allocate(node: &mut GpuNode, pod: &GpuPod, ids: &[usize]) -> Result<(), AllocError> {
    if !fits_cpu_mem(node, pod) {
        return Err(AllocError::CpuMem);
    }
    let expected = if pod.requests_gpu() {
        pod.num_gpu as usize
    } else {
        0
    };
    if ids.len() != expected {
        return Err(AllocError::IdCount {
            expected,
            got: ids.len(),
        });
    }
    let mut after = node.gpus.clone();
    for &i in ids {
        let slot = after.get_mut(i).ok_or(AllocError::BadId(i))?;
        if *slot < pod.gpu_milli {
            return Err(AllocError::GpuShort(i));
        }
        *slot -= pod.gpu_milli;
    }
    node.gpus = after;
    node.cpu_milli_left -= pod.cpu_milli;
    node.mem_mib_left -= pod.mem_mib;
    if let Some(tag) = pod.affinity_tag() {
        *node.gpu_affinity.entry(tag).or_insert(0) += 1;
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::rng::Xoshiro256;

    /// The reference node of the tests: 4 × V100M16 with GPUs
    /// `[1000, 500, 0, 1000]`, 16 of 32 cores and 64 of 128 GiB left.
    pub(crate) fn ref_node() -> GpuNode {
        let mut n = GpuNode::new(32_000, 131_072, 4, "V100M16");
        n.gpus = vec![1000, 500, 0, 1000];
        n.cpu_milli_left = 16_000;
        n.mem_mib_left = 65_536;
        n.gpu_affinity.insert("share-gpu".into(), 3);
        n
    }

    pub(crate) fn pod(cpu: i64, num_gpu: u32, gpu_milli: u32) -> GpuPod {
        GpuPod {
            cpu_milli: cpu,
            mem_mib: 1024,
            num_gpu,
            gpu_milli,
            gpu_spec: vec![],
        }
    }

    #[test]
    fn node_helpers() {
        let n = ref_node();
        assert_eq!(n.gpu_milli_left_total(), 2500);
        assert_eq!(n.fully_free_gpus(), 2);
        assert_eq!(n.gpu_milli_used(), 1500);
        assert!(n.is_used());
        assert!(!GpuNode::new(1000, 1000, 2, "T4").is_used());
    }

    #[test]
    fn filter_shapes() {
        let n = ref_node();
        assert!(fits(&n, &pod(1000, 1, 300))); // GPUs 0, 1, 3
        assert!(fits(&n, &pod(1000, 1, 600))); // GPUs 0, 3
        assert!(fits(&n, &pod(1000, 1, 1000)));
        assert!(fits(&n, &pod(1000, 2, 1000))); // 0 and 3
        assert!(!fits(&n, &pod(1000, 3, 1000))); // only 2 free
        // CPU-only pod passes the GPU filter everywhere, even without GPUs.
        let cpu_node = GpuNode::new(8000, 8000, 0, "");
        assert!(fits(&cpu_node, &pod(1000, 0, 0)));
        assert!(!fits(&cpu_node, &pod(1000, 1, 100)));
        // gpu_milli > 0 with num_gpu == 0: AllocateGpuId refuses.
        assert!(!fits(&n, &pod(1000, 0, 500)));
    }

    #[test]
    fn filter_two_pointer_packs_multi_gpu_shares() {
        // gpunodeinfo.go's greedy can place 2 × 500 on one free device.
        let mut n = GpuNode::new(8000, 8000, 2, "T4");
        n.gpus = vec![1000, 0];
        assert!(fits(&n, &pod(100, 2, 500)));
        assert!(!fits(&n, &pod(100, 3, 500)));
    }

    #[test]
    fn filter_model_spec() {
        let n = ref_node();
        let mut p = pod(1000, 1, 300);
        p.gpu_spec = vec!["T4".into()];
        assert!(!fits(&n, &p));
        p.gpu_spec = GpuPod::parse_gpu_spec("T4|V100M16");
        assert!(fits(&n, &p));
        p.gpu_spec = vec![String::new()]; // only empty entries = any model
        assert!(fits(&n, &p));
        let v = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(model_accessible("", &v(&[])));
        assert!(!model_accessible("", &v(&["T4"])));
        assert!(model_accessible("T4", &v(&["", "T4"])));
        assert!(!model_accessible("", &v(&["", ""]))); // "|" on a CPU node
        assert!(model_accessible("G2", &v(&["", ""])));
        assert!(!model_accessible_str("", "|"));
        assert!(model_accessible_str("G2", "|"));
        assert!(model_accessible_str("", ""));
        assert!(model_accessible_str("T4", "A10|T4"));
        assert!(!model_accessible_str("G3", "A10|T4"));
    }

    #[test]
    fn cpu_mem_fit() {
        let n = ref_node();
        assert!(fits_cpu_mem(&n, &pod(16_000, 0, 0)));
        assert!(!fits_cpu_mem(&n, &pod(16_001, 0, 0)));
        let mut p = pod(1000, 0, 0);
        p.mem_mib = 65_537;
        assert!(!fits_cpu_mem(&n, &p));
    }

    #[test]
    fn best_selection() {
        let n = ref_node();
        assert_eq!(select_gpus_best(&n, &pod(1000, 1, 300)), Some(vec![1])); // 500 is tightest
        assert_eq!(select_gpus_best(&n, &pod(1000, 1, 500)), Some(vec![1]));
        assert_eq!(select_gpus_best(&n, &pod(1000, 1, 600)), Some(vec![0])); // tie 0/3 → 0
        assert_eq!(select_gpus_best(&n, &pod(1000, 1, 1000)), Some(vec![0]));
        assert_eq!(select_gpus_best(&n, &pod(1000, 2, 1000)), Some(vec![0, 3]));
        assert_eq!(select_gpus_best(&n, &pod(1000, 3, 1000)), None);
        assert_eq!(select_gpus_best(&n, &pod(1000, 0, 0)), Some(vec![]));
        assert_eq!(select_gpus_best(&n, &pod(1000, 2, 500)), None);
    }

    #[test]
    fn random_selection_reservoir() {
        let n = ref_node();
        let p = pod(1000, 1, 300);
        let mut rng = Xoshiro256::seed_from_u64(1);
        let mut seen = [0usize; 4];
        for _ in 0..3000 {
            let ids = select_gpus_random(&n, &p, &mut rng).unwrap();
            assert_eq!(ids.len(), 1);
            seen[ids[0]] += 1;
        }
        assert_eq!(seen[2], 0); // GPU 2 is full
        for &i in &[0usize, 1, 3] {
            assert!((800..=1200).contains(&seen[i]), "{seen:?}");
        }
        // Whole-GPU pods are deterministic.
        assert_eq!(
            select_gpus_random(&n, &pod(1000, 2, 1000), &mut rng),
            Some(vec![0, 3])
        );
        // Draw sequence: intn(1), intn(2), intn(3) for candidates 0, 1, 3.
        let mut calls = 0u64;
        // A source returning 1 makes every intn(k) return 0 without rejection.
        let mut always_zero = || {
            calls += 1;
            1u64
        };
        assert_eq!(select_gpus_random(&n, &p, &mut always_zero), Some(vec![3]));
        assert_eq!(calls, 3);
    }

    #[test]
    fn allocate_applies_and_validates() {
        let mut n = ref_node();
        let p = pod(2000, 1, 300);
        allocate(&mut n, &p, &[1]).unwrap();
        assert_eq!(n.gpus, vec![1000, 200, 0, 1000]);
        assert_eq!(n.cpu_milli_left, 14_000);
        assert_eq!(n.mem_mib_left, 65_536 - 1024);
        assert_eq!(n.gpu_affinity["share-gpu"], 4);

        let w = pod(1000, 2, 1000);
        allocate(&mut n, &w, &[0, 3]).unwrap();
        assert_eq!(n.gpus, vec![0, 200, 0, 0]);
        assert_eq!(n.gpu_affinity["2-gpu"], 1);

        let before = n.clone();
        assert_eq!(
            allocate(&mut n, &p, &[1, 1]),
            Err(AllocError::IdCount {
                expected: 1,
                got: 2
            })
        );
        assert_eq!(allocate(&mut n, &p, &[0]), Err(AllocError::GpuShort(0)));
        assert_eq!(allocate(&mut n, &p, &[9]), Err(AllocError::BadId(9)));
        assert_eq!(
            allocate(&mut n, &pod(99_000, 0, 0), &[]),
            Err(AllocError::CpuMem)
        );
        assert_eq!(n, before);

        allocate(&mut n, &pod(1000, 0, 0), &[]).unwrap();
        assert_eq!(n.gpu_affinity.len(), 2); // CPU pods carry no tag
    }

    #[test]
    fn affinity_tags() {
        assert_eq!(pod(1, 0, 0).affinity_tag(), None);
        assert_eq!(pod(1, 1, 200).affinity_tag().as_deref(), Some("share-gpu"));
        assert_eq!(pod(1, 1, 1000).affinity_tag().as_deref(), Some("1-gpu"));
        assert_eq!(pod(1, 8, 1000).affinity_tag().as_deref(), Some("8-gpu"));
    }
}
