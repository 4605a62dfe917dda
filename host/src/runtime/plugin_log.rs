//! What plugins say: calls to the contract's `log` import and, when the
//! sandbox grants stdio, their stdout and stderr. Every line goes through
//! the host's logger with the plugin's name, escaped (a plugin cannot forge
//! a log line or write escape sequences), truncated, and rate-limited per
//! plugin, so a chatty or hostile plugin cannot flood the host's stderr.
//! What is dropped is counted and reported when the plugin may log again.

use crate::text::printable_truncated;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Longest message kept whole, in bytes.
pub const MAX_MESSAGE: usize = 4096;
/// Messages per second a plugin may log (all its instances together)...
pub const RATE: f64 = 100.0;
/// ...with bursts of up to this many.
pub const BURST: f64 = 200.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Trace,
    Debug,
    Info,
    Warn,
    Error,
}

/// How often, at most, a plugin's drops are reported.
pub const REPORT_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// One plugin's token bucket.
struct Bucket {
    tokens: f64,
    last: Instant,
    /// Dropped and not yet reported.
    dropped: u64,
    /// When drops were last announced or counted in the log.
    reported: Option<Instant>,
}

impl Bucket {
    fn new(tokens: f64) -> Bucket {
        Bucket {
            tokens,
            last: Instant::now(),
            dropped: 0,
            reported: None,
        }
    }

    /// Whether a drop report is due (at most one per [`REPORT_EVERY`]).
    fn report_due(&mut self, now: Instant) -> bool {
        if self
            .reported
            .is_some_and(|at| now.duration_since(at) < REPORT_EVERY)
        {
            return false;
        }
        self.reported = Some(now);
        true
    }
}

/// The log budgets of every plugin, shared by their instances.
#[derive(Default)]
pub struct PluginLogs {
    buckets: Mutex<HashMap<Arc<str>, Arc<Mutex<Bucket>>>>,
    dropped_total: AtomicU64,
}

impl PluginLogs {
    /// The logger of the plugin named `plugin` ("name@version").
    pub fn logger(self: &Arc<Self>, plugin: Arc<str>) -> PluginLogger {
        let bucket = self
            .buckets
            .lock()
            .map(|mut b| {
                b.entry(plugin.clone())
                    .or_insert_with(|| Arc::new(Mutex::new(Bucket::new(BURST))))
                    .clone()
            })
            .unwrap_or_else(|_| Arc::new(Mutex::new(Bucket::new(0.0))));
        PluginLogger {
            plugin,
            bucket,
            logs: self.clone(),
        }
    }

    /// Messages dropped by the rate limit since start, all plugins.
    pub fn dropped_total(&self) -> u64 {
        self.dropped_total.load(Ordering::Relaxed)
    }
}

impl Drop for PluginLogs {
    /// Reports what is still uncounted when the runtime goes away.
    fn drop(&mut self) {
        let Ok(buckets) = self.buckets.lock() else {
            return;
        };
        for (plugin, bucket) in buckets.iter() {
            if let Ok(b) = bucket.lock()
                && b.dropped > 0
            {
                tracing::warn!(target: "sift::plugin", plugin = &**plugin, dropped = b.dropped,
                    "{} log message(s) of this plugin dropped: over {RATE} per second", b.dropped);
            }
        }
    }
}

/// Logs for one plugin.
#[derive(Clone)]
pub struct PluginLogger {
    plugin: Arc<str>,
    bucket: Arc<Mutex<Bucket>>,
    logs: Arc<PluginLogs>,
}

impl PluginLogger {
    pub fn plugin(&self) -> &Arc<str> {
        &self.plugin
    }

    /// Logs one message from the plugin, if its budget allows.
    pub fn log(&self, level: Level, message: &str) {
        if !enabled(level) {
            return;
        }
        let resumed = {
            let Ok(mut b) = self.bucket.lock() else {
                return;
            };
            let now = Instant::now();
            let refill = now.duration_since(b.last).as_secs_f64() * RATE;
            b.tokens = (b.tokens + refill).min(BURST);
            b.last = now;
            if b.tokens < 1.0 {
                b.dropped += 1;
                self.logs.dropped_total.fetch_add(1, Ordering::Relaxed);
                if b.dropped == 1 && b.report_due(now) {
                    tracing::warn!(target: "sift::plugin", plugin = &*self.plugin,
                        "this plugin logs over {RATE} messages per second: dropping messages \
                         (how many is logged when it may log again, or at exit)");
                }
                return;
            }
            b.tokens -= 1.0;
            if b.dropped > 0 && b.report_due(now) {
                std::mem::take(&mut b.dropped)
            } else {
                0
            }
        };
        let plugin = &*self.plugin;
        if resumed > 0 {
            tracing::warn!(target: "sift::plugin", plugin, dropped = resumed,
                "{resumed} log message(s) of this plugin dropped: over {RATE} per second");
        }
        let message = printable_truncated(message, MAX_MESSAGE);
        match level {
            Level::Trace => tracing::trace!(target: "sift::plugin", plugin, "{message}"),
            Level::Debug => tracing::debug!(target: "sift::plugin", plugin, "{message}"),
            Level::Info => tracing::info!(target: "sift::plugin", plugin, "{message}"),
            Level::Warn => tracing::warn!(target: "sift::plugin", plugin, "{message}"),
            Level::Error => tracing::error!(target: "sift::plugin", plugin, "{message}"),
        }
    }
}

/// Whether the subscriber would keep a plugin message at `level`: what it
/// would not costs no budget.
fn enabled(level: Level) -> bool {
    match level {
        Level::Trace => tracing::enabled!(target: "sift::plugin", tracing::Level::TRACE),
        Level::Debug => tracing::enabled!(target: "sift::plugin", tracing::Level::DEBUG),
        Level::Info => tracing::enabled!(target: "sift::plugin", tracing::Level::INFO),
        Level::Warn => tracing::enabled!(target: "sift::plugin", tracing::Level::WARN),
        Level::Error => tracing::enabled!(target: "sift::plugin", tracing::Level::ERROR),
    }
}

/// A plugin's granted stdout or stderr: bytes are cut into lines, each
/// logged at warn level (granted stdio is for seeing what a plugin prints,
/// so it shows at the default level) as the plugin's message, prefixed
/// `[stdout]` or `[stderr]` (a line longer than [`MAX_MESSAGE`] is logged
/// in pieces).
pub struct StdioLines {
    logger: PluginLogger,
    stream: &'static str,
    pending: Vec<u8>,
}

impl StdioLines {
    pub fn new(logger: PluginLogger, stream: &'static str) -> StdioLines {
        StdioLines {
            logger,
            stream,
            pending: Vec::new(),
        }
    }

    pub fn write(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        while let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            self.emit(&line[..line.len() - 1]);
        }
        if self.pending.len() >= MAX_MESSAGE {
            let line = std::mem::take(&mut self.pending);
            self.emit(&line);
        }
    }

    pub fn flush(&mut self) {
        if !self.pending.is_empty() {
            let line = std::mem::take(&mut self.pending);
            self.emit(&line);
        }
    }

    fn emit(&self, line: &[u8]) {
        let text = String::from_utf8_lossy(line);
        let text = text.strip_suffix('\r').unwrap_or(&text);
        self.logger
            .log(Level::Warn, &format!("[{}] {text}", self.stream));
    }
}

impl Drop for StdioLines {
    fn drop(&mut self) {
        self.flush();
    }
}
