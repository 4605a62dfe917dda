//! HTTP extenders: the client side of kube-scheduler's extender protocol
//! (its `HTTPExtender`), so that `sift filter`, `sift conformance` and
//! `sift simulate` call the extenders a config lists exactly where
//! kube-scheduler does (see [`crate::engine::extender`]).
//!
//! Requests are what kube-scheduler sends: `{"Pod": <v1 Pod>, "Nodes":
//! <v1 NodeList>, "NodeNames": null}`, or with `nodeCacheCapable` the
//! node names instead of the list, POSTed to `<urlPrefix>/<verb>`. ureq is
//! the blocking client: a cycle waits for its extenders anyway, and it is
//! already the load generator's client.

use crate::config::ExtenderConfig;
use crate::engine::extender::{Extender, ExtenderFilter};
use crate::engine::plugin::Cycle;
use crate::input::extender::{ExtenderFilterResult, HostPriority};
use crate::input::kube::FullObjects;
use anyhow::Result;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

/// How much of a name an extender sent back unasked goes into messages.
const MAX_NAME_IN_MESSAGE: usize = 256;

/// One configured HTTP extender.
pub struct HttpExtender {
    url: String,
    filter_verb: String,
    prioritize_verb: String,
    weight: i64,
    node_cache_capable: bool,
    managed: BTreeSet<String>,
    ignorable: bool,
    /// `maxReplyBytes`; unset, the request's size plus an allowance.
    max_reply: Option<u64>,
    timeout: std::time::Duration,
    agent: ureq::Agent,
}

/// The configured extenders in kube-scheduler's order: as listed, the
/// ignorable ones moved to the end (`buildExtenders`).
pub fn http_extenders(configs: &[ExtenderConfig]) -> Result<Vec<Arc<dyn Extender>>> {
    let mut out: Vec<Arc<dyn Extender>> = Vec::new();
    let mut ignorable: Vec<Arc<dyn Extender>> = Vec::new();
    for c in configs {
        let e = Arc::new(HttpExtender::new(c)?);
        if c.ignorable {
            ignorable.push(e);
        } else {
            out.push(e);
        }
    }
    out.extend(ignorable);
    Ok(out)
}

impl HttpExtender {
    pub fn new(c: &ExtenderConfig) -> Result<HttpExtender> {
        if !c.bind_verb.is_empty() || !c.preempt_verb.is_empty() {
            tracing::warn!(
                extender = %c.url_prefix,
                "bindVerb and preemptVerb are not called: sift assumes pods and preempts by itself"
            );
        }
        let timeout = c.timeout()?;
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(timeout))
            .build()
            .into();
        Ok(HttpExtender {
            url: c.url_prefix.clone(),
            filter_verb: c.filter_verb.clone(),
            prioritize_verb: c.prioritize_verb.clone(),
            weight: c.weight,
            node_cache_capable: c.node_cache_capable,
            managed: c.managed_resources.iter().map(|r| r.name.clone()).collect(),
            ignorable: c.ignorable,
            max_reply: c.max_reply_bytes()?,
            timeout,
            agent,
        })
    }

    /// `ExtenderArgs` as JSON: the pod object, then the node list or names.
    fn args(&self, cycle: &Cycle, nodes: &[Arc<str>]) -> Result<String, String> {
        let pod = cycle.pod.object.as_deref().ok_or_else(|| {
            format!(
                "extender {}: pod {}/{} has no object to send",
                self.url, cycle.pod.namespace, cycle.pod.name
            )
        })?;
        let mut body = format!("{{\"Pod\":{pod},");
        if self.node_cache_capable {
            let names = serde_json::to_string(nodes).map_err(|e| e.to_string())?;
            body.push_str(&format!("\"Nodes\":null,\"NodeNames\":{names}}}"));
        } else {
            body.push_str("\"Nodes\":{\"metadata\":{},\"items\":[");
            for (i, name) in nodes.iter().enumerate() {
                let object = cycle
                    .snapshot
                    .slot_of(name)
                    .and_then(|s| cycle.snapshot.node(s).object.clone())
                    .ok_or_else(|| {
                        format!("extender {}: node {name} has no object to send", self.url)
                    })?;
                if i > 0 {
                    body.push(',');
                }
                body.push_str(&object);
            }
            body.push_str("]},\"NodeNames\":null}");
        }
        Ok(body)
    }

    /// POSTs to `<urlPrefix>/<verb>`; kube-scheduler's `send`.
    fn send(&self, verb: &str, body: String) -> Result<String, String> {
        let url = format!("{}/{verb}", self.url.trim_end_matches('/'));
        let limit = self
            .max_reply
            .unwrap_or(body.len() as u64 + crate::config::extenders::DEFAULT_REPLY_ALLOWANCE);
        let timed_out = |e: &ureq::Error| {
            matches!(e, ureq::Error::Timeout(_)).then(|| {
                format!(
                    "Post {url:?}: extender {} gave no reply within its httpTimeout of {:?}",
                    self.url, self.timeout
                )
            })
        };
        let mut response = self
            .agent
            .post(&url)
            .header("Content-Type", "application/json")
            .send(body)
            .map_err(|e| timed_out(&e).unwrap_or_else(|| format!("Post {url:?}: {e}")))?;
        if response.status() != 200 {
            return Err(format!(
                "failed {verb} with extender at URL {url}, code {}",
                response.status().as_u16()
            ));
        }
        // Node lists of large clusters pass ureq's 10 MB default; a reply
        // past the limit is refused as it streams in, never held whole.
        response
            .body_mut()
            .with_config()
            .limit(limit)
            .read_to_string()
            .map_err(|e| match e {
                ureq::Error::BodyExceedsLimit(_) => format!(
                    "Post {url:?}: the reply is larger than {limit} bytes{}",
                    if self.max_reply.is_some() {
                        " (the extender's maxReplyBytes)"
                    } else {
                        " (the request's size plus 16Mi; set maxReplyBytes to allow more)"
                    }
                ),
                e => {
                    timed_out(&e).unwrap_or_else(|| format!("Post {url:?}: reading the reply: {e}"))
                }
            })
    }
}

