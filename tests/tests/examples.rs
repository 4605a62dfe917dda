//! Every example plugin (plugins/examples/, built into target/examples/ by
//! scripts/build-examples.sh) passes the GpuModel cases, as the Rust
//! reference does: the same predicate in each language.

use sift_host::config::Config;
use sift_host::conformance::{collect_case_files, run_case};
use sift_host::registry::Catalog;
use sift_host::runtime::{Grants, Limits, Runtime};
use std::path::PathBuf;
use std::sync::Arc;

/// The examples CI builds; each must be there.
const EXAMPLES: [&str; 3] = [
    "gpu_model_c.wasm",
    "gpu_model_python.wasm",
    "gpu_model_wat.wasm",
];

fn examples_dir() -> PathBuf {
    sift_tests::workspace_root().join("target/examples")
}

#[test]
fn every_example_passes_the_gpu_model_cases() {
    let cases =
        collect_case_files(&[sift_tests::workspace_root().join("tests/cases/GpuModel")]).unwrap();
    assert!(cases.len() >= 15, "{} GpuModel cases", cases.len());
    let runtime = Arc::new(Runtime::new(Limits::default(), Grants::default(), None).unwrap());
    for example in EXAMPLES {
        let file = examples_dir().join(example);
        assert!(
            file.is_file(),
            "{} missing: run `bash scripts/build-examples.sh` (scripts/test.sh does)",
            file.display()
        );
        // The bundled plugins, with GpuModel replaced by the example.
        let catalog = Catalog::load_wasm(
            &runtime,
            Some(&sift_tests::plugins_dir()),
            std::slice::from_ref(&file),
            &Config::default(),
        )
        .unwrap_or_else(|e| panic!("{example}: {e:#}"));
        let version = catalog.get("GpuModel").map(|p| p.version().to_string());
        let failures: Vec<String> = cases
            .iter()
            .map(|c| run_case(c, &catalog))
            .filter(|r| !r.differences.is_empty())
            .map(|r| format!("{}: {}", r.file.display(), r.differences.join("; ")))
            .collect();
        assert!(
            failures.is_empty(),
            "{example} ({version:?}) failed {} of {}:\n{}",
            failures.len(),
            cases.len(),
            failures.join("\n")
        );
    }
}
