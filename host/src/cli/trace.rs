//! `sift trace`: import a published trace as a cluster and a workload.

use crate::input::{gangs, openb, workload};
use crate::simulate::fgd_replay;
use anyhow::{Result, anyhow, bail};
use clap::{Subcommand, ValueEnum};
use std::path::{Path, PathBuf};
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
    ///
    /// With `--replay fgd --seed S`, the workload is instead the FGD
    /// paper's replay of the trace (see `--replay`), with the typical pods
    /// and one sift configuration per policy beside it.
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
        /// Write the FGD paper's replay of the trace (Weng et al., USENIX
        /// ATC '23) instead of its timeline, with typical-pods.json and
        /// configs/<policy>.yaml (see --help).
        ///
        /// fgd: GPU nodes only; pods sorted by name, shuffled by --seed,
        /// tuned to --tune x the GPU capacity (clones of random pods,
        /// <name>-tuned-<i>, appended; or random pods removed). Every pod
        /// arrives once, in file order (no times; creationTimestamps one
        /// second apart, priority 0), and stays. Beside cluster.json and
        /// workload.ndjson: typical-pods.json (FGD's pod classes and
        /// frequencies, from the untuned trace, cut at 95%) and
        /// configs/<policy>.yaml, one sift configuration per policy: every
        /// node scored, the default filters plus GpuShare, every default
        /// scorer off and the policy's scorer alone at weight 1000, and
        /// GpuShare's Reserve choosing GPU ids as the paper's run scripts
        /// pair them:
        ///
        ///   random.yaml             RandomScore         gpuSelection random
        ///   dot-prod.yaml           DotProdScore        gpuSelection best
        ///   gpu-clustering.yaml     GpuClusteringScore  gpuSelection best
        ///   gpu-packing.yaml        GpuPackingScore     gpuSelection best
        ///   best-fit.yaml           BestFitScore        gpuSelection best
        ///   fgd.yaml                FGDScore            gpuSelection fgd
        ///   default-scheduler.yaml  NodeResourcesFit (LeastAllocated) and
        ///                           NodeResourcesBalancedAllocation, weight 1
        ///                           each, gpuSelection best (not in the paper)
        ///
        /// RandomScore and gpuSelection random draw from the seed and each
        /// pod's namespace/name. The paper's simulator breaks score ties by
        /// the smallest node name; its nodes are the CSV's GPU rows in
        /// order, as cluster.json lists them, so ties must go to the first
        /// node in node order (`sift simulate` without --seed). The paper
        /// tries each pod once: `sift simulate --no-retry`, e.g.
        ///   sift simulate --cluster OUT/cluster.json --workload
        ///     OUT/workload.ndjson -c OUT/configs/fgd.yaml --no-retry
        #[arg(long, value_enum, verbatim_doc_comment)]
        replay: Option<Replay>,
        /// The replay's seed (the paper uses 42 to 51). Required with
        /// --replay.
        #[arg(long, requires = "replay")]
        seed: Option<u64>,
        /// Tune the replay's total GPU demand to this multiple of the
        /// cluster's GPU milli (the paper: 1.3); 0 keeps the trace's pods.
        #[arg(long, default_value_t = 1.3, requires = "replay")]
        tune: f64,
        /// For `sift simulate --mode batch`: group the pods into gangs of
        /// MIN-MAX pods (e.g. 2-8) and write OUT/batch.json with their
        /// PodGroups (minMember = size) and one Queue per QoS class (weight
        /// 1). Pods of one shape (requests, GPU need, QoS) fill one gang at
        /// a time, in arrival order; the g-th gang wants MIN + g mod
        /// (MAX-MIN+1) pods; a gang still short at the end keeps the pods
        /// it has. Pass OUT/batch.json as a --cluster file.
        #[arg(long, value_name = "MIN-MAX")]
        gangs: Option<String>,
    },
}

/// A replay of a trace other than its own timeline.
#[derive(Clone, Copy, ValueEnum)]
pub(super) enum Replay {
    /// The FGD paper's simulator replay.
    Fgd,
}

