//! Volcano's `predicates` and `nodeorder` plugins, which sift does not
//! re-implement: they switch on sift's own filter and score plugins (Wasm
//! or native) inside two engine `Scheduler`s, allocate's with the
//! predicate error cache and the idle check in front, backfill's without.

use super::error_cache::ErrorCache;
use super::idle_fit::IdleFit;
use super::node_rule::RuleFilter;
use super::pod_number::PodNumber;
use crate::config::EngineOptions;
use crate::config::batch::Session as SessionConfig;
use crate::engine::Engine;
use crate::engine::plugin::ConfiguredPlugin;
use crate::engine::schedule::{Scheduler, TieBreak, WeightedScorer};
use anyhow::Result;
use std::sync::Arc;

/// The session's predicates and node order, as two schedulers.
pub struct Schedulers {
    /// allocate's: the idle check, then the predicates.
    pub allocate: Scheduler,
    /// backfill's: the predicates only (best-effort pods ask for nothing).
    pub backfill: Scheduler,
    /// allocate's predicate error cache, the first of its filters.
    pub error_cache: Arc<ErrorCache>,
}

impl Schedulers {
    /// What the cluster state must keep for the plugins: allocate's
    /// plugins are a superset of backfill's.
    pub fn main(&self) -> &Scheduler {
        &self.allocate
    }
}

/// Builds the schedulers: `predicates` (when configured, `enabledPredicate`
/// on) is the pod-count check and `filters` (Volcano's predicates, see
/// [`crate::config::Config::batch_filter_plugins`]); `nodeorder` (when
/// configured) is `scorers`. Volcano runs Filter on every node, so the
/// engines ignore PreFilter results.
pub fn schedulers(
    filters: Vec<ConfiguredPlugin>,
    scorers: Vec<WeightedScorer>,
    config: &SessionConfig,
    mut options: EngineOptions,
    tie_break: TieBreak,
) -> Result<Schedulers> {
    options.use_pre_filter_result = false;
    let plugin = |name: &str| config.tiers.iter().flatten().find(|p| p.name == name);
    let mut predicates = Vec::new();
    if plugin("predicates").is_some_and(|p| p.enabled_predicate.unwrap_or(true)) {
        predicates.push(ConfiguredPlugin {
            plugin: Arc::new(RuleFilter(PodNumber)),
            ignorable: false,
        });
        predicates.extend(filters);
    }
    let scorers = if config.node_order.is_some() {
        scorers
    } else {
        Vec::new()
    };
    let error_cache = Arc::new(ErrorCache::default());
    let mut allocate = vec![
        ConfiguredPlugin {
            plugin: Arc::new(RuleFilter(error_cache.clone())),
            ignorable: false,
        },
        ConfiguredPlugin {
            plugin: Arc::new(RuleFilter(IdleFit)),
            ignorable: false,
        },
    ];
    allocate.extend(predicates.iter().cloned());
    let allocate_engine = Engine::new(allocate, options.clone())?;
    Ok(Schedulers {
        allocate: Scheduler::new(allocate_engine, scorers.clone(), tie_break),
        backfill: Scheduler::new(Engine::new(predicates, options)?, scorers, tie_break),
        error_cache,
    })
}
