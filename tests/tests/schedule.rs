//! `sift schedule` end to end against the fake API server
//! (`sift_tests::apiserver`): pods bound once and never beyond a node's
//! room, failures written as kube-scheduler writes them, the simulator
//! predicting the scheduler, API faults, leader election, live preemption
//! and hot-loaded plugins.
//!
//! Timing is not the point: every wait polls with a generous deadline
//! (a liveness bound, not a latency target; `sift bench --schedule`
//! measures speed).

use serde_json::{Value, json};
use sift_tests::apiserver::FakeApiServer;
use sift_tests::{plugins_dir, sift_bin, temp_dir};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

const PATIENT: Duration = Duration::from_secs(120);

/// A running `sift schedule`, killed on drop; its log is printed when a
/// wait fails.
struct Sift {
    child: Child,
    base: String,
    agent: ureq::Agent,
    log: PathBuf,
}

impl Sift {
    fn start(api: &FakeApiServer, dir: &Path, name: &str, extra: &[&str]) -> Sift {
        let kubeconfig = dir.join("kubeconfig");
        api.kubeconfig(&kubeconfig);
        let log = dir.join(format!("{name}.log"));
        let (child, addr) = sift_tests::spawn_listening(
            Command::new(sift_bin())
                .args(["schedule", "--listen", "127.0.0.1:0", "--kubeconfig"])
                .arg(&kubeconfig)
                .args(extra)
                .env("SIFT_LOG", "info")
                .env("HOSTNAME", name),
            &log,
        );
        Sift {
            child,
            base: format!("http://{addr}"),
            agent: sift_tests::http_agent(Duration::from_secs(10)),
            log,
        }
    }

    /// One replica (no leader election) with these plugins and config.
    fn single(api: &FakeApiServer, dir: &Path, plugins: &Path, config: &Path) -> Sift {
        Sift::start(
            api,
            dir,
            "sift-a",
            &[
                "--leader-elect=false",
                "--plugins",
                plugins.to_str().unwrap(),
                "-c",
                config.to_str().unwrap(),
            ],
        )
    }

    fn get(&self, path: &str) -> (u16, String) {
        sift_tests::http_get(&self.agent, &format!("{}{path}", self.base))
    }

