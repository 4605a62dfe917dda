//! A filter plugin running as a Wasm component.
//!
//! Instances are pooled and reused: a worker takes one, calls it, and puts
//! it back, so the engine's workers run the plugin in parallel, never
//! queued behind one instance. Each instance keeps its own copy of the node
//! table and is synced only when the snapshot it last saw is replaced. An
//! instance that trapped, missed its deadline or ran out of memory is
//! dropped and replaced by a fresh one on the next call.

mod v0_1;
mod v0_2;
mod v0_3;
mod v0_4;
mod v0_5;
mod v0_6;
mod v0_7;
mod versioned;
mod wire;

use versioned::{Bindings, Pre, WirePod};
pub use versioned::{SUPPORTED, Version};

use crate::cluster::Snapshot;
use crate::cluster::api_objects::ApiObjects;
use crate::cluster::nominated::NominatedPass;
use crate::cluster::snapshot::Namespaces;
use crate::engine::plugin::{
    BatchFilter, Cycle, Plugin, PluginError, PrepareOutcome, Prepared, Reservation,
};
use crate::input::ApiObject;
use crate::runtime::{InstanceState, Runtime};
use crate::text::printable;
use sift_sdk::{ExtensionPoints, NodeFields, PodGroup, Status};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use wasmtime::Store;

/// What `describe` says, in every version's terms.
pub(crate) struct Describe {
    name: String,
    node_fields: NodeFields,
    /// Reads the cluster view (contracts that have one).
    cluster: bool,
    /// Reads the pod's whole object (contracts that pass it).
    pod_object: bool,
    /// Filter only in contracts without scores and reserve.
    extension_points: ExtensionPoints,
    /// Pod annotation keys it reads on nodes (contracts that pass them).
    pod_annotation_keys: Vec<String>,
    /// Kinds of cluster objects it reads whole (contracts that send them).
    object_kinds: Vec<String>,
}

/// What Reserve answered, in every version's terms: the assumed pod's
/// annotations, and (0.7 and later) the objects to write before binding,
/// each as its kind and JSON text, not yet checked.
pub(crate) struct Reserved {
    annotations: Vec<(String, String)>,
    writes: Vec<(String, String)>,
}

/// What PreScore answered, in every version's terms.
pub(crate) enum PreScored {
    Skip,
    Error(Status),
    Proceed,
}

/// What one `filter` call answered, statuses converted.
pub(crate) struct Verdicts {
    statuses: Vec<Status>,
    rejections: Vec<(u32, u32)>,
}

/// Nodes per `sync-nodes` call: bounds the guest's transient memory.
const SYNC_BATCH: usize = 1024;

/// Who a component says it is (`describe`) and how it was loaded.
#[derive(Clone, Debug)]
pub struct PluginIdentity {
    pub name: String,
    /// The contract version the component implements.
    pub contract: Version,
    pub node_fields: NodeFields,
    /// Whether its prepare step reads the cluster view.
    pub cluster: bool,
    /// Whether it reads the pod's whole object (the escape hatch).
    pub pod_object: bool,
    /// What it implements: filter, score, reserve.
    pub extension_points: ExtensionPoints,
    /// Pod annotation keys it reads on nodes' bound pods.
    pub pod_annotation_keys: Vec<String>,
    /// Kinds of cluster objects it reads whole (`sync-objects`).
    pub object_kinds: Vec<String>,
    /// SHA-256 of the component, hex.
    pub sha256: String,
    pub path: PathBuf,
    pub size: usize,
    pub compile_time: std::time::Duration,
    pub from_cache: bool,
}

impl PluginIdentity {
    /// A short version identity: the first 12 hex digits of the hash.
    pub fn version(&self) -> &str {
        &self.sha256[..12]
    }
}

pub struct WasmPlugin {
    identity: PluginIdentity,
    version: String,
    label: Arc<str>,
    runtime: Arc<Runtime>,
    pre: Pre,
    args: String,
    pool: Mutex<Vec<Instance>>,
    /// Live instances: pooled or in use.
    instances: AtomicUsize,
    /// Node records sent into instances, over all instances and calls.
    nodes_sent: AtomicU64,
}

