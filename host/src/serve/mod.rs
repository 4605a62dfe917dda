//! `sift serve`: a kube-scheduler extender over HTTP. [`http`] wires the
//! parts: its [`options`]; the shared [`server`] state over the
//! file-backed cluster [`feed`]; the [`watch`]er, [`signals`] and the
//! reload thread they wake ([`triggers`]); the accept loop ([`listener`])
//! with connection deadlines ([`conn`]); the routes ([`handlers`]), with
//! [`admission`] and the request-to-engine steps ([`filter`], and the
//! score plugins' [`prioritize`]); extender
//! wire types ([`extender`]), request bodies ([`requests`]), the API
//! server watch ([`informer`]), hot reload of plugins and configuration
//! ([`reload`]) and Prometheus metrics ([`metrics`]).
//!
//! A layer with `conformance`, `bench` and `authoring`: it may import any
//! lower layer; `schedule` builds on its watch and hot reload, and the CLI
//! calls it.

pub mod accepted_watches;
pub mod admission;
pub mod conn;
pub mod extender;
pub mod feed;
pub mod filter;
pub mod handlers;
pub mod http;
pub mod informer;
pub mod listener;
pub mod metrics;
pub mod options;
pub mod prioritize;
pub mod reload;
pub mod requests;
pub mod server;
pub mod signals;
pub mod triggers;
pub mod watch;

pub use http::run;
pub use options::Options;
pub use requests::{
    ClusterEvent, FilterRequest, RequestNodes, apply_cluster_events, parse_cluster_events,
    parse_cluster_events_keeping, parse_filter_request,
};
