//! RandomScore: the FGD paper simulator's random baseline
//! (`random_score.go`): PreScore picks one feasible node uniformly at
//! random, which scores 100; every other node scores 0.
//!
//! A component has no global random stream (and instances come and go),
//! so the pick is a function of the argument `seed` (default 0) and the
//! pod's namespace/name: the same seed gives the same replay. Pair it
//! with GpuShare's `gpuSelection: random`.

use serde::Deserialize;
use sift_gpu_share_common::pod_rng;
use sift_gpu_share_logic::policy::random_prescore_pick;
use sift_sdk::{
    Args, ClusterView, ExtensionPoints, MAX_NODE_SCORE, Node, NodeFields, Plugin, Pod, PreScore,
    Status, export_plugin,
};

pub struct RandomScore {
    seed: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RandomArgs {
    #[serde(default)]
    seed: u64,
}

impl Plugin for RandomScore {
    const NAME: &'static str = "RandomScore";
    const EXTENSION_POINTS: ExtensionPoints = ExtensionPoints::SCORE;
    /// Only node names.
    const NODE_FIELDS: NodeFields = NodeFields::NONE;
    /// The chosen node's name.
    type PodState = String;

    fn new(args: Args) -> Result<Self, String> {
        let args: RandomArgs = args.parse()?;
        Ok(RandomScore { seed: args.seed })
    }

    fn pre_score(&self, pod: &Pod, feasible: &[&Node], _: &dyn ClusterView) -> PreScore<String> {
        if feasible.is_empty() {
            return PreScore::Skip;
        }
        let pick = random_prescore_pick(feasible.len(), &mut pod_rng(self.seed, pod));
        PreScore::Proceed(feasible[pick].name.clone())
    }

    fn score(&self, _: &Pod, chosen: &String, node: &Node) -> Result<i64, Status> {
        Ok(if node.name == *chosen {
            MAX_NODE_SCORE
        } else {
            0
        })
    }
}

export_plugin!(RandomScore);
