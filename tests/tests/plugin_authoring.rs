//! What writing or adding a plugin relies on: the SDK's smallest filter
//! filters, end to end (`tests/plugins/minimal-filter` through
//! `sift filter`), and the hand-kept lists of bundled plugins agree (the
//! workspace, the host's dependencies and native registrations, the build
//! script, the config's defaults). `tests/README.md` says where things go.

use std::collections::BTreeSet;
use std::process::Command;

fn read(path: &str) -> String {
    let full = sift_tests::workspace_root().join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

/// A filter that implements `filter` and nothing else rejects the nodes
/// it should: the SDK's default `prepare` proceeds (it used to skip, which
/// left such a filter passing every node without a word).
#[test]
fn a_filter_implementing_only_filter_rejects_nodes() {
    let plugin = sift_tests::workspace_root()
        .join("target/test-plugins/sift_test_plugin_minimal_filter.wasm");
    assert!(
        plugin.is_file(),
        "no test plugin at {}: run `bash scripts/build-plugins.sh` first",
        plugin.display()
    );
    let dir = sift_tests::temp_dir("minimal-filter");
    let node = |name: &str, labels: serde_json::Value| {
        serde_json::json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
        })
    };
    let cluster = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [
        node("node-a", serde_json::json!({})),
        node("node-b", serde_json::json!({"spot": "true"})),
    ]});
    let pod = serde_json::json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"containers": [{"name": "web", "image": "web:1"}]}
    });
    let write = |file: &str, v: &serde_json::Value| {
        let path = dir.join(file);
        std::fs::write(&path, v.to_string()).unwrap();
        path
    };
    let (cluster, pod) = (write("cluster.json", &cluster), write("pod.json", &pod));
    let o = Command::new(sift_tests::sift_bin())
        .arg("filter")
        .arg("--cluster")
        .arg(&cluster)
        .arg("--pod")
        .arg(&pod)
        .args(["-o", "json", "--plugin"])
        .arg(&plugin)
        .env("SIFT_PLUGINS_DIR", sift_tests::plugins_dir())
        .env("SIFT_CACHE_DIR", dir.join("cache"))
        .env_remove("SIFT_LOG")
        .output()
        .expect("run sift");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(
        out[0]["feasibleNodes"],
        serde_json::json!(["node-a"]),
        "{out}"
    );
    assert_eq!(
        out[0]["statuses"]["node-b"],
        serde_json::json!({
            "code": "UnschedulableAndUnresolvable",
            "plugin": "MinimalFilter",
            "reasons": ["node(s) were spot instances"]
        }),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The crate directories under `folder` (those with a Cargo.toml), with
/// their package names.
fn crates_in(folder: &str) -> Vec<(String, String)> {
    let root = sift_tests::workspace_root().join(folder);
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&root).unwrap() {
        let dir = entry.unwrap().path();
        let manifest = dir.join("Cargo.toml");
        if !manifest.is_file() {
            continue;
        }
        let text = std::fs::read_to_string(&manifest).unwrap();
        let name = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("name = "))
            .map(|n| n.trim_matches('"').to_string())
            .unwrap_or_default();
        let dir = dir.file_name().unwrap().to_string_lossy().into_owned();
        out.push((dir, name));
    }
    out.sort();
    out
}

