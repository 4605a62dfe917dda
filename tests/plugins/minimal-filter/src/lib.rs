//! MinimalFilter: the smallest filter the SDK allows, `filter` and nothing
//! else. It rejects nodes labelled `spot: "true"`; that it rejects any
//! proves the default `prepare` proceeds (a default of Skip made such a
//! filter pass every node). Built by `scripts/build-plugins.sh` into
//! `target/test-plugins/`; not a bundled plugin.

use sift_sdk::{Args, Node, Plugin, Pod, Status, export_plugin};

pub const ERR_REASON: &str = "node(s) were spot instances";

pub struct MinimalFilter;

impl Plugin for MinimalFilter {
    const NAME: &'static str = "MinimalFilter";
    type PodState = ();

    fn new(_: Args) -> Result<Self, String> {
        Ok(MinimalFilter)
    }

    fn filter(&self, _: &Pod, _: &(), node: &Node) -> Status {
        if node.labels.get("spot") == Some("true") {
            return Status::unresolvable(ERR_REASON);
        }
        Status::success()
    }
}

export_plugin!(MinimalFilter);
