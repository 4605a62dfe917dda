//! The Alibaba openb GPU trace (`cluster-trace-gpu-v2023`, the FGD paper's
//! data) as Kubernetes objects and a workload.
//!
//! The mapping follows how the paper's simulator modelled the trace in
//! Kubernetes (its `pod_csv_to_yaml.py` and node YAML):
//!
//! - **Node** `sn`: allocatable = capacity = `cpu_milli` m CPU,
//!   `memory_mib` Mi, 1001 pods; with GPUs, the label
//!   `alibabacloud.com/gpu-card-model: <model>` and the extended resources
//!   `alibabacloud.com/gpu-count: <gpu>` and
//!   `alibabacloud.com/gpu-milli: <1000 × gpu>`.
//! - **Pod** `name` in namespace `default`, one container requesting (and
//!   limited to) `cpu_milli` m and `memory_mib` Mi; with GPUs, the
//!   annotations `alibabacloud.com/gpu-milli` (per GPU: a share of one GPU
//!   below 1000), `alibabacloud.com/gpu-count` and, with a `gpu_spec`,
//!   `alibabacloud.com/gpu-card-model` (the allowed models, `|`-separated),
//!   which a GPU-share plugin reads to place the pod on particular GPUs.
//!   So that the default filters see the GPU need too, the container also
//!   requests `alibabacloud.com/gpu-milli: <num_gpu × gpu_milli>` (a
//!   node-level bound the per-GPU fit implies), and a `gpu_spec` becomes a
//!   required node affinity `In` on the model label. `qos` becomes the label
//!   `sift.io/openb-qos`.
//! - **Events**: the pod arrives at `creation_time` and leaves at
//!   `deletion_time` (seconds); at equal times departures come first. A
//!   pod without a `deletion_time`, or with one equal to its
//!   `creation_time`, stays; one before it is an error. The
//!   `multigpu50` list has no times: its pods arrive in file order and stay.
//!   `pod_phase` and `scheduled_time` (what happened in production) are not
//!   used.
//!
//! # The FGD paper's replay ([`import_fgd_replay`])
//!
//! The paper's simulator does not replay the timeline: on the GPU nodes
//! only, every pod arrives once, in a seeded random order, and stays
//! (`simulation-notes.md` §3.3). [`import_fgd_replay`] prepares that
//! workload with `sift-gpu-share-logic`'s `workload` module: pods sorted by
//! name, shuffled by the seed, then tuned to `tune ×` the cluster's GPU
//! milli (clones of random pods named `<name>-tuned-<i>` appended, or
//! random pods removed). The events carry no times, so pods arrive in file
//! order; every pod has priority 0 and a strictly increasing
//! `creationTimestamp` (one second apart), so the scheduling queue's order
//! is the file's too. It also returns the typical-pod table of the
//! original, untuned trace (FGD's input) and a sift configuration per
//! policy ([`fgd_replay_configs`]).

use super::workload::{Event, EventType};
use anyhow::{Result, anyhow, bail};
use k8s_openapi::api::core::v1 as k8s;
use serde::Deserialize;
use serde_json::json;
use sift_gpu_share_common::{TypicalPodArg, split_spec, typical_pods_to_args};
use sift_gpu_share_logic::frag::TypicalPods;
use sift_gpu_share_logic::gpu::{GpuPod, GpuSelMethod};
use sift_gpu_share_logic::policy::{POLICY_WEIGHT, Policy};
use sift_gpu_share_logic::workload::{NamedPod, ReplayConfig, prepare_replay};
use std::path::Path;

/// The model label and the GPU resources of the paper's simulator.
pub const GPU_MODEL_LABEL: &str = "alibabacloud.com/gpu-card-model";
pub const GPU_COUNT: &str = "alibabacloud.com/gpu-count";
pub const GPU_MILLI: &str = "alibabacloud.com/gpu-milli";

#[derive(Debug, Deserialize)]
struct NodeRow {
    sn: String,
    cpu_milli: u64,
    memory_mib: u64,
    gpu: u64,
    #[serde(default)]
    model: String,
}

