//! Groups a workload's pods into gangs for batch mode: Volcano PodGroups
//! and Queues, and each pod's `scheduling.k8s.io/group-name` annotation.
//! Traces such as openb record pods, not jobs, so the grouping is a
//! documented, deterministic rule:
//!
//! - pods are taken in arrival order (their ADDED events);
//! - pods of one *shape* (the same requests, annotations of the GPU need,
//!   and queue) can be workers of one job; each shape has one open gang;
//! - the g-th gang opened wants `min + g mod (max - min + 1)` members
//!   (2, 3, ..., 8, 2, ... for 2-8); a pod joins its shape's open gang,
//!   which closes when full; gangs still open at the end keep the members
//!   they have;
//! - a gang's `minMember` is its size (all or nothing), its queue is the
//!   pods' `queue_label` value in lower case (else `default`), and it is
//!   created when its first member is;
//! - every queue gets weight 1.
//!
//! A job's pods are created together: every member arrives when the
//! gang's first member does (the events are re-sorted: by time, departures
//! first, then as they were) and keeps its own departure time. Left at
//! their own arrival times, members of the openb trace's long-lived pods
//! would depart before the last one arrived, and such gangs could never
//! run.

use super::kube::pod_key;
use super::volcano::{DEFAULT_QUEUE, GROUP_NAME_ANNOTATION};
use super::workload::{Event, EventType};
use anyhow::{Result, bail};
use k8s_openapi::api::core::v1 as k8s;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// What grouping produced: the PodGroups and Queues (as objects for a
/// cluster file) and counts for the user.
pub struct Gangs {
    pub objects: Vec<Value>,
    pub groups: usize,
    pub pods: usize,
}

/// Parses `MIN-MAX` (or `N`), 1 <= MIN <= MAX.
pub fn parse_range(s: &str) -> Result<(usize, usize)> {
    let (a, b) = s.split_once('-').unwrap_or((s, s));
    let parse = |t: &str| -> Result<usize> {
        t.trim()
            .parse::<usize>()
            .map_err(|_| anyhow::anyhow!("gang sizes {s:?}: expected MIN-MAX, e.g. 2-8"))
    };
    let (min, max) = (parse(a)?, parse(b)?);
    if min == 0 || min > max {
        bail!("gang sizes {s:?}: need 1 <= MIN <= MAX");
    }
    Ok((min, max))
}

