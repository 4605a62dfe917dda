//! Admission of filter requests: `--max-in-flight` evaluate at once,
//! `--max-queue` more wait for a slot, the rest are refused at once, so a
//! burst cannot pile up unbounded work behind the engine.

use super::metrics::Metrics;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::{Semaphore, SemaphorePermit};

/// Slots for requests being evaluated, and the bounded wait for one.
pub struct Admission {
    permits: Semaphore,
    waiting: AtomicUsize,
    max_queue: usize,
}

impl Admission {
    pub fn new(max_in_flight: usize, max_queue: usize) -> Admission {
        Admission {
            permits: Semaphore::new(max_in_flight),
            waiting: AtomicUsize::new(0),
            max_queue,
        }
    }

    /// A free slot, or one after a wait in the queue (its depth in
    /// `metrics`); `None` when the queue is full: the request is refused.
    pub async fn admit(&self, metrics: &Metrics) -> Option<SemaphorePermit<'_>> {
        match self.permits.try_acquire() {
            Ok(p) => Some(p),
            Err(_) => {
                if self.waiting.fetch_add(1, Ordering::SeqCst) >= self.max_queue {
                    self.waiting.fetch_sub(1, Ordering::SeqCst);
                    return None;
                }
                metrics.queue_depth.inc();
                let p = self.permits.acquire().await;
                self.waiting.fetch_sub(1, Ordering::SeqCst);
                metrics.queue_depth.dec();
                p.ok()
            }
        }
    }
}
