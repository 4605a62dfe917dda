//! `sift simulate`: a workload through kube-scheduler's scheduleOne loop
//! (or, `--mode batch`, Volcano's sessions), once per configuration;
//! per-pod outcomes, a summary or comparison table, a timeline CSV and a
//! plot; in batch mode also PodGroup outcomes and queue shares.

use super::{PluginSource, catalog, load_config, parse_parallelism};
use crate::config::Config;
use crate::engine::schedule::TieBreak;
use crate::framework::{self, Framework, Overrides, replay};
use crate::input::workload::{self, Event, EventType};
use crate::input::{Objects, kube};
use crate::simulate::report::{Output, Outputs, Report};
use crate::simulate::{Progress, batch, plot};
use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// Which scheduler the simulation runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum Mode {
    /// kube-scheduler's scheduleOne: one pod per cycle, queue order.
    Scheduler,
    /// Volcano's sessions every `batch.schedulePeriod`: gangs (PodGroup
    /// minMember) placed whole or not at all, queues sharing by weight.
    Batch,
}

#[derive(Args)]
pub(super) struct SimulateArgs {
    /// Nodes and bound pods, and what plugins read besides (namespaces,
    /// Services and controllers, claims, volumes, classes, CSINodes,
    /// PodDisruptionBudgets): JSON or YAML as kubectl prints them. Pending
    /// pods in them join the workload, first. Repeatable.
    #[arg(long, required = true, num_args = 1.., value_name = "FILE")]
    cluster: Vec<PathBuf>,
    /// Pod events, one JSON object per line: {"type":"ADDED|DELETED",
    /// "time":SECONDS,"object":Pod} (`sift trace` writes them). Without
    /// times, pods arrive in queue order and never leave.
    #[arg(long, value_name = "FILE.ndjson")]
    workload: Option<PathBuf>,
    /// sift configuration (YAML); repeat to compare configurations over
    /// the same workload (one table row each).
    #[arg(long, short = 'c', value_name = "FILE")]
    config: Vec<PathBuf>,
    /// Directory of plugin components (default: the bundled plugins).
    #[arg(long = "plugins", value_name = "DIR")]
    plugins_dir: Option<PathBuf>,
    /// Run the built-in plugins compiled into sift instead of Wasm.
    #[arg(long)]
    native: bool,
    /// Override percentageOfNodesToScore (0 = adaptive, 1-100).
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=100))]
    percentage: Option<u32>,
    /// Override the number of worker threads (1-256).
    #[arg(long, value_parser = parse_parallelism)]
    parallelism: Option<usize>,
    /// Break score ties at random from this seed (upstream picks among
    /// tied nodes at random); default: the first in filter order.
    #[arg(long)]
    seed: Option<u64>,
    /// One attempt per pod: failed pods are never retried (the FGD
    /// paper's replay).
    #[arg(long)]
    no_retry: bool,
    /// Write each pod's outcome as JSON lines (node or FitError message,
    /// attempts, times, reserved annotations). A line is written when the
    /// pod is finished: pods that leave in the order they leave, then the
    /// pods still there at the end in order of arrival.
    #[arg(long, value_name = "FILE.jsonl")]
    pods_out: Option<PathBuf>,
    /// Write allocation and pending pods over the replay as CSV (one row
    /// per attempt).
    #[arg(long, value_name = "FILE.csv")]
    timeline: Option<PathBuf>,
    /// Plot allocation against arrived demand and pending pods (SVG).
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Explain one pod's last attempt: each node's verdict by plugin and
    /// each feasible node's scores, as JSON on stdout.
    #[arg(long, value_name = "NAMESPACE/NAME")]
    explain: Option<String>,
    /// The whole report(s) as JSON on stdout instead of the table.
    #[arg(long)]
    json: bool,
    /// Also report the allocation of the main resource (GPU if any) when
    /// arrived demand reaches this % of capacity: the FGD paper's metric
    /// (its Figs. 11-14 use 100).
    #[arg(long, value_name = "PERCENT")]
    at_arrived: Option<i64>,
    /// `batch`: Volcano's sessions (actions and tiers from the config's
    /// `batch:`; PodGroups, Queues and PriorityClasses from the cluster
    /// files; a pod joins a gang by the annotation
    /// scheduling.k8s.io/group-name).
    #[arg(long, value_enum, default_value = "scheduler")]
    mode: Mode,
    /// Batch mode: stop after this many sessions (default: when the
    /// workload is over and a session binds nothing).
    #[arg(long, value_name = "N")]
    sessions: Option<u32>,
    /// Batch mode: write each PodGroup's outcome as JSON lines (phase,
    /// tasks bound, the condition and event Volcano would write).
    #[arg(long, value_name = "FILE.jsonl")]
    groups_out: Option<PathBuf>,
    /// Batch mode: write each queue's allocated and deserved resources per
    /// session as CSV (proportion's view).
    #[arg(long, value_name = "FILE.csv")]
    queues_out: Option<PathBuf>,
}

