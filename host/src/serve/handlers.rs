//! The HTTP routes: the filter and prioritize verbs and `/cluster` (bodies read within
//! their limits, work on blocking threads), and the probes `/healthz`,
//! `/readyz`, `/status` and `/metrics`.

use super::filter::answer;
use super::metrics::{CodeLabel, PluginLabel, ResultLabel};
use super::requests::{apply_cluster_events, parse_cluster_events_keeping};
use super::server::Server;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path as UrlPath, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Every route, over `server`.
pub fn router(server: Arc<Server>) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .route("/status", get(status))
        .route("/metrics", get(metrics_text))
        .route("/cluster", post(cluster_events))
        .route("/{*path}", post(filter))
        .with_state(server)
}

/// Reads a request body within `--max-body` and `--read-timeout`.
async fn read_body(s: &Server, body: Body) -> Result<Bytes, Response> {
    match tokio::time::timeout(s.read_timeout, axum::body::to_bytes(body, s.max_body)).await {
        Err(_) => Err((
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "the request body did not arrive within {} s (--read-timeout)\n",
                s.read_timeout.as_secs_f64()
            ),
        )
            .into_response()),
        Ok(Err(e)) => {
            let too_large =
                std::iter::successors(Some(&e as &(dyn std::error::Error + 'static)), |e| {
                    e.source()
                })
                .any(|e| e.is::<http_body_util::LengthLimitError>());
            Err(if too_large {
                (
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("request body over {} bytes (--max-body)\n", s.max_body),
                )
                    .into_response()
            } else {
                bad_request(format!("cannot read the request body: {e}"))
            })
        }
        Ok(Ok(bytes)) => Ok(bytes),
    }
}

async fn filter(
    State(s): State<Arc<Server>>,
    UrlPath(path): UrlPath<String>,
    body: Body,
) -> Response {
    let verb = path.rsplit('/').next();
    if verb == Some(s.prioritize_verb.as_str()) && s.prioritize_verb != s.filter_verb {
        return prioritize(s, body).await;
    }
    if verb != Some(s.filter_verb.as_str()) {
        return (
            StatusCode::NOT_FOUND,
            format!(
                "sift answers POST <prefix>/{} (the filter verb), <prefix>/{} (the prioritize \
                 verb), /cluster\n",
                s.filter_verb, s.prioritize_verb
            ),
        )
            .into_response();
    }
    let started = Instant::now();
    let outcome = match admitted(&s, body, answer).await {
        Ok(o) => o,
        Err(r) => return respond(&s, r),
    };
    let elapsed = started.elapsed().as_secs_f64();
    let response = match outcome {
        Ok(Ok(result)) => {
            let ok = result.error.is_empty();
            s.metrics
                .filter_duration
                .get_or_create(&ResultLabel {
                    result: if ok { "success" } else { "error" }.into(),
                })
                .observe(elapsed);
            let feasible = result
                .node_names
                .as_ref()
                .map(Vec::len)
                .or(result.nodes.as_ref().map(|n| n.items.len()))
                .unwrap_or(0);
            s.metrics.feasible_nodes.observe(feasible as f64);
            (StatusCode::OK, axum::Json(result)).into_response()
        }
        Ok(Err(message)) => bad_request(message),
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("filter request failed: {e}\n"),
        )
            .into_response(),
    };
    respond(&s, response)
}

/// The prioritize verb: admitted and counted as filter requests are.
async fn prioritize(s: Arc<Server>, body: Body) -> Response {
    let outcome = match admitted(&s, body, super::prioritize::answer).await {
        Ok(o) => o,
        Err(r) => return respond(&s, r),
    };
    let response = match outcome {
        Ok(Ok(list)) => (StatusCode::OK, axum::Json(list)).into_response(),
        Ok(Err(message)) => {
            tracing::warn!("prioritize request failed: {message}");
            bad_request(message)
        }
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("prioritize request failed: {e}\n"),
        )
            .into_response(),
    };
    respond(&s, response)
}

/// A verb's work on a blocking thread, once its body is read (first: a
/// client that stalls must not hold a slot) and admission gave it a slot;
/// `Err` is the response that refused it.
async fn admitted<T: Send + 'static>(
    s: &Arc<Server>,
    body: Body,
    work: fn(&Server, &[u8]) -> T,
) -> Result<Result<T, tokio::task::JoinError>, Response> {
    let body = read_body(s, body).await?;
    let Some(permit) = s.admission.admit(&s.metrics).await else {
        return Err(overloaded());
    };
    s.metrics.in_flight.inc();
    let worker = s.clone();
    let outcome = tokio::task::spawn_blocking(move || work(&worker, &body)).await;
    drop(permit);
    s.metrics.in_flight.dec();
    Ok(outcome)
}