/// A fresh, not yet configured instance and what it says it is.
type Described = (Store<InstanceState>, Bindings, Describe);

struct Instance {
    store: Store<InstanceState>,
    bindings: Bindings,
    synced_generation: Option<u64>,
    synced_len: usize,
    prepared_cycle: Option<u64>,
    /// Cluster view: the pod groups the instance holds, and the namespaces
    /// it was last sent.
    groups: HashSet<u64>,
    namespaces: Option<Arc<Namespaces>>,
    /// The objects it was last sent (plugins that name object kinds).
    api_objects: Option<Arc<ApiObjects>>,
}

impl WasmPlugin {
    /// Compiles (or loads from cache) a component, checks that it
    /// implements the contract, and configures one instance with `args`
    /// (JSON, chosen by the plugin's name) to surface configuration errors
    /// at load time.
    pub fn load(
        runtime: &Arc<Runtime>,
        path: &Path,
        args_for: &dyn Fn(&str) -> String,
    ) -> anyhow::Result<WasmPlugin> {
        let bytes = crate::runtime::read_component(path)?;
        WasmPlugin::from_bytes(runtime, path, &bytes, args_for)
    }

    /// As [`WasmPlugin::load`], from the bytes of the file at `path`.
    pub fn from_bytes(
        runtime: &Arc<Runtime>,
        path: &Path,
        bytes: &[u8],
        args_for: &dyn Fn(&str) -> String,
    ) -> anyhow::Result<WasmPlugin> {
        let compiled = runtime.compile(bytes, path)?;
        let version = Version::of(&compiled.component, runtime.engine())
            .map_err(|e| anyhow::anyhow!("{} {e}", path.display()))?;
        let mut linker = runtime.linker_for(&compiled.component)?;
        versioned::link(&mut linker, version)
            .map_err(|e| anyhow::anyhow!("{} cannot be linked: {e:#}", path.display()))?;
        let instance_pre = linker
            .instantiate_pre(&compiled.component)
            .map_err(|e| anyhow::anyhow!("{} cannot be linked: {e:#}", path.display()))?;
        let pre = Pre::new(version, instance_pre).map_err(|e| {
            anyhow::anyhow!(
                "{} does not implement sift's contract (world sift:predicate/{}@{version}): {e:#}",
                path.display(),
                version.world()
            )
        })?;
        let mut plugin = WasmPlugin {
            identity: PluginIdentity {
                name: String::new(),
                contract: version,
                node_fields: NodeFields::ALL,
                cluster: false,
                pod_object: false,
                extension_points: ExtensionPoints::FILTER,
                pod_annotation_keys: Vec::new(),
                object_kinds: Vec::new(),
                sha256: compiled.sha256,
                path: path.to_path_buf(),
                size: compiled.size,
                compile_time: compiled.compile_time,
                from_cache: compiled.from_cache,
            },
            version: String::new(),
            label: Arc::from(path.display().to_string()),
            runtime: runtime.clone(),
            pre,
            args: String::new(),
            pool: Mutex::new(Vec::new()),
            instances: AtomicUsize::new(0),
            nodes_sent: AtomicU64::new(0),
        };
        plugin.version = plugin.identity.version().to_string();
        // One instance learns the name, is configured, and starts the pool.
        let (mut store, bindings, described) = plugin
            .instantiate()
            .map_err(|e| anyhow::anyhow!("{}: {}", path.display(), e.message))?;
        let name = described.name;
        plugin.args = args_for(&name);
        plugin.identity.name = name.clone();
        plugin.identity.node_fields = described.node_fields;
        plugin.identity.cluster = described.cluster;
        plugin.identity.pod_object = described.pod_object;
        plugin.identity.extension_points = described.extension_points;
        plugin.identity.pod_annotation_keys = described.pod_annotation_keys;
        plugin.identity.object_kinds = described.object_kinds;
        plugin.label = Arc::from(format!("{name}@{}", plugin.version));
        let logger = runtime.plugin_logger(plugin.label.clone());
        store.data_mut().set_logger(logger);
        let first = plugin
            .init_instance(store, bindings)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        plugin
            .pool
            .lock()
            .map_err(|_| anyhow::anyhow!("poisoned pool"))?
            .push(first);
        Ok(plugin)
    }

