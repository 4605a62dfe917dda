//! The reload thread and what wakes it: file events and SIGHUP send a
//! [`Trigger`]; the thread, which owns the [`Reloader`], answers a burst
//! of them with one rescan, so reloads never run on the HTTP workers.

use super::reload::Reloader;
use anyhow::{Context, Result};
use std::collections::HashSet;
use std::sync::mpsc;
use std::thread::JoinHandle;

/// Why the reload thread wakes up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Trigger {
    Plugins,
    /// A cluster file changed: reload it if its contents did.
    Cluster,
    /// SIGHUP: reapply the cluster files even if unchanged (over what
    /// `/cluster` events changed since).
    ClusterForced,
    Stop,
}

/// Starts the reload thread: plugins and config through `reloader`,
/// cluster files through `reload_cluster(force)`, until [`Trigger::Stop`].
pub fn spawn_reload_thread(
    rx: mpsc::Receiver<Trigger>,
    mut reloader: Reloader,
    reload_cluster: impl Fn(bool) + Send + 'static,
) -> Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("sift-reload".into())
        .spawn(move || {
            while let Ok(first) = rx.recv() {
                let mut triggers: HashSet<Trigger> = HashSet::from([first]);
                triggers.extend(rx.try_iter());
                if triggers.contains(&Trigger::Stop) {
                    break;
                }
                if triggers.contains(&Trigger::Plugins) {
                    reloader.rescan();
                }
                if triggers.contains(&Trigger::ClusterForced) {
                    reload_cluster(true);
                } else if triggers.contains(&Trigger::Cluster) {
                    reload_cluster(false);
                }
            }
        })
        .context("cannot start the reload thread")
}
