//! End-to-end throughput of `sift schedule`: pods bound per second, and
//! each pod's time from creation to bind, through the fake API server
//! (`sift_tests::apiserver`) over loopback. A benchmark, not a test: it
//! is `#[ignore]`d, asserts only that every pod is bound exactly once,
//! and is run by `scripts/bench-schedule.sh`, which builds what it needs
//! and picks out the summary lines.
//!
//! The workload is kube-scheduler's scheduler_perf `SchedulingBasic`
//! (`test/integration/scheduler_perf/config/performance-config.yaml`,
//! 5,000 nodes, upstream's CI measures ~1,150 pods/s): nodes shaped as
//! scheduler_perf's base node when a workload names no node template
//! (`makeBaseNode`: capacity and allocatable 4 cpu, 32Gi memory, 110 pods,
//! phase Running, Ready; no labels, no taints), pods as
//! `config/templates/pod-default.yaml` (one `pause` container, containerPort
//! 80 without a host port, requests and limits 100m cpu and 500Mi memory),
//! here with `schedulerName: sift`. sift runs its default profile
//! (kube-scheduler's default filters and score plugins as sift has them,
//! adaptive
//! percentageOfNodesToScore; in batch mode Volcano's default session) with
//! the bundled Wasm plugins.
//!
//! Parameters (environment):
//! - `SIFT_BENCH_NODES` (5000): nodes;
//! - `SIFT_BENCH_PODS` (10000): pods created once sift is ready, measured;
//! - `SIFT_BENCH_INIT_PODS` (0): pods already bound when sift starts,
//!   spread over the nodes (as scheduler_perf's `initPods`, though those
//!   are scheduled by the scheduler before the measurement);
//! - `SIFT_BENCH_CREATORS` (1): threads creating the measured pods;
//! - `SIFT_BENCH_SIFT_ARGS` (none): more arguments for `sift schedule`,
//!   split on whitespace (`--bind-concurrency 64`);
//! - `SIFT_BENCH_MODES` (every mode): which of [`modes`] to run, by label
//!   (`scheduler/wasm`, `batch/wasm`), comma separated;
//! - `SIFT_BENCH_KEEP` (unset): keep the run's directory (sift's log, its
//!   final `/metrics`) and print where it is.
//!
//! Each run prints these lines (wrapped here):
//!
//! ```text
//! schedule-bench mode=scheduler plugins=wasm nodes=5000 init_pods=0 pods=10000 seconds=...
//!   pods_per_s=... steady_pods_per_s=... p50_ms=... p99_ms=... max_ms=... peak_rss_mib=...
//!   sift_cpu_s=... test_cpu_s=... create_s=... attempt_ms=...
//! schedule-bench-metric scheduler_schedule_attempts_total{...} N
//! schedule-bench-requests refused_binds=0 POST events=N POST pods/binding=N ...
//! schedule-bench-cpu window_s=... machine_busy_pct=... other_s=... sift_s=... [by thread]
//!   test_s=... [by thread]
//! ```
//!
//! where `seconds` runs from the first pod's creation to the last
//! successful bind's arrival at the fake, `pods_per_s` is `pods` over
//! that, `steady_pods_per_s` the rate between the 10th and the 90th
//! percentile bind (without the start and the tail), latencies are each
//! pod's bind arrival (the fake's request log; it answers at once) minus
//! the moment its creation was asked of the fake, `peak_rss_mib` is sift's
//! `VmHWM` before it is killed, `sift_cpu_s` and `test_cpu_s` the CPU time
//! (user + system) of sift and of this process (the fake API server and
//! the pod creators) from the first creation until every bind was seen
//! (`window_s`, up to one poll past `seconds`), `create_s` how long
//! creating every pod took, and `attempt_ms` sift's mean scheduling attempt
//! (`scheduler_scheduling_attempt_duration_seconds`: a cycle in scheduler
//! mode, a session in batch mode). The `-requests` line counts the
//! requests the fake served in the window; the `-cpu` line splits the CPU
//! time by thread name (threads that exited before its end, the pod
//! creators, are counted in the totals only) beside how busy the whole
//! machine was and the CPU time other processes took meanwhile (`other_s`:
//! on a shared machine, a run beside someone's build is not comparable).
//! Progress goes to stderr as `schedule-bench-progress` lines.

use serde_json::{Value, json};
use sift_tests::apiserver::{FakeApiServer, Resource};
use sift_tests::{plugins_dir, sift_bin, temp_dir};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long the run may go without a new bind before it gives up.
const STALL: Duration = Duration::from_secs(60);
/// How often the bindings are counted: the fake's lock is shared with
/// every request it serves, so not faster.
const POLL: Duration = Duration::from_millis(200);
const NAMESPACE: &str = "default";