    pub fn identity(&self) -> &PluginIdentity {
        &self.identity
    }

    /// Creates, configures and drops one instance: what a new worker costs.
    pub fn instantiate_once(&self) -> Result<(), PluginError> {
        self.new_instance().map(drop)
    }

    /// Live instances (pooled or in use).
    pub fn instances(&self) -> usize {
        self.instances.load(Ordering::Relaxed)
    }

    /// Node records sent into instances so far (what syncing costs).
    pub fn nodes_sent(&self) -> u64 {
        self.nodes_sent.load(Ordering::Relaxed)
    }

    /// An object Reserve wrote, typed as its kind: it must be of a kind the
    /// plugin reads (it started from the object `sync-objects` sent) and
    /// well formed, or the plugin is at fault, not the cluster.
    fn checked_write(&self, kind: &str, json: &str) -> Result<ApiObject, PluginError> {
        if !self.identity.object_kinds.iter().any(|k| k == kind) {
            return Err(self.error(format!(
                "reserve wrote a {}, which is not among the object kinds it reads ({})",
                printable(kind),
                self.identity.object_kinds.join(", ")
            )));
        }
        let value: serde_json::Value = serde_json::from_str(json)
            .map_err(|e| self.error(format!("reserve wrote a {kind} that is not JSON: {e}")))?;
        match ApiObject::from_value(kind, value) {
            Some(Ok(object)) => Ok(object),
            Some(Err(e)) => Err(self.error(format!("reserve wrote a bad {kind}: {e:#}"))),
            None => Err(self.error(format!("reserve wrote a {kind}, which sift does not know"))),
        }
    }

    fn error(&self, message: impl Into<String>) -> PluginError {
        PluginError {
            plugin: if self.identity.name.is_empty() {
                self.label.to_string()
            } else {
                self.identity.name.clone()
            },
            message: message.into(),
        }
    }

    /// Explains a failed call: deadline, memory, trap or other.
    fn call_error(
        &self,
        what: &str,
        store: &Store<InstanceState>,
        e: wasmtime::Error,
    ) -> PluginError {
        let limits = self.runtime.limits();
        if let Some(trap) = e.downcast_ref::<wasmtime::Trap>()
            && *trap == wasmtime::Trap::Interrupt
        {
            return self.error(format!(
                "{what} exceeded its deadline of {} ms",
                limits.call_deadline.as_millis()
            ));
        }
        if store.data().memory_exceeded() {
            return self.error(format!(
                "{what} exceeded its memory limit of {} MiB",
                limits.memory_bytes >> 20
            ));
        }
        // Statuses carry one line: the trap or the host's reason. The wasm
        // backtrace (a line per frame) goes to the debug log.
        tracing::debug!(plugin = %self.label, "{what} failed: {e:?}");
        let text = match e.downcast_ref::<wasmtime::Trap>() {
            Some(trap) => trap.to_string(),
            None => e.root_cause().to_string(),
        };
        let text = text.lines().next().unwrap_or_default().to_string();
        if text.contains("has not been defined") || text.contains("unknown import") {
            return self.error(format!(
                "{what} called a host function the sandbox does not grant: {text}"
            ));
        }
        self.error(format!("{what} trapped: {text}"))
    }

    /// Every call into a component goes through here (Spin's
    /// `Store::set_deadline` idea): a fresh deadline, so no call site sets
    /// one by hand, and a failure explained (deadline, memory, trap).
    fn call<R>(
        &self,
        i: &mut Instance,
        what: &str,
        f: impl FnOnce(&Bindings, &mut Store<InstanceState>) -> wasmtime::Result<R>,
    ) -> Result<R, PluginError> {
        self.call_on(&i.bindings, &mut i.store, what, f)
    }

