//! NodeResourcesBalancedAllocation: favours nodes whose resources would be
//! used evenly with the pod placed (`noderesources/balanced_allocation.go`).
//!
//! Per resource the fraction requested/allocatable (capped at 1, actual
//! requests, not the non-zero defaults); the score is
//! `int((1 - std) * 100)` where std is half the difference of two
//! fractions, or the standard deviation of more. Pods requesting nothing
//! of the scored resources are skipped (kubernetes#129138).

use serde::Deserialize;
use sift_sdk::scoring::{
    ResourceWeight, allocatable_and_requested, default_resources, pod_request,
};
use sift_sdk::{
    Args, ClusterView, ExtensionPoints, MAX_NODE_SCORE, Node, NodeFields, Plugin, Pod, PreScore,
    Status, export_plugin,
};

pub struct BalancedAllocation {
    resources: Vec<ResourceWeight>,
}

/// `NodeResourcesBalancedAllocationArgs`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct BalancedArgs {
    #[serde(default)]
    resources: Vec<ResourceWeight>,
}

impl Plugin for BalancedAllocation {
    const NAME: &'static str = "NodeResourcesBalancedAllocation";
    const NODE_FIELDS: NodeFields = NodeFields::RESOURCES;
    const EXTENSION_POINTS: ExtensionPoints = ExtensionPoints::SCORE;
    /// The pod's request of each scored resource.
    type PodState = Vec<i64>;

    fn new(args: Args) -> Result<Self, String> {
        let args: BalancedArgs = args.parse()?;
        let resources = if args.resources.is_empty() {
            default_resources()
        } else {
            args.resources
        };
        Ok(BalancedAllocation { resources })
    }

    fn pre_score(&self, pod: &Pod, _: &[&Node], _: &dyn ClusterView) -> PreScore<Vec<i64>> {
        let requests: Vec<i64> = self
            .resources
            .iter()
            .map(|r| pod_request(pod, &r.name, true))
            .collect();
        if requests.iter().all(|r| *r == 0) {
            return PreScore::Skip;
        }
        PreScore::Proceed(requests)
    }

    fn score(&self, _pod: &Pod, requests: &Vec<i64>, node: &Node) -> Result<i64, Status> {
        let mut fractions: Vec<f64> = Vec::with_capacity(self.resources.len());
        for (r, req) in self.resources.iter().zip(requests) {
            let (alloc, requested) = allocatable_and_requested(node, &r.name, *req, true);
            if alloc == 0 {
                continue;
            }
            fractions.push((requested as f64 / alloc as f64).min(1.0));
        }
        Ok(score(&fractions))
    }
}

/// `balancedResourceScorer`.
fn score(fractions: &[f64]) -> i64 {
    let std = match fractions.len() {
        2 => ((fractions[0] - fractions[1]) / 2.0).abs(),
        n if n > 2 => {
            let mean = fractions.iter().sum::<f64>() / n as f64;
            let var = fractions
                .iter()
                .map(|f| (f - mean) * (f - mean))
                .sum::<f64>()
                / n as f64;
            var.sqrt()
        }
        _ => 0.0,
    };
    ((1.0 - std) * MAX_NODE_SCORE as f64) as i64
}

export_plugin!(BalancedAllocation);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_resources_use_half_the_difference() {
        // cpu 3000/10000, memory 5000/20000: std 0.025 -> 97.
        assert_eq!(score(&[0.3, 0.25]), 97);
        assert_eq!(score(&[0.5, 0.5]), 100);
        assert_eq!(score(&[1.0, 0.0]), 50);
        assert_eq!(score(&[0.4]), 100);
    }

    #[test]
    fn three_resources_use_the_standard_deviation() {
        // mean 0.5, deviations 0.25^2 * 2 / 3 -> std 0.2041 -> 79.
        assert_eq!(score(&[0.25, 0.5, 0.75]), 79);
    }
}
