//! The WebAssembly runtime: one wasmtime Engine for the process, the
//! sandbox every plugin instance runs in, and its limits (all in one place).
//!
//! - Deadlines use epoch interruption: a ticker thread advances the epoch
//!   every [`TICK`]; each call gets a budget of ticks. This costs far less
//!   than fuel metering.
//! - Memory is capped per instance by a store limiter.
//! - WASI: streams, clocks, randomness and the CLI environment are linked so
//!   that ordinary guests (Rust std, C, Go...) instantiate, but clocks are
//!   frozen (see [`FrozenMonotonicClock`]), randomness is a fixed sequence, the environment is empty and
//!   stdio is discarded unless the configuration grants them (granted, each
//!   line becomes a log message of the plugin's: see [`crate::runtime::plugin_log`]).
//! - The filesystem is linked with no directory preopened, ever: WASI
//!   preview-1 adapters (C, Go, WAT plugins) ask for the preopens on their
//!   first fd call and get an empty list; no descriptor can be had, so no
//!   file can be opened. Sockets and other interfaces are not linked at
//!   all: calling one traps with a message naming the interface, which the
//!   host reports as the plugin's Error.

pub mod cache;
pub mod plugin_log;

use crate::config::{Grants, Limits};
use anyhow::{Context, Result, anyhow};
use cache::{CompileCache, sha256_hex};
pub use plugin_log::Level as LogLevel;
use plugin_log::{PluginLogger, PluginLogs, StdioLines};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wasmtime::component::{Component, HasData, Linker, ResourceTable};
use wasmtime::{Config, Engine, ResourceLimiter};
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

/// Epoch granularity of call deadlines.
pub const TICK: Duration = Duration::from_millis(5);

/// What each instance's store holds.
pub struct InstanceState {
    wasi: WasiCtx,
    table: ResourceTable,
    limiter: MemoryLimiter,
    /// The plugin's logger ("name@version" once known), shared with its
    /// granted stdio streams.
    log: Arc<Mutex<PluginLogger>>,
}

impl InstanceState {
    pub fn memory_exceeded(&self) -> bool {
        self.limiter.exceeded
    }

    /// Names this instance's log lines (and stdio) after the plugin.
    pub fn set_logger(&mut self, logger: PluginLogger) {
        if let Ok(mut l) = self.log.lock() {
            *l = logger;
        }
    }

    fn logger(&self) -> Option<PluginLogger> {
        self.log.lock().ok().map(|l| l.clone())
    }

    /// A message from the plugin's `log` import (each contract version
    /// links its own and lands here).
    pub fn plugin_log(&self, level: LogLevel, message: &str) {
        if let Some(logger) = self.logger() {
            logger.log(level, message);
        }
    }
}

impl WasiView for InstanceState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// The interfaces [`Runtime::linker`] defines, by name and the
/// `major.minor` of the version that semver-compatible imports share.
const LINKED_INTERFACES: &[(&str, &str)] = &[
    ("wasi:io/error", "0.2"),
    ("wasi:io/poll", "0.2"),
    ("wasi:io/streams", "0.2"),
    ("wasi:clocks/wall-clock", "0.2"),
    ("wasi:clocks/monotonic-clock", "0.2"),
    ("wasi:random/random", "0.2"),
    ("wasi:random/insecure", "0.2"),
    ("wasi:random/insecure-seed", "0.2"),
    ("wasi:cli/exit", "0.2"),
    ("wasi:cli/environment", "0.2"),
    ("wasi:cli/stdin", "0.2"),
    ("wasi:cli/stdout", "0.2"),
    ("wasi:cli/stderr", "0.2"),
    ("wasi:cli/terminal-input", "0.2"),
    ("wasi:cli/terminal-output", "0.2"),
    ("wasi:cli/terminal-stdin", "0.2"),
    ("wasi:cli/terminal-stdout", "0.2"),
    ("wasi:cli/terminal-stderr", "0.2"),
    ("wasi:filesystem/types", "0.2"),
    ("wasi:filesystem/preopens", "0.2"),
];

/// The contract's own interfaces, linked per component by `contract` for
/// the version it implements (see `Runtime::linker`), whatever that
/// version: a trap defined here first would collide with them.
const CONTRACT_INTERFACES: &[&str] = &["sift:predicate/log", "sift:predicate/types"];

