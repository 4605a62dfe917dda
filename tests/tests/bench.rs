//! `sift bench --scoring` end to end, and the pod mix it measures. No
//! timing is checked: numbers depend on the machine; what is checked is
//! that the mode runs both profiles and every plugin of the default
//! profile, and that its pods give every default scorer work.

use sift_host::cluster::synthetic::{synthetic_scoring_cluster, synthetic_scoring_pods};
use sift_host::config::{Config, DEFAULT_FILTERS, DEFAULT_SCORES};
use sift_host::engine::plugin::Cycle;
use sift_host::plugins::registry::Catalog;
use std::process::{Command, Output};

fn sift(args: &[&str]) -> Output {
    Command::new(sift_tests::sift_bin())
        .args(args)
        .env("SIFT_PLUGINS_DIR", sift_tests::plugins_dir())
        .env("SIFT_CACHE_DIR", sift_tests::temp_dir("bench-cache"))
        .output()
        .expect("run sift")
}

/// The numbers of a table row after its label (`-` for a column not run).
fn numbers(row: &str, label: &str) -> Vec<String> {
    row[row.find(label).expect("label") + label.len()..]
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

fn is_number(s: &str) -> bool {
    s.parse::<f64>().is_ok_and(|v| v.is_finite() && v >= 0.0)
}

/// A short run prints both profiles' rows, native and Wasm, and a row per
/// filter and per score of the default profile, each with both runtimes'
/// µs.
#[test]
fn scoring_bench_runs_both_profiles_and_times_every_default_plugin() {
    let o = sift(&[
        "bench",
        "--scoring",
        "--nodes",
        "200",
        "--pods",
        "30",
        "--seconds",
        "0.2",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let complete = format!("complete default ({} scores)", DEFAULT_SCORES.len());
    for label in ["before issue 34 (Fit 1, BalancedAllocation 1)", &complete] {
        let row = out
            .lines()
            .find(|l| l.trim_start().starts_with("200 ") && l.contains(label))
            .unwrap_or_else(|| panic!("no 200-node row for {label}:\n{out}"));
        let cells = numbers(row, label);
        assert_eq!(cells.len(), 4, "{row}");
        assert!(cells.iter().all(|c| is_number(c)), "{row}");
    }
    let entries = DEFAULT_FILTERS
        .iter()
        .map(|f| (*f, "filter"))
        .chain(DEFAULT_SCORES.iter().map(|(s, _)| (*s, "score")));
    for (plugin, point) in entries {
        let row = out
            .lines()
            .find(|l| {
                let mut words = l.split_whitespace();
                words.next() == Some(plugin) && words.next() == Some(point)
            })
            .unwrap_or_else(|| panic!("no {point} row for {plugin}:\n{out}"));
        let cells = numbers(row, point);
        assert_eq!(cells.len(), 3, "{row}");
        assert!(cells.iter().all(|c| is_number(c)), "{row}");
    }
    assert!(out.contains("sum of the plugins"), "{out}");
}

/// `--percentage` belongs to the filter phase's table: with --scoring it
/// is refused rather than silently ignored (the config sets it).
#[test]
fn scoring_bench_refuses_percentage() {
    let o = sift(&["bench", "--scoring", "--percentage", "100"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--percentage"), "{err}");
}

/// The benchmark's pods give each default score plugin something to
/// score: for each, some pod among the first 20 gets scores that differ
/// between nodes (a plugin that skipped every pod, or scored every node
/// alike, would cost nothing worth measuring).
#[test]
fn scoring_pods_give_every_default_scorer_work() {
    let snapshot = synthetic_scoring_cluster(300).unwrap();
    let pods = synthetic_scoring_pods(20);
    let catalog = Catalog::native(&Config::default()).unwrap();
    let slots: Vec<u32> = (0..snapshot.len() as u32).collect();
    for (name, _) in DEFAULT_SCORES {
        let plugin = catalog.get(name).unwrap();
        let varied = pods.iter().any(|pod| {
            let cycle = Cycle::new(pod.clone(), snapshot.clone());
            let scores = plugin.score(&cycle, &slots).unwrap();
            scores.is_some_and(|s| s.iter().any(|v| *v != s[0]))
        });
        assert!(varied, "{name} scores every node alike for every pod");
    }
    assert_eq!(pods, synthetic_scoring_pods(20), "the mix is deterministic");
}
