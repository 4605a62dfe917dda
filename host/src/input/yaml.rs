//! Reading Kubernetes objects from YAML without a value tree: each object
//! is typed straight from serde-saphyr's event stream, and a List's items
//! are handed over one by one as they are parsed, so a multi-GB dump holds
//! its text plus what sift keeps (a tree of a 22 MB dump took 778 MB).
//!
//! # Kinds that come late
//!
//! An object is typed once its kind is known: its own `kind` (kubectl
//! sorts keys, so `apiVersion, kind` come before `metadata`), else the kind
//! its List implies (`NodeList` items that say none). Two shapes say the
//! kind after the content it governs, and are read twice instead of held:
//!
//! - `items` before `kind` (a sorted dump of a typed list, whose items
//!   omit `kind`): items that carry a kind are still handed over at once;
//!   from the first item that carries none, the rest of the document is
//!   only scanned, then read again with the List's kind known.
//! - An object whose fields come before its `kind`: scanned for its kind,
//!   then read again with it, the same way.
//!
//! A second read starts where the first stopped handing objects over, so
//! objects keep their file order and nothing is handed over twice.
//!
//! An `items` sequence that comes before `kind` is read as a List's items:
//! if the object's kind then says it is no List (or it has none while its
//! own List's kind is not known yet), reading fails rather than having
//! added objects that were not items of a List.

use crate::input::objects::{
    MAX_FLOW_DEPTH, Objects, Origin, deserialize_kept, is_kept, item_location, list_item_kind,
    object_kind,
};
use anyhow::{Context, Result, anyhow};
use serde::de::value::{MapAccessDeserializer, StrDeserializer, StringDeserializer};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_saphyr::{MessageFormatter, budget::BudgetBreach, localizer::ExternalMessageSource};
use std::collections::HashMap;
use std::fmt;
use std::path::Path;

/// How sift reads YAML: the dialect of Kubernetes' own reader (go-yaml's
/// YAML 1.1 resolved into JSON) where it can matter for objects:
///
/// - Typed fields decide: a plain `yes`, `1.0` or `017` in a string field
///   (a label value) is that text; in a bool, int or Quantity field it is
///   read as YAML 1.1 does (`yes` is true, `017` is 15, `1_000` is 1000).
/// - Merge keys (`<<: *anchor`) are merged, as go-yaml does.
/// - Duplicate keys are an error, as kubectl's strict decoding has them.
/// - `.inf`/`.nan` where any value may go (e.g. `fieldsV1`) are an error:
///   JSON has no such numbers.
///
/// The budget bounds nesting ([`MAX_FLOW_DEPTH`], what the JSON reader
/// allows; the parser is linear in it) and lifts the size limits made for
/// configuration files: a cluster dump has millions of nodes and events.
pub fn options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        with_snippet: false,
        legacy_octal_numbers: true,
        budget: serde_saphyr::budget! {
            max_depth: MAX_FLOW_DEPTH,
            flow_nesting_limit: MAX_FLOW_DEPTH,
            max_events: usize::MAX,
            max_nodes: usize::MAX,
            max_total_scalar_bytes: usize::MAX,
            max_documents: usize::MAX,
        },
    }
}

/// A YAML error's message without its position (which callers give as
/// the file's line), and "nested deeper than" for the nesting limits.
pub fn message(e: &serde_saphyr::Error) -> String {
    let too_deep = match e {
        serde_saphyr::Error::Budget {
            breach: BudgetBreach::Depth { .. },
            ..
        } => true,
        serde_saphyr::Error::ExternalMessage { source, .. } => matches!(
            &**source,
            ExternalMessageSource::Parser(s)
                if matches!(s.kind(), serde_saphyr::granit_parser::ErrorKind::RecursionLimitExceeded)
        ),
        _ => false,
    };
    if too_deep {
        format!("nested deeper than {MAX_FLOW_DEPTH} levels")
    } else if let serde_saphyr::Error::DuplicateMappingKey { key, .. } = e {
        // The library's own text suggests one of its options to the user.
        match key {
            Some(k) => format!(
                "duplicate key {:?}: a key may appear once in a mapping (kubectl's strict decoding refuses it too)",
                crate::text::printable_truncated(k, 256)
            ),
            None => "duplicate key: a key may appear once in a mapping (kubectl's strict decoding refuses it too)".to_string(),
        }
    } else {
        serde_saphyr::DefaultMessageFormatter
            .format_message(e)
            .into_owned()
    }
}

