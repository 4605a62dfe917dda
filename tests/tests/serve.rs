//! `sift serve` end to end on loopback: the extender protocol as
//! kube-scheduler speaks it (both nodeCacheCapable modes), malformed
//! bodies, informer events, backpressure, graceful shutdown, and plugin
//! files replaced under load.

use serde_json::{Value, json};
use sift_tests::fixtures::{componentize, plugin_wat};
use sift_tests::{plugins_dir, sift_bin, temp_dir, workspace_root};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A running `sift serve`, killed on drop.
struct Server {
    child: Child,
    base: String,
    agent: ureq::Agent,
}

impl Server {
    fn start(args: &[&str]) -> Server {
        Server::start_with(args, Stdio::null())
    }

    /// A server on the bundled plugins and the demo cluster.
    fn on_demo() -> Server {
        Server::start(&[
            "--plugins",
            plugins_dir().to_str().unwrap(),
            "--cluster",
            demo_cluster().to_str().unwrap(),
        ])
    }

    /// A server whose stderr (its log) goes to `log`.
    fn start_logged(args: &[&str], log: &Path) -> Server {
        let file = std::fs::File::create(log).expect("log file");
        Server::start_with(args, Stdio::from(file))
    }

    fn start_with(args: &[&str], stderr: Stdio) -> Server {
        let mut child = Command::new(sift_bin())
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("sift serve starts");
        let addr = sift_tests::served_address(&mut child)
            .unwrap_or_else(|line| panic!("unexpected first line {line:?}"));
        Server {
            child,
            base: format!("http://{addr}"),
            agent: agent(),
        }
    }

    fn post(&self, path: &str, body: &str) -> (u16, String, Option<String>) {
        post(&self.agent, &format!("{}{path}", self.base), body)
    }

    fn get(&self, path: &str) -> (u16, String) {
        sift_tests::http_get(&self.agent, &format!("{}{path}", self.base))
    }

    fn status(&self) -> Value {
        serde_json::from_str(&self.get("/status").1).expect("/status is JSON")
    }

    /// Waits for the server to exit by itself, at most `limit`.
    fn wait_exit(mut self, limit: Duration) -> std::process::ExitStatus {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "sift serve did not stop");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([&format!("-{sig}"), &self.child.id().to_string()])
            .status()
            .expect("kill runs")
            .success();
        assert!(ok, "kill -{sig}");
    }
}

impl Server {
    /// A server on a fixture's plugins, config and cluster, plus `extra` flags.
    fn on_fixture(fixture: &(PathBuf, PathBuf, PathBuf), extra: &[&str]) -> Server {
        let mut args = fixture_args(fixture);
        args.extend_from_slice(extra);
        Server::start(&args)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn agent() -> ureq::Agent {
    sift_tests::http_agent(Duration::from_secs(30))
}

/// (status, body, Retry-After)
fn post(agent: &ureq::Agent, url: &str, body: &str) -> (u16, String, Option<String>) {
    let mut r = agent
        .post(url)
        .header("Content-Type", "application/json")
        .send(body)
        .expect("POST answered");
    let retry = r
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    (
        r.status().as_u16(),
        r.body_mut().read_to_string().unwrap_or_default(),
        retry,
    )
}

fn demo_cluster() -> PathBuf {
    workspace_root().join("tests/data/demo/cluster.json")
}

fn demo_nodes() -> Vec<Value> {
    let list: Value =
        serde_json::from_str(&std::fs::read_to_string(demo_cluster()).unwrap()).unwrap();
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["kind"] == "Node")
        .cloned()
        .collect()
}

fn names(nodes: &[Value]) -> Vec<String> {
    nodes
        .iter()
        .map(|n| n["metadata"]["name"].as_str().unwrap().to_string())
        .collect()
}

/// A pod with a host port and requests, as kube-scheduler serializes it.
/// The prioritize verb: the configured score plugins over the nodes
/// sent, weights applied, mapped onto the extender's 0..=10; a node sift
/// does not know scores 0. TaintToleration alone (weight 3): no, one and
/// two PreferNoSchedule taints give 100, 50 and 0, so 10, 5 and 0.
#[test]
fn prioritize_answers_the_score_plugins_in_the_extender_range() {
    let dir = temp_dir("serve-prioritize");
    let node = |name: &str, taints: usize| {
        let taints: Vec<Value> = (0..taints)
            .map(|i| json!({"key": format!("t{i}"), "value": "x", "effect": "PreferNoSchedule"}))
            .collect();
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
               "spec": {"taints": taints},
               "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}})
    };
    let cluster = dir.join("cluster.json");
    std::fs::write(
        &cluster,
        json!({"apiVersion": "v1", "kind": "List",
               "items": [node("n0", 0), node("n1", 1), node("n2", 2)]})
        .to_string(),
    )
    .unwrap();
    let config = dir.join("sift.yaml");
    std::fs::write(
        &config,
        "plugins:\n  score:\n    disabled: [{name: \"*\"}]\n    enabled: [{name: TaintToleration, weight: 3}]\n",
    )
    .unwrap();
    let s = Server::start(&[
        "--plugins",
        plugins_dir().to_str().unwrap(),
        "--cluster",
        cluster.to_str().unwrap(),
        "-c",
        config.to_str().unwrap(),
    ]);
    let body = json!({"Pod": web_pod(), "NodeNames": ["n2", "n0", "ghost", "n1"]}).to_string();
    let (code, text, _) = s.post("/scheduler/prioritize", &body);
    assert_eq!(code, 200, "{text}");
    let got: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        got,
        json!([{"Host": "n2", "Score": 0}, {"Host": "n0", "Score": 10},
               {"Host": "ghost", "Score": 0}, {"Host": "n1", "Score": 5}])
    );
    // Node objects sent: normalized over the nodes sent, as kube-scheduler
    // normalizes over the feasible ones (n1's one taint is now the most).
    let objects = json!({"Pod": web_pod(), "Nodes": {"items": [node("n1", 1), node("n0", 0)]}});
    let (code, text, _) = s.post("/scheduler/prioritize", &objects.to_string());
    assert_eq!(code, 200, "{text}");
    let got: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        got,
        json!([{"Host": "n1", "Score": 0}, {"Host": "n0", "Score": 10}])
    );
    // A body that is not ExtenderArgs is a 400 naming the problem.
    let (code, text, _) = s.post("/scheduler/prioritize", "{\"Pod\": 7}");
    assert_eq!(code, 400, "{text}");
}

