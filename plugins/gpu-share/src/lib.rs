//! GpuShare: GPU sharing as the FGD paper's simulator does it (its
//! Open-Gpu-Share plugin, `pkg/simulator/plugin/open_gpu_share.go` of
//! `hkust-adsl/kubernetes-scheduler-simulator`): each GPU of a node is a
//! bin of 1000 milli-GPU that pods share.
//!
//! - **Filter**: a pod without `alibabacloud.com/gpu-milli` passes
//!   everywhere. Otherwise the node must have GPUs, a model the pod allows,
//!   and room for `gpu-count` GPUs of `gpu-milli` each on its GPUs' free
//!   milli (several shares of one pod may go on one GPU, as the simulator's
//!   `AllocateGpuId` allows).
//! - **Reserve**: picks the GPU ids on the chosen node and returns them as
//!   the annotation `alibabacloud.com/gpu-index` (`"2-3"`), which the next
//!   cycles read back from the node's bound pods. `gpuSelection`: `best`
//!   (the default: a share goes to the tightest GPU that fits, whole GPUs
//!   to the lowest-numbered free ones), `random` (a share goes to a
//!   uniformly random GPU that fits, drawn from `seed` and the pod's
//!   namespace/name), `fgd` (the GPU that leaves the node least fragmented
//!   for `typicalPods`).
//!
//! The encoding of nodes, pods and GPU ids is `sift-gpu-share-common`'s.
//!
//! ```yaml
//! pluginConfig:
//!   - name: GpuShare
//!     args: {gpuSelection: fgd, typicalPods: [{cpuMilli: 4000, gpuMilli: 500, numGpu: 1, freq: 1.0}]}
//! ```

use serde::Deserialize;
use sift_gpu_share_common::{
    NODE_LABELS, POD_ANNOTATION_KEYS, TypicalPodArg, format_gpu_index, gpu_node, gpu_pod,
    parse_gpu_selection, pod_rng, typical_pods_from_args,
};
use sift_gpu_share_logic::frag::TypicalPods;
use sift_gpu_share_logic::gpu::{
    GpuPod, GpuSelMethod, MILLI, fits, pod_model_accessible, select_gpus,
};
use sift_sdk::{
    Args, ClusterView, ExtensionPoints, Node, NodeFields, Plugin, Pod, Prepare, Status,
    export_plugin,
};

pub use sift_gpu_share_common::GPU_INDEX;

pub const ERR_NO_GPU: &str = "node(s) had no GPU";
pub const ERR_MODEL: &str = "node(s) had no GPU of an allowed model";
pub const ERR_TOO_FEW_GPUS: &str = "node(s) had too few GPUs";
pub const ERR_FREE: &str = "node(s) didn't have enough free GPU";
pub const ERR_NO_COUNT: &str = "pod asks for GPU milli without a GPU count";
pub const ERR_OVER_ONE: &str = "pod asks for more than 1000 milli-GPU per GPU";

