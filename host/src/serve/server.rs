//! What the handlers share: the serving profile, the cluster feed, the
//! metrics, admission and the limits; and the two ways the cluster state
//! changes outside a request (cluster files, the API server's watch).

use super::admission::Admission;
use super::feed::ClusterFeed;
use super::informer::{Informer, Sink};
use super::metrics::Metrics;
use super::options::Options;
use super::reload::{Profile, ReloadStatus, Reloader};
use super::requests::{ClusterEvent, apply_cluster_events};
use arc_swap::ArcSwap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// Everything the handlers share.
pub struct Server {
    pub profile: Arc<ArcSwap<Profile>>,
    pub reload_status: Arc<Mutex<ReloadStatus>>,
    pub cluster: Mutex<ClusterFeed>,
    pub metrics: Arc<Metrics>,
    pub admission: Admission,
    pub filter_verb: String,
    pub prioritize_verb: String,
    pub ready: AtomicBool,
    pub max_body: usize,
    pub read_timeout: Duration,
    /// The API server watch, when one is configured (set once it starts).
    pub informer: OnceLock<Arc<Informer>>,
    /// A watch is configured: `Nodes`-mode requests' nodes are not kept.
    pub watching: bool,
    /// `/cluster` accepts events (always without a watch; with one, only
    /// with `--allow-cluster-events`).
    pub cluster_events: bool,
}

impl Server {
    /// The server over `reloader`'s profile and `feed`, ready; `watching`
    /// when an API server watch will feed the state.
    pub fn new(
        options: &Options,
        reloader: &Reloader,
        feed: ClusterFeed,
        metrics: Arc<Metrics>,
        max_body: usize,
        watching: bool,
    ) -> Server {
        Server {
            profile: reloader.profile(),
            reload_status: reloader.status(),
            cluster: Mutex::new(feed),
            metrics,
            admission: Admission::new(options.max_in_flight as usize, options.max_queue),
            filter_verb: options.filter_verb.clone(),
            prioritize_verb: options.prioritize_verb.clone(),
            ready: AtomicBool::new(true),
            max_body,
            read_timeout: options.read_timeout,
            informer: OnceLock::new(),
            watching,
            cluster_events: !watching || options.allow_cluster_events,
        }
    }

    /// Whether nodes keep their whole object: a loaded plugin reads it.
    pub fn node_objects_read(&self) -> bool {
        self.profile.load().engine.full_objects().node
    }

    /// Applies the cluster files again (a file event, or SIGHUP: `force`).
    pub fn reload_cluster(&self, force: bool) {
        let Ok(mut feed) = self.cluster.lock() else {
            return;
        };
        let keep = self.node_objects_read();
        feed.reload(force, keep);
    }
}

impl Sink for Server {
    fn node_objects(&self) -> bool {
        self.node_objects_read()
    }

    fn apply(&self, events: Vec<ClusterEvent>) {
        if let Ok(mut feed) = self.cluster.lock() {
            apply_cluster_events(&mut feed.state, events);
        }
    }
}
