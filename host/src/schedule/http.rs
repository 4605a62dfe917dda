//! `sift schedule`'s HTTP routes: `/healthz` (the process runs),
//! `/readyz` (200 `leader` or `standby` once every first list is in and a
//! profile may schedule; 503 with the reason before), `/metrics`
//! (kube-scheduler's metric names, then sift's watch and plugin metrics)
//! and `/status` (JSON).

use super::metrics::Metrics;
use crate::serve::informer::Informer;
use crate::serve::metrics::Metrics as WatchMetrics;
use crate::serve::reload::Profile;
use arc_swap::ArcSwap;
use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

pub struct Health {
    pub scheduler: String,
    /// The lease identity (`None` without leader election).
    pub identity: Option<String>,
    pub leading: Arc<AtomicBool>,
    pub informer: Arc<Informer>,
    pub profile: Arc<ArcSwap<Profile>>,
    pub watch_metrics: Arc<WatchMetrics>,
    pub metrics: Arc<Metrics>,
    /// Why the profile could not be built into a scheduler.
    pub build_error: Arc<Mutex<Option<String>>>,
}

impl Health {
    /// Why the scheduler cannot schedule yet, if it cannot.
    fn not_ready(&self) -> Option<String> {
        if let Some(why) = self.informer.waiting_for() {
            return Some(format!("not synced: {why}"));
        }
        let profile = self.profile.load();
        if profile.source.is_none() {
            return Some("no plugin profile loaded yet".into());
        }
        if !profile.unready.is_empty() {
            return Some(format!("profile not ready: {}", profile.unready.join("; ")));
        }
        self.build_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn role(&self) -> &'static str {
        if self.leading.load(Ordering::SeqCst) {
            "leader"
        } else {
            "standby"
        }
    }
}

pub fn router(health: Arc<Health>) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/livez", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .route("/status", get(status))
        .with_state(health)
}

async fn readyz(State(h): State<Arc<Health>>) -> impl IntoResponse {
    match h.not_ready() {
        Some(why) => (StatusCode::SERVICE_UNAVAILABLE, format!("{why}\n")),
        None => (StatusCode::OK, format!("{}\n", h.role())),
    }
}

async fn metrics(State(h): State<Arc<Health>>) -> impl IntoResponse {
    let mut body = h.metrics.encode_body();
    body.push_str(&h.watch_metrics.encode());
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        body,
    )
}

async fn status(State(h): State<Arc<Health>>) -> impl IntoResponse {
    let profile = h.profile.load();
    axum::Json(json!({
        "scheduler": h.scheduler,
        "identity": h.identity,
        "role": h.role(),
        "ready": h.not_ready().is_none(),
        "notReady": h.not_ready(),
        "profile": {
            "generation": profile.generation,
            "plugins": profile.plugins,
            "unready": profile.unready,
        },
        "watch": h.informer.status(),
    }))
}
