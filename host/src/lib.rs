//! sift: Kubernetes scheduler filter predicates as sandboxed WebAssembly
//! components. Data flows one way: input -> snapshot -> engine -> plugins
//! -> diagnosis -> output.

pub mod bench;
pub mod cache;
pub mod cluster;
pub mod componentize;
pub mod config;
pub mod conformance;
pub mod conn;
pub mod diagnosis;
pub mod engine;
pub mod extender;
pub mod input;
pub mod kube;
pub mod loadgen;
pub mod metrics;
pub mod native;
pub mod output;
pub mod plugin;
pub mod plugin_bench;
pub mod plugin_log;
pub mod registry;
pub mod reload;
pub mod runtime;
pub mod sampling;
pub mod scaffold;
pub mod serve;
pub mod snapshot;
pub mod text;
pub mod wasm;
