//! In-process registration: the same plugin code, called directly.
//!
//! The host uses this as the performance baseline for its Wasm plugins, and
//! plugin authors use it to unit-test plugins with plain `cargo test`.

use crate::{
    Args, ClusterView, ExtensionPoints, Node, NodeFields, NominatedPod, Plugin, Pod, PreScore,
    Prepare, Reservation, Status,
};
use std::any::Any;

/// A plugin's per-pod state, type-erased.
pub type PodState = Box<dyn Any + Send + Sync>;

/// A configured plugin behind a trait object.
pub trait DynPlugin: Send + Sync {
    fn prepare(&self, pod: &Pod, cluster: &dyn ClusterView) -> Prepare<PodState>;
    fn filter(&self, pod: &Pod, state: &PodState, node: &Node) -> Status;
    /// `filter` over `nodes` in order, rejections pushed as (index,
    /// status): one virtual call and one state downcast per batch, not per
    /// node (native cycles ×1.2 faster, BENCHMARKS.md). `progress` holds the
    /// index being filtered, so that a panic can name its node.
    fn filter_batch(
        &self,
        pod: &Pod,
        state: &PodState,
        nodes: &[&Node],
        progress: &mut usize,
        rejected: &mut Vec<(u32, Status)>,
    );
    /// `filter` of `node`, which already holds `added`, with the state
    /// updated by [`Plugin::add_pods`].
    fn filter_nominated(
        &self,
        pod: &Pod,
        state: &PodState,
        node: &Node,
        added: &[NominatedPod],
    ) -> Status;
    /// PreScore, Score and NormalizeScore over `feasible`: the final
    /// scores, `None` when skipped.
    fn score(
        &self,
        pod: &Pod,
        feasible: &[&Node],
        cluster: &dyn ClusterView,
    ) -> Result<Option<Vec<i64>>, Status>;
    /// Reserve's annotations and PreBind's writes.
    fn reserve(
        &self,
        pod: &Pod,
        node: &Node,
        cluster: &dyn ClusterView,
    ) -> Result<Reservation, Status>;
}

struct Erased<P: Plugin>(P);

impl<P: Plugin> DynPlugin for Erased<P> {
    fn prepare(&self, pod: &Pod, cluster: &dyn ClusterView) -> Prepare<PodState> {
        match self.0.prepare(pod, cluster) {
            Prepare::Proceed(s) => Prepare::Proceed(Box::new(s)),
            Prepare::Narrow(s, nodes) => Prepare::Narrow(Box::new(s), nodes),
            Prepare::Skip => Prepare::Skip,
            Prepare::Reject(status) => Prepare::Reject(status),
        }
    }

    fn filter(&self, pod: &Pod, state: &PodState, node: &Node) -> Status {
        match state.downcast_ref::<P::PodState>() {
            Some(s) => self.0.filter(pod, s, node),
            None => Status::error("pod state of another plugin"),
        }
    }

    fn filter_batch(
        &self,
        pod: &Pod,
        state: &PodState,
        nodes: &[&Node],
        progress: &mut usize,
        rejected: &mut Vec<(u32, Status)>,
    ) {
        let Some(s) = state.downcast_ref::<P::PodState>() else {
            let status = Status::error("pod state of another plugin");
            rejected.extend((0..nodes.len() as u32).map(|i| (i, status.clone())));
            return;
        };
        for (i, node) in nodes.iter().enumerate() {
            *progress = i;
            let status = self.0.filter(pod, s, node);
            if !status.is_success() {
                rejected.push((i as u32, status));
            }
        }
    }

    fn filter_nominated(
        &self,
        pod: &Pod,
        state: &PodState,
        node: &Node,
        added: &[NominatedPod],
    ) -> Status {
        match state.downcast_ref::<P::PodState>() {
            Some(s) => crate::filter_nominated(&self.0, pod, s, node, added),
            None => Status::error("pod state of another plugin"),
        }
    }

    fn score(
        &self,
        pod: &Pod,
        feasible: &[&Node],
        cluster: &dyn ClusterView,
    ) -> Result<Option<Vec<i64>>, Status> {
        let state = match self.0.pre_score(pod, feasible, cluster) {
            PreScore::Proceed(s) => s,
            PreScore::Skip => return Ok(None),
            PreScore::Error(status) => return Err(status),
        };
        let mut scores = feasible
            .iter()
            .map(|node| self.0.score(pod, &state, node))
            .collect::<Result<Vec<i64>, Status>>()?;
        self.0.normalize_scores(pod, &state, &mut scores)?;
        Ok(Some(scores))
    }

    fn reserve(
        &self,
        pod: &Pod,
        node: &Node,
        cluster: &dyn ClusterView,
    ) -> Result<Reservation, Status> {
        Ok(Reservation {
            annotations: self.0.reserve(pod, node)?,
            writes: self.0.pre_bind(pod, node, cluster)?,
        })
    }
}

/// A predicate type registered for in-process use
/// (what `export_predicate!` defines as `sift_native_plugin()`).
#[derive(Clone, Copy)]
pub struct NativePlugin {
    pub name: &'static str,
    pub node_fields: NodeFields,
    /// Whether its prepare step reads the cluster view.
    pub reads_cluster: bool,
    /// Whether it reads the pod's whole object (`Pod::object`).
    pub pod_object: bool,
    pub extension_points: ExtensionPoints,
    pub pod_annotation_keys: &'static [&'static str],
    build: fn(Args) -> Result<Box<dyn DynPlugin>, String>,
}

impl NativePlugin {
    pub fn of<P: Plugin>() -> NativePlugin {
        NativePlugin {
            name: P::NAME,
            node_fields: P::NODE_FIELDS,
            reads_cluster: P::READS_CLUSTER,
            pod_object: P::POD_OBJECT,
            extension_points: P::EXTENSION_POINTS,
            pod_annotation_keys: P::POD_ANNOTATION_KEYS,
            build: |args| P::new(args).map(|p| Box::new(Erased(p)) as Box<dyn DynPlugin>),
        }
    }

    /// Configures an instance from the plugin's JSON arguments.
    pub fn instantiate(&self, args_json: &str) -> Result<Box<dyn DynPlugin>, String> {
        (self.build)(Args::from_json(args_json)?)
    }
}

impl std::fmt::Debug for NativePlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativePlugin")
            .field("name", &self.name)
            .finish()
    }
}
