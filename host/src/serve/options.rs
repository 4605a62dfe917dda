//! What `sift serve` is asked to do, as plain data (the command line's
//! flags are parsed in the CLI), and the checks that turn it into
//! settings: the body limit, the API server to watch, absolute paths.

use super::informer::Source;
use anyhow::{Result, anyhow};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `sift serve`'s settings; each field is the flag of the same name.
#[derive(Clone, Debug)]
pub struct Options {
    pub listen: SocketAddr,
    pub config: Option<PathBuf>,
    pub plugins_dir: Option<PathBuf>,
    pub cluster: Vec<PathBuf>,
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    pub in_cluster: bool,
    pub watch_timeout: Duration,
    pub allow_cluster_events: bool,
    pub filter_verb: String,
    /// The extender's prioritizeVerb.
    pub prioritize_verb: String,
    pub max_in_flight: u32,
    pub max_queue: usize,
    /// As given (e.g. `64Mi`): checked when the server starts, after the
    /// configuration and plugins directory, as it always was.
    pub max_body: String,
    pub read_timeout: Duration,
    pub shutdown_timeout: Duration,
}

impl Options {
    /// `--max-body` in bytes: a quantity such as "64Mi" or "1000000".
    pub fn max_body_bytes(&self) -> Result<usize> {
        let s = &self.max_body;
        let q = sift_sdk::Quantity::parse(s).map_err(|e| anyhow!("--max-body {s:?}: {e}"))?;
        let v = q.value();
        if v < 1024 {
            anyhow::bail!("--max-body {s:?} is below 1Ki");
        }
        Ok(v as usize)
    }

    /// The API server to watch, if any (a kubeconfig wins over
    /// `--in-cluster`; the CLI refuses both).
    pub fn watch_source(&self) -> Option<Source> {
        match (&self.kubeconfig, self.in_cluster) {
            (Some(path), _) => Some(Source::Kubeconfig {
                path: absolute(path),
                context: self.context.clone(),
            }),
            (None, true) => Some(Source::InCluster),
            (None, false) => None,
        }
    }
}

/// `p` made absolute, so file events (which carry absolute paths) match
/// it; canonical when it exists.
pub fn absolute(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| {
        std::env::current_dir()
            .map(|d| d.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    })
}
