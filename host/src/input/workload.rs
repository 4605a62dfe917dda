//! Workloads: a time-ordered list of events on pods (a pod arrives, a pod
//! leaves), replayed by simulations over a cluster.
//!
//! The file is NDJSON (one JSON object per line) in the shape of a watch
//! event, as `/cluster` takes them, with an optional time in seconds:
//!
//! ```text
//! {"type":"ADDED","time":0,"object":{"apiVersion":"v1","kind":"Pod",...}}
//! {"type":"DELETED","time":12537496,"object":{"apiVersion":"v1","kind":"Pod","metadata":{...}}}
//! ```
//!
//! Without times, pods arrive in file order and never leave unless a
//! DELETED event says so. With times, every event has one and they never
//! decrease; at equal times the file's order holds (`sift trace` writes
//! departures before arrivals, so capacity freed at an instant is there
//! for pods arriving at it).

use anyhow::{Result, anyhow, bail};
use k8s_openapi::api::core::v1 as k8s;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::Path;

/// What happens to the pod.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum EventType {
    /// The pod arrives: it is queued for scheduling.
    Added,
    /// The pod leaves: whatever it holds is freed.
    Deleted,
}

/// One event of a workload.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Event {
    #[serde(rename = "type")]
    pub kind: EventType,
    /// Seconds from the start of the workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<u64>,
    pub object: k8s::Pod,
}

/// Writes `events` as NDJSON.
pub fn write(path: &Path, events: &[Event]) -> Result<()> {
    let file =
        std::fs::File::create(path).map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    for e in events {
        serde_json::to_writer(&mut out, e)?;
        out.write_all(b"\n")?;
    }
    out.flush()
        .map_err(|e| anyhow!("cannot write {}: {e}", path.display()))
}

/// Reads a workload file; an error names the file, the line and what is
/// wrong.
pub fn read(path: &Path) -> Result<Vec<Event>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow!("cannot read {}: {e}", path.display()))?;
    parse(&text).map_err(|e| anyhow!("{}:{e}", path.display()))
}

/// Parses NDJSON workload text (blank lines are skipped); errors start
/// with the line number.
pub fn parse(text: &str) -> Result<Vec<Event>> {
    let mut events: Vec<Event> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let mut de = serde_json::Deserializer::from_str(line);
        let event: Event = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let at = e.path().to_string();
            if at == "." {
                anyhow!("{n}: not a workload event: {}", e.inner())
            } else {
                anyhow!("{n}: not a workload event: field {at}: {}", e.inner())
            }
        })?;
        de.end()
            .map_err(|e| anyhow!("{n}: text after the event (one event per line): {e}"))?;
        if event
            .object
            .metadata
            .name
            .as_deref()
            .unwrap_or("")
            .is_empty()
        {
            bail!("{n}: the pod has no metadata.name");
        }
        if let Some(prev) = events.last() {
            match (prev.time, event.time) {
                (Some(a), Some(b)) if b < a => {
                    bail!(
                        "{n}: time {b} is before the previous event's {a}: events must be in time order"
                    )
                }
                (Some(_), None) | (None, Some(_)) => {
                    bail!(
                        "{n}: some events have a time and others not: give every event one, or none"
                    )
                }
                _ => {}
            }
        }
        events.push(event);
    }
    Ok(events)
}

#[cfg(test)]
mod tests {
    use super::*;

    const POD: &str =
        r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"}}"#;

    #[test]
    fn events_round_trip_and_bad_lines_are_named() {
        let text = format!(
            "{{\"type\":\"ADDED\",\"time\":1,\"object\":{POD}}}\n\n{{\"type\":\"DELETED\",\"time\":5,\"object\":{POD}}}\n"
        );
        let events = parse(&text).unwrap();
        assert_eq!(events.len(), 2);
        assert_eq!(events[1].kind, EventType::Deleted);
        assert_eq!(events[1].time, Some(5));
        let back: String = events
            .iter()
            .map(|e| serde_json::to_string(e).unwrap() + "\n")
            .collect();
        assert_eq!(parse(&back).unwrap().len(), 2);

        let cases = [
            (
                format!("{{\"type\":\"MODIFIED\",\"object\":{POD}}}"),
                "1: not a workload event: field type",
            ),
            (
                format!(
                    "{{\"type\":\"ADDED\",\"time\":3,\"object\":{POD}}}\n{{\"type\":\"ADDED\",\"time\":2,\"object\":{POD}}}"
                ),
                "2: time 2 is before the previous event's 3",
            ),
            (
                format!(
                    "{{\"type\":\"ADDED\",\"object\":{POD}}}\n{{\"type\":\"ADDED\",\"time\":2,\"object\":{POD}}}"
                ),
                "2: some events have a time and others not",
            ),
            (
                r#"{"type":"ADDED","object":{"kind":"Pod","metadata":{}}}"#.to_string(),
                "1: the pod has no metadata.name",
            ),
            (
                format!("{{\"type\":\"ADDED\",\"when\":1,\"object\":{POD}}}"),
                "1: not a workload event",
            ),
            (
                format!(
                    "{{\"type\":\"ADDED\",\"object\":{POD}}}{{\"type\":\"DELETED\",\"object\":{POD}}}"
                ),
                "1: text after the event",
            ),
        ];
        for (text, expected) in cases {
            let err = format!("{:#}", parse(&text).unwrap_err());
            assert!(err.starts_with(expected), "{err}");
        }
    }
}