#[derive(Debug, Deserialize)]
struct PodRow {
    name: String,
    cpu_milli: u64,
    memory_mib: u64,
    num_gpu: u64,
    gpu_milli: u64,
    #[serde(default)]
    gpu_spec: String,
    #[serde(default)]
    qos: String,
    #[serde(default)]
    creation_time: Option<u64>,
    #[serde(default)]
    deletion_time: Option<u64>,
}

/// A trace as objects: the cluster's nodes (`kubectl get nodes -o json`
/// The label a pod's `qos` column becomes.
pub const QOS_LABEL: &str = "sift.io/openb-qos";

/// items) and the workload.
pub struct Trace {
    pub nodes: Vec<serde_json::Value>,
    pub events: Vec<Event>,
    pub summary: Summary,
}

/// What was imported, for the user to check against the trace's README.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub nodes: usize,
    pub gpu_nodes: usize,
    pub gpus: u64,
    pub pods: usize,
    pub gpu_pods: usize,
    /// Σ num_gpu × gpu_milli.
    pub gpu_milli_demanded: u64,
    pub departures: usize,
}

/// Reads every row of a CSV file whose first line names at least the
/// `required` columns (a file without its header line would otherwise
/// lose its first row to it and read as nothing); errors name the file and
/// the line.
fn rows<T: serde::de::DeserializeOwned>(path: &Path, required: &[&str]) -> Result<Vec<T>> {
    let mut reader =
        csv::Reader::from_path(path).map_err(|e| anyhow!("cannot read {}: {e}", path.display()))?;
    let header = reader
        .headers()
        .map_err(|e| anyhow!("{}:1: {e}", path.display()))?;
    let missing: Vec<&str> = required
        .iter()
        .copied()
        .filter(|c| !header.iter().any(|h| h.trim() == *c))
        .collect();
    if !missing.is_empty() {
        bail!(
            "{}:1: the first line must name the columns (it has no {}): expected a header such as {}",
            path.display(),
            missing.join(", "),
            required.join(",")
        );
    }
    let mut out = Vec::new();
    for (i, row) in reader.deserialize().enumerate() {
        // Line 1 is the header.
        out.push(row.map_err(|e| anyhow!("{}:{}: {e}", path.display(), i + 2))?);
    }
    Ok(out)
}

/// Reads both CSV files, refusing rows without a name and duplicate
/// names (errors name the file and line).
fn read_rows(nodes_csv: &Path, pods_csv: &Path) -> Result<(Vec<NodeRow>, Vec<PodRow>)> {
    let node_rows: Vec<NodeRow> = rows(nodes_csv, &["sn", "cpu_milli", "memory_mib", "gpu"])?;
    let pod_rows: Vec<PodRow> = rows(
        pods_csv,
        &["name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"],
    )?;
    let mut seen = std::collections::HashSet::new();
    for (i, n) in node_rows.iter().enumerate() {
        if n.sn.is_empty() {
            bail!(
                "{}:{}: a node without a name (sn)",
                nodes_csv.display(),
                i + 2
            );
        }
        if !seen.insert(n.sn.as_str()) {
            bail!(
                "{}:{}: node {} appears twice",
                nodes_csv.display(),
                i + 2,
                n.sn
            );
        }
    }
    let mut seen = std::collections::HashSet::new();
    for (i, p) in pod_rows.iter().enumerate() {
        if p.name.is_empty() {
            bail!("{}:{}: a pod without a name", pods_csv.display(), i + 2);
        }
        if !seen.insert(p.name.as_str()) {
            bail!(
                "{}:{}: pod {} appears twice",
                pods_csv.display(),
                i + 2,
                p.name
            );
        }
        if let (Some(start), Some(end)) = (p.creation_time, p.deletion_time)
            && end < start
        {
            bail!(
                "{}:{}: pod {} has deletion_time {end} before its creation_time {start}",
                pods_csv.display(),
                i + 2,
                p.name
            );
        }
    }
    Ok((node_rows, pod_rows))
}

