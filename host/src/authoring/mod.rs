//! Tools for plugin authors: `sift new` ([`scaffold`], starters from
//! `host/templates/<lang>/`) and `sift component` ([`componentize`]: WIT,
//! bindings, core module to component).
//!
//! Imports only `config` (to warn about names of bundled plugins).

pub mod componentize;
pub mod scaffold;
