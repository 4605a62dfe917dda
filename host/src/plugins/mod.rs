//! Plugins by name: the registry maps each configured name to a Wasm
//! component in the plugins directory or a compiled-in filter, and builds
//! the ordered filter list a profile runs; HTTP extenders are the
//! out-of-process kind ([`extender`]).
//!
//! Imports `contract`, `engine`, `runtime` and `config`.

pub mod extender;
pub mod native;
pub mod registry;

pub use registry::{Catalog, component_files, default_plugins_dir};