/// The cluster's nodes (GPU nodes only if asked), counted into `summary`.
fn cluster_nodes(
    node_rows: &[NodeRow],
    gpu_nodes_only: bool,
    summary: &mut Summary,
) -> Vec<serde_json::Value> {
    let mut nodes = Vec::new();
    for n in node_rows {
        if gpu_nodes_only && n.gpu == 0 {
            continue;
        }
        summary.nodes += 1;
        nodes.push(node(n));
        if n.gpu > 0 {
            summary.gpu_nodes += 1;
            summary.gpus += n.gpu;
        }
    }
    nodes
}

/// Whether the row asks for GPUs (both columns set), as [`pod`] encodes it.
fn is_gpu_row(p: &PodRow) -> bool {
    p.num_gpu > 0 && p.gpu_milli > 0
}

/// Imports the node list and a pod list. With `gpu_nodes_only`, CPU-only
/// nodes are left out (the paper's replays use the 1,213 GPU nodes).
pub fn import(nodes_csv: &Path, pods_csv: &Path, gpu_nodes_only: bool) -> Result<Trace> {
    let (node_rows, pod_rows) = read_rows(nodes_csv, pods_csv)?;
    let mut summary = Summary::default();
    let nodes = cluster_nodes(&node_rows, gpu_nodes_only, &mut summary);
    let mut timed: Vec<(u64, u8, usize, Event)> = Vec::new();
    let mut untimed: Vec<Event> = Vec::new();
    for (i, p) in pod_rows.iter().enumerate() {
        let obj = pod(p, &p.name, None)?;
        summary.pods += 1;
        if is_gpu_row(p) {
            summary.gpu_pods += 1;
            summary.gpu_milli_demanded += p.num_gpu * p.gpu_milli;
        }
        match p.creation_time {
            Some(start) => {
                timed.push((
                    start,
                    1,
                    i,
                    event(EventType::Added, Some(start), obj.clone()),
                ));
                if let Some(end) = p.deletion_time.filter(|&end| end > start) {
                    summary.departures += 1;
                    timed.push((end, 0, i, event(EventType::Deleted, Some(end), obj)));
                }
            }
            None => untimed.push(event(EventType::Added, None, obj)),
        }
    }
    if !timed.is_empty() && !untimed.is_empty() {
        bail!(
            "{}: some pods have a creation_time and others not",
            pods_csv.display()
        );
    }
    // By time; departures first at equal times; then file order.
    timed.sort_by_key(|(t, order, i, _)| (*t, *order, *i));
    let events = if timed.is_empty() {
        untimed
    } else {
        timed.into_iter().map(|(.., e)| e).collect()
    };
    Ok(Trace {
        nodes,
        events,
        summary,
    })
}

/// The FGD paper's replay of a trace: the cluster, the prepared workload
/// and what the policies need.
pub struct FgdReplay {
    /// GPU nodes only; `events` are the prepared arrivals, untimed.
    pub trace: Trace,
    /// FGD's typical pods, from the original (untuned) trace.
    pub typical: TypicalPods,
    /// Pods in the trace before tuning.
    pub original_pods: usize,
    /// Clones appended by tuning up.
    pub clones: usize,
    /// Pods removed by tuning down.
    pub removed: usize,
    /// `tune ×` the GPU nodes' milli-GPU (0 without tuning).
    pub target_gpu_milli: f64,
}

/// The first arrival's `creationTimestamp`; the i-th pod's is i seconds
/// later (2023-07-10, the week of USENIX ATC '23).
pub const REPLAY_EPOCH: i64 = 1_688_947_200;

