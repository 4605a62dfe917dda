//! NodeResourcesFit: the pod's requests must fit in what the node has left,
//! and the node must have room for one more pod.
//!
//! A request larger than the node's whole allocatable can never fit there,
//! so it is UnschedulableAndUnresolvable; otherwise Unschedulable (evicting
//! pods could make room).
//!
//! It also scores (`scoringStrategy`): LeastAllocated (the default),
//! MostAllocated or RequestedToCapacityRatio over weighted resources, with
//! cpu and memory counted as `NonZeroRequested` (100m / 200 MiB for
//! containers without requests), as `noderesources/fit.go` does.

use serde::Deserialize;
use sift_sdk::resources::is_extended_resource_name;
use sift_sdk::scoring::{
    ResourceWeight, allocatable_and_requested, default_resources, pod_request,
};
use sift_sdk::{
    Args, ClusterView, Code, ExtensionPoints, MAX_NODE_SCORE, Node, NodeFields, Plugin, Pod,
    PreScore, Prepare, Status, export_plugin,
};
use std::borrow::Cow;
use std::collections::BTreeSet;

pub struct NodeResourcesFit {
    ignored_resources: BTreeSet<String>,
    ignored_resource_groups: BTreeSet<String>,
    strategy: Strategy,
    resources: Vec<ResourceWeight>,
}

/// `NodeResourcesFitArgs` of KubeSchedulerConfiguration.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FitArgs {
    #[serde(default)]
    ignored_resources: Vec<String>,
    #[serde(default)]
    ignored_resource_groups: Vec<String>,
    scoring_strategy: Option<ScoringStrategy>,
}

/// `ScoringStrategy`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ScoringStrategy {
    #[serde(rename = "type", default = "least")]
    kind: String,
    #[serde(default)]
    resources: Vec<ResourceWeight>,
    requested_to_capacity_ratio: Option<RatioArgs>,
}

