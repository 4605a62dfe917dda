//! `sift serve`: a kube-scheduler extender (filter verb) over HTTP, with
//! hot-loaded plugins, a cluster state fed by files and informer-style
//! events, Prometheus metrics, and graceful shutdown.
//!
//! HTTP is axum on tokio (the Rust ecosystem's standard server stack);
//! filtering runs on tokio's blocking threads and the engine's rayon pool,
//! never on the async workers. Admission is bounded: `max_in_flight`
//! requests evaluate, `max_queue` more wait, the rest get 503 with
//! Retry-After (kube-scheduler treats that as an extender error, which an
//! `ignorable` extender survives).

use super::requests::{
    ClusterEvent, FilterRequest, RequestNodes, apply_cluster_events, parse_cluster_events_keeping,
    parse_filter_request,
};
use crate::cluster::ClusterState;
use crate::config::Config;
use crate::input::Objects;
use crate::input::kube;
use crate::input::read::BoundPods;
use crate::runtime::Runtime;
use crate::runtime::cache::sha256_hex;
use crate::serve::conn::{HeaderDeadline, IDLE_TIMEOUT};
use crate::serve::extender::{ExtenderFilterResult, filter_result};
use crate::serve::informer::{self, Informer, Sink};
use crate::serve::metrics::{CodeLabel, Metrics, PluginLabel, ResultLabel};
use crate::serve::reload::{Profile, ReloadStatus, Reloader};
use anyhow::{Context, Result, anyhow};
use arc_swap::ArcSwap;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path as UrlPath, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use std::cell::RefCell;
use std::collections::{BTreeSet, HashSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

#[derive(clap::Args, Clone)]
pub struct ServeArgs {
    /// Address to listen on (port 0 picks a free port; the address is
    /// printed on stdout as "listening on ADDR").
    #[arg(long, default_value = "127.0.0.1:8888")]
    pub listen: SocketAddr,
    /// sift configuration (YAML); watched and reloaded on change.
    #[arg(long, short = 'c')]
    pub config: Option<PathBuf>,
    /// Directory of plugin components; watched: components added, changed
    /// or removed are loaded or unloaded while serving.
    #[arg(long = "plugins", value_name = "DIR")]
    pub plugins_dir: Option<PathBuf>,
    /// Nodes and bound pods (kubectl JSON/YAML) for nodeCacheCapable
    /// requests; reloaded when they change. POST /cluster adds informer
    /// events on top. Repeatable.
    #[arg(long, value_name = "FILE")]
    pub cluster: Vec<PathBuf>,
    /// Watch the API server this kubeconfig points at: Nodes, Pods (not
    /// Succeeded or Failed) and Namespaces are listed, then watched, into
    /// the cluster state (with --cluster files and /cluster events).
    /// /readyz waits for the first lists.
    #[arg(long, value_name = "PATH", conflicts_with = "in_cluster")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use (default: its current-context).
    #[arg(long, value_name = "NAME", requires = "kubeconfig")]
    pub context: Option<String>,
    /// Watch the API server of the cluster sift runs in, as its pod's
    /// service account (what deploy/ sets up).
    #[arg(long)]
    pub in_cluster: bool,
    /// With --kubeconfig or --in-cluster: how long sift waits for a byte
    /// from the API server, on a list (each page) and on a watch, before
    /// it closes the connection, reports the kind unhealthy in /status and
    /// /readyz, and retries with backoff. Watches ask the server to end
    /// them a few seconds before this, so a quiet but healthy server never
    /// trips it; a list the server has not answered in its own request
    /// timeout (60s by default) has failed anyway. At least 2s.
    #[arg(long, default_value = "60s", value_parser = parse_watch_timeout)]
    pub watch_timeout: Duration,
    /// Accept POST /cluster events even with --kubeconfig or --in-cluster.
    /// Off by default there: the API server is the cluster state, and
    /// anyone who can reach the port could otherwise add pods or delete
    /// nodes in sift's view (it lasts until the API server sends those
    /// objects again), failing every node for every pod. Turn it on only
    /// where a NetworkPolicy (deploy/) admits nothing but the scheduler.
    /// Without a watch, /cluster is always on.
    #[arg(long)]
    pub allow_cluster_events: bool,
    /// The extender's filterVerb: sift answers POST <prefix>/<verb> for any
    /// prefix, so the urlPrefix in kube-scheduler's config is free.
    #[arg(long, default_value = "filter")]
    pub filter_verb: String,
    /// Filter requests evaluated at the same time.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_in_flight: u32,
    /// Filter requests allowed to wait for a slot; beyond that, 503 with
    /// Retry-After.
    #[arg(long, default_value_t = 64)]
    pub max_queue: usize,
    /// Largest request body accepted (e.g. 64Mi); larger bodies get 413.
    #[arg(long, default_value = "64Mi")]
    pub max_body: String,
    /// Time a client has to send a request's headers, and again its body;
    /// a connection that stalls longer is closed (headers) or gets 408
    /// (body), so stalled clients cannot hold connections open.
    #[arg(long, default_value = "10s", value_parser = parse_duration_arg)]
    pub read_timeout: Duration,
    /// After SIGTERM/SIGINT, how long requests in flight may take before
    /// sift closes their connections and exits.
    #[arg(long, default_value = "15s", value_parser = parse_duration_arg)]
    pub shutdown_timeout: Duration,
}

fn parse_duration_arg(s: &str) -> Result<Duration, String> {
    crate::config::parse_duration(s).map_err(|e| format!("{e:#}"))
}

fn parse_watch_timeout(s: &str) -> Result<Duration, String> {
    use informer::WatchOptions;
    let d = parse_duration_arg(s)?;
    if d < WatchOptions::MIN_DEADLINE {
        return Err(format!(
            "{s} is below {}s: watches must end (timeoutSeconds, whole seconds, at least 1) \
             before it",
            WatchOptions::MIN_DEADLINE.as_secs()
        ));
    }
    Ok(d)
}

/// Why the reload thread wakes up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Trigger {
    Plugins,
    /// A cluster file changed: reload it if its contents did.
    Cluster,
    /// SIGHUP: reapply the cluster files even if unchanged (over what
    /// `/cluster` events changed since).
    ClusterForced,
    Stop,
}

