//! A volume's node affinity as VolumeBinding checks it
//! (`volume.CheckNodeAffinity` in component-helpers), and a class's
//! `allowedTopologies` (`v1helper.MatchTopologySelectorTerms`).
//!
//! `CheckNodeAffinity` matches the volume's required terms against a
//! `Node` it builds from the node's *labels only*. The node selector
//! library compares `matchFields` only when the node has fields, and a
//! node without a name has none: so in VolumeBinding a `matchFields`
//! requirement (`metadata.name In [...]`) is parsed, and makes its term
//! invalid when malformed, but never excludes a node. That is upstream's
//! behaviour, restated here on purpose.

use crate::json::{self, at};
use serde_json::Value;
use sift_sdk::Labels;
use sift_sdk::model::{SelectorRequirement, SelectorTerm};
use sift_sdk::selector::NodeSelector;

/// One `nodeSelectorTerms[]` entry as written, kept editable for the CSI
/// migration rewrite (`migration.rs`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RawTerm {
    pub expressions: Vec<SelectorRequirement>,
    pub fields: Vec<SelectorRequirement>,
}

/// A volume's `spec.nodeAffinity.required.nodeSelectorTerms`: `None` when
/// the volume has no required affinity (it fits every node).
pub fn raw_terms(pv: &Value) -> Option<Vec<RawTerm>> {
    let required = at(pv, &["spec", "nodeAffinity", "required"]).filter(|r| !r.is_null())?;
    let terms = required
        .get("nodeSelectorTerms")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|t| RawTerm {
            expressions: list(t, "matchExpressions"),
            fields: list(t, "matchFields"),
        })
        .collect();
    Some(terms)
}

fn list(term: &Value, key: &str) -> Vec<SelectorRequirement> {
    term.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(json::requirement)
        .collect()
}

/// One parsed, valid term.
#[derive(Debug)]
enum Term {
    /// Only `matchFields`, well formed: VolumeBinding's nameless node
    /// satisfies it.
    Always,
    /// Label expressions (any fields beside them well formed, and ignored).
    Labels(NodeSelector, Anchor),
}

/// A necessary condition of a term, for indexing candidate volumes by the
/// node labels that can satisfy them: the term's first `In` expression.
#[derive(Clone, Debug, Default)]
pub struct Anchor(pub Option<(String, Vec<String>)>);

/// A compiled node affinity.
#[derive(Debug, Default)]
pub struct Affinity {
    /// `None`: no required affinity, every node fits. `Some([])`: required
    /// terms of which none is valid and non-empty: no node fits (upstream
    /// reports "no matching NodeSelectorTerms").
    terms: Option<Vec<Term>>,
}

impl Affinity {
    /// The affinity of `terms` (as [`raw_terms`] reads them). Empty terms
    /// are dropped (they select nothing); a term with a malformed
    /// requirement is dropped too (upstream records its parse error and
    /// matches the other terms).
    pub fn compile(terms: Option<&[RawTerm]>) -> Affinity {
        let Some(terms) = terms else {
            return Affinity { terms: None };
        };
        let compiled = terms
            .iter()
            .filter(|t| !(t.expressions.is_empty() && t.fields.is_empty()))
            .filter(|t| t.fields.iter().all(valid_field))
            .filter_map(|t| {
                if t.expressions.is_empty() {
                    return Some(Term::Always);
                }
                let selector = NodeSelector::new(&[SelectorTerm {
                    match_expressions: t.expressions.clone(),
                    match_fields: Vec::new(),
                }]);
                if !selector.errors().is_empty() {
                    return None;
                }
                let anchor = t
                    .expressions
                    .iter()
                    .find(|r| r.operator == "In")
                    .map(|r| (r.key.clone(), r.values.clone()));
                Some(Term::Labels(selector, Anchor(anchor)))
            })
            .collect();
        Affinity {
            terms: Some(compiled),
        }
    }

    /// The volume's own affinity.
    pub fn of_volume(pv: &Value) -> Affinity {
        Affinity::compile(raw_terms(pv).as_deref())
    }

    /// Whether a node with these labels satisfies it.
    pub fn matches(&self, labels: &Labels) -> bool {
        match &self.terms {
            None => true,
            Some(terms) => terms.iter().any(|t| match t {
                Term::Always => true,
                Term::Labels(s, _) => s.matches("", labels),
            }),
        }
    }

    /// No node can satisfy it.
    pub fn never(&self) -> bool {
        self.terms.as_ref().is_some_and(Vec::is_empty)
    }

    /// A condition every matching node meets, when the affinity is a single
    /// term with an `In` expression: its key must be among its values.
    pub fn anchor(&self) -> Anchor {
        match self.terms.as_deref() {
            Some([Term::Labels(_, a)]) => a.clone(),
            _ => Anchor(None),
        }
    }
}