impl Extender for HttpExtender {
    fn name(&self) -> &str {
        &self.url
    }

    fn is_ignorable(&self) -> bool {
        self.ignorable
    }

    /// kube-scheduler's `IsInterested`: with managed resources, only pods
    /// whose containers or init containers request or limit one.
    fn is_interested(&self, pod: &sift_sdk::Pod) -> bool {
        if self.managed.is_empty() {
            return true;
        }
        match &pod.object {
            Some(json) => container_resource_names(json)
                .iter()
                .any(|n| self.managed.contains(n)),
            None => pod
                .requests
                .scalar
                .iter()
                .any(|(n, _)| self.managed.contains(n)),
        }
    }

    fn filters(&self) -> bool {
        !self.filter_verb.is_empty()
    }

    fn prioritizes(&self) -> bool {
        !self.prioritize_verb.is_empty()
    }

    fn full_objects(&self) -> FullObjects {
        let calls = self.filters() || self.prioritizes();
        FullObjects {
            pod: calls,
            node: calls && !self.node_cache_capable,
        }
    }

    fn weight(&self) -> i64 {
        self.weight
    }

    /// kube-scheduler's `HTTPExtender.Filter`. A node the reply names that
    /// was not sent is an error (upstream: with `nodeCacheCapable`; sift
    /// also for node lists, as it cannot place a pod on a node it does not
    /// know).
    fn filter(&self, cycle: &Cycle, nodes: &[Arc<str>]) -> Result<ExtenderFilter, String> {
        if self.filter_verb.is_empty() {
            return Ok(ExtenderFilter {
                feasible: nodes.to_vec(),
                ..Default::default()
            });
        }
        let reply = self.send(&self.filter_verb, self.args(cycle, nodes)?)?;
        let result: ExtenderFilterResult = serde_json::from_str(&reply)
            .map_err(|e| format!("extender {}: {} reply: {e}", self.url, self.filter_verb))?;
        if !result.error.is_empty() {
            // The extender's own text, which reaches terminals and logs.
            return Err(crate::text::printable_truncated(&result.error, 4096));
        }
        let sent: HashMap<&str, &Arc<str>> = nodes.iter().map(|n| (&**n, n)).collect();
        let claim = |name: &str| -> Result<Arc<str>, String> {
            sent.get(name).map(|n| Arc::clone(n)).ok_or_else(|| {
                format!(
                    "extender {:?} claims a filtered node {:?} which is not found in the input node list",
                    self.url,
                    crate::text::truncate(name, MAX_NAME_IN_MESSAGE)
                )
            })
        };
        let mut feasible = Vec::new();
        if self.node_cache_capable && result.node_names.is_some() {
            for name in result.node_names.iter().flatten() {
                feasible.push(claim(name)?);
            }
        } else if let Some(list) = &result.nodes {
            for item in &list.items {
                let name = object_name(item.get()).ok_or_else(|| {
                    format!(
                        "extender {}: a node in the reply has no metadata.name",
                        self.url
                    )
                })?;
                feasible.push(claim(&name)?);
            }
        }
        // Reasons are the extender's text: they reach tables and logs.
        let printable = |m: BTreeMap<String, String>| -> BTreeMap<String, String> {
            m.into_iter()
                .map(|(node, why)| (node, crate::text::printable_truncated(&why, 1024)))
                .collect()
        };
        Ok(ExtenderFilter {
            feasible,
            failed: printable(result.failed_nodes),
            failed_and_unresolvable: printable(result.failed_and_unresolvable_nodes),
        })
    }

