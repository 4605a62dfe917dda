//! Predicates compiled into the host: the built-in plugin crates called
//! directly. The performance baseline for the Wasm runtime, and the same
//! code as the components, so the two must agree.

use crate::cluster::nominated::NominatedPass;
use crate::engine::plugin::{
    BatchFilter, Cycle, FilterPlugin, PluginError, PrepareOutcome, Prepared,
};
use sift_sdk::native::{DynPredicate, NativePlugin, PodState};
use sift_sdk::{Prepare, Status};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

/// The built-in predicates: kube-scheduler's default filters in their
/// order, then sift's own (GpuModel, not enabled by default).
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
    ]
}

/// A configured native predicate.
pub struct NativeFilterPlugin {
    name: String,
    predicate: Box<dyn DynPredicate>,
    full_objects: crate::input::kube::FullObjects,
}

impl NativeFilterPlugin {
    pub fn new(plugin: &NativePlugin, args_json: &str) -> Result<NativeFilterPlugin, String> {
        Ok(NativeFilterPlugin {
            name: plugin.name.to_string(),
            predicate: plugin.instantiate(args_json)?,
            full_objects: crate::input::kube::FullObjects {
                pod: plugin.pod_object,
                node: plugin.node_fields.contains(sift_sdk::NodeFields::OBJECT),
            },
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