/// " at line L, column C" of a YAML error in a text that starts after
/// `lines_before` lines of the file.
pub fn position(e: &serde_saphyr::Error, lines_before: u64) -> String {
    e.location()
        .filter(|l| l.line() > 0)
        .map(|l| {
            format!(
                " at line {}, column {}",
                l.line() + lines_before,
                l.column()
            )
        })
        .unwrap_or_default()
}

/// Whether a YAML error is the text's (syntax, limits) rather than a
/// value's that does not fit its field.
fn is_syntax(e: &serde_saphyr::Error) -> bool {
    matches!(
        e,
        serde_saphyr::Error::ExternalMessage { .. }
            | serde_saphyr::Error::Budget { .. }
            | serde_saphyr::Error::Eof { .. }
    )
}

/// Reads the objects of the YAML `text` of the file `path`.
pub fn read_yaml(objects: &mut Objects, path: &Path, text: &str) -> Result<()> {
    let mut documents = 0;
    for (lines_before, doc) in documents_of(text) {
        let location = if documents == 0 {
            String::new()
        } else {
            format!("document {}", documents + 1)
        };
        let mut w = Walker {
            objects: &mut *objects,
            file: path,
            location,
            number: documents + 1,
            lines_before,
            next: 0,
            from: 0,
            deferred: None,
            late_kinds: HashMap::new(),
            want_name: None,
            name: None,
            failure: None,
            unnamed: None,
            null: false,
        };
        w.pass(doc)?;
        if w.null {
            continue;
        }
        documents += 1;
        if let Some(from) = w.deferred {
            w.next = 0;
            w.from = from;
            w.deferred = None;
            w.pass(doc)?;
            if w.deferred.is_some() {
                return Err(anyhow!(
                    "{}: internal error: a second read still found kinds it did not know",
                    w.origin(&w.location)
                ));
            }
        }
    }
    Ok(())
}

/// Splits a YAML stream into its documents' texts, each with the number of
/// lines before it: serde-saphyr's streaming entry point reads one
/// document, and a document read twice (above) needs its own text. YAML
/// forbids `---` and `...` followed by a space or line end at the start of
/// a line anywhere but as document markers (even in block scalars), so
/// they split it; directives and comments before a `---` stay with it.
fn documents_of(text: &str) -> Vec<(u64, &str)> {
    let marker = |line: &str, m: &str| {
        line.strip_prefix(m)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t', '\r', '\n']))
    };
    let mut docs = Vec::new();
    let (mut start, mut start_line) = (0, 0u64);
    let mut has_document = false;
    let mut offset = 0;
    for (n, line) in text.split_inclusive('\n').enumerate() {
        let n = n as u64;
        if marker(line, "---") {
            if has_document {
                docs.push((start_line, &text[start..offset]));
                (start, start_line) = (offset, n);
            }
            has_document = true;
        } else if marker(line, "...") {
            let end = offset + line.len();
            docs.push((start_line, &text[start..end]));
            (start, start_line) = (end, n + 1);
            has_document = false;
        } else {
            let t = line.trim_start();
            if !(t.is_empty() || t.starts_with('#') || line.starts_with('%')) {
                has_document = true;
            }
        }
        offset += line.len();
    }
    if start < text.len() {
        docs.push((start_line, &text[start..]));
    }
    docs
}

