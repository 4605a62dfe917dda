//! The `sift` command line.

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, Parser, Subcommand, ValueEnum};
use sift_host::cache::CompileCache;
use sift_host::config::{Config, PluginRef};
use sift_host::conformance;
use sift_host::engine::Engine;
use sift_host::input::Objects;
use sift_host::registry::{Catalog, default_plugins_dir};
use sift_host::runtime::Runtime;
use sift_host::snapshot::Snapshot;
use sift_host::text::printable;
use sift_host::wasm::WasmPlugin;
use sift_host::{bench, kube, output};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

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
  sift new --lang rust my-check
  sift component new plugin.wasm -o my_plugin.wasm";

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
    /// Measure pods/s of the filter phase on a synthetic cluster, Wasm
    /// plugins against the same predicates compiled natively.
    Bench(bench::BenchArgs),
    /// Serve as a kube-scheduler extender (filter verb) over HTTP, with
    /// hot-loaded plugins, /metrics, /healthz, /readyz and /status.
    ///
    /// Requests carrying `Nodes` (nodeCacheCapable: false) are answered from
    /// those node objects; requests carrying `NodeNames` from sift's own
    /// cluster state: --cluster files (reloaded on change) plus Node and
    /// Pod watch events POSTed to /cluster. Every node the scheduler sends
    /// is evaluated (it sampled already). SIGHUP rescans; SIGTERM/SIGINT
    /// stop after the requests in flight.
    Serve(sift_host::serve::ServeArgs),
    /// Create a plugin project (Rust, C, Go, Python, JavaScript or WAT) that builds and passes
    /// its starter conformance case (cases/001-starter.json).
    New(sift_host::scaffold::NewArgs),
    /// Build steps for plugins in languages other than Rust: make a
    /// component of a core module, write the contract's C bindings.
    #[command(subcommand)]
    Component(sift_host::componentize::ComponentCommand),
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

