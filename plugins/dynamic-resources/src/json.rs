//! Reading API objects as the host prints them (`kubectl get -o json`):
//! accessors tolerate missing or mistyped fields, reading them as unset.

use serde_json::Value;
use sift_sdk::model::{SelectorRequirement, SelectorTerm};
use sift_sdk::selector::NodeSelector;

/// The value at `path`, if every step exists.
pub fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(k))
}

/// The string at `path`, `""` when missing or not a string.
pub fn text<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    at(v, path).and_then(Value::as_str).unwrap_or("")
}

/// Whether `path` holds a value other than `null`.
pub fn is_set(v: &Value, path: &[&str]) -> bool {
    at(v, path).is_some_and(|v| !v.is_null())
}

/// The array at `path` (empty when missing).
pub fn list<'a>(v: &'a Value, path: &[&str]) -> &'a [Value] {
    at(v, path)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The boolean at `path`, `false` when missing.
pub fn flag(v: &Value, path: &[&str]) -> bool {
    at(v, path).and_then(Value::as_bool).unwrap_or(false)
}

/// The integer at `path`.
pub fn int(v: &Value, path: &[&str]) -> Option<i64> {
    at(v, path).and_then(Value::as_i64)
}

fn requirement(r: &Value) -> SelectorRequirement {
    SelectorRequirement {
        key: text(r, &["key"]).to_string(),
        operator: text(r, &["operator"]).to_string(),
        values: list(r, &["values"])
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
    }
}

/// The terms of a `core/v1` NodeSelector (`{"nodeSelectorTerms": [...]}`).
pub fn selector_terms(v: &Value) -> Vec<SelectorTerm> {
    list(v, &["nodeSelectorTerms"])
        .iter()
        .map(|t| SelectorTerm {
            match_expressions: list(t, &["matchExpressions"])
                .iter()
                .map(requirement)
                .collect(),
            match_fields: list(t, &["matchFields"]).iter().map(requirement).collect(),
        })
        .collect()
}

/// A NodeSelector, matched as node affinity is: terms ORed, requirements
/// ANDed, `matchFields` on `metadata.name` only. A term that does not
/// parse matches no node.
pub fn node_selector(v: &Value) -> NodeSelector {
    NodeSelector::new(&selector_terms(v))
}

/// A quantity field (`"80Gi"`, or a number); `None` when missing or not a
/// quantity.
pub fn quantity(v: Option<&Value>) -> Option<sift_sdk::Quantity> {
    match v? {
        Value::String(s) => sift_sdk::Quantity::parse(s).ok(),
        Value::Number(n) => sift_sdk::Quantity::parse(&n.to_string()).ok(),
        _ => None,
    }
}