/// Everything the handlers share.
struct Server {
    profile: Arc<ArcSwap<Profile>>,
    reload_status: Arc<Mutex<ReloadStatus>>,
    cluster: Mutex<ClusterFeed>,
    metrics: Arc<Metrics>,
    permits: Semaphore,
    waiting: AtomicUsize,
    max_queue: usize,
    filter_verb: String,
    ready: AtomicBool,
    max_body: usize,
    read_timeout: Duration,
    /// The API server watch, when one is configured (set once it starts).
    informer: std::sync::OnceLock<Arc<Informer>>,
    /// A watch is configured: `Nodes`-mode requests' nodes are not kept.
    watching: bool,
    /// `/cluster` accepts events (always without a watch; with one, only
    /// with `--allow-cluster-events`).
    cluster_events: bool,
}

/// The cluster state with what came from `--cluster` files, so a file
/// change can remove what the file no longer holds.
struct ClusterFeed {
    state: ClusterState,
    files: Vec<PathBuf>,
    file_nodes: BTreeSet<String>,
    file_pods: BTreeSet<String>,
    file_namespaces: BTreeSet<String>,
    file_error: Option<String>,
    /// Whether nodes keep their whole object (a loaded plugin reads it).
    keep_node_objects: bool,
    /// SHA-256 of each file's contents last applied: a file event that
    /// leaves them unchanged (touch, chmod, a rewrite with the same bytes)
    /// costs a read, not a parse.
    applied: Option<Vec<String>>,
    /// Reloads that applied the files.
    reloads: u64,
}

