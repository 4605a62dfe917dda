//! A fake Kubernetes API server for tests: core v1 `nodes`, `pods` and
//! `namespaces`, cluster-wide, speaking the real list/watch protocol over
//! HTTP/1.1 (std only: a `TcpListener` and a thread per connection), and
//! scripted by the test.
//!
//! - Objects carry a global, monotonically increasing
//!   `metadata.resourceVersion`; [`FakeApiServer::add`],
//!   [`FakeApiServer::modify`], [`FakeApiServer::update`] and
//!   [`FakeApiServer::delete`] bump it, keep the change in a history, and
//!   push it to every open watch of that resource.
//! - Lists (`GET /api/v1/<resource>`) answer with `Content-Length`, honour
//!   `fieldSelector` (`field=value`, `field==value`, `field!=value`, comma
//!   separated: what `status.phase!=Succeeded,status.phase!=Failed` needs)
//!   and `limit`/`continue` paging: a continued list is served from the
//!   snapshot its first page was read at, and answers `410 Expired` once
//!   that resourceVersion is compacted. As on a real API server, list items
//!   carry no `kind`/`apiVersion`.
//! - Watches (`?watch=true&resourceVersion=N`) answer 200 with a chunked
//!   body of one JSON event per line. The changes after `N` are replayed
//!   from the history first; a watch from a resourceVersion older than the
//!   history ([`FakeApiServer::compact`]) gets the `ERROR` event with a
//!   `410 Expired` Status and ends, as a real API server answers it. With a
//!   field selector, an update that makes an object stop matching is sent
//!   as `DELETED` and one that makes it start matching as `ADDED`. A watch
//!   from `0` or no resourceVersion starts with `ADDED` for every object.
//!   Watches end normally (the terminating chunk) at `timeoutSeconds`.
//! - Bookmarks (`allowWatchBookmarks=true`) are sent on
//!   [`FakeApiServer::bookmark_all`] and every
//!   [`FakeApiServer::set_bookmark_interval`].
//! - Faults: [`FakeApiServer::expire_watches`] (410 on every open watch),
//!   [`FakeApiServer::end_watches`] (a normal end, as at `timeoutSeconds`),
//!   [`FakeApiServer::drop_connections`] (every connection closed
//!   mid-stream, without the terminating chunk),
//!   [`FakeApiServer::set_down`] (connections are closed as soon as they
//!   are accepted, open ones are dropped), [`FakeApiServer::set_failing`]
//!   (requests answered with an error Status),
//!   [`FakeApiServer::set_watches_gone`] (every watch answered with 410,
//!   as an ERROR event or as the HTTP status), and black holes that never
//!   answer and never close: [`FakeApiServer::set_hang_lists`] (lists) and
//!   [`FakeApiServer::set_silent_watches`] (watches, open ones too).
//! - Every request is logged ([`FakeApiServer::requests`]), and every
//!   event written to a watch ([`FakeApiServer::sent`]).

use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The resources the fake serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Resource {
    Nodes,
    Pods,
    Namespaces,
}

impl Resource {
    pub const ALL: [Resource; 3] = [Resource::Nodes, Resource::Pods, Resource::Namespaces];

    /// The URL path segment: "nodes".
    pub fn plural(self) -> &'static str {
        match self {
            Resource::Nodes => "nodes",
            Resource::Pods => "pods",
            Resource::Namespaces => "namespaces",
        }
    }

    /// The object kind: "Node".
    pub fn kind(self) -> &'static str {
        match self {
            Resource::Nodes => "Node",
            Resource::Pods => "Pod",
            Resource::Namespaces => "Namespace",
        }
    }

    fn namespaced(self) -> bool {
        self == Resource::Pods
    }

    /// "Node", "node", "nodes" (any case).
    pub fn parse(s: &str) -> Option<Resource> {
        let s = s.to_ascii_lowercase();
        Resource::ALL
            .into_iter()
            .find(|r| s == r.plural() || s == r.kind().to_ascii_lowercase())
    }

    fn of(s: &str) -> Resource {
        Resource::parse(s).unwrap_or_else(|| panic!("the fake API server has no kind {s:?}"))
    }
}

/// How [`FakeApiServer::set_watches_gone`] answers every watch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gone {
    /// 200, then the ERROR event with a `410 Expired` Status, then the end
    /// of the response: what an API server answers a watch from a
    /// compacted resourceVersion.
    Event,
    /// The HTTP status 410 with a Status body, as a proxy may answer.
    Status,
}

/// One request the fake answered (or refused).
#[derive(Clone, Debug)]
pub struct RequestRecord {
    pub method: String,
    pub path: String,
    /// The raw query string (still URL-encoded).
    pub raw_query: String,
    /// Decoded query parameters, in order.
    pub query: Vec<(String, String)>,
    pub resource: Option<Resource>,
    pub watch: bool,
    pub status: u16,
    pub at: Instant,
}

impl RequestRecord {
    /// A decoded query parameter.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn is_list(&self, r: Resource) -> bool {
        self.resource == Some(r) && !self.watch
    }

    pub fn is_watch(&self, r: Resource) -> bool {
        self.resource == Some(r) && self.watch
    }
}

impl fmt::Display for RequestRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.method, self.path)?;
        if !self.raw_query.is_empty() {
            write!(f, "?{}", self.raw_query)?;
        }
        write!(f, " -> {}", self.status)
    }
}

/// One event written to a watch stream.
#[derive(Clone, Debug)]
pub struct SentEvent {
    pub resource: Resource,
    /// ADDED, MODIFIED, DELETED, BOOKMARK, ERROR.
    pub kind: String,
    /// "namespace/name" for pods, "name" otherwise; empty for BOOKMARK and
    /// ERROR.
    pub key: String,
    pub resource_version: String,
    /// The watch (its id counts watches from 1).
    pub watch: u64,
}

/// A change to one object, as the history keeps it.
#[derive(Clone, Debug)]
struct Change {
    rv: u64,
    resource: Resource,
    old: Option<Value>,
    new: Option<Value>,
}

/// A parsed field selector: terms that must all hold.
#[derive(Clone, Debug, Default)]
struct Selector(Vec<(String, bool, String)>);

