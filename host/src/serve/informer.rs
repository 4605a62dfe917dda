//! `sift serve --kubeconfig` / `--in-cluster` and the live scheduler:
//! list+watch Nodes, Pods, Namespaces and what the plugins read besides
//! (the default spread's controllers; the volume filters' claims, volumes,
//! classes, CSINodes, CSIDrivers, capacities and attachments;
//! DynamicResources' claims, slices and device classes) from the API server into the same cluster state
//! as `--cluster` files and `/cluster` events.
//!
//! kube-rs's runtime `watcher` does what client-go's reflector does (paged
//! lists, watches resumed from the last resourceVersion, a relist on
//! `410 Gone`, bookmarks, backoff on errors); sift applies its events as
//! they come and keeps no object cache: a node becomes its model (its
//! whole object only while a plugin reads it), a pod its usage, a
//! namespace its labels. Succeeded and Failed pods are filtered out by the
//! API server (a field selector), as kube-scheduler's informer does.
//!
//! A relist (the first list, or one after `410 Gone`) ends with the objects
//! of that kind this watch added and the list no longer holds being
//! removed, so nothing is lost and nothing goes stale; objects from
//! `--cluster` files and `/cluster` events are not the watch's to remove.
//!
//! Two things kube-rs's watcher leaves to its user, sift does:
//!
//! - Backoff between relists: the watcher relists at once after `410
//!   Gone`, so a server (or proxy) that answers every watch with 410 would
//!   be listed in a loop. As client-go's reflector, a relist that follows
//!   another within the backoff's window waits (0.8 s doubling to 30 s).
//! - Deadlines ([`WatchOptions::deadline`]): a LIST the server accepted
//!   and never answers, or a watch stream that goes silent (a half-open
//!   connection, a black-holed load balancer), would block the watcher for
//!   ever. The client's read timeout closes a connection that brings no
//!   byte for the deadline, and watches ask the server to end them
//!   (`timeoutSeconds`) a little before it, so a healthy but quiet server
//!   never trips it.

use super::accepted_watches::{AcceptedWatches, OnAccepted};
use super::metrics::{KindLabel, Metrics};
use super::requests::{BatchEvent, ClusterEvent};
use crate::input::kube as model;
use crate::input::volcano::{PodGroup, Queue};
use crate::input::{ApiObject, Workload};
use anyhow::{Context, Result, anyhow};
use futures_util::StreamExt;
use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::resource::v1 as resource;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::api::storage::v1 as storage;
use kube::runtime::utils::Backoff;
use kube::runtime::watcher::Config as WatchConfig;
use kube::runtime::watcher::{self, Event};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// How the watch treats a server that stops answering.
#[derive(Clone, Copy, Debug)]
pub struct WatchOptions {
    /// Longest wait for a byte from the API server, on a LIST (each page)
    /// and on a watch stream; past it the connection is closed, the kind
    /// reported unhealthy, and the request retried with backoff.
    pub deadline: Duration,
}

impl WatchOptions {
    /// The shortest deadline: watches must end (`timeoutSeconds`, whole
    /// seconds, at least 1) before it.
    pub const MIN_DEADLINE: Duration = Duration::from_secs(2);

    /// The `timeoutSeconds` watches ask for: 1 to 3 s short of the
    /// deadline, so that a healthy server ends every watch (or sends an
    /// event or a bookmark) before the deadline. kube-rs's watcher drops a
    /// stream that brings nothing for `timeoutSeconds` + 5 s by itself,
    /// reconnecting without a word: the deadline comes first, and is
    /// reported.
    pub fn watch_timeout_secs(&self) -> u32 {
        let d = self.deadline.as_secs().clamp(2, u64::from(u32::MAX));
        (d - (d / 2).clamp(1, 3)) as u32
    }
}

/// Within this time of the last `410 Gone`, another one backs off: the
/// window after which kube-rs's (and client-go's) backoff resets itself.
const GONE_WINDOW: Duration = Duration::from_secs(120);

/// Where the API server and credentials come from.
#[derive(Clone, Debug)]
pub enum Source {
    Kubeconfig {
        path: PathBuf,
        context: Option<String>,
    },
    /// The pod's service account (`KUBERNETES_SERVICE_HOST`/`_PORT`, the
    /// token and CA under /var/run/secrets/kubernetes.io/serviceaccount).
    InCluster,
}

