//! Starts `sift schedule`'s parts in the order they depend on each
//! other, and stops them on SIGTERM or SIGINT.

use super::batch::BatchLoop;
use super::http::{Health, router};
use super::input::Input;
use super::leader::{self, Election};
use super::metrics::Metrics;
use super::scheduler::{Loop, Parts};
use super::writer::Writer;
use crate::config::Config;
use crate::runtime::Runtime;
use crate::serve::ClusterEvent;
use crate::serve::informer::{self, Sink, Source, WatchOptions};
use crate::serve::listener::serve_http;
use crate::serve::metrics::Metrics as WatchMetrics;
use crate::serve::reload::{Profile, Reloader};
use crate::serve::signals::shutdown;
use crate::serve::triggers::{Trigger, spawn_reload_thread};
use crate::serve::watch::watch;
use anyhow::{Context, Result};
use arc_swap::ArcSwap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

/// The scheduler's name when the configuration names none.
pub const DEFAULT_NAME: &str = "sift";
/// Batch mode's, as Volcano's `--scheduler-name` default.
pub const DEFAULT_BATCH_NAME: &str = "volcano";

/// Which scheduler runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LiveMode {
    /// kube-scheduler's loop, one pod a cycle.
    Scheduler,
    /// Volcano's sessions over jobs and queues.
    Batch,
}

pub struct Options {
    pub mode: LiveMode,
    pub source: Source,
    pub config: Option<PathBuf>,
    pub listen: SocketAddr,
    pub watch_timeout: Duration,
    pub bind_concurrency: usize,
    /// `None`: no leader election (one replica).
    pub election: Option<Election>,
}

/// Where the plugins come from.
pub enum Plugins {
    /// Wasm components of a directory, hot-loaded as it changes.
    Watched(PathBuf),
    /// sift's built-in plugins, fixed for the run (`--native`).
    Native,
}

/// The watch's events, sent to the loop.
struct ChannelSink {
    tx: mpsc::Sender<Input>,
    node_objects: Arc<AtomicBool>,
}

impl Sink for ChannelSink {
    fn node_objects(&self) -> bool {
        self.node_objects.load(Ordering::SeqCst)
    }

    fn apply(&self, events: Vec<ClusterEvent>) {
        let _ = self.tx.send(Input::Cluster(events));
    }
}

/// The name pods opt in with: the configuration's, else `sift` (batch
/// mode: `volcano`).
pub fn scheduler_name(config: &Config, mode: LiveMode) -> String {
    let default = match mode {
        LiveMode::Scheduler => DEFAULT_NAME,
        LiveMode::Batch => DEFAULT_BATCH_NAME,
    };
    let name = config
        .scheduler_name
        .clone()
        .unwrap_or_else(|| default.to_string());
    if name == crate::input::kube::DEFAULT_SCHEDULER_NAME {
        tracing::warn!(
            "schedulerName is default-scheduler: sift schedules every pod that names no \
             scheduler, so kube-scheduler must not run beside it"
        );
    }
    name
}

