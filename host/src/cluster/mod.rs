//! The cluster: objects applied one at a time ([`state`]), the immutable
//! view one scheduling cycle sees ([`snapshot`], kube-scheduler's NodeInfo
//! list and NodeTree order, in [`table`]s whose copies share chunks), pods
//! nominated to nodes ([`nominated`]), PodDisruptionBudgets
//! ([`disruption`]), the Services and controllers that select pods
//! ([`workloads`]), the objects plugins read whole ([`api_objects`]), and
//! generated clusters ([`synthetic`]).
//!
//! Imports only `input`. The state builds snapshots; a snapshot never
//! names the state.

pub mod api_objects;
pub mod disruption;
pub mod nominated;
pub mod snapshot;
pub mod state;
pub mod synthetic;
pub mod table;
pub mod workloads;

pub use snapshot::Snapshot;
pub use state::{ClusterState, Evicted};