/// The quoted strings of `key = [ ... ]` in a TOML text.
fn toml_array(text: &str, key: &str) -> BTreeSet<String> {
    let start = text
        .find(&format!("{key} = ["))
        .unwrap_or_else(|| panic!("no {key} = ["));
    let body = &text[start..];
    let body = &body[..body.find(']').unwrap()];
    body.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The words of a bash array `name=(a b c)`.
fn bash_array(text: &str, name: &str) -> BTreeSet<String> {
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name}=(")))
        .unwrap_or_else(|| panic!("no {name}=( line"));
    line.trim_end_matches(')')
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// Identifiers that follow `prefix` in `text`, e.g. the crates of
/// `sift_plugin_x::sift_native_plugin()`.
fn idents_after(text: &str, prefix: &str) -> BTreeSet<String> {
    text.match_indices(prefix)
        .map(|(i, _)| {
            let rest = &text[i + prefix.len()..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                .unwrap_or(rest.len());
            rest[..end].to_string()
        })
        .collect()
}

/// What `list` lacks of `want`, and holds beyond it.
fn disagreements(list: &str, have: &BTreeSet<String>, want: &BTreeSet<String>) -> Vec<String> {
    let missing = want
        .difference(have)
        .map(|p| format!("{list}: {p} is missing"));
    let extra = have
        .difference(want)
        .map(|p| format!("{list}: {p} is listed but is no plugin crate"));
    missing.chain(extra).collect()
}

/// Each place that lists the bundled plugins, checked against the plugin
/// crates in `plugins/` (package `sift-plugin-<dir>`); each problem names
/// the list to edit and the plugin.
#[test]
fn the_lists_of_bundled_plugins_agree() {
    let mut problems = Vec::new();
    let plugin_crates = crates_in("plugins");
    let bundled: BTreeSet<String> = plugin_crates
        .iter()
        .filter(|(_, name)| name.starts_with("sift-plugin-"))
        .map(|(dir, name)| {
            if *name != format!("sift-plugin-{dir}") {
                problems.push(format!(
                    "plugins/{dir}/Cargo.toml: the package is {name}, expected sift-plugin-{dir}"
                ));
            }
            dir.clone()
        })
        .collect();
    assert!(bundled.contains("node-name"), "no plugin crates found");
    let test_plugins: BTreeSet<String> = crates_in("tests/plugins")
        .into_iter()
        .map(|(dir, _)| dir)
        .collect();

    // Workspace members: every crate under plugins/ (libraries too) and
    // every test plugin.
    let members = toml_array(&read("Cargo.toml"), "members");
    let members_of = |folder: &str| -> BTreeSet<String> {
        members
            .iter()
            .filter_map(|m| m.strip_prefix(folder))
            .filter(|m| !m.contains('/'))
            .map(str::to_string)
            .collect()
    };
    let all_plugin_crates = plugin_crates.iter().map(|(d, _)| d.clone()).collect();
    problems.extend(disagreements(
        "Cargo.toml (workspace members, plugins/...)",
        &members_of("plugins/"),
        &all_plugin_crates,
    ));
    problems.extend(disagreements(
        "Cargo.toml (workspace members, tests/plugins/...)",
        &members_of("tests/plugins/"),
        &test_plugins,
    ));

    // The host depends on every bundled plugin, by path.
    let host = read("host/Cargo.toml");
    let deps: BTreeSet<String> = host
        .lines()
        .filter_map(|l| l.strip_prefix("sift-plugin-"))
        .map(|l| {
            let dir = l.split([' ', '=']).next().unwrap().to_string();
            if !l.contains(&format!("path = \"../plugins/{dir}\"")) {
                problems.push(format!(
                    "host/Cargo.toml: sift-plugin-{dir} is not at path ../plugins/{dir}"
                ));
            }
            dir
        })
        .collect();
    problems.extend(disagreements(
        "host/Cargo.toml (dependencies)",
        &deps,
        &bundled,
    ));

    // ... and registers each for --native.
    let native: BTreeSet<String> =
        idents_after(&read("host/src/plugins/native.rs"), "sift_plugin_")
            .into_iter()
            .map(|c| c.replace('_', "-"))
            .collect();
    problems.extend(disagreements(
        "host/src/plugins/native.rs (builtin())",
        &native,
        &bundled,
    ));

    // The build script builds each component.
    let script = read("scripts/build-plugins.sh");
    problems.extend(disagreements(
        "scripts/build-plugins.sh (plugins=)",
        &bash_array(&script, "plugins"),
        &bundled,
    ));
    problems.extend(disagreements(
        "scripts/build-plugins.sh (tests=)",
        &bash_array(&script, "tests"),
        &test_plugins,
    ));

    // Every default the config names is a built-in plugin of that kind.
    let builtin = sift_host::plugins::native::builtin();
    let declares = |name: &str, point: sift_sdk::ExtensionPoints| {
        builtin
            .iter()
            .any(|p| p.name == name && p.extension_points.contains(point))
    };
    let filters = sift_host::config::DEFAULT_FILTERS
        .iter()
        .map(|n| ("config::DEFAULT_FILTERS", *n))
        .chain(
            sift_host::config::batch::VOLCANO_PREDICATES
                .iter()
                .map(|n| ("config::batch::VOLCANO_PREDICATES", *n)),
        );
    for (list, name) in filters {
        if !declares(name, sift_sdk::ExtensionPoints::FILTER) {
            problems.push(format!("{list}: {name} is no built-in filter"));
        }
    }
    for (name, _) in sift_host::config::DEFAULT_SCORES {
        if !declares(name, sift_sdk::ExtensionPoints::SCORE) {
            problems.push(format!(
                "config::DEFAULT_SCORES: {name} is no built-in scorer"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "the lists of bundled plugins disagree (tests/README.md lists them):\n  {}",
        problems.join("\n  ")
    );
}

/// The checker's parsers on small texts, so a format change in a list
/// fails here rather than passing silently with nothing read.
#[test]
fn the_list_readers_read_what_they_should() {
    let toml = "[workspace]\nmembers = [\n    \"a\",\n    \"plugins/b\",\n]\n";
    assert_eq!(
        toml_array(toml, "members"),
        BTreeSet::from(["a".to_string(), "plugins/b".to_string()])
    );
    let sh = "x=1\nplugins=(node-name gpu-share)\n";
    assert_eq!(
        bash_array(sh, "plugins"),
        BTreeSet::from(["node-name".to_string(), "gpu-share".to_string()])
    );
    let rs = "sift_plugin_node_name::sift_native_plugin(),\nsift_plugin_gpu_share::x";
    assert_eq!(
        idents_after(rs, "sift_plugin_"),
        BTreeSet::from(["node_name".to_string(), "gpu_share".to_string()])
    );
}
