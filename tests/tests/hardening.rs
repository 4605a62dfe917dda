//! Defects adversarial reviews found in `sift filter`, `sift conformance`,
//! `sift plugins`, `sift new`, the sandbox (issue 12), plugin directories
//! and reserve plugins (issue 29), each reproduced end to end through the
//! command line. (`sift serve`'s are in serve.rs, the watch's in watch.rs,
//! extenders' in extenders.rs, simulations' in simulate.rs and batch.rs.)

use serde_json::{Value, json};
use sift_tests::fixtures::{componentize, plugin_wat};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn sift_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(sift_tests::sift_bin())
        .args(args)
        .env("SIFT_PLUGINS_DIR", sift_tests::plugins_dir())
        .env("SIFT_CACHE_DIR", dir.join("cache"))
        .env_remove("SIFT_LOG")
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("run sift")
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn write_json(dir: &Path, file: &str, v: &Value) -> String {
    let path = dir.join(file);
    std::fs::write(&path, serde_json::to_string_pretty(v).unwrap()).unwrap();
    path.to_str().unwrap().to_string()
}

fn node(name: &str, cpu: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
           "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}})
}

fn pod(name: &str, spec: Value) -> Value {
    let mut spec = spec;
    if spec.get("containers").is_none() {
        spec["containers"] = json!([{"name": "c", "image": "app:1"}]);
    }
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "default"}, "spec": spec,
           "status": {"phase": "Pending"}})
}

fn list(items: Vec<Value>) -> Value {
    json!({"apiVersion": "v1", "kind": "List", "items": items})
}

/// §1.4: pending pods kube-scheduler never schedules were placed.
#[test]
fn filter_places_only_pods_kube_scheduler_would_schedule() {
    let dir = sift_tests::temp_dir("hardening-skip");
    let mut finished = pod("finished", json!({}));
    finished["status"]["phase"] = json!("Succeeded");
    let mut deleting = pod("deleting", json!({}));
    deleting["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
    let cluster = list(vec![
        node("a", "4"),
        pod("normal", json!({})),
        finished,
        deleting,
        pod("other", json!({"schedulerName": "my-scheduler"})),
        pod(
            "gated",
            json!({"schedulingGates": [{"name": "example.com/wait"}]}),
        ),
        pod("explicit", json!({"schedulerName": "default-scheduler"})),
    ]);
    let c = write_json(&dir, "cluster.json", &cluster);
    let o = sift_in(&dir, &["filter", "--cluster", &c]);
    assert!(o.status.success(), "{}", err(&o));
    let text = out(&o);
    assert!(text.contains("pod default/normal:"), "{text}");
    assert!(text.contains("pod default/explicit:"), "{text}");
    for skipped in ["finished", "deleting", "other", "gated"] {
        assert!(!text.contains(&format!("pod default/{skipped}:")), "{text}");
    }
    let line = text
        .lines()
        .find(|l| l.starts_with("skipped"))
        .unwrap_or_else(|| panic!("no skipped line: {text}"));
    for part in [
        "skipped 4 pending pod(s)",
        "1 in phase Succeeded or Failed",
        "1 being deleted",
        "1 for another scheduler",
        "1 held by spec.schedulingGates",
    ] {
        assert!(line.contains(part), "{line}");
    }
    // The config's schedulerName decides whose pods are placed.
    std::fs::write(dir.join("sift.yaml"), "schedulerName: my-scheduler\n").unwrap();
    let o = sift_in(
        &dir,
        &["filter", "--cluster", &c, "-c", "sift.yaml", "-o", "json"],
    );
    assert!(o.status.success(), "{}", err(&o));
    let v: Value = serde_json::from_str(&out(&o)).unwrap();
    let placed: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["pod"].as_str().unwrap())
        .collect();
    assert_eq!(placed, ["default/other"]);
    assert!(err(&o).contains("skipped 5 pending pod(s)"), "{}", err(&o));
}

