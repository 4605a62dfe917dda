//! `sift new`: a plugin project that builds and passes its starter case,
//! in the languages sift has a tested path for.
//!
//! The starters, the same in every language: a filter rejects a node
//! labelled `sift.io/<plugin-name>: deny` (UnschedulableAndUnresolvable,
//! reason `node(s) were denied by <PluginName>`) and passes the others; a
//! scorer gives 100 to a node labelled `sift.io/<plugin-name>: prefer` and
//! 0 to the others.

use crate::authoring::componentize::contract_wit;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

/// The languages `sift new` has a tested starter for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    Rust,
    C,
    Go,
    Python,
    Js,
    Wat,
}

/// What the starter plugin is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Filter,
    Score,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Filter => "filter",
            Kind::Score => "score",
        }
    }
}

/// What `sift new` is asked, as plain data (the command line's flags are
/// parsed in the CLI); each field is the flag or argument of that name.
#[derive(Clone, Debug)]
pub struct Options {
    pub lang: Lang,
    pub kind: Kind,
    /// In kebab case; the plugin declares it in PascalCase.
    pub name: String,
    /// Default: ./NAME.
    pub dir: Option<PathBuf>,
    /// The sift-sdk crate for Rust plugins (default: the checkout's).
    pub sdk: Option<PathBuf>,
}

fn pascal(name: &str) -> String {
    name.split(['-', '_'])
        .filter(|s| !s.is_empty())
        .map(|s| {
            let mut c = s.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// The longest plugin project name `sift new` takes.
const MAX_NAME: usize = 50;

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.ends_with('-')
}

fn write(dir: &Path, file: &str, text: &str) -> Result<()> {
    let path = dir.join(file);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// The SDK of the checkout `sift` was built in: `<root>/target/<profile>/sift`.
fn default_sdk() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let root = exe.parent()?.parent()?.parent()?;
    let sdk = root.join("plugin-sdk");
    sdk.join("Cargo.toml").is_file().then_some(sdk)
}

/// The starter case: one node labelled (`deny` for a filter, `prefer`
/// for a scorer), one not.
fn starter_case(name: &str, plugin: &str, kind: Kind) -> String {
    let node = |n: &str, labelled: bool| {
        let mut labels = serde_json::json!({ "kubernetes.io/hostname": n });
        if labelled {
            let value = if kind == Kind::Filter {
                "deny"
            } else {
                "prefer"
            };
            labels[format!("sift.io/{name}")] = value.into();
        }
        serde_json::json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": { "name": n, "labels": labels },
            "status": { "allocatable": { "cpu": "4", "memory": "8Gi", "pods": "110" } }
        })
    };
    let pod = serde_json::json!({ "apiVersion": "v1", "kind": "Pod",
             "metadata": { "name": "web", "namespace": "default" },
             "spec": { "containers": [{ "name": "web", "image": "web:1" }] } });
    if kind == Kind::Score {
        let case = serde_json::json!({
            "name": format!("{plugin} prefers nodes labelled sift.io/{name}=prefer"),
            "mode": "scheduler",
            "config": { "plugins": { "score": {
                "disabled": [{ "name": "*" }],
                "enabled": [{ "name": plugin, "weight": 1 }] } } },
            "filters": [],
            "nodes": [node("node-a", false), node("node-b", true)],
            "workload": [pod],
            "expect": {
                "binds": { "default/web": "node-b" },
                "scores": { plugin: { "node-a": 0, "node-b": 100 } }
            }
        });
        return serde_json::to_string_pretty(&case).unwrap_or_default() + "\n";
    }
    let case = serde_json::json!({
        "name": format!("{plugin} rejects nodes labelled sift.io/{name}=deny"),
        "filters": [plugin],
        "nodes": [node("node-a", false), node("node-b", true)],
        "pod": pod,
        "expect": {
            "feasible": ["node-a"],
            "statuses": { "node-b": {
                "code": "UnschedulableAndUnresolvable", "plugin": plugin,
                "reasons": [format!("node(s) were denied by {plugin}")] } }
        }
    });
    serde_json::to_string_pretty(&case).unwrap_or_default() + "\n"
}

