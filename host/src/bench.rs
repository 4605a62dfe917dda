//! `sift bench`: pods/s of the filter phase on a deterministic synthetic
//! cluster, with the Wasm plugins and with the same predicates compiled
//! natively. A benchmark, not a test: numbers depend on the machine.

use crate::cache::CompileCache;
use crate::config::Config;
use crate::engine::{Engine, EngineOptions};
use crate::registry::{Catalog, default_plugins_dir};
use crate::runtime::Runtime;
use crate::snapshot::Snapshot;
use anyhow::{Result, anyhow};
use sift_sdk::resources::Resources;
use sift_sdk::{HostPort, Labels, Node, Pod, SelectorRequirement, SelectorTerm, Taint, Toleration};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(clap::Args)]
pub struct BenchArgs {
    /// Cluster sizes (nodes), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1000,5000,15000")]
    pub nodes: Vec<usize>,
    /// percentageOfNodesToScore values to run (0 = adaptive), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "0,100")]
    pub percentage: Vec<u32>,
    /// Pods to place per measurement (fewer if --seconds runs out first).
    #[arg(long, default_value_t = 5000)]
    pub pods: usize,
    /// Time budget per measurement.
    #[arg(long, default_value_t = 3.0)]
    pub seconds: f64,
    /// Worker threads (default: kube-scheduler's 16).
    #[arg(long, default_value_t = 16)]
    pub parallelism: usize,
    /// Directory of plugin components (default: the bundled plugins).
    #[arg(long = "plugins", value_name = "DIR")]
    pub plugins_dir: Option<PathBuf>,
    /// Skip the Wasm runs (native baseline only).
    #[arg(long, conflicts_with = "wasm_only")]
    pub native_only: bool,
    /// Skip the native runs (for profiling the Wasm path).
    #[arg(long)]
    pub wasm_only: bool,
    /// Instead, write the synthetic cluster of the first --nodes size as a
    /// `kubectl get nodes,pods -A -o json` style List to this file.
    #[arg(long, value_name = "FILE")]
    pub write_cluster: Option<PathBuf>,
    /// Instead, measure the contract designs: per node, one batched call
    /// over a synced node table versus one call carrying the node record.
    #[arg(long)]
    pub contract: bool,
    /// Instead, benchmark `sift serve` on loopback: requests/s and p50/p99
    /// latency per --nodes size in both nodeCacheCapable modes, and plugin
    /// swap latency under load (e.g. `--serve --nodes 500,5000`).
    #[arg(long)]
    pub serve: bool,
    /// Instead, measure one plugin component: size, first compile, cached
    /// load, instantiation, µs per pod over the first --nodes size.
    #[arg(long, value_name = "FILE")]
    pub plugin: Option<PathBuf>,
    /// Concurrent clients for --serve.
    #[arg(long, default_value_t = 4)]
    pub clients: usize,
}

/// SplitMix64: a tiny deterministic generator, so every run benchmarks the
/// same cluster.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

const ZONES: [&str; 3] = ["zone-a", "zone-b", "zone-c"];
const TYPES: [&str; 4] = ["m5.4xlarge", "m5.8xlarge", "c5.9xlarge", "r5.16xlarge"];