fn web_pod() -> Value {
    json!({
        "metadata": {"name": "web", "namespace": "shop", "uid": "1f0c"},
        "spec": {"containers": [{"name": "web", "image": "web:1",
            "ports": [{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}],
            "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}]},
        "status": {"phase": "Pending"}
    })
}

#[test]
fn both_node_cache_modes_answer_as_kube_scheduler_expects() {
    let s = Server::on_demo();
    let nodes = demo_nodes();
    // nodeCacheCapable: true. Go encodes the nil Nodes pointer as null.
    let mut all = names(&nodes);
    all.push("not-a-node".into());
    let body = json!({"Pod": web_pod(), "Nodes": null, "NodeNames": all}).to_string();
    let (code, text, _) = s.post("/scheduler/filter", &body);
    assert_eq!(code, 200, "{text}");
    let by_names: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(by_names["Error"], "");
    assert!(by_names.get("Nodes").is_none_or(Value::is_null));
    let feasible: Vec<&str> = by_names["NodeNames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(!feasible.is_empty() && feasible.len() < nodes.len());
    let failed = by_names["FailedNodes"].as_object().unwrap();
    let unresolvable = by_names["FailedAndUnresolvableNodes"].as_object().unwrap();
    assert_eq!(failed["not-a-node"], "node is not in sift's cluster state");
    // Every node is answered exactly once.
    assert_eq!(
        feasible.len() + failed.len() + unresolvable.len(),
        nodes.len() + 1
    );
    // Taints and cordons cannot be preempted away; port conflicts can.
    assert!(
        unresolvable
            .values()
            .all(|m| m == "node(s) had untolerated taint(s)" || m == "node(s) were unschedulable"),
        "{unresolvable:?}"
    );
    assert!(
        failed
            .values()
            .any(|m| m == "node(s) didn't have free ports for the requested pod ports"),
        "{failed:?}"
    );

    // nodeCacheCapable: false. The reply carries node objects, and the same
    // verdicts (sift's state holds the bound pods from the cluster file).
    let body =
        json!({"Pod": web_pod(), "Nodes": {"metadata": {}, "items": nodes}, "NodeNames": null})
            .to_string();
    let (code, text, _) = s.post("/filter", &body);
    assert_eq!(code, 200, "{text}");
    let by_objects: Value = serde_json::from_str(&text).unwrap();
    let returned: Vec<&str> = by_objects["Nodes"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(returned, feasible);
    assert!(by_objects.get("NodeNames").is_none_or(Value::is_null));
    assert_eq!(
        by_objects["FailedAndUnresolvableNodes"],
        by_names["FailedAndUnresolvableNodes"]
    );
    // The full node objects come back, not just names.
    let first = &by_objects["Nodes"]["items"][0];
    assert!(first["status"]["allocatable"].is_object(), "{first}");

    // Other paths are neither verb.
    assert_eq!(s.post("/scheduler/preempt", &body).0, 404);
    assert_eq!(s.get("/healthz").0, 200);
    assert_eq!(s.get("/readyz").0, 200);
    let metrics = s.get("/metrics").1;
    for name in [
        "sift_plugin_execution_duration_seconds_count{plugin=\"NodePorts\",extension_point=\"Filter\",status=\"Success\"} 2",
        "sift_filter_duration_seconds_count{result=\"success\"} 2",
        "sift_http_requests_total{code=\"200\"} 2",
        "sift_plugin_instances{plugin=\"NodeResourcesFit\"}",
    ] {
        assert!(metrics.contains(name), "{name} missing from /metrics");
    }
}

#[test]
fn informer_events_change_what_cached_requests_see() {
    let s = Server::start(&["--plugins", plugins_dir().to_str().unwrap()]);
    let node = |name: &str, cpu: &str| {
        json!({"kind": "Node", "apiVersion": "v1", "metadata": {"name": name},
               "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}})
    };
    let events = json!([
        {"type": "ADDED", "object": node("a", "4")},
        {"type": "ADDED", "object": node("b", "4")},
    ]);
    let (code, text, _) = s.post("/cluster", &events.to_string());
    assert_eq!(code, 200, "{text}");
    let ask = || {
        let body = json!({"Pod": web_pod(), "NodeNames": ["a", "b"]}).to_string();
        let (code, text, _) = s.post("/filter", &body);
        assert_eq!(code, 200, "{text}");
        serde_json::from_str::<Value>(&text).unwrap()
    };
    assert_eq!(ask()["NodeNames"], json!(["a", "b"]));
    // A pod bound to "a" takes 3.8 cpus and the host port.
    let bound = json!({"type": "ADDED", "object": {"kind": "Pod",
        "metadata": {"name": "big", "namespace": "x"},
        "spec": {"nodeName": "a", "containers": [{"name": "c",
            "ports": [{"containerPort": 1, "hostPort": 9090}],
            "resources": {"requests": {"cpu": "3800m"}}}]},
        "status": {"phase": "Running"}}});
    assert_eq!(s.post("/cluster", &bound.to_string()).0, 200);
    let r = ask();
    assert_eq!(r["NodeNames"], json!(["b"]));
    assert_eq!(r["FailedNodes"]["a"], "Insufficient cpu");
    // The pod finishes: its resources are free again. "b" is deleted.
    let mut done = bound.clone();
    done["type"] = json!("MODIFIED");
    done["object"]["status"]["phase"] = json!("Succeeded");
    let gone = json!({"type": "DELETED", "object": node("b", "4")});
    let (code, text, _) = s.post("/cluster", &json!([done, gone]).to_string());
    assert_eq!(code, 200, "{text}");
    let r = ask();
    assert_eq!(r["NodeNames"], json!(["a"]));
    assert_eq!(r["FailedNodes"]["b"], "node is not in sift's cluster state");
    let st = s.status();
    assert_eq!(st["cluster"]["nodes"], 1);
}

/// Claims and volumes fed as `/cluster` events reach VolumeZone: a pod
/// whose claim is bound to a zone-b volume is kept off the zone-a node;
/// a volume with a bad field is refused naming it.
#[test]
fn claims_and_volumes_fed_as_events_reach_the_volume_filters() {
    let s = Server::start(&["--plugins", plugins_dir().to_str().unwrap()]);
    let node = |name: &str, zone: &str| {
        json!({"kind": "Node", "apiVersion": "v1",
               "metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": zone}},
               "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
    };
    let events = json!([
        {"type": "ADDED", "object": node("a", "zone-a")},
        {"type": "ADDED", "object": node("b", "zone-b")},
        {"type": "ADDED", "object": {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
            "metadata": {"name": "data", "namespace": "default",
                         "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
            "spec": {"volumeName": "pv-1"}}},
        {"type": "ADDED", "object": {"kind": "PersistentVolume", "apiVersion": "v1",
            "metadata": {"name": "pv-1", "labels": {"topology.kubernetes.io/zone": "zone-b"}},
            "spec": {"capacity": {"storage": "1Gi"}}}},
    ]);
    let (code, text, _) = s.post("/cluster", &events.to_string());
    assert_eq!(code, 200, "{text}");
    let pod = json!({"metadata": {"name": "db-0", "namespace": "default"},
        "spec": {"containers": [{"name": "c"}],
                 "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]}});
    let body = json!({"Pod": pod, "NodeNames": ["a", "b"]}).to_string();
    let (code, text, _) = s.post("/filter", &body);
    assert_eq!(code, 200, "{text}");
    let r: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(r["NodeNames"], json!(["b"]), "{r}");
    assert_eq!(
        r["FailedAndUnresolvableNodes"]["a"], "node(s) had no available volume zone",
        "{r}"
    );
    let bad = json!([{"type": "ADDED", "object": {"kind": "PersistentVolume",
        "metadata": {"name": "pv-2"}, "spec": {"capacity": 5}}}]);
    let (code, text, _) = s.post("/cluster", &bad.to_string());
    assert_eq!(code, 400, "{text}");
    assert!(
        text.contains("[0].object") && text.contains("spec.capacity"),
        "{text}"
    );
}

#[test]
fn malformed_bodies_get_400_with_the_json_path() {
    let s = Server::start(&["--plugins", plugins_dir().to_str().unwrap()]);
    let cases = [
        ("{not json", "body is not JSON"),
        (r#"{"NodeNames": []}"#, "missing field `Pod`"),
        (r#"{"Pod": {}}"#, "neither Nodes nor NodeNames"),
        (
            r#"{"Pod": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "lots"}}}]}}, "NodeNames": []}"#,
            "spec.containers[0].resources.requests.cpu",
        ),
        (
            r#"{"Pod": {}, "Nodes": {"items": [{"metadata": {"name": "a"}}, {"metadata": {"labels": ["x"]}}]}}"#,
            "Nodes.items[1].metadata.labels",
        ),
        (
            r#"{"Pod": {"metadata": {"name": 5}}, "NodeNames": []}"#,
            "Pod.metadata.name",
        ),
    ];
    for (body, expect) in cases {
        let (code, text, _) = s.post("/filter", body);
        assert_eq!(code, 400, "{body} -> {text}");
        assert!(text.contains(expect), "{body}: {text:?} lacks {expect:?}");
    }
    let (code, text, _) = s.post(
        "/cluster",
        r#"[{"type": "ADDED", "object": {"kind": "ConfigMap"}}]"#,
    );
    assert_eq!(code, 400);
    assert!(text.contains("[0].object.kind"), "{text}");
    // Services are read (the default spread's selectors), and checked.
    let (code, text, _) = s.post(
        "/cluster",
        r#"[{"type": "ADDED", "object": {"kind": "Service", "metadata": {}}}]"#,
    );
    assert_eq!(code, 400);
    assert!(text.contains("[0].object.metadata.name: missing"), "{text}");
    // Bodies over --max-body are refused before parsing.
    let small = Server::start(&[
        "--plugins",
        plugins_dir().to_str().unwrap(),
        "--max-body",
        "2Ki",
    ]);
    let big = json!({"Pod": {}, "NodeNames": vec!["x".repeat(100); 100]}).to_string();
    assert_eq!(small.post("/filter", &big).0, 413);
}

/// A plugins directory with one fixture plugin, and a config that runs
/// only it, with a short call deadline.
fn fixture_setup(name: &str, wasm: &[u8], deadline: &str) -> (PathBuf, PathBuf, PathBuf) {
    let dir = temp_dir(name);
    let plugins = dir.join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    std::fs::write(plugins.join("flip.wasm"), wasm).unwrap();
    let config = dir.join("sift.yaml");
    std::fs::write(
        &config,
        format!(
            "plugins:\n  filter:\n    disabled: [{{name: \"*\"}}]\n    enabled: [{{name: Flip}}]\n\
             limits: {{callDeadline: {deadline}}}\n"
        ),
    )
    .unwrap();
    let cluster = dir.join("cluster.json");
    let nodes: Vec<Value> = (0..3)
        .map(|i| {
            json!({"kind": "Node", "apiVersion": "v1", "metadata": {"name": format!("n{i}")},
                         "status": {"allocatable": {"cpu": "4", "pods": "10"}}})
        })
        .collect();
    std::fs::write(
        &cluster,
        json!({"kind": "List", "apiVersion": "v1", "items": nodes}).to_string(),
    )
    .unwrap();
    (plugins, config, cluster)
}

/// Version A of the Flip plugin passes every node; version B rejects the
/// pod for all of them in prepare with the reason "version-b".
fn flip(version: char) -> Vec<u8> {
    named_flip("Flip", version)
}

fn named_flip(name: &str, version: char) -> Vec<u8> {
    sift_tests::fixtures::flip_plugin(name, version)
}

/// Loops forever filtering any node but slot 0 (so it passes the smoke
/// test, which filters one node in slot 0).
fn looping_filter() -> Vec<u8> {
    let filter = "(if (i32.gt_u (i32.load (local.get $slots)) (i32.const 0))
                    (then (loop $l (br $l))))";
    componentize(&plugin_wat("Flip", "", "", "", filter), "plugin")
}

#[test]
fn requests_beyond_the_queue_get_503_and_shutdown_finishes_them() {
    let fixture = fixture_setup("serve-busy", &looping_filter(), "400ms");
    let s = Server::on_fixture(&fixture, &["--max-in-flight", "1", "--max-queue", "1"]);
    let url = format!("{}/filter", s.base);
    let body = json!({"Pod": web_pod(), "NodeNames": ["n1"]}).to_string();
    // Each request runs into the 400 ms deadline: one evaluates, one
    // waits, the others are turned away at once.
    let handles: Vec<_> = (0..5)
        .map(|_| {
            let (url, body) = (url.clone(), body.clone());
            std::thread::spawn(move || post(&agent(), &url, &body))
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let busy: Vec<_> = results.iter().filter(|r| r.0 == 503).collect();
    let served: Vec<_> = results.iter().filter(|r| r.0 == 200).collect();
    assert_eq!(busy.len() + served.len(), 5, "{results:?}");
    assert!(!busy.is_empty() && served.len() >= 2, "{results:?}");
    assert!(
        busy.iter().all(|r| r.2.as_deref() == Some("1")),
        "Retry-After"
    );
    // A missed deadline is the plugin's Error: the reply's Error field.
    for r in &served {
        let v: Value = serde_json::from_str(&r.1).unwrap();
        assert!(
            v["Error"]
                .as_str()
                .unwrap()
                .contains("exceeded its deadline"),
            "{v}"
        );
    }

    // SIGTERM while a request is in flight: it is answered, then sift exits 0.
    let in_flight = {
        let (url, body) = (url.clone(), body.clone());
        std::thread::spawn(move || post(&agent(), &url, &body))
    };
    std::thread::sleep(Duration::from_millis(150));
    s.signal("TERM");
    let answered = in_flight.join().unwrap();
    assert_eq!(answered.0, 200, "{answered:?}");
    let status = s.wait_exit(Duration::from_secs(10));
    assert!(status.success(), "{status:?}");
}

fn write_plain(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).unwrap();
}

fn write_renamed(path: &Path, bytes: &[u8]) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

#[test]
fn plugins_replaced_under_load_never_fail_a_request() {
    let a = flip('a');
    let b = flip('b');
    let broken: Vec<(&str, Vec<u8>)> = vec![
        ("truncated", a[..a.len() / 2].to_vec()),
        (
            "wrong world",
            componentize(
                r#"(module (func (export "sift:fixture/other#hello") (result i32) (i32.const 1)))"#,
                "wrong",
            ),
        ),
        (
            "traps in prepare",
            componentize(&plugin_wat("Flip", "", "", "unreachable", ""), "plugin"),
        ),
        (
            "misses its deadline",
            componentize(
                &plugin_wat("Flip", "", "(loop $l (br $l))", "(loop $l (br $l))", ""),
                "plugin",
            ),
        ),
    ];
    let fixture = fixture_setup("serve-reload", &a, "200ms");
    let plugins = fixture.0.clone();
    let s = Server::on_fixture(&fixture, &["--log-level", "error"]);
    let url = format!("{}/filter", s.base);
    let stop = Arc::new(AtomicBool::new(false));
    let seen_a = Arc::new(AtomicUsize::new(0));
    let seen_b = Arc::new(AtomicUsize::new(0));
    let clients: Vec<_> = (0..4)
        .map(|_| {
            let (url, stop, seen_a, seen_b) =
                (url.clone(), stop.clone(), seen_a.clone(), seen_b.clone());
            std::thread::spawn(move || {
                let agent = agent();
                let body = json!({"Pod": web_pod(), "NodeNames": ["n0", "n1", "n2"]}).to_string();
                let mut failures = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    let (code, text, _) = post(&agent, &url, &body);
                    let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                    let all_pass = v["NodeNames"] == json!(["n0", "n1", "n2"])
                        && v["FailedNodes"] == json!({});
                    let all_b = v["NodeNames"] == json!([])
                        && v["FailedNodes"]
                            == json!({"n0": "version-b", "n1": "version-b", "n2": "version-b"});
                    if code == 200 && v["Error"] == "" && all_pass {
                        seen_a.fetch_add(1, Ordering::Relaxed);
                    } else if code == 200 && v["Error"] == "" && all_b {
                        seen_b.fetch_add(1, Ordering::Relaxed);
                    } else {
                        failures.push(format!("{code} {text}"));
                    }
                }
                failures
            })
        })
        .collect();

    let file = plugins.join("flip.wasm");
    // Broken and valid versions alternate (B, A, B, A between broken
    // ones); half are written in place (no rename), as some writers do.
    // Writes come faster than the 200 ms debounce, so some versions are
    // never seen whole: sift must serve one of the valid ones throughout,
    // and the last one written (B) once the writes stop.
    for i in 0..50 {
        let bytes: &[u8] = match i % 4 {
            1 => &b,
            3 => &a,
            _ => &broken[(i / 2) % broken.len()].1,
        };
        if i % 3 == 0 {
            write_plain(&file, bytes);
        } else {
            write_renamed(&file, bytes);
        }
        std::thread::sleep(Duration::from_millis(120));
    }
    let want = sha_prefix(&b);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let st = s.status();
        if st["plugins"][0]["version"] == want.as_str() {
            break;
        }
        assert!(Instant::now() < deadline, "B never came back: {st}");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    let failures: Vec<String> = clients
        .into_iter()
        .flat_map(|c| c.join().unwrap())
        .collect();
    assert!(
        failures.is_empty(),
        "{} failed: {:?}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );
    let (na, nb) = (
        seen_a.load(Ordering::Relaxed),
        seen_b.load(Ordering::Relaxed),
    );
    assert!(na > 0 && nb > 0, "both versions served (A {na}, B {nb})");
    // Broken versions were seen and rejected, not served.
    let metrics = s.get("/metrics").1;
    assert!(
        metrics.contains("sift_plugin_reloads_total{plugin=\"Flip\",result=\"failure\"}")
            || metrics.contains("sift_plugin_reloads_total{plugin=\"flip\",result=\"failure\"}"),
        "{metrics}"
    );
    assert!(metrics.contains("sift_plugin_reloads_total{plugin=\"Flip\",result=\"success\"}"));
}

fn sha_prefix(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>()[..12]
        .to_string()
}

/// Polls `/status` until `check` holds (reloads are asynchronous).
fn wait_for(s: &Server, what: &str, check: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let st = s.status();
        if check(&st) {
            return st;
        }
        assert!(Instant::now() < deadline, "{what}: {st}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn enabled(st: &Value) -> Vec<String> {
    st["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["enabled"] == true)
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn config_changes_and_removed_files_apply_live() {
    let fixture = fixture_setup("serve-config", &flip('a'), "1s");
    let (plugins, config) = (fixture.0.clone(), fixture.1.clone());
    let s = Server::on_fixture(&fixture, &[]);
    let ask = || {
        let body = json!({"Pod": web_pod(), "NodeNames": ["n0", "n1"]}).to_string();
        let (code, text, _) = s.post("/filter", &body);
        assert_eq!(code, 200, "{text}");
        serde_json::from_str::<Value>(&text).unwrap()
    };
    assert_eq!(ask()["NodeNames"], json!(["n0", "n1"]));

    // A new component is loaded but not enabled: nothing changes.
    std::fs::write(plugins.join("deny.wasm"), named_flip("Deny", 'b')).unwrap();
    let st = wait_for(&s, "Deny loaded", |st| {
        st["plugins"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "Deny")
    });
    assert_eq!(enabled(&st), ["Flip"]);
    assert_eq!(ask()["NodeNames"], json!(["n0", "n1"]));

    // Enabling it in the config takes effect without a restart.
    let yaml = |filters: &str| {
        format!("plugins:\n  filter:\n    disabled: [{{name: \"*\"}}]\n    enabled: [{filters}]\n")
    };
    std::fs::write(&config, yaml("{name: Deny}, {name: Flip}")).unwrap();
    wait_for(&s, "Deny enabled", |st| enabled(st) == ["Deny", "Flip"]);
    let r = ask();
    assert_eq!(r["NodeNames"], json!([]));
    assert_eq!(r["FailedNodes"]["n0"], "version-b");

    // A broken config is reported; the last good one keeps serving.
    std::fs::write(&config, "plugins: {filter: {enabeld: []}}\n").unwrap();
    let st = wait_for(&s, "config error", |st| {
        st["reload"]["configError"].is_string()
    });
    assert!(
        st["reload"]["configError"]
            .as_str()
            .unwrap()
            .contains("enabeld"),
        "{st}"
    );
    assert_eq!(ask()["FailedNodes"]["n0"], "version-b");

    // Removing the file unloads the plugin; /status says it is missing.
    std::fs::write(&config, yaml("{name: Deny}, {name: Flip}")).unwrap();
    std::fs::remove_file(plugins.join("deny.wasm")).unwrap();
    // The profile is swapped before the rescan's errors are published:
    // wait for both.
    let st = wait_for(&s, "Deny unloaded", |st| {
        enabled(st) == ["Flip"] && st["reload"]["generation"] == st["profileGeneration"]
    });
    assert!(st["reload"]["configError"].is_null(), "{st}");
    assert!(
        st["reload"]["errors"]["Deny"]
            .as_str()
            .is_some_and(|e| e.contains("no component declares it")),
        "{st}"
    );
    assert_eq!(ask()["NodeNames"], json!(["n0", "n1"]));

    // SIGHUP rescans: nothing changed, nothing is swapped.
    let generation = s.status()["profileGeneration"].clone();
    s.signal("HUP");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(s.status()["profileGeneration"], generation);
    assert_eq!(ask()["NodeNames"], json!(["n0", "n1"]));
}

/// The contract version `/status` shows for a plugin.
fn contract_of(st: &Value, name: &str) -> Option<String> {
    st["plugins"]
        .as_array()?
        .iter()
        .find(|p| p["name"] == name)
        .and_then(|p| p["contract"].as_str())
        .map(str::to_string)
}

#[test]
fn components_of_both_contracts_serve_together_and_each_swaps_live() {
    // Flip is a 0.1 fixture; GpuModel a 0.2 build of the bundled component
    // (tests/fixtures), later swapped for the 0.1 WAT example of the same
    // plugin, and back.
    let fixture = fixture_setup("serve-versions", &flip('a'), "1s");
    let (plugins, config) = (fixture.0.clone(), fixture.1.clone());
    let gpu_02 = std::fs::read(
        sift_tests::workspace_root().join("tests/fixtures/gpu_model_contract_0_2.wasm"),
    )
    .unwrap();
    let gpu_01 =
        std::fs::read(sift_tests::workspace_root().join("target/examples/gpu_model_wat.wasm"))
            .expect("the WAT example is built (scripts/build-examples.sh)");
    std::fs::write(plugins.join("gpu.wasm"), &gpu_02).unwrap();
    std::fs::write(
        &config,
        "plugins:\n  filter:\n    disabled: [{name: \"*\"}]\n    enabled: [{name: Flip}, {name: GpuModel}]\n",
    )
    .unwrap();
    let s = Server::on_fixture(&fixture, &[]);
    let ask = || {
        let body = json!({"Pod": web_pod(), "NodeNames": ["n0", "n1"]}).to_string();
        let (code, text, _) = s.post("/filter", &body);
        assert_eq!(code, 200, "{text}");
        serde_json::from_str::<Value>(&text).unwrap()
    };
    let st = wait_for(&s, "both enabled", |st| enabled(st) == ["Flip", "GpuModel"]);
    assert_eq!(contract_of(&st, "Flip").as_deref(), Some("0.1.0"), "{st}");
    assert_eq!(
        contract_of(&st, "GpuModel").as_deref(),
        Some("0.2.0"),
        "{st}"
    );
    assert_eq!(ask()["NodeNames"], json!(["n0", "n1"]));

    // The 0.1 plugin swapped: its new verdict is served.
    write_renamed(&plugins.join("flip.wasm"), &flip('b'));
    wait_for(&s, "Flip b", |_| ask()["FailedNodes"]["n0"] == "version-b");

    // The 0.2 plugin swapped for a 0.1 build of itself, then back.
    write_renamed(&plugins.join("gpu.wasm"), &gpu_01);
    wait_for(&s, "GpuModel on 0.1", |st| {
        contract_of(st, "GpuModel").as_deref() == Some("0.1.0")
    });
    assert_eq!(ask()["FailedNodes"]["n0"], "version-b");
    write_renamed(&plugins.join("gpu.wasm"), &gpu_02);
    wait_for(&s, "GpuModel on 0.2", |st| {
        contract_of(st, "GpuModel").as_deref() == Some("0.2.0")
    });
    assert_eq!(ask()["FailedNodes"]["n1"], "version-b");
}

/// How often `needle` occurs in a log file.
fn count_in(log: &Path, needle: &str) -> usize {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .matches(needle)
        .count()
}

/// The arguments of [`Server::on_fixture`], for servers started otherwise.
fn fixture_args((plugins, config, cluster): &(PathBuf, PathBuf, PathBuf)) -> Vec<&str> {
    vec![
        "--plugins",
        plugins.to_str().unwrap(),
        "-c",
        config.to_str().unwrap(),
        "--cluster",
        cluster.to_str().unwrap(),
    ]
}

fn cluster_of(n: usize) -> String {
    let nodes: Vec<Value> = (0..n)
        .map(|i| {
            json!({"kind": "Node", "apiVersion": "v1", "metadata": {"name": format!("n{i}")},
                   "status": {"allocatable": {"cpu": "4", "pods": "10"}}})
        })
        .collect();
    json!({"kind": "List", "apiVersion": "v1", "items": nodes}).to_string()
}

/// Issue 12 §1.1, §2.7: sift reading the files it watches woke it again,
/// so a cluster file was reparsed ~5 times a second forever after a change,
/// and a lasting reload error was logged every 200 ms.
#[test]
fn a_cluster_file_change_is_applied_once_and_a_lasting_error_logged_once() {
    let fixture = fixture_setup("serve-reload-once", &flip('a'), "1s");
    let (_, config, cluster) = fixture.clone();
    std::fs::write(
        &config,
        "plugins:\n  filter:\n    disabled: [{name: \"*\"}]\n    enabled: [{name: Flip}, {name: Ghost}]\n",
    )
    .unwrap();
    let log = config.with_file_name("serve.log");
    let mut args = fixture_args(&fixture);
    args.extend(["--log-level", "info"]);
    let s = Server::start_logged(&args, &log);
    let settle = || std::thread::sleep(Duration::from_millis(1500));
    wait_for(&s, "Ghost reported", |st| {
        st["reload"]["errors"]["Ghost"].is_string()
    });
    settle();
    assert_eq!(count_in(&log, "no component declares it"), 1);

    // A change is applied once.
    write_renamed(&cluster, cluster_of(4).as_bytes());
    wait_for(&s, "4 nodes", |st| st["cluster"]["nodes"] == 4);
    settle();
    assert_eq!(count_in(&log, "cluster files reloaded"), 1);
    assert_eq!(count_in(&log, "no component declares it"), 1);
    assert_eq!(
        s.status()["cluster"]["fileReloads"],
        2,
        "at start, and the change"
    );

    // Touching the file changes nothing.
    std::fs::File::options()
        .write(true)
        .open(&cluster)
        .unwrap()
        .set_modified(std::time::SystemTime::now())
        .unwrap();
    settle();
    assert_eq!(s.status()["cluster"]["fileReloads"], 2);
    assert_eq!(count_in(&log, "cluster files reloaded"), 1);

    // SIGHUP reapplies the file once, over what /cluster events changed;
    // the lasting plugin problem is still logged once.
    let gone = json!({"type": "DELETED", "object": {"kind": "Node", "metadata": {"name": "n0"}}});
    assert_eq!(s.post("/cluster", &gone.to_string()).0, 200);
    assert_eq!(s.status()["cluster"]["nodes"], 3);
    s.signal("HUP");
    wait_for(&s, "n0 back", |st| st["cluster"]["nodes"] == 4);
    settle();
    assert_eq!(s.status()["cluster"]["fileReloads"], 3);
    assert_eq!(count_in(&log, "cluster files reloaded"), 2);
    assert_eq!(count_in(&log, "no component declares it"), 1);
}

/// Issue 12 §1.2: node objects of `Nodes`-mode requests stayed in the
/// cluster state: they changed later `NodeNames` answers, and memory grew
/// with every name ever sent.
#[test]
fn nodes_sent_in_a_request_are_that_requests_only() {
    let s = Server::on_demo();
    let nodes = demo_nodes();
    let all = names(&nodes);
    let by_names = || {
        let mut asked = all.clone();
        asked.push("intruder".into());
        let body = json!({"Pod": web_pod(), "NodeNames": asked}).to_string();
        let (code, text, _) = s.post("/filter", &body);
        assert_eq!(code, 200, "{text}");
        serde_json::from_str::<Value>(&text).unwrap()
    };
    let before = by_names();
    let feasible = before["NodeNames"][0].as_str().expect("a feasible node");

    // A request carrying that node cordoned, and a node sift never heard of.
    let mut sent: Vec<Value> = nodes
        .iter()
        .filter(|n| n["metadata"]["name"] == feasible)
        .cloned()
        .collect();
    sent[0]["spec"]["unschedulable"] = json!(true);
    let mut intruder = sent[0].clone();
    intruder["metadata"]["name"] = json!("intruder");
    intruder["spec"]["unschedulable"] = json!(false);
    sent.push(intruder);
    let body = json!({"Pod": web_pod(), "Nodes": {"items": sent}}).to_string();
    let (code, text, _) = s.post("/filter", &body);
    assert_eq!(code, 200, "{text}");
    let r: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        r["FailedAndUnresolvableNodes"][feasible], "node(s) were unschedulable",
        "{r}"
    );
    assert_eq!(r["Nodes"]["items"][0]["metadata"]["name"], "intruder");

    // Later NodeNames requests see the cluster as before.
    let after = by_names();
    assert_eq!(after, before);
    assert_eq!(
        after["FailedNodes"]["intruder"],
        "node is not in sift's cluster state"
    );

    // Only the last request's nodes are held, however many names are sent.
    for round in 0..5 {
        let items: Vec<Value> = (0..40)
            .map(|i| {
                let mut n = nodes[0].clone();
                n["metadata"]["name"] = json!(format!("r{round}-{i}"));
                n
            })
            .collect();
        let body = json!({"Pod": web_pod(), "Nodes": {"items": items}}).to_string();
        assert_eq!(s.post("/filter", &body).0, 200);
    }
    let st = s.status();
    assert_eq!(st["cluster"]["requestNodes"], 40, "{st}");
    assert_eq!(st["cluster"]["nodes"], nodes.len(), "{st}");
}

/// Issue 12 §1.3: of two components declaring one name, the first in file
/// order served after a restart, the incumbent after a hot load.
#[test]
fn a_plugin_name_declared_twice_is_served_by_neither_unless_the_config_says_which() {
    let fixture = fixture_setup("serve-duplicate", &flip('a'), "1s");
    let (plugins, config, _) = fixture.clone();
    let base = "plugins:\n  filter:\n    disabled: [{name: \"*\"}]\n    enabled: [{name: Flip}]\n";
    let ask = |s: &Server| {
        let body = json!({"Pod": web_pod(), "NodeNames": ["n0"]}).to_string();
        let (code, text, _) = s.post("/filter", &body);
        assert_eq!(code, 200, "{text}");
        serde_json::from_str::<Value>(&text).unwrap()
    };
    let s = Server::on_fixture(&fixture, &[]);
    assert_eq!(s.get("/readyz").0, 200);
    // A second component named Flip, sorted before the first.
    std::fs::write(plugins.join("aa_dup.wasm"), flip('b')).unwrap();
    let st = wait_for(&s, "both refused", |st| {
        st["reload"]["errors"]
            .as_object()
            .is_some_and(|e| e.keys().filter(|k| k.ends_with(".wasm")).count() == 2)
    });
    for (file, message) in st["reload"]["errors"].as_object().unwrap() {
        if file.ends_with(".wasm") {
            let m = message.as_str().unwrap();
            assert!(
                m.contains("declares the plugin name \"Flip\"") && m.contains("pluginFiles"),
                "{file}: {m}"
            );
        }
    }
    let (code, text) = s.get("/readyz");
    assert_eq!(code, 503, "{text}");
    assert!(text.contains("Flip"), "{text}");
    // Requests are not answered without the refused plugin: kube-scheduler
    // gets an extender error.
    let r = ask(&s);
    assert!(r["Error"].as_str().unwrap().contains("not ready"), "{r}");
    assert!(r.get("NodeNames").is_none_or(Value::is_null), "{r}");

    // The config says which file serves the name.
    std::fs::write(
        &config,
        format!("{base}pluginFiles: {{Flip: aa_dup.wasm}}\n"),
    )
    .unwrap();
    wait_for(&s, "aa_dup serves", |st| {
        st["plugins"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["enabled"] == true && p["file"].as_str().unwrap().ends_with("aa_dup.wasm"))
    });
    assert_eq!(s.get("/readyz").0, 200);
    assert_eq!(ask(&s)["FailedNodes"]["n0"], "version-b");
    drop(s);

    // A restart without that line: refused again, whatever the file order.
    std::fs::write(&config, base).unwrap();
    let s = Server::on_fixture(&fixture, &[]);
    let (code, text) = s.get("/readyz");
    assert_eq!(code, 503, "{text}");
    assert!(enabled(&s.status()).is_empty());
}

/// Reads from `stream` until `needle` arrives, the peer closes, or 20 s
/// pass: what was read, and whether the peer closed.
fn read_until(stream: &mut std::net::TcpStream, needle: &str) -> (String, bool) {
    use std::io::Read;
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let mut closed = false;
    while Instant::now() < deadline {
        match stream.read(&mut buf) {
            Ok(0) => {
                closed = true;
                break;
            }
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => {
                closed = true;
                break;
            }
        }
        if !needle.is_empty() && String::from_utf8_lossy(&got).contains(needle) {
            break;
        }
    }
    (String::from_utf8_lossy(&got).into_owned(), closed)
}

/// Issue 12 §2.4: clients that stalled mid-request kept their connections
/// forever and held up shutdown.
#[test]
fn stalled_clients_are_cut_off_and_do_not_hold_up_shutdown() {
    use std::io::Write;
    use std::net::TcpStream;
    let s = Server::start(&[
        "--plugins",
        plugins_dir().to_str().unwrap(),
        "--read-timeout",
        "1s",
        "--shutdown-timeout",
        "2s",
    ]);
    let addr = s.base.strip_prefix("http://").unwrap().to_string();
    // An idle keep-alive connection is not a stalled one: kube-scheduler's
    // client keeps them for 90 s and reuses them.
    let mut keep = TcpStream::connect(&addr).unwrap();
    let get = b"GET /healthz HTTP/1.1\r\nHost: sift\r\n\r\n";
    keep.write_all(get).unwrap();
    assert!(read_until(&mut keep, "ok").0.starts_with("HTTP/1.1 200"));
    std::thread::sleep(Duration::from_millis(2500));
    keep.write_all(get).unwrap();
    let (again, _) = read_until(&mut keep, "ok");
    assert!(
        again.starts_with("HTTP/1.1 200"),
        "idle connection closed: {again:?}"
    );

    let mut headers = TcpStream::connect(&addr).unwrap();
    headers
        .write_all(b"POST /filter HTTP/1.1\r\nHost: sift\r\n")
        .unwrap();
    let mut body = TcpStream::connect(&addr).unwrap();
    body.write_all(
        b"POST /filter HTTP/1.1\r\nHost: sift\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"Pod\":",
    )
    .unwrap();
    let _silent = TcpStream::connect(&addr).unwrap();
    let (reply, _) = read_until(&mut body, "\r\n\r\n");
    assert!(reply.starts_with("HTTP/1.1 408"), "{reply:?}");
    let (_, closed) = read_until(&mut headers, "");
    assert!(closed, "a stalled header read is cut off");

    // SIGTERM with a connection still open that never sent anything, and
    // another mid-body: sift exits anyway.
    let mut stalled = TcpStream::connect(&addr).unwrap();
    stalled
        .write_all(b"POST /cluster HTTP/1.1\r\nHost: sift\r\nContent-Length: 10\r\n\r\n[")
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    s.signal("TERM");
    let status = s.wait_exit(Duration::from_secs(15));
    assert!(status.success(), "{status:?}");
}

/// Issue 12 §3.6: what `kubectl get --watch --output-watch-events -o json`
/// prints (objects one after another) was rejected.
#[test]
fn cluster_events_may_come_one_after_another() {
    let s = Server::start(&["--plugins", plugins_dir().to_str().unwrap()]);
    let event = |name: &str| {
        json!({"type": "ADDED", "object": {"kind": "Node", "apiVersion": "v1",
            "metadata": {"name": name},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}})
    };
    let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap();
    let body = format!("{}\n{}\n", pretty(&event("a")), pretty(&event("b")));
    let (code, text, _) = s.post("/cluster", &body);
    assert_eq!(code, 200, "{text}");
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap()["changed"], 2);
    let ndjson = format!("{}\n{}\n", event("c"), event("d"));
    let (code, text, _) = s.post("/cluster", &ndjson);
    assert_eq!(code, 200, "{text}");
    assert_eq!(s.status()["cluster"]["nodes"], 4);
    // A bad event anywhere: nothing is applied, and the error says which.
    let bad = format!(
        "{}\n{{\"type\": \"ADDED\", \"object\": {{\"kind\": \"Service\"}}}}",
        event("e")
    );
    let (code, text, _) = s.post("/cluster", &bad);
    assert_eq!(code, 400);
    assert!(text.contains("event 2"), "{text}");
    assert_eq!(s.status()["cluster"]["nodes"], 4);
    // A value that only fails when converted, after a good event: the
    // body is still applied whole or not at all.
    let mut bad_cpu = event("f");
    bad_cpu["object"]["status"]["allocatable"]["cpu"] = json!("lots");
    let body = json!([event("e"), bad_cpu]).to_string();
    let (code, text, _) = s.post("/cluster", &body);
    assert_eq!(code, 400);
    assert!(
        text.contains("[1].object") && text.contains("lots"),
        "{text}"
    );
    assert_eq!(s.status()["cluster"]["nodes"], 4, "event e was applied");
}

/// Issue 12 §3.7: a reply with Error carried FailedNodes too.
#[test]
fn a_failed_cycle_replies_with_error_only() {
    let fixture = fixture_setup("serve-error-only", &looping_filter(), "300ms");
    let s = Server::on_fixture(&fixture, &[]);
    let body = json!({"Pod": web_pod(), "NodeNames": ["n1", "ghost"]}).to_string();
    let (code, text, _) = s.post("/filter", &body);
    assert_eq!(code, 200, "{text}");
    let r: Value = serde_json::from_str(&text).unwrap();
    assert!(r["Error"].as_str().unwrap().contains("deadline"), "{r}");
    for key in ["FailedNodes", "FailedAndUnresolvableNodes"] {
        assert!(
            r.get(key)
                .is_none_or(|v| v.as_object().is_some_and(|m| m.is_empty())),
            "{key}: {r}"
        );
    }
}

/// Issue 12 §3.1: `/status` kept errors of deleted files and of plugins
/// the config no longer enabled.
#[test]
fn status_forgets_problems_that_are_gone() {
    let fixture = fixture_setup("serve-status-errors", &flip('a'), "1s");
    let (plugins, config, _) = fixture.clone();
    let s = Server::on_fixture(&fixture, &[]);
    let broken = plugins.join("broken.wasm");
    std::fs::write(&broken, b"not wasm").unwrap();
    let key = broken.display().to_string();
    wait_for(&s, "broken reported", |st| {
        st["reload"]["errors"][&key].is_string()
    });
    std::fs::remove_file(&broken).unwrap();
    wait_for(&s, "broken forgotten", |st| {
        st["reload"]["errors"][&key].is_null()
    });

    let yaml = |enabled: &str| {
        format!("plugins:\n  filter:\n    disabled: [{{name: \"*\"}}]\n    enabled: [{enabled}]\n")
    };
    std::fs::write(&config, yaml("{name: Flip}, {name: Ghost}")).unwrap();
    wait_for(&s, "Ghost reported", |st| {
        st["reload"]["errors"]["Ghost"].is_string()
    });
    std::fs::write(&config, yaml("{name: Flip}")).unwrap();
    s.signal("HUP");
    let st = wait_for(&s, "Ghost forgotten", |st| {
        st["reload"]["errors"]["Ghost"].is_null()
    });
    assert_eq!(st["reload"]["errors"], json!({}), "{st}");
}

/// Issue 12 §3.10: a config with relative directories made `sift serve`
/// warn at start that restart-only settings had changed.
#[test]
fn an_unchanged_config_gives_no_restart_warning() {
    let fixture = fixture_setup("serve-no-warning", &flip('a'), "1s");
    let (_, config, _) = fixture.clone();
    let dir = config.parent().unwrap().to_path_buf();
    std::fs::write(
        &config,
        "pluginsDir: plugins\ncacheDir: cache\nplugins:\n  filter:\n    disabled: [{name: \"*\"}]\n    enabled: [{name: Flip}]\n",
    )
    .unwrap();
    let log = dir.join("serve.log");
    let file = std::fs::File::create(&log).unwrap();
    // Relative paths, from the fixture's directory, as an operator types them.
    let mut child = Command::new(sift_bin())
        .current_dir(&dir)
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "-c",
            "sift.yaml",
            "--cluster",
            "cluster.json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::from(file))
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    std::fs::write(
        &config,
        std::fs::read_to_string(&config).unwrap() + "# touched\n",
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(1200));
    let _ = child.kill();
    let _ = child.wait();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(line.starts_with("listening on"), "{line} {text}");
    assert!(!text.contains("take effect on restart"), "{text}");
}

/// Review of issue 12: a component rejected for its arguments was not
/// retried once the config fixed them.
#[test]
fn a_component_rejected_for_its_arguments_is_retried_when_they_change() {
    // init rejects any arguments but "{}".
    let init = "(if (i32.ne (local.get 1) (i32.const 2)) (then
        (i32.store8 (i32.const 80) (i32.const 1))
        (i32.store (i32.const 84) (i32.const 48))
        (i32.store (i32.const 88) (i32.const 8))))";
    let picky = componentize(&plugin_wat("Flip", "", init, "", ""), "plugin");
    let fixture = fixture_setup("serve-args-retry", &picky, "1s");
    let (plugins, config, _) = fixture.clone();
    let base = "plugins:\n  filter:\n    disabled: [{name: \"*\"}]\n    enabled: [{name: Flip}]\n";
    std::fs::write(
        &config,
        format!("{base}pluginConfig: [{{name: Flip, args: {{x: 1}}}}]\n"),
    )
    .unwrap();
    let s = Server::on_fixture(&fixture, &[]);
    let key = plugins.join("flip.wasm").display().to_string();
    let st = s.status();
    assert!(
        st["reload"]["errors"][&key]
            .as_str()
            .is_some_and(|e| e.contains("bad args")),
        "{st}"
    );
    std::fs::write(&config, base).unwrap();
    wait_for(&s, "Flip loaded", |st| enabled(st) == ["Flip"]);
    assert_eq!(s.get("/readyz").0, 200);
}

/// Review of issue 12: a plugin's Error text reached `sift serve`'s log
/// raw, so a newline in it forged a log line.
#[test]
fn plugin_error_text_cannot_forge_log_lines() {
    let forged = "boom\n2026-01-01T00:00:00Z ERROR sift_host::serve: FORGED";
    let data: String = forged.bytes().map(|b| format!("\\{b:02x}")).collect();
    // prepare: reject with code Error and that reason.
    let prepare = format!(
        "(i32.store8 (i32.const 96) (i32.const 2))
         (i32.store8 (i32.const 100) (i32.const 1))
         (i32.store (i32.const 104) (i32.const 200))
         (i32.store (i32.const 108) (i32.const 1))
         (i32.store (i32.const 200) (i32.const 300))
         (i32.store (i32.const 204) (i32.const {len}))
         (if (i32.ne (i32.load8_u (i32.const 9000)) (i32.const 0))
           (then (return (i32.const 96))))
         (i32.store8 (i32.const 9000) (i32.const 1))
         (i32.store8 (i32.const 96) (i32.const 0))",
        len = forged.len()
    );
    let imports = format!(r#"(data (i32.const 300) "{data}")"#);
    // The first prepare (the smoke test) proceeds; later ones fail.
    let wasm = componentize(&plugin_wat("Flip", &imports, "", &prepare, ""), "plugin");
    let fixture = fixture_setup("serve-forge", &wasm, "1s");
    let log = fixture.1.with_file_name("serve.log");
    let s = Server::start_logged(&fixture_args(&fixture), &log);
    let body = json!({"Pod": web_pod(), "NodeNames": ["n0"]}).to_string();
    let (code, text, _) = s.post("/filter", &body);
    assert_eq!(code, 200, "{text}");
    assert!(
        text.contains("FORGED"),
        "the reply carries the error: {text}"
    );
    drop(s);
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.contains("boom\\n2026"), "{logged}");
    for line in logged.lines().filter(|l| l.contains("FORGED")) {
        assert!(line.contains("boom\\n"), "a forged line: {line}");
    }
}

/// Namespaces' labels reach InterPodAffinity's namespaceSelector from
/// --cluster files and from /cluster events (a review found serve kept
/// neither).
#[test]
fn namespaces_from_files_and_events_decide_namespace_selectors() {
    let dir = sift_tests::temp_dir("serve-namespaces");
    let node = |name: &str| {
        json!({"apiVersion": "v1", "kind": "Node",
               "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
               "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
    };
    let namespace = json!({"apiVersion": "v1", "kind": "Namespace",
                           "metadata": {"name": "shop", "labels": {"team": "a"}}});
    let db = json!({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": "db-0", "namespace": "shop", "labels": {"app": "db"}},
                    "spec": {"nodeName": "n0", "containers": [{"name": "c", "image": "db"}]},
                    "status": {"phase": "Running"}});
    let cluster = dir.join("cluster.json");
    let list = |items: Vec<Value>| json!({"apiVersion": "v1", "kind": "List", "items": items});
    std::fs::write(
        &cluster,
        list(vec![node("n0"), node("n1"), namespace.clone(), db]).to_string(),
    )
    .unwrap();
    let s = Server::start(&[
        "--plugins",
        plugins_dir().to_str().unwrap(),
        "--cluster",
        cluster.to_str().unwrap(),
    ]);
    // Next to a db pod of any namespace labelled team=a.
    let pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "web"}],
                 "affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
                     "labelSelector": {"matchLabels": {"app": "db"}},
                     "namespaceSelector": {"matchLabels": {"team": "a"}},
                     "topologyKey": "kubernetes.io/hostname"}]}}}});
    let feasible = || {
        let body = json!({"Pod": pod, "NodeNames": ["n0", "n1"]}).to_string();
        let (code, text, _) = s.post("/filter", &body);
        assert_eq!(code, 200, "{text}");
        let r: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(r["Error"], "", "{r}");
        r["NodeNames"].clone()
    };
    assert_eq!(feasible(), json!(["n0"]));
    let event = |kind: &str| json!({"type": kind, "object": namespace}).to_string();
    let (code, text, _) = s.post("/cluster", &event("DELETED"));
    assert_eq!(code, 200, "{text}");
    assert_eq!(feasible(), json!([]), "no namespace selects shop any more");
    let (code, text, _) = s.post("/cluster", &event("ADDED"));
    assert_eq!(code, 200, "{text}");
    assert_eq!(feasible(), json!(["n0"]));
    std::fs::remove_dir_all(&dir).ok();
}

/// Cluster files are read in two passes (bound pods are never all kept as
/// objects): a file with a bad bound pod is applied not at all, and a good
/// one with bound pods and removals is applied whole.
#[test]
fn a_cluster_file_with_a_bad_bound_pod_changes_nothing() {
    let fixture = fixture_setup("serve-bound-pods", &flip('a'), "1s");
    let (_, _, cluster) = fixture.clone();
    let bound = |name: &str, node: &str, cpu: &str| {
        json!({"kind": "Pod", "apiVersion": "v1",
               "metadata": {"name": name, "namespace": "default"},
               "spec": {"nodeName": node, "containers": [{"name": "c",
                        "resources": {"requests": {"cpu": cpu}}}]},
               "status": {"phase": "Running"}})
    };
    let file = |items: Vec<Value>| json!({"kind": "List", "apiVersion": "v1", "items": items});
    let node = |name: &str| {
        json!({"kind": "Node", "apiVersion": "v1", "metadata": {"name": name},
               "status": {"allocatable": {"cpu": "4", "pods": "10"}}})
    };
    write_renamed(
        &cluster,
        file(vec![
            bound("a", "n0", "1"),
            node("n0"),
            bound("b", "n0", "1"),
        ])
        .to_string()
        .as_bytes(),
    );
    let s = Server::start(&fixture_args(&fixture));
    wait_for(&s, "two bound pods", |st| {
        st["cluster"]["nodes"] == 1 && st["cluster"]["pods"] == 2
    });
    // A new node and a bad pod after a good one: nothing of it applies.
    write_renamed(
        &cluster,
        file(vec![
            node("n0"),
            node("n1"),
            bound("c", "n1", "1"),
            bound("d", "n1", "lots"),
        ])
        .to_string()
        .as_bytes(),
    );
    let st = wait_for(&s, "the file error", |st| {
        st["cluster"]["fileError"].is_string()
    });
    assert!(
        st["cluster"]["fileError"]
            .as_str()
            .unwrap()
            .contains("items[3]"),
        "{st}"
    );
    assert_eq!(st["cluster"]["nodes"], 1, "{st}");
    assert_eq!(st["cluster"]["pods"], 2, "{st}");
    // A good file: b stays, a leaves, c arrives on the new node.
    write_renamed(
        &cluster,
        file(vec![
            node("n0"),
            node("n1"),
            bound("b", "n0", "1"),
            bound("c", "n1", "1"),
        ])
        .to_string()
        .as_bytes(),
    );
    wait_for(&s, "the good file", |st| {
        st["cluster"]["fileError"].is_null()
            && st["cluster"]["nodes"] == 2
            && st["cluster"]["pods"] == 2
    });
}
