//! `sift filter`: pods through the filter phase over a cluster dump; a
//! table or JSON of feasible nodes and each rejected node's status.

use super::{PluginSource, catalog, load_config, parse_parallelism};
use crate::cluster::ClusterState;
use crate::engine::CycleOutcome;
use crate::framework::{Framework, Mode, Overrides};
use crate::input::{Objects, Origin, kube};
use crate::output;
use anyhow::{Result, anyhow, bail};
use clap::{Args, ValueEnum};
use k8s_openapi::api::core::v1 as k8s;
use std::cell::RefCell;
use std::path::PathBuf;
use std::process::ExitCode;
use std::rc::Rc;

#[derive(Args)]
pub(super) struct FilterArgs {
    /// Nodes and bound pods, and what plugins read besides (namespaces,
    /// Services and controllers, claims, volumes, classes, CSINodes): JSON
    /// or YAML as kubectl prints them (single objects, List,
    /// NodeList/PodList, multi-document YAML). Repeatable.
    #[arg(long, required = true, num_args = 1.., value_name = "FILE")]
    cluster: Vec<PathBuf>,
    /// Pods to place, one cycle each, in order. Default: every pending
    /// pod in the cluster files that kube-scheduler would schedule
    /// (unbound, not Succeeded/Failed, not being deleted, no scheduling
    /// gates, spec.schedulerName the config's schedulerName).
    #[arg(long, num_args = 1.., value_name = "FILE")]
    pod: Vec<PathBuf>,
    #[command(flatten)]
    source: PluginSource,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = Format::Table)]
    output: Format,
    /// Rows per list in the table (0 = all).
    #[arg(long, default_value_t = 20)]
    limit: usize,
    /// Override percentageOfNodesToScore (0 = adaptive, 1-100).
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(0..=100))]
    percentage: Option<u32>,
    /// Override the number of worker threads (1-256).
    #[arg(long, value_parser = parse_parallelism)]
    parallelism: Option<usize>,
    /// A plugin component to load on top of the plugins directory and run
    /// after the configured plugins. It replaces a plugin of the same name
    /// from the directory (which keeps its place if configured). Repeatable.
    #[arg(long = "plugin", value_name = "FILE")]
    plugin_files: Vec<PathBuf>,
    /// Also run this loaded plugin, after the configured ones (e.g. a
    /// bundled plugin that is not a default, like GpuModel). Repeatable.
    #[arg(long, value_name = "NAME")]
    enable: Vec<String>,
}

#[derive(Clone, Copy, ValueEnum)]
pub(super) enum Format {
    Table,
    Json,
}

pub(super) fn filter(a: FilterArgs) -> Result<ExitCode> {
    let config = load_config(a.source.config.as_deref())?;
    let catalog = catalog(&a.source, &config, &a.plugin_files)?;
    // Plugins loaded by hand (`--plugin`) and asked for (`--enable`) run
    // after the configured ones.
    let overrides = Overrides {
        percentage: a.percentage,
        parallelism: a.parallelism,
        enable: catalog
            .extra_names()
            .iter()
            .chain(&a.enable)
            .cloned()
            .collect(),
        warn_unused: a.source.plugins_dir.is_some(),
        ..Overrides::default()
    };
    let framework = Framework::build(&config, &catalog, Mode::Filter, &overrides)?;
    // Whole objects are kept only if a plugin reads them.
    let full = framework.engine().full_objects();
    // Bound pods go into the cluster state as they are read: they are
    // most of a dump, and none is needed as an object afterwards.
    let state = Rc::new(RefCell::new(framework.empty_cluster_state()));
    let mut cluster = Objects {
        bound_pods_to: Some(ClusterState::bound_pods_into(&state)),
        ..Default::default()
    };
    for path in &a.cluster {
        cluster.read_file(path)?;
    }
    cluster.bound_pods_to = None;
    for s in &cluster.skipped {
        tracing::debug!("skipped {s}");
    }
    let (pods, skipped) = pods_to_place(&a, &cluster, framework.scheduler_name())?;
    let snapshot = {
        let mut state = state.borrow_mut();
        state.add_objects(&cluster, full.node)?;
        state.snapshot()
    };
    let mut engine = framework.into_filter_engine()?;
    let mut outcomes = Vec::new();
    for (pod, origin) in &pods {
        let mut model = kube::pod(pod).map_err(|e| anyhow!("{origin}: {e:#}"))?;
        if full.pod {
            model.object = Some(kube::object_json(pod));
        }
        outcomes.push(engine.find_nodes_that_fit(&snapshot, model));
    }
    print(&a, &outcomes, &skipped)?;
    Ok(if outcomes.iter().any(|o| o.error.is_some()) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The pods to place: those of `--pod` files, else the cluster files'
/// pending pods this scheduler would take (and which it would not, why).
fn pods_to_place(
    a: &FilterArgs,
    cluster: &Objects,
    scheduler_name: &str,
) -> Result<(Vec<(k8s::Pod, Origin)>, kube::SkippedPods)> {
    let mut skipped = kube::SkippedPods::default();
    let pods = if a.pod.is_empty() {
        let pending = cluster
            .pods
            .iter()
            .filter(|(p, _)| kube::bound_node(p).is_none());
        let mut pods = Vec::new();
        for (p, origin) in pending {
            match kube::not_for_scheduler(p, scheduler_name) {
                Some(why) => skipped.add(why),
                None => pods.push((p.clone(), origin.clone())),
            }
        }
        if pods.is_empty() {
            if skipped.total() > 0 {
                bail!(
                    "no pod to place: the cluster files' {} pending pod(s) are all ones \
                     kube-scheduler would not schedule ({}); pass --pod FILE",
                    skipped.total(),
                    skipped
                );
            }
            bail!("no pod to place: pass --pod FILE (the cluster files have no pending pod)");
        }
        pods
    } else {
        let mut pods = Vec::new();
        for file in &a.pod {
            let mut objects = Objects::default();
            objects.read_file(file)?;
            if objects.pods.is_empty() {
                bail!("{}: holds no Pod{}", file.display(), objects.found());
            }
            pods.extend(objects.pods);
        }
        pods
    };
    Ok((pods, skipped))
}

/// The outcomes as a table or JSON on stdout.
fn print(a: &FilterArgs, outcomes: &[CycleOutcome], skipped: &kube::SkippedPods) -> Result<()> {
    match a.output {
        Format::Json => {
            println!("{}", serde_json::to_string_pretty(&outcomes)?);
            if skipped.total() > 0 {
                eprintln!("skipped {} pending pod(s): {skipped}", skipped.total());
            }
        }
        Format::Table => {
            for (i, o) in outcomes.iter().enumerate() {
                if i > 0 {
                    println!();
                }
                print!("{}", output::table(o, a.limit));
            }
            if skipped.total() > 0 {
                println!(
                    "\nskipped {} pending pod(s) kube-scheduler would not schedule: {skipped}",
                    skipped.total()
                );
            }
        }
    }
    Ok(())
}