/// §1.5: requests default to limits (and other API-server defaults that
/// change what filters see).
#[test]
fn hand_written_objects_get_the_api_servers_defaults() {
    let dir = sift_tests::temp_dir("hardening-defaults");
    let limits_only = |name: &str, cpu: &str| {
        pod(
            name,
            json!({"containers": [{"name": "c", "resources": {"limits": {"cpu": cpu}}}]}),
        )
    };
    let mut bound = limits_only("bound", "3");
    bound["spec"]["nodeName"] = json!("four");
    let mut host_net = pod(
        "hostnet",
        json!({"hostNetwork": true, "nodeName": "big",
        "containers": [{"name": "c", "ports": [{"containerPort": 8080}]}]}),
    );
    host_net["status"]["phase"] = json!("Running");
    // A node that only says its capacity: allocatable defaults to it.
    let capacity_only = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "cap"},
        "status": {"capacity": {"cpu": "2", "memory": "8Gi", "pods": "110"}}});
    let cluster = list(vec![
        node("two", "2"),
        node("four", "4"),
        node("big", "64"),
        capacity_only,
        bound,
        host_net,
    ]);
    let c = write_json(&dir, "cluster.json", &cluster);
    let p = write_json(&dir, "pod.json", &limits_only("app", "3"));
    let o = sift_in(
        &dir,
        &["filter", "--cluster", &c, "--pod", &p, "-o", "json"],
    );
    assert!(o.status.success(), "{}", err(&o));
    let v: Value = serde_json::from_str(&out(&o)).unwrap();
    let cycle = &v[0];
    // 3 cpus do not fit on 2, nor on 4 holding a pod limited (so requesting) 3.
    assert_eq!(
        cycle["statuses"]["two"]["reasons"],
        json!(["Insufficient cpu"])
    );
    assert_eq!(
        cycle["statuses"]["four"]["reasons"],
        json!(["Insufficient cpu"])
    );
    assert_eq!(
        cycle["statuses"]["cap"]["reasons"],
        json!(["Insufficient cpu"])
    );
    assert_eq!(cycle["feasibleNodes"], json!(["big"]));
    // hostNetwork: the bound pod's container port is a host port.
    let p = write_json(
        &dir,
        "port.json",
        &pod(
            "port",
            json!({"containers": [{"name": "c",
        "ports": [{"containerPort": 8080, "hostPort": 8080}]}]}),
        ),
    );
    let o = sift_in(
        &dir,
        &["filter", "--cluster", &c, "--pod", &p, "-o", "json"],
    );
    let v: Value = serde_json::from_str(&out(&o)).unwrap();
    assert_eq!(v[0]["statuses"]["big"]["plugin"], "NodePorts", "{v}");
    assert!(
        v[0]["feasibleNodes"]
            .as_array()
            .unwrap()
            .contains(&json!("cap")),
        "{v}"
    );
}

/// A cluster of one roomy node "a" and a plain pod, as files in `dir`.
fn one_node_and_a_pod(dir: &Path) -> (String, String) {
    (
        write_json(dir, "cluster.json", &list(vec![node("a", "4")])),
        write_json(dir, "pod.json", &pod("p", json!({}))),
    )
}

/// A fixture component on disk.
fn fixture(dir: &Path, file: &str, wasm: &[u8]) -> String {
    let path = dir.join(file);
    std::fs::write(&path, wasm).unwrap();
    path.to_str().unwrap().to_string()
}

/// §1.3: `--plugin` replacing a plugin said nothing; duplicates in one
/// directory name the way out.
#[test]
fn a_replaced_plugin_is_announced_and_duplicates_resolved_by_config() {
    let dir = sift_tests::temp_dir("hardening-replace");
    let (c, p) = one_node_and_a_pod(&dir);
    let np = fixture(
        &dir,
        "np.wasm",
        &componentize(&plugin_wat("NodePorts", "", "", "", ""), "plugin"),
    );
    let o = sift_in(
        &dir,
        &["filter", "--cluster", &c, "--pod", &p, "--plugin", &np],
    );
    assert!(o.status.success(), "{}", err(&o));
    let e = err(&o);
    assert!(
        e.contains("np.wasm")
            && e.contains("replaces")
            && e.contains("sift_plugin_node_ports.wasm"),
        "{e}"
    );

    let plugins = dir.join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    for entry in std::fs::read_dir(sift_tests::plugins_dir()).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, plugins.join(path.file_name().unwrap())).unwrap();
    }
    std::fs::copy(&np, plugins.join("aa_ports.wasm")).unwrap();
    let filter_dir = |extra: &[&str]| {
        let mut args = vec![
            "filter",
            "--cluster",
            &c,
            "--pod",
            &p,
            "--plugins",
            "plugins",
        ];
        args.extend_from_slice(extra);
        sift_in(&dir, &args)
    };
    let o = filter_dir(&[]);
    assert!(!o.status.success());
    assert!(err(&o).contains("pluginFiles"), "{}", err(&o));
    std::fs::write(
        dir.join("sift.yaml"),
        "pluginFiles: {NodePorts: sift_plugin_node_ports.wasm}\n",
    )
    .unwrap();
    let o = filter_dir(&["-c", "sift.yaml"]);
    assert!(o.status.success(), "{}", err(&o));
    // A pin naming a file that is not there says so.
    std::fs::write(
        dir.join("bad.yaml"),
        "pluginFiles: {NodePorts: gone.wasm}\n",
    )
    .unwrap();
    let o = filter_dir(&["-c", "bad.yaml"]);
    assert!(
        err(&o)
            .contains("pluginFiles gives \"NodePorts\" to gone.wasm, which is not a component in"),
        "{}",
        err(&o)
    );
    let o = filter_dir(&["-c", "sift.yaml"]);
    assert!(o.status.success(), "{}", err(&o));
}