/// A project's files, with `{{name}}` (kebab case), `{{Plugin}}` (the
/// declared name), `{{crate}}` (snake case: the component's file name),
/// `{{sdk}}` and `{{sift}}` (this sift executable) filled in. Every project
/// has `build.sh`, which writes `{{crate}}.wasm` beside it.
type Template = &'static [(&'static str, &'static str)];

macro_rules! template {
    ($lang:literal: $($file:literal),+ $(,)?) => {
        &[$(($file, include_str!(concat!("../../templates/", $lang, "/", $file)))),+]
    };
}

const RUST: Template = template!("rust": "Cargo.toml", "build.sh", "README.md");
const PYTHON: Template = template!("python": "build.sh", "README.md", ".gitignore");
const WAT: Template = template!("wat": "build.sh", "README.md");
const C: Template = template!("c": "build.sh", "README.md");
const GO: Template = template!("go": "go.mod", "build.sh", "README.md", ".gitignore");
const JS: Template = template!(
    "js": "package.json", "package-lock.json", "build.sh", "README.md", ".gitignore",
);

/// The starter's source file (path, template), by language and kind;
/// `None` for WAT's, which `wat_starter` writes. WAT has no scorer: its
/// starter shows contract 0.1's raw ABI, before scores.
fn starter_source(lang: Lang, kind: Kind) -> Result<Option<(&'static str, &'static str)>> {
    macro_rules! file {
        ($path:literal, $template:literal) => {
            Some(($path, include_str!(concat!("../../templates/", $template))))
        };
    }
    Ok(match (lang, kind) {
        (Lang::Rust, Kind::Filter) => file!("src/lib.rs", "rust/src/lib.rs"),
        (Lang::Rust, Kind::Score) => file!("src/lib.rs", "rust/src/lib_score.rs"),
        (Lang::Python, Kind::Filter) => file!("app.py", "python/app.py"),
        (Lang::Python, Kind::Score) => file!("app.py", "python/app_score.py"),
        (Lang::Js, Kind::Filter) => file!("plugin.js", "js/plugin.js"),
        (Lang::Js, Kind::Score) => file!("plugin.js", "js/plugin_score.js"),
        (Lang::C, Kind::Filter) => file!("plugin.c", "c/plugin.c"),
        (Lang::C, Kind::Score) => file!("plugin.c", "c/plugin_score.c"),
        (Lang::Go, Kind::Filter) => file!("main.go", "go/main.go"),
        (Lang::Go, Kind::Score) => file!("main.go", "go/main_score.go"),
        (Lang::Wat, Kind::Filter) => None,
        (Lang::Wat, Kind::Score) => bail!(
            "--kind score is not available for {lang:?}: its starter shows contract 0.1's raw ABI, \
             before scores (rust, c, go, python and js have score starters)"
        ),
    })
}

/// The contract the Python, JavaScript, Go and C SDKs are written against (a
/// test checks they are): a new contract version reaches them when they
/// are ported, not by itself.
const SDK_CONTRACT: &str = "0.7.0";

/// The Python and JavaScript SDKs, copied into the project beside the
/// plugin: componentize-py and componentize-qjs resolve imports inside it.
const PYTHON_SDK: Template = &[(
    "sift.py",
    include_str!("../../../plugin-sdk/python/sift.py"),
)];
const JS_SDK: Template = &[("sift.js", include_str!("../../../plugin-sdk/js/sift.js"))];

/// sift's C SDK (plugin-sdk/c), copied into a C project's sdk/.
const C_SDK: Template = &[
    ("sdk/sift.h", include_str!("../../../plugin-sdk/c/sift.h")),
    ("sdk/sift.c", include_str!("../../../plugin-sdk/c/sift.c")),
];