/// Prepares the FGD paper's replay (see the module documentation): GPU
/// nodes only; pods sorted by name, shuffled with `seed`, tuned to
/// `tune ×` the cluster's GPU milli (`tune <= 0`: not tuned); no times,
/// no departures, creation timestamps one second apart in arrival order.
pub fn import_fgd_replay(
    nodes_csv: &Path,
    pods_csv: &Path,
    seed: u64,
    tune: f64,
) -> Result<FgdReplay> {
    let (node_rows, pod_rows) = read_rows(nodes_csv, pods_csv)?;
    let mut summary = Summary::default();
    let nodes = cluster_nodes(&node_rows, true, &mut summary);
    let named: Vec<NamedPod> = pod_rows
        .iter()
        .map(|p| NamedPod {
            name: p.name.clone(),
            pod: gpu_pod(p),
        })
        .collect();
    let typical = TypicalPods::from_pods(named.iter().map(|n| &n.pod));
    let cluster_gpu_milli = summary.gpus as i64 * 1000;
    let config = ReplayConfig {
        seed,
        shuffle: true,
        tune_ratio: tune,
    };
    let seq = prepare_replay(&named, cluster_gpu_milli, config)
        .map_err(|e| anyhow!("{}: {e}", pods_csv.display()))?;
    let mut events = Vec::with_capacity(seq.len());
    let mut clones = 0;
    for (i, r) in seq.iter().enumerate() {
        let row = &pod_rows[r.source];
        let created = k8s_openapi::jiff::Timestamp::from_second(REPLAY_EPOCH + i as i64)
            .map_err(|e| anyhow!("creation timestamp of arrival {i}: {e}"))?;
        let obj = pod(row, &r.name, Some(created))?;
        clones += usize::from(r.tuned_clone);
        summary.pods += 1;
        if is_gpu_row(row) {
            summary.gpu_pods += 1;
            summary.gpu_milli_demanded += row.num_gpu * row.gpu_milli;
        }
        events.push(event(EventType::Added, None, obj));
    }
    let removed = (pod_rows.len() + clones).saturating_sub(seq.len());
    Ok(FgdReplay {
        trace: Trace {
            nodes,
            events,
            summary,
        },
        typical,
        original_pods: pod_rows.len(),
        clones,
        removed,
        target_gpu_milli: if tune > 0.0 {
            tune * cluster_gpu_milli as f64
        } else {
            0.0
        },
    })
}

/// A trace row as the GPU-share plugins read the pod [`pod`] makes.
fn gpu_pod(p: &PodRow) -> GpuPod {
    let gpu = is_gpu_row(p);
    GpuPod {
        cpu_milli: p.cpu_milli as i64,
        mem_mib: p.memory_mib as i64,
        num_gpu: if gpu { p.num_gpu as u32 } else { 0 },
        gpu_milli: if gpu { p.gpu_milli as u32 } else { 0 },
        gpu_spec: if gpu {
            split_spec(&p.gpu_spec)
        } else {
            Vec::new()
        },
    }
}

/// One policy of the paper and how sift runs it.
pub struct PolicyConfig {
    /// The paper's name, e.g. `FGD`.
    pub name: &'static str,
    /// The file stem under `configs/`, e.g. `fgd`.
    pub file: &'static str,
    /// The score plugin, e.g. `FGDScore`.
    pub scorer: &'static str,
    pub policy: Policy,
}

/// The paper's six policies: config file, score plugin, and (through
/// [`Policy::gpu_sel`]) GpuShare's GPU selection at Reserve.
pub const FGD_POLICIES: [PolicyConfig; 6] = [
    PolicyConfig {
        name: "Random",
        file: "random",
        scorer: "RandomScore",
        policy: Policy::Random,
    },
    PolicyConfig {
        name: "DotProd",
        file: "dot-prod",
        scorer: "DotProdScore",
        policy: Policy::DotProd,
    },
    PolicyConfig {
        name: "GpuClustering",
        file: "gpu-clustering",
        scorer: "GpuClusteringScore",
        policy: Policy::GpuClustering,
    },
    PolicyConfig {
        name: "GpuPacking",
        file: "gpu-packing",
        scorer: "GpuPackingScore",
        policy: Policy::GpuPacking,
    },
    PolicyConfig {
        name: "BestFit",
        file: "best-fit",
        scorer: "BestFitScore",
        policy: Policy::BestFit,
    },
    PolicyConfig {
        name: "FGD",
        file: "fgd",
        scorer: "FGDScore",
        policy: Policy::Fgd,
    },
];

