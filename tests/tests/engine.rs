//! Engine semantics: sampling, round robin, early stop, short-circuiting,
//! Error versus rejection, the message format. Uses in-process predicates
//! so each behaviour is isolated from plugin logic.

use sift_host::config::EngineOptions;
use sift_host::engine::Engine;
use sift_host::engine::plugin::ConfiguredPlugin;
use sift_host::engine::sampling::num_feasible_nodes_to_find;
use sift_host::plugins::native::BuiltinPlugin;
use sift_sdk::native::NativePlugin;
use sift_sdk::{Args, ClusterView, Code, Node, Pod, Predicate, Prepare, Status};
use sift_tests::{pod, snapshot};
use std::sync::Arc;

/// Rejects nodes whose index (from the name "n<index>") is divisible by `every`.
struct RejectEvery {
    every: usize,
}

impl Predicate for RejectEvery {
    const NAME: &'static str = "RejectEvery";
    type PodState = ();
    fn new(args: Args) -> Result<Self, String> {
        let every = args
            .get_str("every")?
            .unwrap_or("2")
            .parse()
            .map_err(|_| "every: not a number")?;
        Ok(RejectEvery { every })
    }
    fn prepare(&self, _: &Pod, _cluster: &dyn ClusterView) -> Prepare<()> {
        Prepare::Proceed(())
    }
    fn filter(&self, _: &Pod, _: &(), node: &Node) -> Status {
        let i: usize = node.name[1..].parse().unwrap_or(0);
        if i.is_multiple_of(self.every) {
            Status::unschedulable(format!("divisible by {}", self.every))
        } else {
            Status::success()
        }
    }
}

/// Rejects every node, unresolvably.
struct RejectAll;

impl Predicate for RejectAll {
    const NAME: &'static str = "RejectAll";
    type PodState = ();
    fn new(_: Args) -> Result<Self, String> {
        Ok(RejectAll)
    }
    fn prepare(&self, _: &Pod, _cluster: &dyn ClusterView) -> Prepare<()> {
        Prepare::Proceed(())
    }
    fn filter(&self, _: &Pod, _: &(), _: &Node) -> Status {
        Status::unresolvable("rejected by RejectAll")
    }
}

/// Returns an Error status for node "n3" only.
struct FailsOnN3;

impl Predicate for FailsOnN3 {
    const NAME: &'static str = "FailsOnN3";
    type PodState = ();
    fn new(_: Args) -> Result<Self, String> {
        Ok(FailsOnN3)
    }
    fn prepare(&self, _: &Pod, _cluster: &dyn ClusterView) -> Prepare<()> {
        Prepare::Proceed(())
    }
    fn filter(&self, _: &Pod, _: &(), node: &Node) -> Status {
        if node.name == "n3" {
            Status::error("backend unavailable")
        } else {
            Status::success()
        }
    }
}

fn plugin<P: Predicate>(args: &str, ignorable: bool) -> ConfiguredPlugin {
    ConfiguredPlugin {
        plugin: Arc::new(BuiltinPlugin::new(&NativePlugin::of::<P>(), args).unwrap()),
        ignorable,
    }
}

fn engine(
    plugins: Vec<ConfiguredPlugin>,
    percentage: u32,
    parallelism: usize,
    all: bool,
) -> Engine {
    Engine::new(
        plugins,
        EngineOptions {
            percentage_of_nodes_to_score: percentage,
            parallelism,
            always_check_all_predicates: all,
            ..EngineOptions::default()
        },
    )
    .unwrap()
}

#[test]
fn sampling_counts_match_kube_scheduler() {
    // n < 100: all; adaptive max(5, 50 - n/125)%; at least 100.
    assert_eq!(num_feasible_nodes_to_find(0, 50), 50);
    assert_eq!(num_feasible_nodes_to_find(0, 100), 100); // 49% of 100 = 49 -> floor 100
    assert_eq!(num_feasible_nodes_to_find(0, 1000), 420); // 42%
    assert_eq!(num_feasible_nodes_to_find(0, 5000), 500); // 10%
    assert_eq!(num_feasible_nodes_to_find(0, 20000), 1000); // floor 5%
    assert_eq!(num_feasible_nodes_to_find(30, 1000), 300);
    assert_eq!(num_feasible_nodes_to_find(100, 5000), 5000);
    assert_eq!(num_feasible_nodes_to_find(1, 5000), 100);
}

