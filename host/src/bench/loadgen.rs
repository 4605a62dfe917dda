//! `sift bench --serve`: requests/s and latency of `sift serve`'s filter
//! endpoint under a loopback load generator, in both nodeCacheCapable
//! modes, and the latency of a plugin swap (file written -> new version
//! serving) with the p99 of requests while swaps happen.
//!
//! The server is a child process (the same `sift` binary), so its cost is
//! measured as a kube-scheduler would see it; the clients use ureq, a
//! small blocking HTTP client.

use crate::cluster::synthetic::{kubectl_list, synthetic_nodes, synthetic_pods};
use anyhow::{Context, Result, anyhow};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use sift_sdk::Pod;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A pending pod as kube-scheduler would send it.
pub fn pod_json(p: &Pod) -> Value {
    let selector: serde_json::Map<String, Value> = p
        .node_selector
        .iter()
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect();
    let affinity = p.required_node_affinity.as_ref().map(|terms| {
        let terms: Vec<Value> = terms
            .iter()
            .map(|t| {
                let exprs: Vec<Value> = t
                    .match_expressions
                    .iter()
                    .map(|r| json!({"key": r.key, "operator": r.operator, "values": r.values}))
                    .collect();
                json!({"matchExpressions": exprs})
            })
            .collect();
        json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
            {"nodeSelectorTerms": terms}}})
    });
    let tolerations: Vec<Value> = p
        .tolerations
        .iter()
        .map(
            |t| json!({"key": t.key, "operator": t.operator, "value": t.value, "effect": t.effect}),
        )
        .collect();
    let ports: Vec<Value> = p
        .host_ports
        .iter()
        .map(|h| json!({"containerPort": h.port, "hostPort": h.port, "protocol": h.protocol}))
        .collect();
    json!({
        "metadata": {"name": p.name, "namespace": p.namespace, "uid": p.uid},
        "spec": {
            "nodeSelector": selector,
            "affinity": affinity,
            "tolerations": tolerations,
            "containers": [{"name": "app", "image": "registry.example/app:1", "ports": ports,
                "resources": {"requests": {
                    "cpu": format!("{}m", p.requests.milli_cpu),
                    "memory": p.requests.memory.to_string()}}}],
        },
        "status": {"phase": "Pending"},
    })
}