/// One document's reading: the objects it hands over and what a read
/// needs to know about earlier ones. Objects (the document and List
/// items) are numbered in file order, the same in every read.
struct Walker<'a> {
    objects: &'a mut Objects,
    file: &'a Path,
    /// "" or "document N".
    location: String,
    /// The document's number among the file's non-empty ones.
    number: usize,
    lines_before: u64,
    /// The number of the next object.
    next: usize,
    /// Objects numbered below this were handed over by an earlier read.
    from: usize,
    /// The first object that could not be typed when read: from it on,
    /// this read hands nothing over.
    deferred: Option<usize>,
    /// Kinds learnt after the content they govern, by object number.
    late_kinds: HashMap<usize, String>,
    /// Reading only for this object's name (for an error message).
    want_name: Option<usize>,
    name: Option<String>,
    /// Why reading stopped, when it was not the YAML's own error.
    failure: Option<anyhow::Error>,
    /// Object `n` ("origin: Kind") failed its typed read at this field.
    unnamed: Option<(usize, String, String)>,
    /// The document is empty.
    null: bool,
}

impl Walker<'_> {
    fn origin(&self, location: &str) -> Origin {
        Origin {
            file: self.file.to_path_buf(),
            location: location.to_string(),
        }
    }

    /// Whether object `n` is handed over by this read.
    fn hands_over(&self, n: usize) -> bool {
        n >= self.from && self.deferred.is_none() && self.want_name.is_none()
    }

    /// Stops reading for `e`; the error serde-saphyr carries out is a
    /// placeholder.
    fn fail<E: de::Error>(&mut self, e: anyhow::Error) -> E {
        self.failure = Some(e);
        E::custom("stopped")
    }

    /// Reads the document once.
    fn run(&mut self, doc: &str) -> Result<(), serde_saphyr::Error> {
        serde_saphyr::with_deserializer_from_str_with_options(doc, options(), |de| {
            ObjectSeed {
                w: &mut *self,
                location: None,
                implied: Implied::Known(None),
                depth: 0,
            }
            .deserialize(de)
        })
    }

    /// Reads the document once; errors name the file, the object and the
    /// field, or the line of broken YAML.
    fn pass(&mut self, doc: &str) -> Result<()> {
        let Err(e) = self.run(doc) else {
            return Ok(());
        };
        if let Some(failure) = self.failure.take() {
            return Err(failure);
        }
        let syntax = |w: &Self, e: &serde_saphyr::Error| {
            anyhow!(
                "{}: invalid YAML in document {}{}: {}",
                w.file.display(),
                w.number,
                position(e, w.lines_before),
                message(e)
            )
        };
        match self.unnamed.take() {
            Some((n, object, field)) if !is_syntax(&e) => {
                // Read again for the name (the typed read consumed it),
                // which also finds broken YAML further on in the object:
                // that is the error to report.
                let name = self.name_of(n, doc).map_err(|e| syntax(self, &e))?;
                let at = position(&e, self.lines_before);
                Err(anyhow!("field {field}: {}{at}", message(&e)))
                    .context(format!("{object} {name}"))
            }
            _ => Err(syntax(self, &e)),
        }
    }

    /// The name of object `n`, read again for an error message; the
    /// error if the YAML breaks before the object ends.
    fn name_of(&mut self, n: usize, doc: &str) -> Result<String, serde_saphyr::Error> {
        self.next = 0;
        self.want_name = Some(n);
        self.name = None;
        let result = self.run(doc);
        self.want_name = None;
        self.failure = None;
        match result {
            Err(e) if is_syntax(&e) => Err(e),
            _ => Ok(self.name.take().unwrap_or_else(|| "<unnamed>".to_string())),
        }
    }
}

/// The kind of an object's List's items, for items that name none.
#[derive(Clone)]
enum Implied {
    /// Known: `None` for a plain `List` (and a document).
    Known(Option<String>),
    /// The List's `kind` has not come yet.
    Pending,
}

