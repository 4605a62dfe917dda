//! Integration tests for sift live in `tests/`; conformance cases in
//! `cases/`; sample data in `data/`. Helpers to find what the build made.

use sift_host::snapshot::Snapshot;
use sift_sdk::{Node, Pod};
use std::path::PathBuf;
use std::sync::Arc;

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// The built plugin components (`scripts/build-plugins.sh`), or
/// `$SIFT_PLUGINS_DIR`.
pub fn plugins_dir() -> PathBuf {
    let dir = std::env::var_os("SIFT_PLUGINS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target").join("plugins"));
    assert!(
        dir.join("sift_plugin_node_name.wasm").is_file(),
        "no built plugins in {}: run `bash scripts/build-plugins.sh` first (scripts/test.sh does)",
        dir.display()
    );
    dir
}

/// The release `sift` binary, or `$SIFT_BIN`.
pub fn sift_bin() -> PathBuf {
    let bin = std::env::var_os("SIFT_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target").join("release").join("sift"));
    assert!(
        bin.is_file(),
        "no sift binary at {}: run `cargo build --release -p sift-host` first (scripts/test.sh does)",
        bin.display()
    );
    bin
}

/// A fresh temporary directory for one test.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sift-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// A snapshot of `n` bare nodes named `n0`, `n1`, ...
pub fn snapshot(n: usize) -> Arc<Snapshot> {
    let nodes = (0..n)
        .map(|i| Node {
            name: format!("n{i}"),
            ..Default::default()
        })
        .collect();
    Arc::new(Snapshot::from_nodes(nodes).expect("unique names"))
}

/// A pod with no requirements.
pub fn pod() -> Pod {
    Pod {
        name: "p".into(),
        namespace: "default".into(),
        ..Default::default()
    }
}
