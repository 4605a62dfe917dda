//! Offline conformance: case files (one JSON object each) that describe a
//! cluster, a pod and the expected outcome of a full filtering cycle.
//!
//! ```json
//! { "name": "...", "filters": ["TaintToleration"],
//!   "nodes": [<v1 Node>], "pods": [<bound v1 Pod>], "pod": <v1 Pod>,
//!   "namespaces": [<v1 Namespace>],
//!   "expect": { "feasible": ["node-a"],
//!               "statuses": {"node-b": {"code": "...", "plugin": "...", "reasons": ["..."]}},
//!               "message": "0/2 nodes are available: ..." } }
//! ```
//! Unknown top-level keys are ignored; a status expectation checks only the
//! fields it gives. Cycles run over every node (percentageOfNodesToScore
//! 100) with short-circuiting, prepare steps included.

use crate::config::{Config, DEFAULT_FILTERS, PluginRef};
use crate::engine::CycleOutcome;
use crate::framework::{Framework, Mode, Overrides, Runner, replay};
use crate::input::Objects;
use crate::input::kube;
use crate::input::workload::{Event, EventType, Events};
use crate::plugins::registry::Catalog;
use crate::simulate;
use crate::simulate::report::{Outputs, Report};
use anyhow::{Context, Result, anyhow, bail};
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};

#[derive(Debug, Deserialize)]
pub struct Case {
    pub name: String,
    pub filters: Option<Vec<String>>,
    pub nodes: Vec<Value>,
    #[serde(default)]
    pub pods: Vec<Value>,
    /// Namespaces, for pod affinity's namespaceSelector.
    #[serde(default)]
    pub namespaces: Vec<Value>,
    /// Other objects of the cluster, as kubectl prints them: claims,
    /// volumes, classes, CSI objects (what the volume filters read).
    #[serde(default)]
    pub objects: Vec<Value>,
    pub pod: Value,
    pub expect: Expect,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    pub feasible: Vec<String>,
    #[serde(default)]
    pub statuses: BTreeMap<String, ExpectStatus>,
    pub message: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectStatus {
    pub code: Option<String>,
    pub plugin: Option<String>,
    pub reasons: Option<Vec<String>>,
}

/// The result of one case file.
pub struct CaseResult {
    pub file: PathBuf,
    pub name: String,
    /// Empty when the case passed.
    pub differences: Vec<String>,
}

/// Case files under the given files or directories (recursively, following
/// symbolic links but visiting each directory once, so a link cycle ends),
/// sorted.
pub fn collect_case_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut visited = HashSet::new();
    for p in paths {
        if p.is_dir() {
            let mut stack = vec![p.clone()];
            while let Some(dir) = stack.pop() {
                let real = std::fs::canonicalize(&dir)
                    .with_context(|| format!("cannot read {}", dir.display()))?;
                if !visited.insert(real) {
                    continue;
                }
                for entry in std::fs::read_dir(&dir)
                    .with_context(|| format!("cannot read {}", dir.display()))?
                {
                    let path = entry?.path();
                    if path.is_dir() {
                        stack.push(path);
                    } else if path.extension().is_some_and(|e| e == "json") {
                        out.push(path);
                    }
                }
            }
        } else if p.is_file() {
            out.push(p.clone());
        } else {
            bail!("{}: no such file or directory", p.display());
        }
    }
    // A file reached by two paths (a link, or named twice) runs once.
    out.sort();
    let mut seen = HashSet::new();
    out.retain(|f| seen.insert(std::fs::canonicalize(f).unwrap_or_else(|_| f.clone())));
    Ok(out)
}

/// Runs one case file against the catalog's plugins.
pub fn run_case(file: &Path, catalog: &Catalog) -> CaseResult {
    let mut result = CaseResult {
        file: file.to_path_buf(),
        name: String::new(),
        differences: Vec::new(),
    };
    match run_case_inner(file, catalog, &mut result.name) {
        Ok(diffs) => result.differences = diffs,
        Err(e) => result.differences.push(format!("{e:#}")),
    }
    result
}