    /// [`WasmPlugin::call`] on an instance not yet pooled.
    fn call_on<R>(
        &self,
        bindings: &Bindings,
        store: &mut Store<InstanceState>,
        what: &str,
        f: impl FnOnce(&Bindings, &mut Store<InstanceState>) -> wasmtime::Result<R>,
    ) -> Result<R, PluginError> {
        self.call_within(bindings, store, what, self.runtime.deadline_ticks(), f)
    }

    /// [`WasmPlugin::call`] with another deadline (a benchmark's long call).
    fn call_within<R>(
        &self,
        bindings: &Bindings,
        store: &mut Store<InstanceState>,
        what: &str,
        ticks: u64,
        f: impl FnOnce(&Bindings, &mut Store<InstanceState>) -> wasmtime::Result<R>,
    ) -> Result<R, PluginError> {
        store.set_epoch_deadline(ticks);
        f(bindings, store).map_err(|e| self.call_error(what, store, e))
    }

    /// A fresh instance and what it says it is (`describe`).
    fn instantiate(&self) -> Result<Described, PluginError> {
        let mut store = self.runtime.new_store(self.label.clone());
        let bindings = self
            .pre
            .instantiate(&mut store)
            .map_err(|e| self.error(format!("cannot instantiate: {e:#}")))?;
        let info = self.call_on(&bindings, &mut store, "describe", |b, s| b.describe(s))?;
        if info.name.trim().is_empty() {
            return Err(self.error("describe returned an empty plugin name"));
        }
        // The name goes into logs, tables and metrics labels.
        if printable(&info.name) != info.name {
            return Err(self.error(format!(
                "describe returned a plugin name with control characters: {}",
                printable(&info.name)
            )));
        }
        Ok((store, bindings, info))
    }

    /// Configures a described instance with the plugin's arguments.
    fn init_instance(
        &self,
        mut store: Store<InstanceState>,
        bindings: Bindings,
    ) -> Result<Instance, PluginError> {
        self.call_on(&bindings, &mut store, "init", |b, s| b.init(s, &self.args))?
            .map_err(|msg| self.error(format!("rejected its arguments: {msg}")))?;
        self.instances.fetch_add(1, Ordering::Relaxed);
        Ok(Instance {
            store,
            bindings,
            synced_generation: None,
            synced_len: 0,
            prepared_cycle: None,
            groups: HashSet::new(),
            namespaces: None,
            api_objects: None,
        })
    }

    fn new_instance(&self) -> Result<Instance, PluginError> {
        let (store, bindings, _) = self.instantiate()?;
        self.init_instance(store, bindings)
    }

    fn checkout(&self) -> Result<Instance, PluginError> {
        let pooled = self.pool.lock().ok().and_then(|mut p| p.pop());
        match pooled {
            Some(i) => Ok(i),
            None => self.new_instance(),
        }
    }

    fn checkin(&self, instance: Instance) {
        if let Ok(mut p) = self.pool.lock() {
            p.push(instance);
        }
    }

    /// Runs `f` on a pooled instance; the instance goes back to the pool
    /// only if `f` succeeded (a failed instance may be poisoned).
    fn with_instance<R>(
        &self,
        f: impl FnOnce(&Self, &mut Instance) -> Result<R, PluginError>,
    ) -> Result<R, PluginError> {
        let mut instance = self.checkout()?;
        let r = f(self, &mut instance);
        if r.is_ok() {
            self.checkin(instance);
        } else {
            self.instances.fetch_sub(1, Ordering::Relaxed);
        }
        r
    }

