//! Plugins compiled into the host: the built-in plugin crates called
//! directly. The performance baseline for the Wasm runtime, and the same
//! code as the components, so the two must agree.

use crate::cluster::nominated::NominatedPass;
use crate::engine::plugin::{
    BatchFilter, Cycle, Plugin, PluginError, PrepareOutcome, Prepared, Reservation,
};
use crate::input::ApiObject;
use sift_sdk::native::{DynPlugin, NativePlugin, PodState};
use sift_sdk::{ExtensionPoints, Prepare, Status};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

/// The built-in predicates: kube-scheduler's default filters in their
/// order, then sift's own (GpuModel, not enabled by default), the default
/// scorers BalancedAllocation and ImageLocality, and the FGD paper's GPU-sharing plugins
/// (GpuShare and its policies' scorers, not enabled by default).
pub fn builtin() -> Vec<NativePlugin> {
    vec![
        sift_plugin_node_unschedulable::sift_native_plugin(),
        sift_plugin_node_name::sift_native_plugin(),
        sift_plugin_taint_toleration::sift_native_plugin(),
        sift_plugin_node_affinity::sift_native_plugin(),
        sift_plugin_node_ports::sift_native_plugin(),
        sift_plugin_node_resources_fit::sift_native_plugin(),
        sift_plugin_volume_restrictions::sift_native_plugin(),
        sift_plugin_node_volume_limits::sift_native_plugin(),
        sift_plugin_volume_binding::sift_native_plugin(),
        sift_plugin_volume_zone::sift_native_plugin(),
        sift_plugin_pod_topology_spread::sift_native_plugin(),
        sift_plugin_inter_pod_affinity::sift_native_plugin(),
        sift_plugin_dynamic_resources::sift_native_plugin(),
        sift_plugin_node_declared_features::sift_native_plugin(),
        sift_plugin_gpu_model::sift_native_plugin(),
        sift_plugin_node_resources_balanced_allocation::sift_native_plugin(),
        sift_plugin_image_locality::sift_native_plugin(),
        sift_plugin_gpu_share::sift_native_plugin(),
        sift_plugin_fgd_score::sift_native_plugin(),
        sift_plugin_best_fit_score::sift_native_plugin(),
        sift_plugin_random_score::sift_native_plugin(),
        sift_plugin_dot_prod_score::sift_native_plugin(),
        sift_plugin_gpu_packing_score::sift_native_plugin(),
        sift_plugin_gpu_clustering_score::sift_native_plugin(),
        sift_plugin_label_match::sift_native_plugin(),
    ]
}

/// A configured native predicate.
pub struct BuiltinPlugin {
    name: String,
    descriptor: NativePlugin,
    predicate: Box<dyn DynPlugin>,
    full_objects: crate::input::kube::FullObjects,
    extension_points: ExtensionPoints,
    pod_annotation_keys: Vec<String>,
}

impl BuiltinPlugin {
    pub fn new(plugin: &NativePlugin, args_json: &str) -> Result<BuiltinPlugin, String> {
        Ok(BuiltinPlugin {
            name: plugin.name.to_string(),
            descriptor: *plugin,
            predicate: plugin.instantiate(args_json)?,
            full_objects: crate::input::kube::FullObjects {
                pod: plugin.pod_object,
                node: plugin.node_fields.contains(sift_sdk::NodeFields::OBJECT),
            },
            extension_points: plugin.extension_points,
            pod_annotation_keys: plugin
                .pod_annotation_keys
                .iter()
                .map(|k| k.to_string())
                .collect(),
        })
    }

    fn error(&self, message: impl Into<String>) -> PluginError {
        PluginError {
            plugin: self.name.clone(),
            message: message.into(),
        }
    }
}

impl Plugin for BuiltinPlugin {
    fn name(&self) -> &str {
        &self.name
    }

    fn version(&self) -> &str {
        "native"
    }

    fn full_objects(&self) -> crate::input::kube::FullObjects {
        self.full_objects
    }

    fn extension_points(&self) -> ExtensionPoints {
        self.extension_points
    }

