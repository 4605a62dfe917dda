//! `sift bench`: its flags (clap), converted to [`crate::bench::Options`].

use crate::bench::Options;
use std::path::PathBuf;

// No doc comment on the struct: clap would take it for the subcommand's
// about text, which the `Command` enum gives.
#[derive(clap::Args)]
pub struct BenchArgs {
    /// Cluster sizes (nodes), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1000,5000,15000")]
    pub nodes: Vec<usize>,
    /// percentageOfNodesToScore values to run (0 = adaptive), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "0,100")]
    pub percentage: Vec<u32>,
    /// Pods to place per measurement (fewer if --seconds runs out first).
    #[arg(long, default_value_t = 5000)]
    pub pods: usize,
    /// Time budget per measurement.
    #[arg(long, default_value_t = 3.0)]
    pub seconds: f64,
    /// Worker threads (default: kube-scheduler's 16).
    #[arg(long, default_value_t = 16)]
    pub parallelism: usize,
    /// Directory of plugin components (default: the bundled plugins).
    #[arg(long = "plugins", value_name = "DIR")]
    pub plugins_dir: Option<PathBuf>,
    /// sift configuration: which filters run (default: the default
    /// filters), their arguments, limits.
    #[arg(long, short = 'c')]
    pub config: Option<PathBuf>,
    /// Skip the Wasm runs (native baseline only).
    #[arg(long, conflicts_with = "wasm_only")]
    pub native_only: bool,
    /// Skip the native runs (for profiling the Wasm path).
    #[arg(long)]
    pub wasm_only: bool,
    /// Instead, write the synthetic cluster of the first --nodes size as a
    /// `kubectl get nodes,pods -A -o json` style List to this file.
    #[arg(long, value_name = "FILE")]
    pub write_cluster: Option<PathBuf>,
    /// Instead, measure the contract designs: per node, one batched call
    /// over a synced node table versus one call carrying the node record.
    #[arg(long)]
    pub contract: bool,
    /// Instead, measure the cluster view's per-cycle cost for a pod with a
    /// zone spread constraint, one with hostname anti-affinity and one
    /// with neither, in the built design (synced into the component) and
    /// the alternative (host accessors, emulated), per --nodes size (10
    /// bound pods per node).
    #[arg(long)]
    pub cluster_view: bool,
    /// Instead, measure whole scheduling cycles (filters, PreScore, Score,
    /// NormalizeScore, host selection; pods not placed) on the synthetic
    /// cluster with bound pods and node images, with a pod mix every
    /// default scorer reads: pods/s native and Wasm per --nodes size for
    /// two score profiles in one run, the one before issue 34
    /// (NodeResourcesFit and NodeResourcesBalancedAllocation, weight 1
    /// each) and the complete default (or --config's); then each plugin's
    /// µs per pod in the complete profile, called directly on the same
    /// nodes (filters: PreFilter + Filter, scores: PreScore + Score +
    /// NormalizeScore). percentageOfNodesToScore is the config's
    /// (adaptive by default), e.g. `--scoring --nodes 5000`.
    #[arg(long, conflicts_with_all = ["percentage", "contract", "cluster_view", "serve", "plugin", "write_cluster"])]
    pub scoring: bool,
    /// Instead, benchmark `sift serve` on loopback: requests/s and p50/p99
    /// latency per --nodes size in both nodeCacheCapable modes, and plugin
    /// swap latency under load (e.g. `--serve --nodes 500,5000`).
    #[arg(long)]
    pub serve: bool,
    /// Instead, measure one plugin component: size, first compile, cached
    /// load, instantiation, µs per pod over the first --nodes size.
    #[arg(long, value_name = "FILE")]
    pub plugin: Option<PathBuf>,
    /// Concurrent clients for --serve.
    #[arg(long, default_value_t = 4)]
    pub clients: usize,
}

impl From<BenchArgs> for Options {
    fn from(a: BenchArgs) -> Options {
        Options {
            nodes: a.nodes,
            percentage: a.percentage,
            pods: a.pods,
            seconds: a.seconds,
            parallelism: a.parallelism,
            plugins_dir: a.plugins_dir,
            config: a.config,
            native_only: a.native_only,
            wasm_only: a.wasm_only,
            write_cluster: a.write_cluster,
            contract: a.contract,
            cluster_view: a.cluster_view,
            scoring: a.scoring,
            serve: a.serve,
            plugin: a.plugin,
            clients: a.clients,
        }
    }
}