pub struct GpuShare {
    selection: GpuSelMethod,
    seed: u64,
    typical: TypicalPods,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct GpuShareArgs {
    gpu_selection: Option<String>,
    #[serde(default)]
    seed: u64,
    #[serde(default)]
    typical_pods: Vec<TypicalPodArg>,
}

impl Plugin for GpuShare {
    const NAME: &'static str = "GpuShare";
    const EXTENSION_POINTS: ExtensionPoints =
        ExtensionPoints::FILTER.union(ExtensionPoints::RESERVE);
    const NODE_FIELDS: NodeFields = NodeFields::LABELS.union(NodeFields::RESOURCES);
    const NODE_LABELS: Option<&'static [&'static str]> = Some(NODE_LABELS);
    const POD_ANNOTATION_KEYS: &'static [&'static str] = POD_ANNOTATION_KEYS;
    /// The pod's GPU demand.
    type PodState = GpuPod;

    fn new(args: Args) -> Result<Self, String> {
        let args: GpuShareArgs = args.parse()?;
        let selection = parse_gpu_selection(args.gpu_selection.as_deref())?;
        let typical = typical_pods_from_args(&args.typical_pods)?;
        if selection == GpuSelMethod::Fgd && typical.is_empty() {
            return Err("gpuSelection fgd needs typicalPods".into());
        }
        Ok(GpuShare {
            selection,
            seed: args.seed,
            typical,
        })
    }

    fn prepare(&self, pod: &Pod, _: &dyn ClusterView) -> Prepare<GpuPod> {
        let p = match gpu_pod(pod) {
            Ok(p) => p,
            Err(e) => return Prepare::Reject(Status::unresolvable(e)),
        };
        if !p.requests_gpu() {
            return Prepare::Skip;
        }
        if p.num_gpu == 0 {
            return Prepare::Reject(Status::unresolvable(ERR_NO_COUNT));
        }
        if p.gpu_milli > MILLI {
            return Prepare::Reject(Status::unresolvable(ERR_OVER_ONE));
        }
        Prepare::Proceed(p)
    }

    fn filter(&self, _: &Pod, p: &GpuPod, node: &Node) -> Status {
        let n = gpu_node(node);
        if n.gpus.is_empty() {
            return Status::unresolvable(ERR_NO_GPU);
        }
        if !pod_model_accessible(&n, p) {
            return Status::unresolvable(ERR_MODEL);
        }
        // Even with every GPU free the shares would not fit.
        let capacity = n.gpus.len() as u64 * u64::from(MILLI / p.gpu_milli);
        if capacity < u64::from(p.num_gpu) {
            return Status::unresolvable(ERR_TOO_FEW_GPUS);
        }
        if !fits(&n, p) {
            return Status::unschedulable(ERR_FREE);
        }
        Status::success()
    }

    fn reserve(&self, pod: &Pod, node: &Node) -> Result<Vec<(String, String)>, Status> {
        let p = gpu_pod(pod).map_err(Status::error)?;
        if !p.requests_gpu() {
            return Ok(Vec::new());
        }
        let n = gpu_node(node);
        let mut rng = pod_rng(self.seed, pod);
        match select_gpus(self.selection, &n, &p, Some(&self.typical), &mut rng) {
            Some(ids) if !ids.is_empty() => {
                Ok(vec![(GPU_INDEX.to_string(), format_gpu_index(&ids))])
            }
            _ => Err(Status::unschedulable(ERR_FREE)),
        }
    }
}

export_plugin!(GpuShare);

#[cfg(test)]
mod tests {
    use super::*;
    use sift_gpu_share_common::{GPU_COUNT, GPU_MILLI, GPU_MODEL};
    use sift_sdk::{Code, Labels, PodAnnotations, Resources};

    fn node(model: &str, gpus: i64, bound: &[(&str, &str)]) -> Node {
        let mut alloc = Resources {
            milli_cpu: 64_000,
            memory: 1 << 40,
            allowed_pod_number: 110,
            ..Default::default()
        };
        alloc.scalar = vec![(GPU_COUNT.to_string(), gpus)];
        Node {
            name: "n".into(),
            labels: Labels::new(vec![(GPU_MODEL.into(), model.into())]),
            allocatable: alloc,
            pod_annotations: bound
                .iter()
                .enumerate()
                .map(|(i, (milli, index))| PodAnnotations {
                    pod: format!("default/b{i}"),
                    annotations: Labels::new(vec![
                        (GPU_MILLI.into(), milli.to_string()),
                        (GPU_INDEX.into(), index.to_string()),
                    ]),
                })
                .collect(),
            ..Default::default()
        }
    }