impl ClusterFeed {
    /// Applies the files; `Ok(false)` when their contents are those applied
    /// last (unless `force`d).
    fn reload_files(&mut self, force: bool) -> Result<bool> {
        if self.files.is_empty() {
            return Ok(false);
        }
        let mut texts = Vec::with_capacity(self.files.len());
        for f in &self.files {
            texts.push(std::fs::read(f).with_context(|| format!("cannot read {}", f.display()))?);
        }
        let digests: Vec<String> = texts.iter().map(|t| sha256_hex(t)).collect();
        if !force && self.applied.as_ref() == Some(&digests) {
            return Ok(false);
        }
        let mut texts_utf8 = Vec::with_capacity(texts.len());
        for (f, bytes) in self.files.iter().zip(texts) {
            let text = String::from_utf8(bytes)
                .map_err(|e| anyhow!("cannot read {}: not UTF-8 text: {e}", f.display()))?;
            texts_utf8.push(text);
        }
        // Two passes over the text, so that no pod is kept as an object
        // (a 65,000-node dump's 650,000 bound pods took 2 GB as objects)
        // and nothing is applied unless everything reads: the first checks
        // every object and keeps the bound pods' keys, the second hands
        // the bound pods to the cluster state as they are read.
        let bound_keys: Rc<RefCell<BTreeSet<String>>> = Default::default();
        let mut objects = Objects {
            bound_pods_to: Some(BoundPods({
                let keys = bound_keys.clone();
                Box::new(move |pod, origin| {
                    kube::pod(&pod).map_err(|e| anyhow!("{origin}: {e:#}"))?;
                    keys.borrow_mut().insert(kube::pod_key(&pod));
                    Ok(())
                })
            })),
            ..Default::default()
        };
        for (f, text) in self.files.iter().zip(&texts_utf8) {
            objects.read_text(f, text)?;
        }
        objects.bound_pods_to = None;
        let mut nodes = BTreeSet::new();
        let mut pods = std::mem::take(&mut *bound_keys.borrow_mut());
        let mut models = Vec::new();
        for (obj, origin) in &objects.nodes {
            let mut node = kube::node(obj).map_err(|e| anyhow!("{origin}: {e:#}"))?;
            if self.keep_node_objects {
                node.object = Some(kube::object_json(obj));
            }
            nodes.insert(node.name.clone());
            models.push(node);
        }
        for (pod, origin) in &objects.pods {
            kube::pod_resources(pod).map_err(|e| anyhow!("{origin}: {e:#}"))?;
            pods.insert(kube::pod_key(pod));
        }
        let mut namespaces = BTreeSet::new();
        for (ns, origin) in &objects.namespaces {
            let name = ns.metadata.name.clone().unwrap_or_default();
            if name.is_empty() {
                return Err(anyhow!("{origin}: namespace has no metadata.name"));
            }
            namespaces.insert(name);
        }
        for gone in self.file_nodes.difference(&nodes) {
            self.state.remove_node(gone);
        }
        for node in models {
            self.state.upsert_node(node);
        }
        for (pod, _) in &objects.pods {
            self.state.upsert_pod(pod)?;
        }
        let state = Rc::new(RefCell::new(std::mem::take(&mut self.state)));
        let applied = {
            let mut second = Objects {
                bound_pods_to: Some(ClusterState::bound_pods_into(&state)),
                ..Default::default()
            };
            let mut result = Ok(());
            for (f, text) in self.files.iter().zip(&texts_utf8) {
                result = result.and_then(|_| second.read_text(f, text));
            }
            result
        };
        self.state = Rc::try_unwrap(state)
            .map(RefCell::into_inner)
            .unwrap_or_else(|rc| rc.borrow().clone());
        applied?;
        for gone in self.file_pods.difference(&pods) {
            self.state.remove_pod_key(gone);
        }
        for (ns, _) in &objects.namespaces {
            self.state.upsert_namespace(ns);
        }
        for gone in self.file_namespaces.difference(&namespaces) {
            self.state.remove_namespace(gone);
        }
        self.file_nodes = nodes;
        self.file_pods = pods;
        self.file_namespaces = namespaces;
        self.applied = Some(digests);
        self.reloads += 1;
        Ok(true)
    }
}

/// Parses a size such as "64Mi" or "1000000".
fn parse_size(s: &str) -> Result<usize> {
    let q = sift_sdk::Quantity::parse(s).map_err(|e| anyhow!("--max-body {s:?}: {e}"))?;
    let v = q.value();
    if v < 1024 {
        anyhow::bail!("--max-body {s:?} is below 1Ki");
    }
    Ok(v as usize)
}

fn absolute(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| {
        std::env::current_dir()
            .map(|d| d.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    })
}

