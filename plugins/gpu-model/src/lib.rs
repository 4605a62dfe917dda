//! GpuModel: a pod that asks for GPUs runs only on a node with a GPU of a
//! model it accepts.
//!
//! Alibaba's public GPU cluster trace `openb` (`alibaba/clusterdata`,
//! `cluster-trace-gpu-v2023`) labels nodes
//! `alibabacloud.com/gpu-card-model=<model>` and gives some GPU tasks a list
//! of acceptable models. Here a pod asks for GPUs with the extended
//! resources `alibabacloud.com/gpu-milli` or `alibabacloud.com/gpu-count`
//! (or `nvidia.com/gpu`), and lists the models it accepts in the label
//! `sift.io/gpu-models`, separated by dots (`V100M16.V100M32`; label values
//! cannot hold `|`). No list: any GPU model will do.
//!
//! This is the reference implementation of the predicate every example
//! language in `plugins/examples/` implements against the same cases
//! (`tests/cases/GpuModel`).

use sift_sdk::model::LabelKey;
use sift_sdk::{Args, ClusterView, Node, NodeFields, Plugin, Pod, Prepare, Status, export_plugin};

pub const NODE_MODEL_LABEL: &str = "alibabacloud.com/gpu-card-model";
pub const POD_MODELS_LABEL: &str = "sift.io/gpu-models";
pub const GPU_RESOURCES: [&str; 3] = [
    "alibabacloud.com/gpu-milli",
    "alibabacloud.com/gpu-count",
    "nvidia.com/gpu",
];
pub const ERR_NO_GPU: &str = "node(s) had no GPU";
pub const ERR_MODEL: &str = "node(s) didn't have an accepted GPU model";

pub struct GpuModel {
    model_label: LabelKey,
}

/// The models a GPU pod accepts; empty: any.
#[derive(Default)]
pub struct Accepted(Vec<String>);

impl Plugin for GpuModel {
    const NAME: &'static str = "GpuModel";
    const NODE_FIELDS: NodeFields = NodeFields::LABELS;
    const NODE_LABELS: Option<&'static [&'static str]> = Some(&[NODE_MODEL_LABEL]);
    type PodState = Accepted;

    fn new(_: Args) -> Result<Self, String> {
        Ok(GpuModel {
            model_label: LabelKey::new(NODE_MODEL_LABEL),
        })
    }

    fn prepare(&self, pod: &Pod, _cluster: &dyn ClusterView) -> Prepare<Accepted> {
        let wants_gpu = pod
            .requests
            .scalar
            .iter()
            .any(|(name, amount)| *amount > 0 && GPU_RESOURCES.contains(&name.as_str()));
        if !wants_gpu {
            return Prepare::Skip;
        }
        let accepted = pod
            .labels
            .get(POD_MODELS_LABEL)
            .map(|v| {
                v.split('.')
                    .filter(|m| !m.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        Prepare::Proceed(Accepted(accepted))
    }

    fn filter(&self, _: &Pod, accepted: &Accepted, node: &Node) -> Status {
        match node.labels.get_key(&self.model_label) {
            None | Some("") => Status::unresolvable(ERR_NO_GPU),
            Some(model) if accepted.0.is_empty() || accepted.0.iter().any(|m| m == model) => {
                Status::success()
            }
            Some(_) => Status::unresolvable(ERR_MODEL),
        }
    }
}

export_plugin!(GpuModel);
