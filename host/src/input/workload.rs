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

use super::kube;
use anyhow::{Result, anyhow, bail};
use k8s_openapi::api::core::v1 as k8s;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::{BufRead, Write};
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

/// Reads a whole workload file; an error names the file, the line and
/// what is wrong. Simulations stream it with [`Events`] instead.
pub fn read(path: &Path) -> Result<Vec<Event>> {
    Events::open(path, Vec::new())?.collect_all()
}

/// Parses NDJSON workload text (blank lines are skipped); errors start
/// with the line number.
pub fn parse(text: &str) -> Result<Vec<Event>> {
    let mut events = Events::new(Vec::new());
    events.file = Some(Lines {
        name: None,
        reader: Box::new(std::io::Cursor::new(text.as_bytes().to_vec())),
        line: 0,
        bytes: 0,
        total: text.len() as u64,
        buf: Vec::new(),
    });
    events.collect_all()
}

/// A workload read as it is replayed: the events given up front (the
/// cluster files' pending pods), then the file's, one line at a time, so
/// memory follows the live pods, not the length of the trace.
///
/// Each line is checked as it is read, its line number in the error:
/// JSON of an event, a named pod, times in order (all or none), and the
/// pod's life: a pod is ADDED once until it is DELETED, and only a pod
/// that is in the workload (or bound in the cluster files) is DELETED.
/// Without that a pod ADDED twice would be bound twice, the first
/// binding's usage never freed.
pub struct Events {
    given: std::collections::VecDeque<Event>,
    file: Option<Lines>,
    peeked: Option<Event>,
    /// Pods in the workload now: the line of their ADDED (0: the cluster
    /// files).
    live: HashMap<String, usize>,
    /// The time of the file's previous event (outer `None`: no event yet).
    last_time: Option<Option<u64>>,
    /// The line of the event [`Events::next`] returned last (0: given).
    line: usize,
    /// Line of the peeked event.
    peeked_line: usize,
    /// A pod whose appearance in the workload is noted (`--explain`).
    watched: Option<(String, bool)>,
}

/// The file being read.
struct Lines {
    /// For messages (`None`: the errors carry only the line).
    name: Option<String>,
    reader: Box<dyn BufRead>,
    line: usize,
    bytes: u64,
    total: u64,
    /// The line being read (reused).
    buf: Vec<u8>,
}

impl Events {
    /// Only `given` (pending pods of the cluster files, in order).
    pub fn new(given: Vec<Event>) -> Events {
        let mut live = HashMap::new();
        for e in &given {
            live.insert(kube::pod_key(&e.object), 0);
        }
        Events {
            given: given.into(),
            file: None,
            peeked: None,
            live,
            last_time: None,
            line: 0,
            peeked_line: 0,
            watched: None,
        }
    }

    /// `given`, then the events of the workload file at `path`.
    pub fn open(path: &Path, given: Vec<Event>) -> Result<Events> {
        let file = std::fs::File::open(path)
            .map_err(|e| anyhow!("cannot read {}: {e}", path.display()))?;
        let total = file.metadata().map(|m| m.len()).unwrap_or(0);
        let mut events = Events::new(given);
        events.file = Some(Lines {
            name: Some(path.display().to_string()),
            reader: Box::new(std::io::BufReader::with_capacity(1 << 16, file)),
            line: 0,
            bytes: 0,
            total,
            buf: Vec::new(),
        });
        Ok(events)
    }

