//! A filter plugin running as a Wasm component.
//!
//! Instances are pooled and reused: a worker takes one, calls it, and puts
//! it back, so the engine's workers run the plugin in parallel, never
//! queued behind one instance. Each instance keeps its own copy of the node
//! table and is synced only when the snapshot it last saw is replaced. An
//! instance that trapped, missed its deadline or ran out of memory is
//! dropped and replaced by a fresh one on the next call.

use crate::cluster::Snapshot;
use crate::engine::plugin::{
    BatchFilter, Cycle, FilterPlugin, PluginError, PrepareOutcome, Prepared,
};
use crate::runtime::bindings::sift::predicate::types as wire;
use crate::runtime::bindings::{PredicatePlugin, PredicatePluginPre};
use crate::runtime::{InstanceState, Runtime};
use crate::text::printable;
use sift_sdk::{Code, NodeFields, Status};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use wasmtime::Store;

/// Nodes per `sync-nodes` call: bounds the guest's transient memory.
const SYNC_BATCH: usize = 1024;

/// Who a component says it is (`describe`) and how it was loaded.
#[derive(Clone, Debug)]
pub struct PluginIdentity {
    pub name: String,
    pub node_fields: NodeFields,
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
    pre: PredicatePluginPre<InstanceState>,
    args: String,
    pool: Mutex<Vec<Instance>>,
    /// Live instances: pooled or in use.
    instances: AtomicUsize,
}

/// A fresh, not yet configured instance with its declared name and fields.
type Described = (Store<InstanceState>, PredicatePlugin, (String, NodeFields));