/// N nodes over 3 zones, ~15 labels each, some taints, some cordoned,
/// ~10 bound pods each (requests, a few host ports).
pub fn synthetic_nodes(n: usize) -> Vec<Node> {
    let mut rng = Rng(42);
    (0..n)
        .map(|i| {
            let zone = ZONES[i % 3];
            let ty = rng.below(4) as usize;
            let cpu = [16_000, 32_000, 36_000, 64_000][ty];
            let mem: i64 = [64, 128, 72, 512][ty] << 30;
            let name = format!("node-{i:05}");
            let mut labels = vec![
                ("kubernetes.io/hostname".to_string(), name.clone()),
                ("kubernetes.io/os".into(), "linux".into()),
                ("kubernetes.io/arch".into(), "amd64".into()),
                ("topology.kubernetes.io/region".into(), "region-1".into()),
                ("topology.kubernetes.io/zone".into(), zone.into()),
                ("node.kubernetes.io/instance-type".into(), TYPES[ty].into()),
                (
                    "disktype".into(),
                    if rng.chance(50) { "ssd" } else { "hdd" }.into(),
                ),
                ("pool".into(), format!("pool-{}", rng.below(8))),
                ("team".into(), format!("team-{}", rng.below(20))),
                ("rack".into(), format!("rack-{}", rng.below(100))),
                ("generation".into(), (3 + rng.below(5)).to_string()),
                (
                    "example.com/tier".into(),
                    ["gold", "silver", "bronze"][rng.below(3) as usize].into(),
                ),
                (
                    "example.com/cost-center".into(),
                    format!("cc-{}", rng.below(50)),
                ),
                (
                    "example.com/maintenance-window".into(),
                    format!("w{}", rng.below(7)),
                ),
            ];
            let mut scalar = Vec::new();
            if rng.chance(10) {
                labels.push(("example.com/gpu".into(), "a100".into()));
                scalar.push(("nvidia.com/gpu".to_string(), 8));
            } else {
                labels.push(("example.com/gpu".into(), "none".into()));
            }
            let mut taints = Vec::new();
            if rng.chance(10) {
                taints.push(Taint {
                    key: "dedicated".into(),
                    value: "infra".into(),
                    effect: "NoSchedule".into(),
                });
            }
            if rng.chance(5) {
                taints.push(Taint {
                    key: "example.com/flaky".into(),
                    value: String::new(),
                    effect: "PreferNoSchedule".into(),
                });
            }
            let mut requested = Resources::default();
            let mut used_ports = Vec::new();
            let pods = 8 + rng.below(5) as u32;
            for _ in 0..pods {
                requested.milli_cpu += 250 * (1 + rng.below(6) as i64);
                requested.memory += (512 << 20) * (1 + rng.below(8) as i64);
                if rng.chance(5) {
                    used_ports.push(HostPort {
                        port: [8080, 9100, 10250][rng.below(3) as usize],
                        protocol: "TCP".into(),
                        host_ip: "0.0.0.0".into(),
                    });
                }
            }
            Node {
                name,
                labels: Labels::new(labels),
                taints,
                unschedulable: rng.chance(2),
                allocatable: Resources {
                    milli_cpu: cpu,
                    memory: mem,
                    ephemeral_storage: 100 << 30,
                    allowed_pod_number: 110,
                    scalar,
                },
                requested,
                pod_count: pods,
                used_ports,
            }
        })
        .collect()
}

fn req(key: &str, op: &str, values: &[&str]) -> SelectorRequirement {
    SelectorRequirement {
        key: key.into(),
        operator: op.into(),
        values: values.iter().map(|v| v.to_string()).collect(),
    }
}

/// A deterministic mix: plain requests, nodeSelector, required affinity
/// In/NotIn, tolerations, host ports, and large requests that fit few.
pub fn synthetic_pods(n: usize) -> Vec<Pod> {
    let mut rng = Rng(7);
    (0..n)
        .map(|i| {
            let mut pod = Pod {
                name: format!("pod-{i}"),
                namespace: "bench".into(),
                uid: format!("uid-{i}"),
                ..Default::default()
            };
            pod.requests.milli_cpu = 100 * (1 + rng.below(10) as i64);
            pod.requests.memory = (256 << 20) * (1 + rng.below(8) as i64);
            match rng.below(100) {
                0..40 => {}
                40..55 => pod.node_selector = Labels::new(vec![("disktype".into(), "ssd".into())]),
                55..70 => {
                    pod.required_node_affinity = Some(vec![SelectorTerm {
                        match_expressions: vec![
                            req("topology.kubernetes.io/zone", "In", &["zone-a", "zone-b"]),
                            req("node.kubernetes.io/instance-type", "NotIn", &["c5.9xlarge"]),
                        ],
                        match_fields: vec![],
                    }])
                }
                70..80 => {
                    pod.tolerations = vec![Toleration {
                        key: "dedicated".into(),
                        operator: "Equal".into(),
                        value: "infra".into(),
                        effect: "NoSchedule".into(),
                        toleration_seconds: None,
                    }]
                }
                80..90 => {
                    pod.host_ports = vec![HostPort {
                        port: 8080,
                        protocol: "TCP".into(),
                        host_ip: "0.0.0.0".into(),
                    }]
                }
                _ => {
                    pod.requests.milli_cpu = 40_000;
                    pod.requests.memory = 200 << 30;
                }
            }
            pod
        })
        .collect()
}

