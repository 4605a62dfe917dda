//! Batch mode's cache (Volcano's `pkg/scheduler/cache`): what persists
//! between sessions ([`world`]: tasks, PodGroups, queues), which pods it
//! takes ([`intake`]), how workload events change it ([`events`]), the
//! PodGroups the controller makes for pods without one ([`group`]),
//! queues as sessions see them ([`queue`]), the snapshot a session opens
//! on ([`snapshot`]), and the changes an API server's watch brings
//! ([`live`]).

pub mod events;
pub mod group;
pub mod intake;
pub mod live;
pub mod queue;
pub mod snapshot;
pub mod world;

pub use world::{BatchInput, World};
