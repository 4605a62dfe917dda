//! What the scheduling loop writes to the cluster: the binding cycle's
//! binds and preemption's evictions (kube-scheduler's `bind` and
//! `prepareCandidate` API calls).
//!
//! The loop has already assumed a bound pod in the cluster state (its
//! cache) and removed an evicted one when it calls the [`Api`]; the
//! simulation's API ([`InMemory`]) has nothing more to do, because its
//! cluster state is the whole cluster: a bind always succeeds (assume =
//! commit), as upstream's with a working binder. A live scheduler's API
//! writes `pods/binding` and deletes victims through the API server, and
//! undoes the assumption when a bind fails.

use anyhow::Result;
use k8s_openapi::api::core::v1 as k8s;

/// The loop's writes to the cluster.
pub trait Api {
    /// `pod` (as assumed: `spec.nodeName` set, reserve annotations added)
    /// is to be bound to its node.
    fn bind(&mut self, pod: &k8s::Pod) -> Result<()>;
    /// `victim` (namespace/name) is evicted so that `preemptor` fits.
    fn evict(&mut self, victim: &str, preemptor: &str) -> Result<()>;
}

/// The simulation's API: the cluster state is the cluster.
#[derive(Debug, Default)]
pub struct InMemory;

impl Api for InMemory {
    fn bind(&mut self, _pod: &k8s::Pod) -> Result<()> {
        Ok(())
    }

    fn evict(&mut self, _victim: &str, _preemptor: &str) -> Result<()> {
        Ok(())
    }
}