    fn pod(milli: &str, count: &str, spec: &str) -> Pod {
        let mut ann = vec![
            (GPU_MILLI.to_string(), milli.to_string()),
            (GPU_COUNT.to_string(), count.to_string()),
        ];
        if !spec.is_empty() {
            ann.push((GPU_MODEL.to_string(), spec.to_string()));
        }
        Pod {
            name: "p".into(),
            namespace: "default".into(),
            annotations: Labels::new(ann),
            ..Default::default()
        }
    }

    fn plugin(args: &str) -> GpuShare {
        GpuShare::new(Args::from_json(args).unwrap()).unwrap()
    }

    fn verdict(g: &GpuShare, p: &Pod, n: &Node) -> Status {
        match g.prepare(p, &sift_sdk::cluster::ClusterTables::default()) {
            Prepare::Proceed(s) => g.filter(p, &s, n),
            Prepare::Skip => Status::success(),
            Prepare::Reject(s) => s,
            Prepare::Narrow(..) => unreachable!(),
        }
    }

    #[test]
    fn filter_verdicts() {
        let g = plugin("{}");
        let half = node("T4", 2, &[("600", "0"), ("1000", "1")]);
        let ok = |s: Status| assert!(s.is_success(), "{s:?}");
        let no = |s: Status, code: Code, reason: &str| {
            assert_eq!(s.code, code);
            assert_eq!(s.reasons(), [reason]);
        };
        ok(verdict(&g, &pod("400", "1", ""), &half));
        no(
            verdict(&g, &pod("500", "1", ""), &half),
            Code::Unschedulable,
            ERR_FREE,
        );
        no(
            verdict(&g, &pod("1000", "3", ""), &half),
            Code::UnschedulableAndUnresolvable,
            ERR_TOO_FEW_GPUS,
        );
        no(
            verdict(&g, &pod("100", "1", "V100M16|A10"), &half),
            Code::UnschedulableAndUnresolvable,
            ERR_MODEL,
        );
        ok(verdict(&g, &pod("100", "1", "V100M16|T4"), &half));
        no(
            verdict(&g, &pod("100", "1", ""), &node("", 0, &[])),
            Code::UnschedulableAndUnresolvable,
            ERR_NO_GPU,
        );
        no(
            verdict(&g, &pod("100", "0", ""), &half),
            Code::UnschedulableAndUnresolvable,
            ERR_NO_COUNT,
        );
        // No GPU asked: passes even a CPU-only node.
        ok(verdict(&g, &Pod::default(), &node("", 0, &[])));
    }

    #[test]
    fn reserve_picks_gpus() {
        let n = node("T4", 4, &[("600", "0"), ("200", "2")]);
        let ids = |g: &GpuShare, p: &Pod| g.reserve(p, &n).unwrap();
        let best = plugin(r#"{"gpuSelection": "best"}"#);
        // Tightest: GPU 0 has 400 left.
        assert_eq!(
            ids(&best, &pod("300", "1", "")),
            [(GPU_INDEX.into(), "0".into())]
        );
        assert_eq!(
            ids(&best, &pod("500", "1", "")),
            [(GPU_INDEX.into(), "2".into())]
        );
        assert_eq!(
            ids(&best, &pod("1000", "2", "")),
            [(GPU_INDEX.into(), "1-3".into())]
        );
        assert_eq!(ids(&best, &Pod::default()), []);
        assert_eq!(
            best.reserve(&pod("1000", "3", ""), &n).unwrap_err().code,
            Code::Unschedulable
        );
        // Random is a function of the seed and the pod.
        let random = plugin(r#"{"gpuSelection": "random", "seed": 7}"#);
        let first = ids(&random, &pod("300", "1", ""));
        assert_eq!(first, ids(&random, &pod("300", "1", "")));
        assert!(GpuShare::new(Args::from_json(r#"{"gpuSelection": "fgd"}"#).unwrap()).is_err());
        assert!(GpuShare::new(Args::from_json(r#"{"gpuSelection": "worst"}"#).unwrap()).is_err());
    }
}