/// What the watch changes: the server's cluster state.
pub trait Sink: Send + Sync + 'static {
    /// Whether nodes keep their whole object (a loaded plugin reads it).
    fn node_objects(&self) -> bool;
    /// Applies checked events in order.
    fn apply(&self, events: Vec<ClusterEvent>);
}

/// The kinds sift can watch, in the order `/status` lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Node,
    Pod,
    Namespace,
    /// What the live scheduler's preemption reads.
    PodDisruptionBudget,
    /// What gives its pods their workload selector (the default spread).
    Service,
    ReplicationController,
    ReplicaSet,
    StatefulSet,
    /// What the volume filters read.
    PersistentVolumeClaim,
    PersistentVolume,
    StorageClass,
    CsiNode,
    CsiDriver,
    CsiStorageCapacity,
    VolumeAttachment,
    /// What DynamicResources reads (it never reads ResourceClaimTemplates:
    /// the resourceclaim controller makes claims of them).
    ResourceClaim,
    ResourceSlice,
    DeviceClass,
    /// What Volcano's batch mode reads besides those.
    PriorityClass,
    PodGroup,
    Queue,
}

impl Kind {
    const EVERY: [Kind; 21] = [
        Kind::Node,
        Kind::Pod,
        Kind::Namespace,
        Kind::PodDisruptionBudget,
        Kind::Service,
        Kind::ReplicationController,
        Kind::ReplicaSet,
        Kind::StatefulSet,
        Kind::PersistentVolumeClaim,
        Kind::PersistentVolume,
        Kind::StorageClass,
        Kind::CsiNode,
        Kind::CsiDriver,
        Kind::CsiStorageCapacity,
        Kind::VolumeAttachment,
        Kind::ResourceClaim,
        Kind::ResourceSlice,
        Kind::DeviceClass,
        Kind::PriorityClass,
        Kind::PodGroup,
        Kind::Queue,
    ];
    /// What every watch reads.
    pub const CORE: [Kind; 3] = [Kind::Node, Kind::Pod, Kind::Namespace];
    /// What the live scheduler reads for the default spread.
    pub const WORKLOADS: [Kind; 4] = [
        Kind::Service,
        Kind::ReplicationController,
        Kind::ReplicaSet,
        Kind::StatefulSet,
    ];
    /// What the live scheduler reads for the volume filters.
    pub const VOLUMES: [Kind; 7] = [
        Kind::PersistentVolumeClaim,
        Kind::PersistentVolume,
        Kind::StorageClass,
        Kind::CsiNode,
        Kind::CsiDriver,
        Kind::CsiStorageCapacity,
        Kind::VolumeAttachment,
    ];
    /// What the live scheduler reads for DynamicResources.
    pub const DRA: [Kind; 3] = [Kind::ResourceClaim, Kind::ResourceSlice, Kind::DeviceClass];
    /// What batch mode reads too.
    pub const BATCH: [Kind; 3] = [Kind::PriorityClass, Kind::PodGroup, Kind::Queue];

    fn name(self) -> &'static str {
        match self {
            Kind::Node => "Node",
            Kind::Pod => "Pod",
            Kind::Namespace => "Namespace",
            Kind::PodDisruptionBudget => "PodDisruptionBudget",
            Kind::Service => "Service",
            Kind::ReplicationController => "ReplicationController",
            Kind::ReplicaSet => "ReplicaSet",
            Kind::StatefulSet => "StatefulSet",
            Kind::PersistentVolumeClaim => "PersistentVolumeClaim",
            Kind::PersistentVolume => "PersistentVolume",
            Kind::StorageClass => "StorageClass",
            Kind::CsiNode => "CSINode",
            Kind::CsiDriver => "CSIDriver",
            Kind::CsiStorageCapacity => "CSIStorageCapacity",
            Kind::VolumeAttachment => "VolumeAttachment",
            Kind::ResourceClaim => "ResourceClaim",
            Kind::ResourceSlice => "ResourceSlice",
            Kind::DeviceClass => "DeviceClass",
            Kind::PriorityClass => "PriorityClass",
            Kind::PodGroup => "PodGroup",
            Kind::Queue => "Queue",
        }
    }

    /// The `/status` key.
    fn plural(self) -> &'static str {
        match self {
            Kind::Node => "nodes",
            Kind::Pod => "pods",
            Kind::Namespace => "namespaces",
            Kind::PodDisruptionBudget => "poddisruptionbudgets",
            Kind::Service => "services",
            Kind::ReplicationController => "replicationcontrollers",
            Kind::ReplicaSet => "replicasets",
            Kind::StatefulSet => "statefulsets",
            Kind::PersistentVolumeClaim => "persistentvolumeclaims",
            Kind::PersistentVolume => "persistentvolumes",
            Kind::StorageClass => "storageclasses",
            Kind::CsiNode => "csinodes",
            Kind::CsiDriver => "csidrivers",
            Kind::CsiStorageCapacity => "csistoragecapacities",
            Kind::VolumeAttachment => "volumeattachments",
            Kind::ResourceClaim => "resourceclaims",
            Kind::ResourceSlice => "resourceslices",
            Kind::DeviceClass => "deviceclasses",
            Kind::PriorityClass => "priorityclasses",
            Kind::PodGroup => "podgroups",
            Kind::Queue => "queues",
        }
    }
}

