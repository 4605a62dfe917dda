//! `sift schedule`: sift as the scheduler. It watches the API server,
//! schedules the pods whose `spec.schedulerName` is its own with
//! kube-scheduler's loop (the same cycle `sift simulate` runs), and writes
//! bindings, conditions, preemptions and events back, as a secondary
//! scheduler beside kube-scheduler ("Configure Multiple Schedulers").
//!
//! [`run`] wires the parts: the API server watch and hot-loaded plugins
//! of `sift serve` ([`crate::serve::informer`], [`crate::serve::reload`]),
//! the loop ([`scheduler`]) with its [`queue`], its [`input`] channel and
//! its API [`writer`] (with [`events`]), or Volcano's sessions ([`batch`]),
//! [`leader`] election, [`metrics`] and the health routes ([`http`]).
//!
//! A layer above `serve`, whose watch and reload it builds on; only the
//! CLI imports it.

pub mod api_error;
pub mod assume;
pub mod batch;
pub mod events;
pub mod http;
pub mod input;
pub mod leader;
pub mod metrics;
pub mod prebind;
pub mod queue;
pub mod run;
pub mod scheduler;
pub mod writer;

pub use run::{LiveMode, Options, Plugins, run};
