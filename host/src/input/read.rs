//! Reading Kubernetes objects from files: JSON or YAML, single objects,
//! `kind: List` (what `kubectl get nodes,pods -A -o json` prints), typed
//! lists (`NodeList`, `PodList`) and multi-document YAML. Every error names
//! the file, the object and the field path.

use crate::input::volcano::{PodGroup, Queue};
use anyhow::{Context, Result, anyhow, bail};
use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use std::path::{Path, PathBuf};

/// Where an object came from, for error messages.
#[derive(Clone, Debug)]
pub struct Origin {
    pub file: PathBuf,
    /// e.g. `document 2, items[14]`.
    pub location: String,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.location.is_empty() {
            write!(f, "{}", self.file.display())
        } else {
            write!(f, "{} ({})", self.file.display(), self.location)
        }
    }
}

/// Nodes and pods read from input files, in file order.
#[derive(Default)]
pub struct Objects {
    pub nodes: Vec<(k8s::Node, Origin)>,
    pub pods: Vec<(k8s::Pod, Origin)>,
    /// Namespaces: their labels are what pod affinity's namespaceSelector
    /// selects on.
    pub namespaces: Vec<(k8s::Namespace, Origin)>,
    /// Batch mode's objects: Volcano PodGroups and Queues, and the
    /// PriorityClasses that give jobs and tasks their priority.
    pub pod_groups: Vec<(PodGroup, Origin)>,
    pub queues: Vec<(Queue, Origin)>,
    pub priority_classes: Vec<(PriorityClass, Origin)>,
    /// Objects of other kinds, skipped (e.g. Services in a full dump).
    pub skipped: Vec<String>,
    /// When set, pods bound to a node go here as they are read instead of
    /// into `pods`: a big dump's bound pods then never exist all at once
    /// as typed objects (650,000 of them took 2 GB).
    pub bound_pods_to: Option<BoundPods>,
}

/// Takes one bound pod and where it was read.
pub type PodSink = dyn FnMut(k8s::Pod, &Origin) -> Result<()>;

/// Where [`Objects`] hands bound pods.
pub struct BoundPods(pub Box<PodSink>);

impl Objects {
    pub fn read_files(paths: &[PathBuf]) -> Result<Objects> {
        let mut objects = Objects::default();
        for path in paths {
            objects.read_file(path)?;
        }
        Ok(objects)
    }