/// One kind's watch, as `/status` shows it.
#[derive(Default)]
struct KindHealth {
    /// The first list is in.
    synced: bool,
    /// A list is being read now (its objects arrive as they are paged).
    listing: bool,
    /// Keys of the objects this watch put in the state.
    owned: HashSet<String>,
    /// Keys seen by the list being read.
    seen: HashSet<String>,
    events: u64,
    /// Lists finished after the first (after `410 Gone`, or when a watch
    /// could not resume).
    relists: u64,
    /// Watches the server ended with `410 Gone` (each means a relist).
    gone: u64,
    /// When the last one did: another within [`GONE_WINDOW`] backs off.
    last_gone: Option<Instant>,
    errors: u64,
    last_event: Option<SystemTime>,
    last_error: Option<(SystemTime, String)>,
    /// When a watch last resumed after an error without an event to show
    /// for it (a quiet kind: no claim changed while the server was down).
    resumed: Option<SystemTime>,
}

impl KindHealth {
    /// An error with no event or resumed watch since: the watch is
    /// reconnecting.
    fn healthy(&self) -> bool {
        let Some((err, _)) = &self.last_error else {
            return true;
        };
        [self.last_event, self.resumed]
            .into_iter()
            .flatten()
            .any(|t| t > *err)
    }

    fn json(&self) -> Value {
        json!({
            "synced": self.synced,
            "healthy": self.healthy(),
            "objects": self.owned.len(),
            "events": self.events,
            "relists": self.relists,
            "gone": self.gone,
            "errors": self.errors,
            "lastEvent": self.last_event.map(rfc3339),
            "lastError": self.last_error.as_ref().map(|(_, e)| e.clone()),
            "lastErrorAt": self.last_error.as_ref().map(|(t, _)| rfc3339(*t)),
        })
    }
}

