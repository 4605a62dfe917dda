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
//! The FGD paper's replay of a trace (its workload, one configuration per
//! policy) is simulation set-up built on this reader:
//! `simulate::fgd_replay`.

use super::workload::{Event, EventType};
use anyhow::{Result, anyhow, bail};
use k8s_openapi::api::core::v1 as k8s;
use serde::Deserialize;
use serde_json::json;
use std::path::Path;

/// The model label and the GPU resources of the paper's simulator.
pub const GPU_MODEL_LABEL: &str = "alibabacloud.com/gpu-card-model";
pub const GPU_COUNT: &str = "alibabacloud.com/gpu-count";
pub const GPU_MILLI: &str = "alibabacloud.com/gpu-milli";

/// A row of the node list.
#[derive(Debug, Deserialize)]
pub struct NodeRow {
    sn: String,
    cpu_milli: u64,
    memory_mib: u64,
    gpu: u64,
    #[serde(default)]
    model: String,
}

/// A row of a pod list.
#[derive(Debug, Deserialize)]
pub struct PodRow {
    pub name: String,
    pub cpu_milli: u64,
    pub memory_mib: u64,
    pub num_gpu: u64,
    pub gpu_milli: u64,
    #[serde(default)]
    pub gpu_spec: String,
    #[serde(default)]
    qos: String,
    #[serde(default)]
    creation_time: Option<u64>,
    #[serde(default)]
    deletion_time: Option<u64>,
}

/// The label a pod's `qos` column becomes.
pub const QOS_LABEL: &str = "sift.io/openb-qos";

/// A trace as objects: the cluster's nodes (`kubectl get nodes -o json`
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
pub fn read_rows(nodes_csv: &Path, pods_csv: &Path) -> Result<(Vec<NodeRow>, Vec<PodRow>)> {
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
pub fn cluster_nodes(
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

impl PodRow {
    /// Whether the row asks for GPUs (both columns set), as [`pod`]
    /// encodes it.
    pub fn requests_gpu(&self) -> bool {
        self.num_gpu > 0 && self.gpu_milli > 0
    }
}

impl Summary {
    /// Counts a pod of the workload.
    pub fn count_pod(&mut self, p: &PodRow) {
        self.pods += 1;
        if p.requests_gpu() {
            self.gpu_pods += 1;
            self.gpu_milli_demanded += p.num_gpu * p.gpu_milli;
        }
    }
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
        summary.count_pod(p);
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
pub fn pod(
    p: &PodRow,
    name: &str,
    created: Option<k8s_openapi::jiff::Timestamp>,
) -> Result<k8s::Pod> {
    let mut requests = json!({
        "cpu": format!("{}m", p.cpu_milli),
        "memory": format!("{}Mi", p.memory_mib),
    });
    let mut annotations = json!({});
    let mut spec = json!({"schedulerName": "default-scheduler"});
    if p.requests_gpu() {
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
mod tests {
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
}
