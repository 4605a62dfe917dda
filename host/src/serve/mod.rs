//! `sift serve`: a kube-scheduler extender over HTTP ([`http`]: routes,
//! admission, cluster feed), its wire types ([`extender`]), request bodies
//! ([`requests`]), connection deadlines ([`conn`]), hot reload of plugins
//! and configuration ([`reload`]) and Prometheus metrics ([`metrics`]).
//!
//! The top of the stack with `conformance`, `bench` and `cli`: it may import
//! any lower layer, and nothing imports it but the CLI.

pub mod conn;
pub mod extender;
pub mod http;
pub mod informer;
pub mod metrics;
pub mod reload;
pub mod requests;

pub use http::{ServeArgs, run};
pub use requests::{
    ClusterEvent, FilterRequest, RequestNodes, apply_cluster_events, parse_cluster_events,
    parse_cluster_events_keeping, parse_filter_request,
};