fn rfc3339(t: SystemTime) -> String {
    jiff::Timestamp::try_from(t)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

/// The watches of one `sift serve`: their health, for `/readyz`,
/// `/status` and `/metrics`.
pub struct Informer {
    server: String,
    source: String,
    kinds: [Mutex<KindHealth>; Kind::EVERY.len()],
    /// The kinds this informer watches.
    watched: Vec<Kind>,
    metrics: Arc<Metrics>,
}

impl Informer {
    fn kind(&self, k: Kind) -> std::sync::MutexGuard<'_, KindHealth> {
        self.kinds[k as usize]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Whether every kind's first list is in.
    pub fn synced(&self) -> bool {
        self.watched.iter().all(|k| self.kind(*k).synced)
    }

    /// Why sift is not ready yet, or `None` once every first list is in.
    pub fn waiting_for(&self) -> Option<String> {
        let waiting: Vec<&str> = self
            .watched
            .iter()
            .filter(|k| !self.kind(**k).synced)
            .map(|k| k.plural())
            .collect();
        if waiting.is_empty() {
            return None;
        }
        let errors: Vec<String> = self
            .watched
            .iter()
            .filter_map(|k| {
                let h = self.kind(*k);
                (!h.synced).then(|| h.last_error.as_ref().map(|(_, e)| e.clone()))?
            })
            .collect();
        let mut why = format!(
            "waiting for the first list of {} from the API server at {}",
            waiting.join(", "),
            self.server
        );
        if let Some(e) = errors.first() {
            why.push_str(&format!(" (last error: {e})"));
        }
        Some(why)
    }

    /// Once synced: the kinds whose watch is failing, with their last
    /// error; sift serves its last state meanwhile.
    pub fn degraded(&self) -> Option<String> {
        let failing: Vec<String> = self
            .watched
            .iter()
            .filter_map(|k| {
                let h = self.kind(*k);
                if h.healthy() {
                    return None;
                }
                let (at, e) = h.last_error.as_ref()?;
                Some(format!("{} since {}: {e}", k.plural(), rfc3339(*at)))
            })
            .collect();
        (!failing.is_empty()).then(|| failing.join("; "))
    }

    pub fn status(&self) -> Value {
        let mut v = json!({
            "server": self.server,
            "source": self.source,
            "synced": self.synced(),
            "healthy": self.watched.iter().all(|k| self.kind(*k).healthy()),
        });
        for k in &self.watched {
            v[k.plural()] = self.kind(*k).json();
        }
        v
    }

    fn label(k: Kind) -> KindLabel {
        KindLabel {
            kind: k.name().to_string(),
        }
    }

    fn error(&self, k: Kind, e: &watcher::Error, deadline: Duration) {
        self.failed(k, describe(k, e, deadline));
    }

    /// Counts a `410 Gone`; true when it follows another within
    /// [`GONE_WINDOW`], which is reported as a failure ([`Informer::failed`])
    /// and backs off.
    fn gone(&self, k: Kind, e: &watcher::Error) -> bool {
        let repeat = {
            let mut h = self.kind(k);
            h.gone += 1;
            let repeat = h.last_gone.is_some_and(|t| t.elapsed() < GONE_WINDOW);
            h.last_gone = Some(Instant::now());
            repeat
        };
        self.metrics.watch_gone.get_or_create(&Self::label(k)).inc();
        if repeat {
            self.failed(
                k,
                format!(
                    "watch expired (410 Gone) again within {} of the last: relisting with \
                     backoff: {}",
                    humantime(GONE_WINDOW),
                    describe(k, e, Duration::ZERO)
                ),
            );
        } else {
            tracing::info!(kind = k.name(), "watch expired (410 Gone): relisting: {e}");
        }
        repeat
    }

    /// The API server accepted a watch of the kind: after an error, it is
    /// healthy again even if nothing of its kind changes (kube-rs's watcher
    /// resumes without a word).
    fn resumed(&self, k: Kind) {
        let mut h = self.kind(k);
        if !h.healthy() {
            tracing::info!(kind = k.name(), "watch resumed");
        }
        h.resumed = Some(SystemTime::now());
    }

    /// Counts a failure and makes the kind unhealthy until its next event
    /// or until its watch has resumed ([`Informer::resumed`]).
    fn failed(&self, k: Kind, message: String) {
        let mut h = self.kind(k);
        h.errors += 1;
        // Once per distinct failure in the log; every one in the counters.
        if h.last_error.as_ref().map(|(_, m)| m) != Some(&message) {
            tracing::warn!(kind = k.name(), "watch failed, retrying: {message}");
        }
        h.last_error = Some((SystemTime::now(), message));
        self.metrics
            .watch_errors
            .get_or_create(&Self::label(k))
            .inc();
    }
}

/// Whether the API server answered `410 Gone` (the resourceVersion is too
/// old: the watcher lists again).
fn gone(e: &watcher::Error) -> bool {
    match e {
        watcher::Error::WatchError(status) => status.code == 410,
        watcher::Error::WatchStartFailed(kube::Error::Api(status)) => status.code == 410,
        _ => false,
    }
}

/// Whether the client's read timeout (the deadline) ended the request.
fn timed_out(e: &watcher::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        // hyper-timeout's error is an `io::Error` of kind TimedOut ("timed
        // out"); an `io::Error` wrapping another hides it from `source()`.
        if s.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut)
            || s.to_string().ends_with("timed out")
        {
            return true;
        }
        source = s.source();
    }
    false
}

/// A watcher error in words, with its cause (the transport error under
/// "failed to perform initial object list" is what the operator needs);
/// a missed deadline says so, and what waited.
fn describe(k: Kind, e: &watcher::Error, deadline: Duration) -> String {
    if timed_out(e) {
        let what = match e {
            watcher::Error::InitialListFailed(_) => "list",
            _ => "watch",
        };
        return format!(
            "no answer from the API server for {} ({what} of {}; --watch-timeout)",
            humantime(deadline),
            k.plural()
        );
    }
    with_causes(e)
}

/// An error in one line, followed by each cause its text does not already
/// say (kube's errors repeat their source's text in their own, or not).
pub fn with_causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    text
}

/// "30s", "1.5s".
fn humantime(d: Duration) -> String {
    format!("{}s", d.as_secs_f64())
}

