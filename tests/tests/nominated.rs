//! Pods nominated to nodes reach every kind of plugin, and cost only what
//! the first passes they cause need: the node table of a plugin instance is
//! never resynced because of a nomination.
//!
//! Verdicts are checked by the case files under `tests/cases/NominatedPods`
//! (Wasm 0.2 and native); here: the 0.1 path (a scratch slot) and the sync
//! counts.

use sift_host::cluster::ClusterState;
use sift_host::config::{EngineOptions, Grants, Limits};
use sift_host::contract::WasmPlugin;
use sift_host::engine::Engine;
use sift_host::engine::plugin::ConfiguredPlugin;
use sift_host::runtime::Runtime;
use sift_tests::fixtures::{componentize, plugin_wat};
use std::sync::Arc;

fn runtime() -> Arc<Runtime> {
    Arc::new(Runtime::new(Limits::default(), Grants::default(), None).unwrap())
}

fn k8s_pod(json: serde_json::Value) -> k8s_openapi::api::core::v1::Pod {
    serde_json::from_value(json).unwrap()
}

/// `nodes` nodes of 4 CPUs (`n0`...), and `nominated` pending pods of 3 CPUs
/// nominated to the first nodes, with priority 100.
fn cluster(nodes: usize, nominated: usize) -> ClusterState {
    let mut c = ClusterState::default();
    for i in 0..nodes {
        let mut n = sift_sdk::Node {
            name: format!("n{i}"),
            ..Default::default()
        };
        n.allocatable.milli_cpu = 4000;
        n.allocatable.allowed_pod_number = 110;
        c.upsert_node(n);
    }
    for i in 0..nominated {
        nominate(&mut c, i);
    }
    c
}

/// Nominates pod `victor-<i>` (3 CPUs, priority 100) to node `n<i>`.
fn nominate(c: &mut ClusterState, i: usize) {
    let changed = c
        .upsert_pod(&k8s_pod(serde_json::json!({
            "metadata": {"name": format!("victor-{i}"), "namespace": "default", "uid": format!("v{i}")},
            "spec": {"priority": 100, "containers": [
                {"name": "c", "resources": {"requests": {"cpu": "3"}}}]},
            "status": {"phase": "Pending", "nominatedNodeName": format!("n{i}")}
        })))
        .unwrap();
    assert!(changed);
}

fn incoming(priority: i32) -> sift_sdk::Pod {
    let mut pod = sift_tests::pod();
    pod.uid = "incoming".into();
    pod.priority = priority;
    pod.requests.milli_cpu = 2000;
    pod
}

fn engine(plugin: &Arc<WasmPlugin>) -> Engine {
    let plugins = vec![ConfiguredPlugin {
        plugin: plugin.clone(),
        ignorable: false,
    }];
    let options = EngineOptions {
        percentage_of_nodes_to_score: 100,
        parallelism: 1,
        ..EngineOptions::default()
    };
    Engine::new(plugins, options).unwrap()
}

#[test]
fn a_contract_0_1_plugin_sees_the_nominated_node_in_a_scratch_slot_and_only_that_node_is_resent() {
    // A 0.1 fixture reading resources that rejects any slot past the
    // table's two nodes: it rejects exactly the nodes checked through a
    // scratch slot.
    let filter = r#"
        (if (i32.ge_u (i32.load (local.get $slots)) (i32.const 2))
          (then
            (i32.store8 (i32.const 200) (i32.const 2))
            (i32.store (i32.const 204) (i32.const 220))
            (i32.store (i32.const 208) (i32.const 1))
            (i32.store (i32.const 220) (i32.const 240))
            (i32.store (i32.const 224) (i32.const 7))
            (i32.store (i32.const 260) (i32.const 0))
            (i32.store (i32.const 264) (i32.const 0))
            (i32.store (i32.const 112) (i32.const 200))
            (i32.store (i32.const 116) (i32.const 1))
            (i32.store (i32.const 120) (i32.const 260))
            (i32.store (i32.const 124) (i32.const 1))
            (return (i32.const 112))))
        (i32.store (i32.const 120) (i32.const 0))
        (i32.store (i32.const 124) (i32.const 0))"#;
    let wat = plugin_wat(
        "Scratch",
        r#"(data (i32.const 240) "scratch")"#,
        "",
        "",
        filter,
    )
    // describe: node-fields = resources
    .replace(
        "(i32.store8 (i32.const 72) (i32.const 0))",
        "(i32.store8 (i32.const 72) (i32.const 8))",
    );
    let dir = sift_tests::temp_dir("nominated-0-1");
    let file = dir.join("scratch.wasm");
    std::fs::write(&file, componentize(&wat, "plugin")).unwrap();
    let plugin = Arc::new(WasmPlugin::load(&runtime(), &file, &|_| "{}".into()).unwrap());
    assert_eq!(plugin.identity().contract.as_str(), "0.1.0");
    let mut engine = engine(&plugin);

    let mut state = cluster(2, 1);
    let snapshot = state.snapshot();
    let out = engine.find_nodes_that_fit(&snapshot, incoming(0));
    assert_eq!(
        out.feasible_nodes().map(|n| &**n).collect::<Vec<_>>(),
        ["n1"],
        "{out:?}"
    );
    assert_eq!(out.status("n0").unwrap().reasons(), ["scratch"]);
    // Two nodes synced once, plus the scratch copy of n0 and n0 again to
    // restore the table.
    assert_eq!(plugin.nodes_sent(), 4);

    // The same snapshot again: only the first pass's two records.
    engine.find_nodes_that_fit(&snapshot, incoming(0));
    assert_eq!(plugin.nodes_sent(), 6);
    // A pod of higher priority than the nominated one: no first pass.
    let out = engine.find_nodes_that_fit(&snapshot, incoming(1000));
    assert_eq!(out.feasible.len(), 2, "{out:?}");
    assert_eq!(plugin.nodes_sent(), 6);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn nominations_coming_and_going_resync_no_node_into_a_current_contract_plugin() {
    let file = sift_tests::plugins_dir().join("sift_plugin_node_resources_fit.wasm");
    let plugin = Arc::new(WasmPlugin::load(&runtime(), &file, &|_| "{}".into()).unwrap());
    assert_eq!(
        Some(&plugin.identity().contract.as_str()),
        sift_host::contract::SUPPORTED.last()
    );
    let mut engine = engine(&plugin);

    let mut state = cluster(500, 0);
    let out = engine.find_nodes_that_fit(&state.snapshot(), incoming(0));
    assert_eq!(out.feasible.len(), 500);
    let synced = plugin.nodes_sent();
    assert_eq!(synced, 500);

    // 50 nominations appear: a new snapshot, but no node changed.
    for i in 0..50 {
        nominate(&mut state, i);
    }
    assert_eq!(state.nominated_count(), 50);
    let out = engine.find_nodes_that_fit(&state.snapshot(), incoming(0));
    assert_eq!(out.feasible.len(), 450, "{:?}", out.message);
    assert_eq!(
        out.status("n0").unwrap().reasons(),
        ["Insufficient cpu"],
        "the first pass counts the nominated pod"
    );
    // They go one by one, a cycle after each.
    for i in 0..50 {
        assert!(state.remove_pod_key(&format!("default/victor-{i}")));
        let out = engine.find_nodes_that_fit(&state.snapshot(), incoming(0));
        assert_eq!(out.feasible.len(), 451 + i, "{:?}", out.message);
    }
    assert_eq!(plugin.nodes_sent(), synced, "nominations resent nodes");
}
