//! Every conformance case file, through the Wasm plugins and through the
//! same predicates compiled natively: both must pass, so the components and
//! the native baseline agree.

use sift_host::config::{Config, DEFAULT_FILTERS};
use sift_host::config::{Grants, Limits};
use sift_host::conformance::{collect_case_files, run_case};
use sift_host::plugins::registry::Catalog;
use sift_host::runtime::Runtime;
use std::sync::Arc;

fn run_all(catalog: &Catalog) -> (usize, Vec<String>) {
    let files = collect_case_files(&[sift_tests::workspace_root().join("tests/cases")]).unwrap();
    let failures: Vec<String> = files
        .iter()
        .map(|f| run_case(f, catalog))
        .filter(|r| !r.differences.is_empty())
        .map(|r| format!("{}: {}", r.file.display(), r.differences.join("; ")))
        .collect();
    (files.len(), failures)
}

#[test]
fn at_least_fifteen_cases_per_default_plugin() {
    let root = sift_tests::workspace_root().join("tests/cases");
    for plugin in DEFAULT_FILTERS {
        let n = collect_case_files(&[root.join(plugin)]).unwrap().len();
        assert!(n >= 15, "{plugin} has {n} cases");
    }
    assert!(collect_case_files(&[root.join("engine")]).unwrap().len() >= 10);
}

#[test]
fn wasm_plugins_pass_every_case() {
    let config = Config::default();
    let runtime = Arc::new(Runtime::new(Limits::default(), Grants::default(), None).unwrap());
    let catalog =
        Catalog::load_wasm(&runtime, Some(&sift_tests::plugins_dir()), &[], &config).unwrap();
    let (total, failures) = run_all(&catalog);
    assert!(total >= 100, "only {total} cases found");
    assert!(
        failures.is_empty(),
        "{} of {total} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn native_predicates_pass_every_case() {
    let catalog = Catalog::native(&Config::default()).unwrap();
    let (total, failures) = run_all(&catalog);
    assert!(
        failures.is_empty(),
        "{} of {total} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn a_wrong_expectation_is_reported() {
    let dir = sift_tests::temp_dir("wrong-expectation");
    let case = r#"{"name": "wrong", "filters": ["NodeName"],
        "nodes": [{"kind": "Node", "metadata": {"name": "a"}}, {"kind": "Node", "metadata": {"name": "b"}}],
        "pod": {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"nodeName": "a", "containers": []}},
        "expect": {"feasible": ["b"], "statuses": {"b": {"code": "Unschedulable", "plugin": "NodeName"}},
                   "message": "nope"}}"#;
    let file = dir.join("case.json");
    std::fs::write(&file, case).unwrap();
    let r = run_case(&file, &Catalog::native(&Config::default()).unwrap());
    let all = r.differences.join("\n");
    assert!(all.contains("feasible: expected"), "{all}");
    assert!(
        all.contains("b: code expected Unschedulable, got UnschedulableAndUnresolvable"),
        "{all}"
    );
    assert!(
        r.differences.iter().all(|d| !d.contains("plugin expected")),
        "{all}"
    );
}