/// Reads the kubeconfig now, so a missing or malformed file stops `sift
/// serve` with its name; connecting happens in [`start`].
pub fn check(source: &Source) -> Result<()> {
    if let Source::Kubeconfig { path, .. } = source {
        kube::config::Kubeconfig::read_from(path)
            .map_err(|e| anyhow!("{e}"))
            .with_context(|| format!("cannot read the kubeconfig {}", path.display()))?;
    }
    Ok(())
}

/// A client for the API server `source` names, with the watch's deadline
/// as its read timeout; also the URL it talks to.
pub async fn client(source: &Source, options: WatchOptions) -> Result<(kube::Client, String)> {
    let (config, server) = client_config(source, options).await?;
    let client = kube::Client::try_from(config)
        .map_err(|e| anyhow!("{e}"))
        .with_context(|| format!("cannot make a client for {server}"))?;
    Ok((client, server))
}

/// The client configuration for `source`, and the URL it talks to.
async fn client_config(source: &Source, options: WatchOptions) -> Result<(kube::Config, String)> {
    let mut config = match source {
        Source::Kubeconfig { path, context } => {
            let kc = kube::config::Kubeconfig::read_from(path)
                .map_err(|e| anyhow!("{e}"))
                .with_context(|| format!("cannot read the kubeconfig {}", path.display()))?;
            let options = kube::config::KubeConfigOptions {
                context: context.clone(),
                ..Default::default()
            };
            kube::Config::from_custom_kubeconfig(kc, &options)
                .await
                .map_err(|e| anyhow!("{e}"))
                .with_context(|| format!("cannot use the kubeconfig {}", path.display()))?
        }
        Source::InCluster => kube::Config::incluster()
            .map_err(|e| anyhow!("{e}"))
            .context("cannot use the in-cluster configuration (is sift running in a pod with a service account?)")?,
    };
    // The deadline as the connection's read timeout: no byte for that long
    // fails the request (a LIST, a watch's start or its stream), closing
    // its connection (kube-client speaks HTTP/1.1: one request a
    // connection, so the timeout is the request's). Counted from the
    // request, not from when a pooled connection went idle.
    config.read_timeout = Some(options.deadline);
    config.reset_reader_on_write = true;
    config.connect_timeout = Some(
        config
            .connect_timeout
            .map_or(options.deadline, |t| t.min(options.deadline)),
    );
    let server = config.cluster_url.to_string();
    Ok((config, server.trim_end_matches('/').to_string()))
}

/// Connects and starts the extender's watches on the current tokio
/// runtime: the core kinds (nodes, pods, namespaces), the Services and
/// controllers the default spread reads, and the objects the volume
/// filters and DynamicResources read. Only configuration errors fail here; an API server that
/// cannot be reached is retried with backoff, and shows in `/readyz` and
/// `/status`.
pub async fn start(
    source: &Source,
    options: WatchOptions,
    sink: Arc<dyn Sink>,
    metrics: Arc<Metrics>,
) -> Result<Arc<Informer>> {
    let extra = [Kind::WORKLOADS.as_slice(), &Kind::VOLUMES, &Kind::DRA].concat();
    start_watching(source, options, sink, metrics, &extra).await
}