/// Runs the server until SIGTERM or SIGINT; in-flight requests finish.
pub fn run(args: ServeArgs, runtime: Arc<Runtime>, config: Config, dir: PathBuf) -> Result<()> {
    // Nominations count from this scheduler's pods (as configured at start).
    let mut state = ClusterState::default();
    state.set_scheduler_name(config.scheduler_name());
    let max_body = parse_size(&args.max_body)?;
    let watch_source = match (&args.kubeconfig, args.in_cluster) {
        (Some(path), _) => Some(informer::Source::Kubeconfig {
            path: absolute(path),
            context: args.context.clone(),
        }),
        (None, true) => Some(informer::Source::InCluster),
        (None, false) => None,
    };
    if let Some(source) = &watch_source {
        informer::check(source)?;
    }
    let metrics = Arc::new(Metrics::new());
    let dir = absolute(&dir);
    let config_path = args.config.as_deref().map(absolute);
    let mut reloader = Reloader::start(
        runtime,
        dir.clone(),
        config_path.clone(),
        config,
        metrics.clone(),
    )?;
    let cluster_files: Vec<PathBuf> = args.cluster.iter().map(|p| absolute(p)).collect();
    let mut feed = ClusterFeed {
        state,
        files: cluster_files.clone(),
        file_nodes: BTreeSet::new(),
        file_pods: BTreeSet::new(),
        file_namespaces: BTreeSet::new(),
        file_error: None,
        keep_node_objects: reloader.profile().load().engine.full_objects().node,
        applied: None,
        reloads: 0,
    };
    feed.reload_files(true)?;
    let server = Arc::new(Server {
        profile: reloader.profile(),
        reload_status: reloader.status(),
        cluster: Mutex::new(feed),
        metrics: metrics.clone(),
        permits: Semaphore::new(args.max_in_flight as usize),
        waiting: AtomicUsize::new(0),
        max_queue: args.max_queue,
        filter_verb: args.filter_verb.clone(),
        ready: AtomicBool::new(true),
        max_body,
        read_timeout: args.read_timeout,
        informer: std::sync::OnceLock::new(),
        watching: watch_source.is_some(),
        cluster_events: watch_source.is_none() || args.allow_cluster_events,
    });

    // File events and SIGHUP wake the reload thread, which owns the reloader.
    let (tx, rx) = mpsc::channel::<Trigger>();
    let _watcher = watch(&dir, config_path.as_deref(), &cluster_files, tx.clone())?;
    let reload_server = server.clone();
    let reload_thread = std::thread::Builder::new()
        .name("sift-reload".into())
        .spawn(move || {
            while let Ok(first) = rx.recv() {
                let mut triggers: HashSet<Trigger> = HashSet::from([first]);
                triggers.extend(rx.try_iter());
                if triggers.contains(&Trigger::Stop) {
                    break;
                }
                if triggers.contains(&Trigger::Plugins) {
                    reloader.rescan();
                }
                if triggers.contains(&Trigger::ClusterForced) {
                    reload_server.reload_cluster(true);
                } else if triggers.contains(&Trigger::Cluster) {
                    reload_server.reload_cluster(false);
                }
            }
        })
        .context("cannot start the reload thread")?;

    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("sift-http")
        .build()
        .context("cannot start the HTTP runtime")?;
    let hup = tx.clone();
    let result = rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("cannot listen on {}", args.listen))?;
        let addr = listener.local_addr()?;
        println!("listening on {addr}");
        tracing::info!(%addr, "sift serve listening");
        if let Some(source) = &watch_source {
            let sink: Arc<dyn Sink> = server.clone();
            let options = informer::WatchOptions {
                deadline: args.watch_timeout,
            };
            let informer = informer::start(source, options, sink, metrics.clone()).await?;
            let _ = server.informer.set(informer);
        }
        let app = Router::new()
            .route("/healthz", get(|| async { "ok" }))
            .route("/readyz", get(readyz))
            .route("/status", get(status))
            .route("/metrics", get(metrics_text))
            .route("/cluster", post(cluster_events))
            .route("/{*path}", post(filter))
            .with_state(server.clone());
        tokio::spawn(async move {
            let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
            else {
                return;
            };
            while s.recv().await.is_some() {
                tracing::info!("SIGHUP: rescanning plugins, config and cluster files");
                let _ = hup.send(Trigger::Plugins);
                let _ = hup.send(Trigger::ClusterForced);
            }
        });
        serve_http(
            listener,
            app,
            shutdown_signal(server.clone()),
            args.read_timeout,
            args.shutdown_timeout,
        )
        .await;
        Ok(())
    });
    let _ = tx.send(Trigger::Stop);
    let _ = reload_thread.join();
    tracing::info!("sift serve stopped");
    result
}

