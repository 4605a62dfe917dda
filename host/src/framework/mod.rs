//! One place builds a scheduler from a configuration: kube-scheduler's
//! `profile.NewMap`, which hands each profile to
//! `frameworkruntime.NewFramework`. Every command that schedules or
//! filters (`sift filter`, `simulate`, `conformance`, the extender's hot
//! reload) asks [`Framework::build`] for its plugins, so a setting of the
//! configuration or a command-line override means the same everywhere.
//!
//! What comes out is ready to run: the engine with its filters in order,
//! the extenders, the scorers with their weights and the reserve plugins
//! (inside [`Scheduler`]), or batch mode's two session schedulers; and what
//! the cluster state must keep for those plugins ([`Framework::cluster_state`]).
//! Running it over a workload is [`replay`]'s job.

pub mod replay;

use crate::cluster::ClusterState;
use crate::config::batch::Session;
use crate::config::{Config, PluginRef};
use crate::engine::Engine;
use crate::engine::schedule::{Scheduler, TieBreak};
use crate::input::Objects;
use crate::plugins::extender::http_extenders;
use crate::plugins::registry::Catalog;
use crate::simulate::batch;
use anyhow::{Result, bail};

/// What the framework is built to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The filter phase only (`sift filter`, the extender's `filter`):
    /// no scorer is selected, so a configuration's score plugins need not
    /// be loaded.
    Filter,
    /// The filter phase as kube-scheduler's extender (`sift serve`): as
    /// [`Mode::Filter`], without extenders of its own (the configuration's
    /// `extenders` are kube-scheduler's to call, not an extender's).
    Extender,
    /// kube-scheduler's scheduling cycle: filters, extenders, scores,
    /// host selection, reserve.
    Scheduler,
    /// Volcano's sessions: its predicates as filters, `nodeorder` as
    /// scores (Volcano has no extenders).
    Batch,
}

/// What a command line (or a case file) changes in the configuration.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// percentageOfNodesToScore.
    pub percentage: Option<u32>,
    /// Worker threads.
    pub parallelism: Option<usize>,
    /// The filter plugins, replacing the configured ones (a conformance
    /// case's `filters`; the extender's components that loaded).
    pub filters: Option<Vec<PluginRef>>,
    /// Plugins to run after the configured filters (`--enable`); a plugin
    /// the configuration already runs keeps its place and options. The
    /// catalog's `--plugin` files are added the same way.
    pub enable: Vec<String>,
    /// Warn about loaded filter plugins that will not run: an author who
    /// points sift at their build output most likely wants theirs to.
    pub warn_unused: bool,
    /// How score ties are broken.
    pub tie_break: TieBreak,
}

/// A scheduler built from one configuration.
pub struct Framework {
    /// The configuration's `schedulerName`, if it names one (batch mode
    /// then takes Volcano's names too).
    configured_name: Option<String>,
    pub runner: Runner,
}

/// The built scheduler, by mode.
pub enum Runner {
    Filter(Engine),
    Scheduler(Scheduler),
    /// Volcano's allocate and backfill schedulers, and the session
    /// (actions, tiers) they run in (boxed: the largest by far).
    Batch(Box<(batch::Schedulers, Session)>),
}

impl Framework {
    /// Builds what `config` asks for in `mode` from the plugins of
    /// `catalog`, with `overrides` applied.
    pub fn build(
        config: &Config,
        catalog: &Catalog,
        mode: Mode,
        overrides: &Overrides,
    ) -> Result<Framework> {
        let mut options = config.engine_options();
        if let Some(p) = overrides.percentage {
            options.percentage_of_nodes_to_score = p;
        }
        if let Some(p) = overrides.parallelism {
            options.parallelism = p;
        }
        let selected = filter_refs(config, catalog, mode, overrides)?;
        let filters = catalog.select(&selected)?;
        let runner = match mode {
            Mode::Filter => Runner::Filter(
                Engine::new(filters, options)?.with_extenders(http_extenders(&config.extenders)?),
            ),
            Mode::Extender => Runner::Filter(Engine::new(filters, options)?),
            Mode::Scheduler => {
                let scorers = catalog.select_scorers(config)?;
                let engine = Engine::new(filters, options)?
                    .with_extenders(http_extenders(&config.extenders)?);
                Runner::Scheduler(Scheduler::new(engine, scorers, overrides.tie_break))
            }
            Mode::Batch => {
                let session = config.batch.session()?;
                let scorers = catalog.select_batch_scorers(config, session.node_order)?;
                let schedulers =
                    batch::schedulers(filters, scorers, &session, options, overrides.tie_break)?;
                Runner::Batch(Box::new((schedulers, session)))
            }
        };
        Ok(Framework {
            configured_name: config.scheduler_name.clone(),
            runner,
        })
    }

