//! The file watcher: the plugins directory, the config file and the
//! cluster files, debounced (a burst of writes is one rescan), and only
//! events that can mean new contents wake the reload thread.

use super::triggers::Trigger;
use anyhow::{Context, Result};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// The running watcher: watching stops when it is dropped.
pub type Watcher = notify_debouncer_full::Debouncer<
    notify::RecommendedWatcher,
    notify_debouncer_full::RecommendedCache,
>;

/// Watches the plugins directory, the config file and the cluster files;
/// events are debounced (a burst of writes is one rescan).
pub fn watch(
    dir: &Path,
    config: Option<&Path>,
    cluster: &[PathBuf],
    tx: mpsc::Sender<Trigger>,
) -> Result<Watcher> {
    use notify::RecursiveMode;
    let config_owned = config.map(Path::to_path_buf);
    let dir_owned = dir.to_path_buf();
    let cluster_owned: Vec<PathBuf> = cluster.to_vec();
    let mut debouncer = notify_debouncer_full::new_debouncer(
        Duration::from_millis(200),
        None,
        move |result: notify_debouncer_full::DebounceEventResult| {
            let Ok(events) = result else {
                let _ = tx.send(Trigger::Plugins);
                return;
            };
            let mut plugins = false;
            let mut cluster = false;
            for e in events.iter().filter(|e| changes_content(&e.kind)) {
                for p in &e.paths {
                    if p.starts_with(&dir_owned) || Some(p) == config_owned.as_ref() {
                        plugins = true;
                    }
                    if cluster_owned.contains(p) {
                        cluster = true;
                    }
                }
            }
            if plugins {
                let _ = tx.send(Trigger::Plugins);
            }
            if cluster {
                let _ = tx.send(Trigger::Cluster);
            }
        },
    )
    .context("cannot start the file watcher")?;
    debouncer
        .watch(dir, RecursiveMode::NonRecursive)
        .with_context(|| format!("cannot watch {}", dir.display()))?;
    let mut parents: BTreeSet<PathBuf> = BTreeSet::new();
    for f in config
        .into_iter()
        .chain(cluster.iter().map(PathBuf::as_path))
    {
        if let Some(parent) = f.parent() {
            parents.insert(parent.to_path_buf());
        }
    }
    for p in parents {
        if p != dir {
            debouncer
                .watch(&p, RecursiveMode::NonRecursive)
                .with_context(|| format!("cannot watch {}", p.display()))?;
        }
    }
    Ok(debouncer)
}

/// Whether a file event can mean new contents. Opening or reading a file
/// is an event too (inotify's OPEN and CLOSE_NOWRITE): sift reading the
/// files it watches must not wake it again.
fn changes_content(kind: &notify::EventKind) -> bool {
    use notify::EventKind;
    use notify::event::{AccessKind, AccessMode};
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        _ => true,
    }
}