    /// Brings the instance's tables to `snapshot`: only the slots that
    /// changed when the snapshot knows the instance's generation, else all.
    /// A plugin that reads the cluster also gets the pods on those slots
    /// (new groups first) and, when they changed, the namespaces.
    fn sync(&self, i: &mut Instance, snapshot: &Snapshot) -> Result<(), PluginError> {
        if i.synced_generation == Some(snapshot.generation()) {
            return Ok(());
        }
        let cluster = self.identity.cluster;
        // Groups accumulate as pods come and go; a full resync drops the
        // ones no node names any more.
        let too_many_groups = cluster && i.groups.len() > 2 * snapshot.group_count() + 1024;
        let changes = i
            .synced_generation
            .filter(|_| !too_many_groups)
            .and_then(|g| snapshot.changes_since(g));
        let all: Vec<u32>;
        let slots: &[u32] = match changes {
            Some(changed) => changed,
            None => {
                all = (0..snapshot.len() as u32).collect();
                &all
            }
        };
        let removals: Vec<u32> = (snapshot.len()..i.synced_len).map(|s| s as u32).collect();
        if cluster && changes.is_none() && !i.groups.is_empty() {
            let gone: Vec<u64> = i.groups.drain().collect();
            self.call(i, "sync-pod-groups", |b, s| {
                b.sync_pod_groups(s, &[], &gone)
            })?;
        }
        let fields = self.identity.node_fields;
        let mut chunks = slots.chunks(SYNC_BATCH);
        let mut removed: &[u32] = &removals;
        loop {
            let chunk = chunks.next().unwrap_or_default();
            if chunk.is_empty() && removed.is_empty() {
                break;
            }
            self.call(i, "sync-nodes", |b, s| {
                b.sync_nodes(s, snapshot, chunk, removed, fields)
            })?;
            self.nodes_sent
                .fetch_add(chunk.len() as u64, Ordering::Relaxed);
            removed = &[];
            if cluster && !chunk.is_empty() {
                let mut new: Vec<&PodGroup> = Vec::new();
                for &slot in chunk {
                    for g in snapshot.pods_on(slot) {
                        if i.groups.insert(g.group.id) {
                            new.push(&g.group);
                        }
                    }
                }
                if !new.is_empty() {
                    self.call(i, "sync-pod-groups", |b, s| b.sync_pod_groups(s, &new, &[]))?;
                }
                self.call(i, "sync-placements", |b, s| {
                    b.sync_placements(s, snapshot, chunk)
                })?;
            }
        }
        if cluster {
            self.sync_namespaces(i, snapshot.namespaces())?;
        }
        if !self.identity.object_kinds.is_empty() {
            self.sync_api_objects(i, snapshot.api_objects())?;
        }
        i.synced_generation = Some(snapshot.generation());
        i.synced_len = snapshot.len();
        Ok(())
    }

    /// Sends the namespaces when they are not the ones the instance has.
    fn sync_namespaces(
        &self,
        i: &mut Instance,
        namespaces: &Arc<Namespaces>,
    ) -> Result<(), PluginError> {
        if i.namespaces
            .as_ref()
            .is_some_and(|n| Arc::ptr_eq(n, namespaces))
        {
            return Ok(());
        }
        let removals: Vec<String> = i
            .namespaces
            .iter()
            .flat_map(|old| old.keys())
            .filter(|name| !namespaces.contains_key(*name))
            .cloned()
            .collect();
        self.call(i, "sync-namespaces", |b, s| {
            b.sync_namespaces(s, namespaces, &removals)
        })?;
        i.namespaces = Some(namespaces.clone());
        Ok(())
    }

    /// Sends, kind by kind, the objects that changed since the instance's
    /// last set (all of them the first time).
    fn sync_api_objects(
        &self,
        i: &mut Instance,
        objects: &Arc<ApiObjects>,
    ) -> Result<(), PluginError> {
        if i.api_objects
            .as_ref()
            .is_some_and(|o| Arc::ptr_eq(o, objects))
        {
            return Ok(());
        }
        for kind in &self.identity.object_kinds {
            let (upserts, removals) = objects.changes_since(i.api_objects.as_deref(), kind);
            if upserts.is_empty() && removals.is_empty() && i.api_objects.is_some() {
                continue;
            }
            // In batches, as nodes are: a cluster may hold tens of
            // thousands of claims, and each batch is a guest allocation.
            let mut removed: &[String] = &removals;
            let mut batches = upserts.chunks(SYNC_BATCH);
            loop {
                let batch = batches.next().unwrap_or_default();
                self.call(i, "sync-objects", |b, s| {
                    b.sync_objects(s, kind, batch, removed)
                })?;
                removed = &[];
                if batch.len() < SYNC_BATCH {
                    break;
                }
            }
        }
        i.api_objects = Some(objects.clone());
        Ok(())
    }