    fn readyz(&self) -> (u16, String) {
        let (code, body) = self.get("/readyz");
        (code, body.trim().to_string())
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Sift {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Polls `f` until it holds; panics with `what` and the logs after
/// [`PATIENT`].
fn wait_for(what: &str, sifts: &[&Sift], mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENT;
    while Instant::now() < deadline {
        if f() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let logs: Vec<String> = sifts.iter().map(|s| s.log()).collect();
    panic!(
        "timed out waiting for {what}; logs:\n{}",
        logs.join("\n-----\n")
    );
}

fn node(name: &str, cpu: &str) -> Value {
    json!({"kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
           "status": {"allocatable": {"cpu": cpu, "memory": "64Gi", "pods": "110"},
                      "capacity": {"cpu": cpu, "memory": "64Gi", "pods": "110"}}})
}

/// A pending pod for `scheduler` requesting `cpu`.
fn pod(name: &str, cpu: &str, priority: i32, scheduler: Option<&str>) -> Value {
    let mut p = json!({"kind": "Pod",
        "metadata": {"name": name, "namespace": "default",
                     "creationTimestamp": "2025-01-01T00:00:00Z"},
        "spec": {"priority": priority,
                 "containers": [{"name": "c", "image": "app:1",
                                 "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}]},
        "status": {"phase": "Pending"}});
    if let Some(s) = scheduler {
        p["spec"]["schedulerName"] = json!(s);
    }
    p
}

/// Millicores of a quantity ("500m", "2").
fn millis(q: &str) -> i64 {
    match q.strip_suffix('m') {
        Some(m) => m.parse().unwrap(),
        None => q.parse::<i64>().unwrap() * 1000,
    }
}

/// Where each pod is bound, by name, from the fake's state.
fn placements(api: &FakeApiServer) -> BTreeMap<String, String> {
    api.keys("Pod")
        .into_iter()
        .filter_map(|k| {
            let (ns, name) = k.split_once('/').unwrap();
            let p = api.get("Pod", ns, name)?;
            let node = p["spec"]["nodeName"].as_str()?.to_string();
            Some((name.to_string(), node))
        })
        .collect()
}

/// Successful binds per pod key.
fn binds_per_pod(api: &FakeApiServer) -> BTreeMap<String, usize> {
    let mut n = BTreeMap::new();
    for (key, _, code) in api.bindings() {
        if code == 201 {
            *n.entry(key).or_insert(0) += 1;
        }
    }
    n
}

/// Each node's bound cpu (millicores) against its allocatable.
fn assert_within_capacity(api: &FakeApiServer) {
    let mut used: BTreeMap<String, i64> = BTreeMap::new();
    for key in api.keys("Pod") {
        let (ns, name) = key.split_once('/').unwrap();
        let p = api.get("Pod", ns, name).unwrap();
        if let Some(n) = p["spec"]["nodeName"].as_str() {
            let cpu = p["spec"]["containers"][0]["resources"]["requests"]["cpu"]
                .as_str()
                .unwrap();
            *used.entry(n.to_string()).or_insert(0) += millis(cpu);
        }
    }
    for (n, cpu) in used {
        let node = api.get("Node", "", &n).expect("bound to an existing node");
        let alloc = millis(node["status"]["allocatable"]["cpu"].as_str().unwrap());
        assert!(cpu <= alloc, "node {n} holds {cpu}m of {alloc}m");
    }
}

/// The FailedScheduling events about `name`.
fn failed_events(api: &FakeApiServer, name: &str) -> Vec<Value> {
    api.events()
        .into_iter()
        .filter(|e| e["reason"] == "FailedScheduling" && e["regarding"]["name"] == name)
        .collect()
}

fn condition(api: &FakeApiServer, name: &str, type_: &str) -> Option<Value> {
    let p = api.get("Pod", "default", name)?;
    p["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
        .cloned()
}

/// Writes a plugins directory with the bundled filters and scores `sift
/// simulate` and `sift schedule` share, and a config for `name`.
fn setup(dir: &Path) -> (PathBuf, PathBuf) {
    let config = dir.join("sift.yaml");
    std::fs::write(&config, "schedulerName: sift\n").unwrap();
    (plugins_dir(), config)
}

#[test]
fn binds_every_pod_that_fits_once_and_reports_every_other_as_kube_scheduler_does() {
    let dir = temp_dir("schedule-5000");
    let api = FakeApiServer::start();
    // 1,000 nodes of 2 cpu: room for exactly 4,000 pods of 500m.
    for i in 0..1000 {
        api.add(node(&format!("n{i:04}"), "2"));
    }
    for i in 0..4500 {
        api.add(pod(&format!("fit-{i:04}"), "500m", 0, Some("sift")));
    }
    for i in 0..500 {
        api.add(pod(&format!("huge-{i:03}"), "8", 0, Some("sift")));
    }
    // Not sift's: left alone.
    for i in 0..10 {
        api.add(pod(&format!("other-{i}"), "100m", 0, None));
    }
    let (plugins, config) = setup(&dir);
    let started = Instant::now();
    let s = Sift::single(&api, &dir, &plugins, &config);
    wait_for("4,000 pods bound", &[&s], || {
        std::thread::sleep(Duration::from_millis(500));
        binds_per_pod(&api).len() >= 4000
    });
    eprintln!("4,000 bound after {:?}", started.elapsed());
    let placed = placements(&api);
    assert_eq!(placed.len(), 4000);
    let unbound: Vec<String> = api
        .keys("Pod")
        .into_iter()
        .map(|k| k.split_once('/').unwrap().1.to_string())
        .filter(|n| !n.starts_with("other-"))
        .filter(|n| !placed.contains_key(n))
        .collect();
    assert_eq!(unbound.len(), 1000);
    wait_for("every unschedulable pod's condition", &[&s], || {
        std::thread::sleep(Duration::from_millis(500));
        unbound
            .iter()
            .all(|n| condition(&api, n, "PodScheduled").is_some_and(|c| c["status"] == "False"))
    });
    // Bound once each, within capacity, and only sift's pods.
    let binds = binds_per_pod(&api);
    assert_eq!(binds.len(), 4000);
    assert!(binds.values().all(|n| *n == 1), "a pod bound twice");
    assert!(binds.keys().all(|k| !k.contains("other-")));
    assert_within_capacity(&api);
    let mut failed: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for e in api.events() {
        if e["reason"] == "FailedScheduling" {
            let name = e["regarding"]["name"].as_str().unwrap().to_string();
            failed.entry(name).or_default().push(e);
        }
    }
    let mut failed: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for e in api.events() {
        if e["reason"] == "FailedScheduling" {
            let name = e["regarding"]["name"].as_str().unwrap().to_string();
            failed.entry(name).or_default().push(e);
        }
    }
    for n in &unbound {
        let c = condition(&api, n, "PodScheduled").unwrap();
        assert_eq!(c["reason"], "Unschedulable", "{n}: {c}");
        let message = c["message"].as_str().unwrap();
        assert!(
            message.starts_with("0/1000 nodes are available: 1000 Insufficient cpu."),
            "{n}: {message}"
        );
        let events = failed.get(n).cloned().unwrap_or_default();
        assert_eq!(
            events.len(),
            1,
            "{n}: one event (a series), not one per attempt"
        );
        assert_eq!(events[0]["note"], message, "{n}");
        assert_eq!(events[0]["type"], "Warning");
        assert_eq!(events[0]["action"], "Scheduling");
        assert_eq!(events[0]["reportingController"], "sift");
    }
    let scheduled = api
        .events()
        .into_iter()
        .filter(|e| e["reason"] == "Scheduled")
        .count();
    assert_eq!(scheduled, 4000, "one Scheduled event per bind");
    let (code, body) = s.get("/metrics");
    assert_eq!(code, 200);
    assert!(
        body.contains(
            "scheduler_schedule_attempts_total{result=\"scheduled\",profile=\"sift\"} 4000"
        ),
        "{body}"
    );
}

#[test]
fn the_simulator_predicts_the_scheduler() {
    let dir = temp_dir("schedule-predicts");
    let api = FakeApiServer::start();
    let mut nodes = Vec::new();
    for i in 0..60 {
        let cpu = ["2", "4", "8"][i % 3];
        let n = node(&format!("n{i:02}"), cpu);
        api.add(n.clone());
        nodes.push(n);
    }
    let mut pods = Vec::new();
    for i in 0..400 {
        let cpu = ["250m", "500m", "1", "300m", "750m"][i % 5];
        let priority = if i % 7 == 0 { 100 } else { 0 };
        let p = pod(&format!("p{i:03}"), cpu, priority, Some("sift"));
        api.add(p.clone());
        pods.push(p);
    }
    let (plugins, config) = setup(&dir);
    let s = Sift::single(&api, &dir, &plugins, &config);
    wait_for("every pod bound", &[&s], || placements(&api).len() == 400);
    let live = placements(&api);

    let items: Vec<Value> = nodes.into_iter().chain(pods).collect();
    let simulated = simulate(&dir, items.clone(), &plugins, &config, "scheduler");
    let differ: Vec<_> = live
        .iter()
        .filter(|(p, n)| simulated.get(*p) != Some(n))
        .map(|(p, n)| format!("{p}: live {n}, simulated {:?}", simulated.get(p)))
        .collect();
    assert!(differ.is_empty(), "{} differ: {differ:#?}", differ.len());
    assert_eq!(simulated.len(), live.len());

    // sift's built-in plugins (--native) bind the same pods to the same
    // nodes.
    let native_api = FakeApiServer::start();
    for item in items {
        native_api.add(item);
    }
    let native = Sift::start(
        &native_api,
        &dir,
        "sift-native",
        &[
            "--leader-elect=false",
            "--native",
            "-c",
            config.to_str().unwrap(),
        ],
    );
    wait_for("every pod bound natively", &[&native], || {
        placements(&native_api).len() == 400
    });
    assert_eq!(placements(&native_api), live);
}

#[test]
fn failed_binds_an_api_server_outage_and_deleted_pods_lose_nothing_and_bind_nothing_twice() {
    let dir = temp_dir("schedule-faults");
    let api = FakeApiServer::start();
    for i in 0..50 {
        api.add(node(&format!("n{i:02}"), "4"));
    }
    api.fail_binds(20, 500);
    for i in 0..100 {
        api.add(pod(&format!("a{i:03}"), "500m", 0, Some("sift")));
    }
    let (plugins, config) = setup(&dir);
    let s = Sift::single(&api, &dir, &plugins, &config);
    // Every pod whose bind failed with 500 is retried (after backoff).
    wait_for("the first 100 bound", &[&s], || {
        placements(&api).len() == 100
    });
    let failed = api.bindings().iter().filter(|(_, _, c)| *c == 500).count();
    assert_eq!(failed, 20, "the fake failed 20 binds");
    // A failed bind is reported as kube-scheduler's SchedulerError.
    let errors = api
        .events()
        .into_iter()
        .filter(|e| {
            e["reason"] == "FailedScheduling"
                && e["note"]
                    .as_str()
                    .unwrap_or_default()
                    .starts_with("binding rejected")
        })
        .count();
    assert!(errors >= 1, "bind failures are reported");

    // The API server goes away, pods arrive meanwhile, it comes back.
    api.set_down(true);
    std::thread::sleep(Duration::from_secs(2));
    api.set_down(false);
    for i in 0..50 {
        api.add(pod(&format!("b{i:03}"), "500m", 0, Some("sift")));
    }
    wait_for("the pods created after the outage bound", &[&s], || {
        placements(&api).len() == 150
    });

    // A pod deleted while its bind is in flight: the bind answers 404,
    // the pod is not retried, nothing else is disturbed.
    api.set_write_latency(Duration::from_millis(800));
    api.add(pod("doomed", "500m", 0, Some("sift")));
    wait_for("doomed's bind in flight", &[&s], || {
        api.writes_started()
            .iter()
            .any(|(m, p)| m == "POST" && p.ends_with("/pods/doomed/binding"))
    });
    api.delete("Pod", "default", "doomed");
    wait_for("doomed's bind answered", &[&s], || {
        api.bindings().iter().any(|(k, _, _)| k == "default/doomed")
    });
    api.set_write_latency(Duration::ZERO);
    api.add(pod("after", "500m", 0, Some("sift")));
    wait_for("a pod after it bound", &[&s], || {
        placements(&api).contains_key("after")
    });
    let doomed: Vec<u16> = api
        .bindings()
        .iter()
        .filter(|(k, _, _)| k == "default/doomed")
        .map(|(_, _, c)| *c)
        .collect();
    assert_eq!(doomed, [404], "answered 404 and not retried");
    let binds = binds_per_pod(&api);
    assert!(
        binds.values().all(|n| *n == 1),
        "a pod bound twice: {binds:?}"
    );
    assert_eq!(binds.len(), 151);
    assert_within_capacity(&api);
}

#[test]
fn of_two_replicas_one_schedules_and_the_other_takes_over_when_it_dies() {
    let dir = temp_dir("schedule-leader");
    let api = FakeApiServer::start();
    for i in 0..20 {
        api.add(node(&format!("n{i:02}"), "8"));
    }
    let (plugins, config) = setup(&dir);
    let args = |_: &str| -> Vec<String> {
        [
            "--plugins",
            plugins.to_str().unwrap(),
            "-c",
            config.to_str().unwrap(),
            "--leader-elect-lease-duration",
            "4s",
            "--leader-elect-renew-deadline",
            "3s",
            "--leader-elect-retry-period",
            "500ms",
            "--leader-elect-resource-namespace",
            "kube-system",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let a_args = args("a");
    let b_args = args("b");
    let a = Sift::start(
        &api,
        &dir,
        "sift-a",
        &a_args.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let b = Sift::start(
        &api,
        &dir,
        "sift-b",
        &b_args.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let roles = |a: &Sift, b: &Sift| (a.readyz(), b.readyz());
    wait_for("one leader, one standby", &[&a, &b], || {
        let ((ca, ra), (cb, rb)) = roles(&a, &b);
        ca == 200 && cb == 200 && {
            let mut r = [ra, rb];
            r.sort();
            r == ["leader", "standby"]
        }
    });
    let (mut leader, standby) = if a.readyz().1 == "leader" {
        (a, b)
    } else {
        (b, a)
    };
    let lease = api.lease("kube-system", "sift").expect("the lease exists");
    let holder = lease["spec"]["holderIdentity"]
        .as_str()
        .unwrap()
        .to_string();
    let (_, status) = leader.get("/status");
    let status: Value = serde_json::from_str(&status).unwrap();
    assert_eq!(status["identity"], holder.as_str());
    for i in 0..30 {
        api.add(pod(&format!("first-{i:02}"), "250m", 0, Some("sift")));
    }
    wait_for("the leader binds", &[&leader, &standby], || {
        placements(&api).len() == 30
    });
    // SIGKILL: no release; the standby waits out the lease, then leads.
    leader.kill();
    let killed = Instant::now();
    for i in 0..30 {
        api.add(pod(&format!("second-{i:02}"), "250m", 0, Some("sift")));
    }
    wait_for("the standby takes over", &[&standby], || {
        standby.readyz().1 == "leader"
    });
    let took = killed.elapsed();
    eprintln!("takeover after {took:?} (lease 4s, retry 500ms)");
    assert!(
        took >= Duration::from_secs(3),
        "took over after {took:?}: before the lease could have expired"
    );
    wait_for("the new leader binds", &[&standby], || {
        placements(&api).len() == 60
    });
    let binds = binds_per_pod(&api);
    assert!(binds.values().all(|n| *n == 1), "a pod bound twice");
    assert_eq!(binds.len(), 60);
    let lease = api.lease("kube-system", "sift").unwrap();
    assert_ne!(lease["spec"]["holderIdentity"].as_str().unwrap(), holder);
    assert_eq!(lease["spec"]["leaseTransitions"], 1, "{lease}");
}

#[test]
fn preemption_evicts_victims_gracefully_and_binds_the_preemptor_after_they_leave() {
    let dir = temp_dir("schedule-preempt");
    let api = FakeApiServer::start();
    api.add(node("n1", "2"));
    let mut victim = pod("victim", "2", 0, None);
    victim["spec"]["nodeName"] = json!("n1");
    victim["status"] = json!({"phase": "Running", "startTime": "2025-01-01T00:00:00Z"});
    api.add(victim);
    api.set_graceful_deletes(Some(Duration::from_secs(1)));
    let (plugins, config) = setup(&dir);
    let s = Sift::single(&api, &dir, &plugins, &config);
    wait_for("sift ready", &[&s], || s.readyz().0 == 200);
    api.add(pod("urgent", "2", 1000, Some("sift")));
    wait_for("the preemptor bound", &[&s], || {
        placements(&api).get("urgent").map(String::as_str) == Some("n1")
    });
    // The victim: DisruptionTarget, then a graceful delete.
    let patch = api
        .status_patches()
        .into_iter()
        .find(|(k, _)| k == "default/victim")
        .expect("the victim's status patched")
        .1;
    let c = &patch["status"]["conditions"][0];
    assert_eq!(c["type"], "DisruptionTarget");
    assert_eq!(c["reason"], "PreemptionByScheduler");
    assert_eq!(
        c["message"],
        "sift: preempting to accommodate a higher priority pod"
    );
    assert_eq!(api.deletes(), ["default/victim"]);
    // The preemptor: nominated, then bound only once the victim was gone.
    let nominated = api
        .status_patches()
        .into_iter()
        .any(|(k, p)| k == "default/urgent" && p["status"]["nominatedNodeName"] == "n1");
    assert!(nominated, "{:?}", api.status_patches());
    let requests = api.requests();
    let deleted_at = requests
        .iter()
        .find(|r| r.method == "DELETE" && r.path.ends_with("/pods/victim"))
        .unwrap()
        .at;
    let bound_at = requests
        .iter()
        .find(|r| r.method == "POST" && r.path.ends_with("/pods/urgent/binding"))
        .unwrap()
        .at;
    assert!(
        bound_at >= deleted_at + Duration::from_millis(900),
        "bound {:?} after the delete, inside the victim's grace period",
        bound_at - deleted_at
    );
    let preempted = api
        .events()
        .into_iter()
        .find(|e| e["reason"] == "Preempted")
        .expect("a Preempted event");
    assert_eq!(preempted["regarding"]["name"], "victim");
}

#[test]
fn preemption_spares_the_pod_a_disruption_budget_protects() {
    let dir = temp_dir("schedule-pdb");
    let api = FakeApiServer::start();
    // Two equal victims on equal nodes: without budgets the first node
    // wins the tie; the budget (no disruption allowed) sends the
    // preemptor to the other one.
    for (n, (victim, labels)) in [
        ("n1", ("ledger-0", json!({"app": "ledger"}))),
        ("n2", ("report", json!({"app": "report"}))),
    ] {
        api.add(node(n, "2"));
        let mut p = pod(victim, "2", 0, None);
        p["metadata"]["labels"] = labels;
        p["spec"]["nodeName"] = json!(n);
        p["status"] = json!({"phase": "Running", "startTime": "2025-01-01T00:00:00Z"});
        api.add(p);
    }
    api.add(
        json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "ledger", "namespace": "default"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "ledger"}}},
        "status": {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1,
                   "expectedPods": 1, "observedGeneration": 1}}),
    );
    let (plugins, config) = setup(&dir);
    let s = Sift::single(&api, &dir, &plugins, &config);
    wait_for("sift ready", &[&s], || s.readyz().0 == 200);
    api.add(pod("urgent", "2", 1000, Some("sift")));
    wait_for("the preemptor bound", &[&s], || {
        placements(&api).contains_key("urgent")
    });
    assert_eq!(placements(&api)["urgent"], "n2");
    assert_eq!(api.deletes(), ["default/report"]);
    assert!(api.get("Pod", "default", "ledger-0").is_some());
}

#[test]
fn a_plugin_swapped_mid_run_decides_the_next_pods_and_no_pod_is_skipped() {
    let dir = temp_dir("schedule-hot");
    let api = FakeApiServer::start();
    for i in 0..3 {
        api.add(node(&format!("n{i}"), "8"));
    }
    let plugins = dir.join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    std::fs::copy(
        plugins_dir().join("sift_plugin_node_resources_fit.wasm"),
        plugins.join("fit.wasm"),
    )
    .unwrap();
    std::fs::write(plugins.join("flip.wasm"), flip('a')).unwrap();
    let config = dir.join("sift.yaml");
    std::fs::write(
        &config,
        "schedulerName: sift\nplugins:\n  filter:\n    disabled: [{name: \"*\"}]\n    enabled: [{name: NodeResourcesFit}, {name: Flip}]\n  score:\n    disabled: [{name: \"*\"}]\n",
    )
    .unwrap();
    let s = Sift::single(&api, &dir, &plugins, &config);
    for i in 0..10 {
        api.add(pod(&format!("before-{i}"), "100m", 0, Some("sift")));
    }
    wait_for("the first pods bound", &[&s], || {
        placements(&api).len() == 10
    });
    // Version b rejects every pod: the swap is seen by the next cycle.
    let tmp = plugins.join("flip.tmp");
    std::fs::write(&tmp, flip('b')).unwrap();
    std::fs::rename(&tmp, plugins.join("flip.wasm")).unwrap();
    wait_for("the new profile", &[&s], || {
        let (_, st) = s.get("/status");
        serde_json::from_str::<Value>(&st).unwrap()["profile"]["generation"] == 2
    });
    for i in 0..10 {
        api.add(pod(&format!("after-{i}"), "100m", 0, Some("sift")));
    }
    wait_for("every later pod attempted", &[&s], || {
        (0..10).all(|i| !failed_events(&api, &format!("after-{i}")).is_empty())
    });
    for i in 0..10 {
        let name = format!("after-{i}");
        assert!(!placements(&api).contains_key(&name));
        let note = failed_events(&api, &name)[0]["note"]
            .as_str()
            .unwrap()
            .to_string();
        // A PreFilter rejection: upstream's message names no node count.
        assert!(
            note.starts_with("0/3 nodes are available: version-b."),
            "{name}: {note}"
        );
    }
    let binds = binds_per_pod(&api);
    assert_eq!(binds.len(), 10);
    assert!(binds.values().all(|n| *n == 1));
}

/// A DRA driver's one GPU on node n1, and the class that selects it.
fn one_gpu_on_n1(api: &FakeApiServer) {
    api.add(
        json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": {"name": "n1-gpu"},
        "spec": {"driver": "gpu.example.com", "nodeName": "n1",
                 "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": "gpu-0"}]}}),
    );
    api.add(
        json!({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
        "metadata": {"name": "gpu"},
        "spec": {"selectors": [{"cel": {"expression": "device.driver == \"gpu.example.com\""}}]}}),
    );
}

/// The part of the volume controller and a CSI provisioner a PreBind
/// waits for, acting on the fake's objects until `stop`: a claim named by
/// a volume's `claimRef` is bound to it; a claim with a selected node gets
/// a volume provisioned and is bound to it, except `data-flaky` the first
/// time, whose provisioning fails (the provisioner removes the annotation,
/// as external-provisioner does, to have the pod rescheduled).
fn volume_controller(api: &FakeApiServer, stop: &std::sync::atomic::AtomicBool) {
    let mut flaked = false;
    let bind = |claim: &str, volume: &str| {
        api.update("PersistentVolumeClaim", "default", claim, |c| {
            c["spec"]["volumeName"] = json!(volume);
            c["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] = json!("yes");
            c["status"] = json!({"phase": "Bound"});
        });
    };
    while !stop.load(std::sync::atomic::Ordering::SeqCst) {
        for key in api.keys("PersistentVolumeClaim") {
            let name = key.split_once('/').unwrap().1.to_string();
            let Some(c) = api.get("PersistentVolumeClaim", "default", &name) else {
                continue;
            };
            if c["spec"]["volumeName"].is_string() {
                continue;
            }
            let claimed = api.keys("PersistentVolume").into_iter().find(|pv| {
                api.get("PersistentVolume", "", pv)
                    .is_some_and(|v| v["spec"]["claimRef"]["name"] == name.as_str())
            });
            if let Some(pv) = claimed {
                bind(&name, &pv);
                continue;
            }
            let Some(node) = c["metadata"]["annotations"]["volume.kubernetes.io/selected-node"]
                .as_str()
                .map(str::to_string)
            else {
                continue;
            };
            if name == "data-flaky" && !flaked {
                flaked = true;
                api.update("PersistentVolumeClaim", "default", &name, |c| {
                    c["metadata"]["annotations"] = json!({});
                });
                continue;
            }
            let uid = c["metadata"]["uid"].as_str().unwrap().to_string();
            let pv = format!("pvc-{uid}");
            api.add(json!({"apiVersion": "v1", "kind": "PersistentVolume",
                "metadata": {"name": pv},
                "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                         "storageClassName": "wait",
                         "claimRef": {"namespace": "default", "name": name, "uid": uid},
                         "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                             {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}}},
                "status": {"phase": "Bound"}}));
            bind(&name, &pv);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Pods with claims, as kube-scheduler binds them. A claim bound already
/// takes its pod where its volume is, and nothing is written (upstream's
/// PreBind writes nothing for it). A claim waiting for its first consumer
/// gets the node chosen in `volume.kubernetes.io/selected-node`; a free
/// volume that fits gets the claim in its `claimRef`; the pod is bound
/// only once the volume controller has bound its claims. A provisioning
/// that fails is VolumeBinding's PreBind error and the pod is retried. A
/// device claim gets its allocation, the pod in `reservedFor` and the
/// delete-protection finalizer, and a second claim for the one device is
/// never given it. A missing claim gets upstream's reason. Gated pods and
/// other schedulers' pods are not bound.
#[test]
fn pods_with_claims_are_bound_after_their_prebind_writes_as_kube_scheduler_binds_them() {
    let dir = temp_dir("schedule-claims");
    let api = FakeApiServer::start();
    api.add(node("n1", "4"));
    let mut n2 = node("n2", "4");
    n2["metadata"]["labels"]["topology.kubernetes.io/zone"] = json!("b");
    api.add(n2);
    api.add(
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": "wait"}, "provisioner": "csi.example.com",
        "volumeBindingMode": "WaitForFirstConsumer"}),
    );
    let zone_b = json!({"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["b"]}]}]}});
    api.add(json!({"apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": "pv-b"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                 "storageClassName": "wait",
                 "claimRef": {"namespace": "default", "name": "data-db"},
                 "nodeAffinity": zone_b},
        "status": {"phase": "Bound"}}));
    api.add(json!({"apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": "pv-free"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                 "storageClassName": "wait", "nodeAffinity": zone_b},
        "status": {"phase": "Available"}}));
    api.add(json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data-db", "namespace": "default",
                     "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
        "spec": {"volumeName": "pv-b", "storageClassName": "wait",
                 "accessModes": ["ReadWriteOnce"],
                 "resources": {"requests": {"storage": "1Gi"}}},
        "status": {"phase": "Bound"}}));
    for claim in ["data-later", "data-static", "data-flaky"] {
        api.add(json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": claim, "namespace": "default"},
            "spec": {"storageClassName": "wait", "accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "1Gi"}}},
            "status": {"phase": "Pending"}}));
    }
    for (name, claim) in [
        ("db", "data-db"),
        ("claim", "data"),
        ("later", "data-later"),
        ("static", "data-static"),
        ("flaky", "data-flaky"),
    ] {
        let mut p = pod(name, "100m", 0, Some("sift"));
        p["spec"]["volumes"] =
            json!([{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]);
        api.add(p);
    }
    // One GPU, on n1, and two claims for a GPU: one pod gets it.
    one_gpu_on_n1(&api);
    for (claim, trainer) in [("gpu", "trainer"), ("gpu-2", "trainer-2")] {
        api.add(
            json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": claim, "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "gpu",
                "exactly": {"deviceClassName": "gpu"}}]}}}),
        );
        let mut p = pod(trainer, "100m", 0, Some("sift"));
        p["spec"]["resourceClaims"] = json!([{"name": "gpu", "resourceClaimName": claim}]);
        api.add(p);
    }
    let mut gated = pod("gated", "100m", 0, Some("sift"));
    gated["spec"]["schedulingGates"] = json!([{"name": "example.com/wait"}]);
    api.add(gated);
    api.add(pod("theirs", "100m", 0, Some("default-scheduler")));
    let (plugins, config) = setup(&dir);
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| volume_controller(&api, &stop));
        // Stops the controller however this ends, so the scope can join.
        let _stop = StopOnDrop(&stop);
        let s = Sift::single(&api, &dir, &plugins, &config);
        wait_for("the claimed pods' verdicts", &[&s], || {
            let placed = placements(&api);
            ["db", "later", "static", "flaky", "trainer"]
                .iter()
                .all(|p| placed.contains_key(*p))
                && ["claim", "trainer-2"]
                    .iter()
                    .all(|p| condition(&api, p, "PodScheduled").is_some())
        });
        // The pod stays where its PreBind wrote.
        let placed = placements(&api);
        let claim = |name: &str| api.get("PersistentVolumeClaim", "default", name).unwrap();
        assert_eq!(placed["db"], "n2");
        assert_eq!(
            claim("data-later")["metadata"]["annotations"]["volume.kubernetes.io/selected-node"],
            placed["later"].as_str()
        );
        assert_eq!(placed["static"], "n2", "pv-free lives in zone b");
        let pv = api.get("PersistentVolume", "", "pv-free").unwrap();
        assert_eq!(pv["spec"]["claimRef"]["name"], "data-static", "{pv}");
        assert_eq!(
            pv["spec"]["claimRef"]["uid"],
            claim("data-static")["metadata"]["uid"]
        );
        assert_eq!(
            pv["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"],
            "yes"
        );
        assert_eq!(claim("data-static")["spec"]["volumeName"], "pv-free");
        // The failed provisioning: upstream's PreBind error, then a retry.
        let flaky: Vec<String> = failed_events(&api, "flaky")
            .iter()
            .map(|e| e["note"].as_str().unwrap_or_default().to_string())
            .collect();
        assert!(
            flaky.iter().any(|n| n
                == "running PreBind plugin \"VolumeBinding\": binding volumes: \
                    provisioning failed for PVC \"data-flaky\""),
            "{flaky:?}\n{}",
            s.log()
        );
        assert_eq!(
            claim("data-flaky")["metadata"]["annotations"]["volume.kubernetes.io/selected-node"],
            placed["flaky"].as_str()
        );
        // The device: allocated once, to the trainer, on n1.
        assert_eq!(placed["trainer"], "n1");
        let gpu = api.get("ResourceClaim", "default", "gpu").unwrap();
        let trainer = api.get("Pod", "default", "trainer").unwrap();
        assert_eq!(
            gpu["status"]["reservedFor"],
            json!([{"resource": "pods", "name": "trainer",
                    "uid": trainer["metadata"]["uid"]}]),
            "{gpu}"
        );
        let result = &gpu["status"]["allocation"]["devices"]["results"][0];
        assert_eq!(result["device"], "gpu-0", "{gpu}");
        assert_eq!(result["pool"], "n1", "{gpu}");
        assert_eq!(
            gpu["metadata"]["finalizers"],
            json!(["resource.kubernetes.io/delete-protection"])
        );
        assert!(!placed.contains_key("trainer-2"));
        let gpu2 = api.get("ResourceClaim", "default", "gpu-2").unwrap();
        assert!(gpu2.get("status").is_none_or(Value::is_null), "{gpu2}");
        let c = condition(&api, "claim", "PodScheduled").unwrap();
        assert_eq!(c["reason"], "Unschedulable", "{c}");
        assert_eq!(
            c["message"],
            "0/2 nodes are available: persistentvolumeclaim \"data\" not found. \
             preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
        );
        // Every claimed pod bound at most once; nothing was written for the
        // claim bound already.
        let binds = binds_per_pod(&api);
        assert!(binds.values().all(|n| *n == 1), "{binds:?}");
        let db_writes: Vec<String> = api
            .requests()
            .iter()
            .filter(|q| q.method == "PUT" && q.path.contains("data-db"))
            .map(|q| q.to_string())
            .collect();
        assert!(db_writes.is_empty(), "{db_writes:?}");
        // The gate removed: the pod is scheduled.
        api.update("Pod", "default", "gated", |p| {
            p["spec"]["schedulingGates"] = json!([]);
        });
        wait_for("the ungated pod bound", &[&s], || {
            placements(&api).contains_key("gated")
        });
        assert!(!placements(&api).contains_key("theirs"));
        assert!(failed_events(&api, "theirs").is_empty());
        assert!(condition(&api, "gated", "PodScheduled").is_some_and(|c| c["status"] == "True"));
    });
}

