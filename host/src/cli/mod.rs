//! The `sift` command line: clap definitions here, one file per subcommand
//! that is more than a call into its module. `main.rs` only calls
//! [`main`]. The top layer: it may import anything; nothing imports it.

mod bench;
mod component;
mod conformance;
mod filter;
mod new;
mod plugins;
mod schedule;
mod serve;
mod simulate;
mod trace;

use crate::config::Config;
use crate::plugins::registry::{Catalog, default_plugins_dir};
use crate::runtime::Runtime;
use crate::runtime::cache::CompileCache;
use crate::text::printable;
use anyhow::{Result, bail};
use bench::BenchArgs;
use clap::{Args, Parser, Subcommand, ValueEnum};
use component::{ComponentCommand, component};
use conformance::{ConformanceArgs, conformance_cmd};
use filter::{FilterArgs, filter};
use new::{NewArgs, new_project};
use plugins::{PluginsCommand, plugins_inspect, plugins_list};
use schedule::{ScheduleArgs, schedule};
use serve::{ServeArgs, serve};
use simulate::{SimulateArgs, simulate};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use trace::{TraceCommand, trace};

/// sift runs Kubernetes scheduler filter predicates as sandboxed
/// WebAssembly components: for a pod, which nodes can run it, and why not
/// the others, exactly as kube-scheduler's filter phase answers.
#[derive(Parser)]
#[command(name = "sift", version, about, long_about = None, after_help = EXAMPLES)]
struct Cli {
    /// Log level for sift and plugin log calls: error, warn, info, debug, trace.
    #[arg(long, global = true, default_value = "warn", env = "SIFT_LOG")]
    log_level: String,
    /// Log format: text for people, json (one object per line) for
    /// collectors.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

const EXAMPLES: &str = "Examples:
  kubectl get nodes,pods -A -o json > cluster.json
  sift filter --cluster cluster.json --pod pod.yaml
  sift filter --cluster nodes.yaml --cluster pods.yaml --pod pod.json -o json
  sift filter --cluster cluster.json --pod pod.yaml --plugin my_plugin.wasm
  sift filter --cluster cluster.json --pod pod.yaml --enable GpuModel
  sift conformance tests/cases
  sift conformance --plugin my_plugin.wasm my-cases/
  sift plugins list
  sift plugins inspect my_plugin.wasm
  sift bench --nodes 5000
  sift serve --listen 0.0.0.0:8888 --cluster cluster.json --log-level info
  sift schedule --kubeconfig ~/.kube/config --log-level info
  sift new --lang rust my-check
  sift component new plugin.wasm -o my_plugin.wasm
  sift trace openb openb_node_list_all_node.csv openb_pod_list_default.csv -o openb
  sift simulate --cluster openb/cluster.json --workload openb/workload.ndjson --plot openb.svg
  sift simulate --cluster cluster.json -c least.yaml -c most.yaml --explain ns/pod";

#[derive(Subcommand)]
enum Command {
    /// Filter nodes for pods: feasible nodes, each rejected node's status,
    /// and kube-scheduler's "0/N nodes are available" message.
    Filter(FilterArgs),
    /// Run conformance case files (JSON) and report what differs.
    ///
    /// Each case runs a full filtering cycle over every node. Prints one
    /// line per failing case, then "N passed, M failed"; exits 1 if any
    /// failed.
    Conformance(ConformanceArgs),
    /// List or inspect plugin components.
    #[command(subcommand)]
    Plugins(PluginsCommand),
    /// Measure pods/s of the filter phase (or, with --scoring, of whole
    /// cycles and each plugin) on a synthetic cluster, Wasm plugins
    /// against the same plugins compiled natively.
    Bench(BenchArgs),
    /// Serve as a kube-scheduler extender (filter verb) over HTTP, with
    /// hot-loaded plugins, /metrics, /healthz, /readyz and /status.
    ///
    /// Requests carrying `Nodes` (nodeCacheCapable: false) are answered from
    /// those node objects; requests carrying `NodeNames` from sift's own
    /// cluster state: the API server itself (--kubeconfig or --in-cluster:
    /// Nodes, Pods and Namespaces listed and watched; /readyz waits for the
    /// first lists), --cluster files (reloaded on change) and Node, Pod and
    /// Namespace watch events POSTed to /cluster. Every node the scheduler sends
    /// is evaluated (it sampled already). SIGHUP rescans; SIGTERM/SIGINT
    /// stop after the requests in flight.
    Serve(ServeArgs),
    /// Schedule pods on a cluster: sift as a second scheduler that binds
    /// the pods whose spec.schedulerName is its own (`sift` unless the
    /// config's schedulerName says otherwise).
    ///
    /// kube-scheduler's loop, live: the queue (PrioritySort, backoff 1s to
    /// 10s, unschedulable pods retried on cluster changes and after 5
    /// minutes, scheduling gates), the cycle `sift simulate` runs (filters,
    /// scores, host selection, reserve, assume), binds beside the next
    /// cycles, DefaultPreemption acting, FailedScheduling events and the
    /// PodScheduled condition on failure. Plugins hot-load between two
    /// cycles. Replicas elect a leader through a Lease; only the leader
    /// schedules. /readyz says leader or standby once the first lists are
    /// in.
    Schedule(ScheduleArgs),
    /// Create a plugin project (Rust, C, Go, Python, JavaScript or WAT) that builds and passes
    /// its starter conformance case (cases/001-starter.json).
    New(NewArgs),
    /// Build steps for plugins in languages other than Rust: make a
    /// component of a core module, write the contract's C bindings.
    #[command(subcommand)]
    Component(ComponentCommand),
    /// Import a published trace as a cluster and a workload (pods arriving
    /// and leaving), for simulations.
    #[command(subcommand)]
    Trace(TraceCommand),
    /// Replay a workload through kube-scheduler's scheduleOne loop: queue
    /// (PrioritySort), filters, scores, host selection, reserve, assume;
    /// failed pods wait until a bound pod leaves. Prints scheduled and
    /// unscheduled pods and the final allocation per configuration.
    ///
    /// Each pod that fits nowhere keeps kube-scheduler's FitError message,
    /// DefaultPreemption's part included. Ties between the best nodes go
    /// to the first in filter order (--seed for random ties).
    ///
    /// --mode batch runs Volcano's scheduler instead: a session every
    /// batch.schedulePeriod (1s) runs the actions (allocate, backfill) over
    /// tiers of plugins (priority, gang | drf, predicates, proportion,
    /// nodeorder); a gang (PodGroup minMember) is bound whole or not at
    /// all, queues share the cluster by weight. PodGroups, Queues and
    /// PriorityClasses come from the cluster files.
    Simulate(SimulateArgs),
}

#[derive(Args)]
struct PluginSource {
    /// sift configuration (YAML): plugins, order, arguments, limits.
    #[arg(long, short = 'c')]
    config: Option<PathBuf>,
    /// Directory of plugin components (default: the bundled plugins).
    #[arg(long = "plugins", value_name = "DIR")]
    plugins_dir: Option<PathBuf>,
    /// Run the built-in predicates compiled into sift instead of Wasm.
    #[arg(long)]
    native: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

/// Parses the command line, sets up logging and runs the subcommand.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    if !matches!(cli.command, Command::Serve(_) | Command::Schedule(_)) {
        restore_sigpipe();
    }
    let filter = match log_filter(&cli.log_level) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: --log-level {:?}: {e}", cli.log_level);
            return ExitCode::from(2);
        }
    };
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    match cli.log_format {
        LogFormat::Text => logs.fmt_fields(escaped_fields()).init(),
        LogFormat::Json => logs.json().init(),
    }
    match run(cli.command) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// The text log's fields with control characters escaped: messages carry
