//! The knobs of the filter phase, as plain data: the engine reads them,
//! the configuration file and the CLI flags set them.

use anyhow::Result;

/// The most worker threads a cycle may use. kube-scheduler sets no bound,
/// but each worker is an OS thread started with the engine: thousands take
/// seconds to start and gain nothing (a cycle runs at most one task per
/// core).
pub const MAX_PARALLELISM: usize = 256;

/// A worker count in 1..=[`MAX_PARALLELISM`].
pub fn check_parallelism(p: usize) -> Result<usize> {
    if !(1..=MAX_PARALLELISM).contains(&p) {
        anyhow::bail!("{p} is out of range: use 1 to {MAX_PARALLELISM} worker threads");
    }
    Ok(p)
}

/// The knobs of the filter phase, named as in KubeSchedulerConfiguration.
#[derive(Clone, Debug)]
pub struct EngineOptions {
    /// 0 = adaptive (`max(5, 50 - n/125)`), else 1..=100.
    pub percentage_of_nodes_to_score: u32,
    /// Worker threads evaluating nodes (kube-scheduler's default: 16).
    pub parallelism: usize,
    /// Run every filter on every node instead of stopping at the first
    /// rejection; the node's reasons are then those of all failing filters.
    pub always_check_all_predicates: bool,
    /// Check only the nodes a PreFilter result names (kube-scheduler).
    /// Volcano's predicates run Filter on every node: batch mode turns
    /// this off.
    pub use_pre_filter_result: bool,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            percentage_of_nodes_to_score: 0,
            parallelism: 16,
            always_check_all_predicates: false,
            use_pre_filter_result: true,
        }
    }
}