fn run_case_inner(file: &Path, catalog: &Catalog, name: &mut String) -> Result<Vec<String>> {
    let text = crate::input::read::read_text_file(file)?;
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        anyhow!(
            "invalid JSON at line {}, column {}: {e}",
            e.line(),
            e.column()
        )
    })?;
    if !value.is_object() {
        bail!(
            "not a case file: expected one JSON object with \"name\", \"nodes\", \"pod\" and \
             \"expect\", found {}",
            match value {
                Value::Array(_) => "an array",
                Value::String(_) => "a string",
                Value::Number(_) => "a number",
                Value::Bool(_) => "a boolean",
                _ => "null",
            }
        );
    }
    if value.get("workload").is_some() {
        return run_simulation_case(file, catalog, name, value);
    }
    let case: Case = serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." {
            anyhow!("not a case file: {inner}")
        } else {
            anyhow!("not a case file: field {path}: {inner}")
        }
    })?;
    *name = case.name.clone();
    if let Some(filters) = &case.filters {
        let mut seen = BTreeSet::new();
        if let Some(twice) = filters.iter().find(|f| !seen.insert(f.as_str())) {
            bail!("\"filters\" lists {twice:?} twice: a plugin runs once per cycle");
        }
    }

    let mut objects = cluster_objects(file, case.nodes, case.pods, case.namespaces)?;
    for (i, v) in case.objects.into_iter().enumerate() {
        objects.add_json(file, &format!("objects[{i}]"), v, None)?;
    }
    let mut target = Objects::default();
    target.add_json(file, "pod", case.pod, Some("Pod"))?;
    let (pod_obj, _) = target
        .pods
        .pop()
        .ok_or_else(|| anyhow!("\"pod\" is not a Pod"))?;
    let mut pod = kube::pod(&pod_obj)?;

    let filters: Vec<PluginRef> = case
        .filters
        .unwrap_or_else(|| DEFAULT_FILTERS.iter().map(|s| s.to_string()).collect())
        .into_iter()
        .map(|name| PluginRef {
            name,
            ignorable: false,
        })
        .collect();
    let overrides = Overrides {
        percentage: Some(100),
        parallelism: Some(2),
        filters: Some(filters),
        ..Overrides::default()
    };
    let framework = Framework::build(&Config::default(), catalog, Mode::Filter, &overrides)?;
    if framework.engine().full_objects().pod {
        pod.object = Some(kube::object_json(&pod_obj));
    }
    let snapshot = framework.cluster_state(&objects)?.snapshot();
    let mut engine = framework.into_filter_engine()?;
    let outcome = engine.find_nodes_that_fit(&snapshot, pod);
    Ok(compare(&case.expect, &outcome))
}

/// A case's cluster: its nodes, bound pods and namespaces, each error
/// naming the file and the element (`nodes[2]`).
fn cluster_objects(
    file: &Path,
    nodes: Vec<Value>,
    pods: Vec<Value>,
    namespaces: Vec<Value>,
) -> Result<Objects> {
    let mut objects = Objects::default();
    for (field, kind, values) in [
        ("nodes", "Node", nodes),
        ("pods", "Pod", pods),
        ("namespaces", "Namespace", namespaces),
    ] {
        for (i, v) in values.into_iter().enumerate() {
            objects.add_json(file, &format!("{field}[{i}]"), v, Some(kind))?;
        }
    }
    Ok(objects)
}

