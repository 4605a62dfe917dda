//! The session loop (Volcano's `Scheduler.Run` and `runOnce`): every
//! `schedulePeriod` of simulated time the cache takes the events due, and
//! a session opens on its snapshot with the tiers' plugins, runs the
//! configured actions and closes. The clock skips periods in which nothing
//! can change.

use super::actions;
use super::cache::intake::Intake;
use super::cache::{BatchInput, World};
use super::close::{Closed, close};
use super::framework::registry::Registry;
use super::framework::session::Session;
use super::predicates::Schedulers;
use crate::cluster::ClusterState;
use crate::config::batch::Session as SessionConfig;
use crate::simulate::Progress;
use crate::simulate::clock::Clock;
use crate::simulate::report::{Outputs, Report, Tracker};
use anyhow::Result;

/// How the loop runs.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Stop after this many sessions (upstream's unit tests run one).
    pub max_sessions: Option<u32>,
    /// Only pods with this `spec.schedulerName`; by default pods of
    /// `default-scheduler`, `volcano` and `kube-batch` are taken.
    pub scheduler_name: Option<String>,
}

/// Replays the workload `events` (read as it goes) over `cluster` in
/// sessions whose plugins `registry` builds; the report's pods and
/// samples go to `outputs`.
#[allow(clippy::too_many_arguments)]
pub fn run(
    schedulers: &mut Schedulers,
    registry: &Registry,
    mut cluster: ClusterState,
    input: &BatchInput,
    events: &mut dyn Clock,
    config: &SessionConfig,
    options: &Options,
    outputs: Outputs,
    progress: &mut dyn Progress,
) -> Result<Report> {
    let mut tracker = Tracker::new(&mut cluster, outputs);
    let mut world = World::new(input, Intake::new(options.scheduler_name.clone()))?;
    let period_ms = (config.period.as_millis() as u64).max(1);
    let mut now_ms: u64 = 0;
    let mut sessions = 0u32;
    loop {
        let changed_by_events = world.apply_due(events, now_ms, &mut cluster, &mut tracker)?;
        let now = now_ms / 1000;
        let mut bound = 0;
        if world.has_pending() || changed_by_events {
            bound = session(
                schedulers,
                registry,
                &mut cluster,
                &mut world,
                &mut tracker,
                config,
                now,
            )?
            .bound
            .len();
            sessions += 1;
            tracker.session();
            tracker.sample(now, world.pending_count());
        }
        let (done, total) = events.progress();
        progress.attempted(done, total);
        if options.max_sessions.is_some_and(|m| sessions >= m) {
            break;
        }
        let next = events.next_instant()?;
        if next.is_none() && bound == 0 {
            break;
        }
        now_ms = next_session(now_ms, period_ms, bound, next);
    }
    tracker.set_groups(world.outcomes());
    tracker.finish()
}

/// When the next session opens: one period on; after a session that
/// bound nothing, nothing can change before the next event, so the first
/// period at or after it.
fn next_session(now_ms: u64, period_ms: u64, bound: usize, next: Option<u64>) -> u64 {
    let mut now_ms = now_ms + period_ms;
    if bound == 0
        && let Some(next) = next
    {
        let next = next.saturating_mul(1000);
        if next > now_ms {
            now_ms += (next - now_ms).div_ceil(period_ms) * period_ms;
        }
    }
    now_ms
}

/// One session at `now` (seconds): open, actions, close (what the live
/// scheduler runs every period too).
pub fn session(
    schedulers: &mut Schedulers,
    registry: &Registry,
    cluster: &mut ClusterState,
    world: &mut World,
    tracker: &mut Tracker,
    config: &SessionConfig,
    now: u64,
) -> Result<Closed> {
    let state = world.state(cluster);
    let plugins = registry.build(&config.tiers, &state);
    let mut s = Session::open(state, plugins, cluster, schedulers);
    for action in &config.actions {
        actions::execute(action, &mut s, &config.tiers)?;
    }
    Ok(close(s, world, tracker, now))
}
