//! What a session sees (Volcano's `ClusterInfo` as the framework hands it
//! to plugins): the snapshot's jobs, tasks and queues. It lives on the
//! framework side, below the plugins, so that plugins and the session can
//! both read it without either importing the other.

use super::super::job::{Job, Task};
use super::super::resource::Res;

#[derive(Clone, Debug)]
pub struct QueueInfo {
    pub name: String,
    pub weight: i32,
    /// `spec.priority`: higher first in proportion's order.
    pub priority: i32,
    pub created: Option<k8s_openapi::jiff::Timestamp>,
    pub capability: Option<Res>,
    pub guarantee: Res,
}

/// The snapshot a session works on.
pub struct State {
    pub tasks: Vec<Task>,
    pub jobs: Vec<Job>,
    pub queues: Vec<QueueInfo>,
    /// All nodes' allocatable (`TotalResource`).
    pub total: Res,
}

impl State {
    pub fn queue(&self, name: &str) -> Option<&QueueInfo> {
        self.queues.iter().find(|q| q.name == name)
    }
}