fn least() -> String {
    "LeastAllocated".into()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RatioArgs {
    shape: Vec<ShapePoint>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
struct ShapePoint {
    utilization: i64,
    score: i64,
}

/// How a node's allocation turns into a score.
enum Strategy {
    LeastAllocated,
    MostAllocated,
    /// Points (utilization %, score 0..=100) of a broken linear function.
    RequestedToCapacityRatio(Vec<(i64, i64)>),
}

impl Strategy {
    fn parse(s: Option<ScoringStrategy>) -> Result<(Strategy, Vec<ResourceWeight>), String> {
        let Some(s) = s else {
            return Ok((Strategy::LeastAllocated, default_resources()));
        };
        let resources = if s.resources.is_empty() {
            default_resources()
        } else {
            s.resources
        };
        if let Some(r) = resources.iter().find(|r| r.weight <= 0 || r.weight > 100) {
            return Err(format!(
                "scoringStrategy.resources: weight of {} must be in 1..=100, got {}",
                r.name, r.weight
            ));
        }
        let strategy = match s.kind.as_str() {
            "LeastAllocated" => Strategy::LeastAllocated,
            "MostAllocated" => Strategy::MostAllocated,
            "RequestedToCapacityRatio" => {
                let shape = s
                    .requested_to_capacity_ratio
                    .map(|r| r.shape)
                    .unwrap_or_default();
                if shape.is_empty() {
                    return Err(
                        "scoringStrategy.requestedToCapacityRatio.shape: at least one point is required"
                            .into(),
                    );
                }
                for w in shape.windows(2) {
                    if w[1].utilization <= w[0].utilization {
                        return Err("scoringStrategy.requestedToCapacityRatio.shape: utilization values must be sorted in increasing order".into());
                    }
                }
                for p in &shape {
                    if !(0..=100).contains(&p.utilization) || !(0..=10).contains(&p.score) {
                        return Err("scoringStrategy.requestedToCapacityRatio.shape: utilization must be in 0..=100 and score in 0..=10".into());
                    }
                }
                // Shape scores are 0..=10 (MaxCustomPriorityScore), scaled
                // to the scheduler's 0..=100.
                Strategy::RequestedToCapacityRatio(
                    shape
                        .iter()
                        .map(|p| (p.utilization, p.score * (MAX_NODE_SCORE / 10)))
                        .collect(),
                )
            }
            other => {
                return Err(format!(
                    "scoringStrategy.type: unknown {other:?} (LeastAllocated, MostAllocated or RequestedToCapacityRatio)"
                ));
            }
        };
        Ok((strategy, resources))
    }

    /// The node's score from per-resource (requested, allocatable).
    fn score(&self, weights: &[ResourceWeight], amounts: &[(i64, i64)]) -> i64 {
        let mut sum = 0i64;
        let mut weight_sum = 0i64;
        for (w, &(requested, allocatable)) in weights.iter().zip(amounts) {
            if allocatable == 0 {
                continue;
            }
            let s = match self {
                Strategy::LeastAllocated => {
                    if requested > allocatable {
                        0
                    } else {
                        (allocatable - requested) * MAX_NODE_SCORE / allocatable
                    }
                }
                Strategy::MostAllocated => {
                    requested.min(allocatable) * MAX_NODE_SCORE / allocatable
                }
                Strategy::RequestedToCapacityRatio(shape) => {
                    let utilization = if requested > allocatable {
                        100
                    } else {
                        requested * 100 / allocatable
                    };
                    let s = broken_linear(shape, utilization);
                    // A resource scoring 0 is left out of the average.
                    if s <= 0 {
                        continue;
                    }
                    s
                }
            };
            sum += s * w.weight;
            weight_sum += w.weight;
        }
        if weight_sum == 0 {
            return 0;
        }
        match self {
            // math.Round: half away from zero.
            Strategy::RequestedToCapacityRatio(_) => {
                (sum as f64 / weight_sum as f64).round() as i64
            }
            _ => sum / weight_sum,
        }
    }
}

/// `helper.BuildBrokenLinearFunction`: linear between the points, flat
/// before the first and after the last, integer arithmetic.
fn broken_linear(shape: &[(i64, i64)], p: i64) -> i64 {
    for (i, &(u, s)) in shape.iter().enumerate() {
        if p <= u {
            if i == 0 {
                return s;
            }
            let (u0, s0) = shape[i - 1];
            return s0 + (s - s0) * (p - u0) / (u - u0);
        }
    }
    shape.last().map_or(0, |&(_, s)| s)
}

/// One resource the node lacks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InsufficientResource {
    pub reason: Cow<'static, str>,
    /// More than the node's whole allocatable.
    pub unresolvable: bool,
}

impl Plugin for NodeResourcesFit {
    const NAME: &'static str = "NodeResourcesFit";
    const NODE_FIELDS: NodeFields = NodeFields::RESOURCES;
    const EXTENSION_POINTS: ExtensionPoints = ExtensionPoints::FILTER.union(ExtensionPoints::SCORE);
    type PodState = FitState;

    fn new(args: Args) -> Result<Self, String> {
        let args: FitArgs = args.parse()?;
        let (strategy, resources) = Strategy::parse(args.scoring_strategy)?;
        Ok(NodeResourcesFit {
            ignored_resources: args.ignored_resources.into_iter().collect(),
            ignored_resource_groups: args.ignored_resource_groups.into_iter().collect(),
            strategy,
            resources,
        })
    }

    fn prepare(&self, pod: &Pod, _cluster: &dyn ClusterView) -> Prepare<FitState> {
        Prepare::Proceed(FitState {
            scalars: self.checked_scalars(pod),
            scored: Vec::new(),
        })
    }

    fn pre_score(&self, pod: &Pod, _: &[&Node], _: &dyn ClusterView) -> PreScore<FitState> {
        PreScore::Proceed(FitState {
            scalars: Vec::new(),
            scored: self
                .resources
                .iter()
                .map(|r| pod_request(pod, &r.name, false))
                .collect(),
        })
    }

    fn score(&self, _pod: &Pod, state: &FitState, node: &Node) -> Result<i64, Status> {
        let amounts: Vec<(i64, i64)> = self
            .resources
            .iter()
            .zip(&state.scored)
            .map(|(r, req)| {
                let (alloc, requested) = allocatable_and_requested(node, &r.name, *req, false);
                (requested, alloc)
            })
            .collect();
        Ok(self.strategy.score(&self.resources, &amounts))
    }

    fn filter(&self, pod: &Pod, state: &FitState, node: &Node) -> Status {
        let insufficient = insufficient(pod, &state.scalars, node);
        if insufficient.is_empty() {
            return Status::success();
        }
        let code = if insufficient.iter().any(|r| r.unresolvable) {
            Code::UnschedulableAndUnresolvable
        } else {
            Code::Unschedulable
        };
        Status::new(code, insufficient.into_iter().map(|r| r.reason))
    }
}

impl NodeResourcesFit {
    /// kube-scheduler's `fitsRequest`: pod count, then cpu, memory,
    /// ephemeral storage, then scalar resources by name.
    pub fn insufficient_resources(&self, pod: &Pod, node: &Node) -> Vec<InsufficientResource> {
        insufficient(pod, &self.checked_scalars(pod), node)
    }

    /// The pod's scalar requests the filter checks (not zero, not
    /// ignored), with their failure reason: worked out once per pod, not
    /// once per node.
    fn checked_scalars(&self, pod: &Pod) -> Vec<ScalarCheck> {
        pod.requests
            .scalar
            .iter()
            .filter(|(name, want)| *want != 0 && !self.is_ignored(name))
            .map(|(name, want)| ScalarCheck {
                name: name.clone(),
                want: *want,
                reason: format!("Insufficient {name}"),
            })
            .collect()
    }

    fn is_ignored(&self, name: &str) -> bool {
        if !is_extended_resource_name(name) {
            return false;
        }
        let group = name.split('/').next().unwrap_or_default();
        self.ignored_resources.contains(name) || self.ignored_resource_groups.contains(group)
    }
}

/// One scalar resource request the filter checks.
pub struct ScalarCheck {
    name: String,
    want: i64,
    reason: String,
}

/// The pod's state: the scalar checks when filtering, the requests of the
/// scored resources when scoring.
#[derive(Default)]
pub struct FitState {
    scalars: Vec<ScalarCheck>,
    scored: Vec<i64>,
}

fn insufficient(pod: &Pod, scalars: &[ScalarCheck], node: &Node) -> Vec<InsufficientResource> {
    let mut out = Vec::new();
    let alloc = &node.allocatable;
    let used = &node.requested;
    if i64::from(node.pod_count) + 1 > alloc.allowed_pod_number {
        out.push(InsufficientResource {
            reason: Cow::Borrowed("Too many pods"),
            unresolvable: false,
        });
    }
    let req = &pod.requests;
    if req.is_empty_request() {
        return out;
    }
    let mut check = |reason: &'static str, want: i64, allocatable: i64, requested: i64| {
        if want > 0 && want > allocatable.saturating_sub(requested) {
            out.push(InsufficientResource {
                reason: Cow::Borrowed(reason),
                unresolvable: want > allocatable,
            });
        }
    };
    check(
        "Insufficient cpu",
        req.milli_cpu,
        alloc.milli_cpu,
        used.milli_cpu,
    );
    check("Insufficient memory", req.memory, alloc.memory, used.memory);
    check(
        "Insufficient ephemeral-storage",
        req.ephemeral_storage,
        alloc.ephemeral_storage,
        used.ephemeral_storage,
    );
    for c in scalars {
        let allocatable = alloc.scalar(&c.name);
        if c.want > allocatable.saturating_sub(used.scalar(&c.name)) {
            out.push(InsufficientResource {
                reason: Cow::Owned(c.reason.clone()),
                unresolvable: c.want > allocatable,
            });
        }
    }
    out
}

export_plugin!(NodeResourcesFit);
