//! `sift bench --cluster-view`: what the cluster view costs per cycle, per
//! kind of pod, under the two designs considered for contract 0.2
//! (ARCHITECTURE.md).
//!
//! - **A, synced view (built):** pod groups and placements are synced into
//!   the component like nodes; the plugin counts inside Wasm. Cost per
//!   cycle: the component's `prepare`; once per change: the sync.
//! - **B, host accessors (emulated):** the plugin would ask the host "count
//!   pods matching this selector per domain of this key". The host's part
//!   is the same counting done natively over its snapshot (the native
//!   plugin's `prepare`, which reads the host's own columns and index), the
//!   component's part one call into the host: measured here as an empty
//!   call, so B's figure is a lower bound (the answer's marshalling, one
//!   entry per domain with matching pods, is not included).
//!
//! The pods are PodTopologySpread's and InterPodAffinity's cases: a zone
//! spread constraint, a hostname one, hostname anti-affinity against its
//! own app, and neither (which must cost nothing extra).

use super::contract;
use crate::cluster::Snapshot;
use crate::cluster::synthetic::{synthetic_affinity_pods, synthetic_cluster};
use crate::engine::plugin::{Cycle, Plugin};
use crate::plugins::registry::Catalog;
use anyhow::{Result, anyhow};
use sift_sdk::Pod;
use std::sync::Arc;
use std::time::Instant;

/// Cycles per measurement (pods of one kind, taking turns over apps).
const CYCLES: usize = 200;

/// µs per cycle of `plugin`'s prepare over `pods` (warm: synced once first).
fn prepare_us(plugin: &dyn Plugin, snapshot: &Arc<Snapshot>, pods: &[Pod]) -> Result<f64> {
    let run = |pod: &Pod| -> Result<()> {
        let cycle = Cycle::new(pod.clone(), snapshot.clone());
        plugin.prepare(&cycle).map(drop).map_err(|e| anyhow!("{e}"))
    };
    run(&pods[0])?;
    let started = Instant::now();
    for p in pods.iter().cycle().take(CYCLES) {
        run(p)?;
    }
    Ok(started.elapsed().as_secs_f64() * 1e6 / CYCLES as f64)
}

pub fn run(native: &Catalog, wasm: &Catalog, sizes: &[usize]) -> Result<()> {
    let mix = synthetic_affinity_pods(CYCLES * 4);
    let kinds: [(&str, usize); 4] = [
        ("zone spread", 1),
        ("hostname spread", 2),
        ("hostname anti-affinity", 3),
        ("neither", 0),
    ];
    println!(
        "per-cycle cost of the cluster view: prepare of PodTopologySpread + InterPodAffinity, µs per pod"
    );
    println!(
        "{:>7} {:>8} {:>24} {:>12} {:>14} {:>14} {:>12}",
        "nodes", "pods", "pod kind", "A: wasm", "B: host+call", "(B: native)", "A/B"
    );
    for &n in sizes {
        let snapshot = synthetic_cluster(n)?;
        let bound: usize = (0..snapshot.len() as u32)
            .map(|s| {
                snapshot
                    .pods_on(s)
                    .iter()
                    .map(|g| g.count as usize)
                    .sum::<usize>()
            })
            .sum();
        // A's once-per-change cost: a fresh instance's full sync of the
        // view, timed as the first prepare minus a warm one.
        let mut sync_ms = Vec::new();
        let mut empty_call_us = 0.0;
        for name in ["PodTopologySpread", "InterPodAffinity"] {
            let plugin = wasm
                .wasm_plugins()
                .iter()
                .find(|p| p.identity().name == name)
                .ok_or_else(|| anyhow!("no {name} component"))?;
            let costs = contract::measure(
                plugin,
                &Arc::new(Snapshot::clone(&snapshot)),
                mix[0].clone(),
            )
            .map_err(|e| anyhow!("{e}"))?;
            empty_call_us += costs.empty_call_ns / 1000.0;
            let fresh = Arc::new(Snapshot::clone(&snapshot));
            let started = Instant::now();
            let cycle = Cycle::new(mix[1].clone(), fresh.clone());
            plugin.prepare(&cycle).map_err(|e| anyhow!("{e}"))?;
            let first = started.elapsed();
            let started = Instant::now();
            let cycle = Cycle::new(mix[1].clone(), fresh);
            plugin.prepare(&cycle).map_err(|e| anyhow!("{e}"))?;
            let warm = started.elapsed();
            sync_ms.push(format!(
                "{name} {:.0} ms",
                first.saturating_sub(warm).as_secs_f64() * 1e3
            ));
        }
        for (kind, turn) in kinds {
            let pods: Vec<Pod> = mix
                .iter()
                .enumerate()
                .filter(|(i, _)| i % 4 == turn)
                .map(|(_, p)| p.clone())
                .collect();
            let mut a = 0.0;
            let mut b_native = 0.0;
            for name in ["PodTopologySpread", "InterPodAffinity"] {
                let w = wasm
                    .get(name)
                    .ok_or_else(|| anyhow!("no {name} component"))?;
                let nat = native
                    .get(name)
                    .ok_or_else(|| anyhow!("no native {name}"))?;
                a += prepare_us(w.as_ref(), &snapshot, &pods)?;
                b_native += prepare_us(nat.as_ref(), &snapshot, &pods)?;
            }
            let b = b_native + empty_call_us;
            println!(
                "{n:>7} {bound:>8} {kind:>24} {a:>12.1} {b:>14.1} {b_native:>14.1} {:>12.1}",
                a / b
            );
        }
        println!(
            "{:>7} {:>8} A's full sync of a fresh instance (once per instance; changes are incremental): {}",
            "",
            "",
            sync_ms.join(", ")
        );
    }
    Ok(())
}