/// The host type of a resource in an interface the sandbox does not
/// provide. WASI interfaces re-export wasi:io's streams, pollables and
/// errors (e.g. `wasi:filesystem/types` uses `input-stream`): those must be
/// the types the linked wasi:io uses, or linking fails.
fn stub_resource(name: &str) -> wasmtime::component::ResourceType {
    use wasmtime::component::ResourceType;
    use wasmtime_wasi::p2::{DynInputStream, DynOutputStream, DynPollable, IoError};
    match name {
        "input-stream" => ResourceType::host::<DynInputStream>(),
        "output-stream" => ResourceType::host::<DynOutputStream>(),
        "pollable" => ResourceType::host::<DynPollable>(),
        "error" => ResourceType::host::<IoError>(),
        _ => ResourceType::host::<()>(),
    }
}

/// Whether an import such as `wasi:cli/environment@0.2.9` is provided by
/// the shared linker (wasmtime resolves compatible versions itself).
fn is_linked(import: &str) -> bool {
    let Some((base, version)) = import.split_once('@') else {
        return false;
    };
    if CONTRACT_INTERFACES.contains(&base) {
        return true;
    }
    LINKED_INTERFACES.iter().any(|(name, compatible)| {
        *name == base
            && version
                .strip_prefix(compatible)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
    })
}

struct MemoryLimiter {
    max: usize,
    exceeded: bool,
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.max {
            self.exceeded = true;
            return Err(wasmtime::Error::msg(format!(
                "memory limit of {} MiB exceeded",
                self.max >> 20
            )));
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 1 << 20)
    }
}

struct FrozenWallClock;
impl wasmtime_wasi::HostWallClock for FrozenWallClock {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }
    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

/// A monotonic clock stopped at 1 ns rather than 0: the origin of a
/// monotonic clock is arbitrary, but Go's runtime takes a reading of zero
/// for a broken clock and aborts ("nanotime returning zero") before any
/// package initialises.
struct FrozenMonotonicClock;
impl wasmtime_wasi::HostMonotonicClock for FrozenMonotonicClock {
    fn resolution(&self) -> u64 {
        1_000_000_000
    }
    fn now(&self) -> u64 {
        1
    }
}

/// A granted stdout or stderr: lines become the plugin's log messages.
struct GrantedStdio {
    log: Arc<Mutex<PluginLogger>>,
    stream: &'static str,
}

impl GrantedStdio {
    fn lines(&self) -> StdioLines {
        let logger = match self.log.lock() {
            Ok(l) => l.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        };
        StdioLines::new(logger, self.stream)
    }
}

