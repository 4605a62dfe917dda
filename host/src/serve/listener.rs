//! The accept loop: each connection is a hyper HTTP/1 connection driven
//! by sift (axum only routes its requests), so the header deadline
//! ([`HeaderDeadline`]) and a graceful shutdown with a bound are sift's.

use super::conn::{HeaderDeadline, IDLE_TIMEOUT};
use axum::Router;
use std::time::Duration;

/// Serves HTTP/1 connections until `shutdown` completes, then lets the
/// requests in flight finish for at most `grace`. A request's headers must
/// arrive within `read_timeout` of its first byte ([`HeaderDeadline`]); an
/// idle keep-alive connection is closed after [`IDLE_TIMEOUT`].
pub async fn serve_http(
    listener: tokio::net::TcpListener,
    app: Router,
    shutdown: impl std::future::Future<Output = ()>,
    read_timeout: Duration,
    grace: Duration,
) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        // Out of file descriptors and the like: back off.
                        tracing::warn!("cannot accept a connection: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let service = hyper_util::service::TowerToHyperService::new(app.clone());
                let conn = hyper::server::conn::http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(IDLE_TIMEOUT.max(read_timeout))
                    .serve_connection(
                        TokioIo::new(HeaderDeadline::new(stream, read_timeout)),
                        service,
                    );
                let conn = graceful.watch(conn);
                tokio::spawn(async move {
                    let _ = conn.await;
                });
            }
            _ = &mut shutdown => break,
        }
    }
    drop(listener);
    if tokio::time::timeout(grace, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            "connections still open {} s after the shutdown signal: closing them",
            grace.as_secs_f64()
        );
    }
}
