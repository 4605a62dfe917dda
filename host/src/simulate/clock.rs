//! Where the scheduling loop's time and pod events come from.
//!
//! The loops (kube-scheduler's, [`super::run`], and batch mode's
//! sessions) do not know whether they replay a workload or run on a
//! cluster: they ask a [`Clock`] for the next instant and the pod events
//! at it. The simulation's clock is the workload's own
//! ([`Events`]): time jumps from one event to the next, so a day-long
//! trace replays in seconds. A live scheduler's clock is the real one, its
//! events the API server's watch.

use crate::input::workload::{Event, Events};
use anyhow::Result;

/// The loop's source of time and pod events.
pub trait Clock {
    /// The next instant (seconds) at which something happens; `None` when
    /// nothing more will.
    fn next_instant(&mut self) -> Result<Option<u64>>;
    /// The next event at `now`; `None` when `now` has no more.
    fn next_event_at(&mut self, now: u64) -> Result<Option<Event>>;
    /// Where the last event came from (e.g. `workload.ndjson:12`), for
    /// messages.
    fn origin(&self) -> String;
    /// How far along the source is (done, total), for a progress bar.
    fn progress(&self) -> (u64, u64);
}

/// The workload's virtual clock: an event's instant is its `time`.
impl Clock for Events {
    fn next_instant(&mut self) -> Result<Option<u64>> {
        self.peek_time()
    }

    fn next_event_at(&mut self, now: u64) -> Result<Option<Event>> {
        if self.peek_time()? != Some(now) {
            return Ok(None);
        }
        self.next()
    }

    fn origin(&self) -> String {
        Events::origin(self)
    }

    fn progress(&self) -> (u64, u64) {
        Events::progress(self)
    }
}
