//! A fake Kubernetes API server for tests, speaking the real list/watch
//! protocol and the writes a scheduler makes over HTTP/1.1 (std only: a
//! `TcpListener` and a thread per connection, keep-alive as kube-rs pools
//! them), and scripted by the test.
//!
//! - Kinds ([`Resource`]): core `v1` nodes, pods, namespaces and Events;
//!   `policy/v1` PodDisruptionBudgets; `scheduling.k8s.io/v1`
//!   PriorityClasses; Volcano's `scheduling.volcano.sh/v1beta1` PodGroups
//!   and Queues; `coordination.k8s.io/v1` Leases; `events.k8s.io/v1`
//!   Events. Paths as on a real server: `/api/v1/...` for core,
//!   `/apis/{group}/{version}/...` otherwise, `namespaces/{ns}/` before the
//!   plural of a namespaced kind (omitted to list or watch across
//!   namespaces).
//! - Objects carry a global, monotonically increasing
//!   `metadata.resourceVersion`; [`FakeApiServer::add`],
//!   [`FakeApiServer::modify`], [`FakeApiServer::update`] and
//!   [`FakeApiServer::delete`], and every write a client makes, bump it,
//!   keep the change in a history, and push it to every open watch of that
//!   resource.
//! - Lists (`GET` of a collection) answer with `Content-Length`, honour
//!   `fieldSelector` (`field=value`, `field==value`, `field!=value`, comma
//!   separated: what `status.phase!=Succeeded,status.phase!=Failed` needs)
//!   and `limit`/`continue` paging: a continued list is served from the
//!   snapshot its first page was read at, and answers `410 Expired` once
//!   that resourceVersion is compacted. As on a real API server, list items
//!   carry no `kind`/`apiVersion`.
//! - Watches (`?watch=true&resourceVersion=N`) answer 200 with a chunked
//!   body of one JSON event per line. The changes after `N` are replayed
//!   from the history first; a watch from a resourceVersion older than the
//!   history ([`FakeApiServer::compact`]) gets the `ERROR` event with a
//!   `410 Expired` Status and ends, as a real API server answers it. With a
//!   field selector, an update that makes an object stop matching is sent
//!   as `DELETED` and one that makes it start matching as `ADDED`. A watch
//!   from `0` or no resourceVersion starts with `ADDED` for every object.
//!   Watches end normally (the terminating chunk) at `timeoutSeconds`.
//! - Bookmarks (`allowWatchBookmarks=true`) are sent on
//!   [`FakeApiServer::bookmark_all`] and every
//!   [`FakeApiServer::set_bookmark_interval`].
//! - Writes, with the answers a real API server gives (the Status reasons
//!   and messages a client matches on: `NotFound`, `AlreadyExists`,
//!   `Conflict`, `Invalid`):
//!   - `GET` of one object; `POST` to a collection creates (201; a name
//!     generated from `generateName`; 409 if present);
//!   - `PUT` replaces, under the resourceVersion and uid the body carries
//!     (409 when stale; Leases and the Volcano CRDs, which take no
//!     unconditional update, 422 without one);
//!   - `PATCH` as JSON merge patch, or strategic merge patch where it
//!     differs for a scheduler: `status.conditions` merged by `type`
//!     (`$setElementOrder` and other directives ignored);
//!   - the `status` subresource (`PUT`, `PATCH`) of the kinds that have one
//!     changes only the status, and writes to the object leave the status
//!     alone, so a client writing to the wrong one sees it fail to stick;
//!   - `DELETE`, with the DeleteOptions' preconditions; pods may go
//!     gracefully ([`FakeApiServer::set_graceful_deletes`]): first a
//!     `deletionTimestamp`, the pod removed later without further
//!     requests, as the kubelet would;
//!   - `POST pods/{name}/binding`, checked as `BindingREST.Create` checks
//!     it (pod missing, being deleted, already bound, scheduling gates, a
//!     stale uid), which sets `spec.nodeName`, the annotations and
//!     `PodScheduled=True`, and answers 201 with a Success Status.
//!
//!   Anything else answers 404 or 405 with a Status naming what the fake
//!   serves, so a client asking for more fails loudly.
//! - Faults: [`FakeApiServer::expire_watches`] (410 on every open watch),
//!   [`FakeApiServer::end_watches`] (a normal end, as at `timeoutSeconds`),
//!   [`FakeApiServer::drop_connections`] (every connection closed
//!   mid-stream, without the terminating chunk),
//!   [`FakeApiServer::set_down`] (connections are closed as soon as they
//!   are accepted, open ones are dropped, writes waiting unanswered and
//!   not applied), [`FakeApiServer::set_failing`] (requests of a kind,
//!   reads and writes, answered with an error Status),
//!   [`FakeApiServer::set_watches_gone`] (every watch answered with 410,
//!   as an ERROR event or as the HTTP status), black holes that never
//!   answer and never close: [`FakeApiServer::set_hang_lists`] (lists) and
//!   [`FakeApiServer::set_silent_watches`] (watches, open ones too); and
//!   for writes [`FakeApiServer::fail_binds`] (bindings answered with an
//!   error), [`FakeApiServer::set_lease_conflicts`] (a rival renewed the
//!   Lease first) and [`FakeApiServer::set_write_latency`] (slow writes,
//!   while reads go on).
//! - Every request is logged ([`FakeApiServer::requests`]: method, path,
//!   body, status), and every event written to a watch
//!   ([`FakeApiServer::sent`]); what a scheduler wrote is also kept by
//!   kind: [`FakeApiServer::bindings`], [`FakeApiServer::status_patches`],
//!   [`FakeApiServer::deletes`], [`FakeApiServer::events`] and
//!   [`FakeApiServer::lease`].

use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The resources the fake serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Resource {
    Nodes,
    Pods,
    Namespaces,
    /// `policy/v1`, namespaced.
    PodDisruptionBudgets,
    /// `scheduling.k8s.io/v1`, cluster-scoped.
    PriorityClasses,
    /// Volcano's `scheduling.volcano.sh/v1beta1`, namespaced (a CRD
    /// without a status subresource, as Volcano installs it).
    PodGroups,
    /// Volcano's `scheduling.volcano.sh/v1beta1`, cluster-scoped (a CRD
    /// with a status subresource).
    Queues,
    /// `coordination.k8s.io/v1`, namespaced.
    Leases,
    /// `events.k8s.io/v1` Events, namespaced.
    Events,
    /// Core `v1` Events (the older API), namespaced.
    CoreEvents,
    /// What the default spread reads: core `v1` and `apps/v1`, namespaced.
    Services,
    ReplicationControllers,
    ReplicaSets,
    StatefulSets,
    /// What the volume filters read: core `v1` claims (namespaced) and
    /// volumes, `storage.k8s.io/v1` classes, CSINodes, CSIDrivers and
    /// VolumeAttachments (cluster-scoped) and CSIStorageCapacities
    /// (namespaced).
    PersistentVolumeClaims,
    PersistentVolumes,
    StorageClasses,
    CsiNodes,
    CsiDrivers,
    CsiStorageCapacities,
    VolumeAttachments,
    /// What DynamicResources reads: `resource.k8s.io/v1` claims
    /// (namespaced, with a `/status` subresource), slices and device
    /// classes (cluster-scoped).
    ResourceClaims,
    ResourceSlices,
    DeviceClasses,
}

impl Resource {
    /// The kinds `sift serve --kubeconfig` lists and watches (the live
    /// scheduler watches them too): [`FakeApiServer::wait_watching`] waits
    /// for a watch of each.
    pub const ALL: [Resource; 17] = [
        Resource::Nodes,
        Resource::Pods,
        Resource::Namespaces,
        Resource::Services,
        Resource::ReplicationControllers,
        Resource::ReplicaSets,
        Resource::StatefulSets,
        Resource::PersistentVolumeClaims,
        Resource::PersistentVolumes,
        Resource::StorageClasses,
        Resource::CsiNodes,
        Resource::CsiDrivers,
        Resource::CsiStorageCapacities,
        Resource::VolumeAttachments,
        Resource::ResourceClaims,
        Resource::ResourceSlices,
        Resource::DeviceClasses,
    ];

    /// Every resource the fake serves. Where two share a kind or a plural
    /// (the Events), [`Resource::parse`] finds the first.
    pub const EVERY: [Resource; 24] = [
        Resource::Nodes,
        Resource::Pods,
        Resource::Namespaces,
        Resource::PodDisruptionBudgets,
        Resource::PriorityClasses,
        Resource::PodGroups,
        Resource::Queues,
        Resource::Leases,
        Resource::Events,
        Resource::CoreEvents,
        Resource::Services,
        Resource::ReplicationControllers,
        Resource::ReplicaSets,
        Resource::StatefulSets,
        Resource::PersistentVolumeClaims,
        Resource::PersistentVolumes,
        Resource::StorageClasses,
        Resource::CsiNodes,
        Resource::CsiDrivers,
        Resource::CsiStorageCapacities,
        Resource::VolumeAttachments,
        Resource::ResourceClaims,
        Resource::ResourceSlices,
        Resource::DeviceClasses,
    ];

