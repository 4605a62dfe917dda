//! kube-scheduler's extender protocol (`k8s.io/kube-scheduler/extender/v1`)
//! as JSON: what `sift serve` answers as an extender and what sift sends
//! to the extenders its config lists.
//!
//! The Go structs carry no json tags, so the wire names are the Go field
//! names (`Pod`, `Nodes`, `NodeNames`; `FailedNodes`, ...; `Host`,
//! `Score`). Go's decoder matches names case-insensitively; sift reads the
//! spellings extenders write (`NodeNames`, `nodeNames`, `nodenames`).

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::collections::BTreeMap;

/// kube-scheduler's `MaxExtenderPriority`: extender scores are 0..=10 and
/// scaled by 100 / 10 to the score plugins' range.
pub const MAX_EXTENDER_PRIORITY: i64 = 10;

/// A v1 NodeList as Go's encoder writes it: `metadata` and `items`; other
/// fields (apiVersion, kind) are accepted. Items stay raw JSON: each is
/// parsed on its own, so an error can name the node, and node objects go
/// back as they came.
#[derive(Debug, Default, Deserialize, Serialize)]
pub struct NodeList {
    #[serde(default, deserialize_with = "null_as_default")]
    pub metadata: serde_json::Map<String, serde_json::Value>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub items: Vec<Box<RawValue>>,
}

/// `ExtenderFilterResult`.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct ExtenderFilterResult {
    #[serde(
        rename = "Nodes",
        alias = "nodes",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub nodes: Option<NodeList>,
    #[serde(
        rename = "NodeNames",
        alias = "nodeNames",
        alias = "nodenames",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub node_names: Option<Vec<String>>,
    #[serde(
        rename = "FailedNodes",
        alias = "failedNodes",
        alias = "failednodes",
        default,
        deserialize_with = "null_as_default"
    )]
    pub failed_nodes: BTreeMap<String, String>,
    #[serde(
        rename = "FailedAndUnresolvableNodes",
        alias = "failedAndUnresolvableNodes",
        alias = "failedandunresolvablenodes",
        default,
        deserialize_with = "null_as_default"
    )]
    pub failed_and_unresolvable_nodes: BTreeMap<String, String>,
    #[serde(
        rename = "Error",
        alias = "error",
        default,
        deserialize_with = "null_as_default"
    )]
    pub error: String,
}

/// One entry of a `HostPriorityList`, the prioritize verb's reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostPriority {
    #[serde(rename = "Host", alias = "host")]
    pub host: String,
    #[serde(rename = "Score", alias = "score", default)]
    pub score: i64,
}

/// Go encodes a nil map, slice or pointer as `null`.
pub(crate) fn null_as_default<'de, D: serde::Deserializer<'de>, T: Deserialize<'de> + Default>(
    d: D,
) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_go_and_lower_case_spellings() {
        let go: ExtenderFilterResult = serde_json::from_str(
            r#"{"Nodes":null,"NodeNames":["a"],"FailedNodes":{"b":"no"},"FailedAndUnresolvableNodes":null,"Error":""}"#,
        )
        .unwrap();
        assert_eq!(go.node_names.as_deref(), Some(&["a".to_string()][..]));
        assert_eq!(go.failed_nodes["b"], "no");
        assert!(go.failed_and_unresolvable_nodes.is_empty());
        let lower: ExtenderFilterResult =
            serde_json::from_str(r#"{"nodenames":["a"],"failedNodes":{},"error":"boom"}"#).unwrap();
        assert_eq!(lower.error, "boom");
        // Nil slices, maps and strings as Go and Python encoders write them.
        let nil: ExtenderFilterResult = serde_json::from_str(
            r#"{"Nodes":{"metadata":null,"items":null},"FailedNodes":null,"Error":null}"#,
        )
        .unwrap();
        assert!(nil.nodes.unwrap().items.is_empty());
        assert!(nil.error.is_empty());
        let p: Vec<HostPriority> =
            serde_json::from_str(r#"[{"Host":"a","Score":3},{"host":"b","score":10}]"#).unwrap();
        assert_eq!(
            p[1],
            HostPriority {
                host: "b".into(),
                score: 10
            }
        );
    }
}
