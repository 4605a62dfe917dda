//! `sift bench --contract`: what a node costs each plugin under the two
//! contract designs considered (ARCHITECTURE.md): one batched call over a
//! node table synced once, against one call carrying the node's record.

use crate::cluster::Snapshot;
use crate::cluster::synthetic::{synthetic_nodes, synthetic_pods};
use crate::contract::WasmPlugin;
use crate::engine::plugin::PluginError;
use crate::plugins::registry::Catalog;
use anyhow::{Result, anyhow};
use std::sync::Arc;
use std::time::Instant;

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

/// Measures [`ContractCosts`] for `plugin` over `snapshot`'s nodes.
pub fn measure(
    plugin: &WasmPlugin,
    snapshot: &Arc<Snapshot>,
    pod: sift_sdk::Pod,
) -> Result<ContractCosts, PluginError> {
    plugin.probe(snapshot, pod, |probe| {
        let slots: Vec<u32> = (0..snapshot.len() as u32).collect();
        let started = Instant::now();
        probe.filter_long(&slots)?;
        let batched = started.elapsed().as_nanos() as f64 / slots.len().max(1) as f64;
        const CALLS: u32 = 20_000;
        let started = Instant::now();
        for _ in 0..CALLS {
            probe.filter(&[])?;
        }
        let empty_call_ns = started.elapsed().as_nanos() as f64 / CALLS as f64;
        let started = Instant::now();
        for slot in 0..snapshot.len() as u32 {
            probe.sync_full_node(snapshot, slot)?;
            probe.filter(&[slot])?;
        }
        let per_call = started.elapsed().as_nanos() as f64 / snapshot.len().max(1) as f64;
        Ok(ContractCosts {
            batched_ns_per_node: batched,
            record_per_call_ns_per_node: per_call,
            empty_call_ns,
        })
    })
}

/// Per-node cost of each plugin under the two contract designs.
pub fn run(catalog: &Catalog, sizes: &[usize]) -> Result<()> {
    // A pod every plugin has work for: affinity, toleration, host port, requests.
    let mut pod = synthetic_pods(60).into_iter().nth(55).unwrap_or_default();
    pod.tolerations = synthetic_pods(75)
        .into_iter()
        .nth(72)
        .map(|p| p.tolerations)
        .unwrap_or_default();
    pod.host_ports = synthetic_pods(85)
        .into_iter()
        .nth(82)
        .map(|p| p.host_ports)
        .unwrap_or_default();
    println!(
        "{:>7} {:18} {:>16} {:>20} {:>7} {:>14}",
        "nodes", "plugin", "batched ns/node", "record/call ns/node", "ratio", "empty call ns"
    );
    for &n in sizes {
        let snapshot = Arc::new(Snapshot::from_nodes(synthetic_nodes(n))?);
        for p in catalog.wasm_plugins() {
            let c = measure(p, &snapshot, pod.clone()).map_err(|e| anyhow!("{e}"))?;
            println!(
                "{n:>7} {:18} {:>16.0} {:>20.0} {:>7.1} {:>14.0}",
                p.identity().name,
                c.batched_ns_per_node,
                c.record_per_call_ns_per_node,
                c.record_per_call_ns_per_node / c.batched_ns_per_node,
                c.empty_call_ns
            );
        }
    }
    Ok(())
}