/// What differs between the expectation and the outcome.
pub fn compare(expect: &Expect, got: &CycleOutcome) -> Vec<String> {
    let mut diffs = Vec::new();
    let want: BTreeSet<&str> = expect.feasible.iter().map(String::as_str).collect();
    let have: BTreeSet<&str> = got.feasible_nodes().map(|n| &**n).collect();
    if want != have {
        diffs.push(format!("feasible: expected {want:?}, got {have:?}"));
    }
    if let Some(err) = &got.error
        && expect
            .statuses
            .values()
            .all(|s| s.code.as_deref() != Some("Error"))
    {
        diffs.push(format!("cycle failed: {err}"));
    }
    for (node, exp) in &expect.statuses {
        let Some(status) = got.status(node) else {
            diffs.push(format!(
                "{node}: expected a status, got none (feasible or not evaluated)"
            ));
            continue;
        };
        if let Some(code) = &exp.code
            && code != status.code().as_str()
        {
            diffs.push(format!(
                "{node}: code expected {code}, got {}",
                status.code().as_str()
            ));
        }
        if let Some(plugin) = &exp.plugin
            && Some(plugin.as_str()) != status.plugin()
        {
            diffs.push(format!(
                "{node}: plugin expected {plugin}, got {}",
                status.plugin().unwrap_or("(none)")
            ));
        }
        if let Some(reasons) = &exp.reasons
            && reasons.as_slice() != status.reasons()
        {
            diffs.push(format!(
                "{node}: reasons expected {reasons:?}, got {:?}",
                status.reasons()
            ));
        }
    }
    if let Some(msg) = &expect.message
        && Some(msg) != got.message.as_ref()
    {
        diffs.push(format!(
            "message expected {msg:?}, got {:?}",
            got.message
                .as_deref()
                .or(got.error.as_deref())
                .unwrap_or("(none)")
        ));
    }
    diffs
}

