//! The escape hatch: a contract 0.2 plugin that asks for whole objects
//! reads fields the contract does not model (`tests/plugins/runtime-class`:
//! the pod's `spec.runtimeClassName`, the node's
//! `status.nodeInfo.containerRuntimeVersion`), through `sift conformance`
//! and `sift filter`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn probe_dir() -> PathBuf {
    let file = sift_tests::workspace_root()
        .join("target/test-plugins/sift_test_plugin_runtime_class.wasm");
    assert!(
        file.is_file(),
        "no test plugin at {}: run `bash scripts/build-plugins.sh` first",
        file.display()
    );
    // Beside the bundled plugins, which `sift filter` enables by default.
    let dir = sift_tests::temp_dir("escape-hatch-plugins");
    for entry in std::fs::read_dir(sift_tests::plugins_dir()).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
    }
    std::fs::copy(&file, dir.join("runtime_class.wasm")).unwrap();
    dir
}

fn sift(plugins: &Path, args: &[&str]) -> (bool, String, String) {
    let o = Command::new(sift_tests::sift_bin())
        .args(args)
        .arg("--plugins")
        .arg(plugins)
        .env("SIFT_CACHE_DIR", sift_tests::temp_dir("escape-hatch-cache"))
        .output()
        .expect("run sift");
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn node(name: &str, runtime: &str) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                   "nodeInfo": {"containerRuntimeVersion": runtime, "kubeletVersion": "v1.35.0"}}
    })
}

fn pod(class: Option<&str>) -> serde_json::Value {
    let mut spec = serde_json::json!({"containers": [{"name": "c", "image": "pause"}]});
    if let Some(class) = class {
        spec["runtimeClassName"] = class.into();
    }
    serde_json::json!({"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"name": "p", "namespace": "default"}, "spec": spec})
}

#[test]
fn a_plugin_reads_unmodelled_pod_and_node_fields_from_whole_objects() {
    let plugins = probe_dir();
    let dir = sift_tests::temp_dir("escape-hatch-cases");
    let nodes = [
        node("node-a", "containerd://1.7.2"),
        node("node-b", "cri-o://1.30.0"),
    ];
    let cases = [
        (
            "gvisor",
            serde_json::json!({
                "name": "runtime class read from the pod object, runtime from the node object",
                "filters": ["RuntimeClassProbe"],
                "nodes": nodes, "pod": pod(Some("containerd")),
                "expect": {"feasible": ["node-a"], "statuses": {"node-b": {
                    "code": "Unschedulable", "plugin": "RuntimeClassProbe",
                    "reasons": ["node(s) run another container runtime"]}}}
            }),
        ),
        (
            "none",
            serde_json::json!({
                "name": "no runtime class: the plugin skips",
                "filters": ["RuntimeClassProbe"],
                "nodes": nodes, "pod": pod(None),
                "expect": {"feasible": ["node-a", "node-b"]}
            }),
        ),
    ];
    for (file, case) in &cases {
        std::fs::write(dir.join(format!("{file}.json")), case.to_string()).unwrap();
    }
    let (ok, out, err) = sift(&plugins, &["conformance", dir.to_str().unwrap()]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("2 passed, 0 failed"), "{out}");

    // `sift filter` on a dump: the same answer.
    let dump = serde_json::json!({"apiVersion": "v1", "kind": "List",
        "items": [nodes[0], nodes[1], pod(Some("cri-o"))]});
    let dump_file = dir.join("dump.json");
    std::fs::write(&dump_file, dump.to_string()).unwrap();
    let (ok, out, err) = sift(
        &plugins,
        &[
            "filter",
            "--cluster",
            dump_file.to_str().unwrap(),
            "--enable",
            "RuntimeClassProbe",
            "-o",
            "json",
        ],
    );
    assert!(ok, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v[0]["feasibleNodes"],
        serde_json::json!(["node-b"]),
        "{out}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