/// One way of running the scheduler: scheduler mode (kube-scheduler's
/// loop) and batch mode (Volcano's sessions, every pod a job of its own
/// here), each with the bundled Wasm plugins and with sift's built-in
/// ones (`--native`).
struct Mode {
    /// `mode=` in the summary.
    name: &'static str,
    /// `plugins=` in the summary.
    plugins: &'static str,
    /// Arguments for `sift schedule` beyond the common ones.
    args: Vec<String>,
}

impl Mode {
    fn label(&self) -> String {
        format!("{}/{}", self.name, self.plugins)
    }
}

fn modes() -> Vec<Mode> {
    let wasm = || {
        vec![
            "--plugins".to_string(),
            plugins_dir().to_string_lossy().into_owned(),
        ]
    };
    vec![
        Mode {
            name: "scheduler",
            plugins: "wasm",
            args: wasm(),
        },
        Mode {
            name: "batch",
            plugins: "wasm",
            args: [vec!["--mode".to_string(), "batch".to_string()], wasm()].concat(),
        },
        Mode {
            name: "scheduler",
            plugins: "native",
            args: vec!["--native".to_string()],
        },
        Mode {
            name: "batch",
            plugins: "native",
            args: vec![
                "--mode".to_string(),
                "batch".to_string(),
                "--native".to_string(),
            ],
        },
    ]
}

fn env_usize(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(v) if !v.trim().is_empty() => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a count")),
        _ => default,
    }
}

/// scheduler_perf's base node (`makeBaseNode`).
fn node(name: &str) -> Value {
    let resources = json!({"cpu": "4", "memory": "32Gi", "pods": "110"});
    json!({"kind": "Node", "metadata": {"name": name},
           "spec": {},
           "status": {"capacity": resources, "allocatable": resources,
                      "phase": "Running",
                      "conditions": [{"type": "Ready", "status": "True"}]}})
}

/// scheduler_perf's `pod-default.yaml`, for sift; bound to `node` if any.
fn pod(name: &str, node: Option<&str>) -> Value {
    let resources = json!({"cpu": "100m", "memory": "500Mi"});
    let mut p = json!({"kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"schedulerName": "sift",
                 "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10",
                                 "ports": [{"containerPort": 80}],
                                 "resources": {"requests": resources, "limits": resources}}]},
        "status": {"phase": "Pending"}});
    if let Some(n) = node {
        p["spec"]["nodeName"] = json!(n);
        p["status"] = json!({"phase": "Running",
                             "conditions": [{"type": "PodScheduled", "status": "True"}]});
    }
    p
}

/// Clock ticks per second, the unit of `/proc/PID/stat`'s CPU times.
fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

/// User plus system CPU time of a process (`self` or a pid), in ticks.
fn cpu_ticks(pid: &str) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command name, which may hold spaces: state is
    // the first, utime the 12th and stime the 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
    field(11).unwrap_or(0) + field(12).unwrap_or(0)
}

/// User plus system CPU ticks of each thread of a process, summed by
/// thread name without its trailing number (`fake-apiserver-12` counts
/// as `fake-apiserver`). Threads that exited are no longer counted.
fn thread_ticks(pid: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for task in tasks.flatten() {
        let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let name = stat[open + 1..close]
            .trim_end_matches(|c: char| c.is_ascii_digit())
            .trim_end_matches(['-', '_']);
        let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        let field = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
        *out.entry(name.to_string()).or_default() +=
            field(11).unwrap_or(0) + field(12).unwrap_or(0);
    }
    out
}

/// The machine's busy and total CPU ticks (every core), from `/proc/stat`.
fn machine_ticks() -> (u64, u64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let fields: Vec<u64> = stat
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .skip(1)
        .filter_map(|f| f.parse().ok())
        .collect();
    let total: u64 = fields.iter().take(8).sum();
    // idle and iowait
    let idle = fields.get(3).copied().unwrap_or(0) + fields.get(4).copied().unwrap_or(0);
    (total - idle, total)
}

/// Where the CPU went at one moment: sift's and this process's totals and
/// threads, and the machine's.
struct Cpu {
    at: Instant,
    sift: u64,
    sift_threads: BTreeMap<String, u64>,
    test: u64,
    test_threads: BTreeMap<String, u64>,
    machine: (u64, u64),
}