/// Serves HTTP/1 connections until `shutdown` completes, then lets the
/// requests in flight finish for at most `grace`. A request's headers must
/// arrive within `read_timeout` of its first byte ([`HeaderDeadline`]); an
/// idle keep-alive connection is closed after [`IDLE_TIMEOUT`].
async fn serve_http(
    listener: tokio::net::TcpListener,
    app: Router,
    shutdown: impl std::future::Future<Output = ()>,
    read_timeout: Duration,
    grace: Duration,
) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        // Out of file descriptors and the like: back off.
                        tracing::warn!("cannot accept a connection: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let service = hyper_util::service::TowerToHyperService::new(app.clone());
                let conn = hyper::server::conn::http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(IDLE_TIMEOUT.max(read_timeout))
                    .serve_connection(
                        TokioIo::new(HeaderDeadline::new(stream, read_timeout)),
                        service,
                    );
                let conn = graceful.watch(conn);
                tokio::spawn(async move {
                    let _ = conn.await;
                });
            }
            _ = &mut shutdown => break,
        }
    }
    drop(listener);
    if tokio::time::timeout(grace, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            "connections still open {} s after the shutdown signal: closing them",
            grace.as_secs_f64()
        );
    }
}

async fn shutdown_signal(server: Arc<Server>) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {},
        _ = int.recv() => {},
    }
    server.ready.store(false, Ordering::Relaxed);
    tracing::info!("shutting down: no new connections, finishing requests in flight");
}

/// Watches the plugins directory, the config file and the cluster files;
/// events are debounced (a burst of writes is one rescan).
fn watch(
    dir: &Path,
    config: Option<&Path>,
    cluster: &[PathBuf],
    tx: mpsc::Sender<Trigger>,
) -> Result<
    notify_debouncer_full::Debouncer<
        notify::RecommendedWatcher,
        notify_debouncer_full::RecommendedCache,
    >,
> {
    use notify::RecursiveMode;
    let config_owned = config.map(Path::to_path_buf);
    let dir_owned = dir.to_path_buf();
    let cluster_owned: Vec<PathBuf> = cluster.to_vec();
    let mut debouncer = notify_debouncer_full::new_debouncer(
        Duration::from_millis(200),
        None,
        move |result: notify_debouncer_full::DebounceEventResult| {
            let Ok(events) = result else {
                let _ = tx.send(Trigger::Plugins);
                return;
            };
            let mut plugins = false;
            let mut cluster = false;
            for e in events.iter().filter(|e| changes_content(&e.kind)) {
                for p in &e.paths {
                    if p.starts_with(&dir_owned) || Some(p) == config_owned.as_ref() {
                        plugins = true;
                    }
                    if cluster_owned.contains(p) {
                        cluster = true;
                    }
                }
            }
            if plugins {
                let _ = tx.send(Trigger::Plugins);
            }
            if cluster {
                let _ = tx.send(Trigger::Cluster);
            }
        },
    )
    .context("cannot start the file watcher")?;
    debouncer
        .watch(dir, RecursiveMode::NonRecursive)
        .with_context(|| format!("cannot watch {}", dir.display()))?;
    let mut parents: BTreeSet<PathBuf> = BTreeSet::new();
    for f in config
        .into_iter()
        .chain(cluster.iter().map(PathBuf::as_path))
    {
        if let Some(parent) = f.parent() {
            parents.insert(parent.to_path_buf());
        }
    }
    for p in parents {
        if p != dir {
            debouncer
                .watch(&p, RecursiveMode::NonRecursive)
                .with_context(|| format!("cannot watch {}", p.display()))?;
        }
    }
    Ok(debouncer)
}

/// Whether a file event can mean new contents. Opening or reading a file
/// is an event too (inotify's OPEN and CLOSE_NOWRITE): sift reading the
/// files it watches must not wake it again.
fn changes_content(kind: &notify::EventKind) -> bool {
    use notify::EventKind;
    use notify::event::{AccessKind, AccessMode};
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        _ => true,
    }
}

/// A 400 naming what is wrong with the body.
fn bad_request(message: String) -> Response {
    (
        StatusCode::BAD_REQUEST,
        axum::Json(json!({ "error": message })),
    )
        .into_response()
}

impl Sink for Server {
    fn node_objects(&self) -> bool {
        self.profile.load().engine.full_objects().node
    }