    /// The URL path segment: "nodes".
    pub fn plural(self) -> &'static str {
        match self {
            Resource::Nodes => "nodes",
            Resource::Pods => "pods",
            Resource::Namespaces => "namespaces",
            Resource::PodDisruptionBudgets => "poddisruptionbudgets",
            Resource::PriorityClasses => "priorityclasses",
            Resource::PodGroups => "podgroups",
            Resource::Queues => "queues",
            Resource::Leases => "leases",
            Resource::Events | Resource::CoreEvents => "events",
            Resource::Services => "services",
            Resource::ReplicationControllers => "replicationcontrollers",
            Resource::ReplicaSets => "replicasets",
            Resource::StatefulSets => "statefulsets",
            Resource::PersistentVolumeClaims => "persistentvolumeclaims",
            Resource::PersistentVolumes => "persistentvolumes",
            Resource::StorageClasses => "storageclasses",
            Resource::CsiNodes => "csinodes",
            Resource::CsiDrivers => "csidrivers",
            Resource::CsiStorageCapacities => "csistoragecapacities",
            Resource::VolumeAttachments => "volumeattachments",
            Resource::ResourceClaims => "resourceclaims",
            Resource::ResourceSlices => "resourceslices",
            Resource::DeviceClasses => "deviceclasses",
        }
    }

    /// The object kind: "Node".
    pub fn kind(self) -> &'static str {
        match self {
            Resource::Nodes => "Node",
            Resource::Pods => "Pod",
            Resource::Namespaces => "Namespace",
            Resource::PodDisruptionBudgets => "PodDisruptionBudget",
            Resource::PriorityClasses => "PriorityClass",
            Resource::PodGroups => "PodGroup",
            Resource::Queues => "Queue",
            Resource::Leases => "Lease",
            Resource::Events | Resource::CoreEvents => "Event",
            Resource::Services => "Service",
            Resource::ReplicationControllers => "ReplicationController",
            Resource::ReplicaSets => "ReplicaSet",
            Resource::StatefulSets => "StatefulSet",
            Resource::PersistentVolumeClaims => "PersistentVolumeClaim",
            Resource::PersistentVolumes => "PersistentVolume",
            Resource::StorageClasses => "StorageClass",
            Resource::CsiNodes => "CSINode",
            Resource::CsiDrivers => "CSIDriver",
            Resource::CsiStorageCapacities => "CSIStorageCapacity",
            Resource::VolumeAttachments => "VolumeAttachment",
            Resource::ResourceClaims => "ResourceClaim",
            Resource::ResourceSlices => "ResourceSlice",
            Resource::DeviceClasses => "DeviceClass",
        }
    }

    /// The API group: "" for core.
    pub fn group(self) -> &'static str {
        match self {
            Resource::Nodes
            | Resource::Pods
            | Resource::Namespaces
            | Resource::CoreEvents
            | Resource::Services
            | Resource::ReplicationControllers
            | Resource::PersistentVolumeClaims
            | Resource::PersistentVolumes => "",
            Resource::StorageClasses
            | Resource::CsiNodes
            | Resource::CsiDrivers
            | Resource::CsiStorageCapacities
            | Resource::VolumeAttachments => "storage.k8s.io",
            Resource::ResourceClaims | Resource::ResourceSlices | Resource::DeviceClasses => {
                "resource.k8s.io"
            }
            Resource::ReplicaSets | Resource::StatefulSets => "apps",
            Resource::PodDisruptionBudgets => "policy",
            Resource::PriorityClasses => "scheduling.k8s.io",
            Resource::PodGroups | Resource::Queues => "scheduling.volcano.sh",
            Resource::Leases => "coordination.k8s.io",
            Resource::Events => "events.k8s.io",
        }
    }

    /// The API version within the group: "v1".
    pub fn version(self) -> &'static str {
        match self {
            Resource::PodGroups | Resource::Queues => "v1beta1",
            _ => "v1",
        }
    }

    /// The objects' `apiVersion`: "v1", "policy/v1".
    pub fn api_version(self) -> String {
        match self.group() {
            "" => self.version().to_string(),
            g => format!("{g}/{}", self.version()),
        }
    }

    /// Where its paths start: "/api/v1/" for core, "/apis/{group}/{version}/"
    /// otherwise.
    pub fn prefix(self) -> String {
        match self.group() {
            "" => format!("/api/{}/", self.version()),
            g => format!("/apis/{g}/{}/", self.version()),
        }
    }

    /// The cluster-wide collection: "/apis/policy/v1/poddisruptionbudgets".
    pub fn path(self) -> String {
        format!("{}{}", self.prefix(), self.plural())
    }

    pub fn namespaced(self) -> bool {
        !matches!(
            self,
            Resource::Nodes
                | Resource::Namespaces
                | Resource::PriorityClasses
                | Resource::Queues
                | Resource::PersistentVolumes
                | Resource::StorageClasses
                | Resource::CsiNodes
                | Resource::CsiDrivers
                | Resource::VolumeAttachments
                | Resource::ResourceSlices
                | Resource::DeviceClasses
        )
    }

    /// Whether `status` is written through the `/status` subresource only
    /// (and writes to the object itself leave it alone), as on a real API
    /// server.
    pub fn has_status(self) -> bool {
        matches!(
            self,
            Resource::Nodes
                | Resource::Pods
                | Resource::Namespaces
                | Resource::PodDisruptionBudgets
                | Resource::Queues
                | Resource::ResourceClaims
        )
    }

    /// Whether a PUT must carry the stored `metadata.resourceVersion`
    /// (Leases and custom resources do not allow unconditional updates).
    fn strict_updates(self) -> bool {
        matches!(
            self,
            Resource::Leases | Resource::PodGroups | Resource::Queues
        )
    }

    /// "pods", "leases.coordination.k8s.io": how a Status names it.
    fn qualified(self) -> String {
        match self.group() {
            "" => self.plural().to_string(),
            g => format!("{}.{g}", self.plural()),
        }
    }

    /// "Node", "node", "nodes", "leases.coordination.k8s.io",
    /// "v1/Event", "events.k8s.io/v1/Event" (any case).
    pub fn parse(s: &str) -> Option<Resource> {
        let s = s.to_ascii_lowercase();
        Resource::EVERY.into_iter().find(|r| {
            let kind = r.kind().to_ascii_lowercase();
            s == r.plural()
                || s == kind
                || s == r.qualified()
                || s == format!("{}/{kind}", r.api_version())
        })
    }

    /// The resource of `kind`, the one of `api_version` if several share
    /// the kind.
    fn for_kind(kind: &str, api_version: Option<&str>) -> Option<Resource> {
        let of_kind = || {
            Resource::EVERY
                .into_iter()
                .filter(|r| r.kind().eq_ignore_ascii_case(kind) || r.plural() == kind)
        };
        of_kind()
            .find(|r| api_version.is_some_and(|v| v == r.api_version()))
            .or_else(|| of_kind().next())
            .or_else(|| Resource::parse(kind))
    }

    fn of(s: &str) -> Resource {
        Resource::parse(s).unwrap_or_else(|| panic!("the fake API server has no kind {s:?}"))
    }

    /// The resource of an object, by its `kind` (and `apiVersion`).
    fn of_object(obj: &Value) -> Resource {
        let kind = obj["kind"].as_str().expect("object has a kind");
        Resource::for_kind(kind, obj["apiVersion"].as_str())
            .unwrap_or_else(|| panic!("the fake API server has no kind {kind:?}"))
    }
}

/// How [`FakeApiServer::set_watches_gone`] answers every watch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gone {
    /// 200, then the ERROR event with a `410 Expired` Status, then the end
    /// of the response: what an API server answers a watch from a
    /// compacted resourceVersion.
    Event,
    /// The HTTP status 410 with a Status body, as a proxy may answer.
    Status,
}

/// One request the fake answered (or refused).
#[derive(Clone, Debug)]
pub struct RequestRecord {
    pub method: String,
    pub path: String,
    /// The raw query string (still URL-encoded).
    pub raw_query: String,
    /// Decoded query parameters, in order.
    pub query: Vec<(String, String)>,
    pub resource: Option<Resource>,
    /// The namespace in the path, if any.
    pub namespace: Option<String>,
    /// The object's name in the path (None for a collection).
    pub name: Option<String>,
    /// "status", "binding".
    pub subresource: Option<String>,
    pub watch: bool,
    /// The `Content-Type` header, if sent.
    pub content_type: Option<String>,
    /// The body, when it was JSON.
    pub body: Option<Value>,
    /// 0 for a request never answered (a black hole).
    pub status: u16,
    pub at: Instant,
}

impl RequestRecord {
    /// A decoded query parameter.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// A GET of the collection of `r` (cluster-wide or in a namespace).
    fn is_collection_get(&self, r: Resource) -> bool {
        self.resource == Some(r) && self.method == "GET" && self.name.is_none()
    }

    pub fn is_list(&self, r: Resource) -> bool {
        self.is_collection_get(r) && !self.watch
    }

    pub fn is_watch(&self, r: Resource) -> bool {
        self.is_collection_get(r) && self.watch
    }

    /// A POST, PUT, PATCH or DELETE.
    pub fn is_write(&self) -> bool {
        is_write(&self.method)
    }
}

impl fmt::Display for RequestRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.method, self.path)?;
        if !self.raw_query.is_empty() {
            write!(f, "?{}", self.raw_query)?;
        }
        write!(f, " -> {}", self.status)
    }
}

/// One event written to a watch stream.
#[derive(Clone, Debug)]
pub struct SentEvent {
    pub resource: Resource,
    /// ADDED, MODIFIED, DELETED, BOOKMARK, ERROR.
    pub kind: String,
    /// "namespace/name" for namespaced kinds, "name" otherwise; empty for
    /// BOOKMARK and ERROR.
    pub key: String,
    pub resource_version: String,
    /// The watch (its id counts watches from 1).
    pub watch: u64,
}

/// A change to one object, as the history keeps it.
#[derive(Clone, Debug)]
struct Change {
    rv: u64,
    resource: Resource,
    old: Option<Value>,
    new: Option<Value>,
}

/// A parsed field selector: terms that must all hold.
#[derive(Clone, Debug, Default)]
struct Selector(Vec<(String, bool, String)>);

impl Selector {
    fn parse(s: &str) -> Result<Selector, String> {
        let mut terms = Vec::new();
        for term in s.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let (field, equal, value) = if let Some((f, v)) = term.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = term.split_once("==") {
                (f, true, v)
            } else if let Some((f, v)) = term.split_once('=') {
                (f, true, v)
            } else {
                return Err(format!("invalid field selector term {term:?}"));
            };
            terms.push((field.trim().to_string(), equal, value.trim().to_string()));
        }
        Ok(Selector(terms))
    }

    fn matches(&self, obj: &Value) -> bool {
        self.0.iter().all(|(field, equal, value)| {
            let mut v = obj;
            for part in field.split('.') {
                v = &v[part];
            }
            let actual = match v {
                Value::Null => String::new(),
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (actual == *value) == *equal
        })
    }
}

/// What a watch thread is told.
enum Msg {
    Event {
        kind: &'static str,
        key: String,
        rv: u64,
        line: String,
    },
    Bookmark(u64),
    /// Send this ERROR line, then end the response normally.
    Expire(String),
    /// End the response normally (as at timeoutSeconds).
    End,
    /// Close the connection without ending the response.
    Drop,
    /// Write nothing more, and keep the connection open.
    Silence,
}

struct WatchReg {
    id: u64,
    resource: Resource,
    selector: Selector,
    bookmarks: bool,
    from: u64,
    tx: Sender<Msg>,
}

/// A list being paged: the items still to send, read at `rv`.
struct Continue {
    rv: u64,
    resource: Resource,
    rest: Vec<Value>,
}

#[derive(Default)]
struct State {
    rv: u64,
    objects: BTreeMap<Resource, BTreeMap<String, Value>>,
    history: Vec<Change>,
    /// Watches from a resourceVersion below this get 410.
    horizon: u64,
    watches: Vec<WatchReg>,
    conns: HashMap<u64, TcpStream>,
    next_id: u64,
    continues: HashMap<String, Continue>,
    requests: Vec<RequestRecord>,
    sent: Vec<SentEvent>,
    /// Per resource (None: every request) an HTTP status to fail with.
    failing: Vec<(Option<Resource>, u16)>,
    bookmark_interval: Option<Duration>,
    watch_timeout: Option<Duration>,
    page_size: Option<usize>,
    uids: u64,
    watches_gone: Option<Gone>,
    hang_lists: bool,
    silent_watches: bool,
    /// Events (both groups) in the order they were created.
    event_order: Vec<(Resource, String)>,
    /// Counts generated names.
    generated: u64,
    write_latency: Duration,
    /// Writes as they arrive (method, path), before any latency.
    writes_started: Vec<(String, String)>,
    graceful_deletes: Option<Duration>,
    /// Binding POSTs still to fail, and with what.
    fail_binds: (usize, u16),
    /// Lease PUTs still to answer 409.
    lease_conflicts: usize,
    bindings: Vec<(String, String, u16)>,
    status_patches: Vec<(String, Value)>,
    deletes: Vec<String>,
}

impl State {
    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Stores `obj` (new, or replacing `old`) at the next resourceVersion,
    /// recorded and pushed to the watches; returns that resourceVersion.
    fn store(
        &mut self,
        resource: Resource,
        key: String,
        mut obj: Value,
        old: Option<Value>,
    ) -> u64 {
        self.rv += 1;
        let rv = self.rv;
        set_rv(&mut obj, rv);
        if old.is_none() && matches!(resource, Resource::Events | Resource::CoreEvents) {
            self.event_order.push((resource, key.clone()));
        }
        self.objects
            .entry(resource)
            .or_default()
            .insert(key, obj.clone());
        self.record(Change {
            rv,
            resource,
            old,
            new: Some(obj),
        });
        rv
    }

    /// Removes an object at the next resourceVersion, recorded and pushed
    /// to the watches; returns that resourceVersion and the object.
    fn remove(&mut self, resource: Resource, key: &str) -> Option<(u64, Value)> {
        let old = self.objects.get_mut(&resource)?.remove(key)?;
        self.rv += 1;
        let rv = self.rv;
        self.record(Change {
            rv,
            resource,
            old: Some(old.clone()),
            new: None,
        });
        Some((rv, old))
    }

    fn object(&self, resource: Resource, key: &str) -> Option<&Value> {
        self.objects.get(&resource).and_then(|m| m.get(key))
    }

    /// Fills in what the API server sets on creation: `kind`,
    /// `apiVersion`, the namespace ("default") of a namespaced object, and
    /// when missing `uid` and `creationTimestamp`.
    fn fill(&mut self, resource: Resource, obj: &mut Value, created: &str) {
        obj["kind"] = json!(resource.kind());
        obj["apiVersion"] = json!(resource.api_version());
        if resource.namespaced() && obj["metadata"]["namespace"].as_str().is_none() {
            obj["metadata"]["namespace"] = json!("default");
        }
        if obj["metadata"]["uid"].as_str().is_none() {
            self.uids += 1;
            obj["metadata"]["uid"] = json!(format!("00000000-0000-0000-0000-{:012}", self.uids));
        }
        if obj["metadata"]["creationTimestamp"].as_str().is_none() {
            obj["metadata"]["creationTimestamp"] = json!(created);
        }
    }

    /// Records a change and pushes it to the open watches it concerns.
    fn record(&mut self, change: Change) {
        for w in self
            .watches
            .iter()
            .filter(|w| w.resource == change.resource)
        {
            if let Some(msg) = event_for(&change, &w.selector) {
                let _ = w.tx.send(msg);
            }
        }
        self.history.push(change);
    }

