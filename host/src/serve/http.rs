//! `sift serve`: a kube-scheduler extender (filter verb) over HTTP, with
//! hot-loaded plugins, a cluster state fed by files and informer-style
//! events, Prometheus metrics, and graceful shutdown. This file only wires
//! the parts together, in the order they must start.
//!
//! HTTP is axum on tokio (the Rust ecosystem's standard server stack);
//! filtering runs on tokio's blocking threads and the engine's rayon pool,
//! never on the async workers. Admission is bounded: `max_in_flight`
//! requests evaluate, `max_queue` more wait, the rest get 503 with
//! Retry-After (kube-scheduler treats that as an extender error, which an
//! `ignorable` extender survives).

use super::feed::ClusterFeed;
use super::handlers::router;
use super::informer::{self, Sink, Source};
use super::listener::serve_http;
use super::metrics::Metrics;
use super::options::{Options, absolute};
use super::reload::Reloader;
use super::server::Server;
use super::signals::{shutdown, spawn_hangup_task};
use super::triggers::{Trigger, spawn_reload_thread};
use super::watch::watch;
use crate::cluster::ClusterState;
use crate::config::Config;
use crate::runtime::Runtime;
use anyhow::{Context, Result};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, mpsc};

/// Runs the server until SIGTERM or SIGINT; in-flight requests finish.
pub fn run(options: Options, runtime: Arc<Runtime>, config: Config, dir: PathBuf) -> Result<()> {
    // Nominations count from this scheduler's pods (as configured at start).
    let mut state = ClusterState::default();
    state.set_scheduler_name(config.scheduler_name());
    let max_body = options.max_body_bytes()?;
    let watch_source = options.watch_source();
    if let Some(source) = &watch_source {
        informer::check(source)?;
    }
    let metrics = Arc::new(Metrics::new());
    let dir = absolute(&dir);
    let config_path = options.config.as_deref().map(absolute);
    let reloader = Reloader::start(
        runtime,
        dir.clone(),
        config_path.clone(),
        config,
        metrics.clone(),
    )?;
    let cluster_files: Vec<PathBuf> = options.cluster.iter().map(|p| absolute(p)).collect();
    let keep_node_objects = reloader.profile().load().engine.full_objects().node;
    let mut feed = ClusterFeed::new(state, cluster_files.clone(), keep_node_objects);
    feed.reload_files(true)?;
    let watching = watch_source.is_some();
    let server = Arc::new(Server::new(
        &options, &reloader, feed, metrics, max_body, watching,
    ));

    // File events and SIGHUP wake the reload thread, which owns the reloader.
    let (tx, rx) = mpsc::channel::<Trigger>();
    let _watcher = watch(&dir, config_path.as_deref(), &cluster_files, tx.clone())?;
    let reload_server = server.clone();
    let reload_thread = spawn_reload_thread(rx, reloader, move |force| {
        reload_server.reload_cluster(force)
    })?;

    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("sift-http")
        .build()
        .context("cannot start the HTTP runtime")?;
    let result = rt.block_on(serve(options, server, watch_source, tx.clone()));
    let _ = tx.send(Trigger::Stop);
    let _ = reload_thread.join();
    tracing::info!("sift serve stopped");
    result
}

/// Listens, starts the API server watch if one is configured, and serves
/// until SIGTERM or SIGINT.
async fn serve(
    options: Options,
    server: Arc<Server>,
    watch_source: Option<Source>,
    hup: mpsc::Sender<Trigger>,
) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(options.listen)
        .await
        .with_context(|| format!("cannot listen on {}", options.listen))?;
    let addr = listener.local_addr()?;
    println!("listening on {addr}");
    tracing::info!(%addr, "sift serve listening");
    if let Some(source) = &watch_source {
        let sink: Arc<dyn Sink> = server.clone();
        let watch_options = informer::WatchOptions {
            deadline: options.watch_timeout,
        };
        let informer = informer::start(source, watch_options, sink, server.metrics.clone()).await?;
        let _ = server.informer.set(informer);
    }
    let app = router(server.clone());
    spawn_hangup_task(hup);
    let ready = server.clone();
    serve_http(
        listener,
        app,
        shutdown(move || ready.ready.store(false, Ordering::Relaxed)),
        options.read_timeout,
        options.shutdown_timeout,
    )
    .await;
    Ok(())
}