pub(super) fn trace(c: TraceCommand) -> Result<ExitCode> {
    match c {
        TraceCommand::Openb {
            nodes,
            pods,
            out,
            gpu_nodes_only,
            replay,
            seed,
            tune,
            gangs,
        } => {
            let gangs = gangs.as_deref().map(gangs::parse_range).transpose()?;
            if let Some(Replay::Fgd) = replay {
                let Some(seed) = seed else {
                    bail!("--replay fgd needs --seed (the paper uses 42 to 51)");
                };
                if !tune.is_finite() || tune < 0.0 {
                    bail!("--tune must be 0 (no tuning) or positive, got {tune}");
                }
                return write_fgd_replay(&nodes, &pods, &out, seed, tune, gangs);
            }
            let mut t = openb::import(&nodes, &pods, gpu_nodes_only)?;
            let grouped =
                gangs.map(|(min, max)| gangs::group(&mut t.events, min, max, openb::QOS_LABEL));
            write_trace(&out, &t)?;
            if let Some(g) = grouped {
                write_gangs(&out, &g)?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn create_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| anyhow!("cannot create {}: {e}", dir.display()))
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).map_err(|e| anyhow!("cannot write {}: {e}", path.display()))
}

/// Writes cluster.json and workload.ndjson and prints what they hold.
fn write_trace(out: &Path, t: &openb::Trace) -> Result<()> {
    create_dir(out)?;
    let cluster = out.join("cluster.json");
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": t.nodes});
    write_file(&cluster, &serde_json::to_vec_pretty(&list)?)?;
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
    Ok(())
}

/// Writes OUT/batch.json: the gangs' PodGroups and Queues.
fn write_gangs(out: &Path, g: &gangs::Gangs) -> Result<()> {
    let path = out.join("batch.json");
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": g.objects});
    write_file(&path, &serde_json::to_vec_pretty(&list)?)?;
    println!(
        "{} pods in {} gangs (PodGroups and Queues) -> {}",
        g.pods,
        g.groups,
        path.display()
    );
    Ok(())
}

/// Writes the FGD paper's replay: the trace files, typical-pods.json and
/// configs/<policy>.yaml, and prints what they hold.
fn write_fgd_replay(
    nodes: &Path,
    pods: &Path,
    out: &Path,
    seed: u64,
    tune: f64,
    gang_sizes: Option<(usize, usize)>,
) -> Result<ExitCode> {
    let mut r = fgd_replay::import_fgd_replay(nodes, pods, seed, tune)?;
    let grouped =
        gang_sizes.map(|(min, max)| gangs::group(&mut r.trace.events, min, max, openb::QOS_LABEL));
    write_trace(out, &r.trace)?;
    if let Some(g) = grouped {
        write_gangs(out, &g)?;
    }
    if r.target_gpu_milli > 0.0 {
        println!(
            "replay: seed {seed}, {} trace pods shuffled, tuned to {tune} x capacity ({:.0} milli-GPU): {} clones appended, {} pods removed",
            r.original_pods, r.target_gpu_milli, r.clones, r.removed
        );
    } else {
        println!(
            "replay: seed {seed}, {} trace pods shuffled, not tuned",
            r.original_pods
        );
    }
    let typical = out.join("typical-pods.json");
    let args = r.typical_pod_args();
    write_file(&typical, &serde_json::to_vec_pretty(&args)?)?;
    println!(
        "{} typical pod classes (FGD's, from the untuned trace) -> {}",
        args.len(),
        typical.display()
    );
    let dir = out.join("configs");
    create_dir(&dir)?;
    let configs = fgd_replay::fgd_replay_configs(&r.typical, seed)?;
    for (name, yaml) in &configs {
        write_file(&dir.join(format!("{name}.yaml")), yaml.as_bytes())?;
    }
    let names: Vec<&str> = configs.iter().map(|(n, _)| *n).collect();
    println!(
        "{} configs -> {}/{{{}}}.yaml",
        configs.len(),
        dir.display(),
        names.join(",")
    );
    Ok(ExitCode::SUCCESS)
}
