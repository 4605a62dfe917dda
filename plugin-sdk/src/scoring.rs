//! What kube-scheduler's resource scorers share (`noderesources`'
//! `resourceAllocationScorer`): the requested and allocatable amounts of a
//! resource on a node with the pod placed, in the units filters use.

use crate::resources::is_scalar_resource_name;
use crate::{Node, Pod};

/// A resource and its weight in a score (`config.ResourceSpec`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResourceWeight {
    pub name: String,
    #[serde(default = "one")]
    pub weight: i64,
}

fn one() -> i64 {
    1
}

/// cpu and memory, weight 1 each: upstream's default.
pub fn default_resources() -> Vec<ResourceWeight> {
    ["cpu", "memory"]
        .into_iter()
        .map(|name| ResourceWeight {
            name: name.into(),
            weight: 1,
        })
        .collect()
}

/// The pod's request of `name` as a scorer counts it
/// (`calculatePodResourceRequest`): with `use_requested` false, cpu and
/// memory count the non-zero defaults of containers without requests.
pub fn pod_request(pod: &Pod, name: &str, use_requested: bool) -> i64 {
    match name {
        "cpu" if !use_requested => pod.non_zero_requests.milli_cpu,
        "memory" if !use_requested => pod.non_zero_requests.memory,
        "cpu" => pod.requests.milli_cpu,
        "memory" => pod.requests.memory,
        "ephemeral-storage" => pod.requests.ephemeral_storage,
        other => pod.requests.scalar(other),
    }
}

/// (allocatable, requested with the pod) of `name` on `node`
/// (`calculateResourceAllocatableRequest`); (0, 0) means "not scored": an
/// extended resource the pod does not request, or one the node lacks.
pub fn allocatable_and_requested(
    node: &Node,
    name: &str,
    pod_request: i64,
    use_requested: bool,
) -> (i64, i64) {
    if pod_request == 0 && is_scalar_resource_name(name) {
        return (0, 0);
    }
    let alloc = &node.allocatable;
    match name {
        "cpu" if use_requested => (alloc.milli_cpu, node.requested.milli_cpu + pod_request),
        "cpu" => (
            alloc.milli_cpu,
            node.non_zero_requested.milli_cpu + pod_request,
        ),
        "memory" if use_requested => (alloc.memory, node.requested.memory + pod_request),
        "memory" => (alloc.memory, node.non_zero_requested.memory + pod_request),
        "ephemeral-storage" => (
            alloc.ephemeral_storage,
            node.requested.ephemeral_storage + pod_request,
        ),
        other if alloc.scalar.iter().any(|(n, _)| n == other) => (
            alloc.scalar(other),
            node.requested.scalar(other) + pod_request,
        ),
        _ => (0, 0),
    }
}

/// Maps raw scores in `0..=max(scores)` onto `0..=max_priority`, reversed
/// (`max_priority - score`) when `reverse` (kube-scheduler's
/// `helper.DefaultNormalizeScore`): all zero stays zero, or becomes
/// `max_priority` everywhere when reversed. Raw scores are non-negative.
pub fn default_normalize(max_priority: i64, reverse: bool, scores: &mut [i64]) {
    let max = scores.iter().copied().max().unwrap_or(0);
    if max <= 0 {
        if reverse {
            scores.fill(max_priority);
        }
        return;
    }
    for s in scores.iter_mut() {
        let scaled = max_priority.saturating_mul(*s) / max;
        *s = if reverse {
            max_priority - scaled
        } else {
            scaled
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_normalize_scales_to_the_maximum_and_reverses() {
        let mut s = [0, 1, 2];
        default_normalize(100, false, &mut s);
        assert_eq!(s, [0, 50, 100]);
        let mut s = [0, 1, 2];
        default_normalize(100, true, &mut s);
        assert_eq!(s, [100, 50, 0]);
        // Integer division as Go's: 100 * 1 / 3 = 33.
        let mut s = [1, 3];
        default_normalize(100, false, &mut s);
        assert_eq!(s, [33, 100]);
    }

    #[test]
    fn default_normalize_all_zero() {
        let mut s = [0, 0];
        default_normalize(100, false, &mut s);
        assert_eq!(s, [0, 0]);
        default_normalize(100, true, &mut s);
        assert_eq!(s, [100, 100]);
    }
}
