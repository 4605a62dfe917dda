//! Input: Kubernetes objects as `kubectl get -o json|yaml` prints them, read
//! from files ([`read`]) and turned into the plugin model ([`kube`]);
//! workloads of pod events ([`workload`]) and the openb trace imported as
//! such ([`openb`]); the extender protocol's messages ([`extender`]);
//! batch mode's PodGroups and Queues ([`volcano`]) and gangs made from a
//! workload ([`gangs`]). The
//! lowest layer of the host: it imports nothing else of sift's.

pub mod extender;
pub mod gangs;
pub mod kube;
pub mod objects;
pub mod openb;
pub mod read;
pub mod volcano;
pub mod workload;
pub mod yaml;

pub use objects::{API_OBJECT_KINDS, ApiObject, MAX_FLOW_DEPTH, Objects, Origin, Workload};
