//! What the GPU-share plugins share: GpuShare (filter and reserve) and the
//! FGD paper's score plugins read a node's per-GPU state and a pod's GPU
//! demand the same way, from sift's [`Node`] and [`Pod`], into the pure
//! model of `sift-gpu-share-logic` ([`GpuNode`], [`GpuPod`]).
//!
//! # The Kubernetes encoding (the paper simulator's, `sift trace openb`'s)
//!
//! - **Node**: the label `alibabacloud.com/gpu-card-model` is the GPU
//!   model; the allocatable extended resource `alibabacloud.com/gpu-count`
//!   the number of GPUs, each a bin of 1000 milli-GPU. CPU and memory left
//!   are allocatable minus what the bound pods request.
//! - **Pod**: the annotations `alibabacloud.com/gpu-milli` (milli-GPU per
//!   GPU, 1..=1000; absent or 0: no GPU), `alibabacloud.com/gpu-count`
//!   (number of GPUs; absent: 0, which with a gpu-milli fits nowhere, as in
//!   the simulator) and `alibabacloud.com/gpu-card-model` (allowed models,
//!   `|`-separated; absent: any). CPU is the pod's request.
//! - **Which GPUs a bound pod took**: the annotation
//!   `alibabacloud.com/gpu-index`, GPU ids (0-based, below the node's GPU
//!   count) joined by `-` in ascending order, e.g. `"0"` or `"2-3"` (the
//!   simulator's format; `,` is read as a separator too). GpuShare's
//!   Reserve writes it. Each listed GPU lost the pod's gpu-milli (an id
//!   listed twice lost it twice).
//!
//! A node's per-GPU state is built from its bound pods' annotations
//! ([`Node::pod_annotations`]) once per node change ([`Node::derived`]):
//! each pod with a gpu-milli
//! and a gpu-index takes gpu-milli from the listed GPUs; ids out of range
//! are ignored and a GPU never goes below 0. Bound pods with a gpu-milli
//! but no gpu-index (e.g. a dump taken without GpuShare) are then placed
//! as Reserve's `best` selection would, in pod-key order; one that does
//! not fit is left out of the GPU state.

use serde::{Deserialize, Serialize};
use sift_gpu_share_logic::frag::{PodClass, TypicalPods};
use sift_gpu_share_logic::gpu::{GpuNode, GpuPod, GpuSelMethod, MILLI, select_gpus_best};
use sift_gpu_share_logic::rng::{Xoshiro256, splitmix64};
use sift_sdk::{Labels, Node, Pod, PreScore, Quantity, Status};

pub use sift_gpu_share_logic as logic;

/// Node label: the GPU model; pod annotation: the allowed models.
pub const GPU_MODEL: &str = "alibabacloud.com/gpu-card-model";
/// Node allocatable: number of GPUs; pod annotation: number of GPUs asked.
pub const GPU_COUNT: &str = "alibabacloud.com/gpu-count";
/// Pod annotation: milli-GPU per GPU.
pub const GPU_MILLI: &str = "alibabacloud.com/gpu-milli";
/// Pod annotation written at Reserve: the GPU ids taken, `-`-separated.
pub const GPU_INDEX: &str = "alibabacloud.com/gpu-index";

/// The bound pods' annotations every GPU-share plugin reads on nodes.
pub const POD_ANNOTATION_KEYS: &[&str] = &[GPU_INDEX, GPU_MILLI, GPU_COUNT];
/// The node labels they read.
pub const NODE_LABELS: &[&str] = &[GPU_MODEL];

/// More GPUs than any node has: a larger `gpu-count` is capped here so a
/// malformed node cannot make a plugin allocate without bound.
pub const MAX_GPUS_PER_NODE: i64 = 1024;

const MIB: i64 = 1 << 20;

