//! `sift serve`: its flags (clap), converted to [`crate::serve::Options`];
//! resolves the configuration, plugins directory and runtime, then hands
//! over to [`crate::serve`].

use super::{PluginSource, load_config, plugins_dir, runtime};
use crate::serve::Options;
use crate::serve::informer::WatchOptions;
use anyhow::{Result, anyhow};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

// No doc comment on the struct: clap would take it for the subcommand's
// about text, which the `Command` enum gives.
#[derive(clap::Args, Clone)]
pub struct ServeArgs {
    /// Address to listen on (port 0 picks a free port; the address is
    /// printed on stdout as "listening on ADDR").
    #[arg(long, default_value = "127.0.0.1:8888")]
    pub listen: SocketAddr,
    /// sift configuration (YAML); watched and reloaded on change.
    #[arg(long, short = 'c')]
    pub config: Option<PathBuf>,
    /// Directory of plugin components; watched: components added, changed
    /// or removed are loaded or unloaded while serving.
    #[arg(long = "plugins", value_name = "DIR")]
    pub plugins_dir: Option<PathBuf>,
    /// Nodes and bound pods (kubectl JSON/YAML) for nodeCacheCapable
    /// requests; reloaded when they change. POST /cluster adds informer
    /// events on top. Repeatable.
    #[arg(long, value_name = "FILE")]
    pub cluster: Vec<PathBuf>,
    /// Watch the API server this kubeconfig points at: Nodes, Pods (not
    /// Succeeded or Failed) and Namespaces are listed, then watched, into
    /// the cluster state (with --cluster files and /cluster events).
    /// /readyz waits for the first lists.
    #[arg(long, value_name = "PATH", conflicts_with = "in_cluster")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use (default: its current-context).
    #[arg(long, value_name = "NAME", requires = "kubeconfig")]
    pub context: Option<String>,
    /// Watch the API server of the cluster sift runs in, as its pod's
    /// service account (what deploy/ sets up).
    #[arg(long)]
    pub in_cluster: bool,
    /// With --kubeconfig or --in-cluster: how long sift waits for a byte
    /// from the API server, on a list (each page) and on a watch, before
    /// it closes the connection, reports the kind unhealthy in /status and
    /// /readyz, and retries with backoff. Watches ask the server to end
    /// them a few seconds before this, so a quiet but healthy server never
    /// trips it; a list the server has not answered in its own request
    /// timeout (60s by default) has failed anyway. At least 2s.
    #[arg(long, default_value = "60s", value_parser = parse_watch_timeout)]
    pub watch_timeout: Duration,
    /// Accept POST /cluster events even with --kubeconfig or --in-cluster.
    /// Off by default there: the API server is the cluster state, and
    /// anyone who can reach the port could otherwise add pods or delete
    /// nodes in sift's view (it lasts until the API server sends those
    /// objects again), failing every node for every pod. Turn it on only
    /// where a NetworkPolicy (deploy/) admits nothing but the scheduler.
    /// Without a watch, /cluster is always on.
    #[arg(long)]
    pub allow_cluster_events: bool,
    /// The extender's filterVerb: sift answers POST <prefix>/<verb> for any
    /// prefix, so the urlPrefix in kube-scheduler's config is free.
    #[arg(long, default_value = "filter")]
    pub filter_verb: String,
    /// The extender's prioritizeVerb: sift scores the nodes sent with the
    /// configured score plugins (plugins.score, weights applied) and
    /// answers 0-10 per node, as kube-scheduler expects of an extender.
    #[arg(long, default_value = "prioritize")]
    pub prioritize_verb: String,
    /// Filter requests evaluated at the same time.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_in_flight: u32,
    /// Filter requests allowed to wait for a slot; beyond that, 503 with
    /// Retry-After.
    #[arg(long, default_value_t = 64)]
    pub max_queue: usize,
    /// Largest request body accepted (e.g. 64Mi); larger bodies get 413.
    #[arg(long, default_value = "64Mi")]
    pub max_body: String,
    /// Time a client has to send a request's headers, and again its body;
    /// a connection that stalls longer is closed (headers) or gets 408
    /// (body), so stalled clients cannot hold connections open.
    #[arg(long, default_value = "10s", value_parser = parse_duration_arg)]
    pub read_timeout: Duration,
    /// After SIGTERM/SIGINT, how long requests in flight may take before
    /// sift closes their connections and exits.
    #[arg(long, default_value = "15s", value_parser = parse_duration_arg)]
    pub shutdown_timeout: Duration,
}

impl From<ServeArgs> for Options {
    fn from(a: ServeArgs) -> Options {
        Options {
            listen: a.listen,
            config: a.config,
            plugins_dir: a.plugins_dir,
            cluster: a.cluster,
            kubeconfig: a.kubeconfig,
            context: a.context,
            in_cluster: a.in_cluster,
            watch_timeout: a.watch_timeout,
            allow_cluster_events: a.allow_cluster_events,
            filter_verb: a.filter_verb,
            prioritize_verb: a.prioritize_verb,
            max_in_flight: a.max_in_flight,
            max_queue: a.max_queue,
            max_body: a.max_body,
            read_timeout: a.read_timeout,
            shutdown_timeout: a.shutdown_timeout,
        }
    }
}

/// The plugins directory a long-running command watches: `--plugins`,
/// else the config's `pluginsDir`, else the bundled plugins.
pub(super) fn watched_plugins_dir(
    config_path: &Option<PathBuf>,
    dir: &Option<PathBuf>,
    config: &crate::config::Config,
) -> Result<PathBuf> {
    let source = PluginSource {
        config: config_path.clone(),
        plugins_dir: dir.clone(),
        native: false,
    };
    plugins_dir(&source, config).ok_or_else(|| {
        anyhow!("no plugins directory: pass --plugins DIR (or set pluginsDir in the config)")
    })
}

pub(super) fn parse_duration_arg(s: &str) -> Result<Duration, String> {
    crate::config::parse_duration(s).map_err(|e| format!("{e:#}"))
}

pub(super) fn parse_watch_timeout(s: &str) -> Result<Duration, String> {
    let d = parse_duration_arg(s)?;
    if d < WatchOptions::MIN_DEADLINE {
        return Err(format!(
            "{s} is below {}s: watches must end (timeoutSeconds, whole seconds, at least 1) \
             before it",
            WatchOptions::MIN_DEADLINE.as_secs()
        ));
    }
    Ok(d)
}

pub(super) fn serve(a: ServeArgs) -> Result<ExitCode> {
    let config = load_config(a.config.as_deref())?;
    let dir = watched_plugins_dir(&a.config, &a.plugins_dir, &config)?;
    let runtime = runtime(&config)?;
    crate::serve::run(a.into(), runtime, config, dir)?;
    Ok(ExitCode::SUCCESS)
}