/// The sift configuration of each policy, `(file stem, YAML)`, then
/// `default-scheduler` (kube-scheduler's default scoring on the same
/// replay, a row the paper does not have).
///
/// A policy's configuration: every node scored
/// (`percentageOfNodesToScore: 100`), kube-scheduler's default filters
/// plus GpuShare, every default scorer disabled and the policy's scorer
/// alone at weight 1000, and GpuShare's Reserve choosing GPUs as the
/// paper's run scripts pair them: `random` for Random, `fgd` for FGD,
/// `best` otherwise. `seed` seeds RandomScore and random GPU selection;
/// `typical` goes to FGDScore and to `fgd` selection.
pub fn fgd_replay_configs(typical: &TypicalPods, seed: u64) -> Vec<(&'static str, String)> {
    let typical = typical_pods_to_args(typical);
    let mut out = Vec::new();
    for p in &FGD_POLICIES {
        let selection = p.policy.gpu_sel();
        let mut y = String::new();
        y.push_str(&format!(
            "# sift configuration: the FGD paper's {} policy ({} at weight {POLICY_WEIGHT},\n\
             # GpuShare gpuSelection {}), written by `sift trace openb --replay fgd --seed {seed}`.\n",
            p.name,
            p.scorer,
            selection_name(selection),
        ));
        y.push_str(&profile_head(&[(p.scorer, POLICY_WEIGHT)]));
        y.push_str("pluginConfig:\n");
        y.push_str(&gpu_share_args(selection, seed, &typical));
        match p.policy {
            Policy::Fgd => {
                y.push_str(&format!("  - name: {}\n    args:\n", p.scorer));
                y.push_str(&typical_yaml(&typical, 6));
            }
            Policy::Random => {
                y.push_str(&format!(
                    "  - name: {}\n    args:\n      seed: {seed}\n",
                    p.scorer
                ));
            }
            _ => {}
        }
        out.push((p.file, y));
    }
    let mut y = String::from(
        "# sift configuration: kube-scheduler's default scoring (NodeResourcesFit\n\
         # LeastAllocated + NodeResourcesBalancedAllocation, weight 1 each) on the FGD\n\
         # replay, with GpuShare filtering and choosing GPUs (gpuSelection best); every\n\
         # node is scored, as in the paper's runs. Not a row of the paper.\n",
    );
    y.push_str(&profile_head(&[
        ("NodeResourcesFit", 1),
        ("NodeResourcesBalancedAllocation", 1),
    ]));
    y.push_str("pluginConfig:\n");
    y.push_str(&gpu_share_args(GpuSelMethod::Best, seed, &typical));
    y.push_str(
        "  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        type: LeastAllocated\n",
    );
    out.push(("default-scheduler", y));
    out
}

fn selection_name(s: GpuSelMethod) -> &'static str {
    match s {
        GpuSelMethod::Best => "best",
        GpuSelMethod::Random => "random",
        GpuSelMethod::Fgd => "fgd",
    }
}

/// Scoring every node, the default filters plus GpuShare, these scorers.
fn profile_head(scorers: &[(&str, i64)]) -> String {
    let mut y: String = [
        "percentageOfNodesToScore: 100",
        "plugins:",
        "  filter:",
        "    enabled:",
        "      - name: GpuShare",
        "  score:",
        "    disabled:",
        "      - name: \"*\"",
        "    enabled:",
    ]
    .map(|line| format!("{line}\n"))
    .concat();
    for (name, weight) in scorers {
        y.push_str(&format!("      - name: {name}\n        weight: {weight}\n"));
    }
    y
}