/// The API server refuses the device claims' PreBind writes for a while:
/// no pod is bound without its claim's allocation, the failure is
/// upstream's PreBind error, the pod is retried, and the one device ends
/// allocated to exactly one claim, whose pod alone is bound.
#[test]
fn a_refused_prebind_write_binds_nothing_and_allocates_nothing_twice() {
    let dir = temp_dir("schedule-prebind-fault");
    let api = FakeApiServer::start();
    api.add(node("n1", "4"));
    one_gpu_on_n1(&api);
    for claim in ["gpu-a", "gpu-b"] {
        api.add(
            json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": claim, "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "gpu",
                "exactly": {"deviceClassName": "gpu"}}]}}}),
        );
    }
    let (plugins, config) = setup(&dir);
    let s = Sift::single(&api, &dir, &plugins, &config);
    wait_for("sift ready", &[&s], || s.readyz().0 == 200);
    // The watches are open; from now on writes (and new lists) of claims fail.
    api.set_failing(Some("resourceclaims"), Some(500));
    for (pod_name, claim) in [("a", "gpu-a"), ("b", "gpu-b")] {
        let mut p = pod(pod_name, "100m", 0, Some("sift"));
        p["spec"]["resourceClaims"] = json!([{"name": "gpu", "resourceClaimName": claim}]);
        api.add(p);
    }
    wait_for("a refused PreBind", &[&s], || {
        ["a", "b"].iter().any(|p| {
            failed_events(&api, p).iter().any(|e| {
                e["note"].as_str().is_some_and(|n| {
                    n.starts_with(
                        "running PreBind plugin \"DynamicResources\": updating ResourceClaim",
                    )
                })
            })
        })
    });
    assert!(placements(&api).is_empty(), "bound without its allocation");
    api.set_failing(Some("resourceclaims"), None);
    wait_for("one pod bound", &[&s], || !placements(&api).is_empty());
    // Both pods had their chance again (backoff) and the loser's verdict
    // is in.
    std::thread::sleep(Duration::from_secs(3));
    let placed = placements(&api);
    assert_eq!(placed.len(), 1, "{placed:?}");
    let (winner, _) = placed.iter().next().unwrap();
    let allocated: Vec<&str> = ["gpu-a", "gpu-b"]
        .into_iter()
        .filter(|c| {
            api.get("ResourceClaim", "default", c)
                .is_some_and(|v| v["status"]["allocation"].is_object())
        })
        .collect();
    assert_eq!(allocated, [format!("gpu-{winner}")], "{}", s.log());
    assert!(binds_per_pod(&api).values().all(|n| *n == 1));
}