/// sift's Go SDK (plugin-sdk/go), copied verbatim into a Go project's sdk/:
/// a Go module cannot import a package from outside its tree without a
/// module proxy, which plugin authors may not reach.
const GO_SDK: Template = &[
    ("sdk/go.mod", include_str!("../../../plugin-sdk/go/go.mod")),
    (
        "sdk/component.sh",
        include_str!("../../../plugin-sdk/go/component.sh"),
    ),
    (
        "sdk/patch_core.py",
        include_str!("../../../plugin-sdk/go/patch_core.py"),
    ),
    (
        "sdk/sift/abi.go",
        include_str!("../../../plugin-sdk/go/sift/abi.go"),
    ),
    (
        "sdk/sift/adapter.go",
        include_str!("../../../plugin-sdk/go/sift/adapter.go"),
    ),
    (
        "sdk/sift/doc.go",
        include_str!("../../../plugin-sdk/go/sift/doc.go"),
    ),
    (
        "sdk/sift/cluster.go",
        include_str!("../../../plugin-sdk/go/sift/cluster.go"),
    ),
    (
        "sdk/sift/exports.go",
        include_str!("../../../plugin-sdk/go/sift/exports.go"),
    ),
    (
        "sdk/sift/plugin.go",
        include_str!("../../../plugin-sdk/go/sift/plugin.go"),
    ),
    (
        "sdk/sift/types.go",
        include_str!("../../../plugin-sdk/go/sift/types.go"),
    ),
];

/// Writes the project; returns its directory.
pub fn run(a: Options) -> Result<PathBuf> {
    if a.name.len() > MAX_NAME {
        bail!(
            "{:?} is {} characters long: a plugin name has at most {MAX_NAME}",
            a.name,
            a.name.len()
        );
    }
    if !valid_name(&a.name) {
        bail!(
            "{:?} is not a plugin name: lowercase letters, digits and '-', starting with a letter",
            a.name
        );
    }
    let declared = pascal(&a.name);
    if crate::config::DEFAULT_FILTERS.contains(&declared.as_str()) || declared == "GpuModel" {
        tracing::warn!(
            "{} will declare the plugin name {declared:?}, which a bundled plugin has: loaded \
             from the same plugins directory, sift refuses both unless the config's \
             pluginFiles names the file that serves {declared:?}; to run beside it, choose \
             another name",
            a.name
        );
    }
    let dir = a.dir.clone().unwrap_or_else(|| PathBuf::from(&a.name));
    if dir.exists() && std::fs::read_dir(&dir).map(|mut d| d.next().is_some())? {
        bail!("{} exists and is not empty", dir.display());
    }
    let plugin = pascal(&a.name);
    let source = starter_source(a.lang, a.kind)?;
    let crate_name = a.name.replace('-', "_");
    let mut sdk = String::new();
    // build.sh falls back to this sift when none is on PATH.
    let sift_exe = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "sift".into());
    let template = match a.lang {
        Lang::Rust => {
            let path = a.sdk.clone().or_else(default_sdk).with_context(|| {
                "cannot find sift-sdk: pass --sdk PATH (the plugin-sdk directory of a sift checkout)"
            })?;
            let path = std::fs::canonicalize(&path)
                .with_context(|| format!("no sift-sdk at {}", path.display()))?;
            sdk = path.display().to_string();
            RUST
        }
        Lang::Python => {
            for (file, text) in PYTHON_SDK {
                write(&dir, file, text)?;
            }
            PYTHON
        }
        Lang::Wat => {
            write(&dir, "plugin.wat", &wat_starter(&a.name, &plugin))?;
            WAT
        }
        Lang::C => {
            for (file, text) in C_SDK {
                write(&dir, file, text)?;
            }
            C
        }
        Lang::Go => {
            for (file, text) in GO_SDK {
                write(&dir, file, text)?;
            }
            make_executable(&dir.join("sdk/component.sh"))?;
            GO
        }
        Lang::Js => {
            for (file, text) in JS_SDK {
                write(&dir, file, text)?;
            }
            JS
        }
    };
    write(
        &dir,
        "cases/001-starter.json",
        &starter_case(&a.name, &plugin, a.kind),
    )?;
    match a.lang {
        // The SDK carries the latest contract.
        Lang::Rust => {}
        // Their SDKs' contract, which componentize-py and componentize-qjs
        // bind at build time, C's build writes bindings of, and Go's SDK is
        // written out for.
        Lang::Python | Lang::Js | Lang::Go | Lang::C => {
            write(&dir, "wit/predicate.wit", contract_wit(SDK_CONTRACT)?)?;
        }
        // The WAT starter is written against 0.1, which sift keeps running.
        Lang::Wat => {
            write(&dir, "wit/predicate.wit", contract_wit("0.1.0")?)?;
        }
    }
    // Scripts quote it in '...'.
    let sift_quoted = sift_exe.replace('\'', "'\\''");
    for (file, text) in template.iter().chain(source.as_ref()) {
        let sift = if file.ends_with(".sh") {
            &sift_quoted
        } else {
            &sift_exe
        };
        let text = text
            .replace("{{name}}", &a.name)
            .replace("{{Plugin}}", &plugin)
            .replace("{{crate}}", &crate_name)
            .replace("{{sdk}}", &sdk)
            .replace("{{sift}}", sift)
            .replace("{{kind}}", a.kind.as_str());
        write(&dir, file, &text)?;
        if file.ends_with(".sh") {
            make_executable(&dir.join(file))?;
        }
    }
    Ok(dir)
}