    fn pod_to_wire(&self, pod: &sift_sdk::Pod) -> WirePod {
        versioned::pod_to_wire(self.identity.contract, pod, self.identity.pod_object)
    }

    fn prepare_on(
        &self,
        i: &mut Instance,
        cycle: &Cycle,
        pod: &WirePod,
    ) -> Result<PrepareOutcome, PluginError> {
        self.sync(i, &cycle.snapshot)?;
        i.prepared_cycle = None;
        let result = self
            .call(i, "prepare", |b, s| b.prepare(s, pod).transpose())?
            .ok_or_else(|| self.error("pod converted for another contract version"))?;
        i.prepared_cycle = Some(cycle.id);
        Ok(result)
    }

    fn call_filter(&self, i: &mut Instance, slots: &[u32]) -> Result<Verdicts, PluginError> {
        self.call(i, "filter", |b, s| b.filter(s, slots))
    }
}

impl Plugin for WasmPlugin {
    fn name(&self) -> &str {
        &self.identity.name
    }

    fn version(&self) -> &str {
        &self.version
    }

    fn instances(&self) -> usize {
        WasmPlugin::instances(self)
    }

    fn full_objects(&self) -> crate::input::kube::FullObjects {
        crate::input::kube::FullObjects {
            pod: self.identity.pod_object,
            node: self.identity.node_fields.contains(NodeFields::OBJECT),
        }
    }

    fn extension_points(&self) -> ExtensionPoints {
        self.identity.extension_points
    }

    fn with_args(&self, args: &str) -> Result<Arc<dyn Plugin>, PluginError> {
        let plugin = WasmPlugin {
            identity: self.identity.clone(),
            version: self.version.clone(),
            label: self.label.clone(),
            runtime: self.runtime.clone(),
            pre: self.pre.clone(),
            args: args.to_string(),
            pool: Mutex::new(Vec::new()),
            instances: AtomicUsize::new(0),
            nodes_sent: AtomicU64::new(0),
        };
        // Configuring one instance surfaces bad arguments now.
        let first = plugin.new_instance()?;
        plugin.checkin(first);
        Ok(Arc::new(plugin))
    }

    fn pod_annotation_keys(&self) -> &[String] {
        &self.identity.pod_annotation_keys
    }

    /// One instance runs the pod's PreScore, Score over every feasible
    /// node in one call, and NormalizeScore.
    fn score(&self, cycle: &Cycle, feasible: &[u32]) -> Result<Option<Vec<i64>>, PluginError> {
        if !self
            .identity
            .extension_points
            .contains(ExtensionPoints::SCORE)
        {
            return Err(self.error("is not a score plugin"));
        }
        let pod = self.pod_to_wire(&cycle.pod);
        self.with_instance(|p, i| {
            p.sync(i, &cycle.snapshot)?;
            let unsupported = || p.error(p.identity.contract.lacks("pre-score"));
            match p
                .call(i, "pre-score", |b, s| {
                    b.pre_score(s, &pod, feasible).transpose()
                })?
                .ok_or_else(unsupported)?
            {
                PreScored::Skip => return Ok(None),
                PreScored::Error(s) => return Err(p.error(s.message())),
                PreScored::Proceed => {}
            }
            let raw = p
                .call(i, "score", |b, s| b.score(s, feasible).transpose())?
                .ok_or_else(unsupported)?
                .map_err(|s| p.error(s.message()))?;
            if raw.len() != feasible.len() {
                return Err(p.error(format!(
                    "score returned {} scores for {} nodes",
                    raw.len(),
                    feasible.len()
                )));
            }
            let scores = p
                .call(i, "normalize-scores", |b, s| {
                    b.normalize_scores(s, &raw).transpose()
                })?
                .ok_or_else(unsupported)?
                .map_err(|s| p.error(s.message()))?;
            crate::engine::plugin::check_scores(&p.identity.name, &scores, feasible.len())?;
            Ok(Some(scores))
        })
    }