fn overloaded() -> Response {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [(header::RETRY_AFTER, "1")],
        "sift is at its request limit (--max-in-flight, --max-queue); retry\n",
    )
        .into_response()
}

/// `r`, counted by status code.
fn respond(s: &Server, r: Response) -> Response {
    s.metrics
        .requests
        .get_or_create(&CodeLabel {
            code: r.status().as_u16().to_string(),
        })
        .inc();
    r
}

/// A 400 naming what is wrong with the body.
fn bad_request(message: String) -> Response {
    (
        StatusCode::BAD_REQUEST,
        axum::Json(json!({ "error": message })),
    )
        .into_response()
}

async fn cluster_events(State(s): State<Arc<Server>>, body: Body) -> Response {
    if !s.cluster_events {
        // Unauthenticated writes to a state the API server owns: off.
        return (
            StatusCode::FORBIDDEN,
            axum::Json(json!({
                "error": "POST /cluster is off: sift watches the API server (--kubeconfig or \
                          --in-cluster), which is the cluster state, and /cluster has no \
                          authentication; start sift with --allow-cluster-events to accept \
                          events anyway (admit only the scheduler to the port, e.g. with \
                          deploy/'s NetworkPolicy)"
            })),
        )
            .into_response();
    }
    let body = match read_body(&s, body).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let worker = s.clone();
    match tokio::task::spawn_blocking(move || apply_events(&worker, &body)).await {
        Ok(Ok(v)) => (StatusCode::OK, axum::Json(v)).into_response(),
        Ok(Err(message)) => bad_request(message),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")).into_response(),
    }
}

/// Applies informer-style events to the cluster state (on a blocking
/// thread).
fn apply_events(s: &Server, body: &[u8]) -> Result<Value, String> {
    let keep = s.node_objects_read();
    let parsed = parse_cluster_events_keeping(body, keep)?;
    let mut feed = s
        .cluster
        .lock()
        .map_err(|_| "cluster state unavailable".to_string())?;
    let changed = apply_cluster_events(&mut feed.state, parsed);
    Ok(json!({
        "changed": changed,
        "nodes": feed.state.node_count(),
        "pods": feed.state.pod_count(),
    }))
}

async fn readyz(State(s): State<Arc<Server>>) -> Response {
    let profile = s.profile.load();
    if !s.ready.load(Ordering::Relaxed) {
        return (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n").into_response();
    }
    if !profile.unready.is_empty() {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("not ready: {}\n", profile.unready.join("; ")),
        )
            .into_response();
    }
    if profile.generation == 0 || profile.engine.plugins().is_empty() {
        return (StatusCode::SERVICE_UNAVAILABLE, "no plugin loaded\n").into_response();
    }
    if s.watching {
        let Some(informer) = s.informer.get() else {
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                "connecting to the API server\n",
            )
                .into_response();
        };
        if let Some(why) = informer.waiting_for() {
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                format!("not ready: {why}\n"),
            )
                .into_response();
        }
        // Stale state stays ready: kube-scheduler's own cache is as stale
        // while the API server is away, and an extender taken out of the
        // Service would fail every pod for a non-ignorable extender.
        if let Some(failing) = informer.degraded() {
            return (
                StatusCode::OK,
                format!("ok (serving the last state; the watch is failing: {failing})\n"),
            )
                .into_response();
        }
    }
    (StatusCode::OK, "ok\n").into_response()
}

async fn status(State(s): State<Arc<Server>>) -> Response {
    let profile = s.profile.load();
    let reload = s
        .reload_status
        .lock()
        .map(|r| r.clone())
        .unwrap_or_default();
    let cluster = s.cluster.lock().map(|f| {
        json!({
            "nodes": f.state.node_count(),
            "pods": f.state.pod_count(),
            "files": f.files,
            "fileError": f.file_error,
            "fileReloads": f.reloads,
            "requestNodes": f.state.request_node_count(),
        })
    });
    axum::Json(json!({
        "profileGeneration": profile.generation,
        "plugins": profile.plugins,
        "reload": reload,
        "cluster": cluster.unwrap_or(Value::Null),
        "watch": s.informer.get().map(|i| i.status()),
    }))
    .into_response()
}

async fn metrics_text(State(s): State<Arc<Server>>) -> Response {
    let profile = s.profile.load();
    // Only the plugins serving now: unloaded ones drop out of the family.
    s.metrics.plugin_instances.clear();
    for p in profile.engine.plugins() {
        s.metrics
            .plugin_instances
            .get_or_create(&PluginLabel {
                plugin: p.plugin.name().to_string(),
            })
            .set(p.plugin.instances() as i64);
    }
    if let Ok(f) = s.cluster.lock() {
        s.metrics.cluster_nodes.set(f.state.node_count() as i64);
        s.metrics.cluster_pods.set(f.state.pod_count() as i64);
    }
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        s.metrics.encode(),
    )
        .into_response()
}
