//! `sift serve --kubeconfig` end to end against a fake API server
//! (`sift_tests::apiserver`) that speaks the real list/watch protocol:
//! the initial sync and /readyz, events following binds, deletions and
//! finished pods, nodes coming and going, bookmarks and ordinary watch
//! ends, 410 Gone and the relist, dropped connections, an API server that
//! goes away after the sync, and servers or kubeconfigs that are wrong.
//!
//! Timing is not the point: every wait polls with a generous deadline; the
//! happy path asserts a change is visible within 2 s (it takes well under
//! one on an idle machine).

use serde_json::{Value, json};
use sift_tests::apiserver::{FakeApiServer, Gone, Resource, write_kubeconfig};
use sift_tests::{plugins_dir, sift_bin, temp_dir};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SELECTOR: &str = "status.phase!=Succeeded,status.phase!=Failed";
/// Deadline for every wait: a liveness bound, not a latency target (latency
/// against a real API server is measured by scripts/watch-acceptance.sh;
/// timing does not belong in pass/fail tests). It covers the watcher's
/// backoff (0.8 s, doubling with jitter, per consecutive error).
const PATIENT: Duration = Duration::from_secs(30);
const NOT_IN_STATE: &str = "node is not in sift's cluster state";
const NO_CPU: &str = "Insufficient cpu";

/// A running `sift serve --kubeconfig`, killed on drop; its log (stderr)
/// is printed when a test fails.
struct Sift {
    child: Child,
    base: String,
    agent: ureq::Agent,
    log: PathBuf,
}

impl Sift {
    fn start(kubeconfig: &Path, extra: &[&str], dir: &Path) -> Sift {
        let log = dir.join("sift.log");
        let (child, addr) = sift_tests::spawn_listening(
            Command::new(sift_bin())
                .args(["serve", "--listen", "127.0.0.1:0", "--plugins"])
                .arg(plugins_dir())
                .arg("--kubeconfig")
                .arg(kubeconfig)
                .args(extra)
                .env("SIFT_LOG", "info"),
            &log,
        );
        Sift {
            base: format!("http://{addr}"),
            child,
            agent: sift_tests::http_agent(Duration::from_secs(30)),
            log,
        }
    }

    fn get(&self, path: &str) -> (u16, String) {
        sift_tests::http_get(&self.agent, &format!("{}{path}", self.base))
    }

    fn status(&self) -> Value {
        let (code, text) = self.get("/status");
        assert_eq!(code, 200, "{text}");
        serde_json::from_str(&text).expect("/status is JSON")
    }

    /// /status's "watch".
    fn watch(&self) -> Value {
        self.status()["watch"].clone()
    }

    fn metrics(&self) -> String {
        self.get("/metrics").1
    }

    /// Asks the filter verb (NodeNames mode) where a pod requesting one
    /// cpu fits, among `names`: name -> "ok" or the failure reason.
    fn verdicts(&self, names: &[&str]) -> BTreeMap<String, String> {
        let pod = json!({
            "metadata": {"name": "incoming", "namespace": "shop", "uid": "9e1d"},
            "spec": {"containers": [{"name": "c", "image": "app:1",
                "resources": {"requests": {"cpu": "1", "memory": "128Mi"}}}]},
            "status": {"phase": "Pending"}
        });
        self.verdicts_of(pod, names)
    }

    /// Each node's verdict for `pod` (an extender filter request).
    fn verdicts_of(&self, pod: Value, names: &[&str]) -> BTreeMap<String, String> {
        let body = json!({"Pod": pod, "Nodes": null, "NodeNames": names}).to_string();
        let mut r = self
            .agent
            .post(&format!("{}/scheduler/filter", self.base))
            .header("Content-Type", "application/json")
            .send(&body)
            .expect("filter answered");
        let code = r.status().as_u16();
        let text = r.body_mut().read_to_string().unwrap_or_default();
        assert_eq!(code, 200, "{text}");
        let reply: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(reply["Error"], "", "{reply}");
        let mut out = BTreeMap::new();
        for n in reply["NodeNames"].as_array().unwrap_or(&Vec::new()) {
            out.insert(n.as_str().unwrap().to_string(), "ok".to_string());
        }
        for key in ["FailedNodes", "FailedAndUnresolvableNodes"] {
            if let Some(m) = reply[key].as_object() {
                for (n, why) in m {
                    out.insert(n.clone(), why.as_str().unwrap().to_string());
                }
            }
        }
        out
    }

    fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Sift {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A fake API server and a `sift serve` watching it; on a failed test,
/// prints sift's log, its /status and the API server's request log.
struct Rig {
    // Dropped in order: sift first, then the API server.
    sift: Sift,
    api: FakeApiServer,
    dir: PathBuf,
}

impl Rig {
    /// A `sift serve` on `api`'s kubeconfig.
    fn on(api: FakeApiServer, name: &str, extra: &[&str]) -> Rig {
        let dir = temp_dir(name);
        let kubeconfig = dir.join("kubeconfig");
        api.kubeconfig(&kubeconfig);
        let sift = Sift::start(&kubeconfig, extra, &dir);
        Rig { sift, api, dir }
    }

    /// The standard cluster (see [`standard_api`]), synced.
    fn standard(name: &str) -> Rig {
        let rig = Rig::on(standard_api(), name, &[]);
        rig.wait_ready();
        rig
    }

    fn wait_ready(&self) {
        wait(
            Duration::from_secs(15),
            "/readyz 200 (the first lists)",
            || (self.sift.get("/readyz").0 == 200).then_some(()),
        );
        assert!(
            self.api.wait_watching(Duration::from_secs(10)),
            "sift watches nodes, pods and namespaces"
        );
    }

    /// Waits until a filter request sees `expect` (a subset of verdicts).
    fn wait_verdicts(&self, limit: Duration, expect: &[(&str, &str)]) {
        let names: Vec<&str> = expect.iter().map(|(n, _)| *n).collect();
        let want: BTreeMap<String, String> = expect
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        let started = Instant::now();
        loop {
            let last = self.sift.verdicts(&names);
            if last == want {
                return;
            }
            if started.elapsed() > limit {
                panic!(
                    "filter verdicts not as expected after {limit:?}:\n  want {want:?}\n  got  {last:?}"
                );
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// No kind has had an error or a relist.
    fn assert_no_errors_or_relists(&self) {
        let w = self.sift.watch();
        for plural in plurals() {
            assert_eq!(w[plural]["errors"], 0, "{w:#}");
            assert_eq!(w[plural]["relists"], 0, "{w:#}");
        }
    }

    /// The watch's per-kind object counts equal what the API server holds
    /// (pods: those the field selector lets through).
    fn assert_counts_match_server(&self) {
        let w = self.sift.watch();
        let server_pods = self
            .api
            .keys("Pod")
            .iter()
            .filter(|k| {
                let (ns, name) = k.split_once('/').unwrap();
                let p = self.api.get("Pod", ns, name).unwrap();
                !matches!(p["status"]["phase"].as_str(), Some("Succeeded" | "Failed"))
            })
            .count();
        assert_eq!(w["nodes"]["objects"], self.api.keys("Node").len(), "{w:#}");
        assert_eq!(w["pods"]["objects"], server_pods, "{w:#}");
        assert_eq!(
            w["namespaces"]["objects"],
            self.api.keys("Namespace").len(),
            "{w:#}"
        );
        assert_eq!(
            self.sift.status()["cluster"]["nodes"],
            self.api.keys("Node").len()
        );
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let status = self
                .sift
                .agent
                .get(&format!("{}/status", self.sift.base))
                .call()
                .ok()
                .and_then(|mut r| r.body_mut().read_to_string().ok())
                .unwrap_or_default();
            eprintln!(
                "---- {}: sift /status\n{status}\n---- sift log\n{}\n---- API server requests\n{}",
                self.dir.display(),
                self.sift.log_text(),
                self.api.request_log()
            );
        }
    }
}

/// Polls `f` every 25 ms until it answers, at most `limit`.
fn wait<T>(limit: Duration, what: &str, mut f: impl FnMut() -> Option<T>) -> (T, Duration) {
    let started = Instant::now();
    loop {
        if let Some(v) = f() {
            return (v, started.elapsed());
        }
        assert!(started.elapsed() < limit, "not within {limit:?}: {what}");
        std::thread::sleep(Duration::from_millis(25));
    }
}

fn node(name: &str, cpu: &str) -> Value {
    json!({"kind": "Node", "metadata": {"name": name,
            "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}},
           "spec": {},
           "status": {"capacity": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
                      "allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
                      "conditions": [{"type": "Ready", "status": "True"}]}})
}

fn pod(ns: &str, name: &str, on: Option<&str>, cpu: &str, phase: &str) -> Value {
    let mut p = json!({"kind": "Pod", "metadata": {"name": name, "namespace": ns},
        "spec": {"schedulerName": "default-scheduler",
                 "containers": [{"name": "c", "image": "app:1",
                                 "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}]},
        "status": {"phase": phase}});
    if let Some(node) = on {
        p["spec"]["nodeName"] = json!(node);
    }
    p
}

fn namespace(name: &str) -> Value {
    json!({"kind": "Namespace",
           "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}},
           "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})
}

/// Three 4-cpu nodes; `hog` (3.5 cpu) runs on n1, so a 1-cpu pod does
/// not fit there; `done` (3.5 cpu) on n2 has Succeeded, so the field
/// selector keeps it out and n2 fits; `pend` (3.5 cpu) is not bound;
/// `small` (0.1 cpu) runs on n3. Namespaces `default` and `shop`.
fn standard_api() -> FakeApiServer {
    let api = FakeApiServer::start();
    for n in ["n1", "n2", "n3"] {
        api.add(node(n, "4"));
    }
    api.add(namespace("default"));
    api.add(namespace("shop"));
    api.add(pod("shop", "hog", Some("n1"), "3500m", "Running"));
    api.add(pod("shop", "done", Some("n2"), "3500m", "Succeeded"));
    api.add(pod("shop", "pend", None, "3500m", "Pending"));
    api.add(pod("shop", "small", Some("n3"), "100m", "Running"));
    api
}

/// A metric's value (`name{labels}` exactly as exposed), if present.
fn metric(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse().ok())
}

#[test]
fn initial_sync_lists_through_the_field_selector_and_serves_filters() {
    let rig = Rig::standard("watch-sync");
    let w = rig.sift.watch();
    assert_eq!(w["server"], rig.api.url(), "{w:#}");
    assert_eq!(w["synced"], true, "{w:#}");
    assert_eq!(w["healthy"], true, "{w:#}");
    for (plural, objects) in [("nodes", 3), ("pods", 3), ("namespaces", 2)] {
        let k = &w[plural];
        assert_eq!(k["synced"], true, "{plural}: {k}");
        // `done` has Succeeded: the API server never sends it.
        assert_eq!(k["objects"], objects, "{plural}: {k}");
        assert_eq!(k["relists"], 0, "{plural}: {k}");
        assert_eq!(k["errors"], 0, "{plural}: {k}");
        assert!(k["lastEvent"].is_string(), "{plural}: {k}");
        assert!(k["lastError"].is_null(), "{plural}: {k}");
    }
    // The bound, running pods: hog and small.
    let cluster = &rig.sift.status()["cluster"];
    assert_eq!(cluster["nodes"], 3, "{cluster}");
    assert_eq!(cluster["pods"], 2, "{cluster}");

    // One list per kind; pods listed and watched through the selector.
    let log = rig.api.requests();
    for r in Resource::ALL {
        let lists: Vec<_> = log.iter().filter(|q| q.is_list(r)).collect();
        assert_eq!(lists.len(), 1, "{r:?}: {}", rig.api.request_log());
        let watches: Vec<_> = log.iter().filter(|q| q.is_watch(r)).collect();
        assert!(!watches.is_empty(), "{r:?}");
        let selector = (r == Resource::Pods).then_some(SELECTOR);
        for q in lists.iter().chain(&watches) {
            assert_eq!(q.param("fieldSelector"), selector, "{q}");
            assert_eq!(q.status, 200, "{q}");
        }
        // The watch starts from the list's resourceVersion (nothing
        // changed since: the latest).
        let latest = rig.api.resource_version().to_string();
        assert_eq!(
            watches[0].param("resourceVersion"),
            Some(latest.as_str()),
            "{}",
            watches[0]
        );
    }

    // hog's 3.5 cpus leave no room for 1 on n1; done's do not count.
    let v = rig.sift.verdicts(&["n1", "n2", "n3", "nope"]);
    let want: BTreeMap<String, String> = [
        ("n1", NO_CPU),
        ("n2", "ok"),
        ("n3", "ok"),
        ("nope", NOT_IN_STATE),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(v, want);

    let m = rig.sift.metrics();
    for kind in ["Node", "Pod", "Namespace"] {
        let series = |name: &str| format!("{name}{{kind=\"{kind}\"}}");
        assert_eq!(metric(&m, &series("sift_watch_synced")), Some(1.0), "{m}");
        assert_eq!(
            metric(&m, &series("sift_watch_relists_total")).unwrap_or(0.0),
            0.0,
            "{m}"
        );
        assert_eq!(
            metric(&m, &series("sift_watch_errors_total")).unwrap_or(0.0),
            0.0,
            "{m}"
        );
    }
    let events = metric(&m, "sift_watch_events_total{kind=\"Node\"}").expect("events metric");
    assert_eq!(Some(events), w["nodes"]["events"].as_f64(), "{m}");
    assert!(events >= 3.0);
}

/// What the volume filters read comes through the watch: VolumeZone keeps
/// a pod whose claim is bound to a zone-b volume off the zone-a node,
/// follows the volume's relabelling, and rejects the pod everywhere once
/// the claim is gone, as kube-scheduler's listers would have it.
#[test]
fn claims_and_volumes_come_through_the_watch_for_volume_zone() {
    let api = standard_api();
    for (n, zone) in [("n1", "zone-a"), ("n2", "zone-b")] {
        api.update("Node", "", n, |node| {
            node["metadata"]["labels"]["topology.kubernetes.io/zone"] = json!(zone);
        });
    }
    api.add(json!({"kind": "PersistentVolumeClaim", "apiVersion": "v1",
        "metadata": {"name": "data", "namespace": "shop",
                     "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
        "spec": {"volumeName": "pv-1", "accessModes": ["ReadWriteOnce"]}}));
    api.add(json!({"kind": "PersistentVolume", "apiVersion": "v1",
        "metadata": {"name": "pv-1", "labels": {"topology.kubernetes.io/zone": "zone-b"}},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"]}}));
    let rig = Rig::on(api, "watch-volumes", &[]);
    rig.wait_ready();
    let pod = json!({
        "metadata": {"name": "db-0", "namespace": "shop", "uid": "db0"},
        "spec": {"containers": [{"name": "c", "image": "db:1",
            "resources": {"requests": {"cpu": "100m"}}}],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]},
        "status": {"phase": "Pending"}
    });
    const CONFLICT: &str = "node(s) had no available volume zone";
    let wait_for = |want: &[(&str, &str)]| {
        let want: BTreeMap<String, String> = want
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        wait(PATIENT, &format!("verdicts {want:?}"), || {
            (rig.sift.verdicts_of(pod.clone(), &["n1", "n2", "n3"]) == want).then_some(())
        });
    };
    // n3 has no zone label: a single-zone node passes.
    wait_for(&[("n1", CONFLICT), ("n2", "ok"), ("n3", "ok")]);
    rig.api.update("PersistentVolume", "", "pv-1", |pv| {
        pv["metadata"]["labels"]["topology.kubernetes.io/zone"] = json!("zone-a");
    });
    wait_for(&[("n1", "ok"), ("n2", CONFLICT), ("n3", "ok")]);
    rig.api.delete("PersistentVolumeClaim", "shop", "data");
    let gone = "persistentvolumeclaim \"data\" not found";
    wait_for(&[("n1", gone), ("n2", gone), ("n3", gone)]);
}

#[test]
fn binds_deletions_and_finished_pods_follow() {
    let rig = Rig::standard("watch-pods");
    let api = &rig.api;
    rig.wait_verdicts(PATIENT, &[("n2", "ok"), ("n3", "ok")]);
    let events_before = rig.sift.watch()["pods"]["events"].as_u64().unwrap();

    // pend is bound to n2: n2 is full.
    api.update("Pod", "shop", "pend", |p| {
        p["spec"]["nodeName"] = json!("n2")
    });
    rig.wait_verdicts(PATIENT, &[("n2", NO_CPU), ("n3", "ok")]);
    assert_eq!(rig.sift.status()["cluster"]["pods"], 3);

    // pend is deleted: n2 has room again.
    api.delete("Pod", "shop", "pend");
    rig.wait_verdicts(PATIENT, &[("n2", "ok")]);

    // A job runs on n3, then Succeeds: the API server sends DELETED (the
    // pod no longer passes the selector) and n3 has room again.
    api.add(pod("shop", "job", Some("n3"), "3500m", "Running"));
    rig.wait_verdicts(PATIENT, &[("n3", NO_CPU)]);
    api.update("Pod", "shop", "job", |p| {
        p["status"]["phase"] = json!("Succeeded")
    });
    rig.wait_verdicts(PATIENT, &[("n3", "ok"), ("n1", NO_CPU)]);
    let sent = api.sent();
    assert!(
        sent.iter()
            .any(|e| e.resource == Resource::Pods && e.kind == "DELETED" && e.key == "shop/job"),
        "{sent:?}"
    );
    let w = rig.sift.watch();
    // hog and small are left.
    assert_eq!(w["pods"]["objects"], 2, "{w:#}");
    assert_eq!(rig.sift.status()["cluster"]["pods"], 2);
    assert!(
        w["pods"]["events"].as_u64().unwrap() >= events_before + 4,
        "{w:#}"
    );
    assert_eq!(w["pods"]["errors"], 0, "{w:#}");
    rig.assert_counts_match_server();
}

#[test]
fn nodes_and_namespaces_come_and_go() {
    let rig = Rig::standard("watch-nodes");
    let api = &rig.api;
    rig.wait_verdicts(PATIENT, &[("n3", "ok"), ("n4", NOT_IN_STATE)]);

    api.add(node("n4", "4"));
    rig.wait_verdicts(PATIENT, &[("n3", "ok"), ("n4", "ok")]);
    assert_eq!(rig.sift.status()["cluster"]["nodes"], 4);

    // A node changes: n4 shrinks to half a cpu.
    api.update("Node", "", "n4", |n| {
        n["status"]["allocatable"]["cpu"] = json!("500m")
    });
    rig.wait_verdicts(PATIENT, &[("n4", NO_CPU)]);

    api.delete("Node", "", "n1");
    rig.wait_verdicts(
        Duration::from_secs(10),
        &[("n1", NOT_IN_STATE), ("n2", "ok"), ("n4", NO_CPU)],
    );

    api.add(namespace("extra"));
    wait(Duration::from_secs(10), "namespace extra counted", || {
        (rig.sift.watch()["namespaces"]["objects"] == 3).then_some(())
    });
    api.delete("Namespace", "", "shop");
    wait(Duration::from_secs(10), "namespace shop gone", || {
        (rig.sift.watch()["namespaces"]["objects"] == 2).then_some(())
    });
    rig.assert_counts_match_server();
    rig.assert_no_errors_or_relists();
}

#[test]
fn bookmarks_and_watch_timeouts_are_routine() {
    let rig = Rig::standard("watch-bookmarks");
    let api = &rig.api;
    let lists_before: Vec<usize> = Resource::ALL
        .iter()
        .map(|r| api.lists(r.plural()))
        .collect();
    let verdicts = rig.sift.verdicts(&["n1", "n2", "n3"]);
    let before = rig.sift.watch();

    // Bookmarks every 100 ms on new watches; the watches end (normally,
    // as at timeoutSeconds) so that sift opens new ones.
    api.set_bookmark_interval(Some(Duration::from_millis(100)));
    assert_eq!(api.end_watches(), Resource::ALL.len());
    assert!(api.wait_watching(Duration::from_secs(10)));
    assert!(
        api.bookmark_all() >= Resource::ALL.len(),
        "every watch allowed bookmarks"
    );
    std::thread::sleep(Duration::from_millis(1200));
    let sent = api.sent();
    for r in Resource::ALL {
        let n = sent
            .iter()
            .filter(|e| e.resource == r && e.kind == "BOOKMARK")
            .count();
        assert!(n >= 5, "{r:?}: {n} bookmarks sent");
    }
    for q in api.requests().iter().filter(|q| q.watch) {
        assert_eq!(q.param("allowWatchBookmarks"), Some("true"), "{q}");
    }
    let after = rig.sift.watch();
    assert_eq!(after["healthy"], true, "{after:#}");
    for plural in plurals() {
        for field in ["objects", "events", "errors", "relists"] {
            assert_eq!(
                after[plural][field], before[plural][field],
                "{plural}.{field}: {before:#} -> {after:#}"
            );
        }
        assert!(after[plural]["lastError"].is_null(), "{after:#}");
    }
    assert_eq!(rig.sift.verdicts(&["n1", "n2", "n3"]), verdicts);

    // A bookmark moves the resourceVersion a watch resumes from: a
    // namespace changes (the resourceVersion passes every node's), the
    // node watch gets a bookmark at it, then ends; the next node watch
    // starts from the bookmark.
    api.set_bookmark_interval(None);
    api.update("Namespace", "", "shop", |n| {
        n["metadata"]["labels"]["team"] = json!("a")
    });
    let before_end = api.watches("nodes");
    api.end_watches();
    wait(Duration::from_secs(10), "a new node watch", || {
        (api.watches("nodes") > before_end && api.open_watches(Some("nodes")) == 1).then_some(())
    });
    let rv = api.resource_version();
    assert!(api.bookmark_all() >= 1);
    wait(Duration::from_secs(10), "the bookmark written", || {
        api.sent()
            .iter()
            .any(|e| {
                e.resource == Resource::Nodes
                    && e.kind == "BOOKMARK"
                    && e.resource_version == rv.to_string()
            })
            .then_some(())
    });
    let before_end = api.watches("nodes");
    api.end_watches();
    wait(Duration::from_secs(10), "the node watch resumed", || {
        (api.watches("nodes") > before_end).then_some(())
    });
    let resumed = api
        .requests()
        .into_iter()
        .rfind(|q| q.is_watch(Resource::Nodes))
        .unwrap();
    assert_eq!(
        resumed.param("resourceVersion"),
        Some(rv.to_string().as_str()),
        "{resumed}"
    );

    // No list since the first; nothing counted as an error; changes still
    // arrive.
    for (r, before) in Resource::ALL.iter().zip(lists_before) {
        assert_eq!(api.lists(r.plural()), before, "{r:?} relisted");
    }
    api.add(node("n4", "4"));
    rig.wait_verdicts(PATIENT, &[("n4", "ok")]);
    rig.assert_no_errors_or_relists();
}

#[test]
fn gone_410_relists_to_exactly_the_servers_state() {
    let rig = Rig::standard("watch-410");
    let api = &rig.api;
    let starts: Vec<usize> = Resource::ALL
        .iter()
        .map(|r| api.list_starts(r.plural()))
        .collect();

    // The watches are cut; while sift cannot reach the server, a node is
    // added, hog is deleted (n1 frees up), a pod is bound to n3, and the
    // history is compacted: sift's watch cannot resume (410 on the watch
    // stream, as an API server answers it) and must relist.
    api.set_down(true);
    api.add(node("n4", "4"));
    api.delete("Pod", "shop", "hog");
    api.add(pod("shop", "late", Some("n3"), "3500m", "Running"));
    api.compact();
    api.set_down(false);

    rig.wait_verdicts(
        PATIENT,
        &[("n1", "ok"), ("n2", "ok"), ("n3", NO_CPU), ("n4", "ok")],
    );
    wait(PATIENT, "relisted every kind", || {
        let w = rig.sift.watch();
        plurals()
            .iter()
            .all(|p| w[p]["relists"].as_u64() >= Some(1) && w[p]["synced"] == true)
            .then_some(())
    });
    rig.assert_counts_match_server();
    assert_eq!(rig.sift.status()["cluster"]["pods"], 2, "small and late");
    for (r, before) in Resource::ALL.iter().zip(&starts) {
        assert!(
            api.list_starts(r.plural()) > *before,
            "{r:?} was not listed again"
        );
    }
    let sent = api.sent();
    assert!(
        sent.iter()
            .any(|e| e.resource == Resource::Nodes && e.kind == "ERROR"),
        "the node watch from before the compaction got 410: {sent:?}"
    );
    let m = rig.sift.metrics();
    assert!(
        metric(&m, "sift_watch_relists_total{kind=\"Node\"}").unwrap_or(0.0) >= 1.0,
        "{m}"
    );

    // Open watches expire (410 ERROR event): while sift backs off and
    // relists, n2 is deleted and pend is bound to n4. Only the relist can
    // bring those (the expired watches are gone, and the new ones start
    // from the new list).
    assert!(api.wait_watching(PATIENT));
    let relists: Vec<u64> = plurals()
        .iter()
        .map(|p| rig.sift.watch()[p]["relists"].as_u64().unwrap())
        .collect();
    let starts: Vec<usize> = Resource::ALL
        .iter()
        .map(|r| api.list_starts(r.plural()))
        .collect();
    assert_eq!(api.expire_watches(), Resource::ALL.len());
    api.delete("Node", "", "n2");
    api.update("Pod", "shop", "pend", |p| {
        p["spec"]["nodeName"] = json!("n4")
    });
    rig.wait_verdicts(
        PATIENT,
        &[
            ("n1", "ok"),
            ("n2", NOT_IN_STATE),
            ("n3", NO_CPU),
            ("n4", NO_CPU),
        ],
    );
    wait(PATIENT, "relisted every kind again", || {
        let w = rig.sift.watch();
        plurals()
            .iter()
            .zip(&relists)
            .all(|(p, before)| w[p]["relists"].as_u64().unwrap() > *before)
            .then_some(())
    });
    for (r, before) in Resource::ALL.iter().zip(&starts) {
        assert!(
            api.list_starts(r.plural()) > *before,
            "{r:?} was not listed again"
        );
    }
    rig.assert_counts_match_server();
    assert_eq!(rig.sift.status()["cluster"]["pods"], 3, "small, late, pend");
    assert_eq!(rig.sift.get("/readyz").0, 200);
}

#[test]
fn dropped_connections_resume_without_losing_changes() {
    let mut rig = Rig::standard("watch-drop");
    let api = &rig.api;
    let starts: Vec<usize> = Resource::ALL
        .iter()
        .map(|r| api.list_starts(r.plural()))
        .collect();
    let node_watch_rv = api.resource_version();

    // Every connection is closed mid-stream; the changes made right after
    // must still arrive (the server keeps its history: sift resumes its
    // watches from the last resourceVersion it saw, no relist needed).
    assert_eq!(api.drop_connections(), Resource::ALL.len());
    api.add(node("n4", "4"));
    api.update("Pod", "shop", "pend", |p| {
        p["spec"]["nodeName"] = json!("n3")
    });
    rig.wait_verdicts(
        Duration::from_secs(15),
        &[("n2", "ok"), ("n3", NO_CPU), ("n4", "ok")],
    );
    let resumed = api
        .requests()
        .into_iter()
        .filter(|q| q.is_watch(Resource::Nodes))
        .nth(1)
        .expect("the node watch was opened again");
    let from: u64 = resumed.param("resourceVersion").unwrap().parse().unwrap();
    assert!(from <= node_watch_rv, "{resumed} resumed after the changes");

    // Again, three times in a row (sift backs off; it must not crash).
    for i in 0..3 {
        assert!(api.wait_watching(PATIENT));
        api.drop_connections();
        api.add(node(&format!("x{i}"), "4"));
        std::thread::sleep(Duration::from_millis(100));
    }
    rig.wait_verdicts(PATIENT, &[("x0", "ok"), ("x1", "ok"), ("x2", "ok")]);
    assert!(
        rig.sift.running(),
        "sift serve exited:\n{}",
        rig.sift.log_text()
    );
    for (r, before) in Resource::ALL.iter().zip(&starts) {
        assert_eq!(api.list_starts(r.plural()), *before, "{r:?} relisted");
    }
    rig.assert_counts_match_server();
    assert_eq!(rig.sift.get("/readyz").0, 200);
}

#[test]
fn api_server_down_after_sync_serves_the_last_state() {
    let mut rig = Rig::standard("watch-down");
    let api = &rig.api;
    let names = ["n1", "n2", "n3", "n4"];
    let before = rig.sift.verdicts(&names);
    assert_eq!(before["n4"], NOT_IN_STATE);

    api.set_down(true);
    // Changes sift cannot see while the server is away.
    api.add(node("n4", "4"));
    api.delete("Pod", "shop", "hog");
    api.add(namespace("late"));
    let (w, _) = wait(PATIENT, "the watch reports the failure", || {
        let w = rig.sift.watch();
        (w["healthy"] == false
            && plurals()
                .iter()
                .all(|p| w[p]["errors"].as_u64() > Some(0) && w[p]["lastError"].is_string()))
        .then_some(w)
    });
    assert_eq!(w["synced"], true, "{w:#}");
    // The last state keeps serving, and sift stays ready.
    assert_eq!(rig.sift.verdicts(&names), before);
    let (code, body) = rig.sift.get("/readyz");
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("last state"), "{body}");
    let m = rig.sift.metrics();
    assert!(
        metric(&m, "sift_watch_errors_total{kind=\"Node\"}").unwrap_or(0.0) >= 1.0,
        "{m}"
    );
    assert_eq!(
        metric(&m, "sift_watch_synced{kind=\"Node\"}"),
        Some(1.0),
        "{m}"
    );
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(rig.sift.verdicts(&names), before);
    assert!(rig.sift.running());

    // Back: the changes arrive, and each kind is healthy again: nodes,
    // pods and namespaces by their events (one for each was made while
    // down), the quiet kinds once their watch has resumed.
    api.set_down(false);
    rig.wait_verdicts(PATIENT, &[("n1", "ok"), ("n4", "ok")]);
    wait(PATIENT, "healthy again", || {
        (rig.sift.watch()["healthy"] == true).then_some(())
    });
    let (code, body) = rig.sift.get("/readyz");
    assert_eq!((code, body.trim()), (200, "ok"));
    rig.assert_counts_match_server();
    let w = rig.sift.watch();
    assert!(
        w["nodes"]["lastError"].is_string(),
        "the last error is kept: {w:#}"
    );
}

/// Runs `sift serve` expecting it to exit by itself; (status, stderr).
fn run_to_exit(args: &[&str], dir: &Path) -> (std::process::ExitStatus, String) {
    let err = dir.join("stderr");
    let mut child = Command::new(sift_bin())
        .args(["serve", "--listen", "127.0.0.1:0", "--plugins"])
        .arg(plugins_dir())
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::from(std::fs::File::create(&err).unwrap()))
        .spawn()
        .expect("sift serve starts");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (status, std::fs::read_to_string(&err).unwrap_or_default());
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "sift serve {args:?} did not exit; stderr:\n{}",
                std::fs::read_to_string(&err).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn unreachable_server_keeps_sift_up_but_unready() {
    let dir = temp_dir("watch-unreachable");
    let kubeconfig = dir.join("kubeconfig");
    // Nothing listens on port 1.
    write_kubeconfig(&kubeconfig, &[("dead", "http://127.0.0.1:1")], "dead");
    let mut sift = Sift::start(&kubeconfig, &[], &dir);
    let (w, _) = wait(Duration::from_secs(15), "errors for every kind", || {
        let w = sift.watch();
        plurals()
            .iter()
            .all(|p| w[p]["errors"].as_u64() > Some(0) && w[p]["lastError"].is_string())
            .then_some(w)
    });
    assert_eq!(w["synced"], false, "{w:#}");
    assert_eq!(w["healthy"], false, "{w:#}");
    assert_eq!(w["server"], "http://127.0.0.1:1", "{w:#}");
    let (code, body) = sift.get("/readyz");
    assert_eq!(code, 503, "{body}");
    assert!(body.contains("127.0.0.1:1"), "names the server: {body}");
    assert!(
        body.to_lowercase().contains("connect"),
        "names the connection problem: {body}"
    );
    let m = sift.metrics();
    assert_eq!(
        metric(&m, "sift_watch_synced{kind=\"Pod\"}"),
        Some(0.0),
        "{m}"
    );
    std::thread::sleep(Duration::from_secs(2));
    assert!(sift.running(), "sift serve exited:\n{}", sift.log_text());
    assert_eq!(sift.get("/healthz").0, 200);
}

#[test]
fn missing_or_malformed_kubeconfig_stops_sift_naming_the_file() {
    let dir = temp_dir("watch-bad-kubeconfig");
    let missing = dir.join("no-such-kubeconfig");
    let (status, err) = run_to_exit(&["--kubeconfig", missing.to_str().unwrap()], &dir);
    assert!(!status.success());
    assert!(err.contains("no-such-kubeconfig"), "{err}");

    let garbage = dir.join("garbage-kubeconfig");
    std::fs::write(&garbage, "{{{ this: is [not yaml\n\t:::").unwrap();
    let (status, err) = run_to_exit(&["--kubeconfig", garbage.to_str().unwrap()], &dir);
    assert!(!status.success());
    assert!(err.contains("garbage-kubeconfig"), "{err}");
}

#[test]
fn context_picks_the_cluster() {
    let api = standard_api();
    let dir = temp_dir("watch-context");
    let kubeconfig = dir.join("kubeconfig");
    let url = api.url();
    // The current context is a dead server; --context names the live one.
    write_kubeconfig(
        &kubeconfig,
        &[("dead", "http://127.0.0.1:1"), ("fake", &url)],
        "dead",
    );
    let rig = Rig {
        sift: Sift::start(&kubeconfig, &["--context", "fake"], &dir),
        api,
        dir: dir.clone(),
    };
    rig.wait_ready();
    assert_eq!(rig.sift.watch()["server"], url);
    rig.wait_verdicts(PATIENT, &[("n1", NO_CPU), ("n2", "ok")]);

    let (status, err) = run_to_exit(
        &[
            "--kubeconfig",
            kubeconfig.to_str().unwrap(),
            "--context",
            "no-such-context",
        ],
        &dir,
    );
    assert!(!status.success());
    assert!(err.contains("no-such-context"), "{err}");
}

#[test]
fn readyz_waits_for_every_kind_and_names_the_error() {
    let api = standard_api();
    api.set_failing(Some("namespaces"), Some(403));
    let rig = Rig::on(api, "watch-partial", &[]);
    wait(Duration::from_secs(15), "nodes and pods synced", || {
        let w = rig.sift.watch();
        (w["nodes"]["synced"] == true
            && w["pods"]["synced"] == true
            && w["namespaces"]["errors"].as_u64() > Some(0))
        .then_some(())
    });
    let (code, body) = rig.sift.get("/readyz");
    assert_eq!(code, 503, "{body}");
    assert!(
        body.contains("namespaces"),
        "names what it waits for: {body}"
    );
    assert!(
        !body.contains("nodes"),
        "only namespaces are missing: {body}"
    );
    assert!(
        body.contains("test control"),
        "names the last error: {body}"
    );
    let w = rig.sift.watch();
    assert_eq!(w["synced"], false, "{w:#}");
    assert!(
        w["namespaces"]["lastError"]
            .as_str()
            .is_some_and(|e| e.contains("403") || e.to_lowercase().contains("forbidden")),
        "{w:#}"
    );
    rig.api.set_failing(Some("namespaces"), None);
    wait(PATIENT, "/readyz 200", || {
        (rig.sift.get("/readyz").0 == 200).then_some(())
    });
    assert_eq!(rig.sift.watch()["namespaces"]["objects"], 2);
}

#[test]
fn paged_lists_are_read_to_the_end() {
    let api = standard_api();
    for i in 4..=9 {
        api.add(node(&format!("n{i}"), "4"));
    }
    for i in 0..5 {
        api.add(pod("shop", &format!("w{i}"), Some("n9"), "100m", "Running"));
    }
    // The server returns at most 2 items a page, whatever the limit.
    api.set_page_size(Some(2));
    let rig = Rig::on(api, "watch-paged", &[]);
    rig.wait_ready();
    rig.assert_counts_match_server();
    let log = rig.api.requests();
    let node_pages: Vec<_> = log.iter().filter(|q| q.is_list(Resource::Nodes)).collect();
    // 9 nodes, 2 a page.
    assert_eq!(node_pages.len(), 5, "{}", rig.api.request_log());
    assert!(
        node_pages[1..]
            .iter()
            .all(|q| q.param("continue").is_some())
    );
    let pod_pages: Vec<_> = log.iter().filter(|q| q.is_list(Resource::Pods)).collect();
    assert!(
        pod_pages
            .iter()
            .all(|q| q.param("fieldSelector") == Some(SELECTOR)),
        "every page keeps the selector"
    );
    // 8 pods pass the selector.
    assert_eq!(pod_pages.len(), 4, "{}", rig.api.request_log());
    rig.wait_verdicts(PATIENT, &[("n1", NO_CPU), ("n9", "ok")]);
    assert_eq!(rig.sift.status()["cluster"]["pods"], 7);
}

/// The `/status` keys of the kinds sift serve watches.
fn plurals() -> Vec<&'static str> {
    Resource::ALL.iter().map(|r| r.plural()).collect()
}

/// List requests of every kind that started a list, per kind.
fn list_starts(api: &FakeApiServer) -> Vec<usize> {
    Resource::ALL
        .iter()
        .map(|r| api.list_starts(r.plural()))
        .collect()
}

/// A server (or proxy) that expires every watch: client-go's reflector
/// backs off between its relists, and so must sift (without: some 200
/// LISTs in 10 s of a 2-node fake, ~40 % of a core at 5,000 pods, and a
/// watch that says it is healthy).
#[test]
fn watches_expired_again_and_again_relist_with_backoff_and_are_counted() {
    let rig = Rig::standard("watch-410-loop");
    let api = &rig.api;
    let before = list_starts(api);
    api.set_watches_gone(Some(Gone::Event));
    assert_eq!(api.expire_watches(), Resource::ALL.len());
    let window = Duration::from_secs(6);
    std::thread::sleep(window);
    let lists: Vec<usize> = list_starts(api)
        .iter()
        .zip(&before)
        .map(|(a, b)| a - b)
        .collect();
    // The first relist at once, then 0.8 s, 1.6 s, 3.2 s (jittered): about
    // four in the window. Without backoff: hundreds.
    for (r, n) in Resource::ALL.iter().zip(&lists) {
        assert!(
            (2..=12).contains(n),
            "{r:?}: {n} lists in {window:?} against a server that expires every watch"
        );
    }
    let (w, _) = wait(PATIENT, "the 410 loop reported", || {
        let w = rig.sift.watch();
        plurals()
            .iter()
            .all(|p| {
                w[p]["gone"].as_u64() >= Some(2)
                    && w[p]["healthy"] == false
                    && w[p]["lastError"]
                        .as_str()
                        .is_some_and(|e| e.contains("410 Gone"))
            })
            .then_some(w)
    });
    assert_eq!(w["healthy"], false, "{w:#}");
    let m = rig.sift.metrics();
    for kind in ["Node", "Pod", "Namespace"] {
        let gone = metric(&m, &format!("sift_watch_gone_total{{kind=\"{kind}\"}}"));
        assert!(gone >= Some(2.0), "{kind}: {m}");
    }
    // Still ready on its last state (the lists keep it fresh), saying why.
    let (code, body) = rig.sift.get("/readyz");
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("410 Gone"), "{body}");

    // The server serves watches again: changes arrive through them.
    api.set_watches_gone(None);
    api.add(node("n4", "4"));
    rig.wait_verdicts(PATIENT, &[("n4", "ok")]);
    wait(PATIENT, "nodes healthy again", || {
        (rig.sift.watch()["nodes"]["healthy"] == true).then_some(())
    });
    rig.assert_counts_match_server();
}

/// A watch refused with the HTTP status 410 (a proxy's answer): kube-rs's
/// watcher would retry the same resourceVersion for ever, with no pause;
/// sift relists, with backoff.
#[test]
fn watches_refused_with_410_relist_with_backoff() {
    let rig = Rig::standard("watch-410-status");
    let api = &rig.api;
    let before = list_starts(api);
    let watches_before = api.watches("nodes");
    api.set_watches_gone(Some(Gone::Status));
    api.end_watches();
    let window = Duration::from_secs(6);
    std::thread::sleep(window);
    let lists = api.list_starts("nodes") - before[0];
    let watches = api.watches("nodes") - watches_before;
    assert!(
        lists >= 2,
        "{lists} node lists in {window:?}: a watch refused with 410 must relist"
    );
    assert!(
        watches <= 12,
        "{watches} node watches in {window:?} against a server that refuses every watch"
    );
    let w = rig.sift.watch();
    assert!(w["nodes"]["gone"].as_u64() >= Some(2), "{w:#}");
    api.set_watches_gone(None);
    api.add(node("n4", "4"));
    rig.wait_verdicts(PATIENT, &[("n4", "ok")]);
}

/// A server that accepts a LIST and never answers: without a deadline the
/// watcher waits for ever, saying it is healthy. With one (2 s here), the
/// kind is reported unhealthy, naming the deadline, and sift recovers by
/// itself once lists are answered again (the hung one never is).
#[test]
fn a_list_that_never_answers_misses_the_deadline_and_recovers() {
    let api = standard_api();
    api.set_hang_lists(true);
    let rig = Rig::on(api, "watch-list-hang", &["--watch-timeout", "2s"]);
    let (w, _) = wait(
        Duration::from_secs(20),
        "the missed deadline reported",
        || {
            let w = rig.sift.watch();
            plurals()
                .iter()
                .all(|p| {
                    w[p]["healthy"] == false
                        && w[p]["lastError"].as_str().is_some_and(|e| {
                            e.contains(&format!(
                                "no answer from the API server for 2s (list of {p}"
                            ))
                        })
                })
                .then_some(w)
        },
    );
    assert_eq!(w["synced"], false, "{w:#}");
    assert_eq!(w["healthy"], false, "{w:#}");
    let (code, body) = rig.sift.get("/readyz");
    assert_eq!(code, 503, "{body}");
    assert!(body.contains("no answer from the API server"), "{body}");

    rig.api.set_hang_lists(false);
    wait(PATIENT, "/readyz 200", || {
        (rig.sift.get("/readyz").0 == 200).then_some(())
    });
    wait(PATIENT, "healthy", || {
        (rig.sift.watch()["healthy"] == true).then_some(())
    });
    rig.assert_counts_match_server();
    rig.wait_verdicts(PATIENT, &[("n1", NO_CPU), ("n2", "ok")]);
    // Watches ask the server to end them before the deadline.
    let watch = rig
        .api
        .requests()
        .into_iter()
        .find(|q| q.is_watch(Resource::Nodes))
        .unwrap();
    assert_eq!(watch.param("timeoutSeconds"), Some("1"), "{watch}");
}

/// A watch stream that goes silent (a half-open connection, a black-holed
/// load balancer): past the deadline the kind is reported unhealthy and
/// the watch reconnects; the changes made meanwhile arrive once the server
/// answers again.
#[test]
fn a_silent_watch_misses_the_deadline_and_resumes() {
    let mut rig = Rig::on(standard_api(), "watch-silent", &["--watch-timeout", "2s"]);
    rig.wait_ready();
    let api = &rig.api;
    api.set_silent_watches(true);
    api.add(node("n4", "4"));
    let (w, _) = wait(
        Duration::from_secs(20),
        "the missed deadline reported",
        || {
            let w = rig.sift.watch();
            (w["nodes"]["healthy"] == false
                && w["nodes"]["lastError"].as_str().is_some_and(|e| {
                    e.contains("no answer from the API server for 2s (watch of nodes")
                }))
            .then_some(w)
        },
    );
    assert_eq!(w["synced"], true, "{w:#}");
    assert_eq!(rig.sift.verdicts(&["n4"])["n4"], NOT_IN_STATE);
    // Ready on its last state, saying the watch fails.
    let (code, body) = rig.sift.get("/readyz");
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("no answer from the API server"), "{body}");

    api.set_silent_watches(false);
    rig.wait_verdicts(PATIENT, &[("n4", "ok")]);
    wait(PATIENT, "nodes healthy again", || {
        (rig.sift.watch()["nodes"]["healthy"] == true).then_some(())
    });
    assert!(rig.sift.running());
}

/// With the API server as the source, POST /cluster would let anyone who
/// reaches the port rewrite sift's view (a fake 4-cpu pod, a deleted
/// node: every node fails) until the API server resent those objects; it
/// is off unless --allow-cluster-events.
#[test]
fn cluster_events_are_refused_while_watching_unless_allowed() {
    let rig = Rig::standard("watch-cluster-off");
    let hog = json!({"type": "ADDED", "object": pod("shop", "fake", Some("n2"), "4", "Running")});
    let delete = json!({"type": "DELETED", "object": node("n3", "4")});
    let body = json!([hog, delete]).to_string();
    let post = |sift: &Sift| {
        let mut r = sift
            .agent
            .post(&format!("{}/cluster", sift.base))
            .header("Content-Type", "application/json")
            .send(&body)
            .expect("/cluster answered");
        (
            r.status().as_u16(),
            r.body_mut().read_to_string().unwrap_or_default(),
        )
    };
    let (code, text) = post(&rig.sift);
    assert_eq!(code, 403, "{text}");
    assert!(text.contains("--allow-cluster-events"), "{text}");
    assert!(text.contains("API server"), "{text}");
    assert_eq!(
        rig.sift.verdicts(&["n2", "n3"]),
        BTreeMap::from([("n2".into(), "ok".into()), ("n3".into(), "ok".into())]),
        "the state is the API server's"
    );

    // Allowed explicitly: accepted (and it does change the state).
    let rig = Rig::on(
        standard_api(),
        "watch-cluster-on",
        &["--allow-cluster-events"],
    );
    rig.wait_ready();
    let (code, text) = post(&rig.sift);
    assert_eq!(code, 200, "{text}");
    rig.wait_verdicts(PATIENT, &[("n2", NO_CPU), ("n3", NOT_IN_STATE)]);
}
