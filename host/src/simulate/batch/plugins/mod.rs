//! Session plugins (Volcano's `pkg/scheduler/plugins`): each contributes
//! order functions, job checks and allocation hooks through the
//! framework's [`Plugin`](super::framework::plugin::Plugin) trait, which
//! the session consults tier by tier. `predicates` and `nodeorder` have no
//! code here: they switch sift's filter and score plugins on in the
//! session's scheduler ([`super::predicates`]).
//!
//! This module is also the plugins' factory (Volcano's
//! `plugins/factory.go`): [`registry`] registers each plugin's builder by
//! name, and only the wiring calls it.

pub mod drf;
pub mod gang;
pub mod priority;
pub mod proportion;

use super::framework::registry::Registry;

/// Every plugin sift implements, by its configured name.
pub fn registry() -> Registry {
    let mut r = Registry::default();
    r.register("priority", |_| Box::new(priority::Priority));
    r.register("gang", |_| Box::new(gang::Gang));
    r.register("drf", |s| Box::new(drf::Drf::open(s)));
    r.register("proportion", |s| Box::new(proportion::Proportion::open(s)));
    r
}