#[test]
fn early_stop_evaluates_only_what_is_needed() {
    // Every node feasible: a 1000-node cycle stops at 420 feasible nodes.
    let snap = snapshot(1000);
    for parallelism in [1, 4, 16] {
        let mut e = engine(
            vec![plugin::<RejectEvery>(r#"{"every":"1000000"}"#, false)],
            0,
            parallelism,
            false,
        );
        let o = e.find_nodes_that_fit(&snap, pod());
        // n0 is rejected (0 is divisible by anything); n1..n420 are the 420
        // feasible nodes; n421, one feasible node too many, stops the search
        // and is dropped, as in kube-scheduler.
        assert_eq!(o.num_feasible_nodes_to_find, 420);
        assert_eq!(o.feasible.len(), 420, "parallelism {parallelism}");
        assert_eq!(o.nodes_evaluated, 421, "parallelism {parallelism}");
        assert_eq!(o.next_start_node_index, 421);
        assert!(o.message.is_none());
    }
}

#[test]
fn round_robin_continues_where_the_last_cycle_stopped() {
    let snap = snapshot(1000);
    let mut e = engine(
        vec![plugin::<RejectEvery>(r#"{"every":"3"}"#, false)],
        10,
        4,
        false,
    );
    let first = e.find_nodes_that_fit(&snap, pod());
    // percentage 10 of 1000 = 100 feasible; 2 of every 3 nodes pass, so
    // n149 is the 100th feasible node; n150 is still checked (rejected,
    // counted) and n151, feasible, stops the search uncounted.
    assert_eq!(first.feasible.len(), 100);
    assert_eq!(&**first.name(first.feasible[0]), "n1");
    assert_eq!(&**first.name(first.feasible[99]), "n149");
    assert!(first.status("n150").is_some());
    assert_eq!(first.nodes_evaluated, 151);
    assert_eq!(first.next_start_node_index, 151);
    let second = e.find_nodes_that_fit(&snap, pod());
    assert_eq!(
        &**second.name(second.feasible[0]),
        "n151",
        "starts where the first stopped"
    );
    assert!(second.status("n0").is_none());
    assert_eq!(
        second.next_start_node_index,
        (151 + second.nodes_evaluated) % 1000
    );
    // Wraps around modulo the number of nodes.
    let mut last = second;
    for _ in 0..10 {
        last = e.find_nodes_that_fit(&snap, pod());
    }
    assert!(last.next_start_node_index < 1000);
}

#[test]
fn results_do_not_depend_on_parallelism() {
    let snap = snapshot(5000);
    // Default sampling (about 550 nodes per cycle: one task), 50% (split
    // waves, the search stopping inside one) and 100% (every node, split
    // over the cores in tasks of at least 1,024 nodes).
    for percentage in [0, 50, 100] {
        let run = |parallelism| {
            let mut e = engine(
                vec![plugin::<RejectEvery>(r#"{"every":"7"}"#, false)],
                percentage,
                parallelism,
                false,
            );
            (0..5)
                .map(|_| e.find_nodes_that_fit(&snap, pod()))
                .collect::<Vec<_>>()
        };
        let a = run(1);
        let b = run(16);
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.feasible, y.feasible, "{percentage}%");
            assert_eq!(x.rejected, y.rejected, "{percentage}%");
            assert_eq!(x.next_start_node_index, y.next_start_node_index);
            assert_eq!(x.nodes_evaluated, y.nodes_evaluated, "{percentage}%");
        }
    }
}

#[test]
fn short_circuit_versus_always_check_all_predicates() {
    let snap = snapshot(4);
    let plugins = || {
        vec![
            plugin::<RejectEvery>(r#"{"every":"2"}"#, false),
            plugin::<RejectAll>("{}", false),
        ]
    };
    let mut short = engine(plugins(), 100, 2, false);
    let o = short.find_nodes_that_fit(&snap, pod());
    let n0 = o.status("n0").unwrap();
    assert_eq!(n0.plugin(), Some("RejectEvery"));
    assert_eq!(n0.reasons(), ["divisible by 2"]);
    assert_eq!(n0.code(), Code::Unschedulable);
    assert_eq!(o.status("n1").unwrap().plugin(), Some("RejectAll"));

    let mut all = engine(plugins(), 100, 2, true);
    let o = all.find_nodes_that_fit(&snap, pod());
    let n0 = o.status("n0").unwrap();
    assert_eq!(n0.plugin(), Some("RejectEvery"), "first failing plugin");
    assert_eq!(n0.reasons(), ["divisible by 2", "rejected by RejectAll"]);
    assert_eq!(
        n0.code(),
        Code::UnschedulableAndUnresolvable,
        "most severe code"
    );
}

#[test]
fn message_histogram_is_sorted_as_strings() {
    // 12 nodes: 6 rejected by RejectEvery(2), the other 6 by RejectAll.
    let snap = snapshot(12);
    let mut e = engine(
        vec![
            plugin::<RejectEvery>(r#"{"every":"2"}"#, false),
            plugin::<RejectAll>("{}", false),
        ],
        0,
        3,
        false,
    );
    let o = e.find_nodes_that_fit(&snap, pod());
    assert_eq!(
        o.message.as_deref(),
        Some("0/12 nodes are available: 6 divisible by 2, 6 rejected by RejectAll.")
    );
    // 20 nodes with every=10: n0 and n10 rejected by the first (2), 18 by RejectAll:
    // "18 ..." sorts before "2 ..." as strings.
    let snap = snapshot(20);
    let mut e = engine(
        vec![
            plugin::<RejectEvery>(r#"{"every":"10"}"#, false),
            plugin::<RejectAll>("{}", false),
        ],
        0,
        3,
        false,
    );
    let o = e.find_nodes_that_fit(&snap, pod());
    assert_eq!(
        o.message.as_deref(),
        Some("0/20 nodes are available: 18 rejected by RejectAll, 2 divisible by 10.")
    );
}

#[test]
fn an_error_aborts_the_cycle_and_is_not_a_rejection() {
    let snap = snapshot(6);
    let mut e = engine(vec![plugin::<FailsOnN3>("{}", false)], 100, 2, false);
    let o = e.find_nodes_that_fit(&snap, pod());
    let err = o.error.clone().expect("the cycle fails");
    assert!(
        err.contains("FailsOnN3") && err.contains("backend unavailable"),
        "{err}"
    );
    assert!(o.feasible.is_empty(), "a failed cycle places nothing");
    assert!(o.message.is_none(), "an Error is not a FitError");
    assert_eq!(o.status("n3").unwrap().code(), Code::Error);
    // Nodes after the failing one were not committed; the failing node is
    // reported but, as upstream, not counted as processed.
    assert!(o.status("n4").is_none());
    assert_eq!(o.nodes_evaluated, 3);
    assert_eq!(o.next_start_node_index, 3);
}

#[test]
fn an_ignorable_plugin_error_lets_nodes_pass() {
    let snap = snapshot(6);
    let mut e = engine(vec![plugin::<FailsOnN3>("{}", true)], 100, 2, false);
    let o = e.find_nodes_that_fit(&snap, pod());
    assert!(o.error.is_none());
    assert_eq!(o.feasible.len(), 6);
    assert_eq!(o.ignored_errors.len(), 1, "{:?}", o.ignored_errors);
}

#[test]
fn no_nodes_is_an_error() {
    let mut e = engine(vec![plugin::<RejectAll>("{}", false)], 0, 1, false);
    let o = e.find_nodes_that_fit(&snapshot(0), pod());
    assert_eq!(
        o.error.as_deref(),
        Some("no nodes available to schedule pods")
    );
}
