//! `sift trace`: import a published trace as a cluster and a workload.

use crate::input::{openb, workload};
use anyhow::{Result, anyhow};
use clap::Subcommand;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand)]
pub(super) enum TraceCommand {
    /// The Alibaba openb GPU trace (the FGD paper's data: node list and a
    /// pod list, CSV) as `OUT/cluster.json` (the nodes, as `kubectl get
    /// nodes -o json` prints them) and `OUT/workload.ndjson` (pods
    /// arriving at creation_time and leaving at deletion_time, as watch
    /// events). The mapping to Kubernetes objects is the paper simulator's;
    /// `sift trace openb --help` and ARCHITECTURE.md describe it.
    ///
    /// Pods carry cpu/memory requests, their GPU need as the extended
    /// resource alibabacloud.com/gpu-milli (num_gpu x gpu_milli) and as
    /// annotations (per-GPU milli, GPU count, allowed models), and a
    /// required node affinity on alibabacloud.com/gpu-card-model when the
    /// trace restricts models.
    Openb {
        /// openb_node_list_all_node.csv
        nodes: PathBuf,
        /// openb_pod_list_<name>.csv
        pods: PathBuf,
        /// Output directory (created if missing).
        #[arg(long, short = 'o', default_value = "openb")]
        out: PathBuf,
        /// Leave out CPU-only nodes (the paper's replays use the 1,213 GPU
        /// nodes).
        #[arg(long)]
        gpu_nodes_only: bool,
    },
}

pub(super) fn trace(c: TraceCommand) -> Result<ExitCode> {
    match c {
        TraceCommand::Openb {
            nodes,
            pods,
            out,
            gpu_nodes_only,
        } => {
            let t = openb::import(&nodes, &pods, gpu_nodes_only)?;
            std::fs::create_dir_all(&out)
                .map_err(|e| anyhow!("cannot create {}: {e}", out.display()))?;
            let cluster = out.join("cluster.json");
            let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": t.nodes});
            std::fs::write(&cluster, serde_json::to_vec_pretty(&list)?)
                .map_err(|e| anyhow!("cannot write {}: {e}", cluster.display()))?;
            let events = out.join("workload.ndjson");
            workload::write(&events, &t.events)?;
            let s = &t.summary;
            let capacity = s.gpus * 1000;
            println!(
                "{} nodes ({} with GPUs, {} GPUs) -> {}",
                s.nodes,
                s.gpu_nodes,
                s.gpus,
                cluster.display()
            );
            println!(
                "{} pods ({} with GPUs, {} departing), {} events -> {}",
                s.pods,
                s.gpu_pods,
                s.departures,
                t.events.len(),
                events.display()
            );
            println!(
                "GPU demand: {} milli-GPU, {:.1}% of the nodes' {} milli-GPU",
                s.gpu_milli_demanded,
                if capacity == 0 {
                    0.0
                } else {
                    100.0 * s.gpu_milli_demanded as f64 / capacity as f64
                },
                capacity
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}