/// A claim the volume controller does not bind within VolumeBinding's
/// `bindTimeoutSeconds` (from the profile's `pluginConfig`): the pod is
/// not bound, upstream's PreBind error says why; once the claim is bound,
/// the pod's retry binds it beside its volume.
#[test]
fn a_volume_not_bound_in_time_fails_prebind_and_the_retry_binds_the_pod() {
    let dir = temp_dir("schedule-bind-timeout");
    let api = FakeApiServer::start();
    api.add(node("n1", "4"));
    api.add(
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": "wait"}, "provisioner": "csi.example.com",
        "volumeBindingMode": "WaitForFirstConsumer"}),
    );
    api.add(json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data-slow", "namespace": "default"},
        "spec": {"storageClassName": "wait", "accessModes": ["ReadWriteOnce"],
                 "resources": {"requests": {"storage": "1Gi"}}},
        "status": {"phase": "Pending"}}));
    let mut p = pod("slow", "100m", 0, Some("sift"));
    p["spec"]["volumes"] =
        json!([{"name": "data", "persistentVolumeClaim": {"claimName": "data-slow"}}]);
    api.add(p);
    let config = dir.join("sift.yaml");
    std::fs::write(
        &config,
        "schedulerName: sift\npluginConfig:\n  - name: VolumeBinding\n    args: {bindTimeoutSeconds: 1}\n",
    )
    .unwrap();
    let s = Sift::single(&api, &dir, &plugins_dir(), &config);
    let timed_out =
        "running PreBind plugin \"VolumeBinding\": binding volumes: context deadline exceeded";
    wait_for("the PreBind timeout", &[&s], || {
        failed_events(&api, "slow")
            .iter()
            .any(|e| e["note"] == timed_out)
    });
    assert!(placements(&api).is_empty());
    let claim = api
        .get("PersistentVolumeClaim", "default", "data-slow")
        .unwrap();
    assert_eq!(
        claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"],
        "n1"
    );
    // The provisioner catches up: the retry finds the claim bound.
    let uid = claim["metadata"]["uid"].as_str().unwrap().to_string();
    api.add(json!({"apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": "pv-slow"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                 "storageClassName": "wait",
                 "claimRef": {"namespace": "default", "name": "data-slow", "uid": uid}},
        "status": {"phase": "Bound"}}));
    api.update("PersistentVolumeClaim", "default", "data-slow", |c| {
        c["spec"]["volumeName"] = json!("pv-slow");
        c["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] = json!("yes");
    });
    wait_for("the pod bound", &[&s], || {
        placements(&api).contains_key("slow")
    });
    assert_eq!(binds_per_pod(&api).get("default/slow"), Some(&1));
}

