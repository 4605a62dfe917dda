//! One scheduling cycle past the filters: score the feasible nodes, pick
//! the host, reserve on it (kube-scheduler's `schedulePod`,
//! `prioritizeNodes`, `selectHost` and the Reserve step of
//! `schedule_one.go`), extenders' prioritize verbs included. The loop
//! around it (queue, assume, retries) is the simulator's.

use super::annotations::ReservedAnnotations;
use super::extender::extender_scores;
use super::find_nodes::Engine;
use super::outcome::CycleOutcome;
use super::plugin::{Cycle, Plugin, PluginError};
use crate::cluster::Snapshot;
use serde::Serialize;
use sift_sdk::{ExtensionPoints, Pod};
use std::sync::Arc;

/// A score plugin with its configured weight.
#[derive(Clone)]
pub struct WeightedScorer {
    pub plugin: Arc<dyn Plugin>,
    pub weight: i64,
}

/// How ties between the highest totals are broken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TieBreak {
    /// The first in filter-evaluation order: what one upstream worker
    /// returns with `Randomizer` 0 (deterministic; the default).
    #[default]
    NodeOrder,
    /// Uniformly among the tied nodes, from this seed (upstream's
    /// reservoir sampling / random `Randomizer`).
    Random(u64),
}

/// One plugin's final (normalized) scores, before weighting; for an
/// extender, its scores scaled to the plugins' 0..=100.
#[derive(Clone, Debug, Serialize)]
pub struct PluginScores {
    pub plugin: String,
    pub weight: i64,
    /// Aligned with [`Decision::feasible`]; `None` when it skipped.
    pub scores: Option<Vec<i64>>,
}

/// The chosen node and how it won.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    pub node: Arc<str>,
    #[serde(skip)]
    pub slot: u32,
    /// Feasible nodes in filter-evaluation order.
    #[serde(skip)]
    pub feasible: Vec<Arc<str>>,
    /// Weighted totals aligned with `feasible` (empty when one node was
    /// feasible: upstream does not score then).
    #[serde(skip)]
    pub totals: Vec<i64>,
    #[serde(skip)]
    pub by_plugin: Vec<PluginScores>,
    /// Annotations the reserve steps returned: the assumed pod carries them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub annotations: Vec<(String, String)>,
    /// Objects the reserve steps write before the pod is bound, in
    /// reserver order.
    #[serde(skip)]
    pub writes: Vec<PreBindWrite>,
}

/// An object a plugin's PreBind writes, with the plugin (upstream's
/// PreBind errors name it).
#[derive(Clone, Debug)]
pub struct PreBindWrite {
    pub plugin: String,
    pub object: crate::input::ApiObject,
}

/// What scheduling one pod gave.
pub struct Attempt {
    pub filter: CycleOutcome,
    /// The chosen node, when one was feasible and scoring and reserve
    /// succeeded.
    pub decision: Option<Decision>,
    /// A score or reserve plugin failed: the cycle is aborted (upstream:
    /// a scheduling error, the pod is retried).
    pub error: Option<String>,
}

/// The filter engine plus score and reserve plugins.
pub struct Scheduler {
    engine: Engine,
    scorers: Vec<WeightedScorer>,
    reservers: Vec<Arc<dyn Plugin>>,
    tie_break: TieBreak,
    rng: u64,
}

