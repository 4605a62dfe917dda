//! What reaches the scheduling loop: the API server's watch, the writes'
//! outcomes, and the stop signal, in one channel, so the loop's state has
//! one owner and every change is applied between two cycles.

use crate::serve::ClusterEvent;

/// How a bind ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BindOutcome {
    Bound,
    /// 404: the pod is gone.
    Gone(String),
    /// 409: already bound, being deleted, or recreated (UID mismatch).
    Conflict(String),
    /// Anything else (5xx, a connection error): retried with backoff.
    Failed(String),
    /// A PreBind write or the wait for the volumes failed (the message is
    /// upstream's status: `running PreBind plugin ...`); the pod was not
    /// bound and is retried with backoff.
    PreBindFailed(String),
}

/// One thing for the loop to apply.
pub enum Input {
    /// Watch events, in order.
    Cluster(Vec<ClusterEvent>),
    /// A bind's outcome, for the pod with this key and UID.
    Bound {
        key: String,
        uid: String,
        outcome: BindOutcome,
    },
    /// A victim of this preemptor could not be evicted: it is retried.
    PreemptionFailed { preemptor: String },
    /// SIGTERM or SIGINT: finish the cycle and stop.
    Stop,
}