struct Instance {
    store: Store<InstanceState>,
    bindings: PredicatePlugin,
    synced_generation: Option<u64>,
    synced_len: usize,
    prepared_cycle: Option<u64>,
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
        let bytes = std::fs::read(path)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
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
        let linker = runtime.linker_for(&compiled.component)?;
        let instance_pre = linker
            .instantiate_pre(&compiled.component)
            .map_err(|e| anyhow::anyhow!("{} cannot be linked: {e:#}", path.display()))?;
        let pre = PredicatePluginPre::new(instance_pre).map_err(|e| {
            anyhow::anyhow!(
                "{} does not implement sift's contract (world sift:predicate/predicate-plugin@0.1.0): {e:#}",
                path.display()
            )
        })?;
        let mut plugin = WasmPlugin {
            identity: PluginIdentity {
                name: String::new(),
                node_fields: NodeFields::ALL,
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
        };
        plugin.version = plugin.identity.version().to_string();
        // One instance learns the name, is configured, and starts the pool.
        let (mut store, bindings, (name, fields)) = plugin
            .instantiate()
            .map_err(|e| anyhow::anyhow!("{}: {}", path.display(), e.message))?;
        plugin.args = args_for(&name);
        plugin.identity.name = name.clone();
        plugin.identity.node_fields = fields;
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

    /// A fresh instance and what it says it is (`describe`).
    fn instantiate(&self) -> Result<Described, PluginError> {
        let mut store = self.runtime.new_store(self.label.clone());
        let bindings = self
            .pre
            .instantiate(&mut store)
            .map_err(|e| self.error(format!("cannot instantiate: {e:#}")))?;
        let info = bindings
            .sift_predicate_predicate()
            .call_describe(&mut store)
            .map_err(|e| self.call_error("describe", &store, e))?;
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
        Ok((
            store,
            bindings,
            (info.name, node_fields_from_wire(info.node_fields)),
        ))
    }

    /// Configures a described instance with the plugin's arguments.
    fn init_instance(
        &self,
        mut store: Store<InstanceState>,
        bindings: PredicatePlugin,
    ) -> Result<Instance, PluginError> {
        store.set_epoch_deadline(self.runtime.deadline_ticks());
        bindings
            .sift_predicate_predicate()
            .call_init(&mut store, &self.args)
            .map_err(|e| self.call_error("init", &store, e))?
            .map_err(|msg| self.error(format!("rejected its arguments: {msg}")))?;
        self.instances.fetch_add(1, Ordering::Relaxed);
        Ok(Instance {
            store,
            bindings,
            synced_generation: None,
            synced_len: 0,
            prepared_cycle: None,
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

    /// Brings the instance's node table to `snapshot`: only the slots that
    /// changed when the snapshot knows the instance's generation, else all.
    fn sync(&self, i: &mut Instance, snapshot: &Snapshot) -> Result<(), PluginError> {
        if i.synced_generation == Some(snapshot.generation()) {
            return Ok(());
        }
        let all: Vec<u32>;
        let slots: &[u32] = match i.synced_generation.and_then(|g| snapshot.changes_since(g)) {
            Some(changed) => changed,
            None => {
                all = (0..snapshot.len() as u32).collect();
                &all
            }
        };
        let removals: Vec<u32> = (snapshot.len()..i.synced_len).map(|s| s as u32).collect();
        let fields = self.identity.node_fields;
        let api = i.bindings.sift_predicate_predicate();
        let mut chunks = slots.chunks(SYNC_BATCH);
        let mut removed: &[u32] = &removals;
        loop {
            let chunk = chunks.next().unwrap_or_default();
            if chunk.is_empty() && removed.is_empty() {
                break;
            }
            let upserts: Vec<wire::NodeEntry> = chunk
                .iter()
                .map(|&slot| wire::NodeEntry {
                    slot,
                    node: node_to_wire(snapshot.node(slot), fields),
                })
                .collect();
            i.store.set_epoch_deadline(self.runtime.deadline_ticks());
            api.call_sync_nodes(&mut i.store, &upserts, removed)
                .map_err(|e| self.call_error("sync-nodes", &i.store, e))?;
            removed = &[];
        }
        i.synced_generation = Some(snapshot.generation());
        i.synced_len = snapshot.len();
        Ok(())
    }

    fn prepare_on(
        &self,
        i: &mut Instance,
        cycle: &Cycle,
        pod: &wire::Pod,
    ) -> Result<PrepareOutcome, PluginError> {
        self.sync(i, &cycle.snapshot)?;
        i.prepared_cycle = None;
        i.store.set_epoch_deadline(self.runtime.deadline_ticks());
        let result = i
            .bindings
            .sift_predicate_predicate()
            .call_prepare(&mut i.store, pod)
            .map_err(|e| self.call_error("prepare", &i.store, e))?;
        i.prepared_cycle = Some(cycle.id);
        Ok(match result {
            wire::PrepareResult::Proceed => PrepareOutcome::Proceed,
            wire::PrepareResult::Skip => PrepareOutcome::Skip,
            wire::PrepareResult::Reject(s) => PrepareOutcome::Reject(status_from_wire(s)),
            wire::PrepareResult::Narrow(names) => PrepareOutcome::Narrow(names),
        })
    }
}

impl FilterPlugin for WasmPlugin {
    fn name(&self) -> &str {
        &self.identity.name
    }

    fn version(&self) -> &str {
        &self.version
    }

    fn instances(&self) -> usize {
        WasmPlugin::instances(self)
    }

    fn prepare<'a>(&'a self, cycle: &'a Cycle) -> Result<Prepared<'a>, PluginError> {
        let pod = pod_to_wire(&cycle.pod);
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
    pod: wire::Pod,
}

impl BatchFilter for WasmBatch<'_> {
    fn filter(
        &self,
        slots: &[u32],
        rejections: &mut Vec<(u32, Arc<Status>)>,
    ) -> Result<(), PluginError> {
        self.plugin.with_instance(|p, i| {
            if i.prepared_cycle != Some(self.cycle.id)
                || i.synced_generation != Some(self.cycle.snapshot.generation())
            {
                // Another instance ran this cycle's prepare: replay it here.
                p.prepare_on(i, self.cycle, &self.pod)?;
            }
            i.store.set_epoch_deadline(p.runtime.deadline_ticks());
            let got = i
                .bindings
                .sift_predicate_predicate()
                .call_filter(&mut i.store, slots)
                .map_err(|e| p.call_error("filter", &i.store, e))?;
            let statuses: Vec<Arc<Status>> = got
                .statuses
                .into_iter()
                .map(|s| Arc::new(status_from_wire(s)))
                .collect();
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

fn status_from_wire(s: wire::Status) -> Status {
    Status::new(
        match s.code {
            wire::Code::Success => Code::Success,
            wire::Code::Error => Code::Error,
            wire::Code::Unschedulable => Code::Unschedulable,
            wire::Code::UnschedulableAndUnresolvable => Code::UnschedulableAndUnresolvable,
            wire::Code::Skip => Code::Skip,
        },
        s.reasons,
    )
}

fn node_fields_from_wire(f: wire::NodeFields) -> NodeFields {
    let mut out = NodeFields::NONE;
    for (theirs, ours) in [
        (wire::NodeFields::LABELS, NodeFields::LABELS),
        (wire::NodeFields::TAINTS, NodeFields::TAINTS),
        (wire::NodeFields::UNSCHEDULABLE, NodeFields::UNSCHEDULABLE),
        (wire::NodeFields::RESOURCES, NodeFields::RESOURCES),
        (wire::NodeFields::PORTS, NodeFields::PORTS),
    ] {
        if f & theirs == theirs {
            out = out | ours;
        }
    }
    out
}

fn labels_to_wire(l: &sift_sdk::Labels) -> Vec<wire::Label> {
    l.iter()
        .map(|(k, v)| wire::Label {
            key: k.to_string(),
            value: v.to_string(),
        })
        .collect()
}

fn resources_to_wire(r: &sift_sdk::Resources) -> wire::Resources {
    wire::Resources {
        milli_cpu: r.milli_cpu,
        memory: r.memory,
        ephemeral_storage: r.ephemeral_storage,
        allowed_pod_number: r.allowed_pod_number,
        scalar: r
            .scalar
            .iter()
            .map(|(name, amount)| wire::ResourceAmount {
                name: name.clone(),
                amount: *amount,
            })
            .collect(),
    }
}

fn port_to_wire(p: &sift_sdk::HostPort) -> wire::HostPort {
    wire::HostPort {
        port: p.port,
        protocol: p.protocol.clone(),
        host_ip: p.host_ip.clone(),
    }
}

fn empty_resources() -> wire::Resources {
    resources_to_wire(&sift_sdk::Resources::default())
}

/// A node with only the fields the plugin reads.
fn node_to_wire(n: &sift_sdk::Node, fields: NodeFields) -> wire::Node {
    let has = |f| fields.contains(f);
    let resources = has(NodeFields::RESOURCES);
    wire::Node {
        name: n.name.clone(),
        labels: if has(NodeFields::LABELS) {
            labels_to_wire(&n.labels)
        } else {
            Vec::new()
        },
        taints: if has(NodeFields::TAINTS) {
            n.taints
                .iter()
                .map(|t| wire::Taint {
                    key: t.key.clone(),
                    value: t.value.clone(),
                    effect: t.effect.clone(),
                })
                .collect()
        } else {
            Vec::new()
        },
        unschedulable: has(NodeFields::UNSCHEDULABLE) && n.unschedulable,
        allocatable: if resources {
            resources_to_wire(&n.allocatable)
        } else {
            empty_resources()
        },
        requested: if resources {
            resources_to_wire(&n.requested)
        } else {
            empty_resources()
        },
        pod_count: if resources { n.pod_count } else { 0 },
        used_ports: if has(NodeFields::PORTS) {
            n.used_ports.iter().map(port_to_wire).collect()
        } else {
            Vec::new()
        },
    }
}

fn requirement_to_wire(r: &sift_sdk::SelectorRequirement) -> wire::SelectorRequirement {
    wire::SelectorRequirement {
        key: r.key.clone(),
        operator: r.operator.clone(),
        values: r.values.clone(),
    }
}

fn pod_to_wire(p: &sift_sdk::Pod) -> wire::Pod {
    wire::Pod {
        name: p.name.clone(),
        namespace: p.namespace.clone(),
        uid: p.uid.clone(),
        labels: labels_to_wire(&p.labels),
        node_name: p.node_name.clone(),
        node_selector: labels_to_wire(&p.node_selector),
        required_node_affinity: p.required_node_affinity.as_ref().map(|terms| {
            terms
                .iter()
                .map(|t| wire::SelectorTerm {
                    match_expressions: t
                        .match_expressions
                        .iter()
                        .map(requirement_to_wire)
                        .collect(),
                    match_fields: t.match_fields.iter().map(requirement_to_wire).collect(),
                })
                .collect()
        }),
        tolerations: p
            .tolerations
            .iter()
            .map(|t| wire::Toleration {
                key: t.key.clone(),
                operator: t.operator.clone(),
                value: t.value.clone(),
                effect: t.effect.clone(),
                toleration_seconds: t.toleration_seconds,
            })
            .collect(),
        host_ports: p.host_ports.iter().map(port_to_wire).collect(),
        requests: resources_to_wire(&p.requests),
    }
}

/// Per-node cost of the two contract designs considered (ARCHITECTURE.md),
/// measured on a loaded plugin.
#[derive(Clone, Copy, Debug)]
pub struct ContractCosts {
    /// Node table synced once; one `filter` call over all nodes.
    pub batched_ns_per_node: f64,
    /// One call per node carrying the full node record (emulated as
    /// `sync-nodes` with that node, then `filter` of its slot).
    pub record_per_call_ns_per_node: f64,
    /// One `filter` call over no nodes: the fixed cost of a call.
    pub empty_call_ns: f64,
}

impl WasmPlugin {
    /// Measures [`ContractCosts`] for this plugin over `snapshot`'s nodes.
    pub fn measure_contract(
        &self,
        snapshot: &Arc<Snapshot>,
        pod: sift_sdk::Pod,
    ) -> Result<ContractCosts, PluginError> {
        let cycle = Cycle::new(pod, snapshot.clone());
        let wire_pod = pod_to_wire(&cycle.pod);
        self.with_instance(|p, i| {
            p.prepare_on(i, &cycle, &wire_pod)?;
            let api = i.bindings.sift_predicate_predicate();
            let slots: Vec<u32> = (0..snapshot.len() as u32).collect();
            let started = std::time::Instant::now();
            i.store.set_epoch_deadline(p.runtime.deadline_ticks() * 100);
            api.call_filter(&mut i.store, &slots)
                .map_err(|e| p.call_error("filter", &i.store, e))?;
            let batched = started.elapsed().as_nanos() as f64 / slots.len().max(1) as f64;
            const CALLS: u32 = 20_000;
            let started = std::time::Instant::now();
            for _ in 0..CALLS {
                api.call_filter(&mut i.store, &[])
                    .map_err(|e| p.call_error("filter", &i.store, e))?;
            }
            let empty_call_ns = started.elapsed().as_nanos() as f64 / CALLS as f64;
            let fields = NodeFields::ALL;
            let started = std::time::Instant::now();
            for (slot, node) in snapshot.nodes().iter().enumerate() {
                let entry = wire::NodeEntry {
                    slot: slot as u32,
                    node: node_to_wire(node, fields),
                };
                i.store.set_epoch_deadline(p.runtime.deadline_ticks());
                api.call_sync_nodes(&mut i.store, std::slice::from_ref(&entry), &[])
                    .map_err(|e| p.call_error("sync-nodes", &i.store, e))?;
                api.call_filter(&mut i.store, &[slot as u32])
                    .map_err(|e| p.call_error("filter", &i.store, e))?;
            }
            let per_call = started.elapsed().as_nanos() as f64 / snapshot.len().max(1) as f64;
            // The table now holds every field: resync before normal use.
            i.synced_generation = None;
            Ok(ContractCosts {
                batched_ns_per_node: batched,
                record_per_call_ns_per_node: per_call,
                empty_call_ns,
            })
        })
    }
}
