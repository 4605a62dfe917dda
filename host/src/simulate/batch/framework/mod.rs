//! The session framework (Volcano's `pkg/scheduler/framework`): what a
//! session sees ([`state`]), what a plugin is ([`plugin`]), the registry
//! the plugins fill ([`registry`]), the session itself ([`session`]), its
//! Statement ([`statement`]) and the queue the actions order by it
//! ([`priority_queue`]). Plugins and actions import the framework; the
//! framework imports neither.

pub mod plugin;
pub mod priority_queue;
pub mod registry;
pub mod session;
pub mod state;
pub mod statement;
