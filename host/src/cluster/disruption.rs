//! PodDisruptionBudgets as preemption reads them: how many more pods each
//! budget lets go (`status.disruptionsAllowed`) and which pods the API
//! server already counted (`status.disruptedPods`). The scheduler never
//! writes a budget; the disruption controller keeps its status, so a
//! simulation takes each status as given.

use crate::input::kube;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use sift_sdk::{Labels, PodSelector};
use std::collections::{BTreeMap, BTreeSet};

/// One budget, compiled.
#[derive(Clone, Debug, PartialEq)]
struct Budget {
    namespace: String,
    /// `None`: a selector that is unset, empty or invalid, which matches
    /// no pod (upstream skips such a budget).
    selector: Option<PodSelector>,
    allowed: i32,
    /// Pod names whose eviction the API server has processed.
    disrupted: BTreeSet<String>,
}

/// A bound pod preemption considers evicting, as budgets see it.
pub struct Candidate<'a> {
    pub namespace: &'a str,
    pub name: &'a str,
    pub labels: &'a Labels,
}

/// The cluster's PodDisruptionBudgets by "namespace/name".
#[derive(Clone, Debug, Default)]
pub struct Budgets {
    by_key: BTreeMap<String, Budget>,
}

impl Budgets {
    /// Adds or replaces a budget; whether anything changed.
    pub fn upsert(&mut self, pdb: &PodDisruptionBudget) -> bool {
        let namespace = pdb.metadata.namespace.clone().unwrap_or_default();
        let key = format!(
            "{namespace}/{}",
            pdb.metadata.name.as_deref().unwrap_or_default()
        );
        let selector = pdb
            .spec
            .as_ref()
            .and_then(|s| s.selector.as_ref())
            .map(kube::label_selector)
            .and_then(|s| PodSelector::new(Some(&s)).ok())
            .filter(|s| !s.is_everything());
        let status = pdb.status.as_ref();
        let budget = Budget {
            namespace,
            selector,
            allowed: status.map_or(0, |s| s.disruptions_allowed),
            disrupted: status
                .and_then(|s| s.disrupted_pods.as_ref())
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default(),
        };
        if self.by_key.get(&key) == Some(&budget) {
            return false;
        }
        self.by_key.insert(key, budget);
        true
    }

    /// Forgets a budget by "namespace/name"; whether it was known.
    pub fn remove(&mut self, key: &str) -> bool {
        self.by_key.remove(key).is_some()
    }

    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }

    /// Which of `pods` (most important first) evicting all of them would
    /// violate a budget, as upstream's `filterPodsWithPDBViolation` counts:
    /// each pod spends one disruption of every budget that selects it and
    /// has not already counted it, and a pod that takes a budget below
    /// zero is violating. Order matters: the more important pods spend
    /// the budget first.
    pub fn violating(&self, pods: &[Candidate<'_>]) -> Vec<bool> {
        let mut allowed: Vec<i32> = self.by_key.values().map(|b| b.allowed).collect();
        pods.iter()
            .map(|pod| {
                // A pod without labels matches no budget.
                if pod.labels.is_empty() {
                    return false;
                }
                let mut violated = false;
                for (budget, left) in self.by_key.values().zip(allowed.iter_mut()) {
                    let selects = budget.namespace == pod.namespace
                        && budget
                            .selector
                            .as_ref()
                            .is_some_and(|s| s.matches(pod.labels));
                    if !selects || budget.disrupted.contains(pod.name) {
                        continue;
                    }
                    *left -= 1;
                    if *left < 0 {
                        violated = true;
                    }
                }
                violated
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pdb(
        name: &str,
        labels: &[(&str, &str)],
        allowed: i32,
        disrupted: &[&str],
    ) -> PodDisruptionBudget {
        let disrupted: serde_json::Map<String, serde_json::Value> = disrupted
            .iter()
            .map(|p| (p.to_string(), "2025-01-01T00:00:00Z".into()))
            .collect();
        let match_labels: serde_json::Map<String, serde_json::Value> = labels
            .iter()
            .map(|(k, v)| (k.to_string(), (*v).into()))
            .collect();
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": match_labels}},
            "status": {"disruptionsAllowed": allowed, "disruptedPods": disrupted,
                       "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0},
        }))
        .unwrap()
    }

    fn violating(budgets: &Budgets, pods: &[(&str, &[(&str, &str)])]) -> Vec<bool> {
        let labels: Vec<Labels> = pods
            .iter()
            .map(|(_, l)| {
                Labels::new(
                    l.iter()
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect(),
                )
            })
            .collect();
        let candidates: Vec<Candidate> = pods
            .iter()
            .zip(&labels)
            .map(|((name, _), labels)| Candidate {
                namespace: "default",
                name,
                labels,
            })
            .collect();
        budgets.violating(&candidates)
    }

    #[test]
    fn more_important_pods_spend_the_budget_first() {
        let mut b = Budgets::default();
        assert!(b.upsert(&pdb("foo", &[("app", "foo")], 1, &[])));
        assert!(
            !b.upsert(&pdb("foo", &[("app", "foo")], 1, &[])),
            "unchanged"
        );
        let foo: &[(&str, &str)] = &[("app", "foo")];
        assert_eq!(
            violating(&b, &[("a", foo), ("b", foo), ("c", &[("app", "bar")])]),
            [false, true, false]
        );
    }

    #[test]
    fn pods_the_api_server_already_counted_spend_nothing() {
        let mut b = Budgets::default();
        b.upsert(&pdb("foo", &[("app", "foo")], 1, &["c"]));
        let foo: &[(&str, &str)] = &[("app", "foo")];
        assert_eq!(
            violating(&b, &[("a", foo), ("b", foo), ("c", foo)]),
            [false, true, false]
        );
    }

    #[test]
    fn every_selecting_budget_is_spent_and_empty_selectors_select_nothing() {
        let mut b = Budgets::default();
        b.upsert(&pdb("one", &[("app", "foo")], 1, &[]));
        b.upsert(&pdb("two", &[("tier", "web")], 0, &[]));
        b.upsert(&pdb("all", &[], 0, &[]));
        let both: &[(&str, &str)] = &[("app", "foo"), ("tier", "web")];
        let foo: &[(&str, &str)] = &[("app", "foo")];
        // "two" has nothing to give: the first pod violates it, and has
        // spent "one" too, so the second violates "one".
        assert_eq!(violating(&b, &[("a", both), ("b", foo)]), [true, true]);
        assert_eq!(violating(&b, &[("a", &[])]), [false], "no labels");
        assert!(b.remove("default/two"));
        assert_eq!(violating(&b, &[("a", both), ("b", foo)]), [false, true]);
    }
}