/// text from plugins and input files, and a newline in one must not forge
/// a log line. (The JSON format escapes by itself.)
fn escaped_fields() -> impl for<'w> tracing_subscriber::fmt::FormatFields<'w> {
    use tracing_subscriber::field::MakeExt;
    tracing_subscriber::fmt::format::debug_fn(|w, field, value| {
        let text = format!("{value:?}");
        if field.name() == "message" {
            write!(w, "{}", printable(&text))
        } else {
            write!(w, "{}={}", field.name(), printable(&text))
        }
    })
    .delimited(" ")
}

/// A level (`debug`) applies to sift and its plugins; the runtime's own
/// crates (wasmtime, cranelift, ...) stay at `warn` unless named, as in
/// `debug,wasmtime=debug` (tracing's directive syntax). kube's client logs
/// every failed API request at error level: sift's watch reports each
/// distinct failure once, so those lines stay off.
fn log_filter(level: &str) -> Result<tracing_subscriber::EnvFilter, String> {
    let directives = if level.contains(['=', ',']) {
        level.to_string()
    } else {
        level
            .parse::<tracing_subscriber::filter::LevelFilter>()
            .map_err(|_| "use error, warn, info, debug or trace".to_string())?;
        format!(
            "{level},wasmtime=warn,cranelift=warn,regalloc2=warn,wasmparser=warn,\
             wit_component=warn,wit_parser=warn,notify=warn,notify_debouncer_full=warn,\
             hyper=warn,hyper_util=warn,axum=warn,rayon=warn,kube_runtime=warn,\
             kube_client=warn,kube_client::client::builder=off,tower=warn,rustls=warn"
        )
    };
    tracing_subscriber::EnvFilter::try_new(directives).map_err(|e| e.to_string())
}

