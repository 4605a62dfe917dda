//! Node selector matching as kube-scheduler's `nodeaffinity` helper does it:
//! `spec.nodeSelector` ANDed with the required node affinity, whose terms
//! are ORed and whose requirements are ANDed. A term that does not parse
//! (unknown operator, wrong number of values, Gt/Lt on a non-integer) is
//! ignored, and an empty term matches nothing.

use crate::model::{
    Found, LabelKey, LabelSelector, LabelValue, Labels, Node, Pod, SelectorRequirement,
    SelectorTerm, str_eq,
};

/// The field `matchFields` may select on.
pub const OBJECT_NAME_FIELD: &str = "metadata.name";

#[derive(Clone, Debug, PartialEq, Eq)]
enum Op {
    In(Vec<LabelValue>),
    NotIn(Vec<LabelValue>),
    Exists,
    DoesNotExist,
    Gt(i64),
    Lt(i64),
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Requirement {
    key: LabelKey,
    op: Op,
}

impl Requirement {
    /// Against a label's value found on a node: compared by hash first.
    fn matches(&self, value: Option<Found<'_>>) -> bool {
        match (&self.op, value) {
            (Op::In(vals), Some(v)) => vals.iter().any(|x| x.matches(v)),
            (Op::In(_), None) => false,
            (Op::NotIn(vals), Some(v)) => !vals.iter().any(|x| x.matches(v)),
            (Op::NotIn(_), None) => true,
            (Op::Exists, v) => v.is_some(),
            (Op::DoesNotExist, v) => v.is_none(),
            (Op::Gt(bound), Some(v)) => v.value.parse::<i64>().is_ok_and(|n| n > *bound),
            (Op::Lt(bound), Some(v)) => v.value.parse::<i64>().is_ok_and(|n| n < *bound),
            (Op::Gt(_) | Op::Lt(_), None) => false,
        }
    }

    /// Against a field's value (`matchFields` only allows `In`, `NotIn`).
    fn matches_field(&self, value: &str) -> bool {
        match &self.op {
            Op::In(vals) => vals.iter().any(|x| str_eq(x.as_str(), value)),
            Op::NotIn(vals) => !vals.iter().any(|x| str_eq(x.as_str(), value)),
            _ => false,
        }
    }
}

/// A parsed node selector term; `None` requirements mean a parse error.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Term {
    expressions: Vec<Requirement>,
    fields: Vec<Requirement>,
}

impl Term {
    fn parse(term: &SelectorTerm) -> Result<Term, String> {
        Ok(Term {
            expressions: term
                .match_expressions
                .iter()
                .map(parse_label_requirement)
                .collect::<Result<_, _>>()?,
            fields: term
                .match_fields
                .iter()
                .map(parse_field_requirement)
                .collect::<Result<_, _>>()?,
        })
    }

    fn matches(&self, node_name: &str, labels: &Labels) -> bool {
        if self.expressions.is_empty() && self.fields.is_empty() {
            return false;
        }
        self.expressions
            .iter()
            .all(|r| r.matches(labels.get_value(&r.key)))
            && self.fields.iter().all(|r| {
                let field = (r.key.as_str() == OBJECT_NAME_FIELD && !node_name.is_empty())
                    .then_some(node_name);
                // Field selectors compare against "" when the field is absent.
                r.matches_field(field.unwrap_or(""))
            })
    }
}

fn parse_label_requirement(r: &SelectorRequirement) -> Result<Requirement, String> {
    if !is_qualified_name(&r.key) {
        return Err(format!("invalid label key {:?}", r.key));
    }
    let op = match r.operator.as_str() {
        "In" | "NotIn" => {
            if r.values.is_empty() {
                return Err(format!("{} needs at least one value", r.operator));
            }
            if let Some(bad) = r.values.iter().find(|v| !is_label_value(v)) {
                return Err(format!("invalid label value {bad:?}"));
            }
            let values = r.values.iter().map(LabelValue::new).collect();
            if r.operator == "In" {
                Op::In(values)
            } else {
                Op::NotIn(values)
            }
        }
        "Exists" | "DoesNotExist" => {
            if !r.values.is_empty() {
                return Err(format!("{} takes no values", r.operator));
            }
            if r.operator == "Exists" {
                Op::Exists
            } else {
                Op::DoesNotExist
            }
        }
        "Gt" | "Lt" => {
            let [v] = r.values.as_slice() else {
                return Err(format!("{} needs exactly one value", r.operator));
            };
            // Parsed as an integer and, like every value, a valid label value
            // (so "-5" or "+5" make the term invalid, as upstream).
            let n: i64 = v
                .parse()
                .ok()
                .filter(|_| is_label_value(v))
                .ok_or_else(|| {
                    format!("{} value {v:?} is not an integer label value", r.operator)
                })?;
            if r.operator == "Gt" {
                Op::Gt(n)
            } else {
                Op::Lt(n)
            }
        }
        other => return Err(format!("{other:?} is not a valid label selector operator")),
    };
    Ok(Requirement {
        key: LabelKey::new(r.key.clone()),
        op,
    })
}