/// A simulation case: a workload of pending pods through the scheduler
/// loop (`"workload"` instead of `"pod"`).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SimulationCase {
    pub name: String,
    /// "scheduler" (the default); "batch" comes with batch mode.
    pub mode: Option<String>,
    /// A sift configuration as JSON (scoring, plugin arguments...).
    pub config: Option<Value>,
    pub filters: Option<Vec<String>>,
    pub nodes: Vec<Value>,
    #[serde(default)]
    pub pods: Vec<Value>,
    #[serde(default)]
    pub namespaces: Vec<Value>,
    /// Pending pods, in arrival order.
    pub workload: Vec<Value>,
    /// Other objects of the cluster, as kubectl prints them:
    /// PodDisruptionBudgets, Services and controllers, claims, volumes,
    /// classes and CSI objects.
    #[serde(default)]
    pub objects: Vec<Value>,
    /// Batch mode: Volcano Queues, PodGroups and PriorityClasses.
    #[serde(default)]
    pub queues: Vec<Value>,
    #[serde(default)]
    pub pod_groups: Vec<Value>,
    #[serde(default)]
    pub priority_classes: Vec<Value>,
    /// Batch mode: sessions to run; default 1, as upstream's action tests
    /// run (a case's pods all arrive at once).
    pub sessions: Option<u32>,
    pub expect: SimulationExpect,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SimulationExpect {
    /// namespace/name -> node, for the pods listed.
    #[serde(default)]
    pub binds: BTreeMap<String, String>,
    #[serde(default)]
    pub unscheduled: Vec<String>,
    /// namespace/name -> the FitError message.
    #[serde(default)]
    pub messages: BTreeMap<String, String>,
    pub bind_count: Option<usize>,
    /// Preemptor -> the pods its preemptions evicted (any order; `[]`:
    /// none).
    #[serde(default)]
    pub preempted: BTreeMap<String, Vec<String>>,
    /// Batch mode: namespace/podgroup -> its phase and condition message.
    #[serde(default)]
    pub pod_groups: BTreeMap<String, ExpectGroup>,
    /// Scheduler mode: plugin -> node -> its normalized score (0..=100,
    /// before weighting) for the first workload pod, on exactly the nodes
    /// that pass the case's filters; a plugin whose PreScore skips the pod
    /// scores 0 on each (upstream's scoring tests).
    #[serde(default)]
    pub scores: BTreeMap<String, BTreeMap<String, i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExpectGroup {
    pub phase: Option<String>,
    /// The Unschedulable condition's message gang writes.
    pub message: Option<String>,
    /// The Warning event's message.
    pub event: Option<String>,
}

fn run_simulation_case(
    file: &Path,
    catalog: &Catalog,
    name: &mut String,
    value: Value,
) -> Result<Vec<String>> {
    let case: SimulationCase = serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        anyhow!("not a simulation case: field {path}: {}", e.into_inner())
    })?;
    *name = case.name.clone();
    let batch = match case.mode.as_deref() {
        None | Some("scheduler") => false,
        Some("batch") => true,
        Some(other) => bail!("unknown mode {other:?} (\"scheduler\" or \"batch\")"),
    };
    let mut config: Config = match case.config {
        Some(v) => serde_path_to_error::deserialize(v).map_err(|e| {
            let path = e.path().to_string();
            anyhow!("config: {path}: {}", e.into_inner())
        })?,
        None => Config::default(),
    };
    if batch {
        config.apply_batch_defaults();
    }
    config.check_scores().context("config")?;
    crate::config::extenders::check_extenders(&config.extenders).context("config")?;
    let catalog = catalog.reconfigured(&config).context("config")?;
    let mut objects = cluster_objects(file, case.nodes, case.pods, case.namespaces)?;
    for (i, v) in case.objects.into_iter().enumerate() {
        objects.add_json(file, &format!("objects[{i}]"), v, None)?;
    }
    let mut pending = Objects::default();
    for (i, p) in case.workload.into_iter().enumerate() {
        pending.add_json(file, &format!("workload[{i}]"), p, Some("Pod"))?;
    }
    let overrides = Overrides {
        parallelism: Some(2),
        filters: case.filters.map(|names| {
            names
                .into_iter()
                .map(|name| PluginRef {
                    name,
                    ignorable: false,
                })
                .collect()
        }),
        ..Overrides::default()
    };
    let mode = if batch { Mode::Batch } else { Mode::Scheduler };
    let mut framework = Framework::build(&config, &catalog, mode, &overrides)?;
    let mut cluster = framework.cluster_state(&objects)?;
    let mut diffs = Vec::new();
    if !case.expect.scores.is_empty() {
        let Runner::Scheduler(scheduler) = &mut framework.runner else {
            bail!("expect.scores: only in scheduler mode");
        };
        let Some((first, _)) = pending.pods.first() else {
            bail!("expect.scores: the workload has no pod to score");
        };
        let mut pod = kube::pod(first).context("workload[0]")?;
        if scheduler.engine().full_objects().pod {
            pod.object = Some(kube::object_json(first));
        }
        let snapshot = cluster.snapshot();
        let (feasible, scores) = scheduler
            .score_feasible(&snapshot, pod)
            .map_err(|e| anyhow!("scoring workload[0]: {e}"))?;
        diffs.extend(compare_scores(&case.expect.scores, &feasible, &scores));
    }
    let events: Vec<Event> = pending
        .pods
        .into_iter()
        .map(|(object, _)| Event {
            kind: EventType::Added,
            time: None,
            object,
        })
        .collect();
    // Queues, PodGroups and PriorityClasses are batch mode's.
    let mut batch_objects = Objects::default();
    if batch {
        for (field, kind, values) in [
            ("queues", "Queue", case.queues),
            ("podGroups", "PodGroup", case.pod_groups),
            ("priorityClasses", "PriorityClass", case.priority_classes),
        ] {
            for (i, v) in values.into_iter().enumerate() {
                batch_objects.add_json(file, &format!("{field}[{i}]"), v, Some(kind))?;
            }
        }
    }
    let bound = objects
        .pods
        .iter()
        .filter(|(p, _)| kube::bound_node(p).is_some())
        .map(|(p, _)| p.clone())
        .collect();
    let settings = replay::Settings {
        max_sessions: Some(case.sessions.unwrap_or(1)),
        ..replay::Settings::default()
    };
    let report = replay::run(
        &mut framework,
        cluster,
        &replay::batch_input(&batch_objects, bound),
        &mut Events::new(events),
        &settings,
        Outputs::keep_all(),
        &mut (),
    )?;
    diffs.extend(compare_simulation(&case.expect, &report));
    Ok(diffs)
}