    fn reserve(&self, cycle: &Cycle, slot: u32) -> Result<Reservation, PluginError> {
        if !self
            .identity
            .extension_points
            .contains(ExtensionPoints::RESERVE)
        {
            return Ok(Reservation::default());
        }
        let pod = self.pod_to_wire(&cycle.pod);
        let reserved = self.with_instance(|p, i| {
            p.sync(i, &cycle.snapshot)?;
            p.call(i, "reserve", |b, s| b.reserve(s, &pod, slot).transpose())?
                .ok_or_else(|| p.error(p.identity.contract.lacks("reserve")))?
                .map_err(|s| p.error(s.message()))
        })?;
        let writes = reserved
            .writes
            .into_iter()
            .map(|(kind, json)| self.checked_write(&kind, &json))
            .collect::<Result<_, _>>()?;
        Ok(Reservation {
            annotations: reserved.annotations,
            writes,
        })
    }

    fn prepare<'a>(&'a self, cycle: &'a Cycle) -> Result<Prepared<'a>, PluginError> {
        let pod = self.pod_to_wire(&cycle.pod);
        let outcome = self.with_instance(|p, i| p.prepare_on(i, cycle, &pod))?;
        Ok(Prepared {
            outcome,
            filter: Box::new(WasmBatch {
                plugin: self,
                cycle,
                pod,
            }),
        })
    }
}

struct WasmBatch<'a> {
    plugin: &'a WasmPlugin,
    cycle: &'a Cycle,
    pod: WirePod,
}

impl WasmBatch<'_> {
    /// The nominated first pass of a component without `filter-nominated`:
    /// the node with the pods added goes into a scratch slot past the
    /// table's end. Such a contract promises
    /// `prepare`, then only `filter` calls within a cycle, so the pod is
    /// prepared again after that sync; afterwards the real node is sent
    /// again (a plugin keeping nodes by name finds it back) and the scratch
    /// slot removed, and the next call prepares again. Two node records and
    /// a prepare per first pass: nominations are few.
    fn filter_scratch(
        &self,
        p: &WasmPlugin,
        i: &mut Instance,
        slot: u32,
        pass: &NominatedPass,
    ) -> Result<Status, PluginError> {
        let snapshot = &self.cycle.snapshot;
        let fields = p.identity.node_fields;
        let scratch = snapshot.len() as u32;
        p.call(i, "sync-nodes", |b, s| {
            b.sync_node(s, scratch, &pass.node, fields).transpose()
        })?
        .ok_or_else(|| p.error(p.identity.contract.lacks("a scratch slot")))?;
        p.nodes_sent.fetch_add(1, Ordering::Relaxed);
        p.prepare_on(i, self.cycle, &self.pod)?;
        let got = p.call_filter(i, &[scratch]);
        // Whatever the filter did, the table is restored.
        i.prepared_cycle = None;
        p.call(i, "sync-nodes", |b, s| {
            b.sync_nodes(s, snapshot, &[slot], &[scratch], fields)
        })?;
        p.nodes_sent.fetch_add(1, Ordering::Relaxed);
        let got = got?;
        match got.rejections.first() {
            None => Ok(Status::success()),
            Some((_, s)) => got.statuses.get(*s as usize).cloned().ok_or_else(|| {
                p.error(format!(
                    "filter answered status #{s} of {}",
                    got.statuses.len()
                ))
            }),
        }
    }

    /// Makes `i` ready to filter for this cycle: synced, pod prepared.
    fn ready(&self, i: &mut Instance) -> Result<(), PluginError> {
        if i.prepared_cycle != Some(self.cycle.id)
            || i.synced_generation != Some(self.cycle.snapshot.generation())
        {
            // Another instance ran this cycle's prepare: replay it here.
            self.plugin.prepare_on(i, self.cycle, &self.pod)?;
        }
        Ok(())
    }
}

