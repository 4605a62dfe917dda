//! Fuzz targets (issue 12 §4) for what sift reads from outside: kubectl
//! JSON and YAML files, extender request bodies, `/cluster` watch events
//! and resource quantities. The property of each: no input makes sift
//! panic, and every rejection is an error message, never a crash.
//!
//! Inputs come three ways: arbitrary text, JSON shaped like Kubernetes
//! objects (their keys, kinds and quantity-like values), and byte-level
//! mutations of real inputs (the demo cluster, conformance cases).
//!
//! `cargo test` runs a few hundred cases per target; `scripts/fuzz.sh
//! SECONDS` runs each target for that long (SIFT_FUZZ_SECONDS) and prints
//! how many cases ran. A finding is kept as a regression test below.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Map, Value, json};
use sift_host::cluster::ClusterState;
use sift_host::input::Objects;
use sift_host::serve::{apply_cluster_events, parse_cluster_events, parse_filter_request};
use sift_sdk::Quantity;
use std::path::Path;
use std::time::{Duration, Instant};

/// Runs `check` on values of `strategy`: a few hundred in a normal test
/// run, or for SIFT_FUZZ_SECONDS seconds. `check` says whether the input
/// was accepted (so the report shows how deep the inputs reach).
fn fuzz<S: Strategy>(
    name: &str,
    strategy: S,
    check: impl Fn(S::Value) -> Result<bool, TestCaseError>,
) where
    S::Value: std::fmt::Debug,
{
    let budget = std::env::var("SIFT_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .map(Duration::from_secs);
    let started = Instant::now();
    let mut runner = TestRunner::new(Config {
        failure_persistence: None,
        ..Config::default()
    });
    let mut cases: u64 = 0;
    let mut accepted: u64 = 0;
    loop {
        let tree = strategy
            .new_tree(&mut runner)
            .expect("strategy makes a value");
        let value = tree.current();
        let shown = format!("{value:?}");
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(value)));
        match result {
            Ok(Ok(ok)) => accepted += u64::from(ok),
            Ok(Err(e)) => panic!("fuzz {name}: {e} for input {shown}"),
            Err(_) => panic!("fuzz {name}: panicked for input {shown}"),
        }
        cases += 1;
        let done = match budget {
            Some(b) => started.elapsed() >= b,
            None => cases >= 300,
        };
        if done {
            break;
        }
    }
    eprintln!(
        "fuzz {name}: {cases} cases ({accepted} accepted) in {:.1} s, no finding",
        started.elapsed().as_secs_f64()
    );
}

const KEYS: &[&str] = &[
    "kind",
    "apiVersion",
    "metadata",
    "name",
    "namespace",
    "uid",
    "labels",
    "annotations",
    "spec",
    "status",
    "containers",
    "initContainers",
    "resources",
    "requests",
    "limits",
    "cpu",
    "memory",
    "pods",
    "nvidia.com/gpu",
    "ephemeral-storage",
    "items",
    "nodeName",
    "allocatable",
    "capacity",
    "taints",
    "tolerations",
    "key",
    "value",
    "effect",
    "operator",
    "affinity",
    "nodeAffinity",
    "requiredDuringSchedulingIgnoredDuringExecution",
    "nodeSelectorTerms",
    "matchExpressions",
    "matchFields",
    "values",
    "ports",
    "hostPort",
    "containerPort",
    "protocol",
    "hostIP",
    "hostNetwork",
    "phase",
    "unschedulable",
    "overhead",
    "restartPolicy",
    "schedulerName",
    "schedulingGates",
    "deletionTimestamp",
    "nodeSelector",
    "type",
    "object",
    "Pod",
    "Nodes",
    "NodeNames",
];