    fn prioritize(&self, cycle: &Cycle, nodes: &[Arc<str>]) -> Result<Vec<(String, i64)>, String> {
        if self.prioritize_verb.is_empty() {
            return Ok(nodes.iter().map(|n| (n.to_string(), 0)).collect());
        }
        let reply = self.send(&self.prioritize_verb, self.args(cycle, nodes)?)?;
        let list: Vec<HostPriority> = serde_json::from_str(&reply)
            .map_err(|e| format!("extender {}: {} reply: {e}", self.url, self.prioritize_verb))?;
        // The protocol's range; upstream multiplies whatever comes (and
        // wraps on overflow), sift takes a score outside it as the
        // extender's error: no score from it for this pod.
        let max = crate::input::extender::MAX_EXTENDER_PRIORITY;
        if let Some(bad) = list.iter().find(|p| !(0..=max).contains(&p.score)) {
            return Err(format!(
                "extender {}: {} reply: host {:?} has score {}, outside 0..={max} (MaxExtenderPriority)",
                self.url,
                self.prioritize_verb,
                crate::text::truncate(&bad.host, MAX_NAME_IN_MESSAGE),
                bad.score
            ));
        }
        Ok(list.into_iter().map(|p| (p.host, p.score)).collect())
    }
}

/// `metadata.name` of an object's JSON.
fn object_name(json: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Meta {
        name: String,
    }
    #[derive(serde::Deserialize)]
    struct Object {
        metadata: Meta,
    }
    serde_json::from_str::<Object>(json)
        .ok()
        .map(|o| o.metadata.name)
}

/// Resource names in the requests and limits of a pod's containers and
/// init containers (its JSON).
fn container_resource_names(json: &str) -> Vec<String> {
    let Ok(pod) = serde_json::from_str::<serde_json::Value>(json) else {
        return Vec::new();
    };
    let mut names = Vec::new();
    for list in ["containers", "initContainers"] {
        for c in pod["spec"][list].as_array().into_iter().flatten() {
            for kind in ["requests", "limits"] {
                if let Some(m) = c["resources"][kind].as_object() {
                    names.extend(m.keys().cloned());
                }
            }
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interest_follows_managed_resources() {
        let c: ExtenderConfig = serde_saphyr::from_str_with_options(
            "{urlPrefix: 'http://127.0.0.1:1', filterVerb: f, managedResources: [{name: example.com/gpu}]}",
            crate::input::yaml::options(),
        )
        .unwrap();
        let e = HttpExtender::new(&c).unwrap();
        let pod = |json: &str| sift_sdk::Pod {
            object: Some(Arc::from(json)),
            ..Default::default()
        };
        assert!(e.is_interested(&pod(
            r#"{"spec":{"containers":[{"resources":{"limits":{"example.com/gpu":"1"}}}]}}"#
        )));
        assert!(e.is_interested(&pod(
            r#"{"spec":{"initContainers":[{"resources":{"requests":{"example.com/gpu":"1"}}}]}}"#
        )));
        assert!(!e.is_interested(&pod(
            r#"{"spec":{"containers":[{"resources":{"requests":{"cpu":"1"}}}]}}"#
        )));
        let all = HttpExtender::new(&ExtenderConfig {
            url_prefix: "http://127.0.0.1:1".into(),
            ..Default::default()
        })
        .unwrap();
        assert!(all.is_interested(&sift_sdk::Pod::default()));
        assert_eq!(all.full_objects(), FullObjects::default());
        assert_eq!(
            e.full_objects(),
            FullObjects {
                pod: true,
                node: true
            }
        );
    }

    #[test]
    fn ignorable_extenders_go_last() {
        let cfg = |url: &str, ignorable: bool| ExtenderConfig {
            url_prefix: url.into(),
            ignorable,
            ..Default::default()
        };
        let list = http_extenders(&[
            cfg("http://a", true),
            cfg("http://b", false),
            cfg("http://c", true),
            cfg("http://d", false),
        ])
        .unwrap();
        let names: Vec<&str> = list.iter().map(|e| e.name()).collect();
        assert_eq!(names, ["http://b", "http://d", "http://a", "http://c"]);
    }
}