/// A pod's GPU demand and CPU/memory requests. An annotation that is not a
/// number is an error naming it.
pub fn gpu_pod(pod: &Pod) -> Result<GpuPod, String> {
    let milli = annotation_number(&pod.annotations, GPU_MILLI)?.unwrap_or(0);
    let count = annotation_number(&pod.annotations, GPU_COUNT)?.unwrap_or(0);
    let spec = pod.annotations.get(GPU_MODEL).unwrap_or("");
    Ok(GpuPod {
        cpu_milli: pod.requests.milli_cpu,
        mem_mib: pod.requests.memory / MIB,
        num_gpu: clamp_u32(count),
        gpu_milli: clamp_u32(milli),
        gpu_spec: split_spec(spec),
    })
}

/// PreScore of the score plugins: the pod's demand, or an error status
/// when an annotation is malformed (the cycle is aborted).
pub fn pre_score_pod(pod: &Pod) -> PreScore<GpuPod> {
    match gpu_pod(pod) {
        Ok(p) => PreScore::Proceed(p),
        Err(e) => PreScore::Error(Status::error(e)),
    }
}

/// A `gpu_spec` as the simulator keeps it: split on `|`, empty entries
/// kept, so that joining gives the annotation back (`PodClass` keys on
/// the raw string). Empty: any model.
pub fn split_spec(spec: &str) -> Vec<String> {
    if spec.is_empty() {
        Vec::new()
    } else {
        spec.split('|').map(str::to_string).collect()
    }
}

fn clamp_u32(v: i64) -> u32 {
    v.clamp(0, i64::from(u32::MAX)) as u32
}

/// A numeric annotation (a Kubernetes quantity, e.g. `500`); `None` when
/// absent.
fn annotation_number(annotations: &Labels, key: &str) -> Result<Option<i64>, String> {
    match annotations.get(key) {
        None => Ok(None),
        // The usual plain integer, without the quantity parser.
        Some(v) if let Ok(n) = v.parse::<i64>() => Ok(Some(n)),
        Some(v) => Quantity::parse(v)
            .map(|q| Some(q.value()))
            .map_err(|_| format!("annotation {key}={v:?} is not a number")),
    }
}

/// GPU ids of a `gpu-index` annotation (`"2-3"`); `None` if one is not a
/// number.
pub fn parse_gpu_index(value: &str) -> Option<Vec<usize>> {
    value
        .split(['-', ','])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().ok())
        .collect()
}

/// The `gpu-index` annotation for these GPU ids: `"2-3"`.
pub fn format_gpu_index(ids: &[usize]) -> String {
    let parts: Vec<String> = ids.iter().map(usize::to_string).collect();
    parts.join("-")
}

/// A node's per-GPU state, CPU and memory left, model, and the count of
/// bound GPU pods per affinity tag (`share-gpu`, `<n>-gpu`, which only
/// GpuClustering reads); see the crate documentation. Built once per node
/// change and kept with the node: rebuilding it for every pod was a
/// quarter of a replay's time.
pub fn gpu_node(node: &Node) -> std::sync::Arc<GpuNode> {
    node.derived(build_gpu_node)
}