    fn failing(&self, r: Option<Resource>) -> Option<u16> {
        self.failing
            .iter()
            .rev()
            .find(|(res, _)| res.is_none() || (r.is_some() && *res == r))
            .map(|(_, code)| *code)
    }
}

struct Shared {
    state: Mutex<State>,
    down: AtomicBool,
    stopped: AtomicBool,
    /// Counts [`FakeApiServer::drop_connections`]: a write that waited
    /// across one had its connection closed, and is not applied.
    drops: AtomicU64,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The fake API server; stops (closing every connection) on drop.
pub struct FakeApiServer {
    shared: Arc<Shared>,
    addr: SocketAddr,
    accept: Option<JoinHandle<()>>,
}

fn key_of(resource: Resource, obj: &Value) -> String {
    let name = obj["metadata"]["name"].as_str().unwrap_or_default();
    if resource.namespaced() {
        let ns = obj["metadata"]["namespace"].as_str().unwrap_or_default();
        format!("{ns}/{name}")
    } else {
        name.to_string()
    }
}

fn key_in(resource: Resource, namespace: &str, name: &str) -> String {
    if resource.namespaced() {
        format!("{namespace}/{name}")
    } else {
        name.to_string()
    }
}

fn set_rv(obj: &mut Value, rv: u64) {
    obj["metadata"]["resourceVersion"] = json!(rv.to_string());
}

fn event_line(kind: &str, object: &Value) -> String {
    let mut line = json!({"type": kind, "object": object}).to_string();
    line.push('\n');
    line
}

/// The event a watch with `selector` gets for `change`, if any.
fn event_for(change: &Change, selector: &Selector) -> Option<Msg> {
    let old = change.old.as_ref().filter(|o| selector.matches(o));
    let new = change.new.as_ref().filter(|o| selector.matches(o));
    let (kind, object) = match (old, new) {
        (None, Some(new)) => ("ADDED", new.clone()),
        (Some(_), Some(new)) => ("MODIFIED", new.clone()),
        (Some(old), None) => {
            // As the API server: the last state the watcher could see,
            // at the resourceVersion of the change.
            let mut o = old.clone();
            set_rv(&mut o, change.rv);
            ("DELETED", o)
        }
        (None, None) => return None,
    };
    Some(Msg::Event {
        kind,
        key: key_of(change.resource, &object),
        rv: change.rv,
        line: event_line(kind, &object),
    })
}

fn status_json(code: u16, reason: &str, message: &str) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
           "message": message, "reason": reason, "code": code})
}

/// An HTTP status and its JSON body.
type Answer = (u16, Value);

/// A failure Status with the reason its code has.
fn failure(code: u16, message: &str) -> Answer {
    (code, status_json(code, status_reason(code), message))
}

/// A failure Status about one object, with `details` as the API server
/// sends them.
fn object_failure(code: u16, reason: &str, message: &str, r: Resource, name: &str) -> Answer {
    let mut s = status_json(code, reason, message);
    s["details"] = json!({"name": name, "group": r.group(), "kind": r.plural()});
    (code, s)
}

fn not_found(r: Resource, name: &str) -> Answer {
    let message = format!("{} {name:?} not found", r.qualified());
    object_failure(404, "NotFound", &message, r, name)
}

fn already_exists(r: Resource, name: &str) -> Answer {
    let message = format!("{} {name:?} already exists", r.qualified());
    object_failure(409, "AlreadyExists", &message, r, name)
}

/// 409 Conflict, worded as the API server words it (`what` is the
/// qualified resource, "pods/binding" for a binding).
fn conflict(r: Resource, what: &str, name: &str, why: &str) -> Answer {
    let message = format!("Operation cannot be fulfilled on {what} {name:?}: {why}");
    object_failure(409, "Conflict", &message, r, name)
}

/// 409 Conflict for a stale resourceVersion.
fn modified(r: Resource, name: &str) -> Answer {
    conflict(
        r,
        &r.qualified(),
        name,
        "the object has been modified; please apply your changes to the latest version and \
         try again",
    )
}

fn invalid(r: Resource, name: &str, why: &str) -> Answer {
    let message = format!("{} {name:?} is invalid: {why}", r.kind());
    object_failure(422, "Invalid", &message, r, name)
}

fn success(code: u16) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
           "code": code})
}

fn reason_phrase(code: u16) -> &'static str {
    match code {
        200 => "OK",
        201 => "Created",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        410 => "Gone",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Error",
    }
}

fn status_reason(code: u16) -> &'static str {
    match code {
        400 => "BadRequest",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "NotFound",
        405 => "MethodNotAllowed",
        409 => "Conflict",
        410 => "Expired",
        415 => "UnsupportedMediaType",
        422 => "Invalid",
        429 => "TooManyRequests",
        503 => "ServiceUnavailable",
        504 => "Timeout",
        _ => "InternalError",
    }
}

fn is_write(method: &str) -> bool {
    matches!(method, "POST" | "PUT" | "PATCH" | "DELETE")
}

/// Now, as RFC 3339 in UTC to the second (what `metav1.Time` marshals).
fn rfc3339(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    // Days since 1970-01-01 to a civil date (proleptic Gregorian), by
    // 400-year eras counted from 0000-03-01.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Decodes `%XX` and `+` in a query component.
pub fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn parse_query(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (percent_decode(k), percent_decode(v)),
            None => (percent_decode(p), String::new()),
        })
        .collect()
}

/// A request as read from the connection.
struct Request {
    method: String,
    target: String,
    close: bool,
    /// The media type of `Content-Type`, without parameters.
    content_type: Option<String>,
    body: Vec<u8>,
}

/// Reads one request (headers, and a body if one is announced); `None`
/// when the client closed the connection.
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut line = String::new();
    // Blank lines between requests are allowed (RFC 9112 2.2).
    loop {
        line.clear();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if !line.trim().is_empty() {
            break;
        }
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let target = parts.next()?.to_string();
    let version = parts.next().unwrap_or("HTTP/1.1").to_string();
    let mut close = version == "HTTP/1.0";
    let mut length = 0usize;
    let mut chunked = false;
    let mut content_type = None;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((name, value)) = h.split_once(':') {
            let (name, value) = (name.trim().to_ascii_lowercase(), value.trim());
            if name == "content-length" {
                length = value.parse().ok()?;
            } else if name == "connection" {
                close = value.eq_ignore_ascii_case("close");
            } else if name == "transfer-encoding" {
                chunked = value.to_ascii_lowercase().contains("chunked");
            } else if name == "content-type" {
                let media = value.split(';').next().unwrap_or_default();
                content_type = Some(media.trim().to_ascii_lowercase());
            }
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).ok()?;
            let size = size.split(';').next().unwrap_or_default().trim();
            let n = usize::from_str_radix(size, 16).ok()?;
            if n == 0 {
                // Trailers, up to the blank line.
                loop {
                    let mut t = String::new();
                    if reader.read_line(&mut t).ok()? == 0 || t.trim().is_empty() {
                        break;
                    }
                }
                break;
            }
            let start = body.len();
            body.resize(start + n + 2, 0);
            reader.read_exact(&mut body[start..]).ok()?;
            body.truncate(start + n);
        }
    } else if length > 0 {
        body = vec![0; length];
        reader.read_exact(&mut body).ok()?;
    }
    Some(Request {
        method,
        target,
        close,
        content_type,
        body,
    })
}