    pub fn read_file(&mut self, path: &Path) -> Result<()> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        self.read_text(path, &text)
    }

    /// Reads the objects of `text`, the contents of the file `path` (whose
    /// extension says JSON or YAML, as for [`parse_documents`]).
    pub fn read_text(&mut self, path: &Path, text: &str) -> Result<()> {
        if looks_json(path, text) {
            return self.read_json(path, text);
        }
        for (doc_index, doc) in parse_documents(path, text)?.into_iter().enumerate() {
            let location = if doc_index == 0 {
                String::new()
            } else {
                format!("document {}", doc_index + 1)
            };
            self.add_value(path, location, doc, None)?;
        }
        Ok(())
    }

    /// What the files held besides pods, for "holds no Pod" messages:
    /// e.g. " (found: 3 Node, Service web)".
    pub fn found(&self) -> String {
        let mut parts = Vec::new();
        if !self.nodes.is_empty() {
            parts.push(format!("{} Node", self.nodes.len()));
        }
        if !self.namespaces.is_empty() {
            parts.push(format!("{} Namespace", self.namespaces.len()));
        }
        if !self.pod_groups.is_empty() {
            parts.push(format!("{} PodGroup", self.pod_groups.len()));
        }
        if !self.queues.is_empty() {
            parts.push(format!("{} Queue", self.queues.len()));
        }
        parts.extend(self.skipped.iter().take(3).map(|s| {
            s.rsplit_once(": ")
                .map_or(s.as_str(), |(_, what)| what)
                .to_string()
        }));
        if self.skipped.len() > 3 {
            parts.push(format!("{} more", self.skipped.len() - 3));
        }
        if parts.is_empty() {
            " (it has no object)".to_string()
        } else {
            format!(" (found: {})", parts.join(", "))
        }
    }

    /// Reads objects from an in-memory JSON value (conformance cases).
    pub fn add_json(
        &mut self,
        file: &Path,
        location: &str,
        value: Value,
        kind: Option<&str>,
    ) -> Result<()> {
        self.add_value(file, location.to_string(), value, kind)
    }

    fn add_value(
        &mut self,
        file: &Path,
        location: String,
        value: Value,
        implied_kind: Option<&str>,
    ) -> Result<()> {
        let origin = |loc: &str| Origin {
            file: file.to_path_buf(),
            location: loc.to_string(),
        };
        let Value::Object(mut map) = value else {
            bail!(
                "{}: expected a Kubernetes object, found {}",
                origin(&location),
                type_name(&value)
            );
        };
        let kind = object_kind(map.get("kind"), implied_kind, &origin(&location))?;
        if let Some(item_kind) = list_item_kind(&kind) {
            let items = match map.remove("items") {
                Some(Value::Array(items)) => items,
                None | Some(Value::Null) => Vec::new(),
                Some(other) => bail!(
                    "{}: items must be an array, found {}",
                    origin(&location),
                    type_name(&other)
                ),
            };
            for (i, item) in items.into_iter().enumerate() {
                let loc = item_location(&location, i);
                self.add_value(file, loc, item, item_kind)?;
            }
            return Ok(());
        }
        let name = map
            .get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("<unnamed>")
            .to_string();
        self.add_object(
            &kind,
            &name,
            origin(&location),
            Source::Value(Value::Object(map)),
        )
    }

    /// Reads a JSON file without building a value tree of it: the text is
    /// checked once, each object's kind and name are read from its own
    /// slice, and the object is typed straight from that slice. A 20,000
    /// node dump peaked at 3.8 GB through a tree.
    fn read_json(&mut self, path: &Path, text: &str) -> Result<()> {
        let top: &RawValue = serde_json::from_str(text).map_err(|e| {
            anyhow!(
                "{}: invalid JSON at line {}, column {}: {e}",
                path.display(),
                e.line(),
                e.column()
            )
        })?;
        if top.get().starts_with('[') {
            let docs: Vec<&RawValue> =
                serde_json::from_str(top.get()).map_err(|e| anyhow!("{}: {e}", path.display()))?;
            for (i, raw) in docs.into_iter().enumerate() {
                let location = if i == 0 {
                    String::new()
                } else {
                    format!("document {}", i + 1)
                };
                self.add_raw(path, location, raw.get(), None, 0)?;
            }
            return Ok(());
        }
        self.add_raw(path, String::new(), top.get(), None, 0)
    }

    fn add_raw(
        &mut self,
        file: &Path,
        location: String,
        raw: &str,
        implied_kind: Option<&str>,
        depth: usize,
    ) -> Result<()> {
        let origin = |loc: &str| Origin {
            file: file.to_path_buf(),
            location: loc.to_string(),
        };
        // Nested Lists are bounded, as the tree reader was by serde_json's
        // recursion limit.
        if depth > MAX_FLOW_DEPTH {
            bail!(
                "{}: Lists nested deeper than {MAX_FLOW_DEPTH} levels",
                origin(&location)
            );
        }
        if !raw.starts_with('{') {
            bail!(
                "{}: expected a Kubernetes object, found {}",
                origin(&location),
                raw_type_name(raw)
            );
        }
        let head: Head = serde_json::from_str(raw)
            .map_err(|e| anyhow!("{}: {}", origin(&location), without_position(&e)))?;
        let kind_value = head
            .kind
            .map(|k| serde_json::from_str::<Value>(k.get()))
            .transpose()
            .map_err(|e| anyhow!("{}: kind: {e}", origin(&location)))?;
        let kind = object_kind(kind_value.as_ref(), implied_kind, &origin(&location))?;
        if let Some(item_kind) = list_item_kind(&kind) {
            let items: Vec<&RawValue> = match head.items.map(RawValue::get) {
                None | Some("null") => Vec::new(),
                Some(a) if a.starts_with('[') => serde_json::from_str(a)
                    .map_err(|e| anyhow!("{}: items: {e}", origin(&location)))?,
                Some(other) => bail!(
                    "{}: items must be an array, found {}",
                    origin(&location),
                    raw_type_name(other)
                ),
            };
            for (i, item) in items.into_iter().enumerate() {
                let loc = item_location(&location, i);
                self.add_raw(file, loc, item.get(), item_kind, depth + 1)?;
            }
            return Ok(());
        }
        // Leniently: a malformed metadata is the typed read's to report.
        let name = head
            .metadata
            .and_then(|m| serde_json::from_str::<HeadMeta>(m.get()).ok())
            .and_then(|m| m.name)
            .and_then(|n| n.as_str().map(str::to_string))
            .unwrap_or_else(|| "<unnamed>".to_string());
        self.add_object(&kind, &name, origin(&location), Source::Raw(raw))
    }

    fn add_object(&mut self, kind: &str, name: &str, origin: Origin, source: Source) -> Result<()> {
        match kind {
            "Node" => {
                let node: k8s::Node = source
                    .typed()
                    .with_context(|| format!("{origin}: Node {name}"))?;
                self.nodes.push((node, origin));
            }
            "Pod" => {
                let pod: k8s::Pod = source
                    .typed()
                    .with_context(|| format!("{origin}: Pod {name}"))?;
                match &mut self.bound_pods_to {
                    Some(sink) if crate::input::kube::bound_node(&pod).is_some() => {
                        (sink.0)(pod, &origin)?
                    }
                    _ => self.pods.push((pod, origin)),
                }
            }
            "Namespace" => {
                let ns: k8s::Namespace = source
                    .typed()
                    .with_context(|| format!("{origin}: Namespace {name}"))?;
                self.namespaces.push((ns, origin));
            }
            "PodGroup" => {
                let pg: PodGroup = source
                    .typed()
                    .with_context(|| format!("{origin}: PodGroup {name}"))?;
                self.pod_groups.push((pg, origin));
            }
            "Queue" => {
                let q: Queue = source
                    .typed()
                    .with_context(|| format!("{origin}: Queue {name}"))?;
                self.queues.push((q, origin));
            }
            "PriorityClass" => {
                let pc: PriorityClass = source
                    .typed()
                    .with_context(|| format!("{origin}: PriorityClass {name}"))?;
                self.priority_classes.push((pc, origin));
            }
            other => self.skipped.push(format!("{origin}: {other} {name}")),
        }
        Ok(())
    }
}

