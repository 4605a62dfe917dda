//! `sift schedule`: its flags (clap, named as kube-scheduler's), converted
//! to [`crate::schedule::Options`].

use super::serve::{parse_duration_arg, parse_watch_timeout, watched_plugins_dir};
use super::{load_config, runtime};
use crate::schedule::leader::Election;
use crate::schedule::{LiveMode, Options, Plugins, run};
use crate::serve::informer::Source;
use anyhow::{Result, anyhow};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(clap::Args, Clone)]
pub struct ScheduleArgs {
    /// The API server this kubeconfig points at.
    #[arg(
        long,
        value_name = "PATH",
        conflicts_with = "in_cluster",
        required_unless_present = "in_cluster"
    )]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use (default: its current-context).
    #[arg(long, value_name = "NAME", requires = "kubeconfig")]
    pub context: Option<String>,
    /// The API server of the cluster sift runs in, as its pod's service
    /// account (what deploy/scheduler sets up).
    #[arg(long)]
    pub in_cluster: bool,
    /// sift configuration (YAML): plugins, order, weights, arguments,
    /// limits, and `schedulerName` (default `sift`); watched and reloaded.
    #[arg(long, short = 'c')]
    pub config: Option<PathBuf>,
    /// Directory of plugin components (default: the bundled plugins);
    /// watched: components added, changed or removed are loaded between
    /// two scheduling cycles.
    #[arg(long = "plugins", value_name = "DIR")]
    pub plugins_dir: Option<PathBuf>,
    /// Run sift's built-in plugins (the default filters, compiled into
    /// sift) instead of Wasm components, fixed for the run: to measure the
    /// host without the sandbox, or to compare placements.
    #[arg(long, conflicts_with = "plugins_dir")]
    pub native: bool,
    /// scheduler: kube-scheduler's loop, a pod a cycle (pods of `sift`).
    /// batch: Volcano's sessions every batch.schedulePeriod over jobs
    /// (PodGroups, watched with Queues and PriorityClasses), gangs bound
    /// whole or not at all (pods of `volcano`).
    #[arg(long, value_enum, default_value = "scheduler")]
    pub mode: ModeArg,
    /// Address of /healthz, /readyz, /metrics and /status (port 0 picks a
    /// free port; the address is printed as "listening on ADDR").
    #[arg(long, default_value = "127.0.0.1:10259")]
    pub listen: SocketAddr,
    /// Binds in flight at once: the binding cycle runs beside the next
    /// scheduling cycles, as kube-scheduler's.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..))]
    pub bind_concurrency: u32,
    /// How long sift waits for a byte from the API server on a list or a
    /// watch before it reconnects (at least 2s).
    #[arg(long, default_value = "60s", value_parser = parse_watch_timeout)]
    pub watch_timeout: Duration,
    /// Elect a leader among replicas through a coordination.k8s.io/v1
    /// Lease; only the leader schedules (--leader-elect=false: one
    /// replica, no lease).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub leader_elect: bool,
    /// How long a leader's lease holds without renewal before a standby
    /// may take it.
    #[arg(long, default_value = "15s", value_parser = parse_duration_arg)]
    pub leader_elect_lease_duration: Duration,
    /// How long the leader keeps trying to renew before it gives up
    /// (and exits, as kube-scheduler does, to be restarted as a standby).
    #[arg(long, default_value = "10s", value_parser = parse_duration_arg)]
    pub leader_elect_renew_deadline: Duration,
    /// How often candidates try to take, and the leader to renew, the lease.
    #[arg(long, default_value = "2s", value_parser = parse_duration_arg)]
    pub leader_elect_retry_period: Duration,
    /// The Lease's namespace (default: this pod's namespace from
    /// POD_NAMESPACE, else kube-system).
    #[arg(long, value_name = "NAMESPACE")]
    pub leader_elect_resource_namespace: Option<String>,
    /// The Lease's name (default: the scheduler's name).
    #[arg(long, value_name = "NAME")]
    pub leader_elect_resource_name: Option<String>,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum ModeArg {
    Scheduler,
    Batch,
}

pub(super) fn schedule(a: ScheduleArgs) -> Result<ExitCode> {
    let config = load_config(a.config.as_deref())?;
    let plugins = if a.native {
        Plugins::Native
    } else {
        let dir = watched_plugins_dir(&a.config, &a.plugins_dir, &config)?;
        Plugins::Watched(crate::serve::options::absolute(&dir))
    };
    if a.leader_elect_renew_deadline >= a.leader_elect_lease_duration
        || a.leader_elect_retry_period >= a.leader_elect_renew_deadline
    {
        return Err(anyhow!(
            "leader election needs retry period < renew deadline < lease duration (got {:?}, \
             {:?}, {:?})",
            a.leader_elect_retry_period,
            a.leader_elect_renew_deadline,
            a.leader_elect_lease_duration
        ));
    }
    let mode = match a.mode {
        ModeArg::Scheduler => LiveMode::Scheduler,
        ModeArg::Batch => LiveMode::Batch,
    };
    let name = crate::schedule::run::scheduler_name(&config, mode);
    let election = a.leader_elect.then(|| Election {
        namespace: a
            .leader_elect_resource_namespace
            .clone()
            .unwrap_or_else(|| {
                std::env::var("POD_NAMESPACE")
                    .ok()
                    .filter(|n| !n.is_empty())
                    .unwrap_or_else(|| "kube-system".into())
            }),
        name: a.leader_elect_resource_name.clone().unwrap_or(name),
        identity: crate::schedule::run::identity(),
        lease_duration: a.leader_elect_lease_duration,
        renew_deadline: a.leader_elect_renew_deadline,
        retry_period: a.leader_elect_retry_period,
    });
    let source = match (&a.kubeconfig, a.in_cluster) {
        (Some(path), _) => Source::Kubeconfig {
            path: path.clone(),
            context: a.context.clone(),
        },
        (None, _) => Source::InCluster,
    };
    let options = Options {
        mode,
        source,
        config: a
            .config
            .clone()
            .map(|p| crate::serve::options::absolute(&p)),
        listen: a.listen,
        watch_timeout: a.watch_timeout,
        bind_concurrency: a.bind_concurrency as usize,
        election,
    };
    let runtime = runtime(&config)?;
    run(options, runtime, config, plugins)?;
    Ok(ExitCode::SUCCESS)
}
