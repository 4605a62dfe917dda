//! What writing a plugin relies on: the SDK's smallest filter filters,
//! end to end (`tests/plugins/minimal-filter` through `sift filter`).

use std::process::Command;

/// A filter that implements `filter` and nothing else rejects the nodes
/// it should: the SDK's default `prepare` proceeds (it used to skip, which
/// left such a filter passing every node without a word).
#[test]
fn a_filter_implementing_only_filter_rejects_nodes() {
    let plugin = sift_tests::workspace_root()
        .join("target/test-plugins/sift_test_plugin_minimal_filter.wasm");
    assert!(
        plugin.is_file(),
        "no test plugin at {}: run `bash scripts/build-plugins.sh` first",
        plugin.display()
    );
    let dir = sift_tests::temp_dir("minimal-filter");
    let node = |name: &str, labels: serde_json::Value| {
        serde_json::json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
        })
    };
    let cluster = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [
        node("node-a", serde_json::json!({})),
        node("node-b", serde_json::json!({"spot": "true"})),
    ]});
    let pod = serde_json::json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"containers": [{"name": "web", "image": "web:1"}]}
    });
    let write = |file: &str, v: &serde_json::Value| {
        let path = dir.join(file);
        std::fs::write(&path, v.to_string()).unwrap();
        path
    };
    let (cluster, pod) = (write("cluster.json", &cluster), write("pod.json", &pod));
    let o = Command::new(sift_tests::sift_bin())
        .arg("filter")
        .arg("--cluster")
        .arg(&cluster)
        .arg("--pod")
        .arg(&pod)
        .args(["-o", "json", "--plugin"])
        .arg(&plugin)
        .env("SIFT_PLUGINS_DIR", sift_tests::plugins_dir())
        .env("SIFT_CACHE_DIR", dir.join("cache"))
        .env_remove("SIFT_LOG")
        .output()
        .expect("run sift");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(
        out[0]["feasibleNodes"],
        serde_json::json!(["node-a"]),
        "{out}"
    );
    assert_eq!(
        out[0]["statuses"]["node-b"],
        serde_json::json!({
            "code": "UnschedulableAndUnresolvable",
            "plugin": "MinimalFilter",
            "reasons": ["node(s) were spot instances"]
        }),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