/// An object's kind: its own `kind`, which must be a string, else the
/// kind its List implies.
fn object_kind(kind: Option<&Value>, implied: Option<&str>, at: &Origin) -> Result<String> {
    match (kind, implied) {
        (Some(Value::String(k)), _) => Ok(k.clone()),
        (Some(other), _) => bail!("{at}: kind must be a string, found {}", type_name(other)),
        (None, Some(k)) => Ok(k.to_string()),
        (None, None) => {
            bail!(
                "{at}: object has no \"kind\" (expected Node, Pod, Namespace, PodGroup, Queue, PriorityClass or a List)"
            )
        }
    }
}

/// For a List kind (`List`, `NodeList`, ...), the kind its items have
/// when they say none (`None` for a plain `List`).
fn list_item_kind(kind: &str) -> Option<Option<&str>> {
    kind.ends_with("List")
        .then(|| kind.strip_suffix("List").filter(|k| !k.is_empty()))
}

/// "items[3]", inside `location` if there is one.
fn item_location(location: &str, i: usize) -> String {
    if location.is_empty() {
        format!("items[{i}]")
    } else {
        format!("{location}, items[{i}]")
    }
}

/// What is read of an object before its kind is known; the rest stays
/// text.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(default, borrow)]
    kind: Option<&'a RawValue>,
    #[serde(default, borrow)]
    items: Option<&'a RawValue>,
    #[serde(default, borrow)]
    metadata: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct HeadMeta {
    #[serde(default)]
    name: Option<Value>,
}

/// An object to type: a value tree (YAML, conformance cases) or its JSON
/// text.
enum Source<'a> {
    Value(Value),
    Raw(&'a str),
}

impl Source<'_> {
    fn typed<T: for<'de> Deserialize<'de>>(self) -> Result<T> {
        match self {
            Source::Value(v) => typed(v),
            Source::Raw(raw) => {
                let mut de = serde_json::Deserializer::from_str(raw);
                serde_path_to_error::deserialize(&mut de).map_err(|e| {
                    let path = e.path().to_string();
                    anyhow!("field {path}: {}", without_position(e.inner()))
                })
            }
        }
    }
}

