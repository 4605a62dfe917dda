//! LabelMatch: prefer the nodes that carry the labels a pod asks for.
//!
//! A pod lists node labels it prefers in its annotation
//! `sift.io/preferred-labels`, separated by commas: `key=value` (the node
//! has the label with that value) or `key` (the node has the label, any
//! value). Spaces and tabs around a term, its key and its value are
//! ignored (only those, so that every language trims alike), and so are
//! empty terms; a term splits at its first `=`. A node's raw
//! score is the number of terms it matches; NormalizeScore scales them to
//! 0..=100 as kube-scheduler's `DefaultNormalizeScore` does
//! (`score * 100 / max`, integer division; all zero stays zero). A pod
//! without terms is skipped at PreScore.
//!
//! This is the reference implementation of the scorer every example
//! language in `plugins/examples/` implements against the same cases
//! (`tests/cases/Simulate/LabelMatch`).

use sift_sdk::{
    Args, ClusterView, ExtensionPoints, MAX_NODE_SCORE, Node, NodeFields, Plugin, Pod, PreScore,
    Status, export_plugin,
};

pub const ANNOTATION: &str = "sift.io/preferred-labels";

pub struct LabelMatch;

/// A preferred label: its key, and the value it must have (`None`: any).
pub struct Term {
    key: String,
    value: Option<String>,
}

/// The pod's terms, parsed once per pod.
#[derive(Default)]
pub struct Terms(Vec<Term>);

/// The terms of an annotation value, in order.
pub fn parse(annotation: &str) -> Vec<Term> {
    let trim = |s: &str| s.trim_matches([' ', '\t']).to_string();
    annotation
        .split(',')
        .map(|t| t.trim_matches([' ', '\t']))
        .filter(|t| !t.is_empty())
        .map(|t| match t.split_once('=') {
            Some((k, v)) => Term {
                key: trim(k),
                value: Some(trim(v)),
            },
            None => Term {
                key: t.to_string(),
                value: None,
            },
        })
        .collect()
}

impl Plugin for LabelMatch {
    const NAME: &'static str = "LabelMatch";
    const EXTENSION_POINTS: ExtensionPoints = ExtensionPoints::SCORE;
    const NODE_FIELDS: NodeFields = NodeFields::LABELS;
    type PodState = Terms;

    fn new(_: Args) -> Result<Self, String> {
        Ok(LabelMatch)
    }

    fn pre_score(&self, pod: &Pod, _: &[&Node], _: &dyn ClusterView) -> PreScore<Terms> {
        let terms = pod
            .annotations
            .get(ANNOTATION)
            .map(parse)
            .unwrap_or_default();
        if terms.is_empty() {
            return PreScore::Skip;
        }
        PreScore::Proceed(Terms(terms))
    }

    fn score(&self, _: &Pod, terms: &Terms, node: &Node) -> Result<i64, Status> {
        let matched = terms
            .0
            .iter()
            .filter(|t| match (node.labels.get(&t.key), &t.value) {
                (Some(have), Some(want)) => have == want,
                (Some(_), None) => true,
                (None, _) => false,
            });
        Ok(matched.count() as i64)
    }

    fn normalize_scores(&self, _: &Pod, _: &Terms, scores: &mut [i64]) -> Result<(), Status> {
        let max = scores.iter().copied().max().unwrap_or(0);
        if max > 0 {
            for s in scores.iter_mut() {
                *s = *s * MAX_NODE_SCORE / max;
            }
        }
        Ok(())
    }
}

export_plugin!(LabelMatch);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_are_trimmed_and_empty_ones_dropped() {
        let t = parse(" zone = a ,,\tgpu ,");
        let got: Vec<(&str, Option<&str>)> = t
            .iter()
            .map(|t| (t.key.as_str(), t.value.as_deref()))
            .collect();
        assert_eq!(got, [("zone", Some("a")), ("gpu", None)]);
    }
}