impl Selector {
    fn parse(s: &str) -> Result<Selector, String> {
        let mut terms = Vec::new();
        for term in s.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let (field, equal, value) = if let Some((f, v)) = term.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = term.split_once("==") {
                (f, true, v)
            } else if let Some((f, v)) = term.split_once('=') {
                (f, true, v)
            } else {
                return Err(format!("invalid field selector term {term:?}"));
            };
            terms.push((field.trim().to_string(), equal, value.trim().to_string()));
        }
        Ok(Selector(terms))
    }

    fn matches(&self, obj: &Value) -> bool {
        self.0.iter().all(|(field, equal, value)| {
            let mut v = obj;
            for part in field.split('.') {
                v = &v[part];
            }
            let actual = match v {
                Value::Null => String::new(),
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (actual == *value) == *equal
        })
    }
}

/// What a watch thread is told.
enum Msg {
    Event {
        kind: &'static str,
        key: String,
        rv: u64,
        line: String,
    },
    Bookmark(u64),
    /// Send this ERROR line, then end the response normally.
    Expire(String),
    /// End the response normally (as at timeoutSeconds).
    End,
    /// Close the connection without ending the response.
    Drop,
    /// Write nothing more, and keep the connection open.
    Silence,
}

struct WatchReg {
    id: u64,
    resource: Resource,
    selector: Selector,
    bookmarks: bool,
    from: u64,
    tx: Sender<Msg>,
}

/// A list being paged: the items still to send, read at `rv`.
struct Continue {
    rv: u64,
    resource: Resource,
    rest: Vec<Value>,
}

#[derive(Default)]
struct State {
    rv: u64,
    objects: BTreeMap<Resource, BTreeMap<String, Value>>,
    history: Vec<Change>,
    /// Watches from a resourceVersion below this get 410.
    horizon: u64,
    watches: Vec<WatchReg>,
    conns: HashMap<u64, TcpStream>,
    next_id: u64,
    continues: HashMap<String, Continue>,
    requests: Vec<RequestRecord>,
    sent: Vec<SentEvent>,
    /// Per resource (None: every request) an HTTP status to fail with.
    failing: Vec<(Option<Resource>, u16)>,
    bookmark_interval: Option<Duration>,
    watch_timeout: Option<Duration>,
    page_size: Option<usize>,
    uids: u64,
    watches_gone: Option<Gone>,
    hang_lists: bool,
    silent_watches: bool,
}

impl State {
    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Stores `obj` (new, or replacing `old`) at the next resourceVersion,
    /// recorded and pushed to the watches; returns that resourceVersion.
    fn store(
        &mut self,
        resource: Resource,
        key: String,
        mut obj: Value,
        old: Option<Value>,
    ) -> u64 {
        self.rv += 1;
        let rv = self.rv;
        set_rv(&mut obj, rv);
        self.objects
            .entry(resource)
            .or_default()
            .insert(key, obj.clone());
        self.record(Change {
            rv,
            resource,
            old,
            new: Some(obj),
        });
        rv
    }

    /// Records a change and pushes it to the open watches it concerns.
    fn record(&mut self, change: Change) {
        for w in self
            .watches
            .iter()
            .filter(|w| w.resource == change.resource)
        {
            if let Some(msg) = event_for(&change, &w.selector) {
                let _ = w.tx.send(msg);
            }
        }
        self.history.push(change);
    }

    fn failing(&self, r: Option<Resource>) -> Option<u16> {
        self.failing
            .iter()
            .rev()
            .find(|(res, _)| res.is_none() || (r.is_some() && *res == r))
            .map(|(_, code)| *code)
    }
}

struct Shared {
    state: Mutex<State>,
    down: AtomicBool,
    stopped: AtomicBool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The fake API server; stops (closing every connection) on drop.
pub struct FakeApiServer {
    shared: Arc<Shared>,
    addr: SocketAddr,
    accept: Option<JoinHandle<()>>,
}

fn key_of(resource: Resource, obj: &Value) -> String {
    let name = obj["metadata"]["name"].as_str().unwrap_or_default();
    if resource.namespaced() {
        let ns = obj["metadata"]["namespace"].as_str().unwrap_or_default();
        format!("{ns}/{name}")
    } else {
        name.to_string()
    }
}

fn set_rv(obj: &mut Value, rv: u64) {
    obj["metadata"]["resourceVersion"] = json!(rv.to_string());
}

fn event_line(kind: &str, object: &Value) -> String {
    let mut line = json!({"type": kind, "object": object}).to_string();
    line.push('\n');
    line
}

/// The event a watch with `selector` gets for `change`, if any.
fn event_for(change: &Change, selector: &Selector) -> Option<Msg> {
    let old = change.old.as_ref().filter(|o| selector.matches(o));
    let new = change.new.as_ref().filter(|o| selector.matches(o));
    let (kind, object) = match (old, new) {
        (None, Some(new)) => ("ADDED", new.clone()),
        (Some(_), Some(new)) => ("MODIFIED", new.clone()),
        (Some(old), None) => {
            // As the API server: the last state the watcher could see,
            // at the resourceVersion of the change.
            let mut o = old.clone();
            set_rv(&mut o, change.rv);
            ("DELETED", o)
        }
        (None, None) => return None,
    };
    Some(Msg::Event {
        kind,
        key: key_of(change.resource, &object),
        rv: change.rv,
        line: event_line(kind, &object),
    })
}

fn status_json(code: u16, reason: &str, message: &str) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
           "message": message, "reason": reason, "code": code})
}

fn reason_phrase(code: u16) -> &'static str {
    match code {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        410 => "Gone",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Error",
    }
}

fn status_reason(code: u16) -> &'static str {
    match code {
        400 => "BadRequest",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "NotFound",
        405 => "MethodNotAllowed",
        410 => "Expired",
        429 => "TooManyRequests",
        503 => "ServiceUnavailable",
        _ => "InternalError",
    }
}

/// Decodes `%XX` and `+` in a query component.
pub fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn parse_query(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (percent_decode(k), percent_decode(v)),
            None => (percent_decode(p), String::new()),
        })
        .collect()
}