    fn with_args(&self, args: &str) -> Result<Arc<dyn Plugin>, PluginError> {
        BuiltinPlugin::new(&self.descriptor, args)
            .map(|p| Arc::new(p) as Arc<dyn Plugin>)
            .map_err(|e| self.error(e))
    }

    fn pod_annotation_keys(&self) -> &[String] {
        &self.pod_annotation_keys
    }

    fn score(&self, cycle: &Cycle, feasible: &[u32]) -> Result<Option<Vec<i64>>, PluginError> {
        if !self.extension_points.contains(ExtensionPoints::SCORE) {
            return Err(self.error("is not a score plugin"));
        }
        let snapshot = &cycle.snapshot;
        let nodes: Vec<&sift_sdk::Node> = feasible.iter().map(|s| snapshot.node(*s)).collect();
        let scores = catch_unwind(AssertUnwindSafe(|| {
            self.predicate.score(&cycle.pod, &nodes, &**snapshot)
        }))
        .map_err(|_| self.error("panicked in score"))?
        .map_err(|s| self.error(s.message()))?;
        if let Some(scores) = &scores {
            crate::engine::plugin::check_scores(&self.name, scores, feasible.len())?;
        }
        Ok(scores)
    }

    fn reserve(&self, cycle: &Cycle, slot: u32) -> Result<Reservation, PluginError> {
        if !self.extension_points.contains(ExtensionPoints::RESERVE) {
            return Ok(Reservation::default());
        }
        let node = cycle.snapshot.node(slot);
        let reserved = catch_unwind(AssertUnwindSafe(|| {
            self.predicate.reserve(&cycle.pod, node, &*cycle.snapshot)
        }))
        .map_err(|_| self.error("panicked in reserve"))?
        .map_err(|s| self.error(s.message()))?;
        let writes = reserved
            .writes
            .into_iter()
            .map(|w| match ApiObject::from_value(&w.kind, w.object) {
                Some(Ok(object)) => Ok(object),
                Some(Err(e)) => Err(self.error(format!("reserve wrote a bad {}: {e:#}", w.kind))),
                None => Err(self.error(format!(
                    "reserve wrote a {}, which sift does not know",
                    w.kind
                ))),
            })
            .collect::<Result<_, _>>()?;
        Ok(Reservation {
            annotations: reserved.annotations,
            writes,
        })
    }

    fn prepare<'a>(&'a self, cycle: &'a Cycle) -> Result<Prepared<'a>, PluginError> {
        let decided = catch_unwind(AssertUnwindSafe(|| {
            self.predicate.prepare(&cycle.pod, &*cycle.snapshot)
        }))
        .map_err(|_| self.error("panicked in prepare"))?;
        let (outcome, state) = match decided {
            Prepare::Proceed(s) => (PrepareOutcome::Proceed, Some(s)),
            Prepare::Narrow(s, names) => (PrepareOutcome::Narrow(names), Some(s)),
            Prepare::Skip => (PrepareOutcome::Skip, None),
            Prepare::Reject(status) => (PrepareOutcome::Reject(status), None),
        };
        Ok(Prepared {
            outcome,
            filter: Box::new(NativeBatch {
                plugin: self,
                cycle,
                state,
            }),
        })
    }
}

struct NativeBatch<'a> {
    plugin: &'a BuiltinPlugin,
    cycle: &'a Cycle,
    state: Option<PodState>,
}