/// A progress bar on stderr, hidden when stderr is not a terminal.
struct Bar(indicatif::ProgressBar);

impl Progress for Bar {
    fn attempted(&mut self, done: u64, total: u64) {
        self.0.set_length(total);
        self.0.set_position(done);
    }
}

/// The cluster files split into what is there (nodes, namespaces, bound
/// pods) and what arrives (their pending pods, first, then the workload
/// file, read as each replay goes: it may be far larger than memory).
struct Workload {
    bound: Objects,
    pending: Vec<Event>,
    bound_keys: Vec<String>,
    file: Option<PathBuf>,
}

impl Workload {
    fn new(cluster: &Objects, file: Option<PathBuf>) -> Result<Workload> {
        let mut pending: Vec<Event> = Vec::new();
        let mut bound = Objects {
            nodes: cluster.nodes.clone(),
            namespaces: cluster.namespaces.clone(),
            budgets: cluster.budgets.clone(),
            workloads: cluster.workloads.clone(),
            api_objects: cluster.api_objects.clone(),
            ..Default::default()
        };
        for (pod, origin) in &cluster.pods {
            if kube::bound_node(pod).is_some() {
                bound.pods.push((pod.clone(), origin.clone()));
            } else {
                pending.push(Event {
                    kind: EventType::Added,
                    time: None,
                    object: pod.clone(),
                });
            }
        }
        let bound_keys = bound.pods.iter().map(|(p, _)| kube::pod_key(p)).collect();
        let workload = Workload {
            bound,
            pending,
            bound_keys,
            file,
        };
        if let Some(file) = &workload.file
            && !workload.pending.is_empty()
            && workload::Events::open(file, Vec::new())?
                .peek()?
                .is_some_and(|e| e.time.is_some())
        {
            tracing::info!(
                "{} pending pods from the cluster files arrive at time 0",
                workload.pending.len()
            );
        }
        if workload.open()?.peek()?.is_none() {
            bail!(
                "nothing to simulate: the cluster files have no pending pod and no --workload was given"
            );
        }
        Ok(workload)
    }

    /// The events from the start, for one replay.
    fn open(&self) -> Result<workload::Events> {
        let events = match &self.file {
            Some(file) => workload::Events::open(file, self.pending.clone())?,
            None => workload::Events::new(self.pending.clone()),
        };
        Ok(events.with_bound(self.bound_keys.iter().map(String::as_str)))
    }
}

/// Flags that belong to the other mode are refused.
fn check_mode_flags(a: &SimulateArgs, cluster: &Objects) -> Result<()> {
    if a.mode == Mode::Scheduler {
        for (flag, set) in [
            ("--sessions", a.sessions.is_some()),
            ("--groups-out", a.groups_out.is_some()),
            ("--queues-out", a.queues_out.is_some()),
        ] {
            if set {
                bail!("{flag} is for --mode batch");
            }
        }
        if !cluster.pod_groups.is_empty() {
            tracing::warn!(
                "the cluster files have {} PodGroup(s): only --mode batch schedules gangs",
                cluster.pod_groups.len()
            );
        }
    } else if a.no_retry || a.explain.is_some() {
        bail!("--no-retry and --explain are for --mode scheduler");
    }
    Ok(())
}

pub(super) fn simulate(a: SimulateArgs) -> Result<ExitCode> {
    let cluster = Objects::read_files(&a.cluster)?;
    let workload = Workload::new(&cluster, a.workload.clone())?;
    check_mode_flags(&a, &cluster)?;
    let bound_pods: Vec<_> = workload.bound.pods.iter().map(|(p, _)| p.clone()).collect();
    let batch_input = replay::batch_input(&cluster, bound_pods);
    let mut configs: Vec<(String, Config)> = if a.config.is_empty() {
        vec![("default".into(), Config::default())]
    } else {
        a.config
            .iter()
            .map(|p| Ok((config_label(p), load_config(Some(p))?)))
            .collect::<Result<_>>()?
    };
    if a.mode == Mode::Batch {
        for (_, c) in &mut configs {
            c.apply_batch_defaults();
        }
    }
    let mut reports: Vec<(String, Report, f64)> = Vec::new();
    for (label, config) in &configs {
        let (report, seconds) =
            replay_one(&a, &workload, &batch_input, label, config, configs.len())?;
        reports.push((label.clone(), report, seconds));
    }
    write_reports(&a, &reports)
}

