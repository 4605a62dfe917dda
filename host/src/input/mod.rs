//! Input: Kubernetes objects as `kubectl get -o json|yaml` prints them, read
//! from files ([`read`]) and turned into the plugin model ([`kube`]). The
//! lowest layer of the host: it imports nothing else of sift's.

pub mod kube;
pub mod read;

pub use read::{MAX_FLOW_DEPTH, Objects, Origin, parse_documents};