/// A request as read from the connection.
struct Request {
    method: String,
    target: String,
    close: bool,
}

/// Reads one request (headers, and a body if one is announced); `None`
/// when the client closed the connection.
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut line = String::new();
    // Blank lines between requests are allowed (RFC 9112 2.2).
    loop {
        line.clear();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if !line.trim().is_empty() {
            break;
        }
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let target = parts.next()?.to_string();
    let version = parts.next().unwrap_or("HTTP/1.1").to_string();
    let mut close = version == "HTTP/1.0";
    let mut length = 0usize;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((name, value)) = h.split_once(':') {
            let (name, value) = (name.trim().to_ascii_lowercase(), value.trim());
            if name == "content-length" {
                length = value.parse().ok()?;
            } else if name == "connection" {
                close = value.eq_ignore_ascii_case("close");
            }
        }
    }
    if length > 0 {
        let mut body = vec![0; length];
        reader.read_exact(&mut body).ok()?;
    }
    Some(Request {
        method,
        target,
        close,
    })
}

/// A black hole: answers nothing and keeps the connection open until the
/// fake stops.
fn hang(shared: &Shared) -> bool {
    while !shared.stopped.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn write_response(out: &mut TcpStream, code: u16, body: &Value, close: bool) -> bool {
    let body = body.to_string();
    let head = format!(
        "HTTP/1.1 {code} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{}\r\n",
        reason_phrase(code),
        body.len(),
        if close { "Connection: close\r\n" } else { "" }
    );
    out.write_all(head.as_bytes())
        .and_then(|_| out.write_all(body.as_bytes()))
        .and_then(|_| out.flush())
        .is_ok()
        && !close
}

fn write_chunk(out: &mut TcpStream, data: &str) -> std::io::Result<()> {
    out.write_all(format!("{:x}\r\n{data}\r\n", data.len()).as_bytes())?;
    out.flush()
}

fn end_chunks(out: &mut TcpStream) -> std::io::Result<()> {
    out.write_all(b"0\r\n\r\n")?;
    out.flush()
}

impl FakeApiServer {
    /// Listens on a free loopback port, with no objects.
    pub fn start() -> FakeApiServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("fake API server binds");
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            down: AtomicBool::new(false),
            stopped: AtomicBool::new(false),
        });
        let accept_shared = shared.clone();
        let accept = std::thread::Builder::new()
            .name("fake-apiserver".into())
            .spawn(move || {
                for stream in listener.incoming() {
                    if accept_shared.stopped.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    if accept_shared.down.load(Ordering::SeqCst) {
                        let _ = stream.shutdown(Shutdown::Both);
                        continue;
                    }
                    let _ = stream.set_nodelay(true);
                    let Ok(clone) = stream.try_clone() else {
                        continue;
                    };
                    let id = {
                        let mut st = accept_shared.lock();
                        let id = st.id();
                        st.conns.insert(id, clone);
                        id
                    };
                    let conn_shared = accept_shared.clone();
                    let _ = std::thread::Builder::new()
                        .name(format!("fake-apiserver-{id}"))
                        .spawn(move || serve_connection(conn_shared, stream, id));
                }
            })
            .expect("fake API server thread");
        FakeApiServer {
            shared,
            addr,
            accept: Some(accept),
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Writes a kubeconfig for this server: context, cluster and user
    /// `fake` (no credentials), current-context `fake`.
    pub fn kubeconfig(&self, path: &Path) {
        write_kubeconfig(path, &[("fake", &self.url())], "fake");
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.shared.lock()
    }

    /// Adds an object (its `kind` says which resource); returns its new
    /// resourceVersion. `apiVersion`, a pod's namespace ("default"),
    /// `uid` and `creationTimestamp` are filled in when missing.
    pub fn add(&self, mut obj: Value) -> u64 {
        let resource = Resource::of(obj["kind"].as_str().expect("object has a kind"));
        assert!(
            obj["metadata"]["name"]
                .as_str()
                .is_some_and(|n| !n.is_empty()),
            "object has no metadata.name: {obj}"
        );
        obj["apiVersion"] = json!("v1");
        let mut st = self.lock();
        if resource.namespaced() && obj["metadata"]["namespace"].as_str().is_none() {
            obj["metadata"]["namespace"] = json!("default");
        }
        if obj["metadata"]["uid"].as_str().is_none() {
            st.uids += 1;
            obj["metadata"]["uid"] = json!(format!("00000000-0000-0000-0000-{:012}", st.uids));
        }
        if obj["metadata"]["creationTimestamp"].as_str().is_none() {
            obj["metadata"]["creationTimestamp"] = json!("2025-01-01T00:00:00Z");
        }
        let key = key_of(resource, &obj);
        assert!(
            !st.objects.entry(resource).or_default().contains_key(&key),
            "{} {key} already exists on the fake API server",
            resource.kind()
        );
        st.store(resource, key, obj, None)
    }

    /// Replaces an existing object (found by kind, namespace and name);
    /// returns its new resourceVersion.
    pub fn modify(&self, mut obj: Value) -> u64 {
        let resource = Resource::of(obj["kind"].as_str().expect("object has a kind"));
        obj["apiVersion"] = json!("v1");
        if resource.namespaced() && obj["metadata"]["namespace"].as_str().is_none() {
            obj["metadata"]["namespace"] = json!("default");
        }
        let key = key_of(resource, &obj);
        let mut st = self.lock();
        let old = st
            .objects
            .entry(resource)
            .or_default()
            .get(&key)
            .cloned()
            .unwrap_or_else(|| panic!("no {} {key} to modify", resource.kind()));
        for field in ["uid", "creationTimestamp"] {
            if obj["metadata"][field].is_null() {
                obj["metadata"][field] = old["metadata"][field].clone();
            }
        }
        st.store(resource, key, obj, Some(old))
    }

    /// Changes an existing object with `f`; returns its new resourceVersion.
    pub fn update(
        &self,
        kind: &str,
        namespace: &str,
        name: &str,
        f: impl FnOnce(&mut Value),
    ) -> u64 {
        let mut obj = self
            .get(kind, namespace, name)
            .unwrap_or_else(|| panic!("no {kind} {namespace}/{name} to update"));
        f(&mut obj);
        self.modify(obj)
    }

    /// Deletes an object (`namespace` is ignored for cluster-scoped kinds);
    /// returns the resourceVersion of the deletion.
    pub fn delete(&self, kind: &str, namespace: &str, name: &str) -> u64 {
        let resource = Resource::of(kind);
        let key = if resource.namespaced() {
            format!("{namespace}/{name}")
        } else {
            name.to_string()
        };
        let mut st = self.lock();
        let old = st
            .objects
            .entry(resource)
            .or_default()
            .remove(&key)
            .unwrap_or_else(|| panic!("no {} {key} to delete", resource.kind()));
        st.rv += 1;
        let rv = st.rv;
        st.record(Change {
            rv,
            resource,
            old: Some(old),
            new: None,
        });
        rv
    }

    /// An object as the server holds it.
    pub fn get(&self, kind: &str, namespace: &str, name: &str) -> Option<Value> {
        let resource = Resource::of(kind);
        let key = if resource.namespaced() {
            format!("{namespace}/{name}")
        } else {
            name.to_string()
        };
        self.lock()
            .objects
            .get(&resource)
            .and_then(|m| m.get(&key))
            .cloned()
    }

    /// The keys of every object of a kind ("namespace/name" for pods).
    pub fn keys(&self, kind: &str) -> Vec<String> {
        let resource = Resource::of(kind);
        self.lock()
            .objects
            .get(&resource)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The latest resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.lock().rv
    }

    /// Forgets the history: a watch, or a list continued, from a
    /// resourceVersion before now gets 410.
    pub fn compact(&self) {
        let mut st = self.lock();
        st.horizon = st.rv;
        st.history.clear();
    }

    /// Sends the `410 Expired` ERROR event on every open watch and ends
    /// them (as a real API server does when a watcher falls too far
    /// behind): the client must relist. Returns how many there were.
    pub fn expire_watches(&self) -> usize {
        let mut st = self.lock();
        let rv = st.rv;
        let watches = std::mem::take(&mut st.watches);
        for w in &watches {
            let status = status_json(
                410,
                "Expired",
                &format!("too old resource version: {} ({rv})", w.from),
            );
            let _ = w.tx.send(Msg::Expire(event_line("ERROR", &status)));
        }
        watches.len()
    }

    /// Ends every open watch normally (as at timeoutSeconds): the client
    /// resumes from the last resourceVersion it saw.
    pub fn end_watches(&self) -> usize {
        let mut st = self.lock();
        let watches = std::mem::take(&mut st.watches);
        for w in &watches {
            let _ = w.tx.send(Msg::End);
        }
        watches.len()
    }

    /// Closes every connection (watches mid-stream, without the
    /// terminating chunk; idle keep-alive ones too). Returns how many
    /// watches were open.
    pub fn drop_connections(&self) -> usize {
        let mut st = self.lock();
        let watches = std::mem::take(&mut st.watches);
        for w in &watches {
            let _ = w.tx.send(Msg::Drop);
        }
        for conn in st.conns.values() {
            let _ = conn.shutdown(Shutdown::Both);
        }
        watches.len()
    }

    /// Sends a BOOKMARK at the latest resourceVersion on every open watch
    /// that allowed bookmarks; returns how many.
    pub fn bookmark_all(&self) -> usize {
        let st = self.lock();
        let mut n = 0;
        for w in st.watches.iter().filter(|w| w.bookmarks) {
            if w.tx.send(Msg::Bookmark(st.rv)).is_ok() {
                n += 1;
            }
        }
        n
    }

    /// Down: every open connection is closed, and new ones are closed as
    /// soon as they are accepted (the client sees the connection closed
    /// before any response). Up again: served as before.
    pub fn set_down(&self, down: bool) {
        self.shared.down.store(down, Ordering::SeqCst);
        if down {
            self.drop_connections();
        }
    }

    /// Answers requests for `resource` (None: every request) with `code`
    /// and a Status body, or (None) normally again.
    pub fn set_failing(&self, resource: Option<&str>, code: Option<u16>) {
        let r = resource.map(Resource::of);
        let mut st = self.lock();
        st.failing.retain(|(res, _)| *res != r);
        if let Some(code) = code {
            st.failing.push((r, code));
        }
    }

    /// Answers every watch (from now on) with 410 Gone, as `how` says,
    /// or (None) normally again. Lists are answered normally.
    pub fn set_watches_gone(&self, how: Option<Gone>) {
        self.lock().watches_gone = how;
    }

    /// On: list requests are read (and logged, with status 0) but never
    /// answered, their connections left open. Off: new lists are answered
    /// again; those already hanging stay unanswered (a black hole does
    /// not come back), until the fake stops.
    pub fn set_hang_lists(&self, on: bool) {
        self.lock().hang_lists = on;
    }

    /// On: open watches, and those started from now on (after the
    /// response head), send nothing more (no event, bookmark or end) and
    /// keep their connections open, as a half-open connection or a
    /// black-holed load balancer; they no longer count as open. Off: new
    /// watches are served again; silenced ones stay silent until the fake
    /// stops. Returns how many open watches were silenced.
    pub fn set_silent_watches(&self, on: bool) -> usize {
        let mut st = self.lock();
        st.silent_watches = on;
        if !on {
            return 0;
        }
        let watches = std::mem::take(&mut st.watches);
        for w in &watches {
            let _ = w.tx.send(Msg::Silence);
        }
        watches.len()
    }

    /// Bookmarks every `interval` on watches that allowed them.
    pub fn set_bookmark_interval(&self, interval: Option<Duration>) {
        self.lock().bookmark_interval = interval;
    }

    /// Watches end (normally) after at most `limit`, whatever
    /// timeoutSeconds asked. Applies to watches started from now on.
    pub fn set_watch_timeout(&self, limit: Option<Duration>) {
        self.lock().watch_timeout = limit;
    }

    /// List pages hold at most `n` items, whatever `limit` asked (a server
    /// may return fewer items than the limit, with a continue token).
    pub fn set_page_size(&self, n: Option<usize>) {
        self.lock().page_size = n.map(|n| n.max(1));
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.lock().requests.clone()
    }

    /// List requests for `kind` so far (each page counts).
    pub fn lists(&self, kind: &str) -> usize {
        let r = Resource::of(kind);
        self.lock().requests.iter().filter(|q| q.is_list(r)).count()
    }

    /// List requests for `kind` that started a list (no continue token).
    pub fn list_starts(&self, kind: &str) -> usize {
        let r = Resource::of(kind);
        self.lock()
            .requests
            .iter()
            .filter(|q| q.is_list(r) && q.param("continue").is_none())
            .count()
    }

    /// Watch requests for `kind` so far.
    pub fn watches(&self, kind: &str) -> usize {
        let r = Resource::of(kind);
        self.lock()
            .requests
            .iter()
            .filter(|q| q.is_watch(r))
            .count()
    }

    /// Watches open now (of `kind`, or all).
    pub fn open_watches(&self, kind: Option<&str>) -> usize {
        let r = kind.map(Resource::of);
        self.lock()
            .watches
            .iter()
            .filter(|w| r.is_none_or(|r| w.resource == r))
            .count()
    }

    /// Waits until a watch of every resource is open; false on timeout.
    pub fn wait_watching(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            let all = {
                let st = self.lock();
                Resource::ALL
                    .iter()
                    .all(|r| st.watches.iter().any(|w| w.resource == *r))
            };
            if all {
                return true;
            }
            if Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Every event written to a watch so far.
    pub fn sent(&self) -> Vec<SentEvent> {
        self.lock().sent.clone()
    }

    /// The request log, one request a line (for failure messages).
    pub fn request_log(&self) -> String {
        let st = self.lock();
        let start = st.requests.first().map(|r| r.at);
        st.requests
            .iter()
            .map(|r| {
                let t = start
                    .map(|s| r.at.duration_since(s).as_secs_f64())
                    .unwrap_or(0.0);
                format!("{t:8.3}s {r}\n")
            })
            .collect()
    }
}

impl Drop for FakeApiServer {
    fn drop(&mut self) {
        self.shared.stopped.store(true, Ordering::SeqCst);
        self.drop_connections();
        // Wake the accept loop.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
    }
}

/// Writes a kubeconfig with one context (and a cluster and a user of the
/// same name, no credentials) per `(name, server)`.
pub fn write_kubeconfig(path: &Path, contexts: &[(&str, &str)], current: &str) {
    let mut y = String::from("apiVersion: v1\nkind: Config\nclusters:\n");
    for (name, server) in contexts {
        y.push_str(&format!(
            "- name: {name}\n  cluster:\n    server: {server}\n"
        ));
    }
    y.push_str("users:\n");
    for (name, _) in contexts {
        y.push_str(&format!("- name: {name}\n  user: {{}}\n"));
    }
    y.push_str("contexts:\n");
    for (name, _) in contexts {
        y.push_str(&format!(
            "- name: {name}\n  context:\n    cluster: {name}\n    user: {name}\n"
        ));
    }
    y.push_str(&format!("current-context: {current}\n"));
    std::fs::write(path, y).expect("kubeconfig written");
}

fn serve_connection(shared: Arc<Shared>, stream: TcpStream, conn: u64) {
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut out = stream;
    while let Some(req) = read_request(&mut reader) {
        if shared.down.load(Ordering::SeqCst) || shared.stopped.load(Ordering::SeqCst) {
            break;
        }
        if !handle(&shared, req, &mut out) {
            break;
        }
    }
    let _ = out.shutdown(Shutdown::Both);
    shared.lock().conns.remove(&conn);
}

/// Answers one request; false when the connection must close.
fn handle(shared: &Shared, req: Request, out: &mut TcpStream) -> bool {
    let (path, raw_query) = match req.target.split_once('?') {
        Some((p, q)) => (p.to_string(), q.to_string()),
        None => (req.target.clone(), String::new()),
    };
    let query = parse_query(&raw_query);
    let param = |name: &str| {
        query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let resource = path
        .strip_prefix("/api/v1/")
        .and_then(|r| Resource::ALL.into_iter().find(|x| x.plural() == r));
    let watch = matches!(param("watch").as_deref(), Some("true" | "1"));
    let mut record = RequestRecord {
        method: req.method.clone(),
        path: path.clone(),
        raw_query: raw_query.clone(),
        query: query.clone(),
        resource,
        watch,
        status: 0,
        at: Instant::now(),
    };
    let log = |record: RequestRecord| shared.lock().requests.push(record);
    let fail = |mut record: RequestRecord, out: &mut TcpStream, code: u16, message: &str| {
        record.status = code;
        log(record);
        write_response(
            out,
            code,
            &status_json(code, status_reason(code), message),
            req.close,
        )
    };
    let Some(resource) = resource else {
        return fail(
            record,
            out,
            404,
            &format!(
                "the fake API server serves GET /api/v1/{{nodes,pods,namespaces}}, not {path}"
            ),
        );
    };
    if req.method != "GET" {
        return fail(record, out, 405, &format!("{} is not served", req.method));
    }
    let failing = shared.lock().failing(Some(resource));
    if let Some(code) = failing {
        return fail(
            record,
            out,
            code,
            &format!(
                "the fake API server fails {} with {code} (test control)",
                resource.plural()
            ),
        );
    }
    if watch && shared.lock().watches_gone == Some(Gone::Status) {
        return fail(
            record,
            out,
            410,
            "too old resource version (the fake API server answers every watch with 410: \
             test control)",
        );
    }
    if !watch && shared.lock().hang_lists {
        log(record);
        return hang(shared);
    }
    if param("labelSelector").is_some_and(|s| !s.is_empty()) {
        return fail(
            record,
            out,
            400,
            "the fake API server does not do labelSelector",
        );
    }
    let selector = match Selector::parse(&param("fieldSelector").unwrap_or_default()) {
        Ok(s) => s,
        Err(e) => return fail(record, out, 400, &e),
    };
    if !watch {
        let (code, body) = list(
            shared,
            resource,
            &selector,
            param("limit"),
            param("continue"),
        );
        record.status = code;
        log(record);
        return write_response(out, code, &body, req.close);
    }
    let from = match param("resourceVersion").as_deref() {
        None | Some("") | Some("0") => None,
        Some(v) => match v.parse::<u64>() {
            Ok(v) => Some(v),
            Err(_) => {
                return fail(record, out, 400, &format!("invalid resourceVersion {v:?}"));
            }
        },
    };
    let timeout = param("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .map(Duration::from_secs)
        .unwrap_or(Duration::from_secs(1800));
    let bookmarks = matches!(param("allowWatchBookmarks").as_deref(), Some("true" | "1"));
    record.status = 200;
    watch_stream(
        shared, resource, selector, from, timeout, bookmarks, record, out,
    )
}

fn list(
    shared: &Shared,
    resource: Resource,
    selector: &Selector,
    limit: Option<String>,
    token: Option<String>,
) -> (u16, Value) {
    let mut st = shared.lock();
    let limit = limit
        .and_then(|l| l.parse::<usize>().ok())
        .filter(|l| *l > 0);
    let page = match (limit, st.page_size) {
        (Some(l), Some(p)) => Some(l.min(p)),
        (l, p) => l.or(p),
    };
    let (rv, mut items) = match token.filter(|t| !t.is_empty()) {
        Some(t) => match st.continues.remove(&t) {
            Some(c) if c.resource != resource => {
                return (
                    400,
                    status_json(400, "BadRequest", "continue token of another resource"),
                );
            }
            Some(c) if c.rv >= st.horizon => (c.rv, c.rest),
            Some(_) => {
                return (
                    410,
                    status_json(
                        410,
                        "Expired",
                        "The provided continue parameter is too old to display a consistent \
                         list result. You can start a new list without the continue parameter.",
                    ),
                );
            }
            None => {
                return (
                    400,
                    status_json(400, "BadRequest", &format!("invalid continue token {t:?}")),
                );
            }
        },
        None => {
            let items = st
                .objects
                .get(&resource)
                .map(|m| {
                    m.values()
                        .filter(|o| selector.matches(o))
                        .map(|o| {
                            // List items carry no kind/apiVersion.
                            let mut o = o.clone();
                            if let Some(map) = o.as_object_mut() {
                                map.remove("kind");
                                map.remove("apiVersion");
                            }
                            o
                        })
                        .collect()
                })
                .unwrap_or_default();
            (st.rv, items)
        }
    };
    let mut metadata = json!({"resourceVersion": rv.to_string()});
    if let Some(page) = page.filter(|p| items.len() > *p) {
        let rest = items.split_off(page);
        let id = st.id();
        let t = format!("fake-continue-{id}-rv{rv}");
        metadata["continue"] = json!(t);
        metadata["remainingItemCount"] = json!(rest.len());
        st.continues.insert(t, Continue { rv, resource, rest });
    }
    (
        200,
        json!({"kind": format!("{}List", resource.kind()), "apiVersion": "v1",
               "metadata": metadata, "items": items}),
    )
}

#[allow(clippy::too_many_arguments)]
fn watch_stream(
    shared: &Shared,
    resource: Resource,
    selector: Selector,
    from: Option<u64>,
    timeout: Duration,
    bookmarks: bool,
    record: RequestRecord,
    out: &mut TcpStream,
) -> bool {
    let (tx, rx) = mpsc::channel();
    let (id, first, too_old, interval, timeout) = {
        let mut st = shared.lock();
        st.requests.push(record);
        let id = st.id();
        let timeout = st.watch_timeout.map_or(timeout, |t| t.min(timeout));
        let interval = st.bookmark_interval.filter(|_| bookmarks);
        let mut first: Vec<Msg> = Vec::new();
        let mut too_old = None;
        if st.silent_watches {
            first.push(Msg::Silence);
        } else if st.watches_gone == Some(Gone::Event) {
            let status = status_json(
                410,
                "Expired",
                &format!(
                    "too old resource version: {} ({}) (the fake API server expires every \
                     watch: test control)",
                    from.unwrap_or(0),
                    st.rv
                ),
            );
            too_old = Some(event_line("ERROR", &status));
        }
        match from {
            _ if too_old.is_some() || st.silent_watches => {}
            Some(n) if n < st.horizon => {
                let status = status_json(
                    410,
                    "Expired",
                    &format!("too old resource version: {n} ({})", st.horizon),
                );
                too_old = Some(event_line("ERROR", &status));
            }
            Some(n) => {
                first.extend(
                    st.history
                        .iter()
                        .filter(|c| c.resource == resource && c.rv > n)
                        .filter_map(|c| event_for(c, &selector)),
                );
            }
            None => {
                // Every object, as ADDED, then what changes.
                let objects = st.objects.get(&resource).cloned().unwrap_or_default();
                first.extend(objects.values().filter_map(|o| {
                    event_for(
                        &Change {
                            rv: o["metadata"]["resourceVersion"]
                                .as_str()
                                .and_then(|v| v.parse().ok())
                                .unwrap_or(0),
                            resource,
                            old: None,
                            new: Some(o.clone()),
                        },
                        &selector,
                    )
                }));
            }
        }
        if too_old.is_none() && !st.silent_watches {
            let from = from.unwrap_or(st.rv);
            st.watches.push(WatchReg {
                id,
                resource,
                selector,
                bookmarks,
                from,
                tx,
            });
        }
        (id, first, too_old, interval, timeout)
    };
    let keep = stream_events(
        shared, resource, id, out, first, too_old, rx, interval, timeout,
    );
    shared.lock().watches.retain(|w| w.id != id);
    keep
}

#[allow(clippy::too_many_arguments)]
fn stream_events(
    shared: &Shared,
    resource: Resource,
    id: u64,
    out: &mut TcpStream,
    first: Vec<Msg>,
    too_old: Option<String>,
    rx: Receiver<Msg>,
    interval: Option<Duration>,
    timeout: Duration,
) -> bool {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\
                Transfer-Encoding: chunked\r\n\r\n";
    if out.write_all(head.as_bytes()).is_err() {
        return false;
    }
    let sent = |kind: &str, key: String, rv: String| {
        shared.lock().sent.push(SentEvent {
            resource,
            kind: kind.to_string(),
            key,
            resource_version: rv,
            watch: id,
        });
    };
    if let Some(line) = too_old {
        let ok = write_chunk(out, &line).is_ok();
        sent("ERROR", String::new(), String::new());
        return ok && end_chunks(out).is_ok();
    }
    let deadline = Instant::now() + timeout;
    let mut next_bookmark = interval.map(|i| Instant::now() + i);
    let mut pending = first.into_iter();
    loop {
        let msg = match pending.next() {
            Some(m) => m,
            None => {
                let now = Instant::now();
                if now >= deadline {
                    return end_chunks(out).is_ok();
                }
                let wake = next_bookmark.map_or(deadline, |b| b.min(deadline));
                match rx.recv_timeout(wake.saturating_duration_since(now)) {
                    Ok(m) => m,
                    Err(RecvTimeoutError::Timeout) => {
                        if next_bookmark.is_some_and(|b| Instant::now() >= b) {
                            next_bookmark = interval.map(|i| Instant::now() + i);
                            let rv = shared.lock().rv;
                            Msg::Bookmark(rv)
                        } else {
                            continue;
                        }
                    }
                    Err(RecvTimeoutError::Disconnected) => {
                        // Unregistered without a message: end normally.
                        return end_chunks(out).is_ok();
                    }
                }
            }
        };
        match msg {
            Msg::Event {
                kind,
                key,
                rv,
                line,
            } => {
                if write_chunk(out, &line).is_err() {
                    return false;
                }
                sent(kind, key, rv.to_string());
            }
            Msg::Bookmark(rv) => {
                let bookmark = json!({"kind": resource.kind(), "apiVersion": "v1",
                                      "metadata": {"resourceVersion": rv.to_string()}});
                if write_chunk(out, &event_line("BOOKMARK", &bookmark)).is_err() {
                    return false;
                }
                sent("BOOKMARK", String::new(), rv.to_string());
            }
            Msg::Expire(line) => {
                let ok = write_chunk(out, &line).is_ok();
                sent("ERROR", String::new(), String::new());
                return ok && end_chunks(out).is_ok();
            }
            Msg::End => return end_chunks(out).is_ok(),
            Msg::Silence => return hang(shared),
            Msg::Drop => {
                let _ = out.shutdown(Shutdown::Both);
                return false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str) -> Value {
        json!({"kind": "Node", "metadata": {"name": name},
               "status": {"allocatable": {"cpu": "4", "pods": "110"}}})
    }

    fn pod(name: &str, phase: &str) -> Value {
        json!({"kind": "Pod", "metadata": {"name": name, "namespace": "ns"},
               "spec": {"containers": [{"name": "c"}]}, "status": {"phase": phase}})
    }

    fn get(url: &str) -> (u16, Value) {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let mut r = agent.get(url).call().expect("GET answered");
        let code = r.status().as_u16();
        (
            code,
            serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap(),
        )
    }

    /// A raw watch: the response head, then one event a call.
    struct RawWatch {
        reader: BufReader<TcpStream>,
        head: String,
    }

    impl RawWatch {
        fn open(api: &FakeApiServer, target: &str) -> RawWatch {
            let mut s = TcpStream::connect(api.addr()).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            write!(
                s,
                "GET {target} HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\n\r\n"
            )
            .unwrap();
            let mut reader = BufReader::new(s);
            let mut head = String::new();
            loop {
                let mut l = String::new();
                reader.read_line(&mut l).unwrap();
                if l == "\r\n" || l.is_empty() {
                    break;
                }
                head.push_str(&l);
            }
            RawWatch { reader, head }
        }

        /// The next chunk's data; None at the terminating chunk, Err when
        /// the connection ended without it.
        fn next(&mut self) -> Result<Option<String>, String> {
            let mut size = String::new();
            if self
                .reader
                .read_line(&mut size)
                .map_err(|e| e.to_string())?
                == 0
            {
                return Err("connection closed mid-stream".into());
            }
            let n = usize::from_str_radix(size.trim(), 16).map_err(|e| format!("{size:?}: {e}"))?;
            let mut data = vec![0; n + 2];
            self.reader
                .read_exact(&mut data)
                .map_err(|e| e.to_string())?;
            if n == 0 {
                return Ok(None);
            }
            Ok(Some(String::from_utf8(data[..n].to_vec()).unwrap()))
        }

        fn event(&mut self) -> Value {
            let line = self.next().unwrap().expect("an event");
            assert!(line.ends_with('\n'), "{line:?}");
            serde_json::from_str(&line).unwrap()
        }
    }

    #[test]
    fn lists_page_and_select() {
        let api = FakeApiServer::start();
        for i in 0..5 {
            api.add(node(&format!("n{i}")));
        }
        api.add(pod("run", "Running"));
        api.add(pod("done", "Succeeded"));
        api.add(pod("bad", "Failed"));
        let base = api.url();
        let (code, l) = get(&format!("{base}/api/v1/nodes?limit=2"));
        assert_eq!(code, 200);
        assert_eq!(l["kind"], "NodeList");
        assert_eq!(l["metadata"]["resourceVersion"], "8");
        assert_eq!(l["items"].as_array().unwrap().len(), 2);
        assert!(
            l["items"][0].get("kind").is_none(),
            "list items carry no kind"
        );
        assert_eq!(l["items"][0]["metadata"]["resourceVersion"], "1");
        let mut names = vec![];
        let mut page = l;
        // A change between pages is not in the paged list.
        api.add(node("late"));
        loop {
            for i in page["items"].as_array().unwrap() {
                names.push(i["metadata"]["name"].as_str().unwrap().to_string());
            }
            let Some(t) = page["metadata"]["continue"].as_str() else {
                break;
            };
            assert_eq!(page["metadata"]["resourceVersion"], "8");
            let (code, next) = get(&format!("{base}/api/v1/nodes?limit=2&continue={t}"));
            assert_eq!(code, 200, "{next}");
            page = next;
        }
        assert_eq!(names, ["n0", "n1", "n2", "n3", "n4"]);
        let sel = "status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed";
        let (_, l) = get(&format!("{base}/api/v1/pods?fieldSelector={sel}"));
        assert_eq!(l["items"].as_array().unwrap().len(), 1);
        assert_eq!(l["items"][0]["metadata"]["name"], "run");
        let log = api.requests();
        assert_eq!(
            log.last().unwrap().param("fieldSelector"),
            Some("status.phase!=Succeeded,status.phase!=Failed")
        );
        assert_eq!(api.lists("pods"), 1);
        assert_eq!(api.list_starts("nodes"), 1);
        // A continue token read before a compaction is expired after it.
        let (_, l) = get(&format!("{base}/api/v1/nodes?limit=2"));
        let t = l["metadata"]["continue"].as_str().unwrap().to_string();
        api.add(node("later"));
        api.compact();
        let (code, s) = get(&format!("{base}/api/v1/nodes?limit=2&continue={t}"));
        assert_eq!((code, &s["reason"]), (410, &json!("Expired")), "{s}");
        // Failures on demand.
        api.set_failing(Some("pods"), Some(503));
        assert_eq!(get(&format!("{base}/api/v1/pods")).0, 503);
        assert_eq!(get(&format!("{base}/api/v1/nodes")).0, 200);
        api.set_failing(Some("pods"), None);
        assert_eq!(get(&format!("{base}/api/v1/pods")).0, 200);
        assert_eq!(get(&format!("{base}/api/v1/services")).0, 404);
    }

    #[test]
    fn watches_replay_select_and_fail_as_asked() {
        let api = FakeApiServer::start();
        api.add(node("a"));
        let rv = api.add(pod("p", "Pending"));
        api.add(pod("q", "Pending"));
        let sel = "status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed";
        let mut w = RawWatch::open(
            &api,
            &format!(
                "/api/v1/pods?watch=true&resourceVersion={rv}&fieldSelector={sel}&allowWatchBookmarks=true&timeoutSeconds=30"
            ),
        );
        assert!(w.head.starts_with("HTTP/1.1 200"), "{}", w.head);
        assert!(
            w.head
                .to_ascii_lowercase()
                .contains("transfer-encoding: chunked")
        );
        // Replayed: q was added after rv.
        let e = w.event();
        assert_eq!(
            (&e["type"], &e["object"]["metadata"]["name"]),
            (&json!("ADDED"), &json!("q"))
        );
        assert_eq!(e["object"]["kind"], "Pod");
        // Live: p binds, then succeeds (DELETED through the selector).
        api.update("Pod", "ns", "p", |p| p["spec"]["nodeName"] = json!("a"));
        let e = w.event();
        assert_eq!(e["type"], "MODIFIED");
        assert_eq!(e["object"]["spec"]["nodeName"], "a");
        let done = api.update("Pod", "ns", "p", |p| {
            p["status"]["phase"] = json!("Succeeded")
        });
        let e = w.event();
        assert_eq!(e["type"], "DELETED");
        assert_eq!(e["object"]["metadata"]["resourceVersion"], done.to_string());
        assert_eq!(api.bookmark_all(), 1);
        let e = w.event();
        assert_eq!(e["type"], "BOOKMARK");
        assert_eq!(e["object"]["metadata"]["resourceVersion"], done.to_string());
        // Nodes do not reach a pod watch.
        api.delete("Node", "", "a");
        api.delete("Pod", "ns", "q");
        let e = w.event();
        assert_eq!(
            (&e["type"], &e["object"]["metadata"]["name"]),
            (&json!("DELETED"), &json!("q"))
        );
        assert_eq!(api.expire_watches(), 1);
        let e = w.event();
        assert_eq!(
            (&e["type"], &e["object"]["code"]),
            (&json!("ERROR"), &json!(410))
        );
        assert_eq!(w.next(), Ok(None), "the watch ends after the ERROR event");

        // From before a compaction: 410 at once.
        api.compact();
        let mut w = RawWatch::open(
            &api,
            &format!("/api/v1/pods?watch=true&resourceVersion={rv}"),
        );
        let e = w.event();
        assert_eq!(e["object"]["reason"], "Expired");
        assert!(
            e["object"]["message"]
                .as_str()
                .unwrap()
                .starts_with(&format!("too old resource version: {rv} (")),
            "{e}"
        );
        assert_eq!(w.next(), Ok(None));

        // Dropped mid-stream: no terminating chunk.
        let now = api.resource_version();
        let mut w = RawWatch::open(
            &api,
            &format!("/api/v1/nodes?watch=true&resourceVersion={now}"),
        );
        assert!(api.wait_watching_one("nodes"));
        assert_eq!(api.drop_connections(), 1);
        assert!(w.next().is_err());

        // Ended normally, as at timeoutSeconds.
        let mut w = RawWatch::open(
            &api,
            &format!("/api/v1/nodes?watch=true&resourceVersion={now}"),
        );
        assert!(api.wait_watching_one("nodes"));
        api.end_watches();
        assert_eq!(w.next(), Ok(None));

        // Down: connections close before any response.
        api.set_down(true);
        let mut s = TcpStream::connect(api.addr()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let _ = write!(s, "GET /api/v1/nodes HTTP/1.1\r\nHost: x\r\n\r\n");
        let mut buf = Vec::new();
        let _ = s.read_to_end(&mut buf);
        assert!(buf.is_empty());
        api.set_down(false);
        assert_eq!(get(&format!("{}/api/v1/nodes", api.url())).0, 200);
        let sent = api.sent();
        assert!(
            sent.iter().any(|e| e.kind == "DELETED" && e.key == "ns/p"),
            "{sent:?}"
        );
    }

    impl FakeApiServer {
        fn wait_watching_one(&self, kind: &str) -> bool {
            let deadline = Instant::now() + Duration::from_secs(5);
            while self.open_watches(Some(kind)) == 0 {
                if Instant::now() > deadline {
                    return false;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            true
        }
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a%21%3Db+c"), "a!=b c");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz"), "%zz");
    }
}