/// As [`start`], watching `extra` kinds too (the scheduler's
/// PodDisruptionBudgets, batch mode's PriorityClasses, PodGroups and
/// Queues).
pub async fn start_watching(
    source: &Source,
    options: WatchOptions,
    sink: Arc<dyn Sink>,
    metrics: Arc<Metrics>,
    extra: &[Kind],
) -> Result<Arc<Informer>> {
    let (config, server) = client_config(source, options).await?;
    let watch_config = WatchConfig::default().timeout(options.watch_timeout_secs());
    let watched: Vec<Kind> = Kind::EVERY
        .into_iter()
        .filter(|k| Kind::CORE.contains(k) || extra.contains(k))
        .collect();
    let informer = Arc::new(Informer {
        server,
        source: describe_source(source),
        kinds: Default::default(),
        watched: watched.clone(),
        metrics,
    });
    let reporter = Arc::downgrade(&informer);
    let on_accepted: OnAccepted = Arc::new(move |resource: &str| {
        let kind = Kind::EVERY.into_iter().find(|k| k.plural() == resource);
        if let (Some(k), Some(informer)) = (kind, reporter.upgrade()) {
            informer.resumed(k);
        }
    });
    let client = kube::client::ClientBuilder::try_from(config)
        .map_err(|e| anyhow!("{e}"))
        .with_context(|| format!("cannot make a client for {}", informer.server))?
        .with_layer(&AcceptedWatches(on_accepted))
        .build();
    for k in &watched {
        informer
            .metrics
            .watch_synced
            .get_or_create(&Informer::label(*k))
            .set(0);
    }
    for k in watched {
        let (config, informer, sink) = (watch_config.clone(), informer.clone(), sink.clone());
        let c = client.clone();
        // Each kind's watch, with its own type.
        macro_rules! spawn {
            ($ty:ty, $config:expr) => {
                tokio::spawn(watch_kind::<$ty>(
                    kube::Api::all(c),
                    $config,
                    options,
                    k,
                    informer,
                    sink,
                ))
            };
        }
        match k {
            Kind::Node => spawn!(k8s::Node, config),
            // Pods that finished hold nothing: the API server leaves them
            // out (and sends DELETED when a pod finishes), as
            // kube-scheduler's informer.
            Kind::Pod => spawn!(
                k8s::Pod,
                config.fields("status.phase!=Succeeded,status.phase!=Failed")
            ),
            Kind::Namespace => spawn!(k8s::Namespace, config),
            Kind::PodDisruptionBudget => spawn!(PodDisruptionBudget, config),
            Kind::Service => spawn!(k8s::Service, config),
            Kind::ReplicationController => spawn!(k8s::ReplicationController, config),
            Kind::ReplicaSet => spawn!(apps::ReplicaSet, config),
            Kind::StatefulSet => spawn!(apps::StatefulSet, config),
            Kind::PersistentVolumeClaim => spawn!(k8s::PersistentVolumeClaim, config),
            Kind::PersistentVolume => spawn!(k8s::PersistentVolume, config),
            Kind::StorageClass => spawn!(storage::StorageClass, config),
            Kind::CsiNode => spawn!(storage::CSINode, config),
            Kind::CsiDriver => spawn!(storage::CSIDriver, config),
            Kind::CsiStorageCapacity => spawn!(storage::CSIStorageCapacity, config),
            Kind::VolumeAttachment => spawn!(storage::VolumeAttachment, config),
            Kind::ResourceClaim => spawn!(resource::ResourceClaim, config),
            Kind::ResourceSlice => spawn!(resource::ResourceSlice, config),
            Kind::DeviceClass => spawn!(resource::DeviceClass, config),
            Kind::PriorityClass => spawn!(PriorityClass, config),
            Kind::PodGroup => spawn!(PodGroup, config),
            Kind::Queue => spawn!(Queue, config),
        };
    }
    Ok(informer)
}

/// An object the watch applies, as the events that apply it.
trait Watched:
    kube::Resource<DynamicType = ()>
    + Clone
    + serde::de::DeserializeOwned
    + std::fmt::Debug
    + Send
    + 'static
{
    fn key(&self) -> String;
    /// The event that adds or updates it; `Err` when sift cannot read it.
    fn upsert(self, node_objects: bool) -> Result<ClusterEvent>;
    fn delete(key: String) -> ClusterEvent;
}

impl Watched for k8s::Node {
    fn key(&self) -> String {
        self.metadata.name.clone().unwrap_or_default()
    }
    fn upsert(self, node_objects: bool) -> Result<ClusterEvent> {
        ClusterEvent::upsert_node(&self, node_objects)
    }
    fn delete(key: String) -> ClusterEvent {
        ClusterEvent::DeleteNode(key)
    }
}

impl Watched for k8s::Pod {
    fn key(&self) -> String {
        model::pod_key(self)
    }
    fn upsert(self, _: bool) -> Result<ClusterEvent> {
        ClusterEvent::upsert_pod(Box::new(self))
    }
    fn delete(key: String) -> ClusterEvent {
        ClusterEvent::DeletePodKey(key)
    }
}

