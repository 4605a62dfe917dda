//! The sandbox: plugins that trap, loop, exhaust memory, export the wrong
//! interface, reject their arguments or call WASI they were not granted.
//! Each gives a clear Error naming the plugin, and the host carries on.
//!
//! Fixtures are hand-written core modules (WAT) implementing the contract's
//! canonical ABI, wrapped into components with wit-component.

use sift_host::config::EngineOptions;
use sift_host::config::{Config, PluginRef};
use sift_host::config::{Grants, Limits};
use sift_host::engine::Engine;
use sift_host::plugins::registry::Catalog;
use sift_host::runtime::Runtime;
use sift_tests::fixtures::{component_of_version, componentize, plugin_wat};
use sift_tests::{pod, snapshot};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn write(dir: &Path, file: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(file);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn runtime(limits: Limits) -> Arc<Runtime> {
    Arc::new(Runtime::new(limits, Grants::default(), None).unwrap())
}

/// Loads the one fixture in `dir` plus the bundled NodeName plugin, runs a
/// cycle, and returns the cycle's error.
fn cycle_error(rt: &Arc<Runtime>, fixture: &Path, name: &str) -> Option<String> {
    let catalog =
        Catalog::load_wasm(rt, None, &[fixture.to_path_buf()], &Config::default()).unwrap();
    let plugins = catalog
        .select(&[PluginRef {
            name: name.into(),
            ignorable: false,
        }])
        .unwrap();
    let mut engine = Engine::new(plugins, EngineOptions::default()).unwrap();
    engine.find_nodes_that_fit(&snapshot(3), pod()).error
}

#[test]
fn a_well_behaved_fixture_passes_every_node() {
    let dir = sift_tests::temp_dir("sandbox-ok");
    let f = write(
        &dir,
        "ok.wasm",
        &componentize(&plugin_wat("Fine", "", "", "", ""), "plugin"),
    );
    let rt = runtime(Limits::default());
    let catalog = Catalog::load_wasm(&rt, None, &[f], &Config::default()).unwrap();
    let plugins = catalog
        .select(&[PluginRef {
            name: "Fine".into(),
            ignorable: false,
        }])
        .unwrap();
    let mut engine = Engine::new(plugins, EngineOptions::default()).unwrap();
    let o = engine.find_nodes_that_fit(&snapshot(3), pod());
    assert_eq!(o.feasible.len(), 3, "{:?}", o.error);
}

#[test]
fn a_trap_is_an_error_naming_the_plugin_and_the_instance_is_replaced() {
    let dir = sift_tests::temp_dir("sandbox-trap");
    // filter traps when the batch contains slot 1.
    let filter = r#"
      (local $i i32)
      (block $done (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
        (if (i32.eq (i32.load (i32.add (local.get $slots) (i32.mul (local.get $i) (i32.const 4)))) (i32.const 1))
          (then unreachable))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))"#;
    let f = write(
        &dir,
        "trapper.wasm",
        &componentize(&plugin_wat("Trapper", "", "", "", filter), "plugin"),
    );
    let rt = runtime(Limits::default());
    let catalog = Catalog::load_wasm(&rt, None, &[f], &Config::default()).unwrap();
    let plugins = catalog
        .select(&[PluginRef {
            name: "Trapper".into(),
            ignorable: false,
        }])
        .unwrap();
    let mut engine = Engine::new(
        plugins,
        EngineOptions {
            parallelism: 1,
            ..Default::default()
        },
    )
    .unwrap();
    let one = snapshot(1);
    let two = snapshot(2);
    assert!(engine.find_nodes_that_fit(&one, pod()).error.is_none());
    let failed = engine.find_nodes_that_fit(&two, pod());
    let err = failed.error.clone().expect("slot 1 traps");
    assert!(err.contains("Trapper") && err.contains("trapped"), "{err}");
    // One line naming the trap; the wasm backtrace goes to the debug log
    // (issue 12 §3.4: it was 20 frames flattened into the message).
    assert!(err.contains("unreachable"), "{err}");
    assert!(!err.contains('\n') && !err.contains("backtrace"), "{err}");
    // A trap fails the whole batch call: its nodes get Error statuses.
    assert!(
        failed
            .statuses()
            .any(|(_, s)| s.code() == sift_sdk::Code::Error),
        "{:?}",
        failed.rejected
    );
    assert!(failed.feasible.is_empty());
    // The host carries on with a fresh instance.
    let again = engine.find_nodes_that_fit(&one, pod());
    assert!(again.error.is_none(), "{:?}", again.error);
    assert_eq!(again.feasible.len(), 1);
    assert_eq!(&**again.name(again.feasible[0]), "n0");
}

#[test]
fn an_endless_loop_misses_its_deadline() {
    let dir = sift_tests::temp_dir("sandbox-loop");
    let f = write(
        &dir,
        "loop.wasm",
        &componentize(
            &plugin_wat("Spinner", "", "", "(loop $l (br $l))", ""),
            "plugin",
        ),
    );
    let rt = runtime(Limits {
        call_deadline: Duration::from_millis(100),
        ..Limits::default()
    });
    let started = Instant::now();
    let err = cycle_error(&rt, &f, "Spinner").expect("the loop is interrupted");
    assert!(
        err.contains("Spinner") && err.contains("deadline of 100 ms"),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[test]
fn unbounded_memory_growth_hits_the_cap() {
    let dir = sift_tests::temp_dir("sandbox-memory");
    let grow = "(loop $l (br_if $l (i32.ne (memory.grow (i32.const 16)) (i32.const -1))))";
    let f = write(
        &dir,
        "hog.wasm",
        &componentize(&plugin_wat("Hog", "", "", grow, ""), "plugin"),
    );
    let rt = runtime(Limits {
        memory_bytes: 16 << 20,
        ..Limits::default()
    });
    let err = cycle_error(&rt, &f, "Hog").expect("memory is capped");
    assert!(
        err.contains("Hog") && err.contains("memory limit of 16 MiB"),
        "{err}"
    );
}

#[test]
fn an_ungranted_wasi_call_is_an_error() {
    let dir = sift_tests::temp_dir("sandbox-wasi");
    let imports = r#"(import "wasi:sockets/tcp-create-socket@0.2.0" "create-tcp-socket" (func $socket (param i32) (result i32)))"#;
    let prepare = "(drop (call $socket (i32.const 0)))";
    let f = write(
        &dir,
        "net.wasm",
        &componentize(
            &plugin_wat("Networker", imports, "", prepare, ""),
            "plugin-with-sockets",
        ),
    );
    let rt = runtime(Limits::default());
    let err = cycle_error(&rt, &f, "Networker").expect("the socket call is refused");
    assert!(err.contains("Networker"), "{err}");
    assert!(
        err.contains("does not grant") && err.contains("wasi:sockets/tcp-create-socket"),
        "{err}"
    );
}

#[test]
fn wasi_of_another_patch_release_is_linked_not_trapped() {
    // componentize-py and componentize-js import e.g. wasi:cli@0.2.9; the
    // host provides 0.2.12: semver-compatible, so the call must work while
    // the filesystem and sockets stay unlinked.
    let dir = sift_tests::temp_dir("sandbox-semver");
    let imports =
        r#"(import "wasi:cli/environment@0.2.3" "get-environment" (func $env (param i32)))"#;
    let prepare = "(call $env (i32.const 256))";
    let f = write(
        &dir,
        "env.wasm",
        &componentize(
            &plugin_wat("Older", imports, "", prepare, ""),
            "plugin-with-env",
        ),
    );
    let rt = runtime(Limits::default());
    assert_eq!(cycle_error(&rt, &f, "Older"), None);
}

#[test]
fn rejected_arguments_fail_the_load() {
    let dir = sift_tests::temp_dir("sandbox-args");
    // init returns err("bad args").
    let init = "(i32.store8 (i32.const 80) (i32.const 1)) (i32.store (i32.const 84) (i32.const 48)) (i32.store (i32.const 88) (i32.const 8))";
    let f = write(
        &dir,
        "picky.wasm",
        &componentize(&plugin_wat("Picky", "", init, "", ""), "plugin"),
    );
    let err = Catalog::load_wasm(&runtime(Limits::default()), None, &[f], &Config::default())
        .err()
        .unwrap();
    let msg = format!("{err:#}");
    assert!(
        msg.contains("picky.wasm") && msg.contains("Picky") && msg.contains("bad args"),
        "{msg}"
    );
}

#[test]
fn wrong_interface_core_module_and_garbage_are_load_errors() {
    let dir = sift_tests::temp_dir("sandbox-wrong");
    let other = r#"(module (func (export "sift:fixture/other#hello") (result i32) (i32.const 1)))"#;
    let wrong = write(&dir, "wrong.wasm", &componentize(other, "wrong"));
    let core = write(&dir, "core.wasm", &wat::parse_str("(module)").unwrap());
    let junk = write(&dir, "junk.wasm", b"definitely not wasm");
    let torn = write(&dir, "torn.wasm", b"\0asm\x0d\0\x01\0garbage");
    let rt = runtime(Limits::default());
    let cases = [
        (wrong, "does not implement sift's contract"),
        (core, "core WebAssembly module"),
        (
            junk,
            "is not a WebAssembly file (it starts with 64 65 66 69",
        ),
        (torn, "not a valid WebAssembly component"),
    ];
    for (file, expected) in cases {
        let err = Catalog::load_wasm(&rt, None, std::slice::from_ref(&file), &Config::default())
            .err()
            .unwrap();
        let msg = format!("{err:#}");
        assert!(
            msg.contains(file.file_name().unwrap().to_str().unwrap()) && msg.contains(expected),
            "{msg}"
        );
    }
}

#[test]
fn a_component_of_an_unknown_contract_version_is_refused_naming_the_supported_ones() {
    let dir = sift_tests::temp_dir("unknown-contract");
    let rt = runtime(Limits::default());
    // The minor after the newest this sift runs, and a major.
    let latest = sift_host::contract::SUPPORTED.last().unwrap();
    let (major, minor) = latest.rsplit_once('.').unwrap().0.split_once('.').unwrap();
    let next = format!("{major}.{}.0", minor.parse::<u32>().unwrap() + 1);
    for version in [next.as_str(), "1.0.0"] {
        let file = write(
            &dir,
            &format!("v{version}.wasm"),
            &component_of_version("Future", version),
        );
        let err = match sift_host::contract::WasmPlugin::load(&rt, &file, &|_| "{}".into()) {
            Ok(_) => panic!("a {version} component loaded"),
            Err(e) => format!("{e:#}"),
        };
        assert!(err.contains(&format!("contract {version}")), "{err}");
        assert!(
            err.contains(&sift_host::contract::SUPPORTED.join(", ")),
            "{err}"
        );
        assert!(err.contains("0.1.0, 0.2.0"), "{err}");
    }
    // The same fixture as 0.1.0 loads: the refusal is about the version.
    let file = write(
        &dir,
        "v0.1.0.wasm",
        &component_of_version("Current", "0.1.0"),
    );
    let plugin = sift_host::contract::WasmPlugin::load(&rt, &file, &|_| "{}".into()).unwrap();
    assert_eq!(plugin.identity().contract.as_str(), "0.1.0");
    std::fs::remove_dir_all(&dir).ok();
}