/// §1.6: a preview-1 plugin's fd_write failed (the adapter asks for
/// preopens), granted or not.
#[test]
fn preview1_plugins_may_print_and_are_heard_only_when_granted() {
    let dir = sift_tests::temp_dir("hardening-stdio");
    let imports = r#"(import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
      (data (i32.const 300) "hello from wat\n")"#;
    let filter = "(i32.store (i32.const 200) (i32.const 300))
        (i32.store (i32.const 204) (i32.const 15))
        (drop (call $fd_write (i32.const 1) (i32.const 200) (i32.const 1) (i32.const 240)))
        (drop (call $fd_write (i32.const 2) (i32.const 200) (i32.const 1) (i32.const 240)))";
    let wat = dir.join("printer.wat");
    std::fs::write(&wat, plugin_wat("Printer", imports, "", "", filter)).unwrap();
    let o = sift_in(
        &dir,
        &[
            "component",
            "new",
            wat.to_str().unwrap(),
            "-o",
            "printer.wasm",
        ],
    );
    assert!(o.status.success(), "{}", err(&o));
    let (c, p) = one_node_and_a_pod(&dir);
    let run = |config: &str| {
        std::fs::write(dir.join("sift.yaml"), config).unwrap();
        let o = sift_in(
            &dir,
            &[
                "filter",
                "--cluster",
                &c,
                "--pod",
                &p,
                "--plugin",
                "printer.wasm",
                "-c",
                "sift.yaml",
            ],
        );
        assert!(o.status.success(), "{}\n{}", out(&o), err(&o));
        assert!(out(&o).contains("feasible: a"), "{}", out(&o));
        err(&o)
    };
    let quiet = run("sandbox: {stdio: false}\n");
    assert!(!quiet.contains("hello"), "{quiet}");
    let heard = run("sandbox: {stdio: true}\n");
    assert!(heard.contains("[stdout] hello from wat"), "{heard}");
    assert!(heard.contains("[stderr] hello from wat"), "{heard}");
    assert!(heard.contains("Printer@"), "{heard}");
}