/// One configuration's replay, and its seconds (the replay alone, not
/// the loading of plugins).
fn replay_one(
    a: &SimulateArgs,
    workload: &Workload,
    batch_input: &batch::BatchInput,
    label: &str,
    config: &Config,
    runs: usize,
) -> Result<(Report, f64)> {
    let settings = replay::Settings {
        no_retry: a.no_retry,
        explain: a.explain.clone(),
        max_sessions: a.sessions,
    };
    let mut framework = build(a, config).with_context(|| format!("config {label}"))?;
    let state = framework.cluster_state(&workload.bound)?;
    let mut events = workload.open()?;
    if let Some(key) = &a.explain {
        events.watch(key);
    }
    let outputs = Outputs {
        pods: a
            .pods_out
            .as_ref()
            .map(|p| create(&output_path(p, label, runs)))
            .transpose()?,
        timeline: a
            .timeline
            .as_ref()
            .map(|p| create(&output_path(p, label, runs)))
            .transpose()?,
        keep: a.json,
    };
    let mut progress = bar(label, events.progress().1)?;
    let started = Instant::now();
    let report = replay::run(
        &mut framework,
        state,
        batch_input,
        &mut events,
        &settings,
        outputs,
        &mut progress,
    )?;
    progress.0.finish_and_clear();
    if let Some(key) = &a.explain
        && !events.saw()
    {
        bail!("--explain {key}: no pod of the workload has that namespace/name");
    }
    Ok((report, started.elapsed().as_secs_f64()))
}

/// The reports: files (`--groups-out`, `--queues-out`, `--plot`), then the
/// explanation, JSON or table on stdout.
fn write_reports(a: &SimulateArgs, reports: &[(String, Report, f64)]) -> Result<ExitCode> {
    for (path, what) in [(&a.groups_out, "groups"), (&a.queues_out, "queues")] {
        let Some(path) = path else { continue };
        for (label, report, _) in reports {
            let file = output_path(path, label, reports.len());
            let mut out = std::io::BufWriter::new(
                std::fs::File::create(&file)
                    .map_err(|e| anyhow!("cannot write {}: {e}", file.display()))?,
            );
            match what {
                "groups" => report.write_groups(&mut out),
                _ => report.write_queues(&mut out),
            }
            .and_then(|_| out.flush())
            .map_err(|e| anyhow!("cannot write {}: {e}", file.display()))?;
        }
    }
    if let Some(path) = &a.plot {
        let runs: Vec<(String, &Report)> = reports.iter().map(|(l, r, _)| (l.clone(), r)).collect();
        plot::write(path, &runs)?;
    }
    if a.explain.is_some() {
        for (label, report, _) in reports {
            let value = serde_json::json!({"config": label, "explanation": report.explanation});
            println!("{}", serde_json::to_string_pretty(&value)?);
        }
        return Ok(ExitCode::SUCCESS);
    }
    if a.json {
        let all: Vec<_> = reports
            .iter()
            .map(|(label, report, secs)| {
                let at = a
                    .at_arrived
                    .and_then(|k| report.allocation_at_arrived(report.main_resource(), k));
                serde_json::json!({"config": label, "seconds": secs, "allocationAtArrived": at, "report": report})
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&all)?);
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", table(reports, a.at_arrived));
    Ok(ExitCode::SUCCESS)
}

/// The framework one configuration asks for, with the command line's
/// overrides.
fn build(a: &SimulateArgs, config: &Config) -> Result<Framework> {
    let source = PluginSource {
        config: None,
        plugins_dir: a.plugins_dir.clone(),
        native: a.native,
    };
    let catalog = catalog(&source, config, &[])?;
    let overrides = Overrides {
        percentage: a.percentage,
        parallelism: a.parallelism,
        tie_break: a.seed.map_or(TieBreak::NodeOrder, TieBreak::Random),
        ..Overrides::default()
    };
    let mode = match a.mode {
        Mode::Scheduler => framework::Mode::Scheduler,
        Mode::Batch => framework::Mode::Batch,
    };
    Framework::build(config, &catalog, mode, &overrides)
}

/// The workload's progress bar (the workload is streamed: the bar
/// follows the bytes read).
fn bar(label: &str, total: u64) -> Result<Bar> {
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{prefix} [{bar:40}] {bytes}/{total_bytes} of the workload, {elapsed} (eta {eta})",
        )
        .map_err(|e| anyhow!("{e}"))?
        .progress_chars("=> "),
    );
    bar.set_prefix(label.to_string());
    Ok(Bar(bar))
}

