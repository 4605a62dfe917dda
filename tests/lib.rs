//! Integration tests for sift live in `tests/`; conformance cases in
//! `cases/`; sample data in `data/`. Helpers to find what the build made.

use sift_host::cluster::Snapshot;
use sift_sdk::{Node, Pod};
use std::path::PathBuf;
use std::sync::Arc;

pub mod apiserver;

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

/// Plugin fixtures: hand-written core modules (WAT) implementing the
/// contract's canonical ABI, wrapped into components with wit-component.
pub mod fixtures {
    /// An older WASI patch release than the host's: semver-compatible.
    pub const FAKE_WASI_CLI: &str = "package wasi:cli@0.2.3;
interface environment { get-environment: func() -> list<tuple<string, string>>; }";

    pub const FAKE_WASI: &str = "package wasi:sockets@0.2.0;
    interface tcp-create-socket { create-tcp-socket: func(family: u8) -> u32; }";

    pub const FIXTURE_WIT: &str = "package sift:fixture;
    interface other { hello: func() -> u32; }
    world plugin { import sift:predicate/log@0.1.0; export sift:predicate/predicate@0.1.0; }
    world plugin-with-sockets { import wasi:sockets/tcp-create-socket@0.2.0; export sift:predicate/predicate@0.1.0; }
    world plugin-with-env { import wasi:cli/environment@0.2.3; export sift:predicate/predicate@0.1.0; }
world wrong { export other; }";

    /// A contract 0.1 plugin named `name`: version `'a'` passes every
    /// node, any other rejects the pod in prepare with "version-b" (for
    /// hot-load tests: a swap is visible in the next answer).
    pub fn flip_plugin(name: &str, version: char) -> Vec<u8> {
        let prepare = match version {
            'a' => "",
            _ => {
                "(i32.store8 (i32.const 96) (i32.const 2))
                 (i32.store8 (i32.const 100) (i32.const 2))
                 (i32.store (i32.const 104) (i32.const 200))
                 (i32.store (i32.const 108) (i32.const 1))
                 (i32.store (i32.const 200) (i32.const 160))
                 (i32.store (i32.const 204) (i32.const 9))
                 (return (i32.const 96))"
            }
        };
        let data = r#"(data (i32.const 160) "version-b")"#;
        componentize(&plugin_wat(name, data, "", prepare, ""), "plugin")
    }

    /// A core module implementing the contract. `prepare` and `filter` run the
    /// given instructions first, then answer "proceed" / "no rejections".
    pub fn plugin_wat(
        name: &str,
        imports: &str,
        init: &str,
        prepare: &str,
        filter: &str,
    ) -> String {
        format!(
            r#"(module
      {imports}
      (memory (export "memory") 1)
      (global $heap (mut i32) (i32.const 4096))
      (func (export "cabi_realloc") (param $old i32) (param $old_size i32) (param $align i32) (param $size i32) (result i32)
        (local $ptr i32)
        (local.set $ptr (i32.and (i32.add (global.get $heap) (i32.sub (local.get $align) (i32.const 1)))
                                 (i32.sub (i32.const 0) (local.get $align))))
        (global.set $heap (i32.add (local.get $ptr) (local.get $size)))
        (block $ok
          (br_if $ok (i32.le_u (global.get $heap) (i32.mul (memory.size) (i32.const 65536))))
          (drop (memory.grow (i32.add (i32.const 1)
            (i32.div_u (i32.sub (global.get $heap) (i32.mul (memory.size) (i32.const 65536))) (i32.const 65536))))))
        (local.get $ptr))
      (data (i32.const 16) "{name}")
      (data (i32.const 48) "bad args")
      (func (export "sift:predicate/predicate@0.1.0#describe") (result i32)
        (i32.store (i32.const 64) (i32.const 16))
        (i32.store (i32.const 68) (i32.const {len}))
        (i32.store8 (i32.const 72) (i32.const 0))
        (i32.const 64))
      (func (export "sift:predicate/predicate@0.1.0#init") (param i32 i32) (result i32)
        (i32.store8 (i32.const 80) (i32.const 0))
        {init}
        (i32.const 80))
      (func (export "sift:predicate/predicate@0.1.0#sync-nodes") (param i32 i32 i32 i32))
      (func (export "sift:predicate/predicate@0.1.0#prepare") (param i32) (result i32)
        {prepare}
        (i32.store8 (i32.const 96) (i32.const 0))
        (i32.const 96))
      (func (export "sift:predicate/predicate@0.1.0#filter") (param $slots i32) (param $len i32) (result i32)
        {filter}
        (i32.store (i32.const 112) (i32.const 0))
        (i32.store (i32.const 116) (i32.const 0))
        (i32.const 112))
    )"#,
            len = name.len()
        )
    }

    /// A fixture claiming contract `version` (e.g. "0.3.0"): the 0.1.0
    /// contract and fixture renamed, for sift to refuse.
    pub fn component_of_version(name: &str, version: &str) -> Vec<u8> {
        let wat = plugin_wat(name, "", "", "", "").replace("@0.1.0#", &format!("@{version}#"));
        let module = wat::parse_str(&wat).expect("fixture WAT parses");
        let contract =
            std::fs::read_to_string(crate::workspace_root().join("wit/0.1.0/predicate.wit"))
                .unwrap()
                .replace("sift:predicate@0.1.0", &format!("sift:predicate@{version}"));
        let fixture = format!(
            "package sift:fixture; world plugin {{ import sift:predicate/log@{version}; \
             export sift:predicate/predicate@{version}; }}"
        );
        let mut resolve = wit_parser::Resolve::default();
        resolve.push_str("predicate.wit", &contract).unwrap();
        let pkg = resolve.push_str("fixture.wit", &fixture).unwrap();
        let world = resolve.select_world(&[pkg], Some("plugin")).unwrap();
        crate::encode_component(module, &resolve, world).expect("fixture encodes as a component")
    }

    pub fn componentize(wat: &str, world: &str) -> Vec<u8> {
        let module = wat::parse_str(wat).expect("fixture WAT parses");
        let mut resolve = wit_parser::Resolve::default();
        let contract =
            std::fs::read_to_string(crate::workspace_root().join("wit/0.1.0/predicate.wit"))
                .unwrap();
        resolve.push_str("predicate.wit", &contract).unwrap();
        resolve.push_str("wasi.wit", FAKE_WASI).unwrap();
        resolve.push_str("wasi-cli.wit", FAKE_WASI_CLI).unwrap();
        let pkg = resolve.push_str("fixture.wit", FIXTURE_WIT).unwrap();
        let world = resolve.select_world(&[pkg], Some(world)).unwrap();
        crate::encode_component(module, &resolve, world).expect("fixture encodes as a component")
    }
}

