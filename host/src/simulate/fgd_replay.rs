//! The FGD paper's replay of the openb trace (Weng et al., USENIX ATC '23):
//! the workload its simulator runs, and one sift configuration per policy.
//!
//! The paper's simulator does not replay the timeline: on the GPU nodes
//! only, every pod arrives once, in a seeded random order, and stays
//! (`simulation-notes.md` §3.3). [`import_fgd_replay`] reads the trace
//! with [`crate::input::openb`] and prepares that workload with
//! `sift-gpu-share-logic`'s `workload` module: pods sorted by name,
//! shuffled by the seed, then tuned to `tune ×` the cluster's GPU milli
//! (clones of random pods named `<name>-tuned-<i>` appended, or random pods
//! removed). The events carry no times, so pods arrive in file order;
//! every pod has priority 0 and a strictly increasing `creationTimestamp`
//! (one second apart), so the scheduling queue's order is the file's too.
//! It also returns the typical-pod table of the original, untuned trace
//! (FGD's input), from which [`fgd_replay_configs`] writes a configuration
//! per policy.
//!
//! Here, not in `input/`, because it is simulation set-up that needs the
//! GPU-sharing plugins' own logic and the configuration type; the trace
//! reader stays a reader.

use crate::config::{
    Config, PluginConfig, PluginRef, PluginSet, PluginsSection, ScoreRef, ScoreSet,
};
use crate::input::openb::{self, PodRow, Summary, Trace};
use crate::input::workload::{Event, EventType};
use anyhow::{Result, anyhow};
use serde_json::json;
use sift_gpu_share_common::{TypicalPodArg, split_spec, typical_pods_to_args};
use sift_gpu_share_logic::frag::TypicalPods;
use sift_gpu_share_logic::gpu::{GpuPod, GpuSelMethod};
use sift_gpu_share_logic::policy::{POLICY_WEIGHT, Policy};
use sift_gpu_share_logic::workload::{NamedPod, ReplayConfig, prepare_replay};
use std::path::Path;

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