/// §2.2: `--parallelism` had no bound (4,000 threads took 7.7 s).
#[test]
fn parallelism_is_bounded() {
    let dir = sift_tests::temp_dir("hardening-parallelism");
    let c = write_json(&dir, "cluster.json", &list(vec![node("a", "4")]));
    let o = sift_in(&dir, &["filter", "--cluster", &c, "--parallelism", "4000"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("1 to 256"), "{}", err(&o));
    std::fs::write(dir.join("sift.yaml"), "parallelism: 100000\n").unwrap();
    let o = sift_in(&dir, &["filter", "--cluster", &c, "-c", "sift.yaml"]);
    assert!(
        err(&o).contains("sift.yaml: parallelism") && err(&o).contains("1 to 256"),
        "{}",
        err(&o)
    );
}

/// Runs sift with a time limit: a hang fails the test instead of stalling it.
fn sift_bounded(dir: &Path, args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(sift_tests::sift_bin())
        .args(args)
        .env("SIFT_PLUGINS_DIR", sift_tests::plugins_dir())
        .env("SIFT_CACHE_DIR", dir.join("cache"))
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("sift {args:?} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// §2.3: `sift conformance` followed symlink cycles forever.
#[test]
fn conformance_survives_symlink_cycles() {
    let dir = sift_tests::temp_dir("hardening-symlinks");
    let cases = dir.join("cases");
    std::fs::create_dir_all(&cases).unwrap();
    let case = sift_tests::workspace_root().join("tests/cases/NodeName/002-host-matches.json");
    std::fs::copy(&case, cases.join("one.json")).unwrap();
    std::os::unix::fs::symlink(".", cases.join("self")).unwrap();
    std::os::unix::fs::symlink(".", cases.join("b")).unwrap();
    std::os::unix::fs::symlink("..", cases.join("up")).unwrap();
    let o = sift_bounded(&dir, &["conformance", "cases"], Duration::from_secs(60));
    assert!(o.status.success(), "{}", err(&o));
    assert!(out(&o).contains("1 passed, 0 failed"), "{}", out(&o));
    // A file named twice, or through a link, runs once.
    let o = sift_bounded(
        &dir,
        &[
            "conformance",
            "cases/one.json",
            "cases/self/one.json",
            "cases/self",
        ],
        Duration::from_secs(60),
    );
    assert!(out(&o).contains("1 passed, 0 failed"), "{}", out(&o));
}

/// §2.5, §2.6: plugin logging had no bound, and a newline in a message
/// forged a log line.
#[test]
fn plugin_logs_are_bounded_and_cannot_forge_lines() {
    let dir = sift_tests::temp_dir("hardening-logs");
    let forged = "line one\nERROR sift: forged line\x1b[31m";
    let wat_text: String = forged.bytes().map(|b| format!("\\{b:02x}")).collect();
    let imports = format!(
        r#"(import "sift:predicate/log@0.1.0" "log" (func $log (param i32 i32 i32)))
      (global $i (mut i32) (i32.const 0))
      (data (i32.const 400) "{wat_text}")"#
    );
    let filter = format!(
        "(call $log (i32.const 4) (i32.const 8192) (i32.const 50000))
        (global.set $i (i32.const 0))
        (loop $l
          (call $log (i32.const 3) (i32.const 400) (i32.const {len}))
          (global.set $i (i32.add (global.get $i) (i32.const 1)))
          (br_if $l (i32.lt_u (global.get $i) (i32.const 5000))))",
        len = forged.len()
    );
    let wasm = componentize(&plugin_wat("Chatty", &imports, "", "", &filter), "plugin");
    let chatty = fixture(&dir, "chatty.wasm", &wasm);
    let (c, p) = one_node_and_a_pod(&dir);
    let o = sift_in(
        &dir,
        &[
            "--log-level",
            "info",
            "filter",
            "--cluster",
            &c,
            "--pod",
            &p,
            "--plugin",
            &chatty,
        ],
    );
    assert!(o.status.success(), "{}", err(&o));
    let e = err(&o);
    let lines: Vec<&str> = e.lines().collect();
    assert!(lines.len() < 400, "{} lines of stderr", lines.len());
    assert!(e.contains("dropping messages"), "{e}");
    assert!(e.contains("dropped"), "{e}");
    assert!(
        lines.iter().all(|l| !l.starts_with("ERROR sift: forged")),
        "a forged line"
    );
    assert!(
        e.contains("line one\\nERROR sift: forged line\\u{1b}[31m"),
        "{e}"
    );
    assert!(!e.contains('\u{1b}'), "escape sequences reached stderr");
    assert!(lines.iter().all(|l| l.len() < 10_000), "a line over 10 KB");
    assert!(e.contains("more bytes)"), "the 50 KB message is cut");
}

/// §3.2: a `--pod` file with no Pod said "pass --pod FILE".
#[test]
fn a_pod_file_without_a_pod_says_so() {
    let dir = sift_tests::temp_dir("hardening-no-pod");
    let c = write_json(&dir, "cluster.json", &list(vec![node("a", "4")]));
    let p = write_json(&dir, "node.json", &node("b", "2"));
    let o = sift_in(&dir, &["filter", "--cluster", &c, "--pod", &p]);
    assert!(!o.status.success());
    assert!(
        err(&o).contains("node.json: holds no Pod (found: 1 Node)"),
        "{}",
        err(&o)
    );
}

/// §3.3: `prepare` rejecting with a code that is not a rejection said only
/// "plugin said no".
#[test]
fn a_reject_with_a_non_rejection_code_is_named_an_invalid_code() {
    let dir = sift_tests::temp_dir("hardening-reject-code");
    let prepare = "(i32.store8 (i32.const 96) (i32.const 2))
        (i32.store8 (i32.const 100) (i32.const 0))
        (i32.store (i32.const 104) (i32.const 0))
        (i32.store (i32.const 108) (i32.const 0))
        (return (i32.const 96))";
    let wasm = componentize(&plugin_wat("Confused", "", "", prepare, ""), "plugin");
    let f = fixture(&dir, "confused.wasm", &wasm);
    let (c, p) = one_node_and_a_pod(&dir);
    let o = sift_in(
        &dir,
        &["filter", "--cluster", &c, "--pod", &p, "--plugin", &f],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        out(&o).contains("Confused")
            && out(&o).contains("reject with code Success, which is not a rejection"),
        "{}",
        out(&o)
    );
}

/// §3.8: case-file errors spoke serde.
#[test]
fn case_file_errors_say_what_a_case_file_is() {
    let dir = sift_tests::temp_dir("hardening-cases");
    std::fs::write(dir.join("array.json"), "[]").unwrap();
    let mut case: Value = serde_json::from_str(
        &std::fs::read_to_string(
            sift_tests::workspace_root().join("tests/cases/NodeName/002-host-matches.json"),
        )
        .unwrap(),
    )
    .unwrap();
    case["filters"] = json!(["NodeName", "NodeName"]);
    write_json(&dir, "twice.json", &case);
    let o = sift_in(&dir, &["conformance", "array.json", "twice.json"]);
    let text = out(&o);
    assert!(
        text.contains("array.json") && text.contains("expected one JSON object"),
        "{text}"
    );
    assert!(!text.contains("invalid length"), "{text}");
    assert!(
        text.contains("\"filters\" lists \"NodeName\" twice"),
        "{text}"
    );
    assert!(text.contains("0 passed, 2 failed"), "{text}");
}

/// §3.9: names from input files and plugins reached the terminal raw.
#[test]
fn names_are_escaped_before_they_reach_a_terminal() {
    let dir = sift_tests::temp_dir("hardening-escape");
    let c = write_json(
        &dir,
        "cluster.json",
        &list(vec![node("evil\n\u{1b}[31m", "4"), node("small", "1")]),
    );
    let p = write_json(
        &dir,
        "pod.json",
        &pod(
            "p",
            json!({"containers": [{"name": "c",
        "resources": {"requests": {"cpu": "2"}}}]}),
        ),
    );
    let o = sift_in(&dir, &["filter", "--cluster", &c, "--pod", &p]);
    assert!(o.status.success(), "{}", err(&o));
    let text = out(&o);
    assert!(text.contains("feasible: evil\\n\\u{1b}[31m"), "{text}");
    assert!(!text.contains('\u{1b}'), "{text:?}");
    // A plugin named with a terminal title sequence.
    let wat = plugin_wat("Bad\\1b]0;owned\\07", "", "", "", "");
    let f = fixture(&dir, "bad.wasm", &componentize(&wat, "plugin"));
    let o = sift_in(&dir, &["plugins", "inspect", &f]);
    let text = out(&o);
    assert!(text.contains("Bad\\u{1b}]0;owned\\u{7}"), "{text}");
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text:?}"
    );
}

/// §3.10: colours in piped logs, wasmtime's internals at debug, a
/// misleading error for `--percentage -1`.
#[test]
fn logs_and_flags_read_right() {
    let dir = sift_tests::temp_dir("hardening-logs-flags");
    let (c, p) = one_node_and_a_pod(&dir);
    let o = sift_in(
        &dir,
        &[
            "--log-level",
            "debug",
            "filter",
            "--cluster",
            &c,
            "--pod",
            &p,
        ],
    );
    assert!(o.status.success(), "{}", err(&o));
    let e = err(&o);
    assert!(!e.contains('\u{1b}'), "colour codes in a pipe: {e:?}");
    assert!(
        e.lines().any(|l| l.contains("DEBUG") && l.contains("sift")),
        "{e}"
    );
    let internal: Vec<&str> = e
        .lines()
        .filter(|l| l.contains("wasmtime") || l.contains("cranelift"))
        .collect();
    assert!(internal.is_empty(), "{internal:?}");
    let o = sift_in(&dir, &["filter", "--cluster", &c, "--percentage", "-1"]);
    assert!(
        err(&o).contains("0..=100") && !err(&o).contains("unexpected argument"),
        "{}",
        err(&o)
    );
    let o = sift_in(&dir, &["--log-level", "loud", "plugins", "list"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("--log-level"), "{}", err(&o));
}

/// §3.10: `sift new` and its starters.
#[test]
fn new_projects_are_named_and_described_truthfully() {
    let dir = sift_tests::temp_dir("hardening-new");
    let long = "a".repeat(60);
    let o = sift_in(&dir, &["new", "--lang", "wat", &long]);
    assert!(err(&o).contains("at most 50"), "{}", err(&o));
    let o = sift_in(&dir, &["new", "--lang", "wat", "node-ports"]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(
        err(&o).contains("\"NodePorts\"") && err(&o).contains("bundled plugin"),
        "{}",
        err(&o)
    );

    let o = sift_in(&dir, &["new", "--lang", "rust", "my-check"]);
    assert!(o.status.success(), "{}", err(&o));
    let cargo = std::fs::read_to_string(dir.join("my-check/Cargo.toml")).unwrap();
    assert!(cargo.contains("strip = \"debuginfo\""), "{cargo}");
    let o = sift_in(&dir, &["new", "--lang", "c", "c-check"]);
    assert!(o.status.success(), "{}", err(&o));
    for project in ["my-check", "c-check", "node-ports"] {
        let readme = std::fs::read_to_string(dir.join(project).join("README.md")).unwrap();
        assert!(!readme.contains("is the one on your `PATH`"), "{readme}");
    }
    // The C starter without its compiler says what to install.
    let o = Command::new("bash")
        .arg(dir.join("c-check/build.sh"))
        .env("CC", "clang-that-is-not-here")
        .env("SIFT", sift_tests::sift_bin())
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        err(&o).contains("not found") && err(&o).contains("apt-get install clang-19"),
        "{}",
        err(&o)
    );
    // The C starter's SDK logs through the contract's log import, and its
    // README says so (printf is discarded unless the sandbox grants stdio).
    let sdk = std::fs::read_to_string(dir.join("c-check/sdk/sift.c")).unwrap();
    assert!(sdk.contains("sift_predicate_log_log"), "the C SDK logs");
    let readme = std::fs::read_to_string(dir.join("c-check/README.md")).unwrap();
    assert!(readme.contains("sift_log"), "{readme}");
}

/// Issue 29 §8: a non-Wasm file in the plugins directory was read whole before its
/// header was checked (a 3 GB file: 3.2 GB RSS), and `plugins list` failed
/// whole with a byte array. Now the header and size are checked first and
/// the list shows the good plugins and one line for each bad file.
#[test]
fn plugins_list_names_each_bad_file_in_one_line_and_lists_the_good_ones() {
    let dir = sift_tests::temp_dir("r3-plugins-dir");
    let plugins = dir.join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    std::fs::copy(
        sift_tests::plugins_dir().join("sift_plugin_node_ports.wasm"),
        plugins.join("node_ports.wasm"),
    )
    .unwrap();
    std::fs::write(plugins.join("notes.wasm"), "hello, not wasm\n").unwrap();
    std::fs::write(plugins.join("empty.wasm"), "").unwrap();
    std::fs::write(plugins.join("core.wasm"), b"\0asm\x01\0\0\0").unwrap();
    // Sparse: 3 GiB on paper, nothing on disk. Reading it whole would take
    // 3 GiB of memory; the size check refuses it first.
    let huge = std::fs::File::create(plugins.join("huge.wasm")).unwrap();
    huge.set_len(3 << 30).unwrap();
    drop(huge);

    let o = sift_in(&dir, &["plugins", "list", "--plugins", "plugins"]);
    let (stdout, stderr) = (out(&o), err(&o));
    assert_eq!(o.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("NodePorts"), "{stdout}");
    assert!(stderr.contains("4 file(s)"), "{stderr}");
    let line = |file: &str| -> String {
        stderr
            .lines()
            .find(|l| l.contains(file))
            .unwrap_or_else(|| panic!("no line for {file}:\n{stderr}"))
            .to_string()
    };
    assert!(
        line("notes.wasm").contains("not a WebAssembly file (it starts with 68 65 6c 6c"),
        "{stderr}"
    );
    assert!(line("empty.wasm").contains("it is empty"), "{stderr}");
    assert!(
        line("core.wasm").contains("core WebAssembly module"),
        "{stderr}"
    );
    assert!(
        line("huge.wasm").contains("3072 MiB is larger than a plugin may be"),
        "{stderr}"
    );
    // One line per file, no byte arrays.
    assert!(stderr.lines().count() <= 6, "{stderr}");

    // Commands that need the plugins fail on the first bad file, in one
    // line that names it.
    let cluster = write_json(&dir, "c.json", &list(vec![node("n1", "4")]));
    let p = write_json(&dir, "p.json", &pod("p", json!({})));
    let o = sift_in(
        &dir,
        &[
            "filter",
            "--plugins",
            "plugins",
            "--cluster",
            &cluster,
            "--pod",
            &p,
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(err(&o).contains(".wasm"), "{}", err(&o));
}

/// Issue 29 §6, §11: a reserve plugin's annotations were taken as given: 80,000 of
/// them made later cycles superlinear, a 32 MiB value was copied into
/// every `--pods-out` line, and keys with newlines, escapes or NUL passed.
/// Now they are checked as the API server checks a pod's annotations, and
/// a plugin past the rules fails the pod's cycle, named.
#[test]
fn reserve_annotations_are_checked_as_the_api_server_would() {
    let dir = sift_tests::temp_dir("r3-reserve");
    let probe = sift_tests::workspace_root()
        .join("target/test-plugins/sift_test_plugin_reserve_probe.wasm");
    let asking = |name: &str, ask: &str| {
        let mut p = pod(name, json!({}));
        p["metadata"]["annotations"] = json!({"test.sift.io/reserve": ask});
        p
    };
    let case = json!({
        "name": "reserve annotations",
        "filters": ["NodeName", "ReserveProbe"],
        "nodes": [node("n1", "64")],
        "workload": [
            asking("few", "many:3"),
            asking("many", "many:80000"),
            asking("big", "big:300000"),
            asking("newline", "key:probe.test/a\\nb"),
            asking("escape", "key:a\\e[31m"),
            asking("empty", "key:"),
            asking("twice", "twice"),
        ],
        "expect": {
            "binds": {"default/few": "n1"},
            "unscheduled": ["default/many", "default/big", "default/newline",
                            "default/escape", "default/empty", "default/twice"],
        }
    });
    let file = write_json(&dir, "reserve.json", &case);
    let o = sift_in(
        &dir,
        &["conformance", "--plugin", probe.to_str().unwrap(), &file],
    );
    assert!(o.status.success(), "{}\n{}", out(&o), err(&o));

    // The messages, through `sift simulate`'s per-pod lines.
    let plugins = dir.join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    for f in std::fs::read_dir(sift_tests::plugins_dir()).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, plugins.join(f.file_name().unwrap())).unwrap();
    }
    std::fs::copy(&probe, plugins.join("reserve_probe.wasm")).unwrap();
    let config = dir.join("sift.yaml");
    std::fs::write(
        &config,
        "pluginsDir: plugins\nplugins: {filter: {enabled: [{name: ReserveProbe}]}}\n",
    )
    .unwrap();
    let cluster = write_json(&dir, "cluster.json", &list(vec![node("n1", "64")]));
    let workload: String = case["workload"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| json!({"type": "ADDED", "object": p}).to_string() + "\n")
        .collect();
    std::fs::write(dir.join("w.ndjson"), workload).unwrap();
    let pods_out = dir.join("pods.jsonl");
    let o = sift_in(
        &dir,
        &[
            "simulate",
            "-c",
            config.to_str().unwrap(),
            "--cluster",
            &cluster,
            "--workload",
            "w.ndjson",
            "--pods-out",
            pods_out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", err(&o));
    let lines = std::fs::read_to_string(&pods_out).unwrap();
    assert!(
        lines.len() < 64 * 1024,
        "{} bytes of --pods-out",
        lines.len()
    );
    let message = |name: &str| -> String {
        let line = lines
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|v| v["pod"] == format!("default/{name}"))
            .unwrap_or_else(|| panic!("no line for {name}:\n{lines}"));
        line["message"].as_str().unwrap_or("").to_string()
    };
    for (name, expected) in [
        ("many", "more than 262144 bytes"),
        ("big", "more than 262144 bytes"),
        ("newline", "invalid annotation key \"probe.test/a\\nb\""),
        ("escape", "invalid annotation key \"a\\u{1b}[31m\""),
        (
            "empty",
            "invalid annotation key \"\": name part must be non-empty",
        ),
        ("twice", "the annotation key \"probe.test/k\" twice"),
    ] {
        let m = message(name);
        assert!(
            m.contains("ReserveProbe") && m.contains(expected),
            "{name}: {m}"
        );
    }
}