/// Reads one object (a document or a List item).
struct ObjectSeed<'w, 'a> {
    w: &'w mut Walker<'a>,
    /// `None` for the document itself.
    location: Option<String>,
    implied: Implied,
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for ObjectSeed<'_, '_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        let n = self.w.next;
        self.w.next += 1;
        let location = self.location.unwrap_or_else(|| self.w.location.clone());
        if self.depth > MAX_FLOW_DEPTH {
            let e = anyhow!(
                "{}: Lists nested deeper than {MAX_FLOW_DEPTH} levels",
                self.w.origin(&location)
            );
            return Err(self.w.fail(e));
        }
        de.deserialize_any(ObjectVisitor {
            w: self.w,
            n,
            location,
            implied: self.implied,
            depth: self.depth,
            document: n == 0,
        })
    }
}

struct ObjectVisitor<'w, 'a> {
    w: &'w mut Walker<'a>,
    n: usize,
    location: String,
    implied: Implied,
    depth: usize,
    document: bool,
}

impl ObjectVisitor<'_, '_> {
    fn not_object<E: de::Error>(self, found: &str) -> Result<(), E> {
        let e = anyhow!(
            "{}: expected a Kubernetes object, found {found}",
            self.w.origin(&self.location)
        );
        Err(self.w.fail(e))
    }

    /// Reads the rest of an object sift skips or reads later, keeping its
    /// name.
    fn scan<'de, A: MapAccess<'de>>(
        map: &mut A,
        w: &mut Walker<'_>,
        n: usize,
        mut pending_key: Option<String>,
        name: &mut Option<String>,
    ) -> Result<(), A::Error> {
        loop {
            let key = match pending_key.take() {
                Some(k) => k,
                None => match map.next_key::<String>()? {
                    Some(k) => k,
                    None => return Ok(()),
                },
            };
            if key == "metadata" {
                read_name(map, w, n, name)?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
    }
}

/// Reads `metadata` leniently for its name: a malformed one is the typed
/// read's to report. The name is kept as soon as it is read, for an
/// error further on in the same metadata (read again for the name).
fn read_name<'de, A: MapAccess<'de>>(
    map: &mut A,
    w: &mut Walker<'_>,
    n: usize,
    name: &mut Option<String>,
) -> Result<(), A::Error> {
    if w.want_name == Some(n) {
        map.next_value_seed(NameSeed(&mut w.name))
    } else {
        map.next_value_seed(NameSeed(name))
    }
}

struct NameSeed<'n>(&'n mut Option<String>);

impl<'de> DeserializeSeed<'de> for NameSeed<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NameSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("metadata")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "name" {
                if let Value::String(s) = map.next_value()? {
                    *self.0 = Some(s);
                }
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
}

macro_rules! not_object {
    ($($method:ident($($t:ty)?) => $what:expr),* $(,)?) => {
        $(fn $method<E: de::Error>(self $(, _: $t)?) -> Result<(), E> {
            self.not_object($what)
        })*
    };
}

impl<'de> Visitor<'de> for ObjectVisitor<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Kubernetes object")
    }

    not_object! {
        visit_bool(bool) => "a boolean",
        visit_i64(i64) => "a number",
        visit_u64(u64) => "a number",
        visit_f64(f64) => "a number",
        visit_str(&str) => "a string",
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        if self.document {
            self.w.null = true;
            return Ok(());
        }
        self.not_object("null")
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.visit_unit()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        self.not_object("an array")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let ObjectVisitor {
            w,
            n,
            location,
            implied,
            depth,
            document: _,
        } = self;
        let BeforeKind {
            kind,
            api_version,
            mut name,
            pending_key,
            early_items,
            late,
            items_not_array,
        } = read_to_kind(&mut map, w, n, &location, &implied, depth)?;
        let origin = w.origin(&location);
        let Some(kind) = kind else {
            // The map is read through and names no kind.
            return match implied {
                Implied::Pending if !early_items => {
                    if w.hands_over(n) {
                        w.deferred = Some(n);
                    }
                    Ok(())
                }
                Implied::Pending => Err(w.fail(anyhow!(
                    "{origin}: its items came before a kind, and it has none while its List's kind has not come yet; put kind first"
                ))),
                Implied::Known(_) => Err(w.fail(object_kind(None, None, &origin).unwrap_err())),
            };
        };
        if early_items || late {
            w.late_kinds.insert(n, kind.clone());
        }
        if let Some(item_kind) = list_item_kind(&kind) {
            if let Some(t) = items_not_array {
                return Err(w.fail(anyhow!("{origin}: items must be an array, found {t}")));
            }
            return read_list(&mut map, w, &location, item_kind, depth, pending_key);
        }
        if early_items {
            return Err(w.fail(anyhow!(
                "{origin}: items came before kind and were read as a List's, but it is a {kind}; put kind first"
            )));
        }
        let kept = is_kept(&kind);
        if kept && w.hands_over(n) && !late {
            let rest = Resumed {
                api_version,
                pending_key,
                map: &mut map,
            };
            return match deserialize_kept(&kind, MapAccessDeserializer::new(rest)) {
                Some(Ok(kept)) => w.objects.keep(kept, origin).map_err(|e| w.fail(e)),
                Some(Err(e)) => {
                    // Named and placed once serde-saphyr's error is out
                    // (`pass`).
                    w.unnamed = Some((n, format!("{origin}: {kind}"), e.path().to_string()));
                    Err(e.into_inner())
                }
                None => Ok(()),
            };
        }
        ObjectVisitor::scan(&mut map, w, n, pending_key, &mut name)?;
        if w.want_name == Some(n) {
            return Err(de::Error::custom("found"));
        }
        if kept {
            if late && w.hands_over(n) {
                w.deferred = Some(n);
            }
        } else if w.hands_over(n) {
            let name = name.as_deref().unwrap_or("<unnamed>");
            w.objects.skipped.push(format!("{origin}: {kind} {name}"));
        }
        Ok(())
    }
}

