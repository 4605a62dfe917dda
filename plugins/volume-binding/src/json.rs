//! Reading API objects as the host prints them (`kubectl get -o json`):
//! every accessor tolerates a missing or mistyped field, so a malformed
//! object reads as "unset" instead of panicking.

use serde_json::Value;
use sift_sdk::model::{LabelSelector, SelectorRequirement};
use sift_sdk::{Labels, Quantity};

/// The beta annotation a claim's or volume's class is read from first
/// (`v1.BetaStorageClassAnnotation`).
pub const BETA_STORAGE_CLASS: &str = "volume.beta.kubernetes.io/storage-class";

/// The value at `path`, if every step exists.
pub fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(k))
}

/// The string at `path`, `""` when missing or not a string.
pub fn text<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    at(v, path).and_then(Value::as_str).unwrap_or("")
}

/// Whether `path` holds a value other than `null` (a set timestamp, a set
/// object).
pub fn is_set(v: &Value, path: &[&str]) -> bool {
    at(v, path).is_some_and(|v| !v.is_null())
}

/// `metadata.annotations[key]`, when present (even if empty).
pub fn annotation<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    at(v, &["metadata", "annotations", key]).and_then(Value::as_str)
}

/// The strings of the array at `path` (non-strings skipped).
pub fn strings<'a>(v: &'a Value, path: &[&str]) -> Vec<&'a str> {
    at(v, path)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// A label map (`metadata.labels`) as SDK labels.
pub fn labels(v: Option<&Value>) -> Labels {
    v.and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
        .collect()
}

/// A quantity field (`"10Gi"`); `None` when missing or not a quantity.
pub fn quantity(v: Option<&Value>) -> Option<Quantity> {
    match v? {
        Value::String(s) => Quantity::parse(s).ok(),
        Value::Number(n) => Quantity::parse(&n.to_string()).ok(),
        _ => None,
    }
}

/// A node selector requirement or label selector expression.
pub fn requirement(v: &Value) -> SelectorRequirement {
    SelectorRequirement {
        key: text(v, &["key"]).to_string(),
        operator: text(v, &["operator"]).to_string(),
        values: strings(v, &["values"])
            .into_iter()
            .map(str::to_string)
            .collect(),
    }
}

/// A `metav1.LabelSelector` object as the SDK's model.
pub fn label_selector(v: &Value) -> LabelSelector {
    LabelSelector {
        match_labels: v
            .get("matchLabels")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
            .collect(),
        match_expressions: v
            .get("matchExpressions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(requirement)
            .collect(),
    }
}

/// A claim's class (`GetPersistentVolumeClaimClass`): the beta annotation
/// when present, even empty, else `spec.storageClassName`.
pub fn claim_class(claim: &Value) -> &str {
    match annotation(claim, BETA_STORAGE_CLASS) {
        Some(c) => c,
        None => text(claim, &["spec", "storageClassName"]),
    }
}

/// A volume's class (`GetPersistentVolumeClass`), the same way.
pub fn volume_class(pv: &Value) -> &str {
    match annotation(pv, BETA_STORAGE_CLASS) {
        Some(c) => c,
        None => text(pv, &["spec", "storageClassName"]),
    }
}

/// The storage a claim requests (`spec.resources.requests.storage`):
/// `None` when it requests none (the capacity check then has nothing to
/// check); zero stands in for it where upstream reads the map's zero value.
pub fn requested_storage(claim: &Value) -> Option<Quantity> {
    quantity(at(claim, &["spec", "resources", "requests", "storage"]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn classes_read_the_beta_annotation_first_even_when_empty() {
        let c = json!({"metadata": {"annotations": {BETA_STORAGE_CLASS: ""}},
                       "spec": {"storageClassName": "gold"}});
        assert_eq!(claim_class(&c), "");
        let c = json!({"spec": {"storageClassName": "gold"}});
        assert_eq!(claim_class(&c), "gold");
        assert_eq!(
            claim_class(&json!({"spec": {"storageClassName": null}})),
            ""
        );
        let pv = json!({"metadata": {"annotations": {BETA_STORAGE_CLASS: "beta"}},
                        "spec": {"storageClassName": "ga"}});
        assert_eq!(volume_class(&pv), "beta");
    }

    #[test]
    fn malformed_fields_read_as_unset() {
        let v = json!({"spec": {"resources": {"requests": {"storage": "ten gigs"}}},
                       "metadata": {"labels": {"a": 1, "b": "x"}}});
        assert_eq!(requested_storage(&v), None);
        assert_eq!(labels(at(&v, &["metadata", "labels"])).len(), 1);
        assert_eq!(text(&json!(5), &["a", "b"]), "");
        assert!(!is_set(&json!({"a": null}), &["a"]));
        assert!(is_set(&json!({"a": "2024-01-01T00:00:00Z"}), &["a"]));
    }
}