struct StopOnDrop<'a>(&'a std::sync::atomic::AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A ReplicaSet's pod, labelled app=web, bound to `node` (or pending).
fn web_pod(name: &str, node: Option<&str>, owned: bool) -> Value {
    let mut p = pod(name, "100m", 0, Some("sift"));
    p["metadata"]["labels"] = json!({"app": "web"});
    if owned {
        p["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1",
            "kind": "ReplicaSet", "name": "web-1", "uid": "rs-uid", "controller": true}]);
    }
    if let Some(n) = node {
        p["spec"]["nodeName"] = json!(n);
        p["status"]["phase"] = json!("Running");
    }
    p
}

/// The system default spread, live: the ReplicaSet comes through the
/// watch, and its new replica goes where its siblings are fewest although
/// resources alone would put it beside them (as a pod it does not own does).
#[test]
fn a_replica_spreads_away_from_its_siblings_by_the_watched_replica_set() {
    let dir = temp_dir("schedule-default-spread");
    let api = FakeApiServer::start();
    api.add(node("n0", "4"));
    api.add(node("n1", "4"));
    api.add(web_pod("web-a", Some("n0"), true));
    api.add(web_pod("web-b", Some("n0"), true));
    // n1 is busy with something else: resources prefer n0.
    let mut busy = pod("batch-job", "1500m", 0, Some("sift"));
    busy["spec"]["nodeName"] = json!("n1");
    busy["status"]["phase"] = json!("Running");
    api.add(busy);
    // Listed before the scheduler starts: it schedules once every watched
    // kind has synced, so no replica can be tried before the watch brings it.
    api.add(json!({"kind": "ReplicaSet", "apiVersion": "apps/v1",
        "metadata": {"name": "web-1", "namespace": "default", "uid": "rs-uid"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}}}));
    let (plugins, config) = setup(&dir);
    let s = Sift::single(&api, &dir, &plugins, &config);
    // No owner: no default spread, resources decide.
    api.add(web_pod("loner", None, false));
    wait_for("the loner bound", &[&s], || {
        placements(&api).contains_key("loner")
    });
    assert_eq!(placements(&api)["loner"], "n0");
    // The ReplicaSet's own: spread by hostname over its selector.
    api.add(web_pod("web-c", None, true));
    wait_for("the replica bound", &[&s], || {
        placements(&api).contains_key("web-c")
    });
    assert_eq!(placements(&api)["web-c"], "n1", "{}", s.log());
}