impl FgdReplay {
    /// The typical pods as the plugins' `typicalPods` argument
    /// (`typical-pods.json`).
    pub fn typical_pod_args(&self) -> Vec<TypicalPodArg> {
        typical_pods_to_args(&self.typical)
    }
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
    let (node_rows, pod_rows) = openb::read_rows(nodes_csv, pods_csv)?;
    let mut summary = Summary::default();
    let nodes = openb::cluster_nodes(&node_rows, true, &mut summary);
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
        let object = openb::pod(row, &r.name, Some(created))?;
        clones += usize::from(r.tuned_clone);
        summary.count_pod(row);
        events.push(Event {
            kind: EventType::Added,
            time: None,
            object,
        });
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

/// A trace row as the GPU-share plugins read the pod [`openb::pod`] makes.
fn gpu_pod(p: &PodRow) -> GpuPod {
    let gpu = p.requests_gpu();
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
/// `typical` goes to FGDScore and to `fgd` selection. Each file is a
/// [`Config`] serialized, under a comment saying what it is.
pub fn fgd_replay_configs(typical: &TypicalPods, seed: u64) -> Result<Vec<(&'static str, String)>> {
    let typical = typical_pods_to_args(typical);
    let mut out = Vec::new();
    for p in &FGD_POLICIES {
        let selection = p.policy.gpu_sel();
        let mut plugin_config = vec![gpu_share_args(selection, seed, &typical)];
        match p.policy {
            Policy::Fgd => plugin_config.push(args(p.scorer, json!({ "typicalPods": typical }))),
            Policy::Random => plugin_config.push(args(p.scorer, json!({ "seed": seed }))),
            _ => {}
        }
        let header = format!(
            "# sift configuration: the FGD paper's {} policy ({} at weight {POLICY_WEIGHT},\n\
             # GpuShare gpuSelection {}), written by `sift trace openb --replay fgd --seed {seed}`.\n",
            p.name,
            p.scorer,
            selection_name(selection),
        );
        let config = profile(&[(p.scorer, POLICY_WEIGHT)], plugin_config);
        out.push((p.file, header + &config.to_yaml()?));
    }
    let header = "# sift configuration: kube-scheduler's default score plugins with their\n\
         # weights (NodeResourcesFit LeastAllocated) on the FGD replay, with GpuShare\n\
         # filtering and choosing GPUs (gpuSelection best); every node is scored, as in\n\
         # the paper's runs. Not a row of the paper.\n";
    let config = profile(
        &crate::config::DEFAULT_SCORES,
        vec![
            gpu_share_args(GpuSelMethod::Best, seed, &typical),
            args(
                "NodeResourcesFit",
                json!({"scoringStrategy": {"type": "LeastAllocated"}}),
            ),
        ],
    );
    out.push(("default-scheduler", header.to_string() + &config.to_yaml()?));
    Ok(out)
}

fn selection_name(s: GpuSelMethod) -> &'static str {
    match s {
        GpuSelMethod::Best => "best",
        GpuSelMethod::Random => "random",
        GpuSelMethod::Fgd => "fgd",
    }
}

/// Scoring every node, the default filters plus GpuShare, these scorers
/// alone, these plugin arguments.
fn profile(scorers: &[(&str, i64)], plugin_config: Vec<PluginConfig>) -> Config {
    Config {
        percentage_of_nodes_to_score: Some(100),
        plugins: PluginsSection {
            filter: PluginSet {
                enabled: vec![PluginRef {
                    name: "GpuShare".into(),
                    ignorable: false,
                }],
                disabled: Vec::new(),
            },
            score: ScoreSet {
                disabled: vec![ScoreRef {
                    name: "*".into(),
                    weight: None,
                }],
                enabled: scorers
                    .iter()
                    .map(|(name, weight)| ScoreRef {
                        name: name.to_string(),
                        weight: Some(*weight),
                    })
                    .collect(),
            },
        },
        plugin_config,
        ..Config::default()
    }
}

fn args(name: &str, args: serde_json::Value) -> PluginConfig {
    PluginConfig {
        name: name.to_string(),
        args,
    }
}

/// GpuShare's arguments: the selection, and what it draws from.
fn gpu_share_args(selection: GpuSelMethod, seed: u64, typical: &[TypicalPodArg]) -> PluginConfig {
    let mut a = json!({ "gpuSelection": selection_name(selection) });
    match selection {
        GpuSelMethod::Random => a["seed"] = json!(seed),
        GpuSelMethod::Fgd => a["typicalPods"] = json!(typical),
        GpuSelMethod::Best => {}
    }
    args("GpuShare", a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DEFAULT_FILTERS;
    use crate::input::workload::EventType;

    fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    /// A node list with a CPU-only node and two GPU nodes (10 GPUs), and
    /// 20 pods: shares, whole GPUs, CPU-only, one with a model list.
    fn replay_inputs(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
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

    /// The configs, loaded as sift loads them, configure the plugins they
    /// name as the paper's runs pair them.
    #[test]
    fn fgd_replay_configs_load_and_configure_the_plugins() {
        let dir = std::env::temp_dir().join(format!("sift-openb-configs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (nodes, pods) = replay_inputs(&dir);
        let r = import_fgd_replay(&nodes, &pods, 7, 1.3).unwrap();
        let configs = fgd_replay_configs(&r.typical, 7).unwrap();
        let expected = [
            ("random", "RandomScore", "random"),
            ("dot-prod", "DotProdScore", "best"),
            ("gpu-clustering", "GpuClusteringScore", "best"),
            ("gpu-packing", "GpuPackingScore", "best"),
            ("best-fit", "BestFitScore", "best"),
            ("fgd", "FGDScore", "fgd"),
            ("default-scheduler", "NodeResourcesFit", "best"),
        ];
        assert_eq!(configs.len(), expected.len());
        let natives = crate::plugins::native::builtin();
        let native = |name: &str| natives.iter().find(|p| p.name == name).unwrap();
        for ((file, yaml), (want_file, scorer, selection)) in configs.iter().zip(expected) {
            assert_eq!(*file, want_file);
            let path = dir.join(format!("{file}.yaml"));
            std::fs::write(&path, yaml).unwrap();
            let c = Config::load(&path).unwrap_or_else(|e| panic!("{file}: {e:#}\n{yaml}"));
            assert_eq!(c.percentage_of_nodes_to_score, Some(100));
            let filters: Vec<String> = c.filter_plugins().into_iter().map(|p| p.name).collect();
            let mut want: Vec<String> = DEFAULT_FILTERS.iter().map(|s| s.to_string()).collect();
            want.push("GpuShare".into());
            assert_eq!(filters, want, "{file}");
            let scores = c.score_plugins();
            if file == &"default-scheduler" {
                let defaults: Vec<(String, i64)> = crate::config::DEFAULT_SCORES
                    .iter()
                    .map(|(n, w)| (n.to_string(), *w))
                    .collect();
                assert_eq!(scores, defaults);
            } else {
                assert_eq!(scores, [(scorer.to_string(), 1000)], "{file}");
            }
            let share: serde_json::Value = serde_json::from_str(&c.args_for("GpuShare")).unwrap();
            assert_eq!(share["gpuSelection"], selection, "{file}");
            // Every configured plugin accepts its arguments.
            for pc in &c.plugin_config {
                native(&pc.name)
                    .instantiate(&c.args_for(&pc.name))
                    .unwrap_or_else(|e| panic!("{file}: {}: {e}", pc.name));
            }
            for (name, _) in &scores {
                native(name).instantiate(&c.args_for(name)).unwrap();
            }
        }
        // The typical pods survive the YAML exactly.
        let c = Config::load(&dir.join("fgd.yaml")).unwrap();
        let args: serde_json::Value = serde_json::from_str(&c.args_for("FGDScore")).unwrap();
        let back: Vec<TypicalPodArg> = serde_json::from_value(args["typicalPods"].clone()).unwrap();
        assert_eq!(back, typical_pods_to_args(&r.typical));
        let random: serde_json::Value = serde_json::from_str(
            &Config::load(&dir.join("random.yaml"))
                .unwrap()
                .args_for("RandomScore"),
        )
        .unwrap();
        assert_eq!(random["seed"], 7);
        std::fs::remove_dir_all(&dir).ok();
    }
}
