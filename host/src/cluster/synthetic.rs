//! Generated clusters: deterministic nodes, their bound pods and a pod mix,
//! so benchmarks and load generators measure the same cluster every run.

use sift_sdk::resources::Resources;
use sift_sdk::{HostPort, Labels, Node, Pod, SelectorRequirement, SelectorTerm, Taint, Toleration};

/// SplitMix64: a tiny deterministic generator, so every run benchmarks the
/// same cluster.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

const ZONES: [&str; 3] = ["zone-a", "zone-b", "zone-c"];
const TYPES: [&str; 4] = ["m5.4xlarge", "m5.8xlarge", "c5.9xlarge", "r5.16xlarge"];

/// N nodes over 3 zones, ~15 labels each, some taints, some cordoned,
/// ~10 bound pods each (requests, a few host ports).
pub fn synthetic_nodes(n: usize) -> Vec<Node> {
    let mut rng = Rng(42);
    (0..n)
        .map(|i| {
            let zone = ZONES[i % 3];
            let ty = rng.below(4) as usize;
            let cpu = [16_000, 32_000, 36_000, 64_000][ty];
            let mem: i64 = [64, 128, 72, 512][ty] << 30;
            let name = format!("node-{i:05}");
            let mut labels = vec![
                ("kubernetes.io/hostname".to_string(), name.clone()),
                ("kubernetes.io/os".into(), "linux".into()),
                ("kubernetes.io/arch".into(), "amd64".into()),
                ("topology.kubernetes.io/region".into(), "region-1".into()),
                ("topology.kubernetes.io/zone".into(), zone.into()),
                ("node.kubernetes.io/instance-type".into(), TYPES[ty].into()),
                (
                    "disktype".into(),
                    if rng.chance(50) { "ssd" } else { "hdd" }.into(),
                ),
                ("pool".into(), format!("pool-{}", rng.below(8))),
                ("team".into(), format!("team-{}", rng.below(20))),
                ("rack".into(), format!("rack-{}", rng.below(100))),
                ("generation".into(), (3 + rng.below(5)).to_string()),
                (
                    "example.com/tier".into(),
                    ["gold", "silver", "bronze"][rng.below(3) as usize].into(),
                ),
                (
                    "example.com/cost-center".into(),
                    format!("cc-{}", rng.below(50)),
                ),
                (
                    "example.com/maintenance-window".into(),
                    format!("w{}", rng.below(7)),
                ),
            ];
            let mut scalar = Vec::new();
            if rng.chance(10) {
                labels.push(("example.com/gpu".into(), "a100".into()));
                scalar.push(("nvidia.com/gpu".to_string(), 8));
            } else {
                labels.push(("example.com/gpu".into(), "none".into()));
            }
            let mut taints = Vec::new();
            if rng.chance(10) {
                taints.push(Taint {
                    key: "dedicated".into(),
                    value: "infra".into(),
                    effect: "NoSchedule".into(),
                });
            }
            if rng.chance(5) {
                taints.push(Taint {
                    key: "example.com/flaky".into(),
                    value: String::new(),
                    effect: "PreferNoSchedule".into(),
                });
            }
            let mut requested = Resources::default();
            let mut used_ports = Vec::new();
            let pods = 8 + rng.below(5) as u32;
            for _ in 0..pods {
                requested.milli_cpu += 250 * (1 + rng.below(6) as i64);
                requested.memory += (512 << 20) * (1 + rng.below(8) as i64);
                if rng.chance(5) {
                    used_ports.push(HostPort {
                        port: [8080, 9100, 10250][rng.below(3) as usize],
                        protocol: "TCP".into(),
                        host_ip: "0.0.0.0".into(),
                    });
                }
            }
            Node {
                name,
                labels: Labels::new(labels),
                taints,
                unschedulable: rng.chance(2),
                allocatable: Resources {
                    milli_cpu: cpu,
                    memory: mem,
                    ephemeral_storage: 100 << 30,
                    allowed_pod_number: 110,
                    scalar,
                },
                requested,
                pod_count: pods,
                used_ports,
                ..Default::default()
            }
        })
        .collect()
}

fn req(key: &str, op: &str, values: &[&str]) -> SelectorRequirement {
    SelectorRequirement {
        key: key.into(),
        operator: op.into(),
        values: values.iter().map(|v| v.to_string()).collect(),
    }
}