fn run(command: Command) -> Result<ExitCode> {
    match command {
        Command::Filter(a) => filter(a),
        Command::Conformance(a) => conformance_cmd(a),
        Command::Plugins(PluginsCommand::List { source }) => plugins_list(source),
        Command::Plugins(PluginsCommand::Inspect { file }) => plugins_inspect(&file),
        Command::Bench(a) => crate::bench::run(a.into()).map(|_| ExitCode::SUCCESS),
        Command::Serve(a) => serve(a),
        Command::Schedule(a) => schedule(a),
        Command::Trace(c) => trace(c),
        Command::Simulate(a) => simulate(a),
        Command::Component(c) => component(c),
        Command::New(a) => new_project(a),
    }
}

fn load_config(path: Option<&Path>) -> Result<Config> {
    match path {
        Some(p) => Config::load(p),
        None => Ok(Config::default()),
    }
}

fn runtime(config: &Config) -> Result<Arc<Runtime>> {
    let cache_dir = config.cache_dir.clone().or_else(CompileCache::default_dir);
    Ok(Arc::new(Runtime::new(
        config.limits()?,
        config.sandbox.clone(),
        cache_dir.map(CompileCache::new),
    )?))
}

fn plugins_dir(source: &PluginSource, config: &Config) -> Option<PathBuf> {
    source
        .plugins_dir
        .clone()
        .or_else(|| config.plugins_dir.clone())
        .or_else(default_plugins_dir)
}

fn catalog(source: &PluginSource, config: &Config, extra: &[PathBuf]) -> Result<Catalog> {
    if source.native {
        if let Some(f) = extra.first() {
            bail!(
                "--plugin {} is a Wasm component; --native runs only the built-in predicates",
                f.display()
            );
        }
        let catalog = Catalog::native(config)?;
        catalog.check_plugin_config(config)?;
        return Ok(catalog);
    }
    let dir = plugins_dir(source, config);
    if dir.is_none() && extra.is_empty() {
        bail!(
            "no plugins directory: build the bundled plugins with `bash scripts/build-plugins.sh`, \
             or pass --plugins DIR (or set pluginsDir in the config, or SIFT_PLUGINS_DIR)"
        );
    }
    let catalog = Catalog::load_wasm(&runtime(config)?, dir.as_deref(), extra, config)?;
    catalog.check_plugin_config(config)?;
    Ok(catalog)
}

/// Output piped into `head` and closed early ends sift quietly, as it ends
/// other command-line tools, instead of a failed-print panic. (Rust ignores
/// SIGPIPE by default; `sift serve` keeps that, for its sockets.)
fn restore_sigpipe() {
    // SAFETY: setting a signal disposition to its default, before any
    // thread is started.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn parse_parallelism(s: &str) -> Result<usize, String> {
    let n: usize = s
        .parse()
        .map_err(|_| format!("{s:?} is not a whole number of worker threads"))?;
    crate::config::check_parallelism(n).map_err(|e| e.to_string())
}