/// The JSON type of a value's text, from its first character.
fn raw_type_name(raw: &str) -> &'static str {
    match raw.trim_start().as_bytes().first() {
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

/// A serde_json error's message without " at line L column C": positions
/// in an object's own slice would mislead; the field path says where.
fn without_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(i) if text[i..].contains(" column ") => text[..i].to_string(),
        _ => text,
    }
}

/// Whether a file is read as JSON: by extension, else by its first
/// character.
fn looks_json(path: &Path, text: &str) -> bool {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    ext == "json" || (ext != "yaml" && ext != "yml" && text.trim_start().starts_with(['{', '[']))
}

/// Deserializes with the JSON path of the first bad field in the error.
fn typed<T: for<'de> Deserialize<'de>>(value: Value) -> Result<T> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        anyhow!("field {path}: {}", e.into_inner())
    })
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Splits a file into documents: one JSON value, or YAML documents
/// (empty documents are dropped).
pub fn parse_documents(path: &Path, text: &str) -> Result<Vec<Value>> {
    if looks_json(path, text) {
        let value: Value = serde_json::from_str(text).map_err(|e| {
            anyhow!(
                "{}: invalid JSON at line {}, column {}: {e}",
                path.display(),
                e.line(),
                e.column()
            )
        })?;
        return Ok(match value {
            Value::Array(items) => items,
            v => vec![v],
        });
    }
    if let Err(line) = check_flow_depth(text) {
        bail!(
            "{}: invalid YAML at line {line}: [ ] and {{ }} nested deeper than {MAX_FLOW_DEPTH} levels",
            path.display()
        );
    }
    let mut docs = Vec::new();
    for (i, doc) in serde_yaml_ng::Deserializer::from_str(text).enumerate() {
        let value = Value::deserialize(doc).map_err(|e| {
            let at = e
                .location()
                .map(|l| format!(" at line {}, column {}", l.line(), l.column()))
                .unwrap_or_default();
            anyhow!(
                "{}: invalid YAML in document {}{at}: {e}",
                path.display(),
                i + 1
            )
        })?;
        if !value.is_null() {
            docs.push(value);
        }
    }
    Ok(docs)
}

/// The deepest `[ ]`/`{ }` nesting a YAML file may have: what the JSON
/// reader allows (serde_json's recursion limit).
pub const MAX_FLOW_DEPTH: usize = 128;