/// "namespace/name".
fn namespaced_key(m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> String {
    format!(
        "{}/{}",
        m.namespace.as_deref().unwrap_or_default(),
        m.name.as_deref().unwrap_or_default()
    )
}

impl Watched for PodDisruptionBudget {
    fn key(&self) -> String {
        namespaced_key(&self.metadata)
    }
    fn upsert(self, _: bool) -> Result<ClusterEvent> {
        Ok(ClusterEvent::UpsertBudget(Box::new(self)))
    }
    fn delete(key: String) -> ClusterEvent {
        ClusterEvent::DeleteBudget(key)
    }
}

/// A Service or controller: keyed "namespace/name", deleted by its kind.
macro_rules! watched_workload {
    ($ty:ty, $variant:ident, $kind:literal) => {
        impl Watched for $ty {
            fn key(&self) -> String {
                namespaced_key(&self.metadata)
            }
            fn upsert(self, _: bool) -> Result<ClusterEvent> {
                Ok(ClusterEvent::UpsertWorkload(Workload::$variant(Box::new(
                    self,
                ))))
            }
            fn delete(key: String) -> ClusterEvent {
                let (ns, name) = key.split_once('/').unwrap_or(("", &key));
                ClusterEvent::DeleteWorkload($kind, ns.to_string(), name.to_string())
            }
        }
    };
}

watched_workload!(k8s::Service, Service, "Service");
watched_workload!(
    k8s::ReplicationController,
    ReplicationController,
    "ReplicationController"
);
watched_workload!(apps::ReplicaSet, ReplicaSet, "ReplicaSet");
watched_workload!(apps::StatefulSet, StatefulSet, "StatefulSet");

/// An object plugins read whole: keyed as the cluster state keys it,
/// deleted by its kind.
macro_rules! watched_api_object {
    ($ty:ty, $kind:literal, namespaced: $namespaced:literal) => {
        impl Watched for $ty {
            fn key(&self) -> String {
                if $namespaced {
                    namespaced_key(&self.metadata)
                } else {
                    self.metadata.name.clone().unwrap_or_default()
                }
            }
            fn upsert(self, _: bool) -> Result<ClusterEvent> {
                let value = serde_json::to_value(&self)?;
                ApiObject::new($kind, value).map(ClusterEvent::UpsertApiObject)
            }
            fn delete(key: String) -> ClusterEvent {
                ClusterEvent::DeleteApiObject($kind, key)
            }
        }
    };
}

watched_api_object!(k8s::PersistentVolumeClaim, "PersistentVolumeClaim", namespaced: true);
watched_api_object!(k8s::PersistentVolume, "PersistentVolume", namespaced: false);
watched_api_object!(storage::StorageClass, "StorageClass", namespaced: false);
watched_api_object!(storage::CSINode, "CSINode", namespaced: false);
watched_api_object!(storage::CSIDriver, "CSIDriver", namespaced: false);
watched_api_object!(storage::CSIStorageCapacity, "CSIStorageCapacity", namespaced: true);
watched_api_object!(storage::VolumeAttachment, "VolumeAttachment", namespaced: false);
watched_api_object!(resource::ResourceClaim, "ResourceClaim", namespaced: true);
watched_api_object!(resource::ResourceSlice, "ResourceSlice", namespaced: false);
watched_api_object!(resource::DeviceClass, "DeviceClass", namespaced: false);

impl Watched for PriorityClass {
    fn key(&self) -> String {
        self.metadata.name.clone().unwrap_or_default()
    }
    fn upsert(self, _: bool) -> Result<ClusterEvent> {
        Ok(ClusterEvent::Batch(BatchEvent::UpsertPriorityClass(
            Box::new(self),
        )))
    }
    fn delete(key: String) -> ClusterEvent {
        ClusterEvent::Batch(BatchEvent::DeletePriorityClass(key))
    }
}

impl Watched for PodGroup {
    fn key(&self) -> String {
        PodGroup::key(self)
    }
    fn upsert(self, _: bool) -> Result<ClusterEvent> {
        Ok(ClusterEvent::Batch(BatchEvent::UpsertPodGroup(Box::new(
            self,
        ))))
    }
    fn delete(key: String) -> ClusterEvent {
        ClusterEvent::Batch(BatchEvent::DeletePodGroup(key))
    }
}

impl Watched for Queue {
    fn key(&self) -> String {
        self.name().to_string()
    }
    fn upsert(self, _: bool) -> Result<ClusterEvent> {
        Ok(ClusterEvent::Batch(BatchEvent::UpsertQueue(Box::new(self))))
    }
    fn delete(key: String) -> ClusterEvent {
        ClusterEvent::Batch(BatchEvent::DeleteQueue(key))
    }
}

impl Watched for k8s::Namespace {
    fn key(&self) -> String {
        self.metadata.name.clone().unwrap_or_default()
    }
    fn upsert(self, _: bool) -> Result<ClusterEvent> {
        Ok(ClusterEvent::UpsertNamespace(Box::new(self)))
    }
    fn delete(key: String) -> ClusterEvent {
        ClusterEvent::DeleteNamespace(key)
    }
}

/// Runs one kind's watch for as long as sift serves.
async fn watch_kind<K: Watched>(
    api: kube::Api<K>,
    config: WatchConfig,
    options: WatchOptions,
    kind: Kind,
    informer: Arc<Informer>,
    sink: Arc<dyn Sink>,
) {
    // client-go's reflector backoff: 0.8 s doubling to 30 s, jittered,
    // reset after two minutes without a failure. It is reset by watch
    // events only, not by a list: a server that lists fine and then fails
    // (or expires) every watch must not be listed in a loop.
    let mut backoff = watcher::DefaultBackoff::default();
    // A new watcher starts with a list; one is made when the watcher would
    // not relist by itself (below).
    'watcher: loop {
        let mut stream = std::pin::pin!(watcher::watcher(api.clone(), config.clone()));
        loop {
            let item = stream.next().await;
            let Some(item) = item else { break };
            let event = match item {
                Ok(e) => e,
                Err(e) if gone(&e) => {
                    // The protocol asking for a relist: the first at once,
                    // one that follows another within the window after a
                    // wait (a server that expires every watch would
                    // otherwise be listed in a loop).
                    let repeat = informer.gone(kind, &e);
                    if repeat && let Some(wait) = backoff.next() {
                        tokio::time::sleep(wait).await;
                    }
                    // A watch refused with 410 (an HTTP status, as a proxy
                    // may answer) leaves kube-rs's watcher retrying the
                    // same resourceVersion for ever: start a new one.
                    if matches!(e, watcher::Error::WatchStartFailed(_)) {
                        continue 'watcher;
                    }
                    continue;
                }
                Err(e) => {
                    informer.error(kind, &e, options.deadline);
                    if let Some(wait) = backoff.next() {
                        tokio::time::sleep(wait).await;
                    }
                    continue;
                }
            };
            if matches!(event, Event::Apply(_) | Event::Delete(_)) {
                backoff.reset();
            }
            apply(&informer, kind, &*sink, event);
        }
    }
}