/// A file the replay writes as it goes.
fn create(path: &Path) -> Result<Output> {
    let file =
        std::fs::File::create(path).map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
    Ok(Output {
        name: path.display().to_string(),
        out: Box::new(std::io::BufWriter::new(file)),
    })
}

/// The file name of a config: its stem.
fn config_label(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// With several configs, `out.csv` becomes `out.<label>.csv`.
fn output_path(path: &Path, label: &str, runs: usize) -> PathBuf {
    if runs == 1 {
        return path.to_path_buf();
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}.{label}.{}", ext.to_string_lossy()),
        None => format!("{stem}.{label}"),
    };
    path.with_file_name(name)
}

/// One row per configuration; with one, the unscheduled pods by reason.
fn table(reports: &[(String, Report, f64)], at_arrived: Option<i64>) -> String {
    let mut out = String::new();
    let resources: Vec<String> = reports
        .first()
        .map(|(_, r, _)| r.resources.iter().map(|(n, _)| n.clone()).collect())
        .unwrap_or_default();
    let mut header = format!(
        "{:<24} {:>9} {:>11} {:>8}",
        "config", "scheduled", "unscheduled", "attempts"
    );
    // Extended resources no pod asked for and nothing uses (e.g. a GPU
    // count when pods carry their GPU need in annotations) stay at 0%:
    // left out.
    let shown: Vec<usize> = (0..resources.len())
        .filter(|&i| {
            i < 2
                || reports.iter().any(|(_, r, _)| {
                    r.samples
                        .last()
                        .is_some_and(|s| s.used[i] != 0 || s.arrived[i] != 0)
                })
        })
        .collect();
    for &i in &shown {
        header.push_str(&format!(" {:>14}", format!("{}%", short(&resources[i]))));
    }
    if let Some(k) = at_arrived {
        let r = reports.first().map_or(0, |(_, r, _)| r.main_resource());
        header.push_str(&format!(
            " {:>18}",
            format!("{}%@arrived{k}", short(&resources[r]))
        ));
    }
    header.push_str(&format!(" {:>8}", "seconds"));
    out.push_str(&header);
    out.push('\n');
    for (label, report, secs) in reports {
        let (bound, unscheduled) = report.counts();
        let attempts = report.totals.attempts;
        let mut row = format!("{label:<24} {bound:>9} {unscheduled:>11} {attempts:>8}");
        let allocation = report.final_allocation();
        for &i in &shown {
            let frac = allocation.get(i).map_or(0.0, |(_, f)| *f);
            row.push_str(&format!(" {:>14.2}", 100.0 * frac));
        }
        if let Some(k) = at_arrived {
            match report.allocation_at_arrived(report.main_resource(), k) {
                Some(v) => row.push_str(&format!(" {v:>18.2}")),
                None => row.push_str(&format!(" {:>18}", "-")),
            }
        }
        row.push_str(&format!(" {secs:>8.2}"));
        out.push_str(&row);
        out.push('\n');
    }
    if let [(_, report, _)] = reports {
        let reasons = report.unscheduled_by_reason();
        if !reasons.is_empty() {
            out.push_str("\nunscheduled pods by reason (a pod counts once per reason):\n");
            let mut sorted: Vec<_> = reasons.into_iter().collect();
            sorted.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            for (reason, n) in sorted {
                out.push_str(&format!("  {n:>6}  {reason}\n"));
            }
        }
        let preempted = report.totals.preempted;
        if preempted > 0 {
            out.push_str(&format!(
                "\n{preempted} bound pod(s) evicted by preemption (see --pods-out: preemptedBy)\n"
            ));
        }
        if report.off_cluster > 0 {
            out.push_str(&format!(
                "\n{} pod(s) of the workload bound to nodes not in the cluster: counted apart, not in allocation (see the warnings)\n",
                report.off_cluster
            ));
        }
        if let Some(n) = report.sessions {
            out.push_str(&format!("\n{n} sessions\n"));
        }
        if !report.groups.is_empty() {
            let whole = report.groups.iter().filter(|g| g.placed.is_some()).count();
            let discards: u32 = report.groups.iter().map(|g| g.discarded).sum();
            out.push_str(&format!(
                "\npod groups: {whole} of {} placed whole; {discards} placement(s) discarded because a gang was short (see --groups-out)\n",
                report.groups.len()
            ));
        }
        if !report.skipped.is_empty() {
            out.push_str("\nnot for this scheduler:\n");
            for (why, n) in &report.skipped {
                out.push_str(&format!("  {n:>6}  {why}\n"));
            }
        }
    }
    out
}

/// "alibabacloud.com/gpu-milli" -> "gpu-milli".
fn short(resource: &str) -> &str {
    resource.rsplit('/').next().unwrap_or(resource)
}
