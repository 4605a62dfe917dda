//! ReserveProbe: a reserve step that returns what its pod's annotation
//! `test.sift.io/reserve` asks for, to try the host's checks on what
//! reserve plugins give the assumed pod:
//!
//! - `many:N`: N annotations `probe.test/kI: v`;
//! - `big:N`: one annotation `probe.test/big` whose value is N bytes;
//! - `key:TEXT`: one annotation whose key is TEXT (`\n` and `\e` in it
//!   become a newline and an escape character);
//! - `twice`: the key `probe.test/k` twice.
//!
//! Built by `scripts/build-plugins.sh` into `target/test-plugins/`; not a
//! bundled plugin.

use sift_sdk::{
    Args, ClusterView, ExtensionPoints, Node, Plugin, Pod, Prepare, Status, export_plugin,
};

pub const ASK: &str = "test.sift.io/reserve";

pub struct ReserveProbe;

impl Plugin for ReserveProbe {
    const NAME: &'static str = "ReserveProbe";
    // A filter that passes every node, so it can be listed as one.
    const EXTENSION_POINTS: ExtensionPoints =
        ExtensionPoints::FILTER.union(ExtensionPoints::RESERVE);
    type PodState = ();

    fn new(_: Args) -> Result<Self, String> {
        Ok(ReserveProbe)
    }

    /// Skipped: it has nothing to filter (a filter's default prepare
    /// would proceed and pass every node one by one).
    fn prepare(&self, _: &Pod, _: &dyn ClusterView) -> Prepare<()> {
        Prepare::Skip
    }

    fn reserve(&self, pod: &Pod, _node: &Node) -> Result<Vec<(String, String)>, Status> {
        let ask = pod.annotations.get(ASK).unwrap_or("");
        let (what, arg) = ask.split_once(':').unwrap_or((ask, ""));
        let n = || arg.parse::<usize>().unwrap_or(0);
        Ok(match what {
            "many" => (0..n())
                .map(|i| (format!("probe.test/k{i}"), "v".to_string()))
                .collect(),
            "big" => vec![("probe.test/big".to_string(), "v".repeat(n()))],
            "key" => vec![(
                arg.replace("\\n", "\n").replace("\\e", "\u{1b}"),
                "v".to_string(),
            )],
            "twice" => vec![
                ("probe.test/k".to_string(), "1".to_string()),
                ("probe.test/k".to_string(), "2".to_string()),
            ],
            _ => Vec::new(),
        })
    }
}

export_plugin!(ReserveProbe);