fn make_executable(path: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
            .with_context(|| format!("cannot make {} executable", path.display()))?;
    }
    Ok(())
}

/// `bytes` as the escapes of a WAT data string (`\03\00...`).
fn wat_bytes(bytes: impl IntoIterator<Item = u8>) -> String {
    bytes.into_iter().map(|b| format!("\\{b:02x}")).collect()
}

/// A WAT starter: keeps one "denied" byte per slot.
fn wat_starter(name: &str, plugin: &str) -> String {
    let label = format!("sift.io/{name}");
    let reason = format!("node(s) were denied by {plugin}");
    let status = wat_bytes([3u8, 0, 0, 0, 0x90, 0x01, 0, 0, 1, 0, 0, 0]);
    let reasons = wat_bytes([2048, reason.len() as u32].map(u32::to_le_bytes).concat());
    format!(
        r#";; {plugin}: rejects nodes labelled `{label}: deny`. Canonical ABI layouts are
;; explained in sift's docs/plugin-authors.md and wit/predicate.wit.
(module
  (memory (export "memory") 4)
  (global $heap (mut i32) (i32.const 131072))
  (data (i32.const 16) "{plugin}")
  (data (i32.const 1024) "{label}")
  (data (i32.const 2048) "{reason}")
  ;; the one status filter returns, and its reason list at 400
  (data (i32.const 320) "{status}")
  (data (i32.const 400) "{reasons}")
  (func (export "cabi_realloc") (param $old i32) (param $old_size i32) (param $align i32) (param $size i32) (result i32)
    (local $ptr i32)
    (local.set $ptr (i32.and (i32.add (global.get $heap) (i32.sub (local.get $align) (i32.const 1)))
                             (i32.sub (i32.const 0) (local.get $align))))
    (global.set $heap (i32.add (local.get $ptr) (local.get $size)))
    (if (i32.gt_u (global.get $heap) (i32.mul (memory.size) (i32.const 65536)))
      (then (if (i32.eq (memory.grow (i32.add (i32.const 1) (i32.div_u (i32.sub (global.get $heap)
              (i32.mul (memory.size) (i32.const 65536))) (i32.const 65536)))) (i32.const -1)) (then unreachable))))
    (local.get $ptr))
  (func $eq (param $a i32) (param $al i32) (param $b i32) (param $bl i32) (result i32)
    (local $i i32)
    (if (i32.ne (local.get $al) (local.get $bl)) (then (return (i32.const 0))))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $i) (local.get $al)))
      (if (i32.ne (i32.load8_u (i32.add (local.get $a) (local.get $i))) (i32.load8_u (i32.add (local.get $b) (local.get $i))))
        (then (return (i32.const 0))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next)))
    (i32.const 1))
  (func (export "sift:predicate/predicate@0.1.0#describe") (result i32)
    (i32.store (i32.const 448) (i32.const 16))
    (i32.store (i32.const 452) (i32.const {plugin_len}))
    (i32.store8 (i32.const 456) (i32.const 1))
    (i32.const 448))
  (func (export "sift:predicate/predicate@0.1.0#init") (param i32 i32) (result i32)
    (global.set $heap (i32.const 131072))
    (i32.store8 (i32.const 448) (i32.const 0))
    (i32.const 448))
  ;; one byte per slot at 65536: 1 = denied
  (func (export "sift:predicate/predicate@0.1.0#sync-nodes") (param $up i32) (param $nup i32) (param $rm i32) (param $nrm i32)
    (local $i i32) (local $e i32) (local $j i32) (local $l i32) (local $deny i32)
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $i) (local.get $nup)))
      (local.set $e (i32.add (local.get $up) (i32.mul (local.get $i) (i32.const 136))))
      (local.set $deny (i32.const 0))
      (local.set $j (i32.const 0))
      (block $ldone (loop $lnext
        (br_if $ldone (i32.ge_u (local.get $j) (i32.load offset=20 (local.get $e))))
        (local.set $l (i32.add (i32.load offset=16 (local.get $e)) (i32.mul (local.get $j) (i32.const 16))))
        (if (call $eq (i32.load (local.get $l)) (i32.load offset=4 (local.get $l)) (i32.const 1024) (i32.const {label_len}))
          (then (if (i32.eq (i32.load offset=12 (local.get $l)) (i32.const 4))
            (then (if (i32.eq (i32.load (i32.load offset=8 (local.get $l))) (i32.const 0x796e6564)) ;; "deny"
              (then (local.set $deny (i32.const 1))))))))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $lnext)))
      (if (i32.lt_u (i32.load (local.get $e)) (i32.const 65536))
        (then (i32.store8 (i32.add (i32.const 65536) (i32.load (local.get $e))) (local.get $deny))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next)))
    (global.set $heap (i32.const 131072)))
  (func (export "sift:predicate/predicate@0.1.0#prepare") (param i32) (result i32)
    (global.set $heap (i32.const 131072))
    (i32.store8 (i32.const 448) (i32.const 0))
    (i32.const 448))
  (func (export "sift:predicate/predicate@0.1.0#filter") (param $slots i32) (param $len i32) (result i32)
    (local $out i32) (local $count i32) (local $i i32) (local $slot i32)
    (local.set $out (call 0 (i32.const 0) (i32.const 0) (i32.const 4) (i32.mul (local.get $len) (i32.const 8))))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
      (local.set $slot (i32.load (i32.add (local.get $slots) (i32.mul (local.get $i) (i32.const 4)))))
      (if (i32.and (i32.lt_u (local.get $slot) (i32.const 65536)) (i32.load8_u (i32.add (i32.const 65536) (local.get $slot))))
        (then
          (i32.store (i32.add (local.get $out) (i32.mul (local.get $count) (i32.const 8))) (local.get $i))
          (i32.store offset=4 (i32.add (local.get $out) (i32.mul (local.get $count) (i32.const 8))) (i32.const 0))
          (local.set $count (i32.add (local.get $count) (i32.const 1)))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next)))
    (i32.store (i32.const 448) (i32.const 320))
    (i32.store (i32.const 452) (i32.const 1))
    (i32.store (i32.const 456) (local.get $out))
    (i32.store (i32.const 460) (local.get $count))
    (global.set $heap (i32.const 131072))
    (i32.const 448))
)
"#,
        plugin_len = plugin.len(),
        label_len = label.len(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sdks_are_on_the_contract_their_projects_get() {
        let [(_, python)] = PYTHON_SDK else { panic!() };
        let [(_, js)] = JS_SDK else { panic!() };
        assert!(js.contains(&format!("sift:predicate/log@{SDK_CONTRACT}")));
        let (_, go) = GO_SDK
            .iter()
            .find(|(file, _)| file.ends_with("exports.go"))
            .unwrap();
        assert!(go.contains(&format!("sift:predicate/log@{SDK_CONTRACT} log")));
        assert!(go.contains(&format!("sift:predicate/predicate@{SDK_CONTRACT}#filter")));
        // C's build writes the bindings sdk/sift.c implements.
        let (_, c_build) = C.iter().find(|(file, _)| *file == "build.sh").unwrap();
        assert!(c_build.contains(&format!("--contract {SDK_CONTRACT}")));
        // The Python SDK's records are those of that contract's bindings;
        // its docstring names the WIT it was written for.
        assert!(python.contains(&format!("wit/{SDK_CONTRACT}")));
        assert!(crate::contract::Version::parse(SDK_CONTRACT).is_ok());
    }

    #[test]
    fn names() {
        assert_eq!(pascal("gpu-model"), "GpuModel");
        assert!(valid_name("gpu-model2"));
        assert!(!valid_name("Gpu"));
        assert!(!valid_name("gpu-"));
        assert!(!valid_name("9gpu"));
    }
}
