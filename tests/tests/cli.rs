//! The `sift` command line, end to end on files.

use std::path::Path;
use std::process::{Command, Output};

fn sift(args: &[&str]) -> Output {
    Command::new(sift_tests::sift_bin())
        .args(args)
        .env("SIFT_PLUGINS_DIR", sift_tests::plugins_dir())
        .env("SIFT_CACHE_DIR", sift_tests::temp_dir("cli-cache"))
        .current_dir(sift_tests::workspace_root())
        .output()
        .expect("run sift")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn filter_demo_cluster_as_json() {
    let o = sift(&[
        "filter",
        "--cluster",
        "tests/data/demo/cluster.json",
        "--pod",
        "tests/data/demo/pods.yaml",
        "-o",
        "json",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let cycles = v.as_array().unwrap();
    assert_eq!(cycles.len(), 3);
    // web needs host port 8080, already taken on ip-10-0-1-11.
    let web = &cycles[0];
    assert_eq!(web["statuses"]["ip-10-0-1-11"]["plugin"], "NodePorts");
    assert_eq!(web["numFeasibleNodesToFind"], 6);
    // trainer: only the GPU node.
    assert_eq!(
        cycles[1]["feasibleNodes"],
        serde_json::json!(["ip-10-0-3-31"])
    );
    // analytics: nothing fits; the message is kube-scheduler's.
    assert_eq!(
        cycles[2]["message"],
        "0/6 nodes are available: 1 node(s) were unschedulable, 2 node(s) had untolerated taint(s), \
         3 Insufficient cpu, 3 Insufficient memory."
    );
}

/// A dump where Deployments spread over zones and keep apart
/// (`tests/data/spread/gen.py` works out each expectation from upstream's
/// rules): `sift filter` schedules its pending pods as kube-scheduler would.
#[test]
fn filter_a_dump_with_spread_and_affinity_matches_kube_scheduler() {
    let o = sift(&[
        "filter",
        "--cluster",
        "tests/data/spread/cluster.json",
        "-o",
        "json",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let cycle = |pod: &str| {
        v.as_array()
            .unwrap()
            .iter()
            .find(|c| c["pod"] == pod)
            .unwrap_or_else(|| panic!("no cycle for {pod}: {out}"))
            .clone()
    };
    let status = |c: &serde_json::Value, node: &str| {
        let s = &c["statuses"][node];
        (
            s["code"].as_str().unwrap_or("").to_string(),
            s["plugin"].as_str().unwrap_or("").to_string(),
            s["reasons"][0].as_str().unwrap_or("").to_string(),
        )
    };
    let s = |code: &str, plugin: &str, reason: &str| {
        (code.to_string(), plugin.to_string(), reason.to_string())
    };

    let web = cycle("shop/web-7d9f8-ddddd");
    assert_eq!(web["feasibleNodes"], serde_json::json!(["node-c1"]));
    for n in ["node-a1", "node-a2", "node-b1"] {
        assert_eq!(
            status(&web, n),
            s(
                "Unschedulable",
                "PodTopologySpread",
                "node(s) didn't match pod topology spread constraints"
            )
        );
    }
    let cache = cycle("shop/cache-0");
    assert_eq!(cache["feasibleNodes"], serde_json::json!(["node-c1"]));
    assert_eq!(
        status(&cache, "node-a2"),
        s(
            "Unschedulable",
            "InterPodAffinity",
            "node(s) didn't match pod anti-affinity rules"
        )
    );
    let db = cycle("data/db-0");
    assert_eq!(
        db["feasibleNodes"],
        serde_json::json!(["node-a1", "node-b1", "node-a2"])
    );
    assert_eq!(
        status(&db, "node-c1"),
        s(
            "UnschedulableAndUnresolvable",
            "InterPodAffinity",
            "node(s) didn't match pod affinity rules"
        )
    );
    let batch = cycle("shop/batch-0");
    assert_eq!(
        status(&batch, "node-c1"),
        s(
            "Unschedulable",
            "InterPodAffinity",
            "node(s) didn't satisfy existing pods anti-affinity rules"
        )
    );
    let none = cycle("shop/cache-1");
    assert_eq!(none["feasibleNodes"], serde_json::json!([]));
    assert_eq!(
        none["message"],
        "0/4 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, \
         3 node(s) didn't match pod anti-affinity rules."
    );
}

#[test]
fn filter_table_is_the_default() {
    let o = sift(&[
        "filter",
        "--cluster",
        "tests/data/demo/cluster.json",
        "--pod",
        "tests/data/demo/pods.yaml",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        out.contains("NODE") && out.contains("message: 0/6 nodes are available"),
        "{out}"
    );
}

#[test]
fn malformed_input_names_file_and_field() {
    let dir = sift_tests::temp_dir("cli-bad");
    let bad = dir.join("nodes.json");
    std::fs::write(
        &bad,
        r#"{"kind":"Node","metadata":{"name":"a"},"spec":{"unschedulable":"yes"}}"#,
    )
    .unwrap();
    let o = sift(&[
        "filter",
        "--cluster",
        bad.to_str().unwrap(),
        "--pod",
        "tests/data/demo/pods.yaml",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err.contains("nodes.json") && err.contains("spec.unschedulable"),
        "{err}"
    );
    let truncated = dir.join("pods.yaml");
    std::fs::write(&truncated, "kind: Pod\nmetadata: {name: [unclosed\n").unwrap();
    let o = sift(&[
        "filter",
        "--cluster",
        "tests/data/demo/cluster.json",
        "--pod",
        truncated.to_str().unwrap(),
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err.contains("pods.yaml") && err.contains("invalid YAML"),
        "{err}"
    );
}

#[test]
fn unknown_config_keys_are_rejected() {
    let dir = sift_tests::temp_dir("cli-config");
    let cfg = dir.join("sift.yaml");
    std::fs::write(&cfg, "percentageOfNodesToScore: 50\nparalelism: 4\n").unwrap();
    let o = sift(&[
        "filter",
        "--config",
        cfg.to_str().unwrap(),
        "--cluster",
        "tests/data/demo/cluster.json",
        "--pod",
        "tests/data/demo/pods.yaml",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err.contains("sift.yaml") && err.contains("paralelism"),
        "{err}"
    );
}

#[test]
fn conformance_reports_and_exits_nonzero_on_failure() {
    let o = sift(&["conformance", "tests/cases/NodeName"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert!(out.trim_end().ends_with("passed, 0 failed"), "{out}");

    let dir = sift_tests::temp_dir("cli-conformance");
    let src = Path::new("tests/cases/NodeName");
    let first = std::fs::read_dir(sift_tests::workspace_root().join(src))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut case: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(first).unwrap()).unwrap();
    case["expect"]["feasible"] = serde_json::json!(["no-such-node"]);
    std::fs::write(dir.join("broken.json"), case.to_string()).unwrap();
    let o = sift(&["conformance", dir.to_str().unwrap()]);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        out.contains("FAIL") && out.contains("broken.json") && out.contains("0 passed, 1 failed"),
        "{out}"
    );
}

/// `expect.scores` checks each plugin's score node by node: a wrong
/// score, a node that did not pass the filters and a plugin not
/// configured each fail the case with what differs.
#[test]
fn conformance_checks_scores_node_by_node() {
    let dir = sift_tests::temp_dir("cli-scores");
    let src = sift_tests::workspace_root().join("tests/cases/Simulate/LeastAllocated/001-nothing-scheduled-resources-requested-differently-sized-nodes.json");
    let case: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(src).unwrap()).unwrap();
    assert_eq!(
        case["expect"]["scores"]["NodeResourcesFit"],
        serde_json::json!({"node1": 37, "node2": 50})
    );
    let write = |name: &str, scores: serde_json::Value| {
        let mut c = case.clone();
        c["expect"]["scores"] = scores;
        std::fs::write(dir.join(name), c.to_string()).unwrap();
    };
    write(
        "wrong.json",
        serde_json::json!({"NodeResourcesFit": {"node1": 38, "node2": 50}}),
    );
    write(
        "extra-node.json",
        serde_json::json!({"NodeResourcesFit": {"node1": 37, "node2": 50, "node3": 0}}),
    );
    write(
        "not-configured.json",
        serde_json::json!({"ImageLocality": {"node1": 0, "node2": 0}}),
    );
    let o = sift(&["conformance", dir.to_str().unwrap()]);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("0 passed, 3 failed"), "{out}");
    assert!(
        out.contains("NodeResourcesFit on node1: expected 38, got 37"),
        "{out}"
    );
    assert!(out.contains("\"node3\""), "{out}");
    assert!(
        out.contains("ImageLocality is not a configured score plugin"),
        "{out}"
    );
}

/// A scorer built for an older contract (tests/fixtures), put in place of
/// the bundled build of the same plugin, is listed with its version and
/// passes that plugin's cases beside the current plugins: old components
/// keep working when the contract moves on.
fn an_old_scorer_scores_beside_current_plugins(
    fixture: &str,
    bundled: &str,
    name: &str,
    version: &str,
    cases: &str,
) {
    let dir = sift_tests::temp_dir(&format!("cli-contract-{version}"));
    for entry in std::fs::read_dir(sift_tests::plugins_dir()).unwrap() {
        let path = entry.unwrap().path();
        let file = path.file_name().unwrap().to_str().unwrap().to_string();
        if file != bundled {
            std::fs::copy(&path, dir.join(file)).unwrap();
        }
    }
    std::fs::copy(
        sift_tests::workspace_root()
            .join("tests/fixtures")
            .join(fixture),
        dir.join("old.wasm"),
    )
    .unwrap();
    let o = sift(&["plugins", "list", "--plugins", dir.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let line = |name: &str| {
        out.lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name} not listed:\n{out}"))
            .to_string()
    };
    assert!(line(name).contains(&format!(" {version} ")), "{out}");
    let latest = sift_host::contract::SUPPORTED.last().unwrap();
    assert!(
        line("NodeResourcesFit").contains(&format!(" {latest} ")),
        "{out}"
    );
    let o = sift(&["conformance", "--plugins", dir.to_str().unwrap(), cases]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert!(out.contains(" passed, 0 failed"), "{out}");
}

#[test]
fn a_contract_0_3_scorer_scores_beside_current_plugins() {
    an_old_scorer_scores_beside_current_plugins(
        "balanced_allocation_contract_0_3.wasm",
        "sift_plugin_node_resources_balanced_allocation.wasm",
        "NodeResourcesBalancedAllocation",
        "0.3.0",
        "tests/cases/Simulate/BalancedAllocation",
    );
}

/// ImageLocality reads 0.4's images: a 0.4 build still gets them.
#[test]
fn a_contract_0_4_scorer_scores_beside_current_plugins() {
    an_old_scorer_scores_beside_current_plugins(
        "image_locality_contract_0_4.wasm",
        "sift_plugin_image_locality.wasm",
        "ImageLocality",
        "0.4.0",
        "tests/cases/Simulate/ImageLocality",
    );
}

/// PodTopologySpread reads 0.5's workload selector: a 0.5 build still gets
/// it and filters and scores its cases (the default spread included)
/// beside 0.6 plugins.
#[test]
fn a_contract_0_5_plugin_filters_and_scores_beside_current_plugins() {
    for cases in [
        "tests/cases/PodTopologySpread",
        "tests/cases/Simulate/PodTopologySpread",
    ] {
        an_old_scorer_scores_beside_current_plugins(
            "pod_topology_spread_contract_0_5.wasm",
            "sift_plugin_pod_topology_spread.wasm",
            "PodTopologySpread",
            "0.5.0",
            cases,
        );
    }
}

/// VolumeZone reads 0.6's pod volumes and whole cluster objects: a 0.6
/// build still gets them and filters its cases beside 0.7 plugins.
#[test]
fn a_contract_0_6_plugin_filters_beside_current_plugins() {
    an_old_scorer_scores_beside_current_plugins(
        "volume_zone_contract_0_6.wasm",
        "sift_plugin_volume_zone.wasm",
        "VolumeZone",
        "0.6.0",
        "tests/cases/VolumeZone",
    );
}

#[test]
fn plugins_list_and_inspect() {
    let o = sift(&["plugins", "list"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    for name in sift_host::config::DEFAULT_FILTERS {
        assert!(out.contains(name), "{name} missing from:\n{out}");
    }
    let wasm = sift_tests::plugins_dir().join("sift_plugin_node_ports.wasm");
    let o = sift(&["plugins", "inspect", wasm.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("name:         NodePorts"), "{out}");
    assert!(out.contains("node fields:  ports\n"), "{out}");
    assert!(!out.contains("objects read:"), "{out}");
    let latest = sift_host::contract::SUPPORTED.last().unwrap();
    assert!(
        out.contains(&format!("sift:predicate/predicate@{latest}")),
        "{out}"
    );
    assert!(
        out.contains(&format!("contract:     sift:predicate/plugin@{latest}")),
        "{out}"
    );
    let wasm = sift_tests::plugins_dir().join("sift_plugin_volume_zone.wasm");
    let o = sift(&["plugins", "inspect", wasm.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        out.contains("objects read: PersistentVolumeClaim, PersistentVolume, StorageClass\n"),
        "{out}"
    );
}

#[test]
fn plugin_config_for_an_unknown_plugin_is_rejected() {
    let dir = sift_tests::temp_dir("cli-plugin-config");
    let cfg = dir.join("sift.yaml");
    std::fs::write(
        &cfg,
        "pluginConfig:\n- name: NodeResourceFit\n  args: {ignoredResources: [x.io/y]}\n",
    )
    .unwrap();
    let o = sift(&[
        "conformance",
        "--config",
        cfg.to_str().unwrap(),
        "tests/cases/NodeName",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err.contains("NodeResourceFit") && err.contains("not a loaded plugin"),
        "{err}"
    );
}

/// `sift new` in each language: the project builds with its own build
/// script and passes its starter case through `sift conformance` (and the
/// Rust one its unit test).
#[test]
fn new_projects_build_and_pass_their_starter_case() {
    let base = sift_tests::temp_dir("new");
    let run = |cmd: &mut Command| {
        let o = cmd.output().expect("command runs");
        assert!(o.status.success(), "{cmd:?}: {:?}", text(&o));
    };
    // No SIFT and no sift on PATH: the build scripts of C, Go and WAT must
    // find the sift that created the project.
    let path_without_sift = std::env::join_paths(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .filter(|d| !d.join("sift").exists()),
    )
    .unwrap();
    // Go's toolchain and caches persist in target/ across runs.
    let go_build = sift_tests::workspace_root().join("target/new-go-build");
    // Every project's build.sh writes <crate>.wasm. Scorers where the
    // language's starter has one; their case checks the scores.
    let projects = ["wat", "c", "go", "js", "python", "rust"]
        .map(|l| (l, "filter"))
        .into_iter()
        .chain([
            ("c", "score"),
            ("go", "score"),
            ("js", "score"),
            ("python", "score"),
            ("rust", "score"),
        ]);
    for (lang, kind) in projects {
        let name = format!("check-{lang}-{kind}");
        let dir = base.join(&name);
        let o = sift(&[
            "new",
            "--lang",
            lang,
            "--kind",
            kind,
            &name,
            "--dir",
            dir.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{:?}", text(&o));
        run(Command::new("bash")
            .arg(dir.join("build.sh"))
            .env_remove("SIFT")
            .env("PATH", &path_without_sift)
            .env("GO_BUILD_DIR", &go_build));
        let component = format!("check_{lang}_{kind}.wasm");
        let component = dir.join(component);
        let cases = dir.join("cases");
        let o = sift(&[
            "conformance",
            "--plugin",
            component.to_str().unwrap(),
            cases.to_str().unwrap(),
        ]);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{lang} {kind}: {out} {err}");
        assert!(out.contains("1 passed, 0 failed"), "{lang} {kind}: {out}");
        if lang == "rust" {
            // Its README's `cargo test`: the predicate's unit test, natively.
            run(Command::new("cargo")
                .args(["test", "--quiet"])
                .current_dir(&dir));
        }
    }
    // A second `sift new` into the same place is refused.
    let o = sift(&[
        "new",
        "--lang",
        "wat",
        "x",
        "--dir",
        base.join("check-wat-filter").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(text(&o).1.contains("not empty"), "{:?}", text(&o));
    // A starter that does not exist yet is named, and nothing is written.
    let dir = base.join("wat-score");
    let o = sift(&[
        "new",
        "--lang",
        "wat",
        "--kind",
        "score",
        "x",
        "--dir",
        dir.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        text(&o).1.contains("--kind score is not available for Wat"),
        "{:?}",
        text(&o)
    );
    assert!(!dir.exists());
    let _ = std::fs::remove_dir_all(&base);
}

/// docs/plugin-authors.md opens with the starter `sift new` writes in each
/// language: its code blocks are the starters' code and its table their
/// line counts (not blank, not comments; Rust's up to its unit test).
#[test]
fn plugin_authors_shows_the_starters_with_their_line_counts() {
    let doc = std::fs::read_to_string(sift_tests::workspace_root().join("docs/plugin-authors.md"))
        .unwrap();
    let base = sift_tests::temp_dir("side-by-side");
    let starters = [
        ("rust", "Rust", "src/lib.rs", &["//"][..]),
        ("python", "Python", "app.py", &["#", "\"\"\""][..]),
        ("js", "JavaScript", "plugin.js", &["//"][..]),
        ("go", "Go", "main.go", &["//"][..]),
        ("c", "C", "plugin.c", &["//", "/*", "*"][..]),
        ("wat", "WAT", "plugin.wat", &[";;"][..]),
    ];
    for (lang, title, file, comments) in starters {
        let dir = base.join(lang);
        let o = sift(&[
            "new",
            "--lang",
            lang,
            "my-filter",
            "--dir",
            dir.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{lang}: {:?}", text(&o));
        let source = std::fs::read_to_string(dir.join(file)).unwrap();
        let code = source.split("#[cfg(test)]").next().unwrap();
        let lines = code
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !comments.iter().any(|c| l.starts_with(c)))
            .count();
        let row = format!("| {title} | {lines} |");
        assert!(doc.contains(&row), "docs/plugin-authors.md lacks {row:?}");
        if lang != "wat" {
            // The block shown: the file, Rust's without its unit test.
            let shown = source
                .split("/// `cargo test` runs")
                .next()
                .unwrap()
                .trim_end();
            assert!(
                doc.contains(&format!("{shown}\n```")),
                "docs/plugin-authors.md does not show the {lang} starter as `sift new` writes it"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&base);
}

/// `sift component new` makes a plugin of a core module and says what is
/// wrong with anything else.
#[test]
fn component_new_builds_plugins_and_names_bad_input() {
    let dir = sift_tests::temp_dir("component-new");
    let out = dir.join("out.wasm");
    let out_arg = out.to_str().unwrap();
    let wat = sift_tests::workspace_root().join("plugins/examples/gpu-model-wat/gpu_model.wat");
    let o = sift(&["component", "new", wat.to_str().unwrap(), "-o", out_arg]);
    assert!(o.status.success(), "{:?}", text(&o));
    let o = sift(&["plugins", "inspect", out_arg]);
    assert!(
        text(&o).0.contains("name:         GpuModel"),
        "{:?}",
        text(&o)
    );

    let cases: [(&str, &[u8], &str); 3] = [
        (
            "garbage.wasm",
            b"garbage",
            "not a WebAssembly binary, and not valid WAT text",
        ),
        (
            "wrong.wat",
            b"(module (func (export \"foo\")))",
            "failed to find export of interface `sift:predicate/predicate@0.1.0` function `describe`",
        ),
        (
            "import.wat",
            b"(module (import \"env\" \"x\" (func)))",
            "module requires an import interface named `env`",
        ),
    ];
    for (file, bytes, expected) in cases {
        let path = dir.join(file);
        std::fs::write(&path, bytes).unwrap();
        let o = sift(&["component", "new", path.to_str().unwrap(), "-o", out_arg]);
        let (_, err) = text(&o);
        assert!(!o.status.success(), "{file} accepted");
        assert!(
            err.contains(file) && err.contains(expected),
            "{file}: {err}"
        );
    }
    // A component is not a core module.
    let o = sift(&[
        "component",
        "new",
        out_arg,
        "-o",
        dir.join("again.wasm").to_str().unwrap(),
    ]);
    assert!(text(&o).1.contains("a component already"), "{:?}", text(&o));
}

/// `sift component bindings c` writes the latest contract's bindings by
/// default (its world `plugin`, with the reserver), any other contract it
/// runs on request, and names the known ones for an unknown version.
#[test]
fn component_bindings_cover_every_contract_and_default_to_the_latest() {
    let dir = sift_tests::temp_dir("component-bindings");
    let latest = dir.join("latest");
    let o = sift(&[
        "component",
        "bindings",
        "c",
        "--out",
        latest.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let header = std::fs::read_to_string(latest.join("plugin.h")).unwrap();
    assert!(
        header.contains("reserver"),
        "no reserver in the latest bindings"
    );
    let old = dir.join("old");
    let o = sift(&[
        "component",
        "bindings",
        "c",
        "--contract",
        "0.1.0",
        "--out",
        old.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    assert!(old.join("predicate_plugin.h").is_file());
    let o = sift(&[
        "component",
        "bindings",
        "c",
        "--contract",
        "0.9.0",
        "--out",
        old.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        text(&o)
            .1
            .contains("unknown contract version \"0.9.0\": this sift knows 0.1.0"),
        "{:?}",
        text(&o)
    );
}

/// Two GPU nodes, one without a model label, and a pod asking for a GPU:
/// GpuModel (not a default plugin) rejects only the unlabelled node.
fn gpu_pair(dir: &std::path::Path) -> (String, String) {
    let node = |name: &str, model: Option<&str>| {
        let mut labels = serde_json::json!({ "kubernetes.io/hostname": name });
        if let Some(m) = model {
            labels["alibabacloud.com/gpu-card-model"] = m.into();
        }
        let alloc = serde_json::json!({ "cpu": "8", "memory": "32Gi", "pods": "110",
                                        "alibabacloud.com/gpu-milli": "8000" });
        serde_json::json!({ "apiVersion": "v1", "kind": "Node",
            "metadata": { "name": name, "labels": labels },
            "status": { "capacity": alloc.clone(), "allocatable": alloc } })
    };
    let cluster = serde_json::json!({ "apiVersion": "v1", "kind": "List",
        "items": [node("gpu-t4", Some("T4")), node("gpu-unlabelled", None)] });
    let pod = serde_json::json!({ "apiVersion": "v1", "kind": "Pod",
        "metadata": { "name": "trainer", "namespace": "ml" },
        "spec": { "containers": [{ "name": "main", "image": "trainer:1",
            "resources": { "requests": { "cpu": "1", "alibabacloud.com/gpu-milli": "1000" } } }] } });
    let c = dir.join("cluster.json");
    let p = dir.join("pod.json");
    std::fs::write(&c, cluster.to_string()).unwrap();
    std::fs::write(&p, pod.to_string()).unwrap();
    (c.to_str().unwrap().into(), p.to_str().unwrap().into())
}

fn feasible(out: &str) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(out).unwrap_or_else(|e| panic!("{e}: {out}"));
    v[0]["feasibleNodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn filter_runs_a_plugin_named_by_file_or_enabled_by_name() {
    let dir = sift_tests::temp_dir("cli-filter-plugin");
    let (c, p) = gpu_pair(&dir);
    let base = ["filter", "--cluster", &c, "--pod", &p, "-o", "json"];
    let run = |extra: &[&str]| {
        let o = sift(&[&base[..], extra].concat());
        let (out, err) = text(&o);
        assert!(o.status.success(), "{extra:?}: {err}");
        (out, err)
    };
    // GpuModel is bundled but not a default: both nodes fit.
    let (out, _) = run(&[]);
    assert_eq!(feasible(&out), ["gpu-t4", "gpu-unlabelled"]);
    let (out, _) = run(&["--enable", "GpuModel"]);
    assert_eq!(feasible(&out), ["gpu-t4"]);
    assert!(out.contains("node(s) had no GPU"), "{out}");
    // A component file given by hand runs without any config.
    let mine = dir.join("my_gpu_model.wasm");
    std::fs::copy(
        sift_tests::plugins_dir().join("sift_plugin_gpu_model.wasm"),
        &mine,
    )
    .unwrap();
    let (out, _) = run(&["--plugin", mine.to_str().unwrap()]);
    assert_eq!(feasible(&out), ["gpu-t4"]);
    // ... and is what runs: the directory here has no GpuModel of its own.
    let defaults = dir.join("defaults");
    std::fs::create_dir_all(&defaults).unwrap();
    for f in std::fs::read_dir(sift_tests::plugins_dir()).unwrap() {
        let f = f.unwrap().path();
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        if name.ends_with(".wasm") && !name.contains("gpu_model") {
            std::fs::copy(&f, defaults.join(name)).unwrap();
        }
    }
    let defaults = defaults.to_str().unwrap();
    let (out, _) = run(&["--plugins", defaults, "--plugin", mine.to_str().unwrap()]);
    assert_eq!(feasible(&out), ["gpu-t4"]);
    let o = sift(&[&base[..], &["--plugins", defaults, "--enable", "GpuModel"]].concat());
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(err.contains("--enable GpuModel: no loaded plugin"), "{err}");
    // A directory whose plugin is loaded but not enabled: say so.
    let plugins = sift_tests::plugins_dir();
    let (out, err) = run(&["--plugins", plugins.to_str().unwrap()]);
    assert_eq!(feasible(&out), ["gpu-t4", "gpu-unlabelled"]);
    assert!(
        err.contains("GpuModel is loaded but not enabled") && err.contains("--enable GpuModel"),
        "{err}"
    );
    // ... unless the config turns it off on purpose.
    let cfg = dir.join("sift.yaml");
    std::fs::write(
        &cfg,
        "plugins:\n  filter:\n    disabled: [{name: GpuModel}]\n",
    )
    .unwrap();
    let (_, err) = run(&[
        "--plugins",
        plugins.to_str().unwrap(),
        "-c",
        cfg.to_str().unwrap(),
    ]);
    assert!(!err.contains("GpuModel is loaded"), "{err}");
    let o = sift(&[&base[..], &["--native", "--plugin", mine.to_str().unwrap()]].concat());
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(err.contains("--native"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn trace_openb_writes_a_cluster_and_a_workload_sift_reads() {
    let dir = sift_tests::temp_dir("cli-trace");
    let nodes = dir.join("nodes.csv");
    let pods = dir.join("pods.csv");
    std::fs::write(
        &nodes,
        "sn,cpu_milli,memory_mib,gpu,model\nn0,32000,262144,0,\nn1,96000,786432,8,T4\n",
    )
    .unwrap();
    std::fs::write(
        &pods,
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n\
         a,1000,1024,1,500,T4,LS,Running,0,9,0\n\
         b,2000,2048,0,0,,BE,Running,3,,3\n",
    )
    .unwrap();
    let out = dir.join("out");
    let o = sift(&[
        "trace",
        "openb",
        nodes.to_str().unwrap(),
        pods.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--gpu-nodes-only",
    ]);
    let (stdout, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(stdout.contains("1 nodes (1 with GPUs, 8 GPUs)"), "{stdout}");
    assert!(
        stdout.contains("500 milli-GPU, 6.2% of the nodes' 8000"),
        "{stdout}"
    );
    let events = sift_host::input::workload::read(&out.join("workload.ndjson")).unwrap();
    let seen: Vec<(String, Option<u64>)> = events
        .iter()
        .map(|e| (format!("{:?}", e.kind), e.time))
        .collect();
    assert_eq!(
        seen,
        [
            ("Added".to_string(), Some(0)),
            ("Added".to_string(), Some(3)),
            ("Deleted".to_string(), Some(9))
        ]
    );
    // The cluster and the pods go straight into `sift filter`.
    let pod = serde_json::to_string(&events[0].object).unwrap();
    let pod_file = dir.join("pod.json");
    std::fs::write(&pod_file, pod).unwrap();
    let o = sift(&[
        "filter",
        "--cluster",
        out.join("cluster.json").to_str().unwrap(),
        "--pod",
        pod_file.to_str().unwrap(),
        "-o",
        "json",
    ]);
    let (stdout, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v[0]["feasibleNodes"], serde_json::json!(["n1"]));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn simulate_demo_writes_outcomes_timeline_plot_and_explains_a_pod() {
    let dir = sift_tests::temp_dir("cli-simulate");
    let (pods, csv, svg) = (
        dir.join("pods.jsonl"),
        dir.join("timeline.csv"),
        dir.join("plot.svg"),
    );
    let o = sift(&[
        "simulate",
        "--cluster",
        "tests/data/demo/cluster.json",
        "--cluster",
        "tests/data/demo/pods.yaml",
        "--pods-out",
        pods.to_str().unwrap(),
        "--timeline",
        csv.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("scheduled"), "{out}");
    // The table row: 2 pods bound, 1 unscheduled (analytics fits nowhere).
    let row = out.lines().nth(1).unwrap();
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cols[..3], ["default", "2", "1"], "{out}");
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&pods)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let analytics = lines
        .iter()
        .find(|p| p["pod"] == "jobs/analytics-0")
        .unwrap();
    let msg = analytics["message"].as_str().unwrap();
    assert!(msg.starts_with("0/6 nodes are available: "), "{msg}");
    assert!(
        msg.contains(" preemption: 0/6 nodes are available: "),
        "{msg}"
    );
    let trainer = lines.iter().find(|p| p["pod"] == "ml/trainer-0").unwrap();
    assert_eq!(trainer["node"], "ip-10-0-3-31");
    let timeline = std::fs::read_to_string(&csv).unwrap();
    assert!(timeline.starts_with("time,attempts,scheduled,pending,cpu_allocated_pct"));
    // The header, the starting state, one row per attempt.
    assert_eq!(timeline.lines().count(), 1 + 1 + 3, "{timeline}");
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(plot.contains("<svg") && plot.contains("pending pods"));

    let o = sift(&[
        "simulate",
        "--cluster",
        "tests/data/demo/cluster.json",
        "--cluster",
        "tests/data/demo/pods.yaml",
        "--explain",
        "ml/trainer-0",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["explanation"]["chosen"], "ip-10-0-3-31");
    assert!(
        v["explanation"]["filter"]["statuses"]
            .as_object()
            .is_some_and(|s| !s.is_empty()),
        "{out}"
    );

    let o = sift(&[
        "simulate",
        "--cluster",
        "tests/data/demo/cluster.json",
        "--cluster",
        "tests/data/demo/pods.yaml",
        "--explain",
        "nope/none",
    ]);
    let (_, err) = text(&o);
    assert!(!o.status.success());
    assert!(err.contains("--explain nope/none"), "{err}");
}

/// Bound pods are handed to the cluster state as they are read: whether
/// they come before or after their node in the files, they hold it, and a
/// bad one is named with its file.
#[test]
fn bound_pods_hold_their_node_whatever_the_file_order() {
    let dir = sift_tests::temp_dir("cli-bound-order");
    let node = serde_json::json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"}}});
    let hog = |cpu: &str| {
        serde_json::json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "hog", "namespace": "default"},
        "spec": {"nodeName": "n1", "containers": [{"name": "c",
                 "resources": {"requests": {"cpu": cpu}}}]},
        "status": {"phase": "Running"}})
    };
    let pending = serde_json::json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "new", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}});
    for (name, items) in [
        (
            "pods-first.json",
            vec![hog("1500m"), pending.clone(), node.clone()],
        ),
        (
            "node-first.json",
            vec![node.clone(), hog("1500m"), pending.clone()],
        ),
    ] {
        let file = dir.join(name);
        std::fs::write(
            &file,
            serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string(),
        )
        .unwrap();
        let o = sift(&["filter", "--cluster", file.to_str().unwrap(), "-o", "json"]);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{name}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v[0]["pod"], "default/new", "{name}");
        assert_eq!(
            v[0]["statuses"]["n1"]["reasons"][0], "Insufficient cpu",
            "{name}: {out}"
        );
    }
    let bad = dir.join("bad.json");
    std::fs::write(
        &bad,
        serde_json::json!({"apiVersion": "v1", "kind": "List",
            "items": [node, hog("lots"), pending]})
        .to_string(),
    )
    .unwrap();
    let o = sift(&["filter", "--cluster", bad.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert!(!o.status.success());
    assert!(
        err.contains("bad.json") && err.contains("items[1]"),
        "{err}"
    );
}