    /// Pods bound in the cluster files: the workload may delete them, and
    /// must not add them again.
    pub fn with_bound<'a>(mut self, keys: impl IntoIterator<Item = &'a str>) -> Events {
        for k in keys {
            self.live.insert(k.to_string(), 0);
        }
        self
    }

    /// Notes whether pod `key` appears in the workload ([`Events::saw`]).
    pub fn watch(&mut self, key: &str) {
        let seen = self.live.contains_key(key);
        self.watched = Some((key.to_string(), seen));
    }

    /// Whether the watched pod appeared so far.
    pub fn saw(&self) -> bool {
        self.watched.as_ref().is_some_and(|(_, seen)| *seen)
    }

    /// The next event, without taking it.
    pub fn peek(&mut self) -> Result<Option<&Event>> {
        if self.peeked.is_none() {
            self.peeked = self.read()?;
        }
        Ok(self.peeked.as_ref())
    }

    /// The next event's time (0 without times), if any is left.
    pub fn peek_time(&mut self) -> Result<Option<u64>> {
        Ok(self.peek()?.map(|e| e.time.unwrap_or(0)))
    }

    /// Takes the next event.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<Event>> {
        let event = match self.peeked.take() {
            Some(e) => Some(e),
            None => self.read()?,
        };
        self.line = self.peeked_line;
        Ok(event)
    }

    /// Where the event [`Events::next`] returned last comes from, for
    /// messages: `file:line`, or the cluster files.
    pub fn origin(&self) -> String {
        match (&self.file, self.line) {
            (Some(Lines { name: Some(n), .. }), line) if line > 0 => format!("{n}:{line}"),
            (_, line) if line > 0 => format!("line {line}"),
            _ => "the cluster files".to_string(),
        }
    }

    /// Bytes of the file read so far, and its size (progress).
    pub fn progress(&self) -> (u64, u64) {
        self.file.as_ref().map_or((0, 0), |f| (f.bytes, f.total))
    }

    /// Every event left (small workloads and tests).
    pub fn collect_all(mut self) -> Result<Vec<Event>> {
        let mut out = Vec::new();
        while let Some(e) = self.next()? {
            out.push(e);
        }
        Ok(out)
    }

    fn read(&mut self) -> Result<Option<Event>> {
        if let Some(e) = self.given.pop_front() {
            self.peeked_line = 0;
            return Ok(Some(e));
        }
        let Some(file) = self.file.as_mut() else {
            return Ok(None);
        };
        let name = file.name.clone();
        match read_line(file, &mut self.live, &mut self.last_time) {
            Ok(Some(event)) => {
                self.peeked_line = file.line;
                if let Some((key, seen)) = &mut self.watched
                    && kube::pod_key(&event.object) == *key
                {
                    *seen = true;
                }
                Ok(Some(event))
            }
            Ok(None) => Ok(None),
            Err(e) => Err(match name {
                Some(n) => anyhow!("{n}:{e}"),
                None => e,
            }),
        }
    }
}

/// The next event of the file, checked; errors start with the line.
fn read_line(
    file: &mut Lines,
    live: &mut HashMap<String, usize>,
    last_time: &mut Option<Option<u64>>,
) -> Result<Option<Event>> {
    let mut buf = std::mem::take(&mut file.buf);
    let event = next_line(file, &mut buf, live, last_time);
    file.buf = buf;
    event
}

