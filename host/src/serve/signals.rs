//! Signals: SIGHUP rescans plugins, config and cluster files (through the
//! reload thread); SIGTERM or SIGINT starts a graceful shutdown.

use super::triggers::Trigger;
use std::sync::mpsc;

/// Sends a rescan (the cluster files forced) to the reload thread on each
/// SIGHUP, for as long as the runtime runs.
pub fn spawn_hangup_task(tx: mpsc::Sender<Trigger>) {
    tokio::spawn(async move {
        let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
        else {
            return;
        };
        while s.recv().await.is_some() {
            tracing::info!("SIGHUP: rescanning plugins, config and cluster files");
            let _ = tx.send(Trigger::Plugins);
            let _ = tx.send(Trigger::ClusterForced);
        }
    });
}

/// Completes at the first SIGTERM or SIGINT, after `on_signal` (never,
/// if the handlers cannot be installed).
pub async fn shutdown(on_signal: impl FnOnce()) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {},
        _ = int.recv() => {},
    }
    on_signal();
    tracing::info!("shutting down: no new connections, finishing requests in flight");
}