impl Cpu {
    fn sample(sift_pid: &str) -> Cpu {
        Cpu {
            at: Instant::now(),
            sift: cpu_ticks(sift_pid),
            sift_threads: thread_ticks(sift_pid),
            test: cpu_ticks("self"),
            test_threads: thread_ticks("self"),
            machine: machine_ticks(),
        }
    }

    /// One line: the window, the machine's load over it, and each
    /// process's CPU seconds by thread since `before`.
    fn since(&self, before: &Cpu) -> String {
        let ticks = clock_ticks();
        let secs = |t: u64| t as f64 / ticks;
        let threads = |now: &BTreeMap<String, u64>, then: &BTreeMap<String, u64>| {
            let mut used: Vec<(String, u64)> = now
                .iter()
                .map(|(k, v)| (k.clone(), v.saturating_sub(*then.get(k).unwrap_or(&0))))
                .filter(|(_, v)| *v > 0)
                .collect();
            used.sort_by_key(|(_, v)| std::cmp::Reverse(*v));
            used.iter()
                .map(|(k, v)| format!("{k}={:.2}", secs(*v)))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let (busy, total) = (
            self.machine.0.saturating_sub(before.machine.0),
            self.machine.1.saturating_sub(before.machine.1),
        );
        let (sift, test) = (
            self.sift.saturating_sub(before.sift),
            self.test.saturating_sub(before.test),
        );
        format!(
            "window_s={:.3} machine_busy_pct={:.0} other_s={:.2} sift_s={:.2} [{}] test_s={:.2} \
             [{}]",
            self.at.duration_since(before.at).as_secs_f64(),
            100.0 * busy as f64 / total.max(1) as f64,
            secs(busy.saturating_sub(sift + test)),
            secs(sift),
            threads(&self.sift_threads, &before.sift_threads),
            secs(test),
            threads(&self.test_threads, &before.test_threads),
        )
    }
}

/// A field of `/proc/PID/status` in KiB (`VmHWM`).
fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

/// A running `sift schedule`, killed on drop.
struct Sift {
    child: Child,
    base: String,
    agent: ureq::Agent,
    log: PathBuf,
}

impl Sift {
    fn start(api: &FakeApiServer, dir: &Path, mode: &Mode, extra: &[String]) -> Sift {
        let kubeconfig = dir.join("kubeconfig");
        api.kubeconfig(&kubeconfig);
        let config = dir.join("sift.yaml");
        std::fs::write(&config, "schedulerName: sift\n").unwrap();
        let log = dir.join(format!("sift-{}-{}.log", mode.name, mode.plugins));
        let (child, addr) = sift_tests::spawn_listening(
            Command::new(sift_bin())
                .args([
                    "schedule",
                    "--leader-elect=false",
                    "--listen",
                    "127.0.0.1:0",
                    "--kubeconfig",
                ])
                .arg(&kubeconfig)
                .arg("-c")
                .arg(&config)
                .args(&mode.args)
                .args(extra)
                .env("HOSTNAME", "sift-bench"),
            &log,
        );
        Sift {
            child,
            base: format!("http://{addr}"),
            agent: sift_tests::http_agent(Duration::from_secs(30)),
            log,
        }
    }