const WORDS: &[&str] = &[
    "Node",
    "Pod",
    "List",
    "NodeList",
    "PodList",
    "v1",
    "ADDED",
    "MODIFIED",
    "DELETED",
    "BOOKMARK",
    "Running",
    "Succeeded",
    "Failed",
    "Pending",
    "NoSchedule",
    "NoExecute",
    "Exists",
    "Equal",
    "In",
    "NotIn",
    "Gt",
    "Lt",
    "TCP",
    "UDP",
    "Always",
    "default",
    "100m",
    "1.5Gi",
    "2e3",
    "-1",
    "1e40",
    "0.0000000001",
    "9999999999999999999999Ei",
    "",
    " ",
    "\u{0}",
    "\u{1b}[31m",
    "a\nb",
];

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => proptest::sample::select(KEYS).prop_map(str::to_string),
        1 => ".{0,12}",
    ]
}

fn quantity_text() -> impl Strategy<Value = String> {
    "[+-]?[0-9]{0,24}(\\.[0-9]{0,24})?([eE][+-]?[0-9]{1,3}|n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?"
}

fn string_value() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => proptest::sample::select(WORDS).prop_map(str::to_string),
        2 => quantity_text(),
        1 => ".{0,16}",
    ]
}

/// JSON shaped like Kubernetes objects.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        string_value().prop_map(Value::from),
    ];
    leaf.prop_recursive(6, 96, 8, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec((key(), inner), 0..8)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<String, Value>>())),
        ]
    })
}

/// A Node or Pod object with fuzzed contents.
fn object() -> impl Strategy<Value = Value> {
    (
        proptest::sample::select(&["Node", "Pod", "List", "NodeList", "PodList", "Service"][..]),
        json_value(),
        json_value(),
        json_value(),
    )
        .prop_map(|(kind, metadata, spec, status)| {
            json!({"apiVersion": "v1", "kind": kind, "metadata": metadata, "spec": spec,
                   "status": status, "items": [spec.clone()]})
        })
}

fn labels() -> impl Strategy<Value = Value> {
    proptest::collection::btree_map(key(), string_value(), 0..4).prop_map(|m| json!(m))
}

/// Mostly well-formed quantities (huge and tiny ones included), some not.
fn resource_quantity() -> impl Strategy<Value = String> {
    prop_oneof![
        14 => "[0-9]{1,7}(m|k|M|G|Ki|Mi|Gi|Ti|e3|e-2)?",
        1 => "[0-9]{15,22}(Ei|E|e40)",
        1 => quantity_text(),
    ]
}

fn resources() -> impl Strategy<Value = Value> {
    proptest::collection::btree_map(
        proptest::sample::select(
            &[
                "cpu",
                "memory",
                "pods",
                "nvidia.com/gpu",
                "ephemeral-storage",
                "hugepages-2Mi",
                "x",
            ][..],
        ),
        resource_quantity(),
        0..4,
    )
    .prop_map(|m| json!(m))
}

fn container() -> impl Strategy<Value = Value> {
    (resources(), resources(), proptest::collection::vec((any::<i32>(), any::<i32>(), string_value()), 0..3))
        .prop_map(|(requests, limits, ports)| {
            let ports: Vec<Value> = ports
                .into_iter()
                .map(|(c, h, p)| json!({"containerPort": c, "hostPort": h, "protocol": p}))
                .collect();
            json!({"name": "c", "resources": {"requests": requests, "limits": limits}, "ports": ports})
        })
}

fn k8s_node() -> impl Strategy<Value = Value> {
    (string_value(), labels(), resources(), resources(), any::<bool>(),
        proptest::collection::vec((string_value(), string_value(), string_value()), 0..3))
        .prop_map(|(name, labels, allocatable, capacity, unschedulable, taints)| {
            let taints: Vec<Value> = taints
                .into_iter()
                .map(|(k, v, e)| json!({"key": k, "value": v, "effect": e}))
                .collect();
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
                   "spec": {"unschedulable": unschedulable, "taints": taints},
                   "status": {"allocatable": allocatable, "capacity": capacity}})
        })
}

fn k8s_pod() -> impl Strategy<Value = Value> {
    (
        string_value(),
        proptest::option::of(string_value()),
        labels(),
        proptest::collection::vec(container(), 0..3),
        proptest::collection::vec(container(), 0..2),
        resources(),
        any::<bool>(),
        proptest::option::of(string_value()),
    )
        .prop_map(
            |(name, node_name, labels, containers, init, overhead, host_network, phase)| {
                json!({"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": name, "namespace": "default", "labels": labels},
                   "spec": {"nodeName": node_name, "containers": containers,
                            "initContainers": init, "overhead": overhead,
                            "hostNetwork": host_network, "nodeSelector": {"a": "b"}},
                   "status": {"phase": phase}})
            },
        )
}

