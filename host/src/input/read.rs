//! Reading Kubernetes objects from files: JSON or YAML, single objects,
//! `kind: List` (what `kubectl get nodes,pods -A -o json` prints), typed
//! lists (`NodeList`, `PodList`) and multi-document YAML. Every error names
//! the file, the object and the field path.

use crate::input::objects::{
    MAX_FLOW_DEPTH, Objects, Origin, deserialize_kept, item_location, list_item_kind, object_kind,
    type_name,
};
use anyhow::{Context, Result, anyhow, bail};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use std::path::{Path, PathBuf};

/// Where callers that hand bound pods on (`bound_pods_to`) have always
/// found the sink's types.
pub use crate::input::objects::{BoundPods, PodSink};

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
    /// extension says JSON or YAML, else its first character).
    pub fn read_text(&mut self, path: &Path, text: &str) -> Result<()> {
        let text = without_bom(text);
        if looks_json(path, text) {
            return self.read_json(path, text);
        }
        crate::input::yaml::read_yaml(self, path, text)
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
        let typed = match source {
            Source::Value(v) => deserialize_kept(kind, v).map(|r| {
                r.map_err(|e| {
                    let path = e.path().to_string();
                    anyhow!("field {path}: {}", e.into_inner())
                })
            }),
            Source::Raw(raw) => {
                let mut de = serde_json::Deserializer::from_str(raw);
                deserialize_kept(kind, &mut de).map(|r| {
                    r.map_err(|e| anyhow!("field {}: {}", e.path(), without_position(e.inner())))
                })
            }
        };
        match typed {
            Some(kept) => {
                let kept = kept.with_context(|| format!("{origin}: {kind} {name}"))?;
                self.keep(kept, origin)
            }
            None => {
                self.skipped.push(format!("{origin}: {kind} {name}"));
                Ok(())
            }
        }
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

/// The text of a file, without a leading UTF-8 byte order mark (editors
/// on Windows write one; YAML readers skip it, JSON readers do not).
pub fn read_text_file(path: &Path) -> Result<String> {
    let mut text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok(text)
}

/// `text` without a leading UTF-8 byte order mark.
pub fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Whether a file is read as JSON: by extension, else by its first
/// character.
fn looks_json(path: &Path, text: &str) -> bool {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    ext == "json" || (ext != "yaml" && ext != "yml" && text.trim_start().starts_with(['{', '[']))
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
                {"apiVersion":"v1","kind":"Service","metadata":{"name":"s"}},
                {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}]}"#,
        )
        .unwrap();
        assert_eq!(o.nodes.len(), 1);
        assert_eq!(o.pods.len(), 1);
        assert_eq!(o.skipped.len(), 1);
        assert_eq!(o.namespaces.len(), 1);
        assert_eq!(o.workloads.len(), 1);
        assert_eq!(
            o.found(),
            " (found: 1 Node, 1 Namespace, 1 Service, ConfigMap c)"
        );
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
        // Where any value may go, and in flow mappings.
        let deep = format!(
            "kind: Node\nmetadata:\n  name: a\nx:\n  y: {}{}\n",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let msg = format!("{:#}", read("deep.yaml", &deep).err().unwrap());
        assert!(msg.contains("deep.yaml") && msg.contains("line 5"), "{msg}");
        assert!(msg.contains("deeper than 128"), "{msg}");
        let deep = format!("kind: Node\nx: {}\n", "{a: ".repeat(100_000));
        let msg = format!("{:#}", read("deep.yaml", &deep).err().unwrap());
        assert!(
            msg.contains("line 2") && msg.contains("deeper than 128"),
            "{msg}"
        );
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

    fn names(o: &Objects) -> Vec<String> {
        o.nodes
            .iter()
            .map(|(n, origin)| {
                format!(
                    "{} {}",
                    n.metadata.name.as_deref().unwrap_or("?"),
                    origin.location
                )
            })
            .collect()
    }

    fn fails(name: &str, text: &str) -> String {
        format!("{:#}", read(name, text).err().expect("an error"))
    }

    #[test]
    fn kubectl_yaml_list_with_items_before_kind() {
        // `kubectl get nodes,pods,svc -A -o yaml`: keys sorted.
        let o = read(
            "c.yaml",
            "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: n1\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: p\n  spec:\n    containers: []\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: s\nkind: List\nmetadata:\n  resourceVersion: \"\"\n",
        )
        .unwrap();
        assert_eq!(names(&o), ["n1 items[0]"]);
        assert_eq!(o.pods.len(), 1);
        assert_eq!(o.pods[0].1.location, "items[1]");
        assert_eq!(o.found(), " (found: 1 Node, ConfigMap s)");
        // apiVersion is read before kind and still checked by the type.
        let msg = fails(
            "v.yaml",
            "apiVersion: v9\nkind: Node\nmetadata: {name: a}\n",
        );
        assert!(
            msg.contains("Node a") && msg.contains("\"v9\", expected v1"),
            "{msg}"
        );
    }

    #[test]
    fn typed_lists_whose_items_lack_kind() {
        // A sorted dump of the API's NodeList: its items name no kind, and
        // the List's kind comes after them. File order is kept.
        let o = read(
            "nl.yaml",
            "apiVersion: v1\nitems:\n- kind: Node\n  metadata: {name: a}\n- metadata: {name: b}\n  spec: {unschedulable: true}\n- kind: Node\n  metadata: {name: c}\n- metadata: {name: d}\nkind: NodeList\nmetadata: {resourceVersion: '1'}\n",
        )
        .unwrap();
        assert_eq!(
            names(&o),
            ["a items[0]", "b items[1]", "c items[2]", "d items[3]"]
        );
        assert_eq!(
            o.nodes[1].0.spec.as_ref().unwrap().unschedulable,
            Some(true)
        );
        // The kind first: items are typed as they come.
        let o = read("k.yaml", "kind: NodeList\nitems:\n- metadata: {name: a}\n").unwrap();
        assert_eq!(names(&o), ["a items[0]"]);
        // Fields before kind, in and out of a List.
        let o = read(
            "late.yaml",
            "items:\n- metadata: {name: a}\n  kind: Node\n- kind: Pod\n  metadata: {name: p}\n- spec: {}\n  metadata: {name: b}\n  kind: Node\nkind: List\n---\nmetadata: {name: c}\nkind: Node\n",
        )
        .unwrap();
        assert_eq!(names(&o), ["a items[0]", "b items[2]", "c document 2"]);
        assert_eq!(o.pods.len(), 1);
        // Errors of an item read the second time still name it.
        let msg = fails(
            "late-bad.yaml",
            "items:\n- metadata: {name: a}\n- metadata: {name: b}\n  spec: {unschedulable: 7}\nkind: NodeList\n",
        );
        assert!(
            msg.contains("late-bad.yaml (items[1]): Node b: field spec.unschedulable")
                && msg.contains("line 4"),
            "{msg}"
        );
    }

    #[test]
    fn yaml_documents_are_numbered_and_errors_placed() {
        let o = read(
            "docs.yaml",
            "%YAML 1.1\n---\n# nothing\n---\nkind: Node\nmetadata: {name: a}\n---\nkind: List\nitems:\n- kind: Node\n  metadata: {name: b}\n...\n---\nkind: Node\nmetadata:\n  name: c\n  annotations:\n    text: |\n      ---x\n      ...y\n",
        )
        .unwrap();
        assert_eq!(names(&o), ["a ", "b document 2, items[0]", "c document 3"]);
        let text = o.nodes[2].0.metadata.annotations.as_ref().unwrap()["text"].clone();
        assert_eq!(text, "---x\n...y\n");
        // A bad field in item 3 of the List in document 2: file, document,
        // item, object, field and line.
        let item = |i: usize, port: &str| {
            format!(
                "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: web-{i}\n  spec:\n    containers:\n    - name: c\n      ports:\n      - containerPort: {port}\n"
            )
        };
        let text = format!(
            "kind: Node\nmetadata: {{name: a}}\n---\napiVersion: v1\nitems:\n{}{}{}{}kind: List\n",
            item(0, "80"),
            item(1, "80"),
            item(2, "80"),
            item(3, "eighty")
        );
        let msg = fails("bad.yaml", &text);
        assert!(
            msg.contains("bad.yaml (document 2, items[3]): Pod web-3: field spec.containers[0].ports[0].containerPort: invalid i32 at line 41, column 24"),
            "{msg}"
        );
        // Syntax errors: the file's line, whatever the document.
        let msg = fails(
            "syntax.yaml",
            "kind: Node\nmetadata: {name: a}\n---\nkind: Node\nmetadata: {name: b\n",
        );
        assert!(
            msg.contains("syntax.yaml: invalid YAML in document 2 at line 5"),
            "{msg}"
        );
        // Broken YAML further on in an object that failed its typed read
        // is the error.
        let msg = fails("cut.yaml", "kind: Pod\nmetadata: {name: [unclosed\n");
        assert!(
            msg.contains("cut.yaml: invalid YAML in document 1 at line"),
            "{msg}"
        );
        let msg = fails("items.yaml", "kind: List\nitems: {a: 1}\n");
        assert!(
            msg.contains("items must be an array, found an object"),
            "{msg}"
        );
        let msg = fails("scalar.yaml", "kind: List\nitems:\n- x\n");
        assert!(
            msg.contains("(items[0]): expected a Kubernetes object, found a string"),
            "{msg}"
        );
        let msg = fails("kind.yaml", "kind: 5\n");
        assert!(
            msg.contains("kind must be a string, found a number"),
            "{msg}"
        );
        let msg = fails("nokind.yaml", "metadata: {name: a}\n");
        assert!(msg.contains("object has no \"kind\""), "{msg}");
    }

    #[test]
    fn items_before_the_kind_of_no_list_are_an_error() {
        // Items that came before `kind` were read as a List's: an object
        // that turns out no List fails instead of having added them.
        let msg = fails(
            "nolist.yaml",
            "items:\n- kind: Node\n  metadata: {name: a}\nkind: Node\nmetadata: {name: b}\n",
        );
        assert!(
            msg.contains("nolist.yaml: items came before kind") && msg.contains("it is a Node"),
            "{msg}"
        );
        let msg = fails(
            "nolist2.yaml",
            "items:\n- metadata: {name: a}\nkind: Service\n",
        );
        assert!(msg.contains("it is a Service"), "{msg}");
        // Empty items read nothing: the object is what its kind says.
        let o = read("empty.yaml", "items: []\nkind: Node\nmetadata: {name: b}\n").unwrap();
        assert_eq!(names(&o), ["b "]);
    }

    #[test]
    fn yaml_scalars_resolve_as_kubernetes_reads_them() {
        let o = read(
            "scalars.yaml",
            "base: &base {team: a}\nkind: Node\nmetadata:\n  name: n\n  labels:\n    <<: *base\n    yes: yes\n    on: on\n    t: true\n    f: 1.0\n    o: 017\n    u: 1_000\n    x: 0x1F\nspec:\n  unschedulable: yes\nstatus:\n  capacity: {cpu: 1, memory: 1_000, pods: 017, gpu: 0.5}\n",
        )
        .unwrap();
        let node = &o.nodes[0].0;
        let labels = node.metadata.labels.as_ref().unwrap();
        let got: Vec<(&str, &str)> = labels
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        // String fields keep the text; merge keys merge.
        assert_eq!(
            got,
            [
                ("f", "1.0"),
                ("o", "017"),
                ("on", "on"),
                ("t", "true"),
                ("team", "a"),
                ("u", "1_000"),
                ("x", "0x1F"),
                ("yes", "yes")
            ]
        );
        assert_eq!(node.spec.as_ref().unwrap().unschedulable, Some(true));
        let cap = node.status.as_ref().unwrap().capacity.as_ref().unwrap();
        // Quantities (int-or-string) resolve as YAML 1.1 numbers.
        assert_eq!(cap["cpu"].0, "1");
        assert_eq!(cap["memory"].0, "1000");
        assert_eq!(cap["pods"].0, "15");
        assert_eq!(cap["gpu"].0, "0.5");
        // A quoted number in an int field is read as the number.
        let o = read(
            "port.yaml",
            "kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    ports:\n    - containerPort: \"80\"\n",
        )
        .unwrap();
        let ports = o.pods[0].0.spec.as_ref().unwrap().containers[0]
            .ports
            .clone();
        assert_eq!(ports.unwrap()[0].container_port, 80);
        // Duplicate keys, a null label value and .inf where any value
        // goes are errors.
        let msg = fails("dup.yaml", "kind: Node\nmetadata: {name: a, name: b}\n");
        assert!(
            msg.contains("duplicate key \"name\"")
                && msg.contains("line 2")
                && !msg.contains("DuplicateKeyPolicy"),
            "{msg}"
        );
        let msg = fails(
            "null.yaml",
            "kind: Node\nmetadata: {name: a, labels: {x: ~}}\n",
        );
        assert!(msg.contains("Node a: field metadata.labels.x"), "{msg}");
        let msg = fails(
            "inf.yaml",
            "kind: Node\nmetadata:\n  name: a\n  managedFields:\n  - fieldsV1: {x: .inf}\n",
        );
        assert!(
            msg.contains("field metadata.managedFields[0].fieldsV1"),
            "{msg}"
        );
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
    fn a_byte_order_mark_starts_json_and_yaml_alike() {
        let node = r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}}"#;
        for (name, text) in [
            ("bom.json", format!("\u{feff}{node}")),
            ("bom", format!("\u{feff}{node}")),
            (
                "bom.yaml",
                "\u{feff}kind: Node\nmetadata: {name: n1}\n".to_string(),
            ),
        ] {
            let o = read(name, &text).unwrap_or_else(|e| panic!("{name}: {e:#}"));
            assert_eq!(o.nodes.len(), 1, "{name}");
        }
        let dir = std::env::temp_dir().join(format!("sift-bom-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("nodes.json");
        std::fs::write(&file, format!("\u{feff}{node}")).unwrap();
        assert!(read_text_file(&file).unwrap().starts_with('{'));
        assert_eq!(Objects::read_files(&[file]).unwrap().nodes.len(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
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