impl wasmtime_wasi::cli::IsTerminal for GrantedStdio {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl wasmtime_wasi::cli::StdoutStream for GrantedStdio {
    fn p2_stream(&self) -> Box<dyn wasmtime_wasi::p2::OutputStream> {
        Box::new(LineStream(self.lines()))
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(LineStream(self.lines()))
    }
}

struct LineStream(StdioLines);

impl wasmtime_wasi::p2::OutputStream for LineStream {
    fn write(&mut self, bytes: bytes::Bytes) -> wasmtime_wasi::p2::StreamResult<()> {
        self.0.write(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> wasmtime_wasi::p2::StreamResult<()> {
        self.0.flush();
        Ok(())
    }

    fn check_write(&mut self) -> wasmtime_wasi::p2::StreamResult<usize> {
        Ok(64 * 1024)
    }
}

#[wasmtime_wasi::async_trait]
impl wasmtime_wasi::p2::Pollable for LineStream {
    async fn ready(&mut self) {}
}

impl tokio::io::AsyncWrite for LineStream {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.0.write(buf);
        std::task::Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        self.0.flush();
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        self.poll_flush(cx)
    }
}

struct HasTable;
impl HasData for HasTable {
    type Data<'a> = &'a mut ResourceTable;
}

/// A component compiled for this engine.
pub struct Compiled {
    pub component: Component,
    pub sha256: String,
    pub size: usize,
    pub compile_time: Duration,
    pub from_cache: bool,
}

/// The process-wide Wasm runtime.
pub struct Runtime {
    engine: Engine,
    linker: Linker<InstanceState>,
    limits: Limits,
    grants: Grants,
    cache: Option<CompileCache>,
    stop_ticker: Arc<AtomicBool>,
    logs: Arc<PluginLogs>,
}

impl Runtime {
    pub fn new(limits: Limits, grants: Grants, cache: Option<CompileCache>) -> Result<Runtime> {
        let mut config = Config::new();
        config.epoch_interruption(true);
        config.wasm_component_model(true);
        // SIFT_POOLING=1: the pooling instance allocator, for measurement
        // (BENCHMARKS.md); instances are long-lived, so on-demand is default.
        if std::env::var_os("SIFT_POOLING").is_some() {
            let mut pool = wasmtime::PoolingAllocationConfig::default();
            pool.max_memory_size(limits.memory_bytes);
            config.allocation_strategy(wasmtime::InstanceAllocationStrategy::Pooling(pool));
        }
        // SIFT_PERFMAP=1 names JIT code for `perf report` (/tmp/perf-PID.map).
        if std::env::var_os("SIFT_PERFMAP").is_some() {
            config.profiler(wasmtime::ProfilingStrategy::PerfMap);
        }
        let engine = Engine::new(&config)
            .map_err(anyhow::Error::from)
            .context("cannot configure the WebAssembly engine")?;
        let linker = Self::linker(&engine)?;
        let stop_ticker = Arc::new(AtomicBool::new(false));
        let weak = engine.weak();
        let stop = stop_ticker.clone();
        std::thread::Builder::new()
            .name("sift-epoch".into())
            .spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(TICK);
                    match weak.upgrade() {
                        Some(engine) => engine.increment_epoch(),
                        None => break,
                    }
                }
            })
            .context("cannot start the epoch ticker")?;
        Ok(Runtime {
            engine,
            linker,
            limits,
            grants,
            cache,
            stop_ticker,
            logs: Arc::new(PluginLogs::default()),
        })
    }

    fn linker(engine: &Engine) -> Result<Linker<InstanceState>> {
        // Keep LINKED_INTERFACES in step with this list.
        use wasmtime_wasi::cli::{WasiCli, WasiCliView};
        use wasmtime_wasi::clocks::{WasiClocks, WasiClocksView};
        use wasmtime_wasi::filesystem::{WasiFilesystem, WasiFilesystemView};
        use wasmtime_wasi::p2::bindings::{cli, clocks, filesystem, random, sync, sync::io};
        use wasmtime_wasi::random::WasiRandom;
        type T = InstanceState;
        let mut l = Linker::<T>::new(engine);
        let l = &mut l;
        io::error::add_to_linker::<T, HasTable>(l, |t| &mut t.table)?;
        io::poll::add_to_linker::<T, HasTable>(l, |t| &mut t.table)?;
        io::streams::add_to_linker::<T, HasTable>(l, |t| &mut t.table)?;
        clocks::wall_clock::add_to_linker::<T, WasiClocks>(l, T::clocks)?;
        clocks::monotonic_clock::add_to_linker::<T, WasiClocks>(l, T::clocks)?;
        random::random::add_to_linker::<T, WasiRandom>(l, |t| t.wasi.random())?;
        random::insecure::add_to_linker::<T, WasiRandom>(l, |t| t.wasi.random())?;
        random::insecure_seed::add_to_linker::<T, WasiRandom>(l, |t| t.wasi.random())?;
        cli::exit::add_to_linker::<T, WasiCli>(l, T::cli)?;
        cli::environment::add_to_linker::<T, WasiCli>(l, T::cli)?;
        cli::stdin::add_to_linker::<T, WasiCli>(l, T::cli)?;
        cli::stdout::add_to_linker::<T, WasiCli>(l, T::cli)?;
        cli::stderr::add_to_linker::<T, WasiCli>(l, T::cli)?;
        cli::terminal_input::add_to_linker::<T, WasiCli>(l, T::cli)?;
        cli::terminal_output::add_to_linker::<T, WasiCli>(l, T::cli)?;
        cli::terminal_stdin::add_to_linker::<T, WasiCli>(l, T::cli)?;
        cli::terminal_stdout::add_to_linker::<T, WasiCli>(l, T::cli)?;
        cli::terminal_stderr::add_to_linker::<T, WasiCli>(l, T::cli)?;
        // No directory is ever preopened (see the module's doc).
        filesystem::preopens::add_to_linker::<T, WasiFilesystem>(l, T::filesystem)?;
        sync::filesystem::types::add_to_linker::<T, WasiFilesystem>(l, T::filesystem)?;
        // The contract's own imports (sift:predicate/log) are linked per
        // component by `contract`, for the version it implements.
        Ok(l.clone())
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The call deadline in epoch ticks (at least one).
    pub fn deadline_ticks(&self) -> u64 {
        (self
            .limits
            .call_deadline
            .as_nanos()
            .div_ceil(TICK.as_nanos()) as u64)
            .max(1)
    }

    /// A linker for one component: the shared one, with every import the
    /// sandbox does not provide defined as a trap.
    ///
    /// Not wasmtime's `define_unknown_imports_as_traps`: it defines a new,
    /// empty instance for an import such as `wasi:cli/environment@0.2.9`,
    /// hiding the semver-compatible `@0.2.12` this linker provides, so a
    /// guest built against another WASI patch release (componentize-py,
    /// componentize-js...) would trap on WASI it is granted.
    pub fn linker_for(&self, component: &Component) -> Result<Linker<InstanceState>> {
        use wasmtime::component::types::ComponentItem;
        let mut linker = self.linker.clone();
        let engine = &self.engine;
        for (name, item) in component.component_type().imports(engine) {
            if is_linked(name) {
                continue;
            }
            let trap = |full: String| {
                move |_: wasmtime::StoreContextMut<'_, InstanceState>,
                      _: wasmtime::component::types::ComponentFunc,
                      _: &[wasmtime::component::Val],
                      _: &mut [wasmtime::component::Val]|
                      -> wasmtime::Result<()> {
                    Err(wasmtime::Error::msg(format!(
                        "unknown import: `{full}` has not been defined"
                    )))
                }
            };
            let mut root = linker.root();
            match item.ty {
                ComponentItem::ComponentFunc(_) => root.func_new(name, trap(name.to_string()))?,
                ComponentItem::ComponentInstance(instance) => {
                    let mut inner = root.instance(name)?;
                    for (export, item) in instance.exports(engine) {
                        match item.ty {
                            ComponentItem::ComponentFunc(_) => {
                                inner.func_new(export, trap(format!("{name}#{export}")))?
                            }
                            ComponentItem::Resource(_) => {
                                inner.resource(export, stub_resource(export), |_, _| Ok(()))?
                            }
                            _ => {}
                        }
                    }
                }
                ComponentItem::Resource(_) => root.resource(
                    name,
                    wasmtime::component::ResourceType::host::<()>(),
                    |_, _| Ok(()),
                )?,
                _ => {}
            }
        }
        Ok(linker)
    }

    /// The logger of the plugin labelled `plugin` ("name@version"); its
    /// rate limit is shared by all its instances.
    pub fn plugin_logger(&self, plugin: Arc<str>) -> PluginLogger {
        self.logs.logger(plugin)
    }

    /// Plugin log messages dropped by the rate limit since start.
    pub fn plugin_log_dropped(&self) -> u64 {
        self.logs.dropped_total()
    }

    /// A fresh store for one instance of the plugin labelled `plugin`.
    pub fn new_store(&self, plugin: Arc<str>) -> wasmtime::Store<InstanceState> {
        let log = Arc::new(Mutex::new(self.plugin_logger(plugin)));
        let mut b = WasiCtxBuilder::new();
        if self.grants.stdio {
            b.stdout(GrantedStdio {
                log: log.clone(),
                stream: "stdout",
            });
            b.stderr(GrantedStdio {
                log: log.clone(),
                stream: "stderr",
            });
        }
        if !self.grants.clocks {
            b.wall_clock(FrozenWallClock)
                .monotonic_clock(FrozenMonotonicClock);
        }
        if !self.grants.random {
            b.secure_random(wasmtime_wasi::Deterministic::new(vec![4, 2, 4, 2]));
            b.insecure_random(wasmtime_wasi::Deterministic::new(vec![4, 2, 4, 2]));
            b.insecure_random_seed(0x5eed);
        }
        let state = InstanceState {
            wasi: b.build(),
            table: ResourceTable::new(),
            limiter: MemoryLimiter {
                max: self.limits.memory_bytes,
                exceeded: false,
            },
            log,
        };
        let mut store = wasmtime::Store::new(&self.engine, state);
        store.limiter(|s| &mut s.limiter);
        store.set_epoch_deadline(self.deadline_ticks());
        store
    }

    /// Compiles a component, through the on-disk cache when there is one.
    pub fn compile(&self, bytes: &[u8], source: &Path) -> Result<Compiled> {
        let started = Instant::now();
        let sha256 = sha256_hex(bytes);
        let engine_hash = {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            self.engine.precompile_compatibility_hash().hash(&mut h);
            format!("{:016x}", h.finish())
        };
        if let Some(cache) = &self.cache
            && let Some(artifact) = cache.get(&sha256, &engine_hash)
        {
            // SAFETY: the artifact was written by this host's cache for this
            // engine configuration and its integrity hash checked out.
            if let Ok(component) = unsafe { Component::deserialize(&self.engine, &artifact) } {
                return Ok(Compiled {
                    component,
                    sha256,
                    size: bytes.len(),
                    compile_time: started.elapsed(),
                    from_cache: true,
                });
            }
        }
        if wasmparser_is_core_module(bytes) {
            return Err(anyhow!(
                "{} is a core WebAssembly module, not a component: build for wasm32-wasip2 or wrap it with `sift component new`",
                source.display()
            ));
        }
        let component = Component::new(&self.engine, bytes).map_err(|e| {
            anyhow!(
                "{} is not a valid WebAssembly component: {e:#}",
                source.display()
            )
        })?;
        if let Some(cache) = &self.cache
            && let Ok(artifact) = component.serialize()
            && let Err(e) = cache.put(&sha256, &engine_hash, &artifact)
        {
            tracing::warn!("compile cache: {e:#}");
        }
        Ok(Compiled {
            component,
            sha256,
            size: bytes.len(),
            compile_time: started.elapsed(),
            from_cache: false,
        })
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.stop_ticker.store(true, Ordering::Relaxed);
    }
}