fn parse_field_requirement(r: &SelectorRequirement) -> Result<Requirement, String> {
    if r.values.len() != 1 {
        return Err(format!(
            "unexpected number of value ({}) for node field selector operator {:?}",
            r.values.len(),
            r.operator
        ));
    }
    let op = match r.operator.as_str() {
        "In" => Op::In(r.values.iter().map(LabelValue::new).collect()),
        "NotIn" => Op::NotIn(r.values.iter().map(LabelValue::new).collect()),
        other => {
            return Err(format!(
                "{other:?} is not a valid node field selector operator"
            ));
        }
    };
    Ok(Requirement {
        key: LabelKey::new(r.key.clone()),
        op,
    })
}

/// Parsed node selector terms (ORed). Terms that failed to parse are kept
/// out, with their errors, so matching ignores them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeSelector {
    terms: Vec<Term>,
    errors: Vec<String>,
}

impl NodeSelector {
    pub fn new(terms: &[SelectorTerm]) -> NodeSelector {
        let mut s = NodeSelector::default();
        for t in terms {
            match Term::parse(t) {
                Ok(term) => s.terms.push(term),
                Err(e) => s.errors.push(e),
            }
        }
        s
    }

    /// True when any valid term matches the node.
    pub fn matches(&self, node_name: &str, labels: &Labels) -> bool {
        self.terms.iter().any(|t| t.matches(node_name, labels))
    }

    /// Why terms were ignored, for logging.
    pub fn errors(&self) -> &[String] {
        &self.errors
    }
}

/// Parsed preferred node affinity terms (kube-scheduler's
/// `PreferredSchedulingTerms`): a node's score is the sum of the weights
/// of the terms it matches. Terms of weight 0 are dropped; unlike the
/// required side, a term that does not parse is an error (upstream's
/// PreScore fails the cycle with it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PreferredTerms {
    terms: Vec<(i64, Term)>,
}

impl PreferredTerms {
    pub fn new(terms: &[crate::model::WeightedSelectorTerm]) -> Result<PreferredTerms, String> {
        let mut out = PreferredTerms::default();
        let mut errors = Vec::new();
        for (i, t) in terms.iter().enumerate() {
            if t.weight == 0 {
                continue;
            }
            match Term::parse(&t.preference) {
                Ok(term) => out.terms.push((i64::from(t.weight), term)),
                Err(e) => errors.push(format!("[{i}].preference: {e}")),
            }
        }
        if errors.is_empty() {
            Ok(out)
        } else {
            Err(errors.join("; "))
        }
    }

    /// The sum of the weights of the terms the node matches.
    pub fn score(&self, node_name: &str, labels: &Labels) -> i64 {
        self.terms
            .iter()
            .filter(|(_, t)| t.matches(node_name, labels))
            .map(|(w, _)| *w)
            .sum()
    }
}

/// A pod's hard node constraints: `spec.nodeSelector` AND required node
/// affinity (kube-scheduler's `RequiredNodeAffinity`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequiredNodeAffinity {
    node_selector: Vec<(LabelKey, LabelValue)>,
    affinity: Option<NodeSelector>,
}

impl RequiredNodeAffinity {
    pub fn of(pod: &Pod) -> RequiredNodeAffinity {
        RequiredNodeAffinity {
            node_selector: pod
                .node_selector
                .iter()
                .map(|(k, v)| (LabelKey::new(k), LabelValue::new(v)))
                .collect(),
            affinity: pod.required_node_affinity.as_deref().map(NodeSelector::new),
        }
    }

    pub fn matches(&self, node: &Node) -> bool {
        self.node_selector
            .iter()
            .all(|(k, v)| node.labels.get_value(k).is_some_and(|nv| v.matches(nv)))
            && self
                .affinity
                .as_ref()
                .is_none_or(|s| s.matches(&node.name, &node.labels))
    }
}

/// A compiled `metav1.LabelSelector`, as upstream's
/// `LabelSelectorAsSelector` makes it: an unset selector selects nothing,
/// an empty one everything, otherwise every requirement must hold
/// (`matchLabels` pairs are `In` requirements). Only the label operators
/// (`In`, `NotIn`, `Exists`, `DoesNotExist`) are valid here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodSelector {
    /// `None`: selects nothing.
    requirements: Option<Vec<Requirement>>,
}