/// A deterministic mix: plain requests, nodeSelector, required affinity
/// In/NotIn, tolerations, host ports, and large requests that fit few.
pub fn synthetic_pods(n: usize) -> Vec<Pod> {
    let mut rng = Rng(7);
    (0..n)
        .map(|i| {
            let mut pod = Pod {
                name: format!("pod-{i}"),
                namespace: "bench".into(),
                uid: format!("uid-{i}"),
                ..Default::default()
            };
            pod.requests.milli_cpu = 100 * (1 + rng.below(10) as i64);
            pod.requests.memory = (256 << 20) * (1 + rng.below(8) as i64);
            match rng.below(100) {
                0..40 => {}
                40..55 => pod.node_selector = Labels::new(vec![("disktype".into(), "ssd".into())]),
                55..70 => {
                    pod.required_node_affinity = Some(vec![SelectorTerm {
                        match_expressions: vec![
                            req("topology.kubernetes.io/zone", "In", &["zone-a", "zone-b"]),
                            req("node.kubernetes.io/instance-type", "NotIn", &["c5.9xlarge"]),
                        ],
                        match_fields: vec![],
                    }])
                }
                70..80 => {
                    pod.tolerations = vec![Toleration {
                        key: "dedicated".into(),
                        operator: "Equal".into(),
                        value: "infra".into(),
                        effect: "NoSchedule".into(),
                        toleration_seconds: None,
                    }]
                }
                80..90 => {
                    pod.host_ports = vec![HostPort {
                        port: 8080,
                        protocol: "TCP".into(),
                        host_ip: "0.0.0.0".into(),
                    }]
                }
                _ => {
                    pod.requests.milli_cpu = 40_000;
                    pod.requests.memory = 200 << 30;
                }
            }
            with_object(pod)
        })
        .collect()
}

/// The pod with the whole object the escape hatch would send (plugins
/// that read it, such as DynamicResources and NodeDeclaredFeatures, refuse
/// a pod without one): its metadata and an empty spec, since the mix has
/// nothing beyond the model's fields for them to read.
fn with_object(mut pod: Pod) -> Pod {
    let object = serde_json::json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid},
        "spec": {}});
    pod.object = Some(object.to_string().into());
    pod
}

/// Apps the bound pods belong to (label `app`): 10 pods per node over 500
/// apps puts each app on about 2% of the nodes of a 5,000-node cluster.
pub const APPS: usize = 500;

/// The app of a node's `k`th bound pod: consecutive nodes get different
/// apps, so an app's pods spread over nodes and zones.
pub fn app_of(node_index: usize, k: usize) -> String {
    format!("app-{}", (node_index * 7 + k * 131) % APPS)
}

/// The synthetic cluster as kubectl prints it: Nodes, and for each node its
/// bound pods (the node's usage split evenly over them), labelled with
/// their app.
pub fn kubectl_list(nodes: &[Node]) -> serde_json::Value {
    use serde_json::json;
    let mut items = Vec::new();
    for (node_index, n) in nodes.iter().enumerate() {
        let labels: serde_json::Map<String, serde_json::Value> = n
            .labels
            .iter()
            .map(|(k, v)| (k.to_string(), json!(v)))
            .collect();
        let mut allocatable = json!({
            "cpu": format!("{}m", n.allocatable.milli_cpu),
            "memory": n.allocatable.memory.to_string(),
            "ephemeral-storage": n.allocatable.ephemeral_storage.to_string(),
            "pods": n.allocatable.allowed_pod_number.to_string(),
        });
        for (name, amount) in &n.allocatable.scalar {
            allocatable[name] = json!(amount.to_string());
        }
        let taints: Vec<_> = n
            .taints
            .iter()
            .map(|t| json!({"key": t.key, "value": t.value, "effect": t.effect}))
            .collect();
        items.push(json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": n.name, "labels": labels},
            "spec": {"taints": taints, "unschedulable": n.unschedulable},
            "status": {"capacity": allocatable, "allocatable": allocatable},
        }));
        let count = i64::from(n.pod_count.max(1));
        for k in 0..count {
            let share = |total: i64| total / count + if k == 0 { total % count } else { 0 };
            let ports: Vec<_> = if k == 0 {
                n.used_ports
                    .iter()
                    .map(|p| json!({"containerPort": p.port, "hostPort": p.port, "protocol": p.protocol}))
                    .collect()
            } else {
                Vec::new()
            };
            items.push(json!({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {
                    "name": format!("{}-pod-{k}", n.name),
                    "namespace": "default",
                    "labels": {"app": app_of(node_index, k as usize)},
                },
                "spec": {"nodeName": n.name, "containers": [{
                    "name": "app", "image": "registry.example/app:1",
                    "ports": ports,
                    "resources": {"requests": {
                        "cpu": format!("{}m", share(n.requested.milli_cpu)),
                        "memory": share(n.requested.memory).to_string(),
                    }},
                }]},
                "status": {"phase": "Running"},
            }));
        }
    }
    json!({"apiVersion": "v1", "kind": "List", "items": items})
}