/// What an object's map gave up to its kind (or through, when it names
/// none): the rest of the map is read knowing the kind.
#[derive(Default)]
struct BeforeKind {
    kind: Option<String>,
    api_version: Option<String>,
    name: Option<String>,
    /// The key read after the kind's place, for the rest to start with.
    pending_key: Option<String>,
    /// Items read as a List's before the kind was known.
    early_items: bool,
    /// Fields (or a non-sequence `items`) before the kind.
    late: bool,
    items_not_array: Option<&'static str>,
}

/// Reads object `n`'s map up to its kind: its own `kind`, the kind a
/// second read learnt, or its List's at the first other field.
fn read_to_kind<'de, A: MapAccess<'de>>(
    map: &mut A,
    w: &mut Walker<'_>,
    n: usize,
    location: &str,
    implied: &Implied,
    depth: usize,
) -> Result<BeforeKind, A::Error> {
    let mut before = BeforeKind {
        kind: w.late_kinds.get(&n).cloned(),
        ..BeforeKind::default()
    };
    if before.kind.is_some() {
        return Ok(before);
    }
    while let Some(key) = map.next_key::<String>()? {
        match key.as_str() {
            "kind" => {
                let v: Value = map.next_value()?;
                match object_kind(Some(&v), None, &w.origin(location)) {
                    Ok(k) => before.kind = Some(k),
                    Err(e) => return Err(w.fail(e)),
                }
                break;
            }
            "apiVersion" if !before.late && before.api_version.is_none() => {
                before.api_version = map.next_value()?;
            }
            "items" if !matches!(implied, Implied::Known(Some(_))) => {
                match map.next_value_seed(ItemsSeed {
                    w: &mut *w,
                    location,
                    implied: Implied::Pending,
                    depth,
                    strict: false,
                })? {
                    Items::Read(count) => before.early_items |= count > 0,
                    Items::Null => {}
                    Items::Other(t) => {
                        before.items_not_array = Some(t);
                        before.late = true;
                    }
                }
            }
            _ => {
                if let Implied::Known(Some(k)) = implied {
                    before.kind = Some(k.clone());
                    before.pending_key = Some(key);
                    break;
                }
                before.late = true;
                if key == "metadata" {
                    read_name(map, w, n, &mut before.name)?;
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
    }
    if before.kind.is_none()
        && let Implied::Known(Some(k)) = implied
    {
        before.kind = Some(k.clone());
    }
    Ok(before)
}

/// Reads the rest of a List's map, from `pending_key` on: its `items`,
/// each an object of `item_kind` unless it says its own.
fn read_list<'de, A: MapAccess<'de>>(
    map: &mut A,
    w: &mut Walker<'_>,
    location: &str,
    item_kind: Option<&str>,
    depth: usize,
    mut pending_key: Option<String>,
) -> Result<(), A::Error> {
    let implied = Implied::Known(item_kind.map(str::to_string));
    loop {
        let key = match pending_key.take() {
            Some(k) => k,
            None => match map.next_key::<String>()? {
                Some(k) => k,
                None => break,
            },
        };
        if key == "items" {
            map.next_value_seed(ItemsSeed {
                w: &mut *w,
                location,
                implied: implied.clone(),
                depth,
                strict: true,
            })?;
        } else {
            map.next_value::<IgnoredAny>()?;
        }
    }
    Ok(())
}

/// What an `items` value was.
enum Items {
    /// A sequence of this many items, each read as an object.
    Read(usize),
    Null,
    /// Not a sequence: its type.
    Other(&'static str),
}

struct ItemsSeed<'w, 'a, 'l> {
    w: &'w mut Walker<'a>,
    location: &'l str,
    implied: Implied,
    depth: usize,
    /// The object is a List: anything but a sequence is an error.
    strict: bool,
}

impl<'de> DeserializeSeed<'de> for ItemsSeed<'_, '_, '_> {
    type Value = Items;

    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<Items, D::Error> {
        de.deserialize_any(self)
    }
}

impl ItemsSeed<'_, '_, '_> {
    fn other<E: de::Error>(self, what: &'static str) -> Result<Items, E> {
        if self.strict {
            let e = anyhow!(
                "{}: items must be an array, found {what}",
                self.w.origin(self.location)
            );
            return Err(self.w.fail(e));
        }
        Ok(Items::Other(what))
    }
}

macro_rules! items_other {
    ($($method:ident($t:ty) => $what:expr),* $(,)?) => {
        $(fn $method<E: de::Error>(self, _: $t) -> Result<Items, E> {
            self.other($what)
        })*
    };
}

impl<'de> Visitor<'de> for ItemsSeed<'_, '_, '_> {
    type Value = Items;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a List's items")
    }

    items_other! {
        visit_bool(bool) => "a boolean",
        visit_i64(i64) => "a number",
        visit_u64(u64) => "a number",
        visit_f64(f64) => "a number",
        visit_str(&str) => "a string",
    }

    fn visit_unit<E: de::Error>(self) -> Result<Items, E> {
        Ok(Items::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Items, E> {
        Ok(Items::Null)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Items, A::Error> {
        if !self.strict {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        }
        self.other("an object")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Items, A::Error> {
        let mut i = 0;
        loop {
            let item = ObjectSeed {
                w: &mut *self.w,
                location: Some(item_location(self.location, i)),
                implied: self.implied.clone(),
                depth: self.depth + 1,
            };
            if seq.next_element_seed(item)?.is_none() {
                return Ok(Items::Read(i));
            }
            i += 1;
        }
    }
}

/// An object's map from where its kind was found on, with the
/// `apiVersion` read before it and the key read after it given back, for
/// its typed read to see them (k8s-openapi checks `apiVersion`).
struct Resumed<'m, A> {
    api_version: Option<String>,
    pending_key: Option<String>,
    map: &'m mut A,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Resumed<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        if self.api_version.is_some() {
            return seed
                .deserialize(StrDeserializer::<A::Error>::new("apiVersion"))
                .map(Some);
        }
        if let Some(key) = self.pending_key.take() {
            return seed
                .deserialize(StringDeserializer::<A::Error>::new(key))
                .map(Some);
        }
        self.map.next_key_seed(seed)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        match self.api_version.take() {
            Some(v) => seed.deserialize(StringDeserializer::<A::Error>::new(v)),
            None => self.map.next_value_seed(seed),
        }
    }
}
