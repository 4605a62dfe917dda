//! Predicates compiled into the host: the built-in plugin crates called
//! directly. The performance baseline for the Wasm runtime, and the same
//! code as the components, so the two must agree.

use crate::cluster::nominated::NominatedPass;
use crate::engine::plugin::{
    BatchFilter, Cycle, FilterPlugin, PluginError, PrepareOutcome, Prepared,
};
use sift_sdk::native::{DynPredicate, NativePlugin, PodState};
use sift_sdk::{ExtensionPoints, Prepare, Status};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

/// The built-in predicates: kube-scheduler's default filters in their
/// order, then sift's own (GpuModel, not enabled by default), the default
/// scorer BalancedAllocation, and the FGD paper's GPU-sharing plugins
/// (GpuShare and its policies' scorers, not enabled by default).
pub fn builtin() -> Vec<NativePlugin> {
    vec![
        sift_plugin_node_unschedulable::sift_native_plugin(),
        sift_plugin_node_name::sift_native_plugin(),
        sift_plugin_taint_toleration::sift_native_plugin(),
        sift_plugin_node_affinity::sift_native_plugin(),
        sift_plugin_node_ports::sift_native_plugin(),
        sift_plugin_node_resources_fit::sift_native_plugin(),
        sift_plugin_pod_topology_spread::sift_native_plugin(),
        sift_plugin_inter_pod_affinity::sift_native_plugin(),
        sift_plugin_gpu_model::sift_native_plugin(),
        sift_plugin_node_resources_balanced_allocation::sift_native_plugin(),
        sift_plugin_gpu_share::sift_native_plugin(),
        sift_plugin_fgd_score::sift_native_plugin(),
        sift_plugin_best_fit_score::sift_native_plugin(),
        sift_plugin_random_score::sift_native_plugin(),
        sift_plugin_dot_prod_score::sift_native_plugin(),
        sift_plugin_gpu_packing_score::sift_native_plugin(),
        sift_plugin_gpu_clustering_score::sift_native_plugin(),
    ]
}

/// A configured native predicate.
pub struct NativeFilterPlugin {
    name: String,
    descriptor: NativePlugin,
    predicate: Box<dyn DynPredicate>,
    full_objects: crate::input::kube::FullObjects,
    extension_points: ExtensionPoints,
    pod_annotation_keys: Vec<String>,
}

impl NativeFilterPlugin {
    pub fn new(plugin: &NativePlugin, args_json: &str) -> Result<NativeFilterPlugin, String> {
        Ok(NativeFilterPlugin {
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

impl FilterPlugin for NativeFilterPlugin {
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

    fn with_args(&self, args: &str) -> Result<Arc<dyn FilterPlugin>, PluginError> {
        NativeFilterPlugin::new(&self.descriptor, args)
            .map(|p| Arc::new(p) as Arc<dyn FilterPlugin>)
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

    fn reserve(&self, cycle: &Cycle, slot: u32) -> Result<Vec<(String, String)>, PluginError> {
        if !self.extension_points.contains(ExtensionPoints::RESERVE) {
            return Ok(Vec::new());
        }
        let node = cycle.snapshot.node(slot);
        catch_unwind(AssertUnwindSafe(|| {
            self.predicate.reserve(&cycle.pod, node)
        }))
        .map_err(|_| self.error("panicked in reserve"))?
        .map_err(|s| self.error(s.message()))
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
    plugin: &'a NativeFilterPlugin,
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
        let mut last: Option<Arc<Status>> = None;
        for (i, slot) in slots.iter().enumerate() {
            let node = snapshot.node(*slot);
            let status = catch_unwind(AssertUnwindSafe(|| {
                self.plugin.predicate.filter(&self.cycle.pod, state, node)
            }))
            .map_err(|_| {
                self.plugin
                    .error(format!("panicked filtering node {}", node.name))
            })?;
            if !status.is_success() {
                // Consecutive nodes usually fail for the same reason: share it.
                let shared = match last.take() {
                    Some(prev) if *prev == status => prev,
                    _ => Arc::new(status),
                };
                last = Some(shared.clone());
                rejections.push((i as u32, shared));
            }
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