impl PodSelector {
    /// The selector of an unset `labelSelector`: matches no pod.
    pub fn nothing() -> PodSelector {
        PodSelector { requirements: None }
    }

    /// Compiles a selector; an invalid key, value or operator is an error
    /// (upstream's PreFilter then fails with that error).
    pub fn new(selector: Option<&LabelSelector>) -> Result<PodSelector, String> {
        let Some(sel) = selector else {
            return Ok(PodSelector::nothing());
        };
        let mut requirements = Vec::new();
        for (k, v) in &sel.match_labels {
            requirements.push(parse_pod_requirement(&SelectorRequirement {
                key: k.clone(),
                operator: "In".into(),
                values: vec![v.clone()],
            })?);
        }
        for r in &sel.match_expressions {
            requirements.push(parse_pod_requirement(r)?);
        }
        Ok(PodSelector {
            requirements: Some(requirements),
        })
    }

    /// Adds `key In (value)` for each pair (matchLabelKeys merged into the
    /// selector). A selector that selects nothing stays so.
    pub fn and_equal(mut self, pairs: impl IntoIterator<Item = (String, String)>) -> PodSelector {
        if let Some(reqs) = &mut self.requirements {
            for (k, v) in pairs {
                reqs.push(Requirement {
                    key: LabelKey::new(k),
                    op: Op::In(vec![LabelValue::new(v)]),
                });
            }
        }
        self
    }

    /// Adds `key NotIn (value)` for each pair (mismatchLabelKeys).
    pub fn and_not_equal(
        mut self,
        pairs: impl IntoIterator<Item = (String, String)>,
    ) -> PodSelector {
        if let Some(reqs) = &mut self.requirements {
            for (k, v) in pairs {
                reqs.push(Requirement {
                    key: LabelKey::new(k),
                    op: Op::NotIn(vec![LabelValue::new(v)]),
                });
            }
        }
        self
    }

    /// Whether this is the selector of an unset `labelSelector`.
    pub fn is_nothing(&self) -> bool {
        self.requirements.is_none()
    }

    /// Whether this is the selector of an empty `labelSelector` (`{}`).
    pub fn is_everything(&self) -> bool {
        self.requirements.as_ref().is_some_and(Vec::is_empty)
    }

    pub fn matches(&self, labels: &Labels) -> bool {
        match &self.requirements {
            None => false,
            Some(reqs) => reqs.iter().all(|r| r.matches(labels.get_value(&r.key))),
        }
    }
}

fn parse_pod_requirement(r: &SelectorRequirement) -> Result<Requirement, String> {
    match r.operator.as_str() {
        "In" | "NotIn" | "Exists" | "DoesNotExist" => parse_label_requirement(r),
        other => Err(format!("{other:?} is not a valid label selector operator")),
    }
}

