//! The host's folders are layers (see `host/src/lib.rs`): a module may use
//! only modules of lower layers. This reads every `crate::` path in
//! `host/src` and fails on an edge the table does not allow, so an import
//! circle or an upward import cannot creep in. Inside a folder, of the
//! host, the SDK or a plugin, files may not use each other in a circle
//! either (`no_import_circle_between_files_of_one_folder`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level modules by layer, as in `host/src/lib.rs`.
const LAYERS: &[(&str, u32)] = &[
    ("text", 0),
    ("input", 1),
    ("config", 2),
    ("cluster", 2),
    ("engine", 3),
    ("runtime", 3),
    ("contract", 4),
    ("plugins", 5),
    ("output", 6),
    ("simulate", 6),
    ("framework", 7),
    ("serve", 8),
    ("conformance", 8),
    ("bench", 8),
    ("authoring", 8),
    ("schedule", 9),
    ("cli", 10),
];

fn layer(module: &str) -> Option<u32> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|(_, l)| *l)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file belongs to (`serve/http.rs` -> `serve`).
fn owner(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

/// Every `crate::NAME` in the code (comments included: a doc link to a
/// higher layer is a dependency of the reader's, too).
fn crate_refs(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("crate::") {
        let before = rest[..i].chars().next_back();
        rest = &rest[i + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // e.g. `sift_crate::`
        }
        if rest.starts_with('{') {
            let end = rest.find('}').unwrap_or(rest.len());
            for part in rest[1..end].split(',') {
                out.push(head(part.trim()));
            }
        } else {
            out.push(head(rest));
        }
    }
    out.retain(|m| !m.is_empty());
    out
}

fn head(path: &str) -> String {
    path.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

#[test]
fn host_modules_import_only_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../host/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut bad = BTreeMap::new();
    let mut unknown = Vec::new();
    for file in &files {
        let from = owner(&src, file);
        if from == "lib" || from == "main" {
            continue;
        }
        let Some(from_layer) = layer(&from) else {
            unknown.push(format!("{} (module {from})", file.display()));
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        for to in crate_refs(&text) {
            if to == from {
                continue;
            }
            match layer(&to) {
                Some(l) if l < from_layer => {}
                Some(l) => {
                    bad.insert(
                        format!("{from} (layer {from_layer}) -> {to} (layer {l})"),
                        file.display().to_string(),
                    );
                }
                None => unknown.push(format!("{}: crate::{to}", file.display())),
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "modules missing from LAYERS (add them here and to lib.rs's table): {unknown:#?}"
    );
    assert!(bad.is_empty(), "imports against the layers: {bad:#?}");
}

#[test]
fn the_checker_sees_grouped_and_plain_paths() {
    let refs = crate_refs("use crate::{engine::Engine, cluster};\nlet x = crate::serve::run;");
    assert_eq!(refs, ["engine", "cluster", "serve"]);
}

// Import circles between the files of one folder.
//
// Layers order the folders; inside a folder, files could still use each
// other both ways, and then neither can be read, tested or moved alone.
// For each folder, its direct entries (a file, or a subfolder as one node;
// the folder's own `mod.rs`/`lib.rs`/`main.rs` is their parent, not a node)
// form a graph with an edge X -> Y when code in X refers to something in Y.
// References are `crate::`, `super::` and `self::` paths, in code,
// comments (doc links) and strings (serde's `with = "crate::..."`); a path
// ending on a name a parent imports from a child counts as the child.

/// Crate sources checked besides `host/src` and `plugin-sdk/src`.
fn plugin_sources(plugins: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(plugins).unwrap() {
        let dir = entry.unwrap().path();
        if dir.join("src").is_dir() {
            out.push(dir.join("src"));
        } else if dir.is_dir() {
            for nested in std::fs::read_dir(&dir).unwrap() {
                let src = nested.unwrap().path().join("src");
                if src.is_dir() {
                    out.push(src);
                }
            }
        }
    }
    out.sort();
    out
}

#[test]
fn no_import_circle_between_files_of_one_folder() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut sources = vec![repo.join("host/src"), repo.join("plugin-sdk/src")];
    sources.extend(plugin_sources(&repo.join("plugins")));
    let mut circles = Vec::new();
    for src in &sources {
        circles.extend(import_circles(&repo, src));
    }
    assert!(
        circles.is_empty(),
        "import circles between files of one folder:\n{}",
        circles
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// One strongly connected set of a folder's entries, with the edges that
/// tie it (each with the first reference seen).
#[derive(Debug)]
struct Circle {
    files: Vec<String>,
    edges: Vec<String>,
}

impl std::fmt::Display for Circle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "  {}", self.files.join(" <-> "))?;
        for edge in &self.edges {
            writeln!(f, "    {edge}")?;
        }
        Ok(())
    }
}

/// How a byte of a source file reads: braces and `mod` blocks count in
/// code only; paths are read everywhere.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Code,
    Comment,
    Text,
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Marks comments, string literals and char literals (not lifetimes), so
/// that a `'{'` or a `"}"` does not unbalance the braces.
fn classify(src: &[u8]) -> Vec<Kind> {
    let mut kinds = vec![Kind::Code; src.len()];
    let mut i = 0;
    while i < src.len() {
        let start = i;
        let kind = if src[i..].starts_with(b"//") {
            while i < src.len() && src[i] != b'\n' {
                i += 1;
            }
            Kind::Comment
        } else if src[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < src.len() {
                if src[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if src[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            Kind::Comment
        } else if let Some((open, hashes)) = raw_string_start(src, i) {
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            i = open + 1;
            while i < src.len() && !src[i..].starts_with(&close) {
                i += 1;
            }
            i += close.len();
            Kind::Text
        } else if src[i] == b'"' {
            i += 1;
            while i < src.len() && src[i] != b'"' {
                i += if src[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            Kind::Text
        } else if src[i] == b'\'' && src.get(i + 1) == Some(&b'\\') {
            i += 3;
            while i < src.len() && src[i] != b'\'' {
                i += 1;
            }
            i += 1;
            Kind::Text
        } else if src[i] == b'\'' {
            // One char (of 1-4 bytes) then a quote; else a lifetime.
            let len = src
                .get(i + 1)
                .map_or(1, |b| b.leading_ones().max(1) as usize);
            if src.get(i + 1 + len) != Some(&b'\'') {
                i += 1;
                continue;
            }
            i += len + 2;
            Kind::Text
        } else {
            i += 1;
            continue;
        };
        let end = i.min(src.len());
        kinds[start..end].fill(kind);
        i = end;
    }
    kinds
}

/// `r"`, `r#"`, `br##"`...: the opening quote's index and the `#` count.
fn raw_string_start(src: &[u8], i: usize) -> Option<(usize, usize)> {
    if i > 0 && is_ident(src[i - 1]) {
        return None;
    }
    let mut j = i;
    if src.get(j) == Some(&b'b') {
        j += 1;
    }
    if src.get(j) != Some(&b'r') {
        return None;
    }
    j += 1;
    let hashes = src[j..].iter().take_while(|&&b| b == b'#').count();
    (src.get(j + hashes) == Some(&b'"')).then_some((j + hashes, hashes))
}

/// One leaf of a use tree: its path, the name it binds (`as` included),
/// and whether it is a glob.
#[derive(Debug, PartialEq)]
struct Leaf {
    path: Vec<String>,
    name: String,
    glob: bool,
}

/// Parses a path or use tree at `i` (`a::b::{c, d::{e as f}, g::*}`)
/// under `prefix`; returns where it ends. Inside a group, line-comment
/// markers count as blanks, so a doc comment's group spanning lines reads.
fn use_tree(
    src: &[u8],
    mut i: usize,
    prefix: &[String],
    grouped: bool,
    out: &mut Vec<Leaf>,
) -> usize {
    let blank = |b: u8| b.is_ascii_whitespace() || grouped && (b == b'/' || b == b'!');
    let mut path = prefix.to_vec();
    loop {
        while i < src.len() && blank(src[i]) {
            i += 1;
        }
        if src.get(i) == Some(&b'*') {
            out.push(Leaf {
                name: String::new(),
                path,
                glob: true,
            });
            return i + 1;
        }
        if src.get(i) == Some(&b'{') {
            i += 1;
            loop {
                while i < src.len()
                    && (blank(src[i]) || src[i].is_ascii_whitespace() || src[i] == b',')
                {
                    i += 1;
                }
                if i >= src.len() || src[i] == b'}' {
                    return i + 1;
                }
                let before = i;
                i = use_tree(src, i, &path, true, out);
                if i == before {
                    return i; // not a use tree after all
                }
            }
        }
        let start = i;
        while i < src.len() && is_ident(src[i]) {
            i += 1;
        }
        if i == start {
            return i;
        }
        let segment = String::from_utf8_lossy(&src[start..i]).into_owned();
        if segment == "self" && grouped && path.len() == prefix.len() && !path.is_empty() {
            // `{self, ...}` names the group's module.
            let name = path.last().cloned().unwrap();
            out.push(Leaf {
                path,
                name,
                glob: false,
            });
            return i;
        }
        path.push(segment);
        let mut j = i;
        while j < src.len() && blank(src[j]) {
            j += 1;
        }
        if src[j..].starts_with(b"::") && !src[j + 2..].starts_with(b"<") {
            i = j + 2;
            continue;
        }
        let mut name = path.last().cloned().unwrap();
        if src[j..].starts_with(b"as ") {
            let at = j + 3;
            let end = at + src[at..].iter().take_while(|&&b| is_ident(b)).count();
            name = String::from_utf8_lossy(&src[at..end]).into_owned();
            i = end;
        }
        out.push(Leaf {
            path,
            name,
            glob: false,
        });
        return i;
    }
}

/// What one file says about modules: the absolute paths it refers to
/// (`crate::`/`super::`/`self::` resolved against the module the text is
/// in, inline `mod` blocks included), the names its top-level `use`s bind,
/// and the items it defines at top level.
#[derive(Default)]
struct Scan {
    refs: Vec<(Vec<String>, String)>,
    uses: Vec<Leaf>,
    defines: BTreeSet<String>,
}

fn word_at(src: &[u8], i: usize, word: &[u8]) -> bool {
    src[i..].starts_with(word)
        && (i == 0 || !is_ident(src[i - 1]))
        && src.get(i + word.len()).is_none_or(|&b| !is_ident(b))
}

fn ident_after(src: &[u8], mut i: usize) -> (String, usize) {
    while i < src.len() && (src[i].is_ascii_whitespace() || src[i] == b'!') {
        i += 1;
    }
    let start = i;
    while i < src.len() && is_ident(src[i]) {
        i += 1;
    }
    (String::from_utf8_lossy(&src[start..i]).into_owned(), i)
}

const ITEM_KEYWORDS: &[&str] = &[
    "fn",
    "struct",
    "enum",
    "trait",
    "type",
    "const",
    "static",
    "union",
    "macro_rules",
];

fn scan(text: &str, module: &[String]) -> Scan {
    let src = text.as_bytes();
    let kinds = classify(src);
    let mut scan = Scan::default();
    let mut depth = 0usize;
    // Inline `mod name {` blocks open: their names and the depth outside.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut i = 0;
    while i < src.len() {
        let code = kinds[i] == Kind::Code;
        if code && src[i] == b'{' {
            depth += 1;
        } else if code && src[i] == b'}' {
            depth = depth.saturating_sub(1);
            if inline.last().is_some_and(|(_, d)| *d == depth) {
                inline.pop();
            }
        } else if code && word_at(src, i, b"mod") {
            let (name, end) = ident_after(src, i + 3);
            let open = end
                + src[end..]
                    .iter()
                    .take_while(|b| b.is_ascii_whitespace())
                    .count();
            if src.get(open) == Some(&b'{') {
                inline.push((name.clone(), depth));
            }
            if depth == 0 {
                scan.defines.insert(name);
            }
        } else if code && depth == 0 && word_at(src, i, b"use") {
            let mut leaves = Vec::new();
            let end = use_tree(src, i + 3, &[], false, &mut leaves);
            let written = words(&src[i..end]);
            for leaf in &leaves {
                if let Some(path) = absolute(&current(module, &inline), &leaf.path) {
                    scan.refs.push((path, written.clone()));
                }
            }
            scan.uses.extend(leaves);
            i = end.max(i + 1);
            continue;
        } else if code
            && depth == 0
            && let Some(k) = ITEM_KEYWORDS.iter().find(|k| word_at(src, i, k.as_bytes()))
        {
            scan.defines.insert(ident_after(src, i + k.len()).0);
        }
        let starts_path = ["crate::", "super::", "self::"]
            .iter()
            .any(|k| src[i..].starts_with(k.as_bytes()))
            && (i == 0 || !is_ident(src[i - 1]))
            && !(i >= 2 && &src[i - 2..i] == b"::");
        if starts_path {
            let mut leaves = Vec::new();
            let end = use_tree(src, i, &[], false, &mut leaves);
            let written = words(&src[i..end]);
            for leaf in leaves {
                if let Some(path) = absolute(&current(module, &inline), &leaf.path) {
                    scan.refs.push((path, written.clone()));
                }
            }
            i = end.max(i + 1);
            continue;
        }
        i += 1;
    }
    scan
}

/// Source text on one line, for a report.
fn words(src: &[u8]) -> String {
    let text = String::from_utf8_lossy(src);
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The module at a point of a file: the file's, then the inline blocks.
fn current(module: &[String], inline: &[(String, usize)]) -> Vec<String> {
    let mut here = module.to_vec();
    here.extend(inline.iter().map(|(name, _)| name.clone()));
    here
}

/// A path from the module `here` made absolute: `crate::a` is `[a]`,
/// `super::super::b` climbs twice. `None` for a path on another crate.
fn absolute(here: &[String], path: &[String]) -> Option<Vec<String>> {
    let mut out = here.to_vec();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            out.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        Some("super") => {
            while rest.first().is_some_and(|s| s == "super") {
                out.pop()?;
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    out.extend(rest.iter().cloned());
    Some(out)
}

/// A crate's source folder as modules: `a/b.rs` and `a/b/mod.rs` are
/// `[a, b]`, the root file is `[]`.
struct Modules {
    files: BTreeMap<Vec<String>, (PathBuf, Scan)>,
}

impl Modules {
    fn read(src: &Path) -> Modules {
        let mut paths = Vec::new();
        rust_files(src, &mut paths);
        let mut files = BTreeMap::new();
        for path in paths {
            let rel = path.strip_prefix(src).unwrap();
            let mut module: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let last = module.pop().unwrap();
            let stem = last.trim_end_matches(".rs");
            let root = module.is_empty() && (stem == "lib" || stem == "main");
            if stem != "mod" && !root {
                module.push(stem.to_string());
            }
            // A crate with both lib.rs and main.rs: lib.rs owns the modules.
            if root && stem == "main" && src.join("lib.rs").exists() {
                continue;
            }
            let scan = scan(&std::fs::read_to_string(&path).unwrap(), &module);
            files.insert(module, (path, scan));
        }
        Modules { files }
    }

    fn is_module(&self, module: &[String]) -> bool {
        self.files.contains_key(module)
    }

    fn has_children(&self, module: &[String]) -> bool {
        self.files
            .keys()
            .any(|m| m.len() == module.len() + 1 && m.starts_with(module))
    }

    /// The file modules an absolute path lands in: down the module files
    /// that exist, then, on a name a parent imports (`pub use child::X`,
    /// a glob over a child that defines it), on to where it comes from.
    fn resolve(&self, path: &[String], hops: usize) -> Vec<Vec<String>> {
        let mut module: Vec<String> = Vec::new();
        let mut i = 0;
        while i < path.len() && self.is_module(&[&module[..], &path[i..=i]].concat()) {
            module.push(path[i].clone());
            i += 1;
        }
        if i == path.len() || hops > 16 || !self.has_children(&module) {
            return vec![module];
        }
        let name = &path[i];
        let scan = &self.files[&module].1;
        let mut out = Vec::new();
        for leaf in scan.uses.iter().filter(|l| !l.glob && l.name == *name) {
            if let Some(mut target) = self.import_path(&module, &leaf.path) {
                target.extend(path[i + 1..].iter().cloned());
                out.extend(self.resolve(&target, hops + 1));
            }
        }
        for leaf in scan.uses.iter().filter(|l| l.glob) {
            let Some(from) = self.import_path(&module, &leaf.path) else {
                continue;
            };
            let Some((_, glob)) = self.files.get(&from) else {
                continue;
            };
            if glob.defines.contains(name) || glob.uses.iter().any(|l| l.name == *name) {
                out.extend(self.resolve(&[&from[..], &path[i..]].concat(), hops + 1));
            }
        }
        if out.is_empty() {
            out.push(module);
        }
        out
    }

    /// A `use` path of `module` made absolute: `crate::`/`self::`/`super::`,
    /// or a child module's name; `None` for another crate's.
    fn import_path(&self, module: &[String], path: &[String]) -> Option<Vec<String>> {
        absolute(module, path).or_else(|| {
            let child = [module, &path[..1]].concat();
            self.is_module(&child).then(|| [module, path].concat())
        })
    }
}

/// Every folder's circles under `src`, named by paths relative to `repo`.
fn import_circles(repo: &Path, src: &Path) -> Vec<Circle> {
    let modules = Modules::read(src);
    // Per folder (its module path): edges between its entries, each with
    // the first reference that made it.
    let mut folders: BTreeMap<Vec<String>, BTreeMap<(String, String), String>> = BTreeMap::new();
    for (from, (path, scan)) in &modules.files {
        for (reference, written) in &scan.refs {
            for to in modules.resolve(reference, 0) {
                let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
                if common == from.len() || common == to.len() {
                    continue; // within one entry, or parent and child
                }
                let rel = path.strip_prefix(repo).unwrap_or(path);
                folders
                    .entry(from[..common].to_vec())
                    .or_default()
                    .entry((from[common].clone(), to[common].clone()))
                    .or_insert_with(|| format!("{} says {written}", rel.display()));
            }
        }
    }
    let mut circles = Vec::new();
    for (folder, edges) in folders {
        let dir = folder.iter().fold(src.to_path_buf(), |d, m| d.join(m));
        let show = |entry: &str| {
            let path = dir.join(entry);
            let rel = path
                .strip_prefix(repo)
                .unwrap_or(&path)
                .display()
                .to_string();
            if path.is_dir() {
                format!("{rel}/")
            } else {
                format!("{rel}.rs")
            }
        };
        for set in strongly_connected(&edges) {
            let files = set.iter().map(|e| show(e)).collect();
            let edges = edges
                .iter()
                .filter(|((a, b), _)| set.contains(a) && set.contains(b))
                .map(|((a, b), why)| format!("{} -> {}: {why}", show(a), show(b)))
                .collect();
            circles.push(Circle { files, edges });
        }
    }
    circles
}

/// The sets of two or more nodes that reach each other.
fn strongly_connected(edges: &BTreeMap<(String, String), String>) -> Vec<BTreeSet<String>> {
    let nodes: BTreeSet<&String> = edges.keys().flat_map(|(a, b)| [a, b]).collect();
    let reach = |start: &String| {
        let mut seen = BTreeSet::from([start.clone()]);
        let mut todo = vec![start.clone()];
        while let Some(n) = todo.pop() {
            for (_, b) in edges.keys().filter(|(a, _)| *a == n) {
                if seen.insert(b.clone()) {
                    todo.push(b.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> =
        nodes.iter().map(|n| (*n, reach(n))).collect();
    let mut sets: Vec<BTreeSet<String>> = Vec::new();
    for n in &nodes {
        let set: BTreeSet<String> = reaches[n]
            .iter()
            .filter(|m| reaches[m].contains(*n))
            .cloned()
            .collect();
        if set.len() > 1 && !sets.contains(&set) {
            sets.push(set);
        }
    }
    sets
}

/// Writes `files` under a fresh temporary folder and returns it.
fn synthetic_tree(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let root = std::env::temp_dir().join(format!("sift-layers-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    root
}

/// A folder whose `mod.rs` re-exports from both files; `square.rs`'s
/// tests end with `last`. `round.rs` uses `square.rs` through a glob.
fn shapes_tree(name: &str, last: &str) -> PathBuf {
    let square = format!(
        "//! Squares.\n\
         /// A square's own circle: the parent's `Circle` is round's.\n\
         pub struct Circle;\n\
         pub fn side() -> f64 {{ 1.0 }}\n\
         #[cfg(test)]\n\
         mod tests {{\n    \
             fn brace() -> char {{ '}}' }}\n    \
             {last}\n\
         }}\n"
    );
    synthetic_tree(
        name,
        &[
            ("src/lib.rs", "pub mod shapes;\n"),
            (
                "src/shapes/mod.rs",
                "mod round;\nmod square;\n\
                 pub use self::round::{Circle, Oval as Ellipse};\n\
                 pub use square::*;\n",
            ),
            (
                "src/shapes/round.rs",
                "use crate::shapes::side;\npub struct Circle;\npub struct Oval;\n",
            ),
            ("src/shapes/square.rs", &square),
        ],
    )
}

#[test]
fn the_circle_checker_finds_a_circle_through_a_re_export() {
    // `super::super` from square's tests is the folder's mod.rs, whose
    // `Ellipse` is round's `Oval`: round -> square -> round.
    let root = shapes_tree(
        "circle",
        "/// Not [`super::super::Ellipse`].\n    #[test]\n    fn t() {}",
    );
    let circles = import_circles(&root, &root.join("src"));
    let files: Vec<_> = circles.iter().map(|c| c.files.clone()).collect();
    assert_eq!(
        files,
        [["src/shapes/round.rs", "src/shapes/square.rs"]],
        "{circles:?}"
    );
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn the_circle_checker_passes_a_tree_without_one() {
    // In the tests block, past a `'}'`, `super` is square itself: its own
    // `Circle`, not the one the parent re-exports from round.
    let root = shapes_tree("no-circle", "use super::Circle;");
    let circles = import_circles(&root, &root.join("src"));
    assert!(circles.is_empty(), "{circles:?}");
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn the_circle_checker_reads_use_trees() {
    let mut leaves = Vec::new();
    let src = b"crate::{a, b::{self, c as d}, e::*};";
    let end = use_tree(src, 0, &[], false, &mut leaves);
    assert_eq!(src[end], b';');
    let read: Vec<_> = leaves
        .iter()
        .map(|l| (l.path.join("::"), l.name.as_str(), l.glob))
        .collect();
    assert_eq!(
        read,
        [
            ("crate::a".to_string(), "a", false),
            ("crate::b".to_string(), "b", false),
            ("crate::b::c".to_string(), "d", false),
            ("crate::e".to_string(), "", true),
        ]
    );
}