/// A type-correct Node or Pod with fuzzed values, so conversion,
/// defaulting, quantities and snapshots are reached; sometimes one field
/// replaced by anything.
fn k8s_object() -> impl Strategy<Value = Value> {
    (
        prop_oneof![k8s_node(), k8s_pod()],
        proptest::option::weighted(0.2, (key(), json_value())),
    )
        .prop_map(|(mut object, replace)| {
            if let Some((k, v)) = replace {
                for part in ["metadata", "spec", "status"] {
                    if let Some(Value::Object(m)) = object.get_mut(part)
                        && m.contains_key(&k)
                    {
                        m.insert(k.clone(), v.clone());
                    }
                }
            }
            object
        })
}

/// Real inputs, as text.
fn seeds() -> Vec<String> {
    let root = sift_tests::workspace_root();
    let mut seeds = vec![
        std::fs::read_to_string(root.join("tests/data/demo/cluster.json")).unwrap(),
        std::fs::read_to_string(root.join("tests/data/demo/pods.yaml")).unwrap(),
    ];
    for case in [
        "tests/cases/NodeAffinity/002-nodeselector-same-labels.json",
        "tests/cases/NodeResourcesFit/002-too-many-resources-fails.json",
        "tests/cases/TaintToleration/002-toleration-matches-dedicated-user1.json",
        "tests/cases/NodePorts/002-other-port.json",
    ] {
        seeds.push(std::fs::read_to_string(root.join(case)).unwrap());
    }
    seeds
}

/// A seed with byte edits: replace, insert or delete, with bytes that
/// matter to JSON and YAML.
fn mutated(seeds: Vec<String>) -> impl Strategy<Value = String> {
    let n = seeds.len();
    let alphabet: &'static [u8] = b"{}[]\":,-. \n\t#|>&*!'0123456789eEmKiGa\\";
    (
        0..n,
        proptest::collection::vec(
            (any::<usize>(), 0u8..3, proptest::sample::select(alphabet)),
            1..12,
        ),
    )
        .prop_map(move |(i, edits)| {
            let mut bytes = seeds[i].clone().into_bytes();
            for (at, op, b) in edits {
                if bytes.is_empty() {
                    bytes.push(b);
                    continue;
                }
                let at = at % bytes.len();
                match op {
                    0 => bytes[at] = b,
                    1 => bytes.insert(at, b),
                    _ => {
                        bytes.remove(at);
                    }
                }
            }
            String::from_utf8_lossy(&bytes).into_owned()
        })
}

/// What `sift filter --cluster` does with a file's text; whether it was
/// read whole.
fn read_input(file: &str, text: &str) -> bool {
    let mut objects = Objects::default();
    if objects.read_text(Path::new(file), text).is_err() {
        return false;
    }
    // Building the snapshot converts every node and bound pod.
    let built = ClusterState::from_objects(&objects).is_ok();
    for (pod, _) in &objects.pods {
        let _ = sift_host::input::kube::pod(pod);
        let _ = sift_host::input::kube::not_for_scheduler(pod, "default-scheduler");
    }
    built
}

fn cluster_list() -> impl Strategy<Value = Value> {
    proptest::collection::vec(k8s_object(), 1..6)
        .prop_map(|items| json!({"apiVersion": "v1", "kind": "List", "items": items}))
}

#[test]
fn fuzz_input_reader_json() {
    let text = prop_oneof![
        3 => cluster_list().prop_map(|v| v.to_string()),
        1 => object().prop_map(|v| v.to_string()),
        2 => mutated(seeds()),
        1 => ".{0,64}",
    ];
    fuzz("input reader (JSON)", text, |t| {
        Ok(read_input("cluster.json", &t))
    });
}