impl Scheduler {
    /// Reserve runs for every filter or score plugin that implements it,
    /// filters first (kube-scheduler enables Reserve per plugin through
    /// `multiPoint`; sift enables it wherever the plugin is enabled).
    pub fn new(engine: Engine, scorers: Vec<WeightedScorer>, tie_break: TieBreak) -> Scheduler {
        let mut reservers: Vec<Arc<dyn Plugin>> = Vec::new();
        let candidates = engine
            .plugins()
            .iter()
            .map(|c| &c.plugin)
            .chain(scorers.iter().map(|s| &s.plugin));
        for p in candidates {
            if p.extension_points().contains(ExtensionPoints::RESERVE)
                && !reservers.iter().any(|r| r.name() == p.name())
            {
                reservers.push(p.clone());
            }
        }
        let rng = match tie_break {
            TieBreak::Random(seed) => seed ^ 0x9e37_79b9_7f4a_7c15,
            TieBreak::NodeOrder => 0,
        };
        Scheduler {
            engine,
            scorers,
            reservers,
            tie_break,
            rng,
        }
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    pub fn scorers(&self) -> &[WeightedScorer] {
        &self.scorers
    }

    /// Pod annotation keys any plugin reads on nodes.
    pub fn pod_annotation_keys(&self) -> Vec<String> {
        let mut keys = self.engine.pod_annotation_keys();
        keys.extend(
            self.scorers
                .iter()
                .flat_map(|s| s.plugin.pod_annotation_keys().iter().cloned()),
        );
        keys.sort();
        keys.dedup();
        keys
    }

    /// Filters, scores, selects and reserves for `pod` on `snapshot`.
    pub fn schedule(&mut self, snapshot: &Arc<Snapshot>, pod: Pod) -> Attempt {
        let filter = self.engine.find_nodes_that_fit(snapshot, pod.clone());
        if filter.error.is_some() || filter.feasible.is_empty() {
            return Attempt {
                filter,
                decision: None,
                error: None,
            };
        }
        let cycle = Cycle::new(pod, snapshot.clone());
        let slots = filter.feasible.clone();
        let feasible: Vec<Arc<str>> = filter.feasible_nodes().cloned().collect();
        match self.decide(&cycle, feasible, slots) {
            Ok(decision) => Attempt {
                filter,
                decision: Some(decision),
                error: None,
            },
            Err(e) => Attempt {
                filter,
                decision: None,
                error: Some(e.to_string()),
            },
        }
    }

    fn decide(
        &mut self,
        cycle: &Cycle,
        feasible: Vec<Arc<str>>,
        slots: Vec<u32>,
    ) -> Result<Decision, PluginError> {
        let (index, totals, by_plugin) = if slots.len() == 1 {
            // Upstream returns a single feasible node without scoring.
            (0, Vec::new(), Vec::new())
        } else {
            let mut totals = vec![0i64; slots.len()];
            let mut by_plugin = self.plugin_scores(cycle, &slots)?;
            for s in &by_plugin {
                if let Some(scores) = &s.scores {
                    for (t, v) in totals.iter_mut().zip(scores) {
                        *t = t.saturating_add(v.saturating_mul(s.weight));
                    }
                }
            }
            if !self.engine.extenders().is_empty() {
                let (extra, rows) = extender_scores(self.engine.extenders(), cycle, &feasible);
                for (t, v) in totals.iter_mut().zip(extra) {
                    *t = t.saturating_add(v);
                }
                by_plugin.extend(rows.into_iter().map(|r| PluginScores {
                    plugin: r.extender,
                    weight: r.weight,
                    scores: Some(r.scores),
                }));
            }
            (self.select(&totals), totals, by_plugin)
        };
        let slot = slots[index];
        let mut writes = Vec::new();
        let annotations = if self.reservers.is_empty() {
            Vec::new()
        } else {
            let mut annotations = ReservedAnnotations::for_pod(&cycle.pod);
            for r in &self.reservers {
                let reservation = r.reserve(cycle, slot)?;
                annotations.add(r.name(), &cycle.pod, reservation.annotations)?;
                writes.extend(reservation.writes.into_iter().map(|object| PreBindWrite {
                    plugin: r.name().to_string(),
                    object,
                }));
            }
            annotations.into_list()
        };
        Ok(Decision {
            node: feasible[index].clone(),
            slot,
            feasible,
            totals,
            by_plugin,
            annotations,
            writes,
        })
    }

    /// Each score plugin's final scores over `slots`, in configured order.
    fn plugin_scores(
        &self,
        cycle: &Cycle,
        slots: &[u32],
    ) -> Result<Vec<PluginScores>, PluginError> {
        self.scorers
            .iter()
            .map(|s| {
                Ok(PluginScores {
                    plugin: s.plugin.name().to_string(),
                    weight: s.weight,
                    scores: s.plugin.score(cycle, slots)?,
                })
            })
            .collect()
    }

    /// Filters `pod`, then scores every feasible node with every score
    /// plugin, even a single one (which [`Scheduler::schedule`] would not
    /// score): what upstream's scoring tests check, node by node.
    pub fn score_feasible(
        &mut self,
        snapshot: &Arc<Snapshot>,
        pod: Pod,
    ) -> Result<(Vec<Arc<str>>, Vec<PluginScores>), String> {
        let filter = self.engine.find_nodes_that_fit(snapshot, pod.clone());
        if let Some(e) = &filter.error {
            return Err(e.to_string());
        }
        let feasible: Vec<Arc<str>> = filter.feasible_nodes().cloned().collect();
        if feasible.is_empty() {
            return Ok((feasible, Vec::new()));
        }
        let cycle = Cycle::new(pod, snapshot.clone());
        let scores = self
            .plugin_scores(&cycle, &filter.feasible)
            .map_err(|e| e.to_string())?;
        Ok((feasible, scores))
    }

    /// The index of the highest total; ties as configured.
    fn select(&mut self, totals: &[i64]) -> usize {
        let best = totals.iter().copied().max().unwrap_or(0);
        match self.tie_break {
            TieBreak::NodeOrder => totals.iter().position(|t| *t == best).unwrap_or(0),
            TieBreak::Random(_) => {
                // Reservoir sampling over the maxima, as upstream's selectHost.
                let mut chosen = 0;
                let mut seen = 0u64;
                for (i, t) in totals.iter().enumerate() {
                    if *t == best {
                        seen += 1;
                        if self.next_random().is_multiple_of(seen) {
                            chosen = i;
                        }
                    }
                }
                chosen
            }
        }
    }

    /// splitmix64: a seeded, portable sequence.
    fn next_random(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::EngineOptions;

    fn scheduler(tie: TieBreak) -> Scheduler {
        let engine = Engine::new(Vec::new(), EngineOptions::default()).unwrap();
        Scheduler::new(engine, Vec::new(), tie)
    }

    #[test]
    fn node_order_takes_the_first_maximum() {
        let mut s = scheduler(TieBreak::NodeOrder);
        assert_eq!(s.select(&[3, 7, 7, 1]), 1);
        assert_eq!(s.select(&[0]), 0);
    }

    #[test]
    fn random_ties_stay_among_the_maxima_and_vary() {
        let mut s = scheduler(TieBreak::Random(42));
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..200 {
            let i = s.select(&[5, 9, 1, 9, 9]);
            assert!([1, 3, 4].contains(&i), "{i}");
            seen.insert(i);
        }
        assert_eq!(seen.len(), 3);
    }
}
