//! `sift simulate --mode batch` end to end: sessions over time, gangs
//! placed whole or not at all, Volcano's messages, and bad input.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Output;

fn sift(args: &[&str]) -> Output {
    sift_tests::run_sift(args, "batch-cache")
}

/// Runs a command that must fail; its stderr.
fn fails(args: &[&str]) -> String {
    let o = sift(args);
    assert!(!o.status.success(), "{args:?} succeeded");
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn node(name: &str, cpu: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
           "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}})
}

fn pod(name: &str, cpu: &str, group: Option<&str>) -> Value {
    let mut p = json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}")},
           "spec": {"schedulerName": "volcano", "containers": [{"name": "c",
                    "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]}});
    if let Some(g) = group {
        p["metadata"]["annotations"] = json!({"scheduling.k8s.io/group-name": g});
    }
    p
}

fn pod_group(name: &str, min: i32, queue: &str) -> Value {
    json!({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
           "metadata": {"name": name, "namespace": "default"},
           "spec": {"minMember": min, "queue": queue}})
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn list(items: Vec<Value>) -> String {
    json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string()
}

fn events(items: &[(u64, &Value)]) -> String {
    items
        .iter()
        .map(|(t, o)| json!({"type": "ADDED", "time": t, "object": o}).to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn find<'a>(rows: &'a [Value], field: &str, key: &str) -> &'a Value {
    rows.iter()
        .find(|r| r[field] == key)
        .unwrap_or_else(|| panic!("{key} not in {rows:?}"))
}

struct Run {
    pods: Vec<Value>,
    groups: Vec<Value>,
    stderr: String,
}

fn run(dir: &Path, cluster: &Path, workload: &Path, extra: &[&str]) -> Run {
    let pods = dir.join("pods.jsonl");
    let groups = dir.join("groups.jsonl");
    let mut args = vec![
        "simulate",
        "--mode",
        "batch",
        "--cluster",
        cluster.to_str().unwrap(),
        "--workload",
        workload.to_str().unwrap(),
        "--pods-out",
        pods.to_str().unwrap(),
        "--groups-out",
        groups.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = sift(&args);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{stderr}");
    Run {
        pods: lines(&pods),
        groups: lines(&groups),
        stderr,
    }
}

fn queue(name: &str, weight: i32) -> Value {
    json!({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
           "metadata": {"name": name}, "spec": {"weight": weight}})
}

/// One 8-cpu node and, for each queue, eight one-pod jobs of 1 cpu
/// (`<queue>-<i>`) arriving at 0: the cluster and workload files.
fn one_pod_jobs(dir: &Path, queues: &[(&str, i32)]) -> (PathBuf, PathBuf) {
    let mut items = vec![node("n1", "8")];
    let mut pods = Vec::new();
    for &(q, weight) in queues {
        items.push(queue(q, weight));
        for i in 0..8 {
            let g = format!("{q}{i}");
            items.push(pod_group(&g, 1, q));
            pods.push(pod(&format!("{q}-{i}"), "1", Some(&g)));
        }
    }
    let cluster = write(dir, "cluster.json", &list(items));
    let workload = write(
        dir,
        "w.ndjson",
        &events(&pods.iter().map(|p| (0, p)).collect::<Vec<_>>()),
    );
    (cluster, workload)
}

/// How many of queue `q`'s pods (see [`one_pod_jobs`]) are bound.
fn bound_of(pods: &[Value], q: &str) -> usize {
    pods.iter()
        .filter(|p| {
            p["pod"]
                .as_str()
                .unwrap()
                .starts_with(&format!("default/{q}-"))
                && !p["node"].is_null()
        })
        .count()
}

#[test]
fn a_gang_binds_when_its_last_member_has_arrived_and_not_before() {
    let dir = sift_tests::temp_dir("batch-arrival");
    let cluster = write(
        &dir,
        "cluster.json",
        &list(vec![node("n1", "8"), pod_group("train", 3, "default")]),
    );
    let (w0, w1, w2) = (
        pod("w-0", "1", Some("train")),
        pod("w-1", "1", Some("train")),
        pod("w-2", "1", Some("train")),
    );
    let solo = pod("solo", "1", None);
    let workload = write(
        &dir,
        "w.ndjson",
        &events(&[(0, &w0), (0, &w1), (0, &solo), (5, &w2)]),
    );

    // One session (t=0): two of three members exist, so gang's job-valid
    // check fails and Volcano's condition says so; the pod without a
    // group is a job of one and binds.
    let one = run(&dir, &cluster, &workload, &["--sessions", "1"]);
    assert_eq!(find(&one.pods, "pod", "default/solo")["node"], "n1");
    assert!(find(&one.pods, "pod", "default/w-0")["node"].is_null());
    let g = find(&one.groups, "group", "default/train");
    assert_eq!(g["phase"], "Inqueue");
    assert_eq!(
        g["condition"]["message"],
        "3/2 tasks in gang unschedulable: pod group is not ready, 2 Pending, 3 minAvailable; Pending: 2 Unschedulable"
    );

    // The whole run: the third member arrives at 5, the gang binds then.
    let all = run(&dir, &cluster, &workload, &[]);
    for w in ["default/w-0", "default/w-1", "default/w-2"] {
        let p = find(&all.pods, "pod", w);
        assert_eq!(p["node"], "n1", "{p}");
        assert_eq!(p["scheduled"], 5, "{p}");
    }
    let g = find(&all.groups, "group", "default/train");
    assert_eq!(g["phase"], "Running");
    assert_eq!(g["placed"], 5);
    assert_eq!(g["condition"]["type"], "Scheduled");
}

#[test]
fn a_gang_that_cannot_fit_whole_holds_nothing() {
    let dir = sift_tests::temp_dir("batch-discard");
    let cluster = write(
        &dir,
        "cluster.json",
        &list(vec![node("n1", "4"), pod_group("big", 3, "default")]),
    );
    let big: Vec<Value> = (0..3)
        .map(|i| pod(&format!("big-{i}"), "2", Some("big")))
        .collect();
    let solo = pod("solo", "3", None);
    let workload = write(
        &dir,
        "w.ndjson",
        &events(&[(0, &big[0]), (0, &big[1]), (0, &big[2]), (0, &solo)]),
    );
    // big goes first (job order falls back to the PodGroup's uid): two
    // members fit; the third would take the default queue past its
    // deserved 4 cpu (proportion's Allocatable), so the Statement is
    // discarded and the 3-cpu pod still fits. (kube-batch v0.5, without
    // Statements, would have kept big's two placements for the session.)
    let one = run(&dir, &cluster, &workload, &["--sessions", "1"]);
    assert_eq!(find(&one.pods, "pod", "default/solo")["node"], "n1");
    assert_eq!(
        find(&one.pods, "pod", "default/big-0")["message"],
        "Pod default/big-0 can possibly be assigned to n1"
    );
    let not_ready = "pod group is not ready, 3 Pending, 3 minAvailable; Pending: 1 Unschedulable, 2 Schedulable";
    assert_eq!(
        find(&one.pods, "pod", "default/big-2")["message"],
        not_ready
    );
    let g = find(&one.groups, "group", "default/big");
    assert_eq!(g["discarded"], 1);
    assert_eq!(
        g["condition"]["message"],
        format!("1/3 tasks in gang unschedulable: {not_ready}")
    );
    assert_eq!(
        g["event"],
        format!("3/3 tasks in gang unschedulable: {not_ready}")
    );
    // The next session: solo holds 3 of the queue's deserved 4 cpu, so no
    // task of big is even tried: no placement, no fit error, no discard.
    // Volcano's message alone would not say why; sift names the queue's
    // limit after it (issue 29 §10).
    let two = run(&dir, &cluster, &workload, &["--sessions", "2"]);
    let g = find(&two.groups, "group", "default/big");
    assert_eq!(
        g["condition"]["message"],
        "3/3 tasks in gang unschedulable: pod group is not ready, 3 Pending, 3 minAvailable; \
         Pending: 3 Unschedulable; queue default cannot take task big-0 \
         (request: cpu 2000.00, memory 1073741824.00, pods 1.00) \
         (deserved: cpu 4000.00, memory 4294967296.00, pods 4.00; \
         allocated: cpu 3000.00, memory 1073741824.00, pods 1.00)"
    );
    assert_eq!(g["discarded"], 1);
    // Nothing of big is ever bound, even over more sessions.
    let all = run(&dir, &cluster, &workload, &[]);
    for p in &big {
        let key = format!("default/{}", p["metadata"]["name"].as_str().unwrap());
        assert!(find(&all.pods, "pod", &key)["node"].is_null());
    }
}

#[test]
fn queues_share_the_cluster_by_weight() {
    let dir = sift_tests::temp_dir("batch-queues");
    let (cluster, workload) = one_pod_jobs(&dir, &[("a", 3), ("b", 1)]);
    let queues = dir.join("queues.csv");
    let plot = dir.join("plot.svg");
    let r = run(
        &dir,
        &cluster,
        &workload,
        &[
            "--sessions",
            "1",
            "--queues-out",
            queues.to_str().unwrap(),
            "--plot",
            plot.to_str().unwrap(),
        ],
    );
    // 8 cpu deserved 3:1 -> a gets 6, b 2.
    assert_eq!((bound_of(&r.pods, "a"), bound_of(&r.pods, "b")), (6, 2));
    let csv = std::fs::read_to_string(&queues).unwrap();
    assert!(csv.starts_with("time,queue,weight,share,resource,allocated,deserved\n"));
    assert!(csv.contains("0,a,3,1.000000,cpu,6000,6000\n"), "{csv}");
    assert!(csv.contains("0,b,1,1.000000,cpu,2000,2000\n"), "{csv}");
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(svg.contains("deserved (dashed)"));
}

#[test]
fn bad_batch_input_is_named() {
    let dir = sift_tests::temp_dir("batch-bad");
    let cluster = write(
        &dir,
        "cluster.json",
        &list(vec![node("n1", "4"), pod_group("lost", 1, "nowhere")]),
    );
    let ghost = pod("ghost", "1", Some("missing"));
    let stray = pod("stray", "1", Some("lost"));
    let workload = write(&dir, "w.ndjson", &events(&[(0, &ghost), (0, &stray)]));
    let r = run(&dir, &cluster, &workload, &[]);
    let msg = |k: &str| {
        find(&r.pods, "pod", k)["message"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(
        msg("default/ghost").contains("PodGroup default/missing"),
        "{}",
        msg("default/ghost")
    );
    assert!(
        msg("default/stray").contains("queue \"nowhere\""),
        "{}",
        msg("default/stray")
    );

    let config = write(&dir, "c.yaml", "batch:\n  actions: \"allocate, preempt\"\n");
    let (cluster, workload) = (cluster.to_str().unwrap(), workload.to_str().unwrap());
    let err = fails(&[
        "simulate",
        "--mode",
        "batch",
        "--cluster",
        cluster,
        "--workload",
        workload,
        "-c",
        config.to_str().unwrap(),
    ]);
    assert!(
        err.contains("batch.actions") && err.contains("preempt"),
        "{err}"
    );

    let err = fails(&[
        "simulate",
        "--cluster",
        cluster,
        "--workload",
        workload,
        "--groups-out",
        dir.join("g.jsonl").to_str().unwrap(),
    ]);
    assert!(err.contains("--mode batch"), "{err}");

    let bad_queue = write(
        &dir,
        "bad-queue.json",
        &list(vec![
            node("n1", "4"),
            json!({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                   "metadata": {"name": "q"}, "spec": {"capability": {"cpu": "lots"}}}),
        ]),
    );
    let err = fails(&[
        "simulate",
        "--mode",
        "batch",
        "--cluster",
        bad_queue.to_str().unwrap(),
        "--workload",
        workload,
    ]);
    assert!(
        err.contains("Queue q") && err.contains("spec.capability.cpu"),
        "{err}"
    );
}

#[test]
fn openb_gangs_bind_whole() {
    let dir = sift_tests::temp_dir("batch-openb");
    let root = sift_tests::workspace_root();
    let pods_csv =
        std::fs::read_to_string(root.join("tests/data/openb/openb_pod_list_default.csv")).unwrap();
    let head: Vec<&str> = pods_csv.lines().take(301).collect();
    let small = write(&dir, "pods.csv", &(head.join("\n") + "\n"));
    let out = dir.join("trace");
    let o = sift(&[
        "trace",
        "openb",
        "tests/data/openb/openb_node_list_all_node.csv",
        small.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--gangs",
        "2-8",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = run(
        &dir,
        &out.join("cluster.json"),
        &out.join("workload.ndjson"),
        &["--cluster", out.join("batch.json").to_str().unwrap()],
    );
    assert!(r.groups.len() >= 300 / 8, "{}", r.groups.len());
    // Every gang that ran had all its members bound in one session.
    let mut ran = 0;
    for g in &r.groups {
        let Some(placed) = g["placed"].as_u64() else {
            continue;
        };
        ran += 1;
        let name = g["group"].as_str().unwrap();
        let members: Vec<&Value> = r
            .pods
            .iter()
            .filter(|p| p["scheduled"].is_u64())
            .filter(|p| {
                p["pod"]
                    .as_str()
                    .is_some_and(|k| member_of(&out, k).as_deref() == Some(name))
            })
            .collect();
        assert_eq!(
            members.len() as u64,
            g["minMember"].as_u64().unwrap(),
            "{g}"
        );
        assert!(members.iter().all(|p| p["scheduled"] == placed), "{g}");
    }
    assert!(ran > 0);
}

/// namespace/podgroup of a pod, from the trace's workload.
fn member_of(trace: &Path, pod: &str) -> Option<String> {
    thread_local! {
        static GROUPS: std::cell::RefCell<Option<std::collections::HashMap<String, String>>> =
            const { std::cell::RefCell::new(None) };
    }
    GROUPS.with(|g| {
        let mut g = g.borrow_mut();
        let map = g.get_or_insert_with(|| {
            let text = std::fs::read_to_string(trace.join("workload.ndjson")).unwrap();
            text.lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap())
                .filter_map(|e| {
                    let m = &e["object"]["metadata"];
                    let group = m["annotations"]["scheduling.k8s.io/group-name"].as_str()?;
                    Some((
                        format!("default/{}", m["name"].as_str()?),
                        format!("default/{group}"),
                    ))
                })
                .collect()
        });
        map.get(pod).cloned()
    })
}

#[test]
fn the_bundled_example_runs_as_the_readme_says() {
    let dir = sift_tests::temp_dir("batch-example");
    let root = sift_tests::workspace_root();
    let r = run(
        &dir,
        &root.join("tests/data/batch/cluster.yaml"),
        &root.join("tests/data/batch/workload.ndjson"),
        &[],
    );
    // train and tune fill research's share at 0; sweep (6 x 3 cpu, queue
    // prod) is placed and discarded until tune leaves at 90.
    let g = |k: &str| find(&r.groups, "group", k).clone();
    assert_eq!(g("ml/train")["placed"], 0);
    assert_eq!(g("ml/tune")["placed"], 0);
    assert_eq!(g("data/etl")["placed"], 10);
    assert_eq!(g("ml/sweep")["placed"], 90);
    assert!(g("ml/sweep")["discarded"].as_u64().unwrap() >= 1);
    for k in ["ml/train", "ml/tune", "data/etl", "ml/sweep"] {
        assert_eq!(g(k)["phase"], "Completed", "{k}");
    }
    // tune's ps and two workers make it ready; the third worker fits too.
    assert!(
        r.pods
            .iter()
            .filter(|p| p["pod"].as_str().unwrap().starts_with("ml/tune-"))
            .all(|p| p["scheduled"] == 0)
    );
}

/// Issue 29 §10: a Queue with `weight: 0` starved (Volcano's admission
/// webhook turns 0 into 1), and switches of newer Volcano releases failed
/// the config, where Volcano's own loader ignores unknown keys.
#[test]
fn a_zero_weight_queue_shares_as_one_and_newer_volcano_switches_are_warned_about() {
    let dir = sift_tests::temp_dir("batch-zero-weight");
    let (cluster, workload) = one_pod_jobs(&dir, &[("zero", 0), ("one", 1)]);
    let config = write(
        &dir,
        "volcano.yaml",
        "batch:\n  enabledHyperNodeOrder: true\n  tiers:\n  - plugins:\n    - name: priority\n    \
         - name: gang\n      enabledSubJobReady: true\n  - plugins:\n    - {name: drf}\n    \
         - {name: predicates}\n    - {name: proportion}\n    - {name: nodeorder, enabledHyperNodeOrder: true}\n",
    );
    let r = run(
        &dir,
        &cluster,
        &workload,
        &["--sessions", "1", "-c", config.to_str().unwrap()],
    );
    for key in [
        "batch.enabledHyperNodeOrder",
        "plugin gang: enabledSubJobReady",
        "plugin nodeorder: enabledHyperNodeOrder",
    ] {
        assert!(
            r.stderr.contains(key) && r.stderr.contains("accepted and not used"),
            "{key} not warned about:\n{}",
            r.stderr
        );
    }
    // 8 cpu deserved 1:1.
    assert_eq!(
        (bound_of(&r.pods, "zero"), bound_of(&r.pods, "one")),
        (4, 4)
    );
}

/// Issue 29 §10: when queues' deserved shares block every pod (ten
/// one-pod queues share 8 cpu, 0.8 each, and each pod asks for 1), nothing
/// binds, as in Volcano; the message now names the queue's limit instead
/// of a bare "pod group is not ready".
#[test]
fn a_queue_that_holds_its_jobs_back_is_named_in_their_message() {
    let dir = sift_tests::temp_dir("batch-queue-limit");
    let mut items = vec![node("n1", "8")];
    let mut pods = Vec::new();
    for i in 0..10 {
        items.push(queue(&format!("q{i}"), 1));
        items.push(pod_group(&format!("g{i}"), 1, &format!("q{i}")));
        pods.push(pod(&format!("p{i}"), "1", Some(&format!("g{i}"))));
    }
    let cluster = write(&dir, "cluster.json", &list(items));
    let workload = write(
        &dir,
        "w.ndjson",
        &events(&pods.iter().map(|p| (0, p)).collect::<Vec<_>>()),
    );
    let r = run(&dir, &cluster, &workload, &["--sessions", "1"]);
    for i in 0..10 {
        let p = find(&r.pods, "pod", &format!("default/p{i}"));
        assert!(p["node"].is_null(), "{p}");
        let m = p["message"].as_str().unwrap();
        assert!(
            m.starts_with("pod group is not ready")
                && m.contains(&format!(
                    "queue q{i} cannot take task p{i} (request: cpu 1000.00"
                ))
                && m.contains("(deserved: cpu 800.00"),
            "{m}"
        );
    }
}