/// The pod mix of contract 0.2's filters, in turns: a pod of the plain mix,
/// one spread over zones, one spread over hosts (maxSkew 1,
/// `DoNotSchedule`), and one with required anti-affinity against its own
/// app on `kubernetes.io/hostname`. Each belongs to one of the bound pods'
/// apps, so the constraints count real pods.
pub fn synthetic_affinity_pods(n: usize) -> Vec<Pod> {
    use sift_sdk::{LabelSelector, PodAffinityTerm, TopologySpreadConstraint};
    let plain = synthetic_pods(n);
    plain
        .into_iter()
        .enumerate()
        .map(|(i, mut pod)| {
            let app = format!("app-{}", (i * 37) % APPS);
            let selector = LabelSelector {
                match_labels: vec![("app".into(), app.clone())],
                match_expressions: vec![],
            };
            let spread = |key: &str| TopologySpreadConstraint {
                max_skew: 1,
                topology_key: key.into(),
                when_unsatisfiable: "DoNotSchedule".into(),
                label_selector: Some(selector.clone()),
                ..Default::default()
            };
            match i % 4 {
                0 => return pod,
                1 => pod.topology_spread_constraints = vec![spread("topology.kubernetes.io/zone")],
                2 => pod.topology_spread_constraints = vec![spread("kubernetes.io/hostname")],
                _ => {
                    pod.pod_anti_affinity = vec![PodAffinityTerm {
                        label_selector: Some(selector.clone()),
                        topology_key: "kubernetes.io/hostname".into(),
                        ..Default::default()
                    }]
                }
            }
            pod.labels = Labels::new(vec![("app".into(), app)]);
            pod
        })
        .collect()
}

/// The synthetic cluster of `n` nodes as a snapshot with its bound pods
/// (10 per node, labelled with their app), read the way `sift filter`
/// reads a dump.
pub fn synthetic_cluster(n: usize) -> anyhow::Result<std::sync::Arc<super::Snapshot>> {
    snapshot_of(kubectl_list(&synthetic_nodes(n)))
}

/// A kubectl List read into a snapshot, as `sift filter` reads a dump.
fn snapshot_of(list: serde_json::Value) -> anyhow::Result<std::sync::Arc<super::Snapshot>> {
    let mut objects = crate::input::Objects::default();
    objects.add_json(std::path::Path::new("synthetic"), "", list, None)?;
    Ok(super::ClusterState::from_objects(&objects)?.snapshot())
}

/// Images of the scoring cluster's catalog.
const IMAGE_CATALOG: usize = 100;

/// Image `k` of the catalog: its name and size, 30 MiB to ~1.5 GiB,
/// spread so that a pod's images range from below ImageLocality's 23 MiB
/// floor (once scaled by their spread) to over its ceiling.
fn catalog_image(k: usize) -> (String, i64) {
    let mib = 30 + (k as i64 * 149) % 1500;
    (format!("registry.example/image-{k}:1"), mib << 20)
}

/// [`synthetic_cluster`] with what the default score plugins read that the
/// filters' cluster lacks: each node reports (`status.images`) up to 20
/// images of a 100-image catalog drawn at random (seeded), so each image
/// is on ~18% of the nodes and ImageLocality has sizes and a spread to
/// weigh. The nodes and bound pods are [`synthetic_cluster`]'s.
pub fn synthetic_scoring_cluster(n: usize) -> anyhow::Result<std::sync::Arc<super::Snapshot>> {
    let mut list = kubectl_list(&synthetic_nodes(n));
    let mut rng = Rng(11);
    let items = list["items"].as_array_mut().expect("a List has items");
    for item in items.iter_mut().filter(|i| i["kind"] == "Node") {
        let mut held: Vec<usize> = (0..20)
            .map(|_| rng.below(IMAGE_CATALOG as u64) as usize)
            .collect();
        held.sort_unstable();
        held.dedup();
        let images: Vec<serde_json::Value> = held
            .into_iter()
            .map(|k| {
                let (name, size) = catalog_image(k);
                serde_json::json!({"names": [name], "sizeBytes": size})
            })
            .collect();
        item["status"]["images"] = images.into();
    }
    snapshot_of(list)
}