    /// Pods whose `spec.schedulerName` this is are this framework's.
    pub fn scheduler_name(&self) -> &str {
        self.configured_name
            .as_deref()
            .unwrap_or(crate::input::kube::DEFAULT_SCHEDULER_NAME)
    }

    /// The engine of a filter-only framework ([`Mode::Filter`],
    /// [`Mode::Extender`]).
    pub fn into_filter_engine(self) -> Result<Engine> {
        match self.runner {
            Runner::Filter(engine) => Ok(engine),
            _ => bail!("not a filter-only framework"),
        }
    }

    /// The engine whose plugins decide what the cluster state keeps
    /// (batch mode: allocate's, a superset of backfill's).
    pub fn engine(&self) -> &Engine {
        match &self.runner {
            Runner::Filter(e) => e,
            Runner::Scheduler(s) => s.engine(),
            Runner::Batch(b) => b.0.main().engine(),
        }
    }

    /// Bound pods' annotation keys any plugin reads on nodes.
    pub fn pod_annotation_keys(&self) -> Vec<String> {
        match &self.runner {
            Runner::Filter(e) => e.pod_annotation_keys(),
            Runner::Scheduler(s) => s.pod_annotation_keys(),
            Runner::Batch(b) => b.0.main().pod_annotation_keys(),
        }
    }

    /// An empty cluster state that keeps what these plugins read: whole
    /// node objects only if a plugin reads them, and the bound pods'
    /// annotations they ask for.
    pub fn empty_cluster_state(&self) -> ClusterState {
        ClusterState::new(self.scheduler_name(), &self.pod_annotation_keys())
    }

    /// The cluster state of `objects`, keeping what these plugins read.
    pub fn cluster_state(&self, objects: &Objects) -> Result<ClusterState> {
        ClusterState::from_objects_with(
            objects,
            self.engine().full_objects().node,
            self.scheduler_name(),
            &self.pod_annotation_keys(),
        )
    }
}

/// The filter plugins in the order they run.
fn filter_refs(
    config: &Config,
    catalog: &Catalog,
    mode: Mode,
    overrides: &Overrides,
) -> Result<Vec<PluginRef>> {
    let mut selected = match (&overrides.filters, mode) {
        (Some(refs), _) => refs.clone(),
        (None, Mode::Batch) => config.batch_filter_plugins(),
        (None, _) => config.filter_plugins(),
    };
    if let Some(name) = overrides.enable.iter().find(|n| catalog.get(n).is_none()) {
        bail!(
            "--enable {name}: no loaded plugin has that name (loaded: {})",
            catalog.names().join(", ")
        );
    }
    // An extra component (`--plugin FILE`) runs as a filter when it
    // filters; one that only scores or reserves runs where the config's
    // plugins.score (or its reserve steps) name it.
    let extra_filters = catalog.extra_names().iter().filter(|n| {
        catalog.get(n).is_some_and(|p| {
            p.extension_points()
                .contains(sift_sdk::ExtensionPoints::FILTER)
        })
    });
    for name in extra_filters.chain(&overrides.enable) {
        if !selected.iter().any(|p| p.name == *name) {
            selected.push(PluginRef {
                name: name.clone(),
                ignorable: false,
            });
        }
    }
    if overrides.warn_unused {
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
    Ok(selected)
}