impl BatchFilter for WasmBatch<'_> {
    /// Components with `filter-nominated` get the added pods. One
    /// without it gets the node with the pods added in
    /// a scratch slot past the table's end, filters it, and forgets it. A
    /// plugin that reads neither resources, ports nor the cluster view
    /// would answer as for the node itself, and is asked that.
    fn filter_nominated(&self, slot: u32, pass: &NominatedPass) -> Result<Status, PluginError> {
        let id = &self.plugin.identity;
        let fields = id.node_fields;
        if !id.cluster
            && !fields.contains(NodeFields::RESOURCES)
            && !fields.contains(NodeFields::PORTS)
        {
            let mut rejections = Vec::new();
            self.filter(&[slot], &mut rejections)?;
            return Ok(rejections
                .pop()
                .map_or_else(Status::success, |(_, s)| (*s).clone()));
        }
        self.plugin.with_instance(|p, i| {
            self.ready(i)?;
            match p.call(i, "filter-nominated", |b, s| {
                b.filter_nominated(s, slot, &pass.added).transpose()
            })? {
                Some(status) => Ok(status),
                None => self.filter_scratch(p, i, slot, pass),
            }
        })
    }

    fn filter(
        &self,
        slots: &[u32],
        rejections: &mut Vec<(u32, Arc<Status>)>,
    ) -> Result<(), PluginError> {
        self.plugin.with_instance(|p, i| {
            self.ready(i)?;
            let got = p.call_filter(i, slots)?;
            let statuses: Vec<Arc<Status>> = got.statuses.into_iter().map(Arc::new).collect();
            for (index, status) in got.rejections {
                let Some(status) = statuses.get(status as usize) else {
                    return Err(p.error(format!(
                        "filter answered status #{status} of {}",
                        statuses.len()
                    )));
                };
                if index as usize >= slots.len() {
                    return Err(p.error(format!(
                        "filter answered for node index {index} of a batch of {}",
                        slots.len()
                    )));
                }
                rejections.push((index, status.clone()));
            }
            Ok(())
        })
    }
}

/// A pooled instance lent to a benchmark (`sift bench --contract`),
/// prepared for one pod: the calls a benchmark times, with the deadlines
/// and error handling of every other call.
pub struct InstanceProbe<'a> {
    plugin: &'a WasmPlugin,
    instance: &'a mut Instance,
}

impl InstanceProbe<'_> {
    /// `filter` over `slots` with 100 times the usual deadline: one call
    /// over a whole large cluster may take longer than a cycle's.
    pub fn filter_long(&mut self, slots: &[u32]) -> Result<(), PluginError> {
        let long = self.plugin.runtime.deadline_ticks() * 100;
        let i = &mut *self.instance;
        self.plugin
            .call_within(&i.bindings, &mut i.store, "filter", long, |b, s| {
                b.filter(s, slots)
            })
            .map(drop)
    }

    /// `filter` over `slots`.
    pub fn filter(&mut self, slots: &[u32]) -> Result<(), PluginError> {
        self.plugin.call_filter(self.instance, slots).map(drop)
    }

    /// Sends `slot`'s node record with every field, as a contract with one
    /// call per node would carry it.
    pub fn sync_full_node(&mut self, snapshot: &Snapshot, slot: u32) -> Result<(), PluginError> {
        self.plugin.call(self.instance, "sync-nodes", |b, s| {
            b.sync_nodes(s, snapshot, &[slot], &[], NodeFields::ALL)
        })?;
        // The table now holds every field: resync before normal use.
        self.instance.synced_generation = None;
        Ok(())
    }
}

impl WasmPlugin {
    /// Runs `f` on a pooled instance synced to `snapshot` and prepared for
    /// `pod` (for benchmarks: see [`InstanceProbe`]).
    pub fn probe<R>(
        &self,
        snapshot: &Arc<Snapshot>,
        pod: sift_sdk::Pod,
        f: impl FnOnce(&mut InstanceProbe) -> Result<R, PluginError>,
    ) -> Result<R, PluginError> {
        let cycle = Cycle::new(pod, snapshot.clone());
        let wire_pod = self.pod_to_wire(&cycle.pod);
        self.with_instance(|p, i| {
            p.prepare_on(i, &cycle, &wire_pod)?;
            f(&mut InstanceProbe {
                plugin: p,
                instance: i,
            })
        })
    }
}
