//! A layer on the API client that reports each watch the API server
//! accepted. kube-rs's watcher resumes a watch after an error without a
//! word, so a kind in which nothing changes would look broken until its
//! next event; the server's `200` to the watch request is the proof that
//! it works again.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// Called with the resource's plural ("pods") of each accepted watch.
pub type OnAccepted = Arc<dyn Fn(&str) + Send + Sync>;

/// The [`tower::Layer`] for `kube::client::ClientBuilder::with_layer`.
#[derive(Clone)]
pub struct AcceptedWatches(pub OnAccepted);

impl<S> tower::Layer<S> for AcceptedWatches {
    type Service = Reporting<S>;
    fn layer(&self, inner: S) -> Reporting<S> {
        Reporting {
            inner,
            on_accepted: self.0.clone(),
        }
    }
}

#[derive(Clone)]
pub struct Reporting<S> {
    inner: S,
    on_accepted: OnAccepted,
}

impl<S, Req, B> tower::Service<http::Request<Req>> for Reporting<S>
where
    S: tower::Service<http::Request<Req>, Response = http::Response<B>>,
    S::Future: Send + 'static,
    S::Response: Send,
    S::Error: Send,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<Req>) -> Self::Future {
        let watched = watched_resource(req.uri()).map(str::to_string);
        let on_accepted = self.on_accepted.clone();
        let response = self.inner.call(req);
        Box::pin(async move {
            let response = response.await;
            if let (Some(resource), Ok(r)) = (watched, &response)
                && r.status().is_success()
            {
                on_accepted(&resource);
            }
            response
        })
    }
}

/// The resource a watch request is for: the last path segment of a
/// request with `watch=true` (`/apis/storage.k8s.io/v1/csinodes?watch=true`
/// is "csinodes"); `None` for any other request.
fn watched_resource(uri: &http::Uri) -> Option<&str> {
    let watch = uri
        .query()?
        .split('&')
        .any(|p| p == "watch=true" || p == "watch=1");
    if !watch {
        return None;
    }
    uri.path().rsplit('/').next().filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_watch_requests_name_their_resource() {
        let r = |u: &str| watched_resource(&u.parse().unwrap()).map(str::to_string);
        assert_eq!(
            r("/api/v1/pods?&watch=true&timeoutSeconds=57&resourceVersion=9").as_deref(),
            Some("pods")
        );
        assert_eq!(
            r("/apis/storage.k8s.io/v1/csinodes?watch=true").as_deref(),
            Some("csinodes")
        );
        assert_eq!(r("/api/v1/pods?limit=500"), None);
        assert_eq!(r("/api/v1/pods?watchful=true"), None);
        assert_eq!(r("/api/v1/pods"), None);
    }
}