/// [`gpu_node`], built afresh.
pub fn build_gpu_node(node: &Node) -> GpuNode {
    let count = node
        .allocatable
        .scalar(GPU_COUNT)
        .clamp(0, MAX_GPUS_PER_NODE) as usize;
    let model = node.labels.get(GPU_MODEL).unwrap_or("");
    let alloc = &node.allocatable;
    let used = &node.requested;
    let mut n = GpuNode::new(alloc.milli_cpu, alloc.memory / MIB, count, model);
    n.cpu_milli_left = alloc.milli_cpu - used.milli_cpu;
    n.mem_mib_left = (alloc.memory - used.memory) / MIB;
    let mut unplaced: Vec<GpuPod> = Vec::new();
    for bound in &node.pod_annotations {
        let a = &bound.annotations;
        let milli = match annotation_number(a, GPU_MILLI) {
            Ok(Some(m)) if m > 0 => clamp_u32(m),
            _ => continue,
        };
        let annotated_count = annotation_number(a, GPU_COUNT).ok().flatten();
        match a.get(GPU_INDEX).and_then(parse_gpu_index) {
            Some(ids) if !ids.is_empty() => {
                for id in &ids {
                    if let Some(left) = n.gpus.get_mut(*id) {
                        *left = left.saturating_sub(milli);
                    }
                }
                let num_gpu = annotated_count.map_or(ids.len() as u32, clamp_u32);
                count_tag(&mut n, num_gpu, milli);
            }
            _ => unplaced.push(GpuPod {
                cpu_milli: 0,
                mem_mib: 0,
                num_gpu: annotated_count.map_or(0, clamp_u32),
                gpu_milli: milli,
                gpu_spec: Vec::new(),
            }),
        }
    }
    for p in unplaced {
        let Some(ids) = select_gpus_best(&n, &p) else {
            continue;
        };
        if ids.is_empty() {
            continue;
        }
        for id in ids {
            n.gpus[id] = n.gpus[id].saturating_sub(p.gpu_milli);
        }
        count_tag(&mut n, p.num_gpu, p.gpu_milli);
    }
    n
}

fn count_tag(n: &mut GpuNode, num_gpu: u32, gpu_milli: u32) {
    let pod = GpuPod {
        cpu_milli: 0,
        mem_mib: 0,
        num_gpu,
        gpu_milli: gpu_milli.min(MILLI),
        gpu_spec: Vec::new(),
    };
    if let Some(tag) = pod.affinity_tag() {
        *n.gpu_affinity.entry(tag).or_insert(0) += 1;
    }
}

/// One typical pod as plugin arguments carry it (`typicalPods: [...]`):
/// a pod class of the trace and its frequency, most frequent first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TypicalPodArg {
    pub cpu_milli: i64,
    /// Milli-GPU per GPU (0: a CPU-only class).
    pub gpu_milli: u32,
    pub num_gpu: u32,
    /// Allowed models, `|`-separated; empty: any.
    #[serde(default)]
    pub gpu_spec: String,
    /// Its share of the pods, renormalised over the kept classes.
    pub freq: f64,
}

/// The argument form of a typical-pod table.
pub fn typical_pods_to_args(t: &TypicalPods) -> Vec<TypicalPodArg> {
    t.pods
        .iter()
        .map(|p| TypicalPodArg {
            cpu_milli: p.class.cpu_milli,
            gpu_milli: p.class.gpu_milli,
            num_gpu: p.class.num_gpu,
            gpu_spec: p.class.gpu_spec.clone(),
            freq: p.freq,
        })
        .collect()
}

/// The table from arguments; frequencies must be in 0..=1.
pub fn typical_pods_from_args(args: &[TypicalPodArg]) -> Result<TypicalPods, String> {
    let mut entries = Vec::with_capacity(args.len());
    for (i, a) in args.iter().enumerate() {
        if !(0.0..=1.0).contains(&a.freq) {
            return Err(format!(
                "typicalPods[{i}].freq must be in 0..=1, got {}",
                a.freq
            ));
        }
        entries.push((
            PodClass {
                cpu_milli: a.cpu_milli,
                gpu_milli: a.gpu_milli,
                num_gpu: a.num_gpu,
                gpu_spec: a.gpu_spec.clone(),
            },
            a.freq,
        ));
    }
    Ok(TypicalPods::from_entries(entries))
}

/// The `gpuSelection` argument: `best` (the default), `random` or `fgd`.
pub fn parse_gpu_selection(s: Option<&str>) -> Result<GpuSelMethod, String> {
    match s.map(str::to_ascii_lowercase).as_deref() {
        None | Some("best") => Ok(GpuSelMethod::Best),
        Some("random") => Ok(GpuSelMethod::Random),
        Some("fgd") => Ok(GpuSelMethod::Fgd),
        Some(_) => Err(format!(
            "gpuSelection must be best, random or fgd, got {:?}",
            s.unwrap_or_default()
        )),
    }
}