/// Runs the scheduler until SIGTERM or SIGINT.
pub fn run(
    options: Options,
    runtime: Arc<Runtime>,
    config: Config,
    plugins: Plugins,
) -> Result<()> {
    informer::check(&options.source)?;
    let name = scheduler_name(&config, options.mode);
    let watch_metrics = Arc::new(WatchMetrics::new());
    let metrics = Arc::new(Metrics::new(&name));
    let (profile, reloading) = match plugins {
        Plugins::Watched(dir) => {
            let reloader = Reloader::start(
                runtime,
                dir.clone(),
                options.config.clone(),
                config,
                watch_metrics.clone(),
            )?;
            (reloader.profile(), Some((dir, reloader)))
        }
        Plugins::Native => {
            let catalog = crate::plugins::registry::Catalog::native(&config)?;
            catalog.check_plugin_config(&config)?;
            let fixed = Profile::fixed(&config, catalog, watch_metrics.clone())?;
            (Arc::new(ArcSwap::from_pointee(fixed)), None)
        }
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name("sift-api")
        .build()
        .context("cannot start the API runtime")?;
    let watch_options = WatchOptions {
        deadline: options.watch_timeout,
    };
    let (client, server) = rt.block_on(informer::client(&options.source, watch_options))?;
    let (tx, rx) = mpsc::channel::<Input>();
    let instance = format!("{name}-{}", hostname());
    let writer = Writer::new(
        client.clone(),
        rt.handle().clone(),
        options.bind_concurrency,
        &name,
        &instance,
        tx.clone(),
        metrics.clone(),
    );
    let leading = Arc::new(AtomicBool::new(options.election.is_none()));
    metrics.leader.set(i64::from(options.election.is_none()));
    let node_objects = Arc::new(AtomicBool::new(false));
    let sink: Arc<dyn Sink> = Arc::new(ChannelSink {
        tx: tx.clone(),
        node_objects: node_objects.clone(),
    });
    let scheduler_kinds = [
        [informer::Kind::PodDisruptionBudget].as_slice(),
        &informer::Kind::WORKLOADS,
        &informer::Kind::VOLUMES,
        &informer::Kind::DRA,
    ]
    .concat();
    let extra: &[informer::Kind] = match options.mode {
        LiveMode::Scheduler => &scheduler_kinds,
        LiveMode::Batch => &informer::Kind::BATCH,
    };
    let informer = rt.block_on(informer::start_watching(
        &options.source,
        watch_options,
        sink,
        watch_metrics.clone(),
        extra,
    ))?;
    tracing::info!(scheduler = %name, %server, "sift schedule: watching the API server");

    let synced = informer.clone();
    let build_error = Arc::new(std::sync::Mutex::new(None));
    let parts = Parts {
        profile: profile.clone(),
        scheduler_name: name.clone(),
        writer,
        metrics: metrics.clone(),
        inputs: rx,
        leading: leading.clone(),
        synced: Box::new(move || synced.synced()),
        node_objects,
        build_error: build_error.clone(),
    };
    let loop_thread = spawn_loop(options.mode, parts)?;

    // Plugin and config changes swap the profile; the loop rebuilds its
    // scheduler between two cycles.
    let reload = match reloading {
        Some((dir, reloader)) => {
            let (trigger_tx, trigger_rx) = mpsc::channel::<Trigger>();
            let watcher = watch(&dir, options.config.as_deref(), &[], trigger_tx.clone())?;
            let thread = spawn_reload_thread(trigger_rx, reloader, |_| {})?;
            Some((trigger_tx, watcher, thread))
        }
        None => None,
    };

    let stop = Arc::new(AtomicBool::new(false));
    let elector = options.election.clone().map(|e| {
        spawn_elector(
            &rt,
            client.clone(),
            e,
            leading.clone(),
            stop.clone(),
            metrics.clone(),
        )
    });

    let health = Arc::new(Health {
        scheduler: name,
        identity: options.election.as_ref().map(|e| e.identity.clone()),
        leading,
        informer,
        profile,
        watch_metrics,
        metrics,
        build_error,
    });
    let result = rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(options.listen)
            .await
            .with_context(|| format!("cannot listen on {}", options.listen))?;
        let addr = listener.local_addr()?;
        println!("listening on {addr}");
        serve_http(
            listener,
            router(health),
            shutdown(|| {}),
            Duration::from_secs(10),
            Duration::from_secs(5),
        )
        .await;
        anyhow::Ok(())
    });
    stop.store(true, Ordering::SeqCst);
    let _ = tx.send(Input::Stop);
    let _ = loop_thread.join();
    if let Some(handle) = elector {
        // The elector releases the lease within a retry period.
        let _ = rt.block_on(async { tokio::time::timeout(Duration::from_secs(5), handle).await });
    }
    if let Some((trigger_tx, _watcher, thread)) = reload {
        let _ = trigger_tx.send(Trigger::Stop);
        let _ = thread.join();
    }
    tracing::info!("sift schedule stopped");
    result
}

/// Starts the scheduling loop of `mode` on a thread of its own (it owns
/// the plugin instances and, in batch mode, the session's report).
fn spawn_loop(mode: LiveMode, parts: Parts) -> Result<std::thread::JoinHandle<()>> {
    let thread = match mode {
        LiveMode::Scheduler => {
            let scheduling = Loop::new(parts);
            std::thread::Builder::new()
                .name("sift-schedule".into())
                .spawn(move || scheduling.run())
        }
        LiveMode::Batch => {
            let (started, start_result) = mpsc::channel();
            let thread = std::thread::Builder::new()
                .name("sift-sessions".into())
                .spawn(move || match BatchLoop::new(parts) {
                    Ok(sessions) => {
                        let _ = started.send(Ok(()));
                        sessions.run();
                    }
                    Err(e) => {
                        let _ = started.send(Err(e));
                    }
                });
            if let Ok(Err(e)) = start_result.recv() {
                return Err(e);
            }
            thread
        }
    };
    thread.context("cannot start the scheduling thread")
}

/// Starts the leader election, and the gauge that follows it. Losing the
/// lease ends the process, as kube-scheduler's `OnStoppedLeading`: the
/// restart relists everything.
fn spawn_elector(
    rt: &tokio::runtime::Runtime,
    client: kube::Client,
    election: Election,
    leading: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    metrics: Arc<Metrics>,
) -> tokio::task::JoinHandle<()> {
    let lost_metrics = metrics.clone();
    let on_lost = move || {
        lost_metrics.leader.set(0);
        std::process::exit(1);
    };
    let watched = leading.clone();
    rt.spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(200)).await;
            metrics
                .leader
                .set(i64::from(watched.load(Ordering::SeqCst)));
        }
    });
    rt.spawn(leader::run(client, election, leading, stop, on_lost))
}

/// This machine's name, for event instances and lease identities.
pub fn hostname() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|h| h.trim().to_string())
        })
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// `<hostname>_<random>`, as client-go's leader election identities.
pub fn identity() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!(
        "{}_{:08x}{:08x}",
        hostname(),
        std::process::id(),
        (nanos & 0xffff_ffff) as u32
    )
}