    fn apply(&self, events: Vec<ClusterEvent>) {
        if let Ok(mut feed) = self.cluster.lock() {
            apply_cluster_events(&mut feed.state, events);
        }
    }
}

impl Server {
    fn reload_cluster(&self, force: bool) {
        let Ok(mut feed) = self.cluster.lock() else {
            return;
        };
        // Whole node objects are kept only while a loaded plugin reads
        // them; when one starts to, the files are applied again with them.
        let keep = self.profile.load().engine.full_objects().node;
        let force = force || (keep && !feed.keep_node_objects);
        if keep && !feed.keep_node_objects {
            tracing::warn!(
                "a plugin now reads whole node objects: nodes from --cluster files get them now, \
                 nodes POSTed to /cluster only when they are sent again"
            );
        }
        feed.keep_node_objects = keep;
        match feed.reload_files(force) {
            Ok(false) => feed.file_error = None,
            Ok(true) => {
                feed.file_error = None;
                tracing::info!(
                    nodes = feed.state.node_count(),
                    pods = feed.state.pod_count(),
                    "cluster files reloaded"
                );
            }
            Err(e) => {
                let message = format!("{e:#}");
                // Once per distinct failure, not once per file event.
                if feed.file_error.as_ref() != Some(&message) {
                    tracing::error!(
                        "cluster files not reloaded, the previous state stays: {message}"
                    );
                }
                feed.file_error = Some(message);
            }
        }
    }

    /// Answers one filter request (on a blocking thread).
    fn filter(&self, body: &[u8]) -> Result<ExtenderFilterResult, String> {
        let FilterRequest {
            mut pod,
            pod_json,
            nodes,
        } = parse_filter_request(body)?;
        let profile = self.profile.load_full();
        let full = profile.engine.full_objects();
        if full.pod {
            pod.object = Some(Arc::from(pod_json.get()));
        }
        if !profile.unready.is_empty() {
            // Answering without a plugin the config enables would be a
            // wrong answer: kube-scheduler gets an extender error instead
            // (which an `ignorable` extender skips).
            return Ok(ExtenderFilterResult {
                error: format!("sift is not ready: {}", profile.unready.join("; ")),
                ..Default::default()
            });
        }
        // A Nodes request's objects are echoed back for the feasible names;
        // its models (a name sent twice: the first object counts) become
        // the request's node table.
        let (names, models, objects) = match nodes {
            RequestNodes::Objects(list) => {
                let mut models = Vec::with_capacity(list.len());
                let mut objects = Vec::with_capacity(list.len());
                let mut seen = HashSet::new();
                for (mut model, raw) in list {
                    if full.node {
                        model.object = Some(Arc::from(raw.get()));
                    }
                    objects.push((model.name.clone(), raw));
                    if seen.insert(model.name.clone()) {
                        models.push(model);
                    }
                }
                let names = objects.iter().map(|(n, _)| n.clone()).collect();
                (names, Some(models), Some(objects))
            }
            RequestNodes::Names(names) => (names, None, None),
        };
        // A plugin that reads whole node objects was just loaded: apply
        // the cluster files again, with them.
        if full.node && self.cluster.lock().is_ok_and(|f| !f.keep_node_objects) {
            self.reload_cluster(false);
        }
        let (snapshot, candidates, unknown) = {
            let mut feed = self
                .cluster
                .lock()
                .map_err(|_| "cluster state unavailable".to_string())?;
            let snapshot = match models {
                Some(models) => feed.state.request_snapshot(models),
                None => feed.state.snapshot(),
            };
            let mut seen = HashSet::new();
            let mut candidates = Vec::with_capacity(names.len());
            let mut unknown = Vec::new();
            for n in &names {
                if !seen.insert(n.as_str()) {
                    continue;
                }
                match snapshot.slot_of(n) {
                    Some(slot) => candidates.push(slot),
                    None => unknown.push(n.clone()),
                }
            }
            if self.watching && objects.is_some() {
                // The watch is the cluster state: a request's own nodes
                // are not kept beyond it.
                feed.state.forget_request_nodes();
            }
            (snapshot, candidates, unknown)
        };
        let mut result = if candidates.is_empty() {
            let mut r = ExtenderFilterResult::default();
            if objects.is_some() {
                r.nodes = Some(Default::default());
            } else {
                r.node_names = Some(Vec::new());
            }
            r
        } else {
            let outcome = profile.engine.filter_candidates(
                profile.engine.plugins(),
                &snapshot,
                pod,
                &candidates,
            );
            for e in &outcome.ignored_errors {
                tracing::warn!("ignored plugin error: {e}");
            }
            if let Some(e) = &outcome.error {
                tracing::warn!("filter request failed: {e}");
            }
            filter_result(&outcome, objects)
        };
        // A reply with Error carries nothing else (kube-scheduler reads
        // nothing else from it).
        if result.error.is_empty() {
            for n in unknown {
                result
                    .failed_nodes
                    .insert(n, "node is not in sift's cluster state".into());
            }
        }
        Ok(result)
    }

