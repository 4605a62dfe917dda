//! {{Plugin}}: rejects nodes labelled `sift.io/{{name}}: deny`.

use sift_sdk::{Args, Node, NodeFields, Plugin, Pod, Status, export_plugin};

const LABEL: &str = "sift.io/{{name}}";

pub struct {{Plugin}};

impl Plugin for {{Plugin}} {
    const NAME: &'static str = "{{Plugin}}";
    /// The host syncs only the node fields a plugin reads.
    const NODE_FIELDS: NodeFields = NodeFields::LABELS;
    /// ... and of the labels, the SDK keeps only these per node.
    const NODE_LABELS: Option<&'static [&'static str]> = Some(&[LABEL]);
    /// What `prepare` computes once per pod for `filter` to use; this
    /// filter needs nothing, so it leaves `prepare` at its default, which
    /// proceeds with `PodState::default()`.
    type PodState = ();

    fn new(_args: Args) -> Result<Self, String> {
        Ok({{Plugin}})
    }

    fn filter(&self, _pod: &Pod, _: &(), node: &Node) -> Status {
        if node.labels.get(LABEL) == Some("deny") {
            return Status::unresolvable("node(s) were denied by {{Plugin}}");
        }
        Status::success()
    }
}

export_plugin!({{Plugin}});

/// `cargo test` runs the plugin natively, without a host.
#[cfg(test)]
mod tests {
    use super::*;
    use sift_sdk::{Code, Labels};

    fn node(label: Option<&str>) -> Node {
        let labels = label.map(|v| (LABEL.to_string(), v.to_string()));
        Node {
            name: "node-a".into(),
            labels: Labels::new(labels.into_iter().collect()),
            ..Node::default()
        }
    }

    #[test]
    fn denies_only_nodes_labelled_deny() {
        let plugin = {{Plugin}}::new(Args::default()).unwrap();
        let filter = |n| plugin.filter(&Pod::default(), &(), &node(n));
        let denied = filter(Some("deny")).code;
        assert_eq!(denied, Code::UnschedulableAndUnresolvable);
        assert!(filter(Some("allow")).is_success());
        assert!(filter(None).is_success());
    }
}