fn shape(pod: &k8s::Pod, queue: &str) -> String {
    let requests: Vec<String> = pod
        .spec
        .iter()
        .flat_map(|s| &s.containers)
        .map(|c| {
            c.resources
                .as_ref()
                .and_then(|r| r.requests.as_ref())
                .map(|r| {
                    r.iter()
                        .map(|(k, v)| format!("{k}={}", v.0))
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .unwrap_or_default()
        })
        .collect();
    let annotations = pod
        .metadata
        .annotations
        .as_ref()
        .map(|a| format!("{a:?}"))
        .unwrap_or_default();
    format!("{queue}|{}|{annotations}", requests.join(";"))
}

/// Groups `events`' pods in place (annotating them, the DELETED events
/// too) and returns the PodGroups and Queues.
pub fn group(events: &mut [Event], min: usize, max: usize, queue_label: &str) -> Gangs {
    let (gangs, member_of) = assign(events, min, max, queue_label);
    gather(events, &member_of);
    Gangs {
        objects: objects(&gangs),
        groups: gangs.len(),
        pods: member_of.len(),
    }
}

/// A gang: its name, namespace, queue, member count and creation time.
type Gang = (String, String, String, usize, Option<Value>);

/// Assigns each ADDED pod, in arrival order, to its shape's open gang
/// (opening one if there is none): the gangs, and each pod's
/// (namespace/pod) gang name.
fn assign(
    events: &[Event],
    min: usize,
    max: usize,
    queue_label: &str,
) -> (Vec<Gang>, BTreeMap<String, String>) {
    let sizes = max - min + 1;
    let mut open: BTreeMap<String, (String, usize, usize)> = BTreeMap::new();
    // namespace/pod -> gang name
    let mut member_of: BTreeMap<String, String> = BTreeMap::new();
    let mut gangs: Vec<Gang> = Vec::new();
    for e in events.iter() {
        if e.kind != EventType::Added {
            continue;
        }
        let pod = &e.object;
        let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
        let key = pod_key(pod);
        if member_of.contains_key(&key) {
            continue;
        }
        let queue = pod
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(queue_label))
            .filter(|q| !q.is_empty())
            .map(|q| q.to_lowercase())
            .unwrap_or_else(|| DEFAULT_QUEUE.to_string());
        let s = format!("{ns}|{}", shape(pod, &queue));
        let (name, idx) = match open.get_mut(&s) {
            Some((name, idx, left)) => {
                *left -= 1;
                let out = (name.clone(), *idx);
                if *left == 0 {
                    open.remove(&s);
                }
                out
            }
            None => {
                let g = gangs.len();
                let name = format!("gang-{g}");
                let want = min + g % sizes;
                let created = pod
                    .metadata
                    .creation_timestamp
                    .as_ref()
                    .map(|t| json!(t.0.to_string()));
                gangs.push((name.clone(), ns.to_string(), queue.clone(), 0, created));
                if want > 1 {
                    open.insert(s, (name.clone(), g, want - 1));
                }
                (name, g)
            }
        };
        gangs[idx].3 += 1;
        member_of.insert(key, name);
    }
    (gangs, member_of)
}

/// Moves every member's arrival to its gang's first member's, annotates
/// members' events with their gang, and re-sorts the events.
fn gather(events: &mut [Event], member_of: &BTreeMap<String, String>) {
    // The first member's arrival, by gang.
    let mut arrival: BTreeMap<&str, Option<u64>> = BTreeMap::new();
    for e in events.iter() {
        if e.kind != EventType::Added {
            continue;
        }
        if let Some(g) = member_of.get(&pod_key(&e.object)) {
            arrival.entry(g.as_str()).or_insert(e.time);
        }
    }
    let arrival: BTreeMap<String, Option<u64>> = arrival
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    for e in events.iter_mut() {
        let key = pod_key(&e.object);
        let pod = &mut e.object;
        if let Some(g) = member_of.get(&key) {
            if e.kind == EventType::Added {
                e.time = arrival.get(g).copied().flatten().or(e.time);
            }
            pod.metadata
                .annotations
                .get_or_insert_with(Default::default)
                .insert(GROUP_NAME_ANNOTATION.to_string(), g.clone());
        }
    }
    // Stable: equal keys keep their order.
    events.sort_by_key(|e| (e.time.unwrap_or(0), e.kind == EventType::Added));
}

/// The Queues (weight 1, by name) and PodGroups (in order of creation)
/// of `gangs`, as objects for a cluster file.
fn objects(gangs: &[Gang]) -> Vec<Value> {
    let mut queues: Vec<&str> = gangs.iter().map(|g| g.2.as_str()).collect();
    queues.sort();
    queues.dedup();
    let mut objects: Vec<Value> = queues
        .iter()
        .map(|q| {
            json!({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                   "metadata": {"name": q}, "spec": {"weight": 1}})
        })
        .collect();
    for (name, ns, queue, members, created) in gangs {
        let mut metadata = json!({"name": name, "namespace": ns});
        if let Some(c) = created {
            metadata["creationTimestamp"] = c.clone();
        }
        objects.push(
            json!({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": metadata,
            "spec": {"minMember": members, "queue": queue},
            "status": {"phase": "Pending"}}),
        );
    }
    objects
}

#[cfg(test)]
mod tests {
    use super::*;

    fn added(name: &str, cpu: &str, qos: &str) -> Event {
        let pod: k8s::Pod = serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "default", "labels": {"q": qos}},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
        }))
        .unwrap();
        Event {
            kind: EventType::Added,
            time: Some(0),
            object: pod,
        }
    }

    #[test]
    fn same_shape_pods_fill_gangs_of_cycling_sizes() {
        let mut events: Vec<Event> = (0..7).map(|i| added(&format!("a{i}"), "1", "LS")).collect();
        events.push(added("b0", "2", "LS"));
        events.push(added("c0", "1", "BE"));
        let g = group(&mut events, 2, 3, "q");
        let of = |i: usize| {
            events[i].object.metadata.annotations.as_ref().unwrap()[GROUP_NAME_ANNOTATION].clone()
        };
        // a0,a1 -> gang-0 (2); a2..a4 -> gang-1 (3); a5,a6 -> gang-2 (2).
        assert_eq!(
            (0..7).map(of).collect::<Vec<_>>(),
            [
                "gang-0", "gang-0", "gang-1", "gang-1", "gang-1", "gang-2", "gang-2"
            ]
        );
        // Another shape, another queue: gangs of their own, left open.
        assert_eq!(of(7), "gang-3");
        assert_eq!(of(8), "gang-4");
        assert_eq!(g.groups, 5);
        let min_member = |name: &str| {
            g.objects
                .iter()
                .find(|o| o["metadata"]["name"] == name)
                .unwrap()["spec"]["minMember"]
                .clone()
        };
        assert_eq!(min_member("gang-1"), 3);
        assert_eq!(min_member("gang-3"), 1);
        assert_eq!(
            g.objects
                .iter()
                .filter(|o| o["kind"] == "Queue")
                .map(|o| o["metadata"]["name"].as_str().unwrap())
                .collect::<Vec<_>>(),
            ["be", "ls"]
        );
    }

    #[test]
    fn members_arrive_with_the_first_and_keep_their_departures() {
        let mut events = vec![added("a0", "1", "LS"), added("a1", "1", "LS")];
        events[0].time = Some(10);
        events[1].time = Some(50);
        let mut gone = events[0].clone();
        gone.kind = EventType::Deleted;
        gone.time = Some(30);
        events.insert(1, gone);
        group(&mut events, 2, 2, "q");
        let seen: Vec<(EventType, Option<u64>, String)> = events
            .iter()
            .map(|e| (e.kind, e.time, e.object.metadata.name.clone().unwrap()))
            .collect();
        assert_eq!(
            seen,
            [
                (EventType::Added, Some(10), "a0".to_string()),
                (EventType::Added, Some(10), "a1".to_string()),
                (EventType::Deleted, Some(30), "a0".to_string()),
            ]
        );
    }

    #[test]
    fn ranges_parse_and_reject_nonsense() {
        assert_eq!(parse_range("2-8").unwrap(), (2, 8));
        assert_eq!(parse_range("4").unwrap(), (4, 4));
        assert!(parse_range("0-3").is_err());
        assert!(parse_range("5-2").is_err());
        assert!(parse_range("x").is_err());
    }
}