impl BatchFilter for NativeBatch<'_> {
    fn filter(
        &self,
        slots: &[u32],
        rejections: &mut Vec<(u32, Arc<Status>)>,
    ) -> Result<(), PluginError> {
        let Some(state) = &self.state else {
            return Err(self
                .plugin
                .error("filter called after prepare did not proceed"));
        };
        let snapshot = &self.cycle.snapshot;
        let nodes: Vec<&sift_sdk::Node> = slots.iter().map(|s| snapshot.node(*s)).collect();
        let mut progress = 0;
        let mut rejected = Vec::new();
        catch_unwind(AssertUnwindSafe(|| {
            self.plugin.predicate.filter_batch(
                &self.cycle.pod,
                state,
                &nodes,
                &mut progress,
                &mut rejected,
            )
        }))
        .map_err(|_| {
            let node = nodes.get(progress).map_or("", |n| n.name.as_str());
            self.plugin.error(format!("panicked filtering node {node}"))
        })?;
        let mut last: Option<Arc<Status>> = None;
        for (i, status) in rejected {
            // Consecutive nodes usually fail for the same reason: share it.
            let shared = match last.take() {
                Some(prev) if *prev == status => prev,
                _ => Arc::new(status),
            };
            last = Some(shared.clone());
            rejections.push((i, shared));
        }
        Ok(())
    }

    fn filter_nominated(&self, _slot: u32, pass: &NominatedPass) -> Result<Status, PluginError> {
        let Some(state) = &self.state else {
            return Err(self
                .plugin
                .error("filter called after prepare did not proceed"));
        };
        catch_unwind(AssertUnwindSafe(|| {
            self.plugin
                .predicate
                .filter_nominated(&self.cycle.pod, state, &pass.node, &pass.added)
        }))
        .map_err(|_| {
            self.plugin
                .error(format!("panicked filtering node {}", pass.node.name))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::synthetic::synthetic_cluster;
    use sift_sdk::{Args, ClusterView, Node, Pod};

    /// Rejects nodes whose name ends in an odd digit; panics on names ending in 3
    /// when told to.
    struct Picky {
        panic: bool,
    }

    impl sift_sdk::Plugin for Picky {
        const NAME: &'static str = "Picky";
        type PodState = ();
        fn new(args: Args) -> Result<Self, String> {
            Ok(Picky {
                panic: args.get_str("panic")? == Some("yes"),
            })
        }
        fn prepare(&self, _pod: &Pod, _cluster: &dyn ClusterView) -> Prepare<()> {
            Prepare::Proceed(())
        }
        fn filter(&self, _pod: &Pod, _state: &(), node: &Node) -> Status {
            if self.panic && node.name.ends_with('3') {
                panic!("boom");
            }
            let odd = node.name.bytes().last().is_some_and(|b| b % 2 == 1);
            if odd {
                Status::unschedulable(format!("odd {}", node.name))
            } else {
                Status::success()
            }
        }
    }

    /// The nodes' names, and the rejections (index, message) or the error.
    type Run = (Vec<String>, Result<Vec<(u32, String)>, PluginError>);

    fn run(args: &str) -> Run {
        let snapshot = synthetic_cluster(6).unwrap();
        let slots: Vec<u32> = (0..6).collect();
        let names = slots
            .iter()
            .map(|s| snapshot.name(*s).to_string())
            .collect();
        let plugin = BuiltinPlugin::new(&NativePlugin::of::<Picky>(), args).unwrap();
        let cycle = Cycle::new(Pod::default(), snapshot);
        let prepared = plugin.prepare(&cycle).unwrap();
        let mut rejections = Vec::new();
        let result = prepared.filter.filter(&slots, &mut rejections).map(|()| {
            rejections
                .into_iter()
                .map(|(i, s)| (i, s.message()))
                .collect()
        });
        (names, result)
    }

    #[test]
    fn a_batch_reports_each_rejection_at_its_index() {
        let (names, result) = run("{}");
        let expected: Vec<(u32, String)> = names
            .iter()
            .enumerate()
            .filter(|(_, n)| n.bytes().last().is_some_and(|b| b % 2 == 1))
            .map(|(i, n)| (i as u32, format!("odd {n}")))
            .collect();
        assert!(!expected.is_empty(), "{names:?}");
        assert_eq!(result.unwrap(), expected);
    }

    #[test]
    fn a_panic_inside_a_batch_names_its_node() {
        let (names, result) = run(r#"{"panic":"yes"}"#);
        let at = names
            .iter()
            .find(|n| n.ends_with('3'))
            .expect("a name ending in 3");
        let err = result.unwrap_err();
        assert!(
            err.message
                .contains(&format!("panicked filtering node {at}")),
            "{}",
            err.message
        );
    }
}