/// The pod mix of the scoring benchmark: [`synthetic_affinity_pods`]'s
/// requests and constraints (so the filters do their usual work), with
/// what each default score plugin reads, so none of them skips every pod:
///
/// - every pod is in the bound pods' namespace (`default`), labelled with
///   its app, so spread and pod affinity count the bound pods of its app;
/// - every pod wants 1 or 2 images of [`synthetic_scoring_cluster`]'s
///   catalog (ImageLocality);
/// - its non-zero requests are its requests (NodeResourcesFit and
///   BalancedAllocation score those);
/// - in turns of five (coprime with the affinity mix's four, so every
///   combination occurs): nothing more; preferred node affinity (ssd,
///   gold or silver tier); a PreferNoSchedule toleration of the flaky
///   taint and a `ScheduleAnyway` zone spread; preferred affinity to its
///   app's zone and preferred anti-affinity to its app's hosts; a
///   `ScheduleAnyway` hostname spread. TaintToleration,
///   NodeResourcesFit and BalancedAllocation score every pod.
pub fn synthetic_scoring_pods(n: usize) -> Vec<Pod> {
    use sift_sdk::resources::NonZero;
    use sift_sdk::{
        LabelSelector, PodAffinityTerm, TopologySpreadConstraint, WeightedPodAffinityTerm,
        WeightedSelectorTerm,
    };
    let mut rng = Rng(13);
    synthetic_affinity_pods(n)
        .into_iter()
        .enumerate()
        .map(|(i, mut pod)| {
            let app = format!("app-{}", (i * 37) % APPS);
            pod.namespace = "default".into();
            pod.labels = Labels::new(vec![("app".into(), app.clone())]);
            pod.non_zero_requests = NonZero {
                milli_cpu: pod.requests.milli_cpu,
                memory: pod.requests.memory,
            };
            let images = 1 + rng.below(2);
            pod.images = (0..images)
                .map(|_| catalog_image(rng.below(IMAGE_CATALOG as u64) as usize).0)
                .collect();
            let selector = LabelSelector {
                match_labels: vec![("app".into(), app)],
                match_expressions: vec![],
            };
            let anyway = |key: &str| TopologySpreadConstraint {
                max_skew: 1,
                topology_key: key.into(),
                when_unsatisfiable: "ScheduleAnyway".into(),
                label_selector: Some(selector.clone()),
                ..Default::default()
            };
            let term = |key: &str| PodAffinityTerm {
                label_selector: Some(selector.clone()),
                topology_key: key.into(),
                ..Default::default()
            };
            match i % 5 {
                0 => {}
                1 => {
                    pod.preferred_node_affinity = vec![
                        WeightedSelectorTerm {
                            weight: 80,
                            preference: SelectorTerm {
                                match_expressions: vec![req("disktype", "In", &["ssd"])],
                                match_fields: vec![],
                            },
                        },
                        WeightedSelectorTerm {
                            weight: 20,
                            preference: SelectorTerm {
                                match_expressions: vec![req(
                                    "example.com/tier",
                                    "In",
                                    &["gold", "silver"],
                                )],
                                match_fields: vec![],
                            },
                        },
                    ]
                }
                2 => {
                    pod.tolerations.push(Toleration {
                        key: "example.com/flaky".into(),
                        operator: "Exists".into(),
                        value: String::new(),
                        effect: "PreferNoSchedule".into(),
                        toleration_seconds: None,
                    });
                    pod.topology_spread_constraints
                        .push(anyway("topology.kubernetes.io/zone"));
                }
                3 => {
                    pod.preferred_pod_affinity = vec![WeightedPodAffinityTerm {
                        weight: 50,
                        term: term("topology.kubernetes.io/zone"),
                    }];
                    pod.preferred_pod_anti_affinity = vec![WeightedPodAffinityTerm {
                        weight: 100,
                        term: term("kubernetes.io/hostname"),
                    }];
                }
                _ => pod
                    .topology_spread_constraints
                    .push(anyway("kubernetes.io/hostname")),
            }
            with_object(pod)
        })
        .collect()
}