fn gpu_share_args(selection: GpuSelMethod, seed: u64, typical: &[TypicalPodArg]) -> String {
    let mut y = format!(
        "  - name: GpuShare\n    args:\n      gpuSelection: {}\n",
        selection_name(selection)
    );
    match selection {
        GpuSelMethod::Random => y.push_str(&format!("      seed: {seed}\n")),
        GpuSelMethod::Fgd => y.push_str(&typical_yaml(typical, 6)),
        GpuSelMethod::Best => {}
    }
    y
}

/// `typicalPods:` as a block list of flow mappings, one class a line.
fn typical_yaml(typical: &[TypicalPodArg], indent: usize) -> String {
    let pad = " ".repeat(indent);
    let mut y = format!("{pad}typicalPods:\n");
    for t in typical {
        y.push_str(&format!(
            "{pad}  - {{cpuMilli: {}, gpuMilli: {}, numGpu: {}, gpuSpec: {}, freq: {:?}}}\n",
            t.cpu_milli,
            t.gpu_milli,
            t.num_gpu,
            serde_json::Value::String(t.gpu_spec.clone()),
            t.freq,
        ));
    }
    y
}

fn event(kind: EventType, time: Option<u64>, object: k8s::Pod) -> Event {
    Event { kind, time, object }
}

fn node(n: &NodeRow) -> serde_json::Value {
    let mut labels = json!({"kubernetes.io/hostname": n.sn});
    let mut resources = json!({
        "cpu": format!("{}m", n.cpu_milli),
        "memory": format!("{}Mi", n.memory_mib),
        "pods": "1001",
    });
    if n.gpu > 0 {
        if !n.model.is_empty() {
            labels[GPU_MODEL_LABEL] = json!(n.model);
        }
        resources[GPU_COUNT] = json!(n.gpu.to_string());
        resources[GPU_MILLI] = json!((n.gpu * 1000).to_string());
    }
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": n.sn, "labels": labels},
        "spec": {},
        "status": {"capacity": resources, "allocatable": resources},
    })
}