/// A `matchFields` requirement the node selector library accepts: `In` or
/// `NotIn` with exactly one value.
fn valid_field(r: &SelectorRequirement) -> bool {
    matches!(r.operator.as_str(), "In" | "NotIn") && r.values.len() == 1
}

/// A class's `allowedTopologies`: an empty list admits every node; terms
/// are ORed, each a set of `key In values` requirements; an empty or
/// malformed term admits none.
#[derive(Debug, Default)]
pub struct Topology(Option<NodeSelector>);

impl Topology {
    pub fn of_class(class: &Value) -> Topology {
        let terms: Vec<SelectorTerm> = class
            .get("allowedTopologies")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|t| SelectorTerm {
                match_expressions: t
                    .get("matchLabelExpressions")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(|r| SelectorRequirement {
                        operator: "In".into(),
                        ..json::requirement(r)
                    })
                    .collect(),
                match_fields: Vec::new(),
            })
            .collect();
        if terms.is_empty() {
            Topology(None)
        } else {
            Topology(Some(NodeSelector::new(&terms)))
        }
    }

    pub fn admits(&self, labels: &Labels) -> bool {
        self.0.as_ref().is_none_or(|s| s.matches("", labels))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs.iter().copied().collect()
    }

    fn pv(affinity: Value) -> Value {
        json!({"spec": {"nodeAffinity": affinity}})
    }

    #[test]
    fn no_required_affinity_fits_every_node() {
        assert!(Affinity::of_volume(&json!({"spec": {}})).matches(&labels(&[])));
        assert!(Affinity::of_volume(&pv(json!({}))).matches(&labels(&[])));
    }

    #[test]
    fn required_terms_are_ored_and_empty_ones_select_nothing() {
        let a = Affinity::of_volume(&pv(json!({"required": {"nodeSelectorTerms": [
            {},
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}
        ]}})));
        assert!(a.matches(&labels(&[("zone", "a")])));
        assert!(a.matches(&labels(&[("zone", "b")])));
        assert!(!a.matches(&labels(&[("zone", "c")])));
        let none = Affinity::of_volume(&pv(json!({"required": {"nodeSelectorTerms": [{}]}})));
        assert!(none.never());
        assert!(!none.matches(&labels(&[])));
    }

    #[test]
    fn match_fields_never_exclude_the_nameless_node_but_must_parse() {
        let only_fields = Affinity::of_volume(&pv(json!({"required": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-2"]}]}
        ]}})));
        assert!(only_fields.matches(&labels(&[])));
        let bad_field = Affinity::of_volume(&pv(json!({"required": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]}
        ]}})));
        assert!(bad_field.never());
        let both = Affinity::of_volume(&pv(json!({"required": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}],
             "matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["x"]}]}
        ]}})));
        assert!(both.matches(&labels(&[("zone", "a")])));
        assert!(!both.matches(&labels(&[("zone", "b")])));
    }

    #[test]
    fn a_malformed_term_is_skipped_and_the_others_still_match() {
        let a = Affinity::of_volume(&pv(json!({"required": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "Near", "values": ["a"]}]},
            {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}
        ]}})));
        assert!(a.matches(&labels(&[("zone", "q")])));
        assert!(!a.matches(&labels(&[])));
    }

    #[test]
    fn single_term_affinity_is_anchored_on_its_first_in_expression() {
        let a = Affinity::of_volume(&pv(json!({"required": {"nodeSelectorTerms": [
            {"matchExpressions": [
                {"key": "zone", "operator": "Exists"},
                {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}]}
        ]}})));
        let Anchor(Some((k, v))) = a.anchor() else {
            panic!("expected an anchor")
        };
        assert_eq!(
            (k.as_str(), v),
            ("kubernetes.io/hostname", vec!["n1".to_string()])
        );
        assert!(Affinity::of_volume(&json!({})).anchor().0.is_none());
    }

    #[test]
    fn allowed_topologies() {
        let empty = Topology::of_class(&json!({}));
        assert!(empty.admits(&labels(&[])));
        let t = Topology::of_class(&json!({"allowedTopologies": [
            {"matchLabelExpressions": []},
            {"matchLabelExpressions": [{"key": "zone", "values": ["a", "b"]}]}
        ]}));
        assert!(t.admits(&labels(&[("zone", "b")])));
        assert!(!t.admits(&labels(&[("zone", "c")])));
        let no_values = Topology::of_class(&json!({"allowedTopologies": [
            {"matchLabelExpressions": [{"key": "zone", "values": []}]}
        ]}));
        assert!(!no_values.admits(&labels(&[("zone", "a")])));
    }
}