#[test]
fn fuzz_input_reader_yaml() {
    let text = prop_oneof![
        3 => cluster_list().prop_map(|v| serde_yaml_to_string(&v)),
        1 => object().prop_map(|v| serde_yaml_to_string(&v)),
        2 => mutated(seeds()),
        1 => "[-:{}\\[\\]#|>&*!' a-z0-9\n]{0,96}",
    ];
    fuzz("input reader (YAML)", text, |t| {
        Ok(read_input("cluster.yaml", &t))
    });
}

/// Block-style YAML as kubectl prints it, sometimes as two documents.
fn serde_yaml_to_string(v: &Value) -> String {
    let text = serde_yaml_ng::to_string(v).unwrap_or_default();
    if text.len().is_multiple_of(3) {
        format!("{text}---\n{text}")
    } else {
        text
    }
}

#[test]
fn fuzz_extender_request_body() {
    let body = prop_oneof![
        3 => (k8s_pod(), proptest::collection::vec(k8s_node(), 0..4), proptest::collection::vec(string_value(), 0..4))
            .prop_map(|(pod, nodes, names)| {
                json!({"Pod": pod, "Nodes": {"items": nodes}, "NodeNames": names}).to_string()
            }),
        1 => (object(), proptest::collection::vec(string_value(), 0..4))
            .prop_map(|(pod, names)| json!({"Pod": pod, "Nodes": null, "NodeNames": names}).to_string()),
        1 => json_value().prop_map(|v| v.to_string()),
        1 => ".{0,64}",
    ];
    fuzz("extender request body", body, |b| {
        let Ok(request) = parse_filter_request(b.as_bytes()) else {
            return Ok(false);
        };
        if let sift_host::serve::RequestNodes::Objects(nodes) = request.nodes {
            // The request table takes unique names, as the server gives it.
            let mut seen = std::collections::HashSet::new();
            let unique = nodes
                .into_iter()
                .map(|(n, _)| n)
                .filter(|n| seen.insert(n.name.clone()))
                .collect();
            ClusterState::default().request_snapshot(unique);
        }
        Ok(true)
    });
}

#[test]
fn fuzz_cluster_events() {
    let event = || {
        (
            proptest::sample::select(&["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"][..]),
            prop_oneof![3 => k8s_object(), 1 => object()],
        )
            .prop_map(|(t, o)| json!({"type": t, "object": o}))
    };
    let body = prop_oneof![
        3 => proptest::collection::vec(event(), 1..6).prop_map(|e| Value::Array(e).to_string()),
        2 => proptest::collection::vec(event(), 1..6).prop_map(|e| {
            e.iter().map(Value::to_string).collect::<Vec<_>>().join("\n")
        }),
        1 => json_value().prop_map(|v| v.to_string()),
        1 => ".{0,64}",
    ];
    fuzz("/cluster events", body, |b| {
        let mut state = ClusterState::default();
        let Ok(events) = parse_cluster_events(b.as_bytes()) else {
            return Ok(false);
        };
        apply_cluster_events(&mut state, events);
        let snapshot = state.snapshot();
        prop_assert_eq!(snapshot.len(), state.node_count());
        Ok(true)
    });
}

#[test]
fn fuzz_quantities() {
    let text = prop_oneof![4 => quantity_text(), 1 => ".{0,24}"];
    fuzz("quantity parsing", text, |t| {
        let Ok(q) = Quantity::parse(&t) else {
            return Ok(false);
        };
        // Conversions round up and saturate; they never panic.
        let _ = (q.value(), q.milli_value(), q.saturating_add(q));
        Ok(true)
    });
    // Whole and milli numbers parse exactly.
    fuzz(
        "quantity values",
        (any::<i64>(), any::<i32>()),
        |(units, milli)| {
            prop_assert_eq!(Quantity::parse(&units.to_string()).unwrap().value(), units);
            let m = Quantity::parse(&format!("{milli}m")).unwrap();
            prop_assert_eq!(m.milli_value(), i64::from(milli));
            let ki = i64::from(milli);
            prop_assert_eq!(
                Quantity::parse(&format!("{ki}Ki")).unwrap().value(),
                ki * 1024
            );
            Ok(true)
        },
    );
}