/// A core module with the component type of `world` embedded, encoded as a
/// component.
fn encode_component(
    mut module: Vec<u8>,
    resolve: &wit_parser::Resolve,
    world: wit_parser::WorldId,
) -> Result<Vec<u8>, String> {
    wit_component::embed_component_metadata(
        &mut module,
        resolve,
        world,
        wit_component::StringEncoding::UTF8,
        false,
    )
    .map_err(|e| format!("{e:#}"))?;
    wit_component::ComponentEncoder::default()
        .module(&module)
        .map_err(|e| format!("{e:#}"))?
        .validate(true)
        .encode()
        .map_err(|e| format!("{e:#}"))
}

/// Runs the `sift` binary from the workspace root with the bundled plugins
/// and a compile cache of its own (`cache` names it).
pub fn run_sift(args: &[&str], cache: &str) -> std::process::Output {
    std::process::Command::new(sift_bin())
        .args(args)
        .env("SIFT_PLUGINS_DIR", plugins_dir())
        .env("SIFT_CACHE_DIR", temp_dir(cache))
        .current_dir(workspace_root())
        .output()
        .expect("run sift")
}

/// An HTTP client for sift's endpoints: a status code is an answer to
/// check, not an error.
pub fn http_agent(timeout: std::time::Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(timeout))
        .build()
        .into()
}

/// GET `url`: the status code and the body.
pub fn http_get(agent: &ureq::Agent, url: &str) -> (u16, String) {
    let mut r = agent
        .get(url)
        .call()
        .unwrap_or_else(|e| panic!("GET {url}: {e}"));
    (
        r.status().as_u16(),
        r.body_mut().read_to_string().unwrap_or_default(),
    )
}

/// Spawns `command` (a `sift serve` or `sift schedule`) with its log
/// (stderr) in `log`, and waits for its "listening on ADDR" line: the
/// child and ADDR. Any other first line kills it and fails the test with
/// the log.
pub fn spawn_listening(
    command: &mut std::process::Command,
    log: &std::path::Path,
) -> (std::process::Child, String) {
    use std::process::Stdio;
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::from(std::fs::File::create(log).expect("log file")))
        .spawn()
        .expect("sift starts");
    match served_address(&mut child) {
        Ok(addr) => (child, addr),
        Err(line) => {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "unexpected first line {line:?}; log:\n{}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
    }
}

/// The first line a spawned `sift serve` prints ("listening on ADDR"), read
/// from its piped stdout: `Ok(ADDR)`, or `Err(the line)`.
pub fn served_address(child: &mut std::process::Child) -> Result<String, String> {
    use std::io::BufRead;
    let mut line = String::new();
    let stdout = child.stdout.take().expect("sift serve's stdout is piped");
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .map_err(|e| format!("reading sift serve's stdout: {e}"))?;
    match line.trim().strip_prefix("listening on ") {
        Some(addr) => Ok(addr.to_string()),
        None => Err(line),
    }
}