    /// Applies informer-style events to the cluster state.
    fn cluster_events(&self, body: &[u8]) -> Result<Value, String> {
        let keep = self.profile.load().engine.full_objects().node;
        let parsed = parse_cluster_events_keeping(body, keep)?;
        let mut feed = self
            .cluster
            .lock()
            .map_err(|_| "cluster state unavailable".to_string())?;
        let changed = apply_cluster_events(&mut feed.state, parsed);
        Ok(json!({
            "changed": changed,
            "nodes": feed.state.node_count(),
            "pods": feed.state.pod_count(),
        }))
    }
}

/// Reads a request body within `--max-body` and `--read-timeout`.
async fn read_body(s: &Server, body: Body) -> Result<Bytes, Response> {
    match tokio::time::timeout(s.read_timeout, axum::body::to_bytes(body, s.max_body)).await {
        Err(_) => Err((
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "the request body did not arrive within {} s (--read-timeout)\n",
                s.read_timeout.as_secs_f64()
            ),
        )
            .into_response()),
        Ok(Err(e)) => {
            let too_large =
                std::iter::successors(Some(&e as &(dyn std::error::Error + 'static)), |e| {
                    e.source()
                })
                .any(|e| e.is::<http_body_util::LengthLimitError>());
            Err(if too_large {
                (
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("request body over {} bytes (--max-body)\n", s.max_body),
                )
                    .into_response()
            } else {
                bad_request(format!("cannot read the request body: {e}"))
            })
        }
        Ok(Ok(bytes)) => Ok(bytes),
    }
}

async fn filter(
    State(s): State<Arc<Server>>,
    UrlPath(path): UrlPath<String>,
    body: Body,
) -> Response {
    if path.rsplit('/').next() != Some(s.filter_verb.as_str()) {
        return (
            StatusCode::NOT_FOUND,
            format!(
                "sift answers POST <prefix>/{} (the filter verb), /cluster\n",
                s.filter_verb
            ),
        )
            .into_response();
    }
    // The body first: a client that stalls must not hold a slot.
    let body = match read_body(&s, body).await {
        Ok(b) => b,
        Err(r) => return respond(&s, r),
    };
    // Admission: a free slot, or a bounded wait for one.
    let permit = match s.permits.try_acquire() {
        Ok(p) => p,
        Err(_) => {
            if s.waiting.fetch_add(1, Ordering::SeqCst) >= s.max_queue {
                s.waiting.fetch_sub(1, Ordering::SeqCst);
                return respond(&s, overloaded());
            }
            s.metrics.queue_depth.inc();
            let p = s.permits.acquire().await;
            s.waiting.fetch_sub(1, Ordering::SeqCst);
            s.metrics.queue_depth.dec();
            match p {
                Ok(p) => p,
                Err(_) => return respond(&s, overloaded()),
            }
        }
    };
    s.metrics.in_flight.inc();
    let started = Instant::now();
    let worker = s.clone();
    let outcome = tokio::task::spawn_blocking(move || worker.filter(&body)).await;
    drop(permit);
    s.metrics.in_flight.dec();
    let elapsed = started.elapsed().as_secs_f64();
    let response = match outcome {
        Ok(Ok(result)) => {
            let ok = result.error.is_empty();
            s.metrics
                .filter_duration
                .get_or_create(&ResultLabel {
                    result: if ok { "success" } else { "error" }.into(),
                })
                .observe(elapsed);
            let feasible = result
                .node_names
                .as_ref()
                .map(Vec::len)
                .or(result.nodes.as_ref().map(|n| n.items.len()))
                .unwrap_or(0);
            s.metrics.feasible_nodes.observe(feasible as f64);
            (StatusCode::OK, axum::Json(result)).into_response()
        }
        Ok(Err(message)) => bad_request(message),
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("filter request failed: {e}\n"),
        )
            .into_response(),
    };
    respond(&s, response)
}