/// Core modules start with version 1; components with a different layer.
fn wasmparser_is_core_module(bytes: &[u8]) -> bool {
    bytes.len() >= 8 && &bytes[0..4] == b"\0asm" && bytes[4..8] == [1, 0, 0, 0]
}

/// The largest plugin file read. Components of every SDK are far smaller
/// (componentize-py's, the largest, are tens of MiB); a file past this is
/// refused before a byte of it is held.
pub const MAX_COMPONENT_BYTES: u64 = 256 << 20;

/// Reads a plugin file after checking its size and its 8-byte header, so a
/// stray large file in a plugins directory costs one `read` of 8 bytes,
/// not its size in memory, and is named with what it is.
pub fn read_component(path: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    let mut file =
        std::fs::File::open(path).map_err(|e| anyhow!("cannot read {}: {e}", path.display()))?;
    let size = file
        .metadata()
        .map_err(|e| anyhow!("cannot read {}: {e}", path.display()))?
        .len();
    if size > MAX_COMPONENT_BYTES {
        return Err(anyhow!(
            "{}: {} MiB is larger than a plugin may be ({} MiB): not loaded",
            path.display(),
            size >> 20,
            MAX_COMPONENT_BYTES >> 20
        ));
    }
    let mut header = [0u8; 8];
    let mut got = 0;
    while got < header.len() {
        match file.read(&mut header[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(anyhow!("cannot read {}: {e}", path.display())),
        }
    }
    let header = &header[..got];
    if header.len() < 4 || &header[..4] != b"\0asm" {
        return Err(anyhow!(
            "{} is not a WebAssembly file (it starts with {}, not \\0asm)",
            path.display(),
            if header.is_empty() {
                "nothing: it is empty".to_string()
            } else {
                header
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            }
        ));
    }
    if header.len() == 8 && header[4..8] == [1, 0, 0, 0] {
        return Err(anyhow!(
            "{} is a core WebAssembly module, not a component: build for wasm32-wasip2 or wrap it with `sift component new`",
            path.display()
        ));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    bytes.extend_from_slice(header);
    file.read_to_end(&mut bytes)
        .map_err(|e| anyhow!("cannot read {}: {e}", path.display()))?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::is_linked;

    #[test]
    fn every_contract_version_links_its_own_log() {
        // A trap defined for these would collide with the contract's
        // linking: componentize-py's 0.7 components import the log.
        for v in ["0.1.0", "0.2.0", "0.3.0", "0.7.0"] {
            assert!(is_linked(&format!("sift:predicate/log@{v}")), "{v}");
            assert!(is_linked(&format!("sift:predicate/types@{v}")), "{v}");
        }
        assert!(is_linked("wasi:cli/stdout@0.2.9"));
        assert!(!is_linked("wasi:sockets/tcp@0.2.0"));
        assert!(!is_linked("wasi:cli/stdout"));
    }
}
