//! Upstream's PodTopologySpread Filter tables (`tests/upstream/
//! PodTopologySpread`, generated from docs/upstream/pts-model) through
//! sift's input conversion, cluster view and the plugin's PreFilter and
//! Filter. The same case files join `tests/cases` once the plugin runs in
//! the engine (contract 0.2).

use serde_json::Value;
use sift_host::cluster::ClusterState;
use sift_host::input::{Objects, kube};
use sift_plugin_pod_topology_spread as pts;
use std::path::{Path, PathBuf};

fn case_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("upstream/PodTopologySpread");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

/// Per node: "Success" or "<code>: <reason>".
fn expected(case: &Value) -> Vec<(String, String)> {
    let expect = &case["expect"];
    case["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            let name = n["metadata"]["name"].as_str().unwrap().to_string();
            let verdict = match expect["statuses"].get(&name) {
                Some(s) => format!(
                    "{}: {}",
                    s["code"].as_str().unwrap(),
                    s["reasons"][0].as_str().unwrap()
                ),
                None => "Success".to_string(),
            };
            (name, verdict)
        })
        .collect()
}

#[test]
fn upstream_filter_tables() {
    let files = case_files();
    assert!(files.len() >= 25, "only {} cases", files.len());
    let mut failures = Vec::new();
    for file in &files {
        let case: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        let mut objects = Objects::default();
        for key in ["nodes", "pods"] {
            for (i, item) in case[key].as_array().unwrap().iter().enumerate() {
                objects
                    .add_json(file, &format!("{key}[{i}]"), item.clone(), None)
                    .unwrap();
            }
        }
        let snapshot = ClusterState::from_objects(&objects).unwrap().snapshot();
        let pod = kube::pod(&serde_json::from_value(case["pod"].clone()).unwrap()).unwrap();
        let state = pts::pre_filter(&pod, &*snapshot).unwrap();
        let got: Vec<(String, String)> = (0..snapshot.len() as u32)
            .map(|slot| {
                let node = snapshot.node(slot);
                let status = match &state {
                    Some(s) => pts::filter(s, node),
                    None => sift_sdk::Status::success(),
                };
                let verdict = if status.is_success() {
                    "Success".to_string()
                } else {
                    format!("{}: {}", status.code.as_str(), status.reasons()[0])
                };
                (node.name.clone(), verdict)
            })
            .collect();
        let want = expected(&case);
        if got != want {
            failures.push(format!("{}: got {got:?}, want {want:?}", file.display()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}