fn overloaded() -> Response {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [(header::RETRY_AFTER, "1")],
        "sift is at its request limit (--max-in-flight, --max-queue); retry\n",
    )
        .into_response()
}

fn respond(s: &Server, r: Response) -> Response {
    s.metrics
        .requests
        .get_or_create(&CodeLabel {
            code: r.status().as_u16().to_string(),
        })
        .inc();
    r
}

async fn cluster_events(State(s): State<Arc<Server>>, body: Body) -> Response {
    if !s.cluster_events {
        // Unauthenticated writes to a state the API server owns: off.
        return (
            StatusCode::FORBIDDEN,
            axum::Json(json!({
                "error": "POST /cluster is off: sift watches the API server (--kubeconfig or \
                          --in-cluster), which is the cluster state, and /cluster has no \
                          authentication; start sift with --allow-cluster-events to accept \
                          events anyway (admit only the scheduler to the port, e.g. with \
                          deploy/'s NetworkPolicy)"
            })),
        )
            .into_response();
    }
    let body = match read_body(&s, body).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let worker = s.clone();
    match tokio::task::spawn_blocking(move || worker.cluster_events(&body)).await {
        Ok(Ok(v)) => (StatusCode::OK, axum::Json(v)).into_response(),
        Ok(Err(message)) => bad_request(message),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")).into_response(),
    }
}

async fn readyz(State(s): State<Arc<Server>>) -> Response {
    let profile = s.profile.load();
    if !s.ready.load(Ordering::Relaxed) {
        return (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n").into_response();
    }
    if !profile.unready.is_empty() {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("not ready: {}\n", profile.unready.join("; ")),
        )
            .into_response();
    }
    if profile.generation == 0 || profile.engine.plugins().is_empty() {
        return (StatusCode::SERVICE_UNAVAILABLE, "no plugin loaded\n").into_response();
    }
    if s.watching {
        let Some(informer) = s.informer.get() else {
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                "connecting to the API server\n",
            )
                .into_response();
        };
        if let Some(why) = informer.waiting_for() {
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                format!("not ready: {why}\n"),
            )
                .into_response();
        }
        // Stale state stays ready: kube-scheduler's own cache is as stale
        // while the API server is away, and an extender taken out of the
        // Service would fail every pod for a non-ignorable extender.
        if let Some(failing) = informer.degraded() {
            return (
                StatusCode::OK,
                format!("ok (serving the last state; the watch is failing: {failing})\n"),
            )
                .into_response();
        }
    }
    (StatusCode::OK, "ok\n").into_response()
}

async fn status(State(s): State<Arc<Server>>) -> Response {
    let profile = s.profile.load();
    let reload = s
        .reload_status
        .lock()
        .map(|r| r.clone())
        .unwrap_or_default();
    let cluster = s.cluster.lock().map(|f| {
        json!({
            "nodes": f.state.node_count(),
            "pods": f.state.pod_count(),
            "files": f.files,
            "fileError": f.file_error,
            "fileReloads": f.reloads,
            "requestNodes": f.state.request_node_count(),
        })
    });
    axum::Json(json!({
        "profileGeneration": profile.generation,
        "plugins": profile.plugins,
        "reload": reload,
        "cluster": cluster.unwrap_or(Value::Null),
        "watch": s.informer.get().map(|i| i.status()),
    }))
    .into_response()
}

async fn metrics_text(State(s): State<Arc<Server>>) -> Response {
    let profile = s.profile.load();
    // Only the plugins serving now: unloaded ones drop out of the family.
    s.metrics.plugin_instances.clear();
    for p in profile.engine.plugins() {
        s.metrics
            .plugin_instances
            .get_or_create(&PluginLabel {
                plugin: p.plugin.name().to_string(),
            })
            .set(p.plugin.instances() as i64);
    }
    if let Ok(f) = s.cluster.lock() {
        s.metrics.cluster_nodes.set(f.state.node_count() as i64);
        s.metrics.cluster_pods.set(f.state.pod_count() as i64);
    }
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        s.metrics.encode(),
    )
        .into_response()
}