/// The Flip test plugin (contract 0.1): version a passes every node,
/// version b rejects the pod in prepare with "version-b".
fn flip(version: char) -> Vec<u8> {
    sift_tests::fixtures::flip_plugin("Flip", version)
}

/// Where `sift simulate --mode MODE` places the pending pods of
/// `objects` (with the nodes and PodGroups among them), by pod name.
fn simulate(
    dir: &Path,
    objects: Vec<Value>,
    plugins: &Path,
    config: &Path,
    mode: &str,
) -> BTreeMap<String, String> {
    let cluster = dir.join("cluster.json");
    std::fs::write(
        &cluster,
        json!({"kind": "List", "apiVersion": "v1", "items": objects}).to_string(),
    )
    .unwrap();
    let out = dir.join("pods.jsonl");
    let sim = Command::new(sift_bin())
        .args(["simulate", "--mode", mode, "--cluster"])
        .arg(&cluster)
        .arg("--plugins")
        .arg(plugins)
        .arg("-c")
        .arg(config)
        .arg("--pods-out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        sim.status.success(),
        "{}",
        String::from_utf8_lossy(&sim.stderr)
    );
    std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter_map(|v| {
            let name = v["pod"].as_str()?.split_once('/')?.1.to_string();
            Some((name, v["node"].as_str()?.to_string()))
        })
        .collect()
}

