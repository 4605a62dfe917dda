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
//!   pod without a `deletion_time` after its `creation_time` stays. The
//!   `multigpu50` list has no times: its pods arrive in file order and stay.
//!   `pod_phase` and `scheduled_time` (what happened in production) are not
//!   used.

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

/// Reads every row of a CSV file with headers; errors name the file and
/// the line.
fn rows<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    let mut reader =
        csv::Reader::from_path(path).map_err(|e| anyhow!("cannot read {}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (i, row) in reader.deserialize().enumerate() {
        // Line 1 is the header.
        out.push(row.map_err(|e| anyhow!("{}:{}: {e}", path.display(), i + 2))?);
    }
    Ok(out)
}

/// Imports the node list and a pod list. With `gpu_nodes_only`, CPU-only
/// nodes are left out (the paper's replays use the 1,213 GPU nodes).
pub fn import(nodes_csv: &Path, pods_csv: &Path, gpu_nodes_only: bool) -> Result<Trace> {
    let node_rows: Vec<NodeRow> = rows(nodes_csv)?;
    let pod_rows: Vec<PodRow> = rows(pods_csv)?;
    let mut summary = Summary::default();
    let mut nodes = Vec::new();
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
    let mut timed: Vec<(u64, u8, usize, Event)> = Vec::new();
    let mut untimed: Vec<Event> = Vec::new();
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
        let obj = pod(p)?;
        summary.pods += 1;
        if p.num_gpu > 0 && p.gpu_milli > 0 {
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

fn pod(p: &PodRow) -> Result<k8s::Pod> {
    let mut requests = json!({
        "cpu": format!("{}m", p.cpu_milli),
        "memory": format!("{}Mi", p.memory_mib),
    });
    let mut annotations = json!({});
    let mut spec = json!({"schedulerName": "default-scheduler"});
    if p.num_gpu > 0 && p.gpu_milli > 0 {
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
        labels["sift.io/openb-qos"] = json!(p.qos);
    }
    let obj = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": p.name, "namespace": "default", "labels": labels,
                     "annotations": annotations},
        "spec": spec,
        "status": {"phase": "Pending"},
    });
    serde_json::from_value(obj).map_err(|e| anyhow!("pod {}: {e}", p.name))
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
        std::fs::remove_dir_all(&dir).ok();
    }
}