#[derive(Args)]
struct FilterArgs {
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
enum LogFormat {
    Text,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Table,
    Json,
}

#[derive(Args)]
struct ConformanceArgs {
    /// Case files or directories of them (searched recursively for *.json).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    #[command(flatten)]
    source: PluginSource,
    /// An extra plugin component to load (replaces a bundled plugin of the
    /// same name). Repeatable.
    #[arg(long = "plugin", value_name = "FILE")]
    plugin_files: Vec<PathBuf>,
}

#[derive(Subcommand)]
enum PluginsCommand {
    /// The plugins in the plugins directory: name, version, size, file.
    List {
        #[command(flatten)]
        source: PluginSource,
    },
    /// What a component is: its name, contract version, imports and
    /// exports, size and compile time; or why it is not a sift plugin.
    Inspect { file: PathBuf },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if !matches!(cli.command, Command::Serve(_)) {
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
/// `debug,wasmtime=debug` (tracing's directive syntax).
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
             hyper=warn,hyper_util=warn,axum=warn,rayon=warn"
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
        Command::Bench(a) => bench::run(a).map(|_| ExitCode::SUCCESS),
        Command::Serve(a) => serve(a),
        Command::Component(c) => sift_host::componentize::run(c).map(|_| ExitCode::SUCCESS),
        Command::New(a) => {
            let dir = sift_host::scaffold::run(a)?;
            println!(
                "created {}: see its README.md to build it and run its case",
                dir.display()
            );
            Ok(ExitCode::SUCCESS)
        }
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

fn filter(a: FilterArgs) -> Result<ExitCode> {
    let config = load_config(a.source.config.as_deref())?;
    let cluster = Objects::read_files(&a.cluster)?;
    for s in &cluster.skipped {
        tracing::debug!("skipped {s}");
    }
    let snapshot = Arc::new(Snapshot::from_objects(&cluster)?);
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
            if !selected.iter().any(|p| p.name == name) && !disabled.iter().any(|p| p.name == name)
            {
                tracing::warn!(
                    "plugin {name} is loaded but not enabled, so it does not run: \
                     pass --enable {name} (or list it under plugins.filter.enabled in the config)"
                );
            }
        }
    }
    let mut engine = Engine::new(catalog.select(&selected)?, options)?;
    let mut outcomes = Vec::new();
    for (pod, origin) in &pods {
        let model = kube::pod(pod).map_err(|e| anyhow!("{origin}: {e:#}"))?;
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

fn serve(a: sift_host::serve::ServeArgs) -> Result<ExitCode> {
    let config = load_config(a.config.as_deref())?;
    let source = PluginSource {
        config: a.config.clone(),
        plugins_dir: a.plugins_dir.clone(),
        native: false,
    };
    let dir = plugins_dir(&source, &config).ok_or_else(|| {
        anyhow!("no plugins directory: pass --plugins DIR (or set pluginsDir in the config)")
    })?;
    let runtime = runtime(&config)?;
    sift_host::serve::run(a, runtime, config, dir)?;
    Ok(ExitCode::SUCCESS)
}

fn conformance_cmd(a: ConformanceArgs) -> Result<ExitCode> {
    let config = load_config(a.source.config.as_deref())?;
    let files = conformance::collect_case_files(&a.paths)?;
    if files.is_empty() {
        bail!("no case files (*.json) under the given paths");
    }
    let catalog = catalog(&a.source, &config, &a.plugin_files)?;
    let (mut passed, mut failed) = (0, 0);
    for file in &files {
        let r = conformance::run_case(file, &catalog);
        if r.differences.is_empty() {
            passed += 1;
        } else {
            failed += 1;
            let name = if r.name.is_empty() {
                String::new()
            } else {
                format!(" ({})", r.name)
            };
            println!(
                "FAIL {}{name}: {}",
                r.file.display(),
                r.differences.join("; ")
            );
        }
    }
    println!("{passed} passed, {failed} failed");
    Ok(if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn plugins_list(source: PluginSource) -> Result<ExitCode> {
    let config = load_config(source.config.as_deref())?;
    if source.native {
        for n in sift_host::native::builtin() {
            println!("{:20} native", n.name);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let dir = plugins_dir(&source, &config)
        .ok_or_else(|| anyhow!("no plugins directory (pass --plugins DIR)"))?;
    let catalog = Catalog::load_wasm(&runtime(&config)?, Some(&dir), &[], &config)?;
    let enabled: Vec<String> = config
        .filter_plugins()
        .into_iter()
        .map(|p| p.name)
        .collect();
    println!(
        "{:20} {:12} {:>9} {:8} FILE",
        "NAME", "VERSION", "SIZE", "ENABLED"
    );
    for p in catalog.wasm_plugins() {
        let id = p.identity();
        let position = enabled
            .iter()
            .position(|n| *n == id.name)
            .map(|i| format!("#{}", i + 1));
        println!(
            "{:20} {:12} {:>9} {:8} {}",
            printable(&id.name),
            id.version(),
            human_size(id.size),
            position.unwrap_or_else(|| "no".into()),
            id.path.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn plugins_inspect(file: &Path) -> Result<ExitCode> {
    let config = Config::default();
    let runtime = runtime(&config)?;
    let bytes = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    let compiled = runtime.compile(&bytes, file)?;
    let ty = compiled.component.component_type();
    let engine = runtime.engine();
    println!("file:         {}", file.display());
    println!("size:         {}", human_size(compiled.size));
    println!("sha256:       {}", compiled.sha256);
    println!(
        "compile time: {:.1} ms{}",
        compiled.compile_time.as_secs_f64() * 1e3,
        if compiled.from_cache {
            " (from cache)"
        } else {
            ""
        }
    );
    println!("imports:");
    for (name, _) in ty.imports(engine) {
        println!("  {}", printable(name));
    }
    println!("exports:");
    for (name, _) in ty.exports(engine) {
        println!("  {}", printable(name));
    }
    match WasmPlugin::load(&runtime, file, &|_| "{}".to_string()) {
        Ok(p) => {
            println!("contract:     sift:predicate/predicate-plugin@0.1.0");
            println!("name:         {}", printable(&p.identity().name));
            println!("node fields:  {}", p.identity().node_fields);
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            println!(
                "contract:     NOT a sift plugin: {}",
                printable(&format!("{e:#}"))
            );
            Ok(ExitCode::from(1))
        }
    }
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

fn human_size(bytes: usize) -> String {
    if bytes >= 1 << 20 {
        format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
    } else {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    }
}

fn parse_parallelism(s: &str) -> Result<usize, String> {
    let n: usize = s
        .parse()
        .map_err(|_| format!("{s:?} is not a whole number of worker threads"))?;
    sift_host::engine::check_parallelism(n).map_err(|e| e.to_string())
}