/// A Volcano PodGroup of `min` members in the default queue.
fn pod_group(name: &str, min: i32) -> Value {
    json!({"kind": "PodGroup", "apiVersion": "scheduling.volcano.sh/v1beta1",
           "metadata": {"name": name, "namespace": "default"},
           "spec": {"minMember": min, "queue": "default"}})
}

/// A pending pod of Volcano's scheduler in `group`.
fn gang_pod(name: &str, group: &str, cpu: &str) -> Value {
    let mut p = pod(name, cpu, 0, Some("volcano"));
    p["metadata"]["annotations"] = json!({"scheduling.k8s.io/group-name": group});
    p
}

fn batch_sift(api: &FakeApiServer, dir: &Path, period: &str) -> Sift {
    let config = dir.join("batch.yaml");
    std::fs::write(&config, format!("batch:\n  schedulePeriod: {period}\n")).unwrap();
    Sift::start(
        api,
        dir,
        "sift-batch",
        &[
            "--mode",
            "batch",
            "--leader-elect=false",
            "--plugins",
            plugins_dir().to_str().unwrap(),
            "-c",
            config.to_str().unwrap(),
        ],
    )
}

#[test]
fn batch_mode_binds_a_gang_whole_or_not_at_all_and_writes_its_pod_group() {
    let dir = temp_dir("schedule-gang");
    let api = FakeApiServer::start();
    for i in 0..7 {
        api.add(node(&format!("n{i}"), "1"));
    }
    api.add(pod_group("train", 8));
    for i in 0..8 {
        api.add(gang_pod(&format!("train-{i}"), "train", "1"));
    }
    let s = batch_sift(&api, &dir, "2s");
    // Room for 7 of 8: nothing binds; the PodGroup says why.
    let group = || api.get("PodGroup", "default", "train").unwrap();
    wait_for("the PodGroup's Unschedulable condition", &[&s], || {
        group()["status"]["conditions"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["type"] == "Unschedulable"))
    });
    let g = group();
    // Volcano's jobStatus: a job enqueued but not ready stays Inqueue.
    assert!(
        matches!(g["status"]["phase"].as_str(), Some("Pending" | "Inqueue")),
        "{g}"
    );
    let c = &g["status"]["conditions"][0];
    assert_eq!(c["reason"], "NotEnoughResources", "{c}");
    assert!(
        c["message"]
            .as_str()
            .unwrap()
            .contains("tasks in gang unschedulable"),
        "{c}"
    );
    assert_eq!(g["spec"]["minMember"], 8, "the spec is left as it was");
    assert!(api.bindings().is_empty(), "{:?}", api.bindings());
    wait_for("the PodGroup's event", &[&s], || {
        api.events()
            .iter()
            .any(|e| e["reason"] == "Unschedulable" && e["regarding"]["kind"] == "PodGroup")
    });
    wait_for("the pods' conditions", &[&s], || {
        (0..8).all(|i| condition(&api, &format!("train-{i}"), "PodScheduled").is_some())
    });

    // Room for all 8: one session binds them all.
    api.add(node("n7", "1"));
    wait_for("the gang bound", &[&s], || placements(&api).len() == 8);
    let binds = binds_per_pod(&api);
    assert_eq!(binds.len(), 8);
    assert!(binds.values().all(|n| *n == 1));
    let times: Vec<Instant> = api
        .requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path.ends_with("/binding"))
        .map(|r| r.at)
        .collect();
    let spread = *times.iter().max().unwrap() - *times.iter().min().unwrap();
    assert!(
        spread < Duration::from_secs(1),
        "binds {spread:?} apart: more than one session (period 2s)"
    );
    assert_within_capacity(&api);
    wait_for("the PodGroup Running with 8 running", &[&s], || {
        let g = group();
        g["status"]["phase"] == "Running" && g["status"]["running"] == 8
    });
    let g = group();
    let types: Vec<&str> = g["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["type"].as_str().unwrap())
        .collect();
    assert!(types.contains(&"Scheduled"), "{g}");
}

