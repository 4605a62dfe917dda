//! One filter request through the engine, on a blocking thread: the body
//! parsed, the snapshot to filter (the cluster's node table, or the
//! request's own for `Nodes`), the candidate slots, one cycle over them,
//! and the extender's reply.

use super::extender::{ExtenderFilterResult, filter_result};
use super::reload::Profile;
use super::requests::{FilterRequest, RequestNodes, parse_filter_request};
use super::server::Server;
use crate::cluster::Snapshot;
use serde_json::value::RawValue;
use sift_sdk::{Node, Pod};
use std::collections::HashSet;
use std::sync::Arc;

/// A `Nodes` request's objects by name, echoed back for the feasible ones.
type NodeObjects = Vec<(String, Box<RawValue>)>;

/// The nodes a request names, resolved in the snapshot it is filtered on.
pub(super) struct Candidates {
    pub snapshot: Arc<Snapshot>,
    pub slots: Vec<u32>,
    /// Names the snapshot does not have: failed, with a message saying so.
    pub unknown: Vec<String>,
}

/// Answers one filter request (on a blocking thread).
pub fn answer(server: &Server, body: &[u8]) -> Result<ExtenderFilterResult, String> {
    let FilterRequest {
        mut pod,
        pod_json,
        nodes,
    } = parse_filter_request(body)?;
    let profile = server.profile.load_full();
    let full = profile.engine.full_objects();
    if full.pod {
        pod.object = Some(Arc::from(pod_json.get()));
    }
    if !profile.unready.is_empty() {
        // Answering without a plugin the config enables would be a
        // wrong answer: kube-scheduler gets an extender error instead
        // (which an `ignorable` extender skips).
        return Ok(ExtenderFilterResult {
            error: format!("sift is not ready: {}", profile.unready.join("; ")),
            ..Default::default()
        });
    }
    let (names, models, objects) = request_nodes(nodes, full.node);
    // A plugin that reads whole node objects was just loaded: apply
    // the cluster files again, with them.
    if full.node && server.cluster.lock().is_ok_and(|f| !f.keep_node_objects) {
        server.reload_cluster(false);
    }
    let candidates = candidates(server, &names, models, objects.is_some())?;
    let mut result = evaluate(&profile, pod, &candidates, objects);
    // A reply with Error carries nothing else (kube-scheduler reads
    // nothing else from it).
    if result.error.is_empty() {
        for n in candidates.unknown {
            result
                .failed_nodes
                .insert(n, "node is not in sift's cluster state".into());
        }
    }
    Ok(result)
}

/// The names a request sends and, for a `Nodes` request, its node models
/// and objects. The objects are echoed back for the feasible names; the
/// models (a name sent twice: the first object counts) become the
/// request's node table.
pub(super) fn request_nodes(
    nodes: RequestNodes,
    keep_objects: bool,
) -> (Vec<String>, Option<Vec<Node>>, Option<NodeObjects>) {
    match nodes {
        RequestNodes::Objects(list) => {
            let mut models = Vec::with_capacity(list.len());
            let mut objects = Vec::with_capacity(list.len());
            let mut seen = HashSet::new();
            for (mut model, raw) in list {
                if keep_objects {
                    model.object = Some(Arc::from(raw.get()));
                }
                objects.push((model.name.clone(), raw));
                if seen.insert(model.name.clone()) {
                    models.push(model);
                }
            }
            let names = objects.iter().map(|(n, _)| n.clone()).collect();
            (names, Some(models), Some(objects))
        }
        RequestNodes::Names(names) => (names, None, None),
    }
}

/// The snapshot to filter on (the request's node table when it sent
/// `models`, else the cluster's) and the slots of `names`, each once.
pub(super) fn candidates(
    server: &Server,
    names: &[String],
    models: Option<Vec<Node>>,
    sent_objects: bool,
) -> Result<Candidates, String> {
    let mut feed = server
        .cluster
        .lock()
        .map_err(|_| "cluster state unavailable".to_string())?;
    let snapshot = match models {
        Some(models) => feed.state.request_snapshot(models),
        None => feed.state.snapshot(),
    };
    let mut seen = HashSet::new();
    let mut slots = Vec::with_capacity(names.len());
    let mut unknown = Vec::new();
    for n in names {
        if !seen.insert(n.as_str()) {
            continue;
        }
        match snapshot.slot_of(n) {
            Some(slot) => slots.push(slot),
            None => unknown.push(n.clone()),
        }
    }
    if server.watching && sent_objects {
        // The watch is the cluster state: a request's own nodes
        // are not kept beyond it.
        feed.state.forget_request_nodes();
    }
    Ok(Candidates {
        snapshot,
        slots,
        unknown,
    })
}

/// One cycle of `profile`'s plugins over the candidates, as the reply.
fn evaluate(
    profile: &Profile,
    pod: Pod,
    candidates: &Candidates,
    objects: Option<NodeObjects>,
) -> ExtenderFilterResult {
    if candidates.slots.is_empty() {
        let mut r = ExtenderFilterResult::default();
        if objects.is_some() {
            r.nodes = Some(Default::default());
        } else {
            r.node_names = Some(Vec::new());
        }
        return r;
    }
    let outcome = profile.engine.filter_candidates(
        profile.engine.plugins(),
        &candidates.snapshot,
        pod,
        &candidates.slots,
    );
    for e in &outcome.ignored_errors {
        tracing::warn!("ignored plugin error: {e}");
    }
    if let Some(e) = &outcome.error {
        tracing::warn!("filter request failed: {e}");
    }
    filter_result(&outcome, objects)
}
