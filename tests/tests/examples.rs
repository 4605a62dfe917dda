//! Every example plugin (plugins/examples/, built into target/examples/ by
//! scripts/build-examples.sh) passes the GpuModel cases, as the Rust
//! reference does: the same predicate in each language.

use sift_host::config::Config;
use sift_host::config::{Grants, Limits};
use sift_host::conformance::{collect_case_files, run_case};
use sift_host::plugins::registry::Catalog;
use sift_host::runtime::Runtime;
use std::path::PathBuf;
use std::sync::Arc;

/// The GpuModel examples CI builds; each must be there.
const EXAMPLES: [&str; 5] = [
    "gpu_model_c.wasm",
    "gpu_model_go.wasm",
    "gpu_model_js.wasm",
    "gpu_model_python.wasm",
    "gpu_model_wat.wasm",
];

/// The LabelMatch examples (the scorer), likewise.
const SCORERS: [&str; 4] = [
    "label_match_c.wasm",
    "label_match_go.wasm",
    "label_match_js.wasm",
    "label_match_python.wasm",
];

/// The examples built on the languages' SDKs, which target the latest
/// contract; the WAT example stays on 0.1 and proves an old component runs
/// beside them.
const ON_LATEST: [&str; 8] = [
    "gpu_model_c.wasm",
    "gpu_model_go.wasm",
    "gpu_model_js.wasm",
    "gpu_model_python.wasm",
    "label_match_c.wasm",
    "label_match_go.wasm",
    "label_match_js.wasm",
    "label_match_python.wasm",
];

fn examples_dir() -> PathBuf {
    sift_tests::workspace_root().join("target/examples")
}

/// Runs the cases under `cases` with the bundled plugins, `plugin`
/// replaced by the example component `example`; returns the contract
/// version the example implements.
fn passes_cases(example: &str, plugin: &str, cases: &str, min_cases: usize) -> String {
    let file = examples_dir().join(example);
    let cases = sift_tests::workspace_root().join(cases);
    passes_cases_at(&file, plugin, &cases, min_cases)
}

