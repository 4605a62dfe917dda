//! sift: Kubernetes scheduler filter predicates as sandboxed WebAssembly
//! components.
//!
//! Data flows one way, and the folders are layers in that order: a module
//! imports only from modules of a lower layer number (checked by
//! `tests/tests/layers.rs`).
//!
//! | layer | module | concept |
//! |---|---|---|
//! | 0 | [`text`] | untrusted text made printable |
//! | 1 | [`input`] | Kubernetes objects read from files, turned into the model |
//! | 2 | [`config`] | the configuration file and engine/limits options, as data |
//! | 2 | [`cluster`] | cluster state, snapshots, generated clusters |
//! | 3 | [`engine`] | the filter phase: plugin trait, search, sampling, diagnosis |
//! | 3 | [`runtime`] | wasmtime: engine, sandbox, limits, compile cache, plugin logs |
//! | 4 | [`contract`] | Wasm components as engine plugins, over the WIT contract |
//! | 5 | [`plugins`] | plugin names to components or compiled-in filters |
//! | 6 | [`output`] | tables and JSON of cycle outcomes |
//! | 6 | [`simulate`] | the scheduleOne loop over a workload: queue, assume, retries, report |
//! | 7 | [`framework`] | one place builds a scheduler from a configuration, and replays it |
//! | 8 | [`serve`], [`conformance`], [`bench`], [`authoring`] | what the subcommands do |
//! | 9 | [`schedule`] | the live scheduler, on `serve`'s watch and hot reload |
//! | 10 | [`cli`] | the `sift` command line |

pub mod authoring;
pub mod bench;
pub mod cli;
pub mod cluster;
pub mod config;
pub mod conformance;
pub mod contract;
pub mod engine;
pub mod framework;
pub mod input;
pub mod output;
pub mod plugins;
pub mod runtime;
pub mod schedule;
pub mod serve;
pub mod simulate;
pub mod text;