/// A label value: at most 63 characters, empty, or alphanumerics with
/// `-`, `_`, `.` inside.
pub fn is_label_value(v: &str) -> bool {
    if v.is_empty() {
        return true;
    }
    let b = v.as_bytes();
    v.len() <= 63
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// A label key: an optional DNS subdomain prefix and `/`, then a name of
/// 1-63 characters.
pub fn is_qualified_name(key: &str) -> bool {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    if let Some(p) = prefix {
        let label_ok = |l: &str| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        };
        if p.is_empty() || p.len() > 253 || !p.split('.').all(label_ok) {
            return false;
        }
    }
    !name.is_empty() && is_label_value(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(key: &str, op: &str, values: &[&str]) -> SelectorRequirement {
        SelectorRequirement {
            key: key.into(),
            operator: op.into(),
            values: values.iter().map(|v| v.to_string()).collect(),
        }
    }

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs.iter().map(|(k, v)| (*k, *v)).collect()
    }

    fn term(exprs: Vec<SelectorRequirement>) -> SelectorTerm {
        SelectorTerm {
            match_expressions: exprs,
            match_fields: vec![],
        }
    }

    #[test]
    fn operators() {
        let l = labels(&[("zone", "a"), ("gen", "5")]);
        let m = |r| NodeSelector::new(&[term(vec![r])]).matches("n", &l);
        assert!(m(req("zone", "In", &["a", "b"])));
        assert!(!m(req("zone", "NotIn", &["a"])));
        assert!(m(req("missing", "NotIn", &["a"])));
        assert!(m(req("zone", "Exists", &[])));
        assert!(m(req("missing", "DoesNotExist", &[])));
        assert!(m(req("gen", "Gt", &["4"])));
        assert!(!m(req("gen", "Lt", &["5"])));
        assert!(
            !m(req("zone", "Gt", &["1"])),
            "non-integer label never matches Gt"
        );
        assert!(
            !m(req("zone", "Bogus", &["a"])),
            "invalid operator ignores the term"
        );
        assert!(
            !m(req("gen", "Gt", &["x"])),
            "invalid Gt value ignores the term"
        );
        assert!(!m(req("zone", "In", &[])), "In needs values");
        assert!(
            !m(req("gen", "Gt", &["-5"])),
            "Gt values must be label values too"
        );
    }

    #[test]
    fn terms_or_requirements_and_empty_term_matches_nothing() {
        let l = labels(&[("zone", "a")]);
        let s = NodeSelector::new(&[
            term(vec![req("zone", "In", &["b"])]),
            term(vec![
                req("zone", "In", &["a"]),
                req("x", "DoesNotExist", &[]),
            ]),
        ]);
        assert!(s.matches("n", &l));
        assert!(!NodeSelector::new(&[term(vec![])]).matches("n", &l));
        assert!(!NodeSelector::new(&[]).matches("n", &l));
    }

    #[test]
    fn match_fields_on_name() {
        let t = SelectorTerm {
            match_expressions: vec![],
            match_fields: vec![req("metadata.name", "In", &["n1"])],
        };
        let s = NodeSelector::new(&[t]);
        assert!(s.matches("n1", &Labels::default()));
        assert!(!s.matches("n2", &Labels::default()));
        let two = SelectorTerm {
            match_expressions: vec![],
            match_fields: vec![req("metadata.name", "In", &["n1", "n2"])],
        };
        assert!(!NodeSelector::new(&[two]).matches("n1", &Labels::default()));
    }

    #[test]
    fn node_selector_and_affinity_both_apply() {
        let pod = Pod {
            node_selector: labels(&[("disk", "ssd")]),
            required_node_affinity: Some(vec![term(vec![req("zone", "In", &["a"])])]),
            ..Default::default()
        };
        let a = RequiredNodeAffinity::of(&pod);
        let node = |pairs: &[(&str, &str)]| Node {
            name: "n".into(),
            labels: labels(pairs),
            ..Default::default()
        };
        assert!(a.matches(&node(&[("disk", "ssd"), ("zone", "a")])));
        assert!(!a.matches(&node(&[("zone", "a")])));
        assert!(!a.matches(&node(&[("disk", "ssd"), ("zone", "b")])));
    }
}

#[cfg(test)]
mod pod_selector_tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs.iter().map(|(k, v)| (*k, *v)).collect()
    }

    #[test]
    fn unset_selects_nothing_and_empty_selects_everything() {
        let l = labels(&[("app", "web")]);
        assert!(!PodSelector::new(None).unwrap().matches(&l));
        assert!(
            PodSelector::new(Some(&LabelSelector::default()))
                .unwrap()
                .matches(&l)
        );
        assert!(
            PodSelector::new(Some(&LabelSelector::default()))
                .unwrap()
                .matches(&Labels::default())
        );
        // Merging pairs into "nothing" keeps it nothing.
        let merged = PodSelector::nothing().and_equal([("app".into(), "web".into())]);
        assert!(merged.is_nothing() && !merged.matches(&l));
    }

    #[test]
    fn requirements_are_anded_and_checked() {
        let sel = LabelSelector {
            match_labels: vec![("app".into(), "web".into())],
            match_expressions: vec![SelectorRequirement {
                key: "tier".into(),
                operator: "NotIn".into(),
                values: vec!["db".into()],
            }],
        };
        let s = PodSelector::new(Some(&sel)).unwrap();
        assert!(s.matches(&labels(&[("app", "web")])));
        assert!(!s.matches(&labels(&[("app", "web"), ("tier", "db")])));
        assert!(!s.matches(&labels(&[("app", "api")])));
        let s = s.and_equal([("hash".into(), "1".into())]);
        assert!(!s.matches(&labels(&[("app", "web")])));
        assert!(s.matches(&labels(&[("app", "web"), ("hash", "1")])));
        let s = s.and_not_equal([("tenant".into(), "a".into())]);
        assert!(!s.matches(&labels(&[("app", "web"), ("hash", "1"), ("tenant", "a")])));
        for (op, values) in [
            ("Gt", vec!["1"]),
            ("In", vec![]),
            ("Exists", vec!["x"]),
            ("Has", vec![]),
        ] {
            let bad = LabelSelector {
                match_labels: vec![],
                match_expressions: vec![SelectorRequirement {
                    key: "k".into(),
                    operator: op.into(),
                    values: values.into_iter().map(String::from).collect(),
                }],
            };
            assert!(PodSelector::new(Some(&bad)).is_err(), "{op}");
        }
        let bad_key = LabelSelector {
            match_labels: vec![("bad key".into(), "v".into())],
            match_expressions: vec![],
        };
        assert!(PodSelector::new(Some(&bad_key)).is_err());
    }
}