#[test]
fn in_batch_mode_too_the_simulator_predicts_the_scheduler() {
    let dir = temp_dir("schedule-batch-predicts");
    let api = FakeApiServer::start();
    let mut objects = Vec::new();
    for i in 0..12 {
        let n = node(&format!("n{i:02}"), ["2", "4"][i % 2]);
        api.add(n.clone());
        objects.push(n);
    }
    for (g, (size, cpu)) in [(4, "1"), (6, "500m"), (3, "2"), (8, "1"), (5, "750m")]
        .into_iter()
        .enumerate()
    {
        let name = format!("job{g}");
        let pg = pod_group(&name, size);
        api.add(pg.clone());
        objects.push(pg);
        for t in 0..size {
            let p = gang_pod(&format!("{name}-task-{t}"), &name, cpu);
            api.add(p.clone());
            objects.push(p);
        }
    }
    for i in 0..6 {
        let p = pod(&format!("solo-{i}"), "250m", 0, Some("volcano"));
        api.add(p.clone());
        objects.push(p);
    }
    let s = batch_sift(&api, &dir, "1s");
    // Every session binds what it can; wait until two sessions in a row
    // bind nothing new.
    let mut last = usize::MAX;
    wait_for("the placements to settle", &[&s], || {
        std::thread::sleep(Duration::from_millis(2500));
        let now = binds_per_pod(&api).len();
        let settled = now == last && now > 0;
        last = now;
        settled
    });
    let live = placements(&api);
    let simulated = simulate(
        &dir,
        objects,
        &plugins_dir(),
        &dir.join("batch.yaml"),
        "batch",
    );
    assert_eq!(live, simulated);
    assert!(live.len() > 10, "{live:?}");
}