/// Checks YAML's flow nesting depth in one linear pass, before the parser
/// sees it: libyaml's scanner does work proportional to the depth for every
/// token, so a 200 KB line of `[` took 17 s to reach serde's recursion
/// limit. `Err(line)` where the limit is passed.
///
/// It follows YAML's rules for where a bracket opens a collection: where a
/// value may start (after `key:`, `- `, `? `, at the start of a line that
/// continues such a value, and anywhere inside a flow collection), and not
/// inside quoted scalars (which may span lines), comments or block scalars
/// (whose content is indented past their parent node). A bracket inside a
/// plain scalar, e.g. the wrapped line `[team's list] for details` or
/// `sad :-[`, is text.
fn check_flow_depth(text: &str) -> Result<(), usize> {
    let mut depth = 0usize;
    // Inside a quoted scalar, which may go on over lines: its quote.
    let mut quote: Option<u8> = None;
    // Inside a block scalar: the column of its parent node.
    let mut block: Option<usize> = None;
    // Whether a value may start at the next significant character.
    let mut value_start = true;
    for (n, line) in text.split('\n').enumerate() {
        let bytes = line.strip_suffix('\r').unwrap_or(line).as_bytes();
        let indent = bytes.iter().take_while(|&&b| b == b' ').count();
        let mut i = 0;
        // Block context at the start of a line: block scalar content,
        // document markers, and `- ` / `? ` prefixes.
        let mut at_head = false;
        let mut node_col = indent;
        let mut dash_col: Option<usize> = None;
        if quote.is_none() && depth == 0 {
            if let Some(parent) = block {
                if indent == bytes.len() || indent > parent {
                    continue;
                }
                block = None;
            }
            i = indent;
            at_head = true;
            if bytes.starts_with(b"---") && matches!(bytes.get(3), None | Some(b' ')) {
                i = 3;
                value_start = true;
                at_head = false;
            }
        }
        while i < bytes.len() {
            let c = bytes[i];
            let next = bytes.get(i + 1).copied();
            let ends_token = matches!(next, None | Some(b' ' | b'\t'));
            let mut still_head = false;
            if let Some(q) = quote {
                match c {
                    b'\\' if q == b'"' => i += 1,
                    b'\'' if q == b'\'' && next == Some(b'\'') => i += 1,
                    _ if c == q => {
                        quote = None;
                        value_start = false;
                    }
                    _ => {}
                }
                i += 1;
                continue;
            }
            match c {
                b' ' | b'\t' => still_head = true,
                b'#' if i == 0 || matches!(bytes[i - 1], b' ' | b'\t') => break,
                b'-' | b'?' if at_head && depth == 0 && ends_token => {
                    value_start = true;
                    dash_col = Some(i);
                    let spaces = bytes[i + 1..].iter().take_while(|&&b| b == b' ').count();
                    node_col = i + 1 + spaces;
                    still_head = true;
                }
                b'"' | b'\'' if value_start => quote = Some(c),
                b'[' | b'{' if value_start || depth > 0 => {
                    depth += 1;
                    if depth > MAX_FLOW_DEPTH {
                        return Err(n + 1);
                    }
                    value_start = true;
                }
                b']' | b'}' if depth > 0 => {
                    depth -= 1;
                    value_start = false;
                }
                b',' if depth > 0 => value_start = true,
                b':' if depth > 0 || ends_token => value_start = true,
                b'&' | b'!' if value_start => {
                    // An anchor or a tag: the value comes after it.
                    while i + 1 < bytes.len() && !matches!(bytes[i + 1], b' ' | b'\t') {
                        i += 1;
                    }
                }
                b'|' | b'>' if value_start && depth == 0 => {
                    let header = &bytes[i + 1..];
                    let rest = header
                        .iter()
                        .position(|b| !matches!(b, b'-' | b'+' | b'1'..=b'9'))
                        .map_or(&header[header.len()..], |p| &header[p..]);
                    let rest = rest.trim_ascii_start();
                    if rest.is_empty() || rest.starts_with(b"#") {
                        // Content is indented past the node this is the
                        // value of: the key's column, or the `-`'s.
                        block = Some(if at_head {
                            dash_col.unwrap_or(node_col)
                        } else {
                            node_col
                        });
                        value_start = false;
                        break;
                    }
                    value_start = false;
                }
                _ => value_start = false,
            }
            at_head &= still_head;
            i += 1;
        }
        // `value_start` carries over: the next line starts a value only if
        // this one left one pending (`key:` or `-` at its end), else it
        // starts a key or continues a plain scalar.
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(name: &str, text: &str) -> Result<Objects> {
        let dir = std::env::temp_dir().join(format!("sift-input-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let r = Objects::read_files(&[path]);
        std::fs::remove_dir_all(&dir).ok();
        r
    }

    #[test]
    fn kubectl_list_with_mixed_kinds() {
        let o = read(
            "c.json",
            r#"{"apiVersion":"v1","kind":"List","items":[
                {"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","resourceVersion":"9"}},
                {"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a","labels":{"team":"a"}},"status":{"phase":"Active"}},
                {"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[]}},
                {"apiVersion":"v1","kind":"Service","metadata":{"name":"s"}}]}"#,
        )
        .unwrap();
        assert_eq!(o.nodes.len(), 1);
        assert_eq!(o.pods.len(), 1);
        assert_eq!(o.skipped.len(), 1);
        assert_eq!(o.namespaces.len(), 1);
        assert_eq!(o.found(), " (found: 1 Node, 1 Namespace, Service s)");
    }

    #[test]
    fn multi_document_yaml_and_typed_lists() {
        let o = read(
            "c.yaml",
            "kind: Node\nmetadata: {name: a}\n---\n---\nkind: NodeList\nitems:\n- metadata: {name: b}\n",
        )
        .unwrap();
        assert_eq!(o.nodes.len(), 2);
    }

    #[test]
    fn errors_name_file_object_and_field() {
        let err = read(
            "bad.json",
            r#"{"kind":"Pod","metadata":{"name":"web"},"spec":{"containers":[{"name":"c","ports":[{"containerPort":"80"}]}]}}"#,
        )
        .err()
        .unwrap();
        let msg = format!("{err:#}");
        assert!(msg.contains("bad.json"), "{msg}");
        assert!(msg.contains("Pod web"), "{msg}");
        assert!(
            msg.contains("spec.containers[0].ports[0].containerPort"),
            "{msg}"
        );
    }

    #[test]
    fn deep_yaml_flow_nesting_fails_at_a_fixed_depth() {
        let deep = format!(
            "kind: Node\nmetadata:\n  name: a\n  annotations:\n    x: {}{}\n",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let msg = format!("{:#}", read("deep.yaml", &deep).err().unwrap());
        assert!(msg.contains("deep.yaml") && msg.contains("line 5"), "{msg}");
        assert!(msg.contains("deeper than 128"), "{msg}");
        // Brackets that are not flow collections do not count.
        let ok = format!(
            "kind: Node\nmetadata:\n  name: a\n  annotations:\n    q: \"{0}\"\n    s: '{0}'\n    p: x{0}\n    b: |\n      {0}\n    c: ok # {0}\n",
            "[".repeat(300)
        );
        let o = read("ok.yaml", &ok).unwrap();
        assert_eq!(o.nodes.len(), 1);
        // What kubectl and YAML emitters write, 200 times over: brackets in
        // plain scalars, apostrophes in flow mappings, wrapped lines that
        // start with a bracket, multi-line quoted strings, block scalars
        // under sequence items, anchors and tags.
        let item = |i: usize| {
            format!(
                "- kind: Node\n  metadata:\n    name: n{i}\n    annotations: {{note: it's fine}}\n    labels:\n      mood: sad :-[\n      face: ':-['\n      text: reserved for the data team, see the list\n        [team's list] for details\n      quoted: \"a [ b\n        c [ d\"\n      json: '{{\"a\": [1, {{\"b\": [2]}}]}}'\n  spec:\n    x:\n    - |\n      [[[ {{{{\n    - a: >-\n        [[[\n      b: &a{i} [1, [2]]\n      c: !!seq [3]\n"
            )
        };
        let many: String = std::iter::once("kind: List\nitems:\n".to_string())
            .chain((0..200).map(item))
            .collect();
        let o = read("realistic.yaml", &many).unwrap();
        assert_eq!(o.nodes.len(), 200);
        // A block scalar under a sequence item ends at its sibling key.
        let sibling = format!(
            "kind: Node\nmetadata: {{name: a}}\nx:\n  - a: |\n      text\n    b: {}{}\n",
            "[".repeat(500),
            "]".repeat(500)
        );
        let msg = format!("{:#}", read("sibling.yaml", &sibling).err().unwrap());
        assert!(
            msg.contains("deeper than 128") && msg.contains("line 6"),
            "{msg}"
        );
        // Real nesting within the limit parses.
        let nested = format!(
            "kind: Node\nmetadata: {{name: a, annotations: {{x: \"1\"}}}}\nx: {}{}\n",
            "[".repeat(100),
            "]".repeat(100)
        );
        assert!(read("nested.yaml", &nested).is_ok());
    }

    #[test]
    fn json_lists_nest_to_a_fixed_depth_and_arrays_name_documents() {
        let node = r#"{"kind":"Node","metadata":{"name":"a"}}"#;
        let nested = |n: usize| {
            format!(
                "{}{node}{}",
                r#"{"kind":"List","items":["#.repeat(n),
                "]}".repeat(n)
            )
        };
        let msg = format!("{:#}", read("deep.json", &nested(200)).err().unwrap());
        assert!(msg.contains("nested deeper than 128"), "{msg}");
        assert_eq!(read("shallow.json", &nested(5)).unwrap().nodes.len(), 1);
        let msg = format!(
            "{:#}",
            read("docs.json", &format!("[{node}, 5]")).err().unwrap()
        );
        assert!(
            msg.contains("(document 2)") && msg.contains("found a number"),
            "{msg}"
        );
    }

    #[test]
    fn malformed_json_reports_position() {
        let msg = format!(
            "{:#}",
            read("m.json", "{\"kind\": \"Node\",").err().unwrap()
        );
        assert!(msg.contains("m.json") && msg.contains("line 1"), "{msg}");
    }
}