/// What differs between expected and computed scores: every expected
/// plugin must have scored exactly the expected nodes.
fn compare_scores(
    expect: &BTreeMap<String, BTreeMap<String, i64>>,
    feasible: &[std::sync::Arc<str>],
    scores: &[crate::engine::schedule::PluginScores],
) -> Vec<String> {
    let mut diffs = Vec::new();
    for (plugin, want) in expect {
        let Some(got) = scores.iter().find(|s| &s.plugin == plugin) else {
            diffs.push(format!("scores: {plugin} is not a configured score plugin"));
            continue;
        };
        let got: BTreeMap<&str, i64> = feasible
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let v = got.scores.as_ref().map_or(0, |s| s[i]);
                (n.as_ref(), v)
            })
            .collect();
        let want_nodes: BTreeSet<&str> = want.keys().map(String::as_str).collect();
        let got_nodes: BTreeSet<&str> = got.keys().copied().collect();
        if want_nodes != got_nodes {
            diffs.push(format!(
                "scores: {plugin}: expected nodes {want_nodes:?}, feasible {got_nodes:?}"
            ));
            continue;
        }
        for (node, v) in want {
            if got[node.as_str()] != *v {
                diffs.push(format!(
                    "scores: {plugin} on {node}: expected {v}, got {}",
                    got[node.as_str()]
                ));
            }
        }
    }
    diffs
}

/// What differs between a simulation's expectation and its report.
pub fn compare_simulation(expect: &SimulationExpect, report: &Report) -> Vec<String> {
    let mut diffs = Vec::new();
    let by_key: BTreeMap<&str, &simulate::report::PodOutcome> =
        report.pods.iter().map(|p| (p.pod.as_str(), p)).collect();
    let describe = |p: Option<&&simulate::report::PodOutcome>| match p {
        None => "not in the workload".to_string(),
        Some(p) => match (&p.node, &p.message) {
            (Some(n), _) => format!("bound to {n}"),
            (None, Some(m)) => format!("unscheduled: {m}"),
            (None, None) => "not scheduled".to_string(),
        },
    };
    for (pod, node) in &expect.binds {
        let got = by_key.get(pod.as_str());
        if got.and_then(|p| p.node.as_deref()) != Some(node.as_str()) {
            diffs.push(format!(
                "{pod}: expected bound to {node}, {}",
                describe(got)
            ));
        }
    }
    for pod in &expect.unscheduled {
        let got = by_key.get(pod.as_str());
        if got.is_none_or(|p| p.node.is_some()) {
            diffs.push(format!("{pod}: expected unscheduled, {}", describe(got)));
        }
    }
    for (pod, msg) in &expect.messages {
        let got = by_key.get(pod.as_str()).and_then(|p| p.message.as_deref());
        if got != Some(msg.as_str()) {
            diffs.push(format!(
                "{pod}: message expected {msg:?}, got {:?}",
                got.unwrap_or("(none)")
            ));
        }
    }
    for (pod, victims) in &expect.preempted {
        let mut want = victims.clone();
        want.sort();
        let mut got = by_key
            .get(pod.as_str())
            .map(|p| p.preempted.clone())
            .unwrap_or_default();
        got.sort();
        if got != want {
            diffs.push(format!(
                "{pod}: expected to evict {want:?}, evicted {got:?}"
            ));
        }
    }
    let groups: BTreeMap<&str, &simulate::report::GroupOutcome> = report
        .groups
        .iter()
        .map(|g| (g.group.as_str(), g))
        .collect();
    for (key, want) in &expect.pod_groups {
        let Some(got) = groups.get(key.as_str()) else {
            diffs.push(format!("{key}: expected a PodGroup, none in the report"));
            continue;
        };
        if let Some(phase) = &want.phase
            && &got.phase != phase
        {
            diffs.push(format!("{key}: phase expected {phase}, got {}", got.phase));
        }
        if let Some(msg) = &want.message {
            let have = got
                .condition
                .as_ref()
                .filter(|c| c.kind == "Unschedulable")
                .map(|c| c.message.as_str());
            if have != Some(msg.as_str()) {
                diffs.push(format!(
                    "{key}: condition message expected {msg:?}, got {:?}",
                    have.unwrap_or("(no Unschedulable condition)")
                ));
            }
        }
        if let Some(event) = &want.event
            && got.event.as_deref() != Some(event.as_str())
        {
            diffs.push(format!(
                "{key}: event expected {event:?}, got {:?}",
                got.event.as_deref().unwrap_or("(none)")
            ));
        }
    }
    if let Some(n) = expect.bind_count {
        let (bound, _) = report.counts();
        if bound != n {
            diffs.push(format!("bindCount: expected {n}, got {bound}"));
        }
    }
    diffs
}