/// Applies one watcher event to the sink and the kind's health.
fn apply<K: Watched>(informer: &Informer, kind: Kind, sink: &dyn Sink, event: Event<K>) {
    let label = Informer::label(kind);
    let mut out = Vec::new();
    {
        let mut h = informer.kind(kind);
        // `Init` comes before each list attempt, failed ones too: only
        // objects and a finished list are progress.
        if !matches!(event, Event::Init) {
            h.last_event = Some(SystemTime::now());
        }
        if matches!(
            event,
            Event::Apply(_) | Event::InitApply(_) | Event::Delete(_)
        ) {
            h.events += 1;
            informer.metrics.watch_events.get_or_create(&label).inc();
        }
        match event {
            Event::Init => {
                h.listing = true;
                h.seen.clear();
            }
            Event::InitApply(obj) | Event::Apply(obj) => {
                let key = obj.key();
                if h.listing {
                    h.seen.insert(key.clone());
                }
                match obj.upsert(sink.node_objects()) {
                    Ok(e) => {
                        h.owned.insert(key);
                        out.push(e);
                    }
                    Err(e) => {
                        // The object stays out (or keeps its last
                        // readable version): one bad object must not
                        // stop the watch.
                        tracing::error!(kind = kind.name(), "{key} not applied: {e:#}");
                    }
                }
            }
            Event::Delete(obj) => {
                let key = obj.key();
                h.owned.remove(&key);
                out.push(K::delete(key));
            }
            Event::InitDone => {
                // What this watch added and the list no longer holds
                // was deleted while the watch was down.
                let seen = std::mem::take(&mut h.seen);
                let gone: Vec<String> = h.owned.difference(&seen).cloned().collect();
                for key in gone {
                    h.owned.remove(&key);
                    out.push(K::delete(key));
                }
                h.listing = false;
                if h.synced {
                    h.relists += 1;
                    informer.metrics.watch_relists.get_or_create(&label).inc();
                } else {
                    h.synced = true;
                    tracing::info!(kind = kind.name(), objects = h.owned.len(), "first list in");
                }
                informer.metrics.watch_synced.get_or_create(&label).set(1);
            }
        }
    }
    if !out.is_empty() {
        sink.apply(out);
    }
}

/// Where the watch's configuration came from, for `/status`.
fn describe_source(source: &Source) -> String {
    match source {
        Source::Kubeconfig { path, context } => match context {
            Some(c) => format!("kubeconfig {} (context {c})", path.display()),
            None => format!("kubeconfig {}", path.display()),
        },
        Source::InCluster => "in-cluster service account".into(),
    }
}