fn next_line(
    file: &mut Lines,
    buf: &mut Vec<u8>,
    live: &mut HashMap<String, usize>,
    last_time: &mut Option<Option<u64>>,
) -> Result<Option<Event>> {
    loop {
        buf.clear();
        let read = file
            .reader
            .read_until(b'\n', buf)
            .map_err(|e| anyhow!("{}: cannot read: {e}", file.line + 1))?;
        if read == 0 {
            return Ok(None);
        }
        file.bytes += read as u64;
        file.line += 1;
        let n = file.line;
        let mut bytes = buf.as_slice();
        if n == 1 {
            // A byte order mark some editors write.
            bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
        }
        let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        let line = std::str::from_utf8(bytes).map_err(|e| anyhow!("{n}: not UTF-8 text: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        let event = parse_line(n, line)?;
        match (*last_time, event.time) {
            (Some(Some(a)), Some(b)) if b < a => {
                bail!(
                    "{n}: time {b} is before the previous event's {a}: events must be in time order"
                )
            }
            (Some(Some(_)), None) | (Some(None), Some(_)) => {
                bail!("{n}: some events have a time and others not: give every event one, or none")
            }
            _ => {}
        }
        *last_time = Some(event.time);
        let key = kube::pod_key(&event.object);
        match event.kind {
            EventType::Added => {
                if let Some(first) = live.get(&key) {
                    let first = match first {
                        0 => "in the cluster files".to_string(),
                        l => format!("on line {l}"),
                    };
                    bail!(
                        "{n}: pod {key} is ADDED again (first {first}) without a DELETED between"
                    );
                }
                live.insert(key, n);
            }
            EventType::Deleted => {
                if live.remove(&key).is_none() {
                    bail!(
                        "{n}: pod {key} is DELETED but is not in the workload at that point (no ADDED before it, or DELETED already)"
                    );
                }
            }
        }
        return Ok(Some(event));
    }
}

/// One line's event: JSON of the right shape, a named pod.
fn parse_line(n: usize, line: &str) -> Result<Event> {
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
    Ok(event)
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

    fn added(name: &str, time: u64) -> String {
        format!(
            "{{\"type\":\"ADDED\",\"time\":{time},\"object\":{{\"kind\":\"Pod\",\"metadata\":{{\"name\":\"{name}\",\"namespace\":\"default\"}}}}}}\n"
        )
    }

    fn deleted(name: &str, time: u64) -> String {
        added(name, time).replace("ADDED", "DELETED")
    }

    /// Issue 29 §1: a pod ADDED again without a DELETED between would be
    /// bound twice, its first binding's usage never freed.
    #[test]
    fn a_pod_added_again_before_it_is_deleted_is_refused_with_its_line() {
        let text = added("a", 0) + &added("a", 1) + &deleted("a", 2);
        let err = format!("{:#}", parse(&text).unwrap_err());
        assert_eq!(
            err,
            "2: pod default/a is ADDED again (first on line 1) without a DELETED between"
        );
        // Deleted in between, the name may come back.
        let text = added("a", 0) + &deleted("a", 1) + "\n" + &added("a", 2);
        assert_eq!(parse(&text).unwrap().len(), 3);
        // A pod bound in the cluster files is in the workload from the
        // start: it may leave, not arrive again.
        let mut events = Events::new(Vec::new()).with_bound(["default/a"]);
        events.file = Some(Lines {
            name: Some("w.ndjson".into()),
            reader: Box::new(std::io::Cursor::new(added("a", 3).into_bytes())),
            line: 0,
            bytes: 0,
            total: 0,
            buf: Vec::new(),
        });
        let err = format!("{:#}", events.next().unwrap_err());
        assert_eq!(
            err,
            "w.ndjson:1: pod default/a is ADDED again (first in the cluster files) without a DELETED between"
        );
    }

    /// Issue 29 §14: a DELETED of a pod the workload does not have (yet,
    /// or any more) was ignored silently.
    #[test]
    fn a_deleted_pod_that_is_not_in_the_workload_is_refused_with_its_line() {
        for (text, line) in [
            (deleted("b", 0) + &added("b", 1), 1),
            (added("b", 0) + &deleted("b", 1) + &deleted("b", 2), 3),
        ] {
            let err = format!("{:#}", parse(&text).unwrap_err());
            assert!(
                err.contains(": pod default/b is DELETED but is not in the workload at that point"),
                "{err}"
            );
            assert!(err.starts_with(&format!("{line}: ")), "{err}");
        }
    }

    /// Issue 29 §14: editors on some systems start a UTF-8 file with a
    /// byte order mark.
    #[test]
    fn a_byte_order_mark_at_the_start_is_accepted() {
        let text = format!("\u{feff}{}{}", added("a", 0), deleted("a", 1));
        assert_eq!(parse(&text).unwrap().len(), 2);
        // Only at the start: elsewhere it is not JSON.
        let text = format!("{}\u{feff}{}", added("a", 0), deleted("a", 1));
        assert!(format!("{:#}", parse(&text).unwrap_err()).starts_with("2: not a workload event"));
    }

    /// Issue 29 §5: the file is read as the replay goes, so a trace far
    /// larger than memory can be replayed; an error on a later line
    /// surfaces when that line is reached, with its number and the file.
    #[test]
    fn the_file_is_read_one_event_at_a_time() {
        let dir = std::env::temp_dir().join(format!("sift-workload-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("w.ndjson");
        std::fs::write(&path, added("a", 0) + &added("b", 4) + "{oops\n").unwrap();
        let given = Event {
            kind: EventType::Added,
            time: None,
            object: serde_json::from_str(r#"{"metadata":{"name":"p","namespace":"default"}}"#)
                .unwrap(),
        };
        let mut events = Events::open(&path, vec![given]).unwrap();
        assert_eq!(events.next().unwrap().unwrap().time, None);
        assert_eq!(events.origin(), "the cluster files");
        assert_eq!(events.peek_time().unwrap(), Some(0));
        assert_eq!(events.next().unwrap().unwrap().time, Some(0));
        assert_eq!(events.origin(), format!("{}:1", path.display()));
        assert_eq!(events.next().unwrap().unwrap().time, Some(4));
        let (done, total) = events.progress();
        assert!(done < total, "{done} of {total} bytes");
        let err = format!("{:#}", events.next().unwrap_err());
        assert!(
            err.starts_with(&format!("{}:3: not a workload event", path.display())),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