    fn get(&self, path: &str) -> (u16, String) {
        sift_tests::http_get(&self.agent, &format!("{}{path}", self.base))
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The end of its log, for a failure message.
    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    fn wait_ready(&mut self, limit: Duration) {
        let deadline = Instant::now() + limit;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("sift exited ({status}); log:\n{}", self.log_tail());
            }
            let (code, body) = self.get("/readyz");
            if code == 200 {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "sift not ready after {limit:?} ({code} {body}); log:\n{}",
                self.log_tail()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Sift {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `q` quantile (nearest rank) of sorted values.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

struct Params {
    nodes: usize,
    pods: usize,
    init_pods: usize,
    creators: usize,
    sift_args: Vec<String>,
}

fn run(mode: &Mode, p: &Params) {
    let dir = temp_dir(&format!("schedule-bench-{}-{}", mode.name, mode.plugins));
    let api = FakeApiServer::start();
    let node_names: Vec<String> = (0..p.nodes).map(|i| format!("node-{i:05}")).collect();
    for n in &node_names {
        api.add(node(n));
    }
    for i in 0..p.init_pods {
        let n = &node_names[i % p.nodes];
        api.add(pod(&format!("init-{i:06}"), Some(n)));
    }
    let mut sift = Sift::start(&api, &dir, mode, &p.sift_args);
    sift.wait_ready(Duration::from_secs(300));
    assert!(
        api.wait_watching_kinds(&Resource::ALL, Duration::from_secs(60)),
        "sift is ready but does not watch nodes, pods and namespaces; log:\n{}",
        sift.log_tail()
    );
    let sift_pid = sift.pid().to_string();
    let names: Vec<String> = (0..p.pods).map(|i| format!("pod-{i:06}")).collect();
    let created_count = AtomicUsize::new(0);

    let cpu_start = Cpu::sample(&sift_pid);
    let start = Instant::now();
    let (created, create_s) = std::thread::scope(|s| {
        let creators: Vec<_> = (0..p.creators)
            .map(|c| {
                let (api, names, count) = (&api, &names, &created_count);
                s.spawn(move || {
                    let mut times = Vec::new();
                    for i in (c..names.len()).step_by(p.creators) {
                        let at = Instant::now();
                        api.add(pod(&names[i], None));
                        count.fetch_add(1, Ordering::Relaxed);
                        times.push((i, at));
                    }
                    (times, Instant::now())
                })
            })
            .collect();
        wait_bound(&api, &sift, &names, &created_count, start);
        let mut created = vec![start; names.len()];
        let mut last = start;
        for c in creators {
            let (times, done) = c.join().expect("a pod creator panicked");
            for (i, at) in times {
                created[i] = at;
            }
            last = last.max(done);
        }
        (created, last.duration_since(start).as_secs_f64())
    });
    let cpu_end = Cpu::sample(&sift_pid);
    let peak_rss_mib = status_kib(sift.pid(), "VmHWM").unwrap_or(0) as f64 / 1024.0;
    let (code, metrics) = sift.get("/metrics");
    assert_eq!(code, 200, "/metrics: {metrics}");
    drop(sift);

    // Sanity: every pod bound once, none twice, none of the init pods.
    let mut binds: HashMap<String, usize> = HashMap::new();
    let mut refused = 0;
    for (key, _, code) in api.bindings() {
        if code == 201 {
            *binds.entry(key).or_default() += 1;
        } else {
            refused += 1;
        }
    }
    let twice: Vec<_> = binds.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "pods bound more than once: {twice:?}");
    let wanted: HashSet<String> = names.iter().map(|n| format!("{NAMESPACE}/{n}")).collect();
    let stray: Vec<_> = binds.keys().filter(|k| !wanted.contains(*k)).collect();
    assert!(stray.is_empty(), "bound, but not a measured pod: {stray:?}");
    assert_eq!(binds.len(), p.pods, "every pod bound");

    // Each pod's bind as the fake's request log has it.
    let index: HashMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let mut bound_at = vec![None; names.len()];
    let mut requests: BTreeMap<String, usize> = BTreeMap::new();
    for r in api.requests() {
        if r.at >= start {
            let plural = r.resource.map_or("?", |r| r.plural());
            let what = match &r.subresource {
                Some(sub) => format!("{} {plural}/{sub}", r.method),
                None => format!("{} {plural}", r.method),
            };
            *requests.entry(what).or_default() += 1;
        }
        if r.method == "POST"
            && r.subresource.as_deref() == Some("binding")
            && r.status == 201
            && let Some(&i) = r.name.as_deref().and_then(|n| index.get(n))
        {
            bound_at[i] = Some(r.at);
        }
    }
    let bound_at: Vec<Instant> = bound_at
        .into_iter()
        .map(|t| t.expect("a bound pod's binding request is logged"))
        .collect();
    let first = created.iter().min().copied().unwrap_or(start);
    let last = bound_at.iter().max().copied().unwrap_or(start);
    let seconds = last.duration_since(first).as_secs_f64();
    let mut latencies: Vec<f64> = created
        .iter()
        .zip(&bound_at)
        .map(|(c, b)| b.saturating_duration_since(*c).as_secs_f64() * 1000.0)
        .collect();
    latencies.sort_by(f64::total_cmp);
    let mut binds_sorted: Vec<f64> = bound_at
        .iter()
        .map(|b| b.duration_since(first).as_secs_f64())
        .collect();
    binds_sorted.sort_by(f64::total_cmp);
    let (t10, t90) = (quantile(&binds_sorted, 0.1), quantile(&binds_sorted, 0.9));
    let steady = if t90 > t10 {
        (0.8 * p.pods as f64) / (t90 - t10)
    } else {
        f64::NAN
    };
    let ticks = clock_ticks();
    let sift_cpu = cpu_end.sift.saturating_sub(cpu_start.sift) as f64 / ticks;
    let test_cpu = cpu_end.test.saturating_sub(cpu_start.test) as f64 / ticks;
    // sift's own mean attempt time (its scheduling cycles, binds aside).
    let metric_sum = |name: &str| -> f64 {
        metrics
            .lines()
            .filter(|l| l.starts_with(name))
            .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
            .sum()
    };
    let attempt_ms = 1000.0 * metric_sum("scheduler_scheduling_attempt_duration_seconds_sum")
        / metric_sum("scheduler_scheduling_attempt_duration_seconds_count");

    println!(
        "schedule-bench mode={} plugins={} nodes={} init_pods={} pods={} seconds={:.3} \
         pods_per_s={:.0} steady_pods_per_s={:.0} p50_ms={:.1} p99_ms={:.1} max_ms={:.1} \
         peak_rss_mib={:.0} sift_cpu_s={:.2} test_cpu_s={:.2} create_s={:.3} attempt_ms={:.3}",
        mode.name,
        mode.plugins,
        p.nodes,
        p.init_pods,
        p.pods,
        seconds,
        p.pods as f64 / seconds,
        steady,
        quantile(&latencies, 0.5),
        quantile(&latencies, 0.99),
        latencies.last().copied().unwrap_or(f64::NAN),
        peak_rss_mib,
        sift_cpu,
        test_cpu,
        create_s,
        attempt_ms,
    );
    for line in metrics
        .lines()
        .filter(|l| l.starts_with("scheduler_schedule_attempts_total"))
    {
        println!("schedule-bench-metric {line}");
    }
    let requests: Vec<String> = requests.iter().map(|(k, n)| format!("{k}={n}")).collect();
    println!(
        "schedule-bench-requests refused_binds={refused} {}",
        requests.join(" ")
    );
    println!("schedule-bench-cpu {}", cpu_end.since(&cpu_start));
    if std::env::var_os("SIFT_BENCH_KEEP").is_some() {
        std::fs::write(dir.join("metrics.txt"), &metrics).unwrap();
        println!("schedule-bench-kept {}", dir.display());
    } else {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Waits until every pod in `names` has a successful bind, printing the
/// progress each second; panics when no pod is bound for [`STALL`].
fn wait_bound(
    api: &FakeApiServer,
    sift: &Sift,
    names: &[String],
    created: &AtomicUsize,
    start: Instant,
) {
    let mut progress = (0, Instant::now());
    let mut printed = Instant::now();
    loop {
        std::thread::sleep(POLL);
        let bound = api
            .bindings()
            .iter()
            .filter(|(_, _, code)| *code == 201)
            .count();
        let now = Instant::now();
        if now.duration_since(printed) >= Duration::from_secs(1) {
            printed = now;
            eprintln!(
                "schedule-bench-progress t={:.1}s created={} bound={bound}",
                now.duration_since(start).as_secs_f64(),
                created.load(Ordering::Relaxed)
            );
        }
        if bound >= names.len() {
            return;
        }
        if bound > progress.0 {
            progress = (bound, now);
        }
        assert!(
            now.duration_since(progress.1) < STALL,
            "{bound} of {} pods bound, none for {STALL:?}; sift's log:\n{}",
            names.len(),
            sift.log_tail()
        );
    }
}

#[test]
#[ignore = "a benchmark: run by scripts/bench-schedule.sh"]
fn schedule_throughput() {
    let p = Params {
        nodes: env_usize("SIFT_BENCH_NODES", 5000).max(1),
        pods: env_usize("SIFT_BENCH_PODS", 10000).max(1),
        init_pods: env_usize("SIFT_BENCH_INIT_PODS", 0),
        creators: env_usize("SIFT_BENCH_CREATORS", 1).max(1),
        sift_args: std::env::var("SIFT_BENCH_SIFT_ARGS")
            .unwrap_or_default()
            .split_whitespace()
            .map(String::from)
            .collect(),
    };
    let wanted: Vec<String> = std::env::var("SIFT_BENCH_MODES")
        .unwrap_or_default()
        .split(',')
        .map(|m| m.trim().to_string())
        .filter(|m| !m.is_empty())
        .collect();
    let modes: Vec<Mode> = modes()
        .into_iter()
        .filter(|m| wanted.is_empty() || wanted.contains(&m.label()))
        .collect();
    assert!(
        !modes.is_empty(),
        "SIFT_BENCH_MODES={wanted:?} names none of {:?}",
        self::modes().iter().map(Mode::label).collect::<Vec<_>>()
    );
    for mode in &modes {
        run(mode, &p);
    }
}