/// The random stream of one pod: a component has no global generator and
/// instances come and go, so every random choice about a pod is a
/// function of the configured seed and the pod's namespace/name only.
pub fn pod_rng(seed: u64, pod: &Pod) -> Xoshiro256 {
    // FNV-1a over "namespace/name".
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let bytes = pod
        .namespace
        .bytes()
        .chain(std::iter::once(b'/'))
        .chain(pod.name.bytes());
    for b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let mut s = seed;
    Xoshiro256::seed_from_u64(h ^ splitmix64(&mut s))
}

/// A final score clamped into kube-scheduler's range (the host rejects
/// others). The policies' formulas stay in range for nodes of at most
/// 8 GPUs and 128 cores (the simulator's normalisers); larger nodes would
/// leave it.
pub fn clamp_score(s: i64) -> i64 {
    s.clamp(0, sift_sdk::MAX_NODE_SCORE)
}

/// A policy scorer that takes no arguments and scores each node with
/// `$score(&GpuNode, &GpuPod) -> i64` (clamped to 0..=100, no
/// NormalizeScore): DotProd, GpuPacking, GpuClustering.
#[macro_export]
macro_rules! policy_scorer {
    ($plugin:ident, $name:literal, $score:path) => {
        pub struct $plugin;

        impl sift_sdk::Plugin for $plugin {
            const NAME: &'static str = $name;
            const EXTENSION_POINTS: sift_sdk::ExtensionPoints = sift_sdk::ExtensionPoints::SCORE;
            const NODE_FIELDS: sift_sdk::NodeFields =
                sift_sdk::NodeFields::RESOURCES.union(sift_sdk::NodeFields::LABELS);
            const NODE_LABELS: Option<&'static [&'static str]> = Some($crate::NODE_LABELS);
            const POD_ANNOTATION_KEYS: &'static [&'static str] = $crate::POD_ANNOTATION_KEYS;
            type PodState = sift_gpu_share_logic::gpu::GpuPod;

            fn new(args: sift_sdk::Args) -> Result<Self, String> {
                if !args.is_empty() {
                    return Err(concat!($name, " takes no arguments").into());
                }
                Ok($plugin)
            }

            fn pre_score(
                &self,
                pod: &sift_sdk::Pod,
                _: &[&sift_sdk::Node],
                _: &dyn sift_sdk::ClusterView,
            ) -> sift_sdk::PreScore<Self::PodState> {
                $crate::pre_score_pod(pod)
            }

            fn score(
                &self,
                _: &sift_sdk::Pod,
                p: &Self::PodState,
                node: &sift_sdk::Node,
            ) -> Result<i64, sift_sdk::Status> {
                Ok($crate::clamp_score($score(&$crate::gpu_node(node), p)))
            }
        }

        sift_sdk::export_plugin!($plugin);
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use sift_sdk::{PodAnnotations, Resources};

    fn node(gpus: i64, bound: &[(&str, &[(&str, &str)])]) -> Node {
        let mut alloc = Resources {
            milli_cpu: 32_000,
            memory: 64 * 1024 * MIB,
            allowed_pod_number: 110,
            ..Default::default()
        };
        alloc.scalar = vec![(GPU_COUNT.to_string(), gpus)];
        Node {
            name: "n".into(),
            labels: Labels::new(vec![(GPU_MODEL.into(), "T4".into())]),
            allocatable: alloc,
            requested: Resources {
                milli_cpu: 4000,
                memory: 1024 * MIB,
                ..Default::default()
            },
            pod_annotations: bound
                .iter()
                .map(|(pod, ann)| PodAnnotations {
                    pod: pod.to_string(),
                    annotations: Labels::new(
                        ann.iter()
                            .map(|(k, v)| (k.to_string(), v.to_string()))
                            .collect(),
                    ),
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn node_state_from_bound_pods() {
        let n = build_gpu_node(&node(
            4,
            &[
                ("default/a", &[(GPU_MILLI, "300"), (GPU_INDEX, "1")]),
                (
                    "default/b",
                    &[(GPU_MILLI, "1000"), (GPU_COUNT, "2"), (GPU_INDEX, "2-3")],
                ),
                ("default/c", &[(GPU_MILLI, "200"), (GPU_INDEX, "1")]),
                // No index: placed best-fit, on GPU 1 (500 left).
                ("default/d", &[(GPU_MILLI, "400"), (GPU_COUNT, "1")]),
                // Out of range ids are ignored; CPU pods carry no milli.
                ("default/e", &[(GPU_MILLI, "100"), (GPU_INDEX, "9")]),
                ("default/f", &[(GPU_INDEX, "0")]),
            ],
        ));
        assert_eq!(n.gpus, vec![1000, 100, 0, 0]);
        assert_eq!(n.model, "T4");
        assert_eq!(n.cpu_milli_left, 28_000);
        assert_eq!(n.mem_mib_left, 63 * 1024);
        assert_eq!(n.gpu_affinity.get("share-gpu"), Some(&4));
        assert_eq!(n.gpu_affinity.get("2-gpu"), Some(&1));
    }

    #[test]
    fn gpu_index_format() {
        assert_eq!(parse_gpu_index("2-3"), Some(vec![2, 3]));
        assert_eq!(parse_gpu_index("0"), Some(vec![0]));
        assert_eq!(parse_gpu_index("1,4"), Some(vec![1, 4]));
        assert_eq!(parse_gpu_index("x"), None);
        assert_eq!(format_gpu_index(&[2, 3]), "2-3");
        assert_eq!(format_gpu_index(&[5]), "5");
    }

    #[test]
    fn pod_demand_and_spec() {
        let mut pod = Pod::default();
        pod.requests.milli_cpu = 8000;
        pod.requests.memory = 2048 * MIB;
        pod.annotations = Labels::new(vec![
            (GPU_MILLI.into(), "500".into()),
            (GPU_COUNT.into(), "1".into()),
            (GPU_MODEL.into(), "V100M16|V100M32".into()),
        ]);
        let p = gpu_pod(&pod).unwrap();
        assert_eq!(
            (p.cpu_milli, p.mem_mib, p.num_gpu, p.gpu_milli),
            (8000, 2048, 1, 500)
        );
        assert_eq!(p.gpu_spec_string(), "V100M16|V100M32");
        pod.annotations = Labels::new(vec![(GPU_MILLI.into(), "lots".into())]);
        assert!(gpu_pod(&pod).unwrap_err().contains(GPU_MILLI));
    }

    #[test]
    fn pod_rng_is_a_function_of_seed_and_key() {
        use sift_gpu_share_logic::rng::RandomSource;
        let mut a = Pod {
            name: "p".into(),
            namespace: "default".into(),
            ..Default::default()
        };
        let x = pod_rng(1, &a).next_u64();
        assert_eq!(x, pod_rng(1, &a).next_u64());
        assert_ne!(x, pod_rng(2, &a).next_u64());
        a.name = "q".into();
        assert_ne!(x, pod_rng(1, &a).next_u64());
    }

    #[test]
    fn typical_pods_round_trip() {
        let args = vec![
            TypicalPodArg {
                cpu_milli: 4000,
                gpu_milli: 500,
                num_gpu: 1,
                gpu_spec: String::new(),
                freq: 0.75,
            },
            TypicalPodArg {
                cpu_milli: 8000,
                gpu_milli: 1000,
                num_gpu: 2,
                gpu_spec: "T4".into(),
                freq: 0.25,
            },
        ];
        let t = typical_pods_from_args(&args).unwrap();
        assert_eq!(typical_pods_to_args(&t), args);
        let mut bad = args.clone();
        bad[0].freq = 1.5;
        assert!(typical_pods_from_args(&bad).is_err());
        assert_eq!(parse_gpu_selection(Some("FGD")), Ok(GpuSelMethod::Fgd));
        assert!(parse_gpu_selection(Some("worst")).is_err());
    }
}