/// A black hole: answers nothing and keeps the connection open until the
/// fake stops.
fn hang(shared: &Shared) -> bool {
    while !shared.stopped.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn write_response(out: &mut TcpStream, code: u16, body: &Value, close: bool) -> bool {
    let body = body.to_string();
    let head = format!(
        "HTTP/1.1 {code} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{}\r\n",
        reason_phrase(code),
        body.len(),
        if close { "Connection: close\r\n" } else { "" }
    );
    out.write_all(head.as_bytes())
        .and_then(|_| out.write_all(body.as_bytes()))
        .and_then(|_| out.flush())
        .is_ok()
        && !close
}

fn write_chunk(out: &mut TcpStream, data: &str) -> std::io::Result<()> {
    out.write_all(format!("{:x}\r\n{data}\r\n", data.len()).as_bytes())?;
    out.flush()
}

fn end_chunks(out: &mut TcpStream) -> std::io::Result<()> {
    out.write_all(b"0\r\n\r\n")?;
    out.flush()
}

impl FakeApiServer {
    /// Listens on a free loopback port, with no objects.
    pub fn start() -> FakeApiServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("fake API server binds");
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            down: AtomicBool::new(false),
            stopped: AtomicBool::new(false),
            drops: AtomicU64::new(0),
        });
        let accept_shared = shared.clone();
        let accept = std::thread::Builder::new()
            .name("fake-apiserver".into())
            .spawn(move || {
                for stream in listener.incoming() {
                    if accept_shared.stopped.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    if accept_shared.down.load(Ordering::SeqCst) {
                        let _ = stream.shutdown(Shutdown::Both);
                        continue;
                    }
                    let _ = stream.set_nodelay(true);
                    let Ok(clone) = stream.try_clone() else {
                        continue;
                    };
                    let id = {
                        let mut st = accept_shared.lock();
                        let id = st.id();
                        st.conns.insert(id, clone);
                        id
                    };
                    let conn_shared = accept_shared.clone();
                    let _ = std::thread::Builder::new()
                        .name(format!("fake-apiserver-{id}"))
                        .spawn(move || serve_connection(conn_shared, stream, id));
                }
            })
            .expect("fake API server thread");
        FakeApiServer {
            shared,
            addr,
            accept: Some(accept),
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Writes a kubeconfig for this server: context, cluster and user
    /// `fake` (no credentials), current-context `fake`.
    pub fn kubeconfig(&self, path: &Path) {
        write_kubeconfig(path, &[("fake", &self.url())], "fake");
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.shared.lock()
    }

    /// Adds an object (its `kind`, and where two resources share one its
    /// `apiVersion`, say which resource); returns its new resourceVersion.
    /// `apiVersion` (the resource's), a namespaced object's namespace
    /// ("default"), `uid` and `creationTimestamp` are filled in when
    /// missing.
    pub fn add(&self, mut obj: Value) -> u64 {
        let resource = Resource::of_object(&obj);
        assert!(
            obj["metadata"]["name"]
                .as_str()
                .is_some_and(|n| !n.is_empty()),
            "object has no metadata.name: {obj}"
        );
        let mut st = self.lock();
        st.fill(resource, &mut obj, "2025-01-01T00:00:00Z");
        let key = key_of(resource, &obj);
        assert!(
            st.object(resource, &key).is_none(),
            "{} {key} already exists on the fake API server",
            resource.kind()
        );
        st.store(resource, key, obj, None)
    }

    /// Replaces an existing object (found by kind, namespace and name);
    /// returns its new resourceVersion.
    pub fn modify(&self, mut obj: Value) -> u64 {
        let resource = Resource::of_object(&obj);
        obj["apiVersion"] = json!(resource.api_version());
        if resource.namespaced() && obj["metadata"]["namespace"].as_str().is_none() {
            obj["metadata"]["namespace"] = json!("default");
        }
        let key = key_of(resource, &obj);
        let mut st = self.lock();
        let old = st
            .object(resource, &key)
            .cloned()
            .unwrap_or_else(|| panic!("no {} {key} to modify", resource.kind()));
        for field in ["uid", "creationTimestamp"] {
            if obj["metadata"][field].is_null() {
                obj["metadata"][field] = old["metadata"][field].clone();
            }
        }
        st.store(resource, key, obj, Some(old))
    }

    /// Changes an existing object with `f`; returns its new resourceVersion.
    pub fn update(
        &self,
        kind: &str,
        namespace: &str,
        name: &str,
        f: impl FnOnce(&mut Value),
    ) -> u64 {
        let mut obj = self
            .get(kind, namespace, name)
            .unwrap_or_else(|| panic!("no {kind} {namespace}/{name} to update"));
        f(&mut obj);
        self.modify(obj)
    }

    /// Deletes an object (`namespace` is ignored for cluster-scoped kinds);
    /// returns the resourceVersion of the deletion.
    pub fn delete(&self, kind: &str, namespace: &str, name: &str) -> u64 {
        let resource = Resource::of(kind);
        let key = key_in(resource, namespace, name);
        self.lock()
            .remove(resource, &key)
            .unwrap_or_else(|| panic!("no {} {key} to delete", resource.kind()))
            .0
    }

    /// An object as the server holds it.
    pub fn get(&self, kind: &str, namespace: &str, name: &str) -> Option<Value> {
        let resource = Resource::of(kind);
        self.lock()
            .object(resource, &key_in(resource, namespace, name))
            .cloned()
    }

    /// The keys of every object of a kind ("namespace/name" for
    /// namespaced kinds).
    pub fn keys(&self, kind: &str) -> Vec<String> {
        let resource = Resource::of(kind);
        self.lock()
            .objects
            .get(&resource)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The latest resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.lock().rv
    }

    /// Forgets the history: a watch, or a list continued, from a
    /// resourceVersion before now gets 410.
    pub fn compact(&self) {
        let mut st = self.lock();
        st.horizon = st.rv;
        st.history.clear();
    }

    /// Sends the `410 Expired` ERROR event on every open watch and ends
    /// them (as a real API server does when a watcher falls too far
    /// behind): the client must relist. Returns how many there were.
    pub fn expire_watches(&self) -> usize {
        let mut st = self.lock();
        let rv = st.rv;
        let watches = std::mem::take(&mut st.watches);
        for w in &watches {
            let status = status_json(
                410,
                "Expired",
                &format!("too old resource version: {} ({rv})", w.from),
            );
            let _ = w.tx.send(Msg::Expire(event_line("ERROR", &status)));
        }
        watches.len()
    }

    /// Ends every open watch normally (as at timeoutSeconds): the client
    /// resumes from the last resourceVersion it saw.
    pub fn end_watches(&self) -> usize {
        let mut st = self.lock();
        let watches = std::mem::take(&mut st.watches);
        for w in &watches {
            let _ = w.tx.send(Msg::End);
        }
        watches.len()
    }

    /// Closes every connection (watches mid-stream, without the
    /// terminating chunk; idle keep-alive ones too). Returns how many
    /// watches were open.
    pub fn drop_connections(&self) -> usize {
        let mut st = self.lock();
        self.shared.drops.fetch_add(1, Ordering::SeqCst);
        let watches = std::mem::take(&mut st.watches);
        for w in &watches {
            let _ = w.tx.send(Msg::Drop);
        }
        for conn in st.conns.values() {
            let _ = conn.shutdown(Shutdown::Both);
        }
        watches.len()
    }

    /// Sends a BOOKMARK at the latest resourceVersion on every open watch
    /// that allowed bookmarks; returns how many.
    pub fn bookmark_all(&self) -> usize {
        let st = self.lock();
        let mut n = 0;
        for w in st.watches.iter().filter(|w| w.bookmarks) {
            if w.tx.send(Msg::Bookmark(st.rv)).is_ok() {
                n += 1;
            }
        }
        n
    }

    /// Down: every open connection is closed, and new ones are closed as
    /// soon as they are accepted (the client sees the connection closed
    /// before any response). Up again: served as before.
    pub fn set_down(&self, down: bool) {
        self.shared.down.store(down, Ordering::SeqCst);
        if down {
            self.drop_connections();
        }
    }

    /// Answers requests for `resource` (None: every request), reads and
    /// writes (a pod's binding, status and deletion too), with `code` and
    /// a Status body, or (None) normally again.
    pub fn set_failing(&self, resource: Option<&str>, code: Option<u16>) {
        let r = resource.map(Resource::of);
        let mut st = self.lock();
        st.failing.retain(|(res, _)| *res != r);
        if let Some(code) = code {
            st.failing.push((r, code));
        }
    }

    /// Answers every watch (from now on) with 410 Gone, as `how` says,
    /// or (None) normally again. Lists are answered normally.
    pub fn set_watches_gone(&self, how: Option<Gone>) {
        self.lock().watches_gone = how;
    }

    /// On: list requests are read (and logged, with status 0) but never
    /// answered, their connections left open. Off: new lists are answered
    /// again; those already hanging stay unanswered (a black hole does
    /// not come back), until the fake stops.
    pub fn set_hang_lists(&self, on: bool) {
        self.lock().hang_lists = on;
    }

    /// On: open watches, and those started from now on (after the
    /// response head), send nothing more (no event, bookmark or end) and
    /// keep their connections open, as a half-open connection or a
    /// black-holed load balancer; they no longer count as open. Off: new
    /// watches are served again; silenced ones stay silent until the fake
    /// stops. Returns how many open watches were silenced.
    pub fn set_silent_watches(&self, on: bool) -> usize {
        let mut st = self.lock();
        st.silent_watches = on;
        if !on {
            return 0;
        }
        let watches = std::mem::take(&mut st.watches);
        for w in &watches {
            let _ = w.tx.send(Msg::Silence);
        }
        watches.len()
    }

    /// Bookmarks every `interval` on watches that allowed them.
    pub fn set_bookmark_interval(&self, interval: Option<Duration>) {
        self.lock().bookmark_interval = interval;
    }

    /// Watches end (normally) after at most `limit`, whatever
    /// timeoutSeconds asked. Applies to watches started from now on.
    pub fn set_watch_timeout(&self, limit: Option<Duration>) {
        self.lock().watch_timeout = limit;
    }

    /// List pages hold at most `n` items, whatever `limit` asked (a server
    /// may return fewer items than the limit, with a continue token).
    pub fn set_page_size(&self, n: Option<usize>) {
        self.lock().page_size = n.map(|n| n.max(1));
    }

    /// Pod deletions (DELETE requests) from now on: `Some(d)` deletes a
    /// bound, unfinished pod gracefully, as a kubelet would stop it: the
    /// DELETE sets `metadata.deletionTimestamp` (now + `d`) and
    /// `deletionGracePeriodSeconds` (a MODIFIED event), and `d` later the
    /// pod is removed (a DELETED event) without further requests. An
    /// unbound or finished pod, or a DeleteOptions `gracePeriodSeconds: 0`,
    /// is removed at once, as on a real API server. `None` (the default):
    /// every DELETE removes at once.
    pub fn set_graceful_deletes(&self, grace: Option<Duration>) {
        self.lock().graceful_deletes = grace;
    }

    /// The next `n` binding POSTs answer `code` with a Status (its reason
    /// from the code: 409 Conflict, 500 InternalError, ...) and bind
    /// nothing.
    pub fn fail_binds(&self, n: usize, code: u16) {
        self.lock().fail_binds = (n, code);
    }

    /// Every write (POST, PUT, PATCH, DELETE) waits `d` in its connection's
    /// thread before it is handled (other requests are served meanwhile).
    /// A write whose wait ends while the server is down is not answered:
    /// its connection closes.
    /// Every write as it arrived (method, path), answered or not: a write
    /// in flight under [`FakeApiServer::set_write_latency`] shows here
    /// before [`FakeApiServer::requests`] has it.
    pub fn writes_started(&self) -> Vec<(String, String)> {
        self.lock().writes_started.clone()
    }

    pub fn set_write_latency(&self, d: Duration) {
        self.lock().write_latency = d;
    }

    /// The next `n` Lease PUTs answer 409 Conflict ("the object has been
    /// modified"), whatever resourceVersion they carry: another candidate
    /// renewed first.
    pub fn set_lease_conflicts(&self, n: usize) {
        self.lock().lease_conflicts = n;
    }

    /// A Lease (`coordination.k8s.io/v1`) as the server holds it.
    pub fn lease(&self, namespace: &str, name: &str) -> Option<Value> {
        self.lock()
            .object(Resource::Leases, &key_in(Resource::Leases, namespace, name))
            .cloned()
    }

    /// Every Event the server holds, of both APIs (`apiVersion`
    /// `events.k8s.io/v1` or `v1`), in the order they were created, as
    /// they are now (patches applied).
    pub fn events(&self) -> Vec<Value> {
        let st = self.lock();
        st.event_order
            .iter()
            .filter_map(|(r, key)| st.object(*r, key).cloned())
            .collect()
    }

    /// Every binding POST answered, in order: the pod ("namespace/name"),
    /// the target node, and the HTTP status of the answer (201 when it
    /// bound; failures too, [`FakeApiServer::fail_binds`] and
    /// [`FakeApiServer::set_failing`] included).
    pub fn bindings(&self) -> Vec<(String, String, u16)> {
        self.lock().bindings.clone()
    }

    /// Every pod status PATCH applied, in order: the pod
    /// ("namespace/name") and the patch as sent.
    pub fn status_patches(&self) -> Vec<(String, Value)> {
        self.lock().status_patches.clone()
    }

    /// Every pod DELETE that passed its preconditions ("namespace/name"),
    /// in order; a DELETE of a pod already terminating counts again.
    pub fn deletes(&self) -> Vec<String> {
        self.lock().deletes.clone()
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.lock().requests.clone()
    }

    /// List requests for `kind` so far (each page counts).
    pub fn lists(&self, kind: &str) -> usize {
        let r = Resource::of(kind);
        self.lock().requests.iter().filter(|q| q.is_list(r)).count()
    }

    /// List requests for `kind` that started a list (no continue token).
    pub fn list_starts(&self, kind: &str) -> usize {
        let r = Resource::of(kind);
        self.lock()
            .requests
            .iter()
            .filter(|q| q.is_list(r) && q.param("continue").is_none())
            .count()
    }

    /// Watch requests for `kind` so far.
    pub fn watches(&self, kind: &str) -> usize {
        let r = Resource::of(kind);
        self.lock()
            .requests
            .iter()
            .filter(|q| q.is_watch(r))
            .count()
    }

    /// Watches open now (of `kind`, or all).
    pub fn open_watches(&self, kind: Option<&str>) -> usize {
        let r = kind.map(Resource::of);
        self.lock()
            .watches
            .iter()
            .filter(|w| r.is_none_or(|r| w.resource == r))
            .count()
    }

    /// Waits until a watch of every resource of [`Resource::ALL`] is open;
    /// false on timeout.
    pub fn wait_watching(&self, limit: Duration) -> bool {
        self.wait_watching_kinds(&Resource::ALL, limit)
    }

    /// Waits until a watch of each of `kinds` is open; false on timeout.
    pub fn wait_watching_kinds(&self, kinds: &[Resource], limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            let all = {
                let st = self.lock();
                kinds
                    .iter()
                    .all(|r| st.watches.iter().any(|w| w.resource == *r))
            };
            if all {
                return true;
            }
            if Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Every event written to a watch so far.
    pub fn sent(&self) -> Vec<SentEvent> {
        self.lock().sent.clone()
    }

    /// The request log, one request a line (for failure messages).
    pub fn request_log(&self) -> String {
        let st = self.lock();
        let start = st.requests.first().map(|r| r.at);
        st.requests
            .iter()
            .map(|r| {
                let t = start
                    .map(|s| r.at.duration_since(s).as_secs_f64())
                    .unwrap_or(0.0);
                format!("{t:8.3}s {r}\n")
            })
            .collect()
    }
}

impl Drop for FakeApiServer {
    fn drop(&mut self) {
        self.shared.stopped.store(true, Ordering::SeqCst);
        self.drop_connections();
        // Wake the accept loop.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
    }
}

/// Writes a kubeconfig with one context (and a cluster and a user of the
/// same name, no credentials) per `(name, server)`.
pub fn write_kubeconfig(path: &Path, contexts: &[(&str, &str)], current: &str) {
    let mut y = String::from("apiVersion: v1\nkind: Config\nclusters:\n");
    for (name, server) in contexts {
        y.push_str(&format!(
            "- name: {name}\n  cluster:\n    server: {server}\n"
        ));
    }
    y.push_str("users:\n");
    for (name, _) in contexts {
        y.push_str(&format!("- name: {name}\n  user: {{}}\n"));
    }
    y.push_str("contexts:\n");
    for (name, _) in contexts {
        y.push_str(&format!(
            "- name: {name}\n  context:\n    cluster: {name}\n    user: {name}\n"
        ));
    }
    y.push_str(&format!("current-context: {current}\n"));
    std::fs::write(path, y).expect("kubeconfig written");
}

fn serve_connection(shared: Arc<Shared>, stream: TcpStream, conn: u64) {
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut out = stream;
    while let Some(req) = read_request(&mut reader) {
        if shared.down.load(Ordering::SeqCst) || shared.stopped.load(Ordering::SeqCst) {
            break;
        }
        if !handle(&shared, req, &mut out) {
            break;
        }
    }
    let _ = out.shutdown(Shutdown::Both);
    shared.lock().conns.remove(&conn);
}

/// Where a request goes: a resource's collection (cluster-wide or in a
/// namespace), one object, or one of its subresources.
#[derive(Clone, Debug)]
struct Route {
    resource: Resource,
    namespace: Option<String>,
    name: Option<String>,
    sub: Option<String>,
}

impl Route {
    fn key(&self) -> String {
        key_in(
            self.resource,
            self.namespace.as_deref().unwrap_or_default(),
            self.name.as_deref().unwrap_or_default(),
        )
    }
}

/// The route of a path: `{prefix}{plural}[/{name}[/{sub}]]` and, for a
/// namespaced resource, `{prefix}namespaces/{ns}/{plural}[/{name}[/{sub}]]`
/// (`{prefix}` is `/api/v1/` or `/apis/{group}/{version}/`).
fn route(path: &str) -> Option<Route> {
    let (group, version, rest) = if let Some(rest) = path.strip_prefix("/api/") {
        let (version, rest) = rest.split_once('/')?;
        ("", version, rest)
    } else {
        let mut parts = path.strip_prefix("/apis/")?.splitn(3, '/');
        (parts.next()?, parts.next()?, parts.next()?)
    };
    let segs: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
    let find = |plural: &str| {
        Resource::EVERY
            .into_iter()
            .find(|r| r.group() == group && r.version() == version && r.plural() == plural)
    };
    let owned = |s: Option<&&str>| s.map(|s| s.to_string());
    if let ["namespaces", ns, plural, tail @ ..] = segs.as_slice()
        && let Some(resource) = find(plural).filter(|r| r.namespaced())
        && tail.len() <= 2
    {
        return Some(Route {
            resource,
            namespace: Some(ns.to_string()),
            name: owned(tail.first()),
            sub: owned(tail.get(1)),
        });
    }
    let [plural, tail @ ..] = segs.as_slice() else {
        return None;
    };
    let resource = find(plural)?;
    if tail.len() > 2 || (resource.namespaced() && !tail.is_empty()) {
        return None;
    }
    Some(Route {
        resource,
        namespace: None,
        name: owned(tail.first()),
        sub: owned(tail.get(1)),
    })
}

/// What the fake serves, for the Status of a request it does not.
fn served() -> String {
    let paths: Vec<String> = Resource::EVERY
        .iter()
        .map(|r| {
            if r.namespaced() {
                format!(
                    "{}[namespaces/{{ns}}/]{}[/{{name}}]",
                    r.prefix(),
                    r.plural()
                )
            } else {
                format!("{}[/{{name}}]", r.path())
            }
        })
        .collect();
    format!(
        "the fake API server serves GET (list, watch, get), POST (create), PUT, PATCH and \
         DELETE on {}; GET, PUT and PATCH on the status of {}; POST on pods/{{name}}/binding",
        paths.join(", "),
        Resource::EVERY
            .iter()
            .filter(|r| r.has_status())
            .map(|r| r.plural())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// What a request asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    /// A list or a watch of a collection.
    List,
    Get,
    Create,
    Replace,
    ReplaceStatus,
    Patch,
    PatchStatus,
    Delete,
    Bind,
}

impl Op {
    /// The operation of `method` on `route`, or the Status refusing it.
    fn of(method: &str, route: &Route) -> Result<Op, Answer> {
        let r = route.resource;
        let op = match (route.name.is_some(), route.sub.as_deref(), method) {
            (false, _, "GET") => Op::List,
            (false, _, "POST") if r.namespaced() && route.namespace.is_none() => {
                return Err(failure(
                    405,
                    &format!(
                        "create {} in a namespace: POST {}namespaces/{{ns}}/{}",
                        r.plural(),
                        r.prefix(),
                        r.plural()
                    ),
                ));
            }
            (false, _, "POST") => Op::Create,
            (true, None, "GET") => Op::Get,
            (true, None, "PUT") => Op::Replace,
            (true, None, "PATCH") => Op::Patch,
            (true, None, "DELETE") => Op::Delete,
            (true, Some("status"), "GET") if r.has_status() => Op::Get,
            (true, Some("status"), "PUT") if r.has_status() => Op::ReplaceStatus,
            (true, Some("status"), "PATCH") if r.has_status() => Op::PatchStatus,
            (true, Some("binding"), "POST") if r == Resource::Pods => Op::Bind,
            (true, Some(sub), _)
                if !(sub == "status" && r.has_status()
                    || sub == "binding" && r == Resource::Pods) =>
            {
                return Err(failure(
                    404,
                    &format!("{} has no subresource {sub:?}; {}", r.plural(), served()),
                ));
            }
            _ => {
                return Err(failure(
                    405,
                    &format!("{method} is not served on this path; {}", served()),
                ));
            }
        };
        Ok(op)
    }
}

/// Answers one request; false when the connection must close.
fn handle(shared: &Arc<Shared>, req: Request, out: &mut TcpStream) -> bool {
    let (path, raw_query) = match req.target.split_once('?') {
        Some((p, q)) => (p.to_string(), q.to_string()),
        None => (req.target.clone(), String::new()),
    };
    let query = parse_query(&raw_query);
    let param = |name: &str| {
        query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let route = route(&path);
    let watch = matches!(param("watch").as_deref(), Some("true" | "1"));
    let body: Option<Value> = serde_json::from_slice(&req.body).ok();
    let mut record = RequestRecord {
        method: req.method.clone(),
        path: path.clone(),
        raw_query: raw_query.clone(),
        query: query.clone(),
        resource: route.as_ref().map(|r| r.resource),
        namespace: route.as_ref().and_then(|r| r.namespace.clone()),
        name: route.as_ref().and_then(|r| r.name.clone()),
        subresource: route.as_ref().and_then(|r| r.sub.clone()),
        watch,
        content_type: req.content_type.clone(),
        body: body.clone(),
        status: 0,
        at: Instant::now(),
    };
    if is_write(&req.method) {
        // Slow writes: the connection waits, the server does not.
        let latency = {
            let mut st = shared.lock();
            st.writes_started.push((req.method.clone(), path.clone()));
            st.write_latency
        };
        if !latency.is_zero() {
            let drops = shared.drops.load(Ordering::SeqCst);
            std::thread::sleep(latency);
            if shared.down.load(Ordering::SeqCst)
                || shared.stopped.load(Ordering::SeqCst)
                || shared.drops.load(Ordering::SeqCst) != drops
            {
                return false;
            }
        }
    }
    // A binding `operate` answers is recorded by it, under the lock that
    // applies it, so no reader sees the pod bound and the binding unrecorded.
    let unrecorded_bind = std::cell::Cell::new(
        route
            .as_ref()
            .is_some_and(|r| Op::of(&req.method, r) == Ok(Op::Bind)),
    );
    let close = req.close;
    let answer = |mut record: RequestRecord, out: &mut TcpStream, (code, body): Answer| {
        record.status = code;
        let mut st = shared.lock();
        if unrecorded_bind.get() {
            let node = record.body.as_ref().map_or(String::new(), |b| {
                b["target"]["name"].as_str().unwrap_or_default().to_string()
            });
            let key = key_in(
                Resource::Pods,
                record.namespace.as_deref().unwrap_or_default(),
                record.name.as_deref().unwrap_or_default(),
            );
            st.bindings.push((key, node, code));
        }
        st.requests.push(record);
        drop(st);
        write_response(out, code, &body, close)
    };
    let fail = |record: RequestRecord, out: &mut TcpStream, code: u16, message: &str| {
        answer(record, out, failure(code, message))
    };
    let Some(route) = route else {
        return fail(record, out, 404, &format!("{}, not {path}", served()));
    };
    let resource = route.resource;
    let op = match Op::of(&req.method, &route) {
        Ok(op) => op,
        Err(refused) => return answer(record, out, refused),
    };
    let failing = shared.lock().failing(Some(resource));
    if let Some(code) = failing {
        return fail(
            record,
            out,
            code,
            &format!(
                "the fake API server fails {} with {code} (test control)",
                resource.plural()
            ),
        );
    }
    if op != Op::List {
        unrecorded_bind.set(false);
        let answered = operate(shared, op, &route, req.content_type.as_deref(), body);
        return answer(record, out, answered);
    }
    if watch && shared.lock().watches_gone == Some(Gone::Status) {
        return fail(
            record,
            out,
            410,
            "too old resource version (the fake API server answers every watch with 410: \
             test control)",
        );
    }
    if !watch && shared.lock().hang_lists {
        shared.lock().requests.push(record);
        return hang(shared);
    }
    if param("labelSelector").is_some_and(|s| !s.is_empty()) {
        return fail(
            record,
            out,
            400,
            "the fake API server does not do labelSelector",
        );
    }
    let mut selector = match Selector::parse(&param("fieldSelector").unwrap_or_default()) {
        Ok(s) => s,
        Err(e) => return fail(record, out, 400, &e),
    };
    if let Some(ns) = &route.namespace {
        selector
            .0
            .push(("metadata.namespace".into(), true, ns.clone()));
    }
    if !watch {
        let answered = list(
            shared,
            resource,
            &selector,
            param("limit"),
            param("continue"),
        );
        return answer(record, out, answered);
    }
    let from = match param("resourceVersion").as_deref() {
        None | Some("") | Some("0") => None,
        Some(v) => match v.parse::<u64>() {
            Ok(v) => Some(v),
            Err(_) => {
                return fail(record, out, 400, &format!("invalid resourceVersion {v:?}"));
            }
        },
    };
    let timeout = param("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .map(Duration::from_secs)
        .unwrap_or(Duration::from_secs(1800));
    let bookmarks = matches!(param("allowWatchBookmarks").as_deref(), Some("true" | "1"));
    record.status = 200;
    watch_stream(
        shared, resource, selector, from, timeout, bookmarks, record, out,
    )
}

/// Does what `op` asks of the object `route` names (everything but lists
/// and watches), under one hold of the state lock; a binding is recorded
/// under that hold too.
fn operate(
    shared: &Arc<Shared>,
    op: Op,
    route: &Route,
    content_type: Option<&str>,
    body: Option<Value>,
) -> Answer {
    let mut st = shared.lock();
    let node = match (&op, &body) {
        (Op::Bind, Some(b)) => b["target"]["name"].as_str().unwrap_or_default(),
        _ => "",
    }
    .to_string();
    let answered = operate_locked(shared, &mut st, op, route, content_type, body);
    if op == Op::Bind {
        let key = route.key();
        st.bindings.push((key, node, answered.0));
    }
    answered
}

fn operate_locked(
    shared: &Arc<Shared>,
    st: &mut State,
    op: Op,
    route: &Route,
    content_type: Option<&str>,
    body: Option<Value>,
) -> Answer {
    let body = match (op, body) {
        (Op::Get, _) => Value::Null,
        // DeleteOptions are optional.
        (Op::Delete, None) => json!({}),
        (_, Some(b)) if b.is_object() => b,
        _ => return failure(400, "the request body is not a JSON object"),
    };
    if matches!(op, Op::Create | Op::Replace | Op::ReplaceStatus | Op::Bind)
        && content_type.is_some_and(|t| t != "application/json")
    {
        return failure(
            415,
            &format!(
                "the fake API server reads application/json, not {}",
                content_type.unwrap_or_default()
            ),
        );
    }
    match op {
        Op::List => unreachable!("lists are not operations on an object"),
        Op::Get => {
            let name = route.name.as_deref().unwrap_or_default();
            match st.object(route.resource, &route.key()) {
                Some(o) => (200, o.clone()),
                None => not_found(route.resource, name),
            }
        }
        Op::Create => create(st, route, body),
        Op::Replace | Op::ReplaceStatus => replace(st, route, body, op == Op::ReplaceStatus),
        Op::Patch | Op::PatchStatus => patch(st, route, content_type, body, op == Op::PatchStatus),
        Op::Delete => delete(shared, st, route, &body),
        Op::Bind => bind(st, route, &body),
    }
}

/// Metadata a write cannot change.
const IDENTITY: [&str; 6] = [
    "name",
    "namespace",
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
];

/// Gives `new` the identity (kind, apiVersion and the metadata a write
/// cannot change) of `old`.
fn keep_identity(new: &mut Value, old: &Value) {
    new["kind"] = old["kind"].clone();
    new["apiVersion"] = old["apiVersion"].clone();
    if !new["metadata"].is_object() {
        new["metadata"] = json!({});
    }
    let meta = new["metadata"].as_object_mut().unwrap();
    for field in IDENTITY {
        match old["metadata"].get(field) {
            Some(v) => meta.insert(field.to_string(), v.clone()),
            None => meta.remove(field),
        };
    }
}

/// `obj` with its `status` replaced by that of `from` (removed if `from`
/// has none).
fn with_status(mut obj: Value, from: &Value) -> Value {
    match from.get("status") {
        Some(s) => obj["status"] = s.clone(),
        None => {
            if let Some(m) = obj.as_object_mut() {
                m.remove("status");
            }
        }
    }
    obj
}

/// A precondition on the stored resourceVersion: `rv` (what the request
/// carries) must be the stored one; when missing, a resource that does
/// not allow unconditional updates refuses with 422.
fn check_rv(r: Resource, name: &str, rv: Option<&str>, stored: &Value) -> Result<(), Answer> {
    match rv.filter(|v| !v.is_empty()) {
        None if r.strict_updates() => Err(invalid(
            r,
            name,
            "metadata.resourceVersion: Invalid value: 0x0: must be specified for an update",
        )),
        Some(v) if Some(v) != stored["metadata"]["resourceVersion"].as_str() => {
            Err(modified(r, name))
        }
        _ => Ok(()),
    }
}

/// A precondition on the uid: `uid`, when given, must be the object's.
fn check_uid(
    r: Resource,
    what: &str,
    name: &str,
    uid: Option<&str>,
    stored: &Value,
) -> Result<(), Answer> {
    let have = stored["metadata"]["uid"].as_str().unwrap_or_default();
    match uid.filter(|u| !u.is_empty()) {
        Some(u) if u != have => Err(conflict(
            r,
            what,
            name,
            &format!("Precondition failed: UID in precondition: {u}, UID in object meta: {have}"),
        )),
        _ => Ok(()),
    }
}

/// POST on a collection: creates the object (a name generated from
/// `generateName` when it has none), 201 with it.
fn create(st: &mut State, route: &Route, mut obj: Value) -> Answer {
    let r = route.resource;
    if let Some(kind) = obj["kind"].as_str()
        && !kind.eq_ignore_ascii_case(r.kind())
    {
        return failure(400, &format!("a {kind} posted to {}", r.plural()));
    }
    if !obj["metadata"].is_object() {
        obj["metadata"] = json!({});
    }
    if let Some(ns) = &route.namespace {
        match obj["metadata"]["namespace"].as_str() {
            Some(given) if !given.is_empty() && given != ns => {
                return failure(
                    400,
                    "the namespace of the provided object does not match the namespace sent \
                     on the request",
                );
            }
            _ => obj["metadata"]["namespace"] = json!(ns),
        }
    } else if let Some(m) = obj["metadata"].as_object_mut() {
        m.remove("namespace");
    }
    if obj["metadata"]["name"].as_str().is_none_or(str::is_empty) {
        let Some(prefix) = obj["metadata"]["generateName"]
            .as_str()
            .filter(|g| !g.is_empty())
        else {
            return invalid(
                r,
                "",
                "metadata.name: Required value: name or generateName is required",
            );
        };
        st.generated += 1;
        let name = format!("{prefix}{}", suffix(st.generated));
        obj["metadata"]["name"] = json!(name);
    }
    if let Some(m) = obj["metadata"].as_object_mut() {
        for field in [
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "resourceVersion",
        ] {
            m.remove(field);
        }
    }
    st.fill(r, &mut obj, &rfc3339(SystemTime::now()));
    let key = key_of(r, &obj);
    if st.object(r, &key).is_some() {
        return already_exists(r, obj["metadata"]["name"].as_str().unwrap_or_default());
    }
    st.store(r, key.clone(), obj, None);
    (201, st.object(r, &key).cloned().unwrap_or_default())
}

/// Five characters for a generated name, as the API server's (but
/// counted, not random, so runs repeat).
fn suffix(mut n: u64) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut s = String::new();
    for _ in 0..5 {
        s.push(ALPHABET[(n % ALPHABET.len() as u64) as usize] as char);
        n /= ALPHABET.len() as u64;
    }
    s
}

/// PUT on an object (or its status): replaces it (or only its status),
/// under the resourceVersion and uid preconditions the body carries.
fn replace(st: &mut State, route: &Route, body: Value, status_only: bool) -> Answer {
    let r = route.resource;
    let name = route.name.as_deref().unwrap_or_default();
    if r == Resource::Leases && st.lease_conflicts > 0 {
        st.lease_conflicts -= 1;
        return modified(r, name);
    }
    if body["metadata"]["name"].as_str().is_some_and(|n| n != name) {
        return failure(
            400,
            "the name of the object does not match the name on the URL",
        );
    }
    if let (Some(ns), Some(given)) = (&route.namespace, body["metadata"]["namespace"].as_str())
        && !given.is_empty()
        && given != ns
    {
        return failure(
            400,
            "the namespace of the provided object does not match the namespace sent on the \
             request",
        );
    }
    let key = route.key();
    let Some(old) = st.object(r, &key).cloned() else {
        return not_found(r, name);
    };
    let qualified = r.qualified();
    if let Err(refused) = check_rv(r, name, body["metadata"]["resourceVersion"].as_str(), &old)
        .and_then(|_| check_uid(r, &qualified, name, body["metadata"]["uid"].as_str(), &old))
    {
        return refused;
    }
    let new = if status_only {
        with_status(old.clone(), &body)
    } else {
        let mut new = body;
        keep_identity(&mut new, &old);
        if r.has_status() {
            new = with_status(new, &old);
        }
        new
    };
    st.store(r, key.clone(), new, Some(old));
    (200, st.object(r, &key).cloned().unwrap_or_default())
}

/// PATCH on an object (or its status): a JSON merge patch, or a strategic
/// merge patch (which merges `status.conditions` by `type`).
fn patch(
    st: &mut State,
    route: &Route,
    content_type: Option<&str>,
    body: Value,
    status_only: bool,
) -> Answer {
    let r = route.resource;
    let name = route.name.as_deref().unwrap_or_default();
    let strategic = match content_type {
        Some("application/strategic-merge-patch+json") => true,
        Some("application/merge-patch+json") => false,
        other => {
            return failure(
                415,
                &format!(
                    "the fake API server applies application/merge-patch+json and \
                     application/strategic-merge-patch+json, not {}",
                    other.unwrap_or("a patch without a Content-Type")
                ),
            );
        }
    };
    let key = route.key();
    let Some(old) = st.object(r, &key).cloned() else {
        return not_found(r, name);
    };
    // A resourceVersion in a patch is a precondition.
    if let Some(rv) = body["metadata"]["resourceVersion"].as_str()
        && Some(rv) != old["metadata"]["resourceVersion"].as_str()
    {
        return modified(r, name);
    }
    let mut new = old.clone();
    if strategic {
        strategic_merge(&mut new, &body, &mut Vec::new());
    } else {
        merge_patch(&mut new, &body);
    }
    keep_identity(&mut new, &old);
    let new = if status_only {
        with_status(old.clone(), &new)
    } else if r.has_status() {
        with_status(new, &old)
    } else {
        new
    };
    if status_only && r == Resource::Pods {
        st.status_patches.push((key.clone(), body));
    }
    st.store(r, key.clone(), new, Some(old));
    (200, st.object(r, &key).cloned().unwrap_or_default())
}

/// RFC 7386: maps merge, null deletes, anything else replaces.
fn merge_patch(target: &mut Value, patch: &Value) {
    let Some(p) = patch.as_object() else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = json!({});
    }
    let t = target.as_object_mut().unwrap();
    for (k, v) in p {
        if v.is_null() {
            t.remove(k);
        } else {
            merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
        }
    }
}

/// The lists a strategic merge patch merges by a key (the rest are
/// replaced whole): the fields whose Go types say `patchMergeKey`, of
/// those a scheduler writes.
fn merge_key(path: &[String]) -> Option<&'static str> {
    match path {
        [status, conditions] if status == "status" && conditions == "conditions" => Some("type"),
        _ => None,
    }
}

/// A strategic merge patch, as far as the fake needs: a merge patch,
/// except that the lists [`merge_key`] names merge their entries by key
/// (an entry with `"$patch": "delete"` removes its match) and directives
/// (`$setElementOrder/...`, `$retainKeys`, ...) are ignored.
fn strategic_merge(target: &mut Value, patch: &Value, path: &mut Vec<String>) {
    let Some(p) = patch.as_object() else {
        *target = patch.clone();
        return;
    };
    if p.get("$patch").and_then(Value::as_str) == Some("replace") {
        let mut p = p.clone();
        p.remove("$patch");
        *target = Value::Object(p);
        return;
    }
    if !target.is_object() {
        *target = json!({});
    }
    let t = target.as_object_mut().unwrap();
    for (k, v) in p {
        if k.starts_with('$') {
            continue;
        }
        if v.is_null() {
            t.remove(k);
            continue;
        }
        path.push(k.clone());
        match (merge_key(path), v.as_array()) {
            (Some(key), Some(entries)) => {
                let slot = t.entry(k.clone()).or_insert_with(|| json!([]));
                if !slot.is_array() {
                    *slot = json!([]);
                }
                let list = slot.as_array_mut().unwrap();
                for entry in entries {
                    let at = list
                        .iter()
                        .position(|e| entry.get(key).is_some() && e.get(key) == entry.get(key));
                    let delete = entry.get("$patch").and_then(Value::as_str) == Some("delete");
                    match (at, delete) {
                        (Some(i), true) => {
                            list.remove(i);
                        }
                        (None, true) => {}
                        (Some(i), false) => strategic_merge(&mut list[i], entry, path),
                        (None, false) => {
                            let mut e = json!({});
                            strategic_merge(&mut e, entry, path);
                            list.push(e);
                        }
                    }
                }
            }
            _ => strategic_merge(t.entry(k.clone()).or_insert(Value::Null), v, path),
        }
        path.pop();
    }
}

/// DELETE on an object, under the preconditions of the DeleteOptions.
/// A bound, unfinished pod goes gracefully when
/// [`FakeApiServer::set_graceful_deletes`] asks it.
fn delete(shared: &Arc<Shared>, st: &mut State, route: &Route, options: &Value) -> Answer {
    let r = route.resource;
    let name = route.name.as_deref().unwrap_or_default();
    let key = route.key();
    let Some(old) = st.object(r, &key).cloned() else {
        return not_found(r, name);
    };
    let pre = &options["preconditions"];
    let qualified = r.qualified();
    if let Err(refused) = check_uid(r, &qualified, name, pre["uid"].as_str(), &old) {
        return refused;
    }
    if let Some(rv) = pre["resourceVersion"].as_str().filter(|v| !v.is_empty()) {
        let have = old["metadata"]["resourceVersion"]
            .as_str()
            .unwrap_or_default();
        if rv != have {
            return conflict(
                r,
                &qualified,
                name,
                &format!(
                    "Precondition failed: ResourceVersion in precondition: {rv}, \
                     ResourceVersion in object meta: {have}"
                ),
            );
        }
    }
    // As the API server: a pod not yet on a node, or finished, has nothing
    // to stop, and goes at once; so does one deleted with grace 0.
    let grace = st.graceful_deletes.filter(|_| {
        r == Resource::Pods
            && old["spec"]["nodeName"]
                .as_str()
                .is_some_and(|n| !n.is_empty())
            && !matches!(
                old["status"]["phase"].as_str(),
                Some("Succeeded" | "Failed")
            )
            && options["gracePeriodSeconds"].as_i64() != Some(0)
    });
    if r == Resource::Pods {
        st.deletes.push(key.clone());
    }
    let Some(grace) = grace else {
        st.remove(r, &key);
        return (200, old);
    };
    if !old["metadata"]["deletionTimestamp"].is_null() {
        // Already terminating: nothing changes.
        return (200, old);
    }
    let mut new = old.clone();
    new["metadata"]["deletionTimestamp"] = json!(rfc3339(SystemTime::now() + grace));
    new["metadata"]["deletionGracePeriodSeconds"] =
        json!(grace.as_secs_f64().ceil().max(1.0) as u64);
    st.store(r, key.clone(), new, Some(old.clone()));
    let answered = st.object(r, &key).cloned().unwrap_or_default();
    let uid = old["metadata"]["uid"].clone();
    let shared = shared.clone();
    let _ = std::thread::Builder::new()
        .name("fake-apiserver-reaper".into())
        .spawn(move || {
            // The kubelet's part: the pod is gone when its grace is over.
            let end = Instant::now() + grace;
            while Instant::now() < end {
                if shared.stopped.load(Ordering::SeqCst) {
                    return;
                }
                std::thread::sleep(
                    end.saturating_duration_since(Instant::now())
                        .min(Duration::from_millis(20)),
                );
            }
            let mut st = shared.lock();
            let same = st.object(r, &key).is_some_and(|o| {
                o["metadata"]["uid"] == uid && !o["metadata"]["deletionTimestamp"].is_null()
            });
            if same {
                st.remove(r, &key);
            }
        });
    (200, answered)
}

/// POST on pods/{name}/binding: assigns the pod to the target node as
/// `BindingREST.Create` does, 201 with a Success Status.
fn bind(st: &mut State, route: &Route, binding: &Value) -> Answer {
    let r = Resource::Pods;
    let name = route.name.as_deref().unwrap_or_default();
    if st.fail_binds.0 > 0 {
        st.fail_binds.0 -= 1;
        let code = st.fail_binds.1;
        return failure(
            code,
            &format!("the fake API server fails this binding with {code} (test control)"),
        );
    }
    if binding["metadata"]["name"].as_str() != Some(name) {
        return failure(400, "name in URL does not match name in Binding object");
    }
    if let Some(ns) = binding["metadata"]["namespace"].as_str()
        && !ns.is_empty()
        && Some(ns) != route.namespace.as_deref()
    {
        return failure(
            400,
            "the namespace of the provided object does not match the namespace sent on the \
             request",
        );
    }
    let Some(node) = binding["target"]["name"].as_str().filter(|n| !n.is_empty()) else {
        return invalid(r, name, "target.name: Required value");
    };
    let key = route.key();
    let Some(old) = st.object(r, &key).cloned() else {
        return not_found(r, name);
    };
    let meta = &binding["metadata"];
    if let Err(refused) = check_uid(r, "pods", name, meta["uid"].as_str(), &old) {
        return refused;
    }
    if let Some(rv) = meta["resourceVersion"].as_str().filter(|v| !v.is_empty())
        && Some(rv) != old["metadata"]["resourceVersion"].as_str()
    {
        return modified(r, name);
    }
    let refuse = |why: String| conflict(r, "pods/binding", name, &why);
    if !old["metadata"]["deletionTimestamp"].is_null() {
        return refuse(format!(
            "pod {name} is being deleted, cannot be assigned to a host"
        ));
    }
    if let Some(on) = old["spec"]["nodeName"].as_str().filter(|n| !n.is_empty()) {
        return refuse(format!("pod {name} is already assigned to node {on:?}"));
    }
    if old["spec"]["schedulingGates"]
        .as_array()
        .is_some_and(|g| !g.is_empty())
    {
        return refuse(format!("pod {name} has non-empty .spec.schedulingGates"));
    }
    let mut pod = old.clone();
    pod["spec"]["nodeName"] = json!(node);
    if let Some(annotations) = meta["annotations"].as_object() {
        if !pod["metadata"]["annotations"].is_object() {
            pod["metadata"]["annotations"] = json!({});
        }
        for (k, v) in annotations {
            pod["metadata"]["annotations"][k] = v.clone();
        }
    }
    if !pod["status"].is_object() {
        pod["status"] = json!({});
    }
    let status = pod["status"].as_object_mut().unwrap();
    status.remove("nominatedNodeName");
    let conditions = status.entry("conditions").or_insert_with(|| json!([]));
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    let conditions = conditions.as_array_mut().unwrap();
    let scheduled = json!({"type": "PodScheduled", "status": "True",
                           "lastProbeTime": null,
                           "lastTransitionTime": rfc3339(SystemTime::now())});
    match conditions.iter_mut().find(|c| c["type"] == "PodScheduled") {
        Some(c) if c["status"] == "True" => {}
        Some(c) => *c = scheduled,
        None => conditions.push(scheduled),
    }
    st.store(r, key, pod, Some(old));
    (201, success(201))
}

fn list(
    shared: &Shared,
    resource: Resource,
    selector: &Selector,
    limit: Option<String>,
    token: Option<String>,
) -> (u16, Value) {
    let mut st = shared.lock();
    let limit = limit
        .and_then(|l| l.parse::<usize>().ok())
        .filter(|l| *l > 0);
    let page = match (limit, st.page_size) {
        (Some(l), Some(p)) => Some(l.min(p)),
        (l, p) => l.or(p),
    };
    let (rv, mut items) = match token.filter(|t| !t.is_empty()) {
        Some(t) => match st.continues.remove(&t) {
            Some(c) if c.resource != resource => {
                return (
                    400,
                    status_json(400, "BadRequest", "continue token of another resource"),
                );
            }
            Some(c) if c.rv >= st.horizon => (c.rv, c.rest),
            Some(_) => {
                return (
                    410,
                    status_json(
                        410,
                        "Expired",
                        "The provided continue parameter is too old to display a consistent \
                         list result. You can start a new list without the continue parameter.",
                    ),
                );
            }
            None => {
                return (
                    400,
                    status_json(400, "BadRequest", &format!("invalid continue token {t:?}")),
                );
            }
        },
        None => {
            let items = st
                .objects
                .get(&resource)
                .map(|m| {
                    m.values()
                        .filter(|o| selector.matches(o))
                        .map(|o| {
                            // List items carry no kind/apiVersion.
                            let mut o = o.clone();
                            if let Some(map) = o.as_object_mut() {
                                map.remove("kind");
                                map.remove("apiVersion");
                            }
                            o
                        })
                        .collect()
                })
                .unwrap_or_default();
            (st.rv, items)
        }
    };
    let mut metadata = json!({"resourceVersion": rv.to_string()});
    if let Some(page) = page.filter(|p| items.len() > *p) {
        let rest = items.split_off(page);
        let id = st.id();
        let t = format!("fake-continue-{id}-rv{rv}");
        metadata["continue"] = json!(t);
        metadata["remainingItemCount"] = json!(rest.len());
        st.continues.insert(t, Continue { rv, resource, rest });
    }
    (
        200,
        json!({"kind": format!("{}List", resource.kind()), "apiVersion": resource.api_version(),
               "metadata": metadata, "items": items}),
    )
}

#[allow(clippy::too_many_arguments)]
fn watch_stream(
    shared: &Shared,
    resource: Resource,
    selector: Selector,
    from: Option<u64>,
    timeout: Duration,
    bookmarks: bool,
    record: RequestRecord,
    out: &mut TcpStream,
) -> bool {
    let (tx, rx) = mpsc::channel();
    let (id, first, too_old, interval, timeout) = {
        let mut st = shared.lock();
        st.requests.push(record);
        let id = st.id();
        let timeout = st.watch_timeout.map_or(timeout, |t| t.min(timeout));
        let interval = st.bookmark_interval.filter(|_| bookmarks);
        let mut first: Vec<Msg> = Vec::new();
        let mut too_old = None;
        if st.silent_watches {
            first.push(Msg::Silence);
        } else if st.watches_gone == Some(Gone::Event) {
            let status = status_json(
                410,
                "Expired",
                &format!(
                    "too old resource version: {} ({}) (the fake API server expires every \
                     watch: test control)",
                    from.unwrap_or(0),
                    st.rv
                ),
            );
            too_old = Some(event_line("ERROR", &status));
        }
        match from {
            _ if too_old.is_some() || st.silent_watches => {}
            Some(n) if n < st.horizon => {
                let status = status_json(
                    410,
                    "Expired",
                    &format!("too old resource version: {n} ({})", st.horizon),
                );
                too_old = Some(event_line("ERROR", &status));
            }
            Some(n) => {
                first.extend(
                    st.history
                        .iter()
                        .filter(|c| c.resource == resource && c.rv > n)
                        .filter_map(|c| event_for(c, &selector)),
                );
            }
            None => {
                // Every object, as ADDED, then what changes.
                let objects = st.objects.get(&resource).cloned().unwrap_or_default();
                first.extend(objects.values().filter_map(|o| {
                    event_for(
                        &Change {
                            rv: o["metadata"]["resourceVersion"]
                                .as_str()
                                .and_then(|v| v.parse().ok())
                                .unwrap_or(0),
                            resource,
                            old: None,
                            new: Some(o.clone()),
                        },
                        &selector,
                    )
                }));
            }
        }
        if too_old.is_none() && !st.silent_watches {
            let from = from.unwrap_or(st.rv);
            st.watches.push(WatchReg {
                id,
                resource,
                selector,
                bookmarks,
                from,
                tx,
            });
        }
        (id, first, too_old, interval, timeout)
    };
    let keep = stream_events(
        shared, resource, id, out, first, too_old, rx, interval, timeout,
    );
    shared.lock().watches.retain(|w| w.id != id);
    keep
}

#[allow(clippy::too_many_arguments)]
fn stream_events(
    shared: &Shared,
    resource: Resource,
    id: u64,
    out: &mut TcpStream,
    first: Vec<Msg>,
    too_old: Option<String>,
    rx: Receiver<Msg>,
    interval: Option<Duration>,
    timeout: Duration,
) -> bool {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\
                Transfer-Encoding: chunked\r\n\r\n";
    if out.write_all(head.as_bytes()).is_err() {
        return false;
    }
    let sent = |kind: &str, key: String, rv: String| {
        shared.lock().sent.push(SentEvent {
            resource,
            kind: kind.to_string(),
            key,
            resource_version: rv,
            watch: id,
        });
    };
    if let Some(line) = too_old {
        let ok = write_chunk(out, &line).is_ok();
        sent("ERROR", String::new(), String::new());
        return ok && end_chunks(out).is_ok();
    }
    let deadline = Instant::now() + timeout;
    let mut next_bookmark = interval.map(|i| Instant::now() + i);
    let mut pending = first.into_iter();
    loop {
        let msg = match pending.next() {
            Some(m) => m,
            None => {
                let now = Instant::now();
                if now >= deadline {
                    return end_chunks(out).is_ok();
                }
                let wake = next_bookmark.map_or(deadline, |b| b.min(deadline));
                match rx.recv_timeout(wake.saturating_duration_since(now)) {
                    Ok(m) => m,
                    Err(RecvTimeoutError::Timeout) => {
                        if next_bookmark.is_some_and(|b| Instant::now() >= b) {
                            next_bookmark = interval.map(|i| Instant::now() + i);
                            let rv = shared.lock().rv;
                            Msg::Bookmark(rv)
                        } else {
                            continue;
                        }
                    }
                    Err(RecvTimeoutError::Disconnected) => {
                        // Unregistered without a message: end normally.
                        return end_chunks(out).is_ok();
                    }
                }
            }
        };
        match msg {
            Msg::Event {
                kind,
                key,
                rv,
                line,
            } => {
                if write_chunk(out, &line).is_err() {
                    return false;
                }
                sent(kind, key, rv.to_string());
            }
            Msg::Bookmark(rv) => {
                let bookmark = json!({"kind": resource.kind(), "apiVersion": resource.api_version(),
                                      "metadata": {"resourceVersion": rv.to_string()}});
                if write_chunk(out, &event_line("BOOKMARK", &bookmark)).is_err() {
                    return false;
                }
                sent("BOOKMARK", String::new(), rv.to_string());
            }
            Msg::Expire(line) => {
                let ok = write_chunk(out, &line).is_ok();
                sent("ERROR", String::new(), String::new());
                return ok && end_chunks(out).is_ok();
            }
            Msg::End => return end_chunks(out).is_ok(),
            Msg::Silence => return hang(shared),
            Msg::Drop => {
                let _ = out.shutdown(Shutdown::Both);
                return false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str) -> Value {
        json!({"kind": "Node", "metadata": {"name": name},
               "status": {"allocatable": {"cpu": "4", "pods": "110"}}})
    }

    fn pod(name: &str, phase: &str) -> Value {
        json!({"kind": "Pod", "metadata": {"name": name, "namespace": "ns"},
               "spec": {"containers": [{"name": "c"}]}, "status": {"phase": phase}})
    }

    fn get(url: &str) -> (u16, Value) {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let mut r = agent.get(url).call().expect("GET answered");
        let code = r.status().as_u16();
        (
            code,
            serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap(),
        )
    }

    /// A raw watch: the response head, then one event a call.
    struct RawWatch {
        reader: BufReader<TcpStream>,
        head: String,
    }

    impl RawWatch {
        fn open(api: &FakeApiServer, target: &str) -> RawWatch {
            let mut s = TcpStream::connect(api.addr()).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            write!(
                s,
                "GET {target} HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\n\r\n"
            )
            .unwrap();
            let mut reader = BufReader::new(s);
            let mut head = String::new();
            loop {
                let mut l = String::new();
                reader.read_line(&mut l).unwrap();
                if l == "\r\n" || l.is_empty() {
                    break;
                }
                head.push_str(&l);
            }
            RawWatch { reader, head }
        }

        /// The next chunk's data; None at the terminating chunk, Err when
        /// the connection ended without it.
        fn next(&mut self) -> Result<Option<String>, String> {
            let mut size = String::new();
            if self
                .reader
                .read_line(&mut size)
                .map_err(|e| e.to_string())?
                == 0
            {
                return Err("connection closed mid-stream".into());
            }
            let n = usize::from_str_radix(size.trim(), 16).map_err(|e| format!("{size:?}: {e}"))?;
            let mut data = vec![0; n + 2];
            self.reader
                .read_exact(&mut data)
                .map_err(|e| e.to_string())?;
            if n == 0 {
                return Ok(None);
            }
            Ok(Some(String::from_utf8(data[..n].to_vec()).unwrap()))
        }

        fn event(&mut self) -> Value {
            let line = self.next().unwrap().expect("an event");
            assert!(line.ends_with('\n'), "{line:?}");
            serde_json::from_str(&line).unwrap()
        }
    }

    #[test]
    fn lists_page_and_select() {
        let api = FakeApiServer::start();
        for i in 0..5 {
            api.add(node(&format!("n{i}")));
        }
        api.add(pod("run", "Running"));
        api.add(pod("done", "Succeeded"));
        api.add(pod("bad", "Failed"));
        let base = api.url();
        let (code, l) = get(&format!("{base}/api/v1/nodes?limit=2"));
        assert_eq!(code, 200);
        assert_eq!(l["kind"], "NodeList");
        assert_eq!(l["metadata"]["resourceVersion"], "8");
        assert_eq!(l["items"].as_array().unwrap().len(), 2);
        assert!(
            l["items"][0].get("kind").is_none(),
            "list items carry no kind"
        );
        assert_eq!(l["items"][0]["metadata"]["resourceVersion"], "1");
        let mut names = vec![];
        let mut page = l;
        // A change between pages is not in the paged list.
        api.add(node("late"));
        loop {
            for i in page["items"].as_array().unwrap() {
                names.push(i["metadata"]["name"].as_str().unwrap().to_string());
            }
            let Some(t) = page["metadata"]["continue"].as_str() else {
                break;
            };
            assert_eq!(page["metadata"]["resourceVersion"], "8");
            let (code, next) = get(&format!("{base}/api/v1/nodes?limit=2&continue={t}"));
            assert_eq!(code, 200, "{next}");
            page = next;
        }
        assert_eq!(names, ["n0", "n1", "n2", "n3", "n4"]);
        let sel = "status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed";
        let (_, l) = get(&format!("{base}/api/v1/pods?fieldSelector={sel}"));
        assert_eq!(l["items"].as_array().unwrap().len(), 1);
        assert_eq!(l["items"][0]["metadata"]["name"], "run");
        let log = api.requests();
        assert_eq!(
            log.last().unwrap().param("fieldSelector"),
            Some("status.phase!=Succeeded,status.phase!=Failed")
        );
        assert_eq!(api.lists("pods"), 1);
        assert_eq!(api.list_starts("nodes"), 1);
        // A continue token read before a compaction is expired after it.
        let (_, l) = get(&format!("{base}/api/v1/nodes?limit=2"));
        let t = l["metadata"]["continue"].as_str().unwrap().to_string();
        api.add(node("later"));
        api.compact();
        let (code, s) = get(&format!("{base}/api/v1/nodes?limit=2&continue={t}"));
        assert_eq!((code, &s["reason"]), (410, &json!("Expired")), "{s}");
        // Failures on demand.
        api.set_failing(Some("pods"), Some(503));
        assert_eq!(get(&format!("{base}/api/v1/pods")).0, 503);
        assert_eq!(get(&format!("{base}/api/v1/nodes")).0, 200);
        api.set_failing(Some("pods"), None);
        assert_eq!(get(&format!("{base}/api/v1/pods")).0, 200);
        assert_eq!(get(&format!("{base}/api/v1/configmaps")).0, 404);
    }

    #[test]
    fn watches_replay_select_and_fail_as_asked() {
        let api = FakeApiServer::start();
        api.add(node("a"));
        let rv = api.add(pod("p", "Pending"));
        api.add(pod("q", "Pending"));
        let sel = "status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed";
        let mut w = RawWatch::open(
            &api,
            &format!(
                "/api/v1/pods?watch=true&resourceVersion={rv}&fieldSelector={sel}&allowWatchBookmarks=true&timeoutSeconds=30"
            ),
        );
        assert!(w.head.starts_with("HTTP/1.1 200"), "{}", w.head);
        assert!(
            w.head
                .to_ascii_lowercase()
                .contains("transfer-encoding: chunked")
        );
        // Replayed: q was added after rv.
        let e = w.event();
        assert_eq!(
            (&e["type"], &e["object"]["metadata"]["name"]),
            (&json!("ADDED"), &json!("q"))
        );
        assert_eq!(e["object"]["kind"], "Pod");
        // Live: p binds, then succeeds (DELETED through the selector).
        api.update("Pod", "ns", "p", |p| p["spec"]["nodeName"] = json!("a"));
        let e = w.event();
        assert_eq!(e["type"], "MODIFIED");
        assert_eq!(e["object"]["spec"]["nodeName"], "a");
        let done = api.update("Pod", "ns", "p", |p| {
            p["status"]["phase"] = json!("Succeeded")
        });
        let e = w.event();
        assert_eq!(e["type"], "DELETED");
        assert_eq!(e["object"]["metadata"]["resourceVersion"], done.to_string());
        assert_eq!(api.bookmark_all(), 1);
        let e = w.event();
        assert_eq!(e["type"], "BOOKMARK");
        assert_eq!(e["object"]["metadata"]["resourceVersion"], done.to_string());
        // Nodes do not reach a pod watch.
        api.delete("Node", "", "a");
        api.delete("Pod", "ns", "q");
        let e = w.event();
        assert_eq!(
            (&e["type"], &e["object"]["metadata"]["name"]),
            (&json!("DELETED"), &json!("q"))
        );
        assert_eq!(api.expire_watches(), 1);
        let e = w.event();
        assert_eq!(
            (&e["type"], &e["object"]["code"]),
            (&json!("ERROR"), &json!(410))
        );
        assert_eq!(w.next(), Ok(None), "the watch ends after the ERROR event");

        // From before a compaction: 410 at once.
        api.compact();
        let mut w = RawWatch::open(
            &api,
            &format!("/api/v1/pods?watch=true&resourceVersion={rv}"),
        );
        let e = w.event();
        assert_eq!(e["object"]["reason"], "Expired");
        assert!(
            e["object"]["message"]
                .as_str()
                .unwrap()
                .starts_with(&format!("too old resource version: {rv} (")),
            "{e}"
        );
        assert_eq!(w.next(), Ok(None));

        // Dropped mid-stream: no terminating chunk.
        let now = api.resource_version();
        let mut w = RawWatch::open(
            &api,
            &format!("/api/v1/nodes?watch=true&resourceVersion={now}"),
        );
        assert!(api.wait_watching_one("nodes"));
        assert_eq!(api.drop_connections(), 1);
        assert!(w.next().is_err());

        // Ended normally, as at timeoutSeconds.
        let mut w = RawWatch::open(
            &api,
            &format!("/api/v1/nodes?watch=true&resourceVersion={now}"),
        );
        assert!(api.wait_watching_one("nodes"));
        api.end_watches();
        assert_eq!(w.next(), Ok(None));

        // Down: connections close before any response.
        api.set_down(true);
        let mut s = TcpStream::connect(api.addr()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let _ = write!(s, "GET /api/v1/nodes HTTP/1.1\r\nHost: x\r\n\r\n");
        let mut buf = Vec::new();
        let _ = s.read_to_end(&mut buf);
        assert!(buf.is_empty());
        api.set_down(false);
        assert_eq!(get(&format!("{}/api/v1/nodes", api.url())).0, 200);
        let sent = api.sent();
        assert!(
            sent.iter().any(|e| e.kind == "DELETED" && e.key == "ns/p"),
            "{sent:?}"
        );
    }

    impl FakeApiServer {
        fn wait_watching_one(&self, kind: &str) -> bool {
            let deadline = Instant::now() + Duration::from_secs(5);
            while self.open_watches(Some(kind)) == 0 {
                if Instant::now() > deadline {
                    return false;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            true
        }
    }

    #[test]
    fn routes() {
        let r = |p: &str| {
            route(p).map(|r| {
                format!(
                    "{:?} {} {} {}",
                    r.resource,
                    r.namespace.unwrap_or_default(),
                    r.name.unwrap_or_default(),
                    r.sub.unwrap_or_default()
                )
            })
        };
        assert_eq!(r("/api/v1/nodes").as_deref(), Some("Nodes   "));
        assert_eq!(r("/api/v1/namespaces/x").as_deref(), Some("Namespaces  x "));
        assert_eq!(
            r("/api/v1/namespaces/ns/pods/p/binding").as_deref(),
            Some("Pods ns p binding")
        );
        assert_eq!(
            r("/apis/policy/v1/poddisruptionbudgets").as_deref(),
            Some("PodDisruptionBudgets   ")
        );
        assert_eq!(
            r("/apis/scheduling.volcano.sh/v1beta1/queues/q/status").as_deref(),
            Some("Queues  q status")
        );
        assert_eq!(
            r("/apis/events.k8s.io/v1/namespaces/ns/events").as_deref(),
            Some("Events ns  ")
        );
        assert_eq!(
            r("/api/v1/namespaces/ns/events/e").as_deref(),
            Some("CoreEvents ns e ")
        );
        assert_eq!(r("/api/v1/pods/p"), None, "a pod needs its namespace");
        assert_eq!(r("/apis/policy/v1beta1/poddisruptionbudgets"), None);
        assert_eq!(r("/api/v1/namespaces/ns/pods/p/status/x"), None);
        assert_eq!(Resource::parse("events"), Some(Resource::Events));
        assert_eq!(Resource::parse("v1/Event"), Some(Resource::CoreEvents));
        assert_eq!(
            Resource::parse("leases.coordination.k8s.io"),
            Some(Resource::Leases)
        );
    }

    #[test]
    fn patches() {
        let mut obj = json!({"a": {"b": 1, "c": [1, 2]}, "status": {"conditions": [
            {"type": "A", "status": "False", "reason": "r"}, {"type": "B", "status": "True"}]}});
        let mut merged = obj.clone();
        merge_patch(&mut merged, &json!({"a": {"b": null, "c": [3]}, "d": "x"}));
        assert_eq!(merged["a"], json!({"c": [3]}));
        assert_eq!(merged["d"], "x");
        strategic_merge(
            &mut obj,
            &json!({"a": {"c": [3]}, "status": {
                "$setElementOrder/conditions": [{"type": "A"}, {"type": "B"}, {"type": "C"}],
                "conditions": [{"type": "A", "status": "True", "reason": null},
                               {"type": "B", "$patch": "delete"},
                               {"type": "C", "status": "True"}]}}),
            &mut Vec::new(),
        );
        assert_eq!(
            obj["a"]["c"],
            json!([3]),
            "lists without a merge key are replaced"
        );
        assert_eq!(
            obj["status"]["conditions"],
            json!([{"type": "A", "status": "True"}, {"type": "C", "status": "True"}])
        );
    }

    #[test]
    fn timestamps() {
        let at = |s: u64| rfc3339(UNIX_EPOCH + Duration::from_secs(s));
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(at(1_735_689_599), "2024-12-31T23:59:59Z");
        assert_eq!(suffix(0), "bbbbb");
        assert_ne!(suffix(1), suffix(2));
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a%21%3Db+c"), "a!=b c");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz"), "%zz");
    }
}