/// The pod of a row, named `name` (a tuned clone's differs), created at
/// `created` if given.
fn pod(p: &PodRow, name: &str, created: Option<k8s_openapi::jiff::Timestamp>) -> Result<k8s::Pod> {
    let mut requests = json!({
        "cpu": format!("{}m", p.cpu_milli),
        "memory": format!("{}Mi", p.memory_mib),
    });
    let mut annotations = json!({});
    let mut spec = json!({"schedulerName": "default-scheduler"});
    if is_gpu_row(p) {
        requests[GPU_MILLI] = json!((p.num_gpu * p.gpu_milli).to_string());
        annotations[GPU_MILLI] = json!(p.gpu_milli.to_string());
        annotations[GPU_COUNT] = json!(p.num_gpu.to_string());
        if !p.gpu_spec.is_empty() {
            annotations[GPU_MODEL_LABEL] = json!(p.gpu_spec);
            let models: Vec<&str> = p.gpu_spec.split('|').filter(|m| !m.is_empty()).collect();
            spec["affinity"] = json!({"nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{
                    "matchExpressions": [{"key": GPU_MODEL_LABEL, "operator": "In", "values": models}]
                }]}
            }});
        }
    }
    spec["containers"] = json!([{
        "name": "main", "image": "openb",
        "resources": {"requests": requests, "limits": requests},
    }]);
    let mut labels = json!({"app": "openb"});
    if !p.qos.is_empty() {
        labels[QOS_LABEL] = json!(p.qos);
    }
    let obj = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels,
                     "annotations": annotations},
        "spec": spec,
        "status": {"phase": "Pending"},
    });
    let mut pod: k8s::Pod = serde_json::from_value(obj).map_err(|e| anyhow!("pod {name}: {e}"))?;
    pod.metadata.creation_timestamp =
        created.map(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time);
    Ok(pod)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn nodes_pods_and_events_follow_the_documented_mapping() {
        let dir = std::env::temp_dir().join(format!("sift-openb-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let nodes = write(
            &dir,
            "nodes.csv",
            "sn,cpu_milli,memory_mib,gpu,model\n\
             n0,32000,262144,0,\n\
             n1,96000,786432,8,V100M32\n",
        );
        let pods = write(
            &dir,
            "pods.csv",
            "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n\
             p0,12000,16384,1,460,,LS,Running,10,30,10\n\
             p1,6000,12288,2,1000,V100M16|V100M32,BE,Running,30,,30\n\
             p2,4000,8192,0,0,,LS,Failed,5,30,5\n",
        );
        let t = import(&nodes, &pods, false).unwrap();
        assert_eq!(
            t.summary,
            Summary {
                nodes: 2,
                gpu_nodes: 1,
                gpus: 8,
                pods: 3,
                gpu_pods: 2,
                gpu_milli_demanded: 460 + 2000,
                departures: 2,
            }
        );
        assert_eq!(t.nodes[1]["metadata"]["labels"][GPU_MODEL_LABEL], "V100M32");
        assert_eq!(t.nodes[1]["status"]["allocatable"][GPU_MILLI], "8000");
        assert!(t.nodes[0]["status"]["allocatable"].get(GPU_COUNT).is_none());
        // In time order, departures first at equal times.
        let order: Vec<(String, EventType, Option<u64>)> = t
            .events
            .iter()
            .map(|e| (e.object.metadata.name.clone().unwrap(), e.kind, e.time))
            .collect();
        let ev = |n: &str, k, t| (n.to_string(), k, Some(t));
        assert_eq!(
            order,
            [
                ev("p2", EventType::Added, 5),
                ev("p0", EventType::Added, 10),
                ev("p0", EventType::Deleted, 30),
                ev("p2", EventType::Deleted, 30),
                ev("p1", EventType::Added, 30),
            ]
        );
        // The pods read back as sift reads pods.
        let p1 = crate::input::kube::pod(&t.events[4].object).unwrap();
        assert_eq!(p1.requests.milli_cpu, 6000);
        let gpu = p1.requests.scalar.iter().find(|(n, _)| n == GPU_MILLI);
        assert_eq!(gpu.map(|(_, v)| *v), Some(2000));
        assert_eq!(p1.annotations.get(GPU_MILLI), Some("1000"));
        assert_eq!(p1.annotations.get(GPU_MODEL_LABEL), Some("V100M16|V100M32"));
        let terms = p1.required_node_affinity.unwrap();
        assert_eq!(terms[0].match_expressions[0].values, ["V100M16", "V100M32"]);
        // GPU nodes only.
        assert_eq!(import(&nodes, &pods, true).unwrap().summary.nodes, 1);
        // Bad rows name the file and line.
        let bad = write(
            &dir,
            "bad.csv",
            "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,x,0,0\n",
        );
        let err = format!("{:#}", import(&nodes, &bad, false).err().unwrap());
        assert!(err.contains("bad.csv:2"), "{err}");
        // A file without its header line is named, not read as no pods.
        let headless = write(
            &dir,
            "headless.csv",
            "p0,12000,16384,1,460,,LS,Running,10,30,10\n",
        );
        let err = format!("{:#}", import(&nodes, &headless, false).err().unwrap());
        assert!(
            err.contains("headless.csv:1: the first line must name the columns")
                && err.contains("no name, cpu_milli"),
            "{err}"
        );
        // Leaving before arriving is an error; leaving as it arrives, a
        // pod that stays (as documented).
        let backwards = write(
            &dir,
            "backwards.csv",
            "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time\n\
             a,1,1,0,0,10,10\n\
             b,1,1,0,0,20,5\n",
        );
        let err = format!("{:#}", import(&nodes, &backwards, false).err().unwrap());
        assert!(
            err.contains("backwards.csv:3: pod b has deletion_time 5 before its creation_time 20"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).ok();
    }

    /// A node list with a CPU-only node and two GPU nodes (10 GPUs), and
    /// 20 pods: shares, whole GPUs, CPU-only, one with a model list.
    pub(crate) fn replay_inputs(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
        let nodes = write(
            dir,
            "nodes.csv",
            "sn,cpu_milli,memory_mib,gpu,model\n\
             n0,32000,262144,0,\n\
             n1,96000,786432,8,V100M32\n\
             n2,64000,262144,2,T4\n",
        );
        let mut pods = String::from(
            "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n",
        );
        for i in 0..20 {
            let (num_gpu, milli, spec) = match i % 4 {
                0 => (1, 500, ""),
                1 => (1, 1000, ""),
                2 => (0, 0, ""),
                _ => (2, 1000, "T4|V100M32"),
            };
            pods.push_str(&format!(
                "p{i:02},4000,8192,{num_gpu},{milli},{spec},LS,Running,{i},,{i}\n"
            ));
        }
        (nodes, write(dir, "pods.csv", &pods))
    }

    #[test]
    fn fgd_replay_shuffles_tunes_and_orders_by_creation_time() {
        let dir = std::env::temp_dir().join(format!("sift-openb-replay-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (nodes, pods) = replay_inputs(&dir);
        let r = import_fgd_replay(&nodes, &pods, 42, 1.3).unwrap();
        // GPU nodes only.
        assert_eq!(r.trace.nodes.len(), 2);
        assert_eq!(r.trace.summary.gpus, 10);
        // Demand 5 x 500 + 5 x 1000 + 5 x 2000 = 17 500 > 13 000: tuned down.
        assert_eq!(r.original_pods, 20);
        assert_eq!(r.clones, 0);
        assert!(r.removed > 0);
        assert_eq!(r.trace.events.len(), 20 - r.removed);
        assert!(r.trace.summary.gpu_milli_demanded <= 13_000);
        assert_eq!(r.target_gpu_milli, 13_000.0);
        let names = |r: &FgdReplay| -> Vec<String> {
            r.trace
                .events
                .iter()
                .map(|e| e.object.metadata.name.clone().unwrap())
                .collect()
        };
        // No times; creation timestamps strictly increase in file order.
        assert!(
            r.trace
                .events
                .iter()
                .all(|e| e.kind == EventType::Added && e.time.is_none())
        );
        let created: Vec<String> = r
            .trace
            .events
            .iter()
            .map(|e| {
                let t = e.object.metadata.creation_timestamp.as_ref().unwrap();
                serde_json::to_value(t)
                    .unwrap()
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(created[0], "2023-07-10T00:00:00Z");
        assert!(created.windows(2).all(|w| w[0] < w[1]), "{created:?}");
        // Shuffled, the same way for the same seed only.
        let order = names(&r);
        let mut sorted = order.clone();
        sorted.sort();
        assert_ne!(order, sorted);
        assert_eq!(
            order,
            names(&import_fgd_replay(&nodes, &pods, 42, 1.3).unwrap())
        );
        assert_ne!(
            order,
            names(&import_fgd_replay(&nodes, &pods, 43, 1.3).unwrap())
        );
        // Tuning up appends clones after the shuffled trace.
        let up = import_fgd_replay(&nodes, &pods, 42, 3.0).unwrap();
        let up_names = names(&up);
        assert!(up.clones > 0);
        assert!(up_names[..20].iter().all(|n| !n.contains("-tuned-")));
        assert!(up_names[20..].iter().all(|n| n.contains("-tuned-")));
        assert!(up.trace.summary.gpu_milli_demanded > 17_500);
        // Not tuned: every pod once.
        let all = import_fgd_replay(&nodes, &pods, 42, 0.0).unwrap();
        assert_eq!(all.trace.events.len(), 20);
        // Typical pods come from the untuned trace: four classes of five.
        assert_eq!(r.typical.len(), 4);
        assert!(r.typical.pods.iter().all(|t| t.freq == 0.25));
        assert!(
            r.typical
                .pods
                .iter()
                .any(|t| t.class.gpu_spec == "T4|V100M32" && t.class.num_gpu == 2)
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
