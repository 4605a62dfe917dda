//! The extender's prioritize verb: the configured score plugins over the
//! nodes kube-scheduler sends (those its filters and sift's left), their
//! weights applied, the total mapped onto the extender's 0..=10
//! (`extenderv1.MaxExtenderPriority`), which kube-scheduler multiplies by
//! the extender's weight and by 100 / 10 again. So a team that keeps
//! kube-scheduler can still score with Wasm plugins.

use super::filter::{Candidates, candidates, request_nodes};
use super::requests::{FilterRequest, parse_filter_request};
use super::server::Server;
use crate::engine::plugin::Cycle;
use crate::input::extender::HostPriority;
use sift_sdk::MAX_NODE_SCORE;
use std::sync::Arc;

/// The highest score an extender may give (`MaxExtenderPriority`).
pub const MAX_EXTENDER_PRIORITY: i64 = 10;

/// Answers one prioritize request (on a blocking thread): one entry per
/// node named, in the request's order; a node sift does not know scores 0.
/// `Err` is a request or plugin error: kube-scheduler logs it and scores
/// without sift, as it does for any extender's prioritize error.
pub fn answer(server: &Server, body: &[u8]) -> Result<Vec<HostPriority>, String> {
    let FilterRequest {
        mut pod,
        pod_json,
        nodes,
    } = parse_filter_request(body)?;
    let profile = server.profile.load_full();
    if !profile.unready.is_empty() {
        return Err(format!("sift is not ready: {}", profile.unready.join("; ")));
    }
    let Some(source) = &profile.source else {
        return Err("no score plugins in this profile".into());
    };
    let scorers = source
        .catalog
        .select_scorers(&source.config)
        .map_err(|e| format!("{e:#}"))?;
    if scorers.iter().any(|s| s.plugin.full_objects().pod) {
        pod.object = Some(Arc::from(pod_json.get()));
    }
    let (names, models, objects) = request_nodes(nodes, false);
    let Candidates {
        snapshot, slots, ..
    } = candidates(server, &names, models, objects.is_some())?;
    let mut totals = vec![0i64; slots.len()];
    let mut weights = 0i64;
    if !slots.is_empty() {
        let cycle = Cycle::new(pod, snapshot.clone());
        for s in &scorers {
            weights += s.weight;
            let Some(scores) = s.plugin.score(&cycle, &slots).map_err(|e| e.to_string())? else {
                continue;
            };
            for (t, v) in totals.iter_mut().zip(scores) {
                *t = t.saturating_add(v.saturating_mul(s.weight));
            }
        }
    }
    let by_slot: std::collections::HashMap<u32, i64> = slots
        .iter()
        .zip(&totals)
        .map(|(slot, total)| (*slot, to_extender_range(*total, weights)))
        .collect();
    Ok(names
        .into_iter()
        .map(|host| {
            let score = snapshot
                .slot_of(&host)
                .and_then(|slot| by_slot.get(&slot).copied())
                .unwrap_or(0);
            HostPriority { host, score }
        })
        .collect())
}

/// A weighted total (at most `MAX_NODE_SCORE × Σweights`) as 0..=10,
/// rounded down: the weighted mean of the plugins' 0..=100 scores, tenfold
/// coarser.
fn to_extender_range(total: i64, weights: i64) -> i64 {
    if weights <= 0 {
        return 0;
    }
    let scale = (MAX_NODE_SCORE / MAX_EXTENDER_PRIORITY).saturating_mul(weights);
    (total / scale).clamp(0, MAX_EXTENDER_PRIORITY)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weighted_totals_map_onto_zero_to_ten() {
        // One plugin of weight 1 scoring 100, 99, 50, 9, 0.
        for (total, want) in [(100, 10), (99, 9), (50, 5), (9, 0), (0, 0)] {
            assert_eq!(to_extender_range(total, 1), want, "{total}");
        }
        // Weights 3 and 1: 100 and 60 -> 360 of 400 -> 9.
        assert_eq!(to_extender_range(360, 4), 9);
        assert_eq!(to_extender_range(400, 4), 10);
        assert_eq!(to_extender_range(500, 0), 0);
    }
}
