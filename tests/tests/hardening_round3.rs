//! Defects the third adversarial review found (issue 29) in plugin
//! directories, reserve plugins, extenders, configuration, input files and
//! `sift trace`, each reproduced end to end through the command line.
//! (The watch's are in watch.rs and serve.rs; simulation memory and
//! workload checks in simulate.rs.)

use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output, Stdio};

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

fn pod(name: &str, cpu: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "app:1",
                                    "resources": {"requests": {"cpu": cpu}}}]},
           "status": {"phase": "Pending"}})
}

fn list(items: Vec<Value>) -> Value {
    json!({"apiVersion": "v1", "kind": "List", "items": items})
}

/// §8: a non-Wasm file in the plugins directory was read whole before its
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
    let p = write_json(&dir, "p.json", &pod("p", "1"));
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

/// §6, §11: a reserve plugin's annotations were taken as given: 80,000 of
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
        let mut p = pod(name, "100m");
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