/// As [`passes_cases`], for a component and cases anywhere.
fn passes_cases_at(
    file: &std::path::Path,
    plugin: &str,
    cases: &std::path::Path,
    min_cases: usize,
) -> String {
    let example = file.file_name().unwrap().to_string_lossy();
    let cases = collect_case_files(&[cases.to_path_buf()]).unwrap();
    assert!(cases.len() >= min_cases, "{} {plugin} cases", cases.len());
    let runtime = Arc::new(Runtime::new(Limits::default(), Grants::default(), None).unwrap());
    let file = file.to_path_buf();
    assert!(
        file.is_file(),
        "{} missing: run `bash scripts/build-examples.sh` (scripts/test.sh does)",
        file.display()
    );
    // The bundled plugins, with `plugin` replaced by the example.
    let catalog = Catalog::load_wasm(
        &runtime,
        Some(&sift_tests::plugins_dir()),
        std::slice::from_ref(&file),
        &Config::default(),
    )
    .unwrap_or_else(|e| panic!("{example}: {e:#}"));
    // The cases below must run the example, not the bundled plugin.
    assert_eq!(catalog.extra_names(), [plugin], "{example}");
    let loaded = catalog
        .wasm_plugins()
        .iter()
        .find(|p| p.identity().name == plugin)
        .unwrap();
    assert_eq!(loaded.identity().path, file, "{example}");
    let version = loaded.identity().contract.as_str().to_string();
    let failures: Vec<String> = cases
        .iter()
        .map(|c| run_case(c, &catalog))
        .filter(|r| !r.differences.is_empty())
        .map(|r| format!("{}: {}", r.file.display(), r.differences.join("; ")))
        .collect();
    assert!(
        failures.is_empty(),
        "{example} ({version}) failed {} of {}:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    version
}

#[test]
fn every_example_passes_the_gpu_model_cases() {
    for example in EXAMPLES {
        let version = passes_cases(example, "GpuModel", "tests/cases/GpuModel", 15);
        check_contract(example, &version);
    }
}

#[test]
fn every_example_scorer_passes_the_label_match_cases() {
    for example in SCORERS {
        let version = passes_cases(example, "LabelMatch", "tests/cases/Simulate/LabelMatch", 8);
        check_contract(example, &version);
    }
}

/// The Python, JavaScript, Go and C SDKs keep their promises (statuses
/// shared, exceptions and panics as Error statuses naming the method,
/// reject, narrow, nominated pods, reserve's annotations seen by later
/// filters): the probe in tests/plugins/sdk-probe, built here with each
/// SDK's build script, passes the cases beside it. Go runs all but the
/// one about a filter answer that is not a status, which Go's types rule
/// out; C also not those about exceptions, which C has not.
#[test]
fn the_sdks_pass_the_probe_cases() {
    let root = sift_tests::workspace_root();
    let probe = root.join("tests/plugins/sdk-probe");
    let out = sift_tests::temp_dir("sdk-probe");
    let wit = root
        .join("wit")
        .join(sift_host::contract::Version::LATEST.as_str());
    let builds = [
        (
            "plugin-sdk/python/build.sh",
            probe.join("python"),
            out.join("sdk_probe_python.wasm"),
        ),
        (
            "plugin-sdk/js/build.sh",
            probe.join("js/probe.js"),
            out.join("sdk_probe_js.wasm"),
        ),
        (
            "plugin-sdk/go/component.sh",
            probe.join("go"),
            out.join("sdk_probe_go.wasm"),
        ),
        (
            "tests/plugins/sdk-probe/c/build.sh",
            PathBuf::new(),
            out.join("sdk_probe_c.wasm"),
        ),
    ];
    // The cases a language can express, copied into a directory of its own.
    let cases_but = |lang: &str, left_out: &[&str]| {
        let dir = out.join(format!("{lang}-cases"));
        std::fs::create_dir_all(&dir).unwrap();
        for case in std::fs::read_dir(probe.join("cases")).unwrap() {
            let case = case.unwrap().path();
            let name = case.file_name().unwrap().to_string_lossy().into_owned();
            if !left_out.iter().any(|n| name.starts_with(n)) {
                std::fs::copy(&case, dir.join(name)).unwrap();
            }
        }
        (dir, 8 - left_out.len())
    };
    for (script, source, component) in builds {
        let mut build = std::process::Command::new("bash");
        build.arg(root.join(script));
        let cases = if script.contains("/go/") {
            // Go's toolchain and caches: those the Go examples use.
            build
                .arg(&source)
                .arg(&component)
                .env("SIFT", sift_tests::sift_bin())
                .env("GO_BUILD_DIR", examples_dir().join("go"));
            cases_but("go", &["008-"])
        } else if script.ends_with("c/build.sh") {
            build.arg(&component).env("SIFT", sift_tests::sift_bin());
            cases_but("c", &["002-", "005-", "008-"])
        } else {
            build.arg(&source).arg(&wit).arg(&component);
            (probe.join("cases"), 8)
        };
        if script.contains("python") {
            // The examples' virtualenv, which scripts/build-examples.sh made.
            build.arg(examples_dir().join("python-venv"));
        }
        let o = build.output().unwrap();
        assert!(
            o.status.success(),
            "{script}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let version = passes_cases_at(&component, "SdkProbe", &cases.0, cases.1);
        assert_eq!(version, sift_host::contract::Version::LATEST.as_str());
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// The SDK examples implement the latest contract; the WAT one 0.1.
fn check_contract(example: &str, version: &str) {
    let latest = sift_host::contract::Version::LATEST.as_str();
    if ON_LATEST.contains(&example) {
        assert_eq!(version, latest, "{example}");
    } else if example == "gpu_model_wat.wasm" {
        assert_eq!(version, "0.1.0", "{example}");
    }
}

/// A GPU cluster as `kubectl get -o json` prints it: nodes of four GPU
/// models, GPU nodes without a model label, nodes without GPUs, and pending pods that accept some models, any model,
/// or ask for no GPU.
fn gpu_cluster() -> serde_json::Value {
    let models = ["", "V100M16", "T4", "P100", "A10"];
    let nodes: Vec<serde_json::Value> = (0..40)
        .map(|i| {
            let model = models[i % models.len()];
            let mut labels =
                serde_json::json!({ "kubernetes.io/hostname": format!("node-{i:02}") });
            let mut allocatable =
                serde_json::json!({ "cpu": "32", "memory": "128Gi", "pods": "110" });
            if !model.is_empty() {
                labels["alibabacloud.com/gpu-card-model"] = model.into();
            }
            // Some nodes without a model label still offer GPU resources.
            if !model.is_empty() || i % 2 == 1 {
                allocatable["alibabacloud.com/gpu-milli"] = "8000".into();
            }
            serde_json::json!({
                "apiVersion": "v1", "kind": "Node",
                "metadata": { "name": format!("node-{i:02}"), "labels": labels,
                              "uid": format!("uid-{i}"), "resourceVersion": "1" },
                "spec": { "podCIDR": "10.0.0.0/24" },
                "status": { "capacity": allocatable.clone(), "allocatable": allocatable,
                            "conditions": [{ "type": "Ready", "status": "True" }] }
            })
        })
        .collect();
    let pod = |name: &str, gpu: Option<&str>, accepted: Option<&str>| {
        let mut requests = serde_json::json!({ "cpu": "2", "memory": "4Gi" });
        if let Some(milli) = gpu {
            requests["alibabacloud.com/gpu-milli"] = milli.into();
        }
        let mut labels = serde_json::json!({ "app": name });
        if let Some(models) = accepted {
            labels["sift.io/gpu-models"] = models.into();
        }
        serde_json::json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": { "name": name, "namespace": "ml", "labels": labels },
            "spec": { "schedulerName": "default-scheduler",
                      "containers": [{ "name": "main", "image": "trainer:1",
                                       "resources": { "requests": requests } }] },
            "status": { "phase": "Pending" }
        })
    };
    let pods = vec![
        pod("v100-or-t4", Some("1000"), Some("V100M16.T4")),
        pod("a10-only", Some("500"), Some("A10")),
        pod("any-gpu", Some("8000"), None),
        pod("unknown-model", Some("1000"), Some("H100")),
        pod("too-much-gpu", Some("9000"), Some("P100")),
        pod("cpu-only", None, Some("T4")),
    ];
    serde_json::json!({
        "apiVersion": "v1", "kind": "List",
        "items": nodes.into_iter().chain(pods).collect::<Vec<_>>()
    })
}

/// `sift filter -o json` over the GPU cluster with the bundled plugins,
/// GpuModel taken from `gpu_model` (a component file).
fn filter_with(
    gpu_model: &std::path::Path,
    dir: &std::path::Path,
    cluster: &std::path::Path,
) -> serde_json::Value {
    let plugins = dir.join(format!(
        "plugins-{}",
        gpu_model.file_stem().unwrap().to_string_lossy()
    ));
    std::fs::create_dir_all(&plugins).unwrap();
    for entry in std::fs::read_dir(sift_tests::plugins_dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name.ends_with(".wasm") && name != "sift_plugin_gpu_model.wasm" {
            std::fs::copy(&path, plugins.join(&name)).unwrap();
        }
    }
    std::fs::copy(gpu_model, plugins.join(gpu_model.file_name().unwrap())).unwrap();
    let config = dir.join("sift.yaml");
    std::fs::write(
        &config,
        "plugins:\n  filter:\n    enabled: [{name: GpuModel}]\n",
    )
    .unwrap();
    let out = std::process::Command::new(sift_tests::sift_bin())
        .arg("filter")
        .arg("--cluster")
        .arg(cluster)
        .arg("--config")
        .arg(&config)
        .arg("--plugins")
        .arg(&plugins)
        .args(["-o", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "sift filter with {}: {}",
        gpu_model.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "sift filter with {}: output not JSON: {e}",
            gpu_model.display()
        )
    })
}

#[test]
fn every_example_filters_a_gpu_cluster_as_the_reference_does() {
    let dir = sift_tests::temp_dir("examples-filter");
    let cluster = dir.join("cluster.json");
    std::fs::write(&cluster, serde_json::to_vec_pretty(&gpu_cluster()).unwrap()).unwrap();
    let reference = filter_with(
        &sift_tests::plugins_dir().join("sift_plugin_gpu_model.wasm"),
        &dir,
        &cluster,
    );
    // The reference's answer exercises both GpuModel rejections and both
    // outcomes, or the comparison below would prove little.
    let text = reference.to_string();
    for expected in [
        "node(s) had no GPU",
        "node(s) didn't have an accepted GPU model",
        "Insufficient alibabacloud.com/gpu-milli",
    ] {
        assert!(
            text.contains(expected),
            "reference output lacks {expected:?}: {text}"
        );
    }
    let feasible: Vec<usize> = reference
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["feasibleNodes"].as_array().map_or(0, Vec::len))
        .collect();
    assert_eq!(feasible.len(), 6, "one result per pod: {text}");
    assert!(
        feasible.contains(&0) && feasible.iter().any(|&n| n > 0),
        "{feasible:?}"
    );
    for example in EXAMPLES {
        let got = filter_with(&examples_dir().join(example), &dir, &cluster);
        assert_eq!(
            got, reference,
            "{example} filters differently from the Rust reference"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