/// One measurement over sequential cycles: (pods/s, average nodes
/// evaluated per cycle).
fn measure(
    engine: &mut Engine,
    snapshot: &Arc<Snapshot>,
    pods: &[Pod],
    budget: Duration,
) -> (f64, f64) {
    // Warm up: instances created and synced outside the timing.
    for p in pods.iter().take(20) {
        engine.find_nodes_that_fit(snapshot, p.clone());
    }
    let started = Instant::now();
    let mut done = 0;
    let mut evaluated = 0;
    for p in pods {
        let o = engine.find_nodes_that_fit(snapshot, p.clone());
        evaluated += o.nodes_evaluated;
        if let Some(e) = o.error {
            eprintln!("bench: cycle error: {e}");
        }
        done += 1;
        if started.elapsed() > budget && done >= 20 {
            break;
        }
    }
    (
        done as f64 / started.elapsed().as_secs_f64(),
        evaluated as f64 / done as f64,
    )
}

pub fn run(a: BenchArgs) -> Result<()> {
    if let Some(path) = &a.write_cluster {
        let n = a.nodes.first().copied().unwrap_or(5000);
        let list = kubectl_list(&synthetic_nodes(n));
        std::fs::write(path, serde_json::to_vec(&list)?)
            .map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
        println!("wrote {n} nodes and their pods to {}", path.display());
        return Ok(());
    }
    if let Some(file) = &a.plugin {
        let n = a.nodes.first().copied().unwrap_or(5000);
        return crate::plugin_bench::run(file, n, a.seconds);
    }
    if a.serve {
        let dir = crate::loadgen::plugins_dir(a.plugins_dir.clone())?;
        return crate::loadgen::run(&dir, &a.nodes, a.seconds, a.clients.max(1));
    }
    let config = Config::default();
    let native = Catalog::native(&config)?;
    let wasm = if a.native_only {
        None
    } else {
        let dir = a
            .plugins_dir
            .clone()
            .or_else(default_plugins_dir)
            .ok_or_else(|| anyhow!("no plugins directory: build them (scripts/build-plugins.sh) or pass --plugins DIR"))?;
        let runtime = Arc::new(Runtime::new(
            config.limits()?,
            config.sandbox.clone(),
            CompileCache::default_dir().map(CompileCache::new),
        )?);
        Some(Catalog::load_wasm(&runtime, Some(&dir), &[], &config)?)
    };
    if a.contract {
        let catalog = wasm
            .as_ref()
            .ok_or_else(|| anyhow!("--contract needs the Wasm plugins"))?;
        return contract(catalog, &a.nodes);
    }
    let filters = config.filter_plugins();
    let pods = synthetic_pods(a.pods);
    let budget = Duration::from_secs_f64(a.seconds);
    println!(
        "sift bench: {} pods per run (max {:.1}s), parallelism {}, {} CPU(s)",
        a.pods,
        a.seconds,
        a.parallelism,
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    );
    println!(
        "{:>7} {:>10} {:>11} {:>14} {:>14} {:>12}",
        "nodes", "percentage", "nodes/cycle", "native pods/s", "wasm pods/s", "wasm/native"
    );
    for &n in &a.nodes {
        let snapshot = Arc::new(Snapshot::from_nodes(synthetic_nodes(n))?);
        for &pct in &a.percentage {
            let options = EngineOptions {
                percentage_of_nodes_to_score: pct,
                parallelism: a.parallelism,
                always_check_all_predicates: false,
            };
            let (native_rate, per_cycle) = if a.wasm_only {
                (f64::NAN, f64::NAN)
            } else {
                let mut native_engine = Engine::new(native.select(&filters)?, options.clone())?;
                measure(&mut native_engine, &snapshot, &pods, budget)
            };
            let mut per_cycle = per_cycle;
            let wasm_rate = match &wasm {
                Some(c) => {
                    let mut e = Engine::new(c.select(&filters)?, options.clone())?;
                    let (rate, evaluated) = measure(&mut e, &snapshot, &pods, budget);
                    if per_cycle.is_nan() {
                        per_cycle = evaluated;
                    }
                    Some(rate)
                }
                None => None,
            };
            let pct_label = if pct == 0 {
                "adaptive".to_string()
            } else {
                pct.to_string()
            };
            match wasm_rate {
                Some(w) => println!(
                    "{n:>7} {pct_label:>10} {per_cycle:>11.0} {native_rate:>14.0} {w:>14.0} {:>12.2}",
                    native_rate / w
                ),
                None => println!(
                    "{n:>7} {pct_label:>10} {per_cycle:>11.0} {native_rate:>14.0} {:>14} {:>12}",
                    "-", "-"
                ),
            }
        }
    }
    Ok(())
}

