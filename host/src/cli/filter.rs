//! `sift filter`: pods through the filter phase over a cluster dump; a
//! table or JSON of feasible nodes and each rejected node's status.

use super::{PluginSource, catalog, load_config, parse_parallelism};
use crate::cluster::ClusterState;
use crate::config::PluginRef;
use crate::engine::Engine;
use crate::input::{Objects, kube};
use crate::output;
use crate::plugins::extender::http_extenders;
use anyhow::{Result, anyhow, bail};
use clap::{Args, ValueEnum};
use std::cell::RefCell;
use std::path::PathBuf;
use std::process::ExitCode;
use std::rc::Rc;

#[derive(Args)]
pub(super) struct FilterArgs {
    /// Nodes and bound pods: JSON or YAML as kubectl prints them (single
    /// objects, List, NodeList/PodList, multi-document YAML). Repeatable.
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
    let mut options = config.engine_options();
    if let Some(p) = a.percentage {
        options.percentage_of_nodes_to_score = p;
    }
    if let Some(p) = a.parallelism {
        options.parallelism = p;
    }
    // Plugins asked for on the command line run after the configured ones;
    // one the config already runs keeps its place and options.
    let mut selected = config.filter_plugins();
    if let Some(name) = a.enable.iter().find(|n| catalog.get(n).is_none()) {
        bail!(
            "--enable {name}: no loaded plugin has that name (loaded: {})",
            catalog.names().join(", ")
        );
    }
    for name in catalog.extra_names().iter().chain(&a.enable) {
        if !selected.iter().any(|p| p.name == *name) {
            selected.push(PluginRef {
                name: name.clone(),
                ignorable: false,
            });
        }
    }
    if a.source.plugins_dir.is_some() {
        // An author pointing sift at their build output most likely wants
        // their plugin to run: say so when it would silently not.
        let disabled = &config.plugins.filter.disabled;
        for name in catalog.names() {
            // Scorers and reservers do not filter: nothing to enable here.
            let filters = catalog.get(name).is_some_and(|p| {
                p.extension_points()
                    .contains(sift_sdk::ExtensionPoints::FILTER)
            });
            if filters
                && !selected.iter().any(|p| p.name == name)
                && !disabled.iter().any(|p| p.name == name)
            {
                tracing::warn!(
                    "plugin {name} is loaded but not enabled, so it does not run: \
                     pass --enable {name} (or list it under plugins.filter.enabled in the config)"
                );
            }
        }
    }
    let mut engine = Engine::new(catalog.select(&selected)?, options)?
        .with_extenders(http_extenders(&config.extenders)?);
    // Whole objects are kept only if a plugin reads them.
    let full = engine.full_objects();
    // Bound pods go into the cluster state as they are read: they are
    // most of a dump, and none is needed as an object afterwards.
    let state = Rc::new(RefCell::new(ClusterState::new(
        config.scheduler_name(),
        &engine.pod_annotation_keys(),
    )));
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
    let mut skipped = kube::SkippedPods::default();
    let pods: Vec<_> = if a.pod.is_empty() {
        let pending = cluster
            .pods
            .iter()
            .filter(|(p, _)| kube::bound_node(p).is_none());
        let mut pods = Vec::new();
        for (p, origin) in pending {
            match kube::not_for_scheduler(p, config.scheduler_name()) {
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
    let snapshot = {
        let mut state = state.borrow_mut();
        state.add_objects(&cluster, full.node)?;
        state.snapshot()
    };
    let mut outcomes = Vec::new();
    for (pod, origin) in &pods {
        let mut model = kube::pod(pod).map_err(|e| anyhow!("{origin}: {e:#}"))?;
        if full.pod {
            model.object = Some(kube::object_json(pod));
        }
        outcomes.push(engine.find_nodes_that_fit(&snapshot, model));
    }
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
    Ok(if outcomes.iter().any(|o| o.error.is_some()) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
