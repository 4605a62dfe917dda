//! {{Plugin}}: prefers nodes labelled `sift.io/{{name}}: prefer`.

use sift_sdk::{
    Args, ExtensionPoints, MAX_NODE_SCORE, Node, NodeFields, Plugin, Pod, Status, export_plugin,
};

const LABEL: &str = "sift.io/{{name}}";

pub struct {{Plugin}};

impl Plugin for {{Plugin}} {
    const NAME: &'static str = "{{Plugin}}";
    /// A scorer: the host calls its PreScore, Score and NormalizeScore.
    const EXTENSION_POINTS: ExtensionPoints = ExtensionPoints::SCORE;
    /// The host syncs only the node fields a plugin reads.
    const NODE_FIELDS: NodeFields = NodeFields::LABELS;
    /// ... and of the labels, the SDK keeps only these per node.
    const NODE_LABELS: Option<&'static [&'static str]> = Some(&[LABEL]);
    /// What `pre_score` computes once per pod for `score` to use; this
    /// scorer needs nothing, so it leaves `pre_score` at its default, which
    /// proceeds with `PodState::default()`.
    type PodState = ();

    fn new(_args: Args) -> Result<Self, String> {
        Ok({{Plugin}})
    }

    /// Already in 0..=100, so `normalize_scores` keeps its default.
    fn score(&self, _pod: &Pod, _: &(), node: &Node) -> Result<i64, Status> {
        Ok(if node.labels.get(LABEL) == Some("prefer") {
            MAX_NODE_SCORE
        } else {
            0
        })
    }
}

export_plugin!({{Plugin}});

/// `cargo test` runs the plugin natively, without a host.
#[cfg(test)]
mod tests {
    use super::*;
    use sift_sdk::Labels;

    fn node(label: Option<&str>) -> Node {
        let labels = label.map(|v| (LABEL.to_string(), v.to_string()));
        Node {
            name: "node-a".into(),
            labels: Labels::new(labels.into_iter().collect()),
            ..Node::default()
        }
    }

    #[test]
    fn prefers_only_nodes_labelled_prefer() {
        let plugin = {{Plugin}}::new(Args::default()).unwrap();
        let score = |n| plugin.score(&Pod::default(), &(), &node(n)).unwrap();
        assert_eq!(score(Some("prefer")), MAX_NODE_SCORE);
        assert_eq!(score(Some("other")), 0);
        assert_eq!(score(None), 0);
    }
}
