//! Verdicts, with kube-scheduler's codes.
//!
//! Reasons are `Cow<'static, str>` kept inline when there is one: the usual
//! rejection, one constant reason ("Too many pods"), costs no allocation,
//! which matters when thousands of nodes are rejected per cycle (a heap
//! allocation and free per rejected node made the Rust GpuModel plugin
//! 1.1-1.5x slower per pod; see BENCHMARKS.md).

use smallvec::SmallVec;
use std::borrow::Cow;

/// A status's reasons: one inline, more on the heap.
type Reasons = SmallVec<[Cow<'static, str>; 1]>;

/// kube-scheduler's `framework.Code`, reduced to what filters return.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Code {
    Success,
    /// Something went wrong inside the plugin: not a verdict on the node.
    Error,
    /// Does not fit now; preemption might help.
    Unschedulable,
    /// Does not fit; preemption would not help.
    UnschedulableAndUnresolvable,
    /// Only from `prepare`: nothing to check for this pod.
    Skip,
}

impl Code {
    /// The name kube-scheduler prints (`framework.Code.String()`).
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Success => "Success",
            Code::Error => "Error",
            Code::Unschedulable => "Unschedulable",
            Code::UnschedulableAndUnresolvable => "UnschedulableAndUnresolvable",
            Code::Skip => "Skip",
        }
    }

    /// Unschedulable or UnschedulableAndUnresolvable.
    pub fn is_rejection(self) -> bool {
        matches!(
            self,
            Code::Unschedulable | Code::UnschedulableAndUnresolvable
        )
    }
}

/// A verdict and its reasons, e.g. `Unschedulable: ["Insufficient cpu"]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    pub code: Code,
    reasons: Reasons,
}

impl Status {
    #[inline]
    pub fn success() -> Status {
        Status {
            code: Code::Success,
            reasons: Reasons::new(),
        }
    }

    pub fn new(
        code: Code,
        reasons: impl IntoIterator<Item = impl Into<Cow<'static, str>>>,
    ) -> Status {
        Status {
            code,
            reasons: reasons.into_iter().map(Into::into).collect(),
        }
    }

    /// Built in place: going through `new`'s iterator costs a call to a
    /// generic `extend` per rejected node inside a size-optimised guest.
    #[inline]
    fn one(code: Code, reason: Cow<'static, str>) -> Status {
        Status {
            code,
            reasons: Reasons::from_buf([reason]),
        }
    }

    /// The node does not fit now (preemption might help).
    pub fn unschedulable(reason: impl Into<Cow<'static, str>>) -> Status {
        Status::one(Code::Unschedulable, reason.into())
    }

    /// The node does not fit and preemption would not help.
    pub fn unresolvable(reason: impl Into<Cow<'static, str>>) -> Status {
        Status::one(Code::UnschedulableAndUnresolvable, reason.into())
    }

    /// The plugin failed; the message says why.
    pub fn error(message: impl Into<Cow<'static, str>>) -> Status {
        Status::one(Code::Error, message.into())
    }

    /// The reasons, in the order the plugin gave them.
    #[inline]
    pub fn reasons(&self) -> &[Cow<'static, str>] {
        &self.reasons
    }

    /// Takes the reasons out (e.g. to send them over the wire).
    pub fn into_reasons(self) -> impl Iterator<Item = Cow<'static, str>> {
        self.reasons.into_iter()
    }

    pub fn is_success(&self) -> bool {
        self.code == Code::Success
    }

    /// kube-scheduler's `Status.Message()`: the reasons joined by ", ".
    pub fn message(&self) -> String {
        self.reasons.join(", ")
    }
}

/// What `prepare` decided for a pod (kube-scheduler's PreFilter result),
/// carrying the plugin's per-pod state `S` (its CycleState entry).
#[derive(Debug)]
pub enum Prepare<S> {
    /// Filter every node with this state.
    Proceed(S),
    /// Nothing to check for this pod: every node passes this plugin.
    Skip,
    /// The pod fits nowhere; the status applies to every node.
    Reject(Status),
    /// Only the named nodes can pass; filter those with this state.
    Narrow(S, Vec<String>),
}

/// What `pre_score` decided for a pod (kube-scheduler's PreScore result).
#[derive(Debug)]
pub enum PreScore<S> {
    /// Score the feasible nodes with this state.
    Proceed(S),
    /// Nothing to score: the plugin adds nothing to any node's total.
    Skip,
    /// The plugin failed: the cycle is aborted.
    Error(Status),
}
