//! The host's folders are layers (see `host/src/lib.rs`): a module may use
//! only modules of lower layers. This reads every `crate::` path in
//! `host/src` and fails on an edge the table does not allow, so an import
//! circle or an upward import cannot creep in.

use std::collections::BTreeMap;
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
    ("cli", 9),
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