/// Per-node cost of each plugin under the two contract designs.
fn contract(catalog: &Catalog, sizes: &[usize]) -> Result<()> {
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
            let c = p
                .measure_contract(&snapshot, pod.clone())
                .map_err(|e| anyhow!("{e}"))?;
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

/// The synthetic cluster as kubectl prints it: Nodes, and for each node its
/// bound pods (the node's usage split evenly over them).
pub fn kubectl_list(nodes: &[Node]) -> serde_json::Value {
    use serde_json::json;
    let mut items = Vec::new();
    for n in nodes {
        let labels: serde_json::Map<String, serde_json::Value> = n
            .labels
            .iter()
            .map(|(k, v)| (k.to_string(), json!(v)))
            .collect();
        let mut allocatable = json!({
            "cpu": format!("{}m", n.allocatable.milli_cpu),
            "memory": n.allocatable.memory.to_string(),
            "ephemeral-storage": n.allocatable.ephemeral_storage.to_string(),
            "pods": n.allocatable.allowed_pod_number.to_string(),
        });
        for (name, amount) in &n.allocatable.scalar {
            allocatable[name] = json!(amount.to_string());
        }
        let taints: Vec<_> = n
            .taints
            .iter()
            .map(|t| json!({"key": t.key, "value": t.value, "effect": t.effect}))
            .collect();
        items.push(json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": n.name, "labels": labels},
            "spec": {"taints": taints, "unschedulable": n.unschedulable},
            "status": {"capacity": allocatable, "allocatable": allocatable},
        }));
        let count = i64::from(n.pod_count.max(1));
        for k in 0..count {
            let share = |total: i64| total / count + if k == 0 { total % count } else { 0 };
            let ports: Vec<_> = if k == 0 {
                n.used_ports
                    .iter()
                    .map(|p| json!({"containerPort": p.port, "hostPort": p.port, "protocol": p.protocol}))
                    .collect()
            } else {
                Vec::new()
            };
            items.push(json!({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": format!("{}-pod-{k}", n.name), "namespace": "default"},
                "spec": {"nodeName": n.name, "containers": [{
                    "name": "app", "image": "registry.example/app:1",
                    "ports": ports,
                    "resources": {"requests": {
                        "cpu": format!("{}m", share(n.requested.milli_cpu)),
                        "memory": share(n.requested.memory).to_string(),
                    }},
                }]},
                "status": {"phase": "Running"},
            }));
        }
    }
    json!({"apiVersion": "v1", "kind": "List", "items": items})
}
