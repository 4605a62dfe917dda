//! The node and pod model of GPU sharing (the simulator's `simontype`):
//! what a node has left, what a pod asks for, which GPU models a pod
//! accepts, and the two things the policies and Reserve both need (how
//! Reserve picks devices, whole GPUs taken lowest index first). Below
//! everything else of the crate, which all uses it.
//!
//! Follows `hkust-adsl/kubernetes-scheduler-simulator`:
//! - `pkg/type/resource.go` (`NodeResource`, `PodResource`,
//!   `AllocateExclusiveGpuId`),
//! - `pkg/utils/utils.go` (`IsNodeAccessibleToPodByType`).
//!
//! GPU capacity is tracked per device in milli-GPU: `gpus[i]` is the milli
//! still free on device `i` (1000 = untouched, 0 = full).

use std::collections::BTreeMap;

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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

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
    fn affinity_tags() {
        assert_eq!(pod(1, 0, 0).affinity_tag(), None);
        assert_eq!(pod(1, 1, 200).affinity_tag().as_deref(), Some("share-gpu"));
        assert_eq!(pod(1, 1, 1000).affinity_tag().as_deref(), Some("1-gpu"));
        assert_eq!(pod(1, 8, 1000).affinity_tag().as_deref(), Some("8-gpu"));
    }
}