struct ServerProcess {
    child: Child,
    base: String,
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_server(plugins: &Path, cluster: &Path, clients: usize) -> Result<ServerProcess> {
    let exe = std::env::current_exe().context("cannot find the sift executable")?;
    let mut child = Command::new(exe)
        .args(["serve", "--listen", "127.0.0.1:0", "--log-level", "error"])
        .arg("--plugins")
        .arg(plugins)
        .arg("--cluster")
        .arg(cluster)
        .args([
            "--max-in-flight",
            &clients.to_string(),
            "--max-queue",
            "1024",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("cannot start sift serve")?;
    let mut line = String::new();
    BufReader::new(child.stdout.take().ok_or_else(|| anyhow!("no stdout"))?)
        .read_line(&mut line)?;
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .ok_or_else(|| anyhow!("sift serve did not start: {line:?}"))?
        .to_string();
    Ok(ServerProcess {
        child,
        base: format!("http://{addr}"),
    })
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .into()
}

/// Latencies of the requests `clients` threads completed in `budget`,
/// and how many failed.
fn load(url: &str, bodies: &[String], clients: usize, budget: Duration) -> (Vec<Duration>, usize) {
    let deadline = Instant::now() + budget;
    let results: Vec<(Vec<Duration>, usize)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..clients)
            .map(|c| {
                s.spawn(move || {
                    let agent = agent();
                    let mut lat = Vec::new();
                    let mut failed = 0;
                    let mut i = c;
                    while Instant::now() < deadline {
                        let body = &bodies[i % bodies.len()];
                        i += clients;
                        let started = Instant::now();
                        let ok = agent
                            .post(url)
                            .header("Content-Type", "application/json")
                            .send(body.as_str())
                            .map(|mut r| {
                                let text = r.body_mut().read_to_string().unwrap_or_default();
                                r.status() == 200 && text.contains("\"Error\":\"\"")
                            })
                            .unwrap_or(false);
                        if ok {
                            lat.push(started.elapsed());
                        } else {
                            failed += 1;
                        }
                    }
                    (lat, failed)
                })
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    let mut all = Vec::new();
    let mut failed = 0;
    for (l, f) in results {
        all.extend(l);
        failed += f;
    }
    all.sort();
    (all, failed)
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e3
}

/// The component with a custom section appended: the same behaviour, a
/// new content hash (a new version as far as sift can tell).
fn variant(component: &[u8], n: u32) -> Vec<u8> {
    let name = b"sift-bench";
    let payload = n.to_le_bytes();
    let mut out = component.to_vec();
    out.push(0); // custom section
    let size = 1 + name.len() + payload.len();
    out.push(size as u8);
    out.push(name.len() as u8);
    out.extend_from_slice(name);
    out.extend_from_slice(&payload);
    out
}

fn version_of(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>()[..12]
        .to_string()
}

fn serving_version(agent: &ureq::Agent, base: &str, plugin: &str) -> Option<String> {
    let text = agent
        .get(&format!("{base}/status"))
        .call()
        .ok()?
        .body_mut()
        .read_to_string()
        .ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    v["plugins"]
        .as_array()?
        .iter()
        .find(|p| p["name"] == plugin)
        .and_then(|p| p["version"].as_str())
        .map(str::to_string)
}

pub fn run(plugins_dir: &Path, sizes: &[usize], seconds: f64, clients: usize) -> Result<()> {
    let work = std::env::temp_dir().join(format!("sift-bench-serve-{}", std::process::id()));
    let plugins = work.join("plugins");
    std::fs::create_dir_all(&plugins)?;
    for f in crate::plugins::registry::component_files(plugins_dir)? {
        std::fs::copy(&f, plugins.join(f.file_name().unwrap_or_default()))?;
    }
    let swapped_file = plugins.join("sift_plugin_node_name.wasm");
    let original = std::fs::read(&swapped_file)
        .with_context(|| format!("{} has no NodeName component", plugins_dir.display()))?;
    let pods: Vec<String> = synthetic_pods(200)
        .iter()
        .map(|p| pod_json(p).to_string())
        .collect();
    println!(
        "sift bench --serve: {clients} client(s) on loopback, {seconds:.1}s per row, {} CPU(s); every node of the cluster in every request",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!(
        "{:>6} {:22} {:>8} {:>9} {:>9} {:>7}",
        "nodes", "mode", "req/s", "p50 ms", "p99 ms", "failed"
    );
    let bench = Bench {
        work,
        plugins,
        swapped_file,
        original,
        pods,
        clients,
        seconds,
    };
    let result = sizes.iter().try_for_each(|&n| bench.rows(n));
    let _ = std::fs::remove_dir_all(&bench.work);
    result
}

/// What the rows of every cluster size share.
struct Bench {
    /// A temporary directory: the plugins served and the cluster files.
    work: PathBuf,
    plugins: PathBuf,
    /// The component rewritten to measure swaps (NodeName), and its bytes.
    swapped_file: PathBuf,
    original: Vec<u8>,
    /// Pending pods as JSON.
    pods: Vec<String>,
    clients: usize,
    seconds: f64,
}

impl Bench {
    /// The rows of an `n`-node cluster: both request modes, then requests
    /// while NodeName is swapped, then the swaps' latency.
    fn rows(&self, n: usize) -> Result<()> {
        let clients = self.clients;
        let list = kubectl_list(&synthetic_nodes(n));
        let cluster = self.work.join(format!("cluster-{n}.json"));
        std::fs::write(&cluster, serde_json::to_vec(&list)?)?;
        let (by_names, by_objects) = self.bodies(&list)?;
        std::fs::write(&self.swapped_file, &self.original)?;
        let server = start_server(&self.plugins, &cluster, clients)?;
        let url = format!("{}/scheduler/filter", server.base);
        // Warm up: instances created and synced.
        load(
            &url,
            &by_names[..clients.min(by_names.len())],
            clients,
            Duration::from_millis(300),
        );
        let budget = Duration::from_secs_f64(self.seconds);
        let row = |mode: &str, bodies: &[String]| {
            let (lat, failed) = load(&url, bodies, clients, budget);
            println!(
                "{n:>6} {mode:22} {:>8.0} {:>9.2} {:>9.2} {failed:>7}",
                lat.len() as f64 / self.seconds,
                percentile(&lat, 0.5),
                percentile(&lat, 0.99)
            );
        };
        row("NodeNames (cached)", &by_names);
        row("Nodes (objects)", &by_objects);
        let mut sorted = self.swaps(&server, || row("NodeNames during swaps", &by_names));
        sorted.sort();
        println!(
            "{n:>6} {:22} {} swaps, write -> serving: median {:.0} ms, max {:.0} ms",
            "swap latency",
            sorted.len(),
            percentile(&sorted, 0.5),
            sorted.last().map_or(f64::NAN, |d| d.as_secs_f64() * 1e3)
        );
        drop(server);
        Ok(())
    }

    /// Filter request bodies over every node of `list`: by name (every
    /// pod), and with the node objects (the first 20 pods).
    fn bodies(&self, list: &Value) -> Result<(Vec<String>, Vec<String>)> {
        let nodes: Vec<&Value> = list["items"]
            .as_array()
            .map(|a| a.iter().filter(|o| o["kind"] == "Node").collect())
            .unwrap_or_default();
        let names: Vec<&Value> = nodes.iter().map(|n| &n["metadata"]["name"]).collect();
        let names_json = serde_json::to_string(&names)?;
        let nodes_json = serde_json::to_string(&nodes)?;
        let by_names = self
            .pods
            .iter()
            .map(|p| format!(r#"{{"Pod":{p},"Nodes":null,"NodeNames":{names_json}}}"#))
            .collect();
        let by_objects = self
            .pods
            .iter()
            .take(20)
            .map(|p| {
                format!(
                    r#"{{"Pod":{p},"Nodes":{{"metadata":{{}},"items":{nodes_json}}},"NodeNames":null}}"#
                )
            })
            .collect();
        Ok((by_names, by_objects))
    }

    /// Swaps under load: NodeName rewritten every 500 ms, alternating
    /// write-then-rename and in-place writes, while `under_load` runs;
    /// each swap's time from the write until `/status` serves it.
    fn swaps(&self, server: &ServerProcess, under_load: impl FnOnce()) -> Vec<Duration> {
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            let swapper = s.spawn(|| {
                let agent = agent();
                let mut latencies = Vec::new();
                let mut k = 1;
                while !stop.load(Ordering::Relaxed) {
                    let bytes = variant(&self.original, k);
                    let want = version_of(&bytes);
                    let written = Instant::now();
                    if k % 2 == 0 {
                        let tmp = self.swapped_file.with_extension("tmp");
                        let _ = std::fs::write(&tmp, &bytes);
                        let _ = std::fs::rename(&tmp, &self.swapped_file);
                    } else {
                        let _ = std::fs::write(&self.swapped_file, &bytes);
                    }
                    while written.elapsed() < Duration::from_secs(10) {
                        if serving_version(&agent, &server.base, "NodeName").as_deref()
                            == Some(want.as_str())
                        {
                            latencies.push(written.elapsed());
                            break;
                        }
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    k += 1;
                    std::thread::sleep(
                        Duration::from_millis(500).saturating_sub(written.elapsed()),
                    );
                }
                latencies
            });
            under_load();
            stop.store(true, Ordering::Relaxed);
            swapper.join().unwrap_or_default()
        })
    }
}

/// Where the bench finds the plugins to serve.
pub fn plugins_dir(explicit: Option<PathBuf>) -> Result<PathBuf> {
    explicit
        .or_else(crate::plugins::registry::default_plugins_dir)
        .ok_or_else(|| anyhow!("no plugins directory: pass --plugins DIR"))
}
