//! {{Plugin}}: rejects nodes labelled `sift.io/{{name}}: deny`.

use sift_sdk::{Args, Node, NodeFields, Pod, Predicate, Prepare, Status, export_predicate};

pub struct {{Plugin}};

impl Predicate for {{Plugin}} {
    const NAME: &'static str = "{{Plugin}}";
    /// The host syncs only the node fields a plugin reads.
    const NODE_FIELDS: NodeFields = NodeFields::LABELS;
    /// What `prepare` computes once per pod for `filter` to use.
    type PodState = ();

    fn new(_args: Args) -> Result<Self, String> {
        Ok({{Plugin}})
    }

    fn prepare(&self, _pod: &Pod) -> Prepare<()> {
        Prepare::Proceed(())
    }

    fn filter(&self, _pod: &Pod, _: &(), node: &Node) -> Status {
        if node.labels.get("sift.io/{{name}}") == Some("deny") {
            return Status::unresolvable("node(s) were denied by {{Plugin}}");
        }
        Status::success()
    }
}

export_predicate!({{Plugin}});
