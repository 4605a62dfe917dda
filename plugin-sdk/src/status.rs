//! Verdicts, with kube-scheduler's codes.
//!
//! Reasons are `Cow<'static, str>`: the usual constant reason ("Too many
//! pods") costs no allocation, which matters when thousands of nodes are
//! rejected per cycle.

use std::borrow::Cow;

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
    pub reasons: Vec<Cow<'static, str>>,
}

impl Status {
    pub fn success() -> Status {
        Status {
            code: Code::Success,
            reasons: Vec::new(),
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

    /// The node does not fit now (preemption might help).
    pub fn unschedulable(reason: impl Into<Cow<'static, str>>) -> Status {
        Status::new(Code::Unschedulable, [reason])
    }

    /// The node does not fit and preemption would not help.
    pub fn unresolvable(reason: impl Into<Cow<'static, str>>) -> Status {
        Status::new(Code::UnschedulableAndUnresolvable, [reason])
    }

    /// The plugin failed; the message says why.
    pub fn error(message: impl Into<Cow<'static, str>>) -> Status {
        Status::new(Code::Error, [message])
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
