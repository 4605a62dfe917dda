//! The filter phase of one scheduling cycle, after kube-scheduler's
//! framework: the plugin trait the engine calls ([`plugin`]), the search
//! over nodes ([`find_nodes`]: `findNodesThatFitPod`) and what it found
//! ([`outcome`]), sampling
//! (`numFeasibleNodesToFind`) and the per-node statuses it explains a
//! rejection with ([`diagnosis`]); then scoring, host selection and
//! reserve ([`schedule`]: `schedulePod`, `prioritizeNodes`, `selectHost`);
//! HTTP extenders after the filters and beside the scorers ([`extender`]);
//! the annotations reserve steps give the pod, checked ([`annotations`]).
//!
//! Imports `cluster` and `config`; never the runtime, the contract or any
//! plugin: those implement [`plugin::Plugin`].

pub mod annotations;
pub mod diagnosis;
pub mod extender;
pub mod find_nodes;
pub mod outcome;
pub mod plugin;
pub mod sampling;
pub mod schedule;

pub use find_nodes::{CallObserver, Engine};
pub use outcome::CycleOutcome;
