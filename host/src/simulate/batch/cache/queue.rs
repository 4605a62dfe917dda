//! Queues as sessions see them (Volcano's `NewQueueInfo`): capability and
//! guarantee in Volcano's float resources, checked once when the cache
//! is loaded.

use super::super::framework::state::QueueInfo;
use super::super::resource::{self, Res};
use crate::input::kube;
use crate::input::volcano::{self, Queue};
use anyhow::{Context, Result};
use sift_sdk::Resources;
use std::collections::BTreeMap;

/// A Queue object as the sessions' [`QueueInfo`]; an unreadable quantity
/// or a negative weight is an error naming the queue.
pub fn queue_info(q: &Queue) -> Result<QueueInfo> {
    let list = |m: &BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>,
                path: &str|
     -> Result<Res> {
        let list =
            kube::resource_list(Some(m), path).with_context(|| format!("Queue {}", q.name()))?;
        let r = Resources::from_list(&list);
        let mut res = Res::allocatable(&r);
        if r.allowed_pod_number == 0 {
            res.scalars.remove(resource::PODS);
        }
        Ok(res)
    };
    let capability = if q.spec.capability.is_empty() {
        None
    } else {
        let mut c = list(&q.spec.capability, "spec.capability")?;
        if c.cpu <= 0.0 {
            c.cpu = f64::MAX;
        }
        if c.memory <= 0.0 {
            c.memory = f64::MAX;
        }
        Some(c)
    };
    if q.weight() < 0 {
        anyhow::bail!("Queue {}: spec.weight {} is negative", q.name(), q.weight());
    }
    Ok(QueueInfo {
        name: q.name().to_string(),
        weight: q.weight(),
        priority: q.spec.priority.unwrap_or(0),
        created: q.metadata.creation_timestamp.as_ref().map(|t| t.0),
        capability,
        guarantee: list(&q.spec.guarantee.resource, "spec.guarantee.resource")?,
    })
}

/// Volcano's `default` queue, which always exists: jobs that name no
/// queue go there even when the input has no Queue for it.
pub fn default_queue() -> QueueInfo {
    QueueInfo {
        name: volcano::DEFAULT_QUEUE.into(),
        weight: 1,
        priority: 0,
        created: None,
        capability: None,
        guarantee: Res::default(),
    }
}
