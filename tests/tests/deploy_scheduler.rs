//! `deploy/scheduler/`: `sift schedule` as a secondary scheduler in a
//! cluster, checked offline. First against Kubernetes' own schemas (PyPI's
//! `kubernetes-validate`, strict, as `deploy.rs` runs it), then against what
//! a schema cannot know: that `sift schedule` accepts the Deployment's flags
//! and the ConfigMap's config, that the probes are its routes on its port,
//! that the RBAC grants exactly what it does (and that what it does against
//! an API server is granted), that leader election is on and its Lease is
//! the one the Role names, that the pods meet the restricted Pod Security
//! profile, and that the scheduler's own pods are kube-scheduler's while
//! the example pod is sift's.

use serde_json::{Value, json};
use sift_tests::apiserver::FakeApiServer;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The Kubernetes version the schemas are taken from: k8s-openapi's
/// `v1_35` (tests/Cargo.toml), as in deploy.rs.
const KUBERNETES_VERSION: &str = "1.35.0";

/// How to get the validator (scripts/test.sh installs it).
const INSTALL_VALIDATOR: &str = "python3 -m pip install kubernetes-validate \
     (scripts/test.sh installs the pinned version)";

/// The label every scheduler object carries; deploy/README.md applies the
/// directory with it as the selector, which leaves the example pod out.
const PART_LABEL: (&str, &str) = ("app.kubernetes.io/name", "sift-scheduler");

fn deploy_dir() -> PathBuf {
    sift_tests::workspace_root().join("deploy")
}

fn scheduler_dir() -> PathBuf {
    deploy_dir().join("scheduler")
}

fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    files
}

/// The scheduler's manifests, in the order `kubectl apply` takes them: the
/// numbered files of deploy/scheduler (not the example pod).
fn manifest_files() -> Vec<PathBuf> {
    let files: Vec<PathBuf> = yaml_files(&scheduler_dir())
        .into_iter()
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(|c: char| c.is_ascii_digit()))
        })
        .collect();
    assert!(
        !files.is_empty(),
        "no manifests in {}",
        scheduler_dir().display()
    );
    files
}

/// Batch mode's extra rights (deploy/scheduler/batch), applied on top.
fn batch_files() -> Vec<PathBuf> {
    yaml_files(&scheduler_dir().join("batch"))
}

fn batch_objects() -> Vec<Value> {
    batch_files()
        .iter()
        .flat_map(|f| yaml_documents(f))
        .collect()
}

fn example_file() -> PathBuf {
    scheduler_dir().join("example-pod.yaml")
}

/// The documents of a YAML file, split at `---` lines (empty ones skipped).
fn yaml_documents(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut docs = vec![String::new()];
    for line in text.lines() {
        if line.trim_end() == "---" {
            docs.push(String::new());
        } else {
            let last = docs.last_mut().unwrap();
            last.push_str(line);
            last.push('\n');
        }
    }
    docs.iter()
        .map(|d| {
            serde_yaml_ng::from_str::<Value>(d)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        })
        .filter(|v| !v.is_null())
        .collect()
}

fn objects() -> Vec<Value> {
    manifest_files()
        .iter()
        .flat_map(|f| yaml_documents(f))
        .collect()
}

/// sift serve's manifests (deploy/manifests), which hold the namespace.
fn serve_objects() -> Vec<Value> {
    yaml_files(&deploy_dir().join("manifests"))
        .iter()
        .flat_map(|f| yaml_documents(f))
        .collect()
}

fn one(objects: Vec<Value>, kind: &str, name: Option<&str>, dir: &str) -> Value {
    let found: Vec<Value> = objects
        .into_iter()
        .filter(|o| o["kind"] == kind && name.is_none_or(|n| o["metadata"]["name"] == n))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "expected one {kind} {name:?} in {dir}, found {}",
        found.len()
    );
    found.into_iter().next().unwrap()
}

/// The one scheduler object of this kind (and name, if given).
fn object(kind: &str, name: Option<&str>) -> Value {
    one(objects(), kind, name, "deploy/scheduler")
}

fn example_pod() -> Value {
    let docs = yaml_documents(&example_file());
    assert_eq!(docs.len(), 1, "example-pod.yaml holds one object");
    let pod = docs.into_iter().next().unwrap();
    assert_eq!(pod["kind"], "Pod");
    pod
}

fn str_of<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no string at {pointer} in {v:#}"))
}

fn deployment() -> Value {
    object("Deployment", None)
}

fn namespace() -> String {
    str_of(&deployment(), "/metadata/namespace").to_string()
}

fn pod_spec() -> Value {
    deployment()["spec"]["template"]["spec"].clone()
}

fn pod_labels() -> Value {
    deployment()["spec"]["template"]["metadata"]["labels"].clone()
}

fn containers(spec: &Value, field: &str) -> Vec<Value> {
    spec[field].as_array().cloned().unwrap_or_default()
}

fn sift_container() -> Value {
    containers(&pod_spec(), "containers")
        .into_iter()
        .find(|c| c["name"] == "sift")
        .expect("the Deployment has a container named sift")
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .map(|a| a.as_str().expect("a list of strings").to_string())
        .collect()
}

fn args() -> Vec<String> {
    let args = strings(&sift_container()["args"]);
    assert!(!args.is_empty(), "the sift container has args");
    args
}

/// The value of `--flag VALUE` or `--flag=VALUE`.
fn flag_value(args: &[String], flag: &str) -> Option<String> {
    args.iter().enumerate().find_map(|(i, a)| {
        if a == flag {
            args.get(i + 1).cloned()
        } else {
            a.strip_prefix(&format!("{flag}=")).map(str::to_string)
        }
    })
}

/// The value of the first of these spellings of one flag (`-c`, `--config`).
fn flag_values(args: &[String], flags: &[&str]) -> Option<String> {
    flags.iter().find_map(|f| flag_value(args, f))
}

fn config_path() -> String {
    flag_values(&args(), &["--config", "-c"]).expect("the Deployment passes --config")
}

/// Where a container mounts the named volume.
fn mount_path(container: &Value, volume: &str) -> String {
    container["volumeMounts"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["name"] == volume)
        .map(|m| str_of(m, "/mountPath").to_string())
        .unwrap_or_else(|| panic!("container {} mounts no volume {volume}", container["name"]))
}

/// The pod's volume of this name.
fn volume(name: &str) -> Value {
    pod_spec()["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|v| v["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("the pod has no volume {name}"))
}

/// The mount of the volume at `path` (or at a parent of it).
fn mount_at(container: &Value, path: &str) -> Value {
    container["volumeMounts"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| Path::new(path).starts_with(str_of(m, "/mountPath")))
        .cloned()
        .unwrap_or_else(|| panic!("container {} mounts nothing at {path}", container["name"]))
}

/// The port number a probe names, by number or container port name.
fn container_port(container: &Value, port: &Value) -> u64 {
    if let Some(n) = port.as_u64() {
        return n;
    }
    let name = port.as_str().expect("a port is a number or a name");
    container["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == name)
        .and_then(|p| p["containerPort"].as_u64())
        .unwrap_or_else(|| panic!("container {} has no port named {name}", container["name"]))
}

fn listen_port() -> u64 {
    let listen = flag_value(&args(), "--listen").expect("the Deployment passes --listen");
    assert!(
        listen.starts_with("0.0.0.0:") || listen.starts_with("[::]:"),
        "--listen {listen}: the kubelet's probes come from outside the pod"
    );
    listen
        .rsplit_once(':')
        .and_then(|(_, p)| p.parse().ok())
        .unwrap_or_else(|| panic!("--listen {listen} has no port"))
}

/// The value of an environment variable of the sift container.
fn env(name: &str) -> Option<Value> {
    sift_container()["env"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["name"] == name)
        .cloned()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn sift(args: &[&str], cache: &str) -> Output {
    sift_tests::run_sift(args, cache)
}

/// The ConfigMap's file that --config names, written to a file of its own.
fn configmap_config(dir: &Path) -> PathBuf {
    let path = config_path();
    let file = Path::new(&path).file_name().unwrap().to_str().unwrap();
    let mount = mount_at(&sift_container(), &path);
    let vol = volume(str_of(&mount, "/name"));
    let name = str_of(&vol, "/configMap/name");
    let cm = object("ConfigMap", Some(name));
    let text = cm["data"][file]
        .as_str()
        .unwrap_or_else(|| panic!("ConfigMap {name} has no key {file}, the --config file"));
    std::fs::create_dir_all(dir).unwrap();
    let out = dir.join(file);
    std::fs::write(&out, text).unwrap();
    out
}

/// The ConfigMap's config, parsed by sift. (A directory per call: the
/// tests of this file run in parallel, and `temp_dir` empties its
/// directory.)
fn config() -> sift_host::config::Config {
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, Ordering::SeqCst);
    let dir = sift_tests::temp_dir(&format!("deploy-scheduler-config-parse-{n}"));
    sift_host::config::Config::load(&configmap_config(&dir)).unwrap()
}

/// One compile cache for every `sift schedule` this file runs (sift writes
/// its entries atomically), so only the first compiles the components.
fn run_cache() -> &'static Path {
    static CACHE: OnceLock<PathBuf> = OnceLock::new();
    CACHE.get_or_init(|| sift_tests::temp_dir("deploy-scheduler-run-cache"))
}

/// The name pods opt in with: the config's, else sift schedule's default.
fn scheduler_name() -> String {
    config().scheduler_name.unwrap_or_else(|| "sift".into())
}

/// `15s`, `500ms`, `1m`: the durations sift's flags take.
fn duration(s: &str) -> Duration {
    let (number, unit) = s
        .find(|c: char| !c.is_ascii_digit())
        .map(|i| s.split_at(i))
        .unwrap_or_else(|| panic!("{s}: a duration has a unit"));
    let n: u64 = number.parse().unwrap();
    match unit {
        "ms" => Duration::from_millis(n),
        "s" => Duration::from_secs(n),
        "m" => Duration::from_secs(60 * n),
        _ => panic!("{s}: unknown unit"),
    }
}

/// Whether a label selector (a map, or `matchLabels` without expressions)
/// selects these labels.
fn selects(selector: &Value, labels: &Value) -> bool {
    let map = selector.get("matchLabels").unwrap_or(selector);
    assert!(
        selector.get("matchExpressions").is_none(),
        "{selector}: matchLabels only"
    );
    let map = map.as_object().expect("a selector is a map");
    map.iter().all(|(k, v)| &labels[k] == v)
}

// ---------------------------------------------------------------------------
// Schemas and layout
// ---------------------------------------------------------------------------

#[test]
fn manifests_pass_kubernetes_schemas_strictly() {
    let mut files = manifest_files();
    files.extend(batch_files());
    files.push(example_file());
    let out = Command::new("python3")
        .args([
            "-m",
            "kubernetes_validate",
            "--strict",
            "-k",
            KUBERNETES_VERSION,
        ])
        .args(&files)
        .output()
        .unwrap_or_else(|e| panic!("cannot run python3 ({e}); then: {INSTALL_VALIDATOR}"));
    let report = text(&out);
    assert!(
        !report.contains("No module named kubernetes_validate"),
        "kubernetes-validate is not installed: {INSTALL_VALIDATOR}"
    );
    assert!(out.status.success(), "{report}");
    // A kind without a schema is only a warning: none is allowed, so a
    // misspelt kind or apiVersion fails too.
    for line in report.lines() {
        assert!(
            !line.starts_with("WARN") && !line.starts_with("ERROR"),
            "{line}\n{report}"
        );
    }
    let passed = report.lines().filter(|l| l.contains(" passed ")).count();
    assert_eq!(
        passed,
        objects().len() + batch_objects().len() + 1,
        "each object validated once: {report}"
    );
    assert!(report.contains("against version 1.35"), "{report}");
}

/// The scheduler lives in sift serve's namespace (deploy/manifests'
/// `00-namespace.yaml`, applied first), which enforces the restricted
/// profile; deploy/scheduler does not define it a second time.
#[test]
fn objects_live_in_the_namespace_of_deploy_manifests() {
    let ns = one(serve_objects(), "Namespace", None, "deploy/manifests");
    let name = str_of(&ns, "/metadata/name");
    assert_eq!(
        ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"], "restricted",
        "the namespace enforces the profile the pods are written for"
    );
    let cluster_scoped = ["ClusterRole", "ClusterRoleBinding"];
    for o in objects().into_iter().chain(batch_objects()) {
        let kind = o["kind"].as_str().unwrap();
        assert_ne!(kind, "Namespace", "the namespace is deploy/manifests'");
        if cluster_scoped.contains(&kind) {
            assert!(o["metadata"].get("namespace").is_none(), "{kind}: {o}");
            for s in o["subjects"].as_array().into_iter().flatten() {
                assert_eq!(s["namespace"], name, "{kind} subject {s}");
            }
        } else {
            assert_eq!(o["metadata"]["namespace"], name, "{kind}: {o}");
        }
    }
    // The example pod goes into the user's namespace, not sift's.
    assert!(example_pod()["metadata"].get("namespace").is_none());
}

/// deploy/README.md applies `deploy/scheduler/` with the label selector,
/// so the example pod, in the same directory, is not created with it.
#[test]
fn apply_selector_takes_the_scheduler_and_leaves_the_example_out() {
    let (key, value) = PART_LABEL;
    // The directory holds the numbered manifests and the example, nothing
    // else that `kubectl apply -f` would read.
    let numbered = manifest_files();
    for f in yaml_files(&scheduler_dir()) {
        assert!(
            numbered.contains(&f) || f == example_file(),
            "{}: neither a numbered manifest nor the example",
            f.display()
        );
    }
    for o in objects() {
        assert_eq!(
            o["metadata"]["labels"][key], value,
            "{} {} lacks {key}={value}",
            o["kind"], o["metadata"]["name"]
        );
    }
    assert_eq!(pod_labels()[key], value, "the pod template's labels");
    assert_ne!(
        example_pod()["metadata"]["labels"][key],
        value,
        "the selector would apply the example pod too"
    );
    let readme = std::fs::read_to_string(deploy_dir().join("README.md")).unwrap();
    let apply = format!("kubectl apply -f deploy/scheduler/ -l {key}={value}");
    assert!(
        readme.contains(&apply),
        "deploy/README.md does not apply the scheduler with `{apply}`"
    );
}

/// sift serve's Service, NetworkPolicy, PDB and Deployment share the
/// namespace: none of them may select the scheduler's pods (the extender's
/// Service would send kube-scheduler's filter calls to a scheduler), and
/// the scheduler's selectors do not take sift serve's pods.
#[test]
fn scheduler_pods_and_sift_serve_pods_are_selected_apart() {
    let scheduler = pod_labels();
    let serve = serve_objects();
    let serve_pods = one(serve.clone(), "Deployment", None, "deploy/manifests")["spec"]["template"]
        ["metadata"]["labels"]
        .clone();
    for o in &serve {
        let spec = &o["spec"];
        for selector in [&spec["selector"], &spec["podSelector"]] {
            if selector.is_object() {
                assert!(
                    !selects(selector, &scheduler),
                    "{} {} selects the scheduler's pods",
                    o["kind"],
                    o["metadata"]["name"]
                );
            }
        }
    }
    for o in objects() {
        let selector = &o["spec"]["selector"];
        if selector.is_object() {
            assert!(selects(selector, &scheduler), "{} {}", o["kind"], selector);
            assert!(
                !selects(selector, &serve_pods),
                "{} {} selects sift serve's pods",
                o["kind"],
                o["metadata"]["name"]
            );
        }
    }
    // The names differ too: both are in one namespace.
    let names: BTreeSet<(String, String)> = serve
        .iter()
        .map(|o| (o["kind"].to_string(), o["metadata"]["name"].to_string()))
        .collect();
    for o in objects() {
        let key = (o["kind"].to_string(), o["metadata"]["name"].to_string());
        assert!(!names.contains(&key), "{key:?} is also sift serve's");
    }
}

// ---------------------------------------------------------------------------
// The Deployment
// ---------------------------------------------------------------------------

#[test]
fn deployment_flags_are_sift_schedule_flags() {
    let args = args();
    assert_eq!(
        args[0], "schedule",
        "the image's entrypoint is sift: {args:?}"
    );
    assert!(
        sift_container().get("command").is_none(),
        "the image's entrypoint (/usr/bin/sift) must run the args"
    );
    let help = sift(&["schedule", "--help"], "deploy-scheduler-help");
    assert!(help.status.success(), "{}", text(&help));
    let help = String::from_utf8_lossy(&help.stdout);
    let known: BTreeSet<&str> = help
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|w| w.starts_with('-') && w.len() > 1)
        .collect();
    for a in &args[1..] {
        if a.starts_with('-') {
            let flag = a.split('=').next().unwrap();
            assert!(
                known.contains(flag),
                "the Deployment passes {flag}, which `sift schedule` does not have: {known:?}"
            );
        }
    }
    // clap parses the values before it answers --help: a malformed
    // duration, a misspelt boolean or a flag given twice fails here.
    let mut with_help: Vec<&str> = args.iter().map(String::as_str).collect();
    with_help.push("--help");
    let parsed = sift(&with_help, "deploy-scheduler-help");
    assert!(
        parsed.status.success(),
        "sift {with_help:?}: {}",
        text(&parsed)
    );
    assert!(
        args.iter().any(|a| a == "--in-cluster"),
        "the Deployment must schedule its cluster: --in-cluster"
    );
}

#[test]
fn deployment_paths_ports_and_volumes_agree() {
    let args = args();
    let sift = sift_container();
    let spec = pod_spec();

    // The port sift listens on is the container port the probes use.
    let port = listen_port();
    let http = sift["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == "http")
        .expect("a container port named http");
    assert_eq!(
        http["containerPort"].as_u64(),
        Some(port),
        "--listen vs containerPort"
    );
    assert_eq!(
        deployment()["spec"]["template"]["metadata"]["annotations"]["prometheus.io/port"],
        port.to_string(),
        "the scrape annotation's port vs --listen"
    );

    // The plugins directory: a writable volume, filled by the
    // initContainer with the image's bundled components (as sift serve's:
    // deploy.rs checks that command against the image).
    let plugins = flag_value(&args, "--plugins").expect("--plugins");
    assert_eq!(
        mount_path(&sift, "plugins"),
        plugins,
        "--plugins vs its mount"
    );
    assert!(
        volume("plugins").get("emptyDir").is_some(),
        "plugins: an emptyDir"
    );
    let install = containers(&spec, "initContainers")
        .into_iter()
        .find(|c| c["name"] == "install-plugins")
        .expect("an initContainer install-plugins");
    let command = strings(&install["command"]);
    assert_eq!(
        Path::new(command.last().unwrap()),
        Path::new(&mount_path(&install, "plugins")),
        "install-plugins copies into the plugins volume: {command:?}"
    );

    // The image is the one deploy/Containerfile builds, the same as sift
    // serve's, and the initContainer runs what that image holds.
    let serve = one(serve_objects(), "Deployment", None, "deploy/manifests");
    let serve_spec = &serve["spec"]["template"]["spec"];
    let serve_image = containers(serve_spec, "containers")
        .into_iter()
        .find(|c| c["name"] == "sift")
        .expect("sift serve's container")["image"]
        .clone();
    for c in containers(&spec, "initContainers")
        .into_iter()
        .chain(containers(&spec, "containers"))
    {
        assert_eq!(
            c["image"], serve_image,
            "{}'s image vs sift serve's",
            c["name"]
        );
    }
    let serve_install = containers(serve_spec, "initContainers")
        .into_iter()
        .find(|c| c["name"] == "install-plugins")
        .expect("sift serve's install-plugins");
    assert_eq!(install["command"], serve_install["command"]);

    // The config file is the ConfigMap's, mounted as a directory (a subPath
    // mount never sees an edit).
    let mount = mount_at(&sift, &config_path());
    assert!(
        mount.get("subPath").is_none(),
        "config mounted by subPath: {mount}"
    );
    assert!(volume(str_of(&mount, "/name")).get("configMap").is_some());
    configmap_config(&sift_tests::temp_dir("deploy-scheduler-paths"));

    // The compile cache: a writable volume, the root filesystem being
    // read-only.
    let cache = env("SIFT_CACHE_DIR").expect("SIFT_CACHE_DIR is set");
    assert_eq!(
        mount_path(&sift, "cache"),
        str_of(&cache, "/value"),
        "SIFT_CACHE_DIR vs its mount"
    );
    assert!(
        volume("cache").get("emptyDir").is_some(),
        "cache: an emptyDir"
    );
}

/// Two replicas, one leader: election on, its timings in the order client-go
/// requires, its Lease in the pod's namespace (the downward API) under the
/// name the Role grants.
#[test]
fn two_replicas_elect_a_leader_through_the_lease_the_role_names() {
    let dep = deployment();
    assert_eq!(dep["spec"]["replicas"], 2, "a leader and a standby");
    let args = args();
    assert_ne!(
        flag_value(&args, "--leader-elect").as_deref(),
        Some("false"),
        "two replicas without leader election would both bind"
    );
    let timing = |flag: &str, default: &str| {
        duration(&flag_value(&args, flag).unwrap_or_else(|| default.into()))
    };
    let lease = timing("--leader-elect-lease-duration", "15s");
    let renew = timing("--leader-elect-renew-deadline", "10s");
    let retry = timing("--leader-elect-retry-period", "2s");
    assert!(
        retry < renew && renew < lease,
        "retry {retry:?} < renew {renew:?} < lease {lease:?}"
    );

    // The Lease's namespace: the flag's, else POD_NAMESPACE, which the
    // downward API sets to the pod's.
    let lease_namespace =
        flag_value(&args, "--leader-elect-resource-namespace").unwrap_or_else(|| {
            let var = env("POD_NAMESPACE").expect(
                "POD_NAMESPACE is set (or sift takes the lease in kube-system, \
                 where the Role grants nothing)",
            );
            assert_eq!(
                var["valueFrom"]["fieldRef"]["fieldPath"], "metadata.namespace",
                "POD_NAMESPACE from the downward API: {var}"
            );
            namespace()
        });
    let lease_name =
        flag_value(&args, "--leader-elect-resource-name").unwrap_or_else(scheduler_name);

    // The Role that grants it, bound to the pods' service account.
    let account = str_of(&pod_spec(), "/serviceAccountName").to_string();
    let binding = objects()
        .into_iter()
        .find(|o| o["kind"] == "RoleBinding" && binds(o, &account))
        .unwrap_or_else(|| panic!("no RoleBinding for the service account {account}"));
    assert_eq!(binding["roleRef"]["kind"], "Role");
    let role = object("Role", Some(str_of(&binding, "/roleRef/name")));
    assert_eq!(role["metadata"]["namespace"], lease_namespace.as_str());
    assert_eq!(binding["metadata"]["namespace"], lease_namespace.as_str());
    let rules = rules(&role);
    assert!(
        rules
            .iter()
            .all(|r| r.groups == ["coordination.k8s.io"] && r.resources == ["leases"]),
        "the Role grants leases only: {rules:?}"
    );
    let mut granted = BTreeSet::new();
    for r in &rules {
        for verb in &r.verbs {
            granted.insert((verb.clone(), r.names.clone()));
        }
    }
    let restricted = Some(vec![lease_name.clone()]);
    let wanted = BTreeSet::from([
        // resourceNames cannot restrict create: the API server authorizes
        // it before the object, and its name, is read.
        ("create".to_string(), None),
        ("get".to_string(), restricted.clone()),
        ("update".to_string(), restricted),
    ]);
    assert_eq!(
        granted, wanted,
        "create leases; get and update the lease {lease_name} only"
    );
}

/// The scheduler's pods are placed by kube-scheduler: a secondary
/// scheduler cannot schedule its own replicas (none would run to do it).
/// The example pod names the scheduler the config names.
#[test]
fn scheduler_pods_are_kube_scheduler_s_and_the_example_pod_is_sift_s() {
    let spec = pod_spec();
    assert!(
        spec.get("schedulerName")
            .is_none_or(|n| n == "default-scheduler"),
        "the scheduler's pods set schedulerName {}",
        spec["schedulerName"]
    );
    assert!(spec.get("nodeName").is_none());
    let name = scheduler_name();
    assert_eq!(
        name, "sift",
        "the shipped config is a secondary scheduler; default-scheduler \
         would replace kube-scheduler (deploy/README.md)"
    );
    let example = example_pod();
    assert_eq!(
        example["spec"]["schedulerName"],
        name.as_str(),
        "the example pod opts in with the config's schedulerName"
    );
    assert!(
        example["spec"].get("nodeName").is_none(),
        "a nodeName skips every scheduler"
    );
}

#[test]
fn replicas_land_on_different_nodes_and_drains_keep_one() {
    let dep = deployment();
    let spec = pod_spec();
    let labels = pod_labels();
    let terms =
        spec["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            .as_array()
            .expect("required pod anti-affinity: a standby beside its leader dies with it");
    assert!(
        terms
            .iter()
            .any(|t| t["topologyKey"] == "kubernetes.io/hostname"
                && selects(&t["labelSelector"], &labels)
                && t.get("namespaces").is_none()
                && t.get("namespaceSelector").is_none()),
        "no term keeps the replicas on different nodes: {terms:?}"
    );
    // With required anti-affinity a surge pod finds no node on a cluster
    // of as many nodes as replicas, and the rollout would stop there.
    let rolling = &dep["spec"]["strategy"]["rollingUpdate"];
    assert_eq!(dep["spec"]["strategy"]["type"], "RollingUpdate");
    assert_eq!(rolling["maxSurge"], 0, "{rolling}");
    assert_eq!(rolling["maxUnavailable"], 1, "{rolling}");

    let pdb = object("PodDisruptionBudget", None);
    assert_eq!(pdb["spec"]["minAvailable"], 1);
    assert!(pdb["spec"].get("maxUnavailable").is_none());
    assert!(selects(&pdb["spec"]["selector"], &labels));
    for (k, v) in dep["spec"]["selector"]["matchLabels"].as_object().unwrap() {
        assert_eq!(
            &labels[k], v,
            "Deployment selector {k} vs the pod template's labels"
        );
    }
}

/// The restricted profile, for the scheduler's pods (their namespace
/// enforces it) and for the example pod (a namespace may enforce it).
#[test]
fn pods_meet_the_restricted_pod_security_profile() {
    let example = example_pod();
    for (what, spec) in [
        ("scheduler", pod_spec()),
        ("example", example["spec"].clone()),
    ] {
        let pod = &spec["securityContext"];
        let all: Vec<Value> = containers(&spec, "initContainers")
            .into_iter()
            .chain(containers(&spec, "containers"))
            .collect();
        assert!(!all.is_empty());
        for key in ["hostNetwork", "hostPID", "hostIPC"] {
            assert!(spec.get(key).is_none_or(|v| v == false), "{what}: {key}");
        }
        for v in spec["volumes"].as_array().into_iter().flatten() {
            assert!(v.get("hostPath").is_none(), "{what}: a hostPath volume {v}");
        }
        for c in &all {
            let name = format!("{what}/{}", c["name"].as_str().unwrap());
            let sc = &c["securityContext"];
            // A container's setting wins over the pod's.
            let effective = |k: &str| sc.get(k).unwrap_or(&pod[k]).clone();
            assert_eq!(effective("runAsNonRoot"), true, "{name}: runAsNonRoot");
            assert!(
                effective("runAsUser").as_u64().is_some_and(|u| u > 0),
                "{name}: a numeric non-root runAsUser"
            );
            assert_eq!(
                effective("seccompProfile")["type"],
                "RuntimeDefault",
                "{name}: seccompProfile"
            );
            assert_eq!(sc["allowPrivilegeEscalation"], false, "{name}");
            assert_ne!(sc["privileged"], true, "{name}");
            assert_eq!(sc["readOnlyRootFilesystem"], true, "{name}");
            assert_eq!(sc["capabilities"]["drop"], json!(["ALL"]), "{name}");
            assert!(
                sc["capabilities"].get("add").is_none(),
                "{name} adds capabilities"
            );
            assert!(
                c["ports"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .all(|p| p.get("hostPort").is_none()),
                "{name}: a hostPort"
            );
            for kind in ["requests", "limits"] {
                for resource in ["cpu", "memory"] {
                    assert!(
                        c["resources"][kind][resource].is_string(),
                        "{name}: resources.{kind}.{resource}"
                    );
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The config
// ---------------------------------------------------------------------------

#[test]
fn configmap_config_is_accepted_by_sift() {
    let dir = sift_tests::temp_dir("deploy-scheduler-config");
    let config = configmap_config(&dir);
    let plugins = sift_tests::plugins_dir();
    let out = sift(
        &[
            "plugins",
            "list",
            "--config",
            config.to_str().unwrap(),
            "--plugins",
            plugins.to_str().unwrap(),
        ],
        "deploy-scheduler-config-cache",
    );
    assert!(out.status.success(), "{}", text(&out));
    // Every plugin the config runs has a bundled component (the image's
    // plugins, which the initContainer installs): the filters, enabled and
    // numbered, and the scores.
    let parsed = sift_host::config::Config::load(&config).unwrap();
    let listed = String::from_utf8_lossy(&out.stdout);
    let line = |name: &str| {
        listed
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no bundled component serves {name}:\n{listed}"))
            .to_string()
    };
    let filters = parsed.filter_plugins();
    assert!(!filters.is_empty());
    for p in &filters {
        assert!(line(&p.name).contains(" #"), "{} is not enabled", p.name);
    }
    let scores = parsed.score_plugins();
    assert!(!scores.is_empty(), "a scheduler scores the feasible nodes");
    for (name, _) in &scores {
        line(name);
    }
    assert!(
        parsed.scheduler_name.is_some(),
        "schedulerName is spelt out: the name pods opt in with"
    );
    // The Deployment decides where plugins and the cache live.
    assert!(
        parsed.plugins_dir.is_none(),
        "pluginsDir belongs to --plugins"
    );
    assert!(
        parsed.cache_dir.is_none(),
        "cacheDir belongs to SIFT_CACHE_DIR"
    );
    assert!(
        parsed.extenders.is_empty(),
        "sift schedule runs plugins, not extenders"
    );
}

// ---------------------------------------------------------------------------
// RBAC
// ---------------------------------------------------------------------------

/// One RBAC rule, spelt out.
#[derive(Debug)]
struct Rule {
    groups: Vec<String>,
    resources: Vec<String>,
    verbs: Vec<String>,
    /// `resourceNames`; `None` when unrestricted.
    names: Option<Vec<String>>,
}

impl Rule {
    fn allows(&self, group: &str, resource: &str, verb: &str, name: Option<&str>) -> bool {
        self.groups.iter().any(|g| g == group)
            && self.resources.iter().any(|r| r == resource)
            && self.verbs.iter().any(|v| v == verb)
            && self
                .names
                .as_ref()
                .is_none_or(|n| name.is_some_and(|name| n.iter().any(|x| x == name)))
    }
}

fn rules(role: &Value) -> Vec<Rule> {
    role["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .map(|r| {
            for wildcard in ["apiGroups", "resources", "verbs"] {
                assert!(
                    !strings(&r[wildcard]).iter().any(|v| v == "*"),
                    "a wildcard: {r}"
                );
            }
            assert!(r.get("nonResourceURLs").is_none(), "{r}");
            Rule {
                groups: strings(&r["apiGroups"]),
                resources: strings(&r["resources"]),
                verbs: strings(&r["verbs"]),
                names: r.get("resourceNames").map(strings),
            }
        })
        .collect()
}

/// Whether a (Cluster)RoleBinding binds the scheduler's service account.
fn binds(binding: &Value, account: &str) -> bool {
    let namespace = namespace();
    binding["subjects"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|s| {
            s["kind"] == "ServiceAccount"
                && s["name"] == account
                && s["namespace"] == namespace.as_str()
        })
}

fn cluster_role() -> Value {
    let account = str_of(&pod_spec(), "/serviceAccountName").to_string();
    let sa = object("ServiceAccount", Some(&account));
    assert_eq!(str_of(&sa, "/metadata/namespace"), namespace());
    let bindings: Vec<Value> = objects()
        .into_iter()
        .filter(|o| o["kind"] == "ClusterRoleBinding" && binds(o, &account))
        .collect();
    assert_eq!(
        bindings.len(),
        1,
        "one ClusterRoleBinding for the service account {account}"
    );
    assert_eq!(bindings[0]["roleRef"]["kind"], "ClusterRole");
    object("ClusterRole", Some(str_of(&bindings[0], "/roleRef/name")))
}

/// A ClusterRole's rights as (group, resource, verb), none per name.
fn granted(role: &Value) -> BTreeSet<(String, String, String)> {
    let mut granted = BTreeSet::new();
    for rule in rules(role) {
        assert!(rule.names.is_none(), "cluster-wide rights are not per name");
        for group in &rule.groups {
            for resource in &rule.resources {
                for verb in &rule.verbs {
                    granted.insert((group.clone(), resource.clone(), verb.clone()));
                }
            }
        }
    }
    granted
}

/// What `sift schedule` does cluster-wide (deploy/scheduler/10-rbac.yaml
/// says why), and nothing more: `get` only on the claims and volumes
/// PreBind waits for (it watches the rest), no updates of pods,
/// no core v1 events, nothing of PriorityClasses or Volcano (batch mode's,
/// in their own file).
#[test]
fn cluster_role_grants_what_sift_schedule_does_and_no_more() {
    let granted = granted(&cluster_role());
    let mut wanted = BTreeSet::new();
    let mut want = |group: &str, resource: &str, verbs: &[&str]| {
        for verb in verbs {
            wanted.insert((group.to_string(), resource.to_string(), verb.to_string()));
        }
    };
    // The cluster state, as kube-scheduler's informers, and what
    // preemption spares pods by.
    for resource in ["nodes", "pods", "namespaces"] {
        want("", resource, &["list", "watch"]);
    }
    want("policy", "poddisruptionbudgets", &["list", "watch"]);
    // The default spread's selectors.
    for resource in ["services", "replicationcontrollers"] {
        want("", resource, &["list", "watch"]);
    }
    for resource in ["replicasets", "statefulsets"] {
        want("apps", resource, &["list", "watch"]);
    }
    // The volume filters' claims, volumes, classes, CSINodes, drivers,
    // capacities and attachments.
    for resource in ["persistentvolumeclaims", "persistentvolumes"] {
        want("", resource, &["list", "watch"]);
    }
    for resource in [
        "storageclasses",
        "csinodes",
        "csidrivers",
        "csistoragecapacities",
        "volumeattachments",
    ] {
        want("storage.k8s.io", resource, &["list", "watch"]);
    }
    // DynamicResources' claims, slices and classes.
    for resource in ["resourceclaims", "resourceslices", "deviceclasses"] {
        want("resource.k8s.io", resource, &["list", "watch"]);
    }
    // PreBind's writes, and the wait for the volume controller.
    for resource in ["persistentvolumeclaims", "persistentvolumes"] {
        want("", resource, &["get", "update"]);
    }
    for resource in ["resourceclaims", "resourceclaims/status"] {
        want("resource.k8s.io", resource, &["update"]);
    }
    want("", "pods/binding", &["create"]);
    // PodScheduled, nominatedNodeName; DisruptionTarget on victims.
    want("", "pods/status", &["patch"]);
    // Preemption victims.
    want("", "pods", &["delete"]);
    // Events with series.
    want("events.k8s.io", "events", &["create", "patch"]);
    assert_eq!(granted, wanted);
}

/// The ClusterRole of deploy/scheduler/batch, bound to the scheduler's
/// service account.
fn batch_cluster_role() -> Value {
    let account = str_of(&pod_spec(), "/serviceAccountName").to_string();
    let binding = one(
        batch_objects(),
        "ClusterRoleBinding",
        None,
        "deploy/scheduler/batch",
    );
    assert!(binds(&binding, &account), "{binding}");
    assert_eq!(binding["roleRef"]["kind"], "ClusterRole");
    one(
        batch_objects(),
        "ClusterRole",
        Some(str_of(&binding, "/roleRef/name")),
        "deploy/scheduler/batch",
    )
}

/// What batch mode adds to scheduler mode's rights, and nothing more:
/// Volcano's PodGroups (read, status patched) and Queues, and
/// PriorityClasses.
#[test]
fn batch_cluster_role_grants_what_batch_mode_adds_and_no_more() {
    let granted = granted(&batch_cluster_role());
    let mut wanted = BTreeSet::new();
    for (group, resource, verbs) in [
        (
            "scheduling.volcano.sh",
            "podgroups",
            &["list", "watch", "patch"][..],
        ),
        ("scheduling.volcano.sh", "queues", &["list", "watch"]),
        ("scheduling.k8s.io", "priorityclasses", &["list", "watch"]),
    ] {
        for verb in verbs {
            wanted.insert((group.to_string(), resource.to_string(), verb.to_string()));
        }
    }
    assert_eq!(granted, wanted);
}

// ---------------------------------------------------------------------------
// sift schedule run with the Deployment's arguments
// ---------------------------------------------------------------------------

/// A running `sift schedule`, stopped on drop.
struct Scheduler {
    child: Child,
    addr: String,
    log: PathBuf,
}

impl Drop for Scheduler {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Scheduler {
    /// The Deployment's arguments with this machine's config, plugins and
    /// port, against the API server `kubeconfig` names instead of the
    /// pod's (`--in-cluster` needs a service account), and `leader_elect`
    /// overriding the Deployment's choice when given; the container's
    /// environment, with the downward API's fields filled in, and this
    /// machine's compile cache.
    fn start(dir: &Path, kubeconfig: &Path, leader_elect: Option<bool>) -> Scheduler {
        Scheduler::start_with(dir, kubeconfig, leader_elect, &[])
    }

    /// As [`Scheduler::start`], with `extra` arguments after the
    /// Deployment's (e.g. `--mode batch`).
    fn start_with(
        dir: &Path,
        kubeconfig: &Path,
        leader_elect: Option<bool>,
        extra: &[&str],
    ) -> Scheduler {
        let config = configmap_config(dir);
        let plugins = sift_tests::plugins_dir();
        let mut run: Vec<String> = Vec::new();
        let deployment_args = args();
        let mut it = deployment_args.iter().peekable();
        while let Some(a) = it.next() {
            let flag = a.split('=').next().unwrap();
            let value = match flag {
                "--in-cluster" => {
                    run.extend(["--kubeconfig".into(), kubeconfig.display().to_string()]);
                    continue;
                }
                "--listen" => "127.0.0.1:0".to_string(),
                "--config" | "-c" => config.display().to_string(),
                "--plugins" => plugins.display().to_string(),
                "--leader-elect" if leader_elect.is_some() => {
                    if !a.contains('=') && it.peek().is_some_and(|v| !v.starts_with('-')) {
                        it.next();
                    }
                    continue;
                }
                _ => {
                    run.push(a.clone());
                    continue;
                }
            };
            if !a.contains('=') {
                it.next();
            }
            run.extend([flag.to_string(), value]);
        }
        if let Some(on) = leader_elect {
            run.push(format!("--leader-elect={on}"));
        }
        run.extend(extra.iter().map(|a| a.to_string()));
        let log = dir.join("sift.log");
        let mut command = Command::new(sift_tests::sift_bin());
        command.args(&run).env_remove("POD_NAMESPACE");
        // The container's environment: values as written, the downward
        // API's fields as the kubelet fills them in.
        for e in sift_container()["env"].as_array().into_iter().flatten() {
            let name = str_of(e, "/name");
            let value = match e["valueFrom"]["fieldRef"]["fieldPath"].as_str() {
                Some("metadata.namespace") => namespace(),
                Some("metadata.name") => "sift-scheduler-test".into(),
                Some(other) => panic!("{name}: the test knows no field {other}"),
                None => str_of(e, "/value").to_string(),
            };
            command.env(name, value);
        }
        let mut child = command
            .env("SIFT_CACHE_DIR", run_cache())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("run sift schedule");
        let stdout = child.stdout.take().unwrap();
        let mut scheduler = Scheduler {
            child,
            addr: String::new(),
            log,
        };
        let mut lines = BufReader::new(stdout).lines();
        scheduler.addr = loop {
            match lines.next() {
                Some(Ok(line)) => {
                    if let Some(a) = line.strip_prefix("listening on ") {
                        break a.trim().to_string();
                    }
                }
                _ => panic!(
                    "sift {run:?} exited before listening: {}",
                    scheduler.log_text()
                ),
            }
        };
        scheduler
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn get(&self, path: &str) -> (u16, String) {
        let agent = sift_tests::http_agent(Duration::from_secs(10));
        sift_tests::http_get(&agent, &format!("http://{}{path}", self.addr))
    }

    /// Polls `path` until `done` says yes (or panics after a while).
    fn wait_for(&self, what: &str, mut done: impl FnMut() -> bool) {
        let start = Instant::now();
        while !done() {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "timed out waiting for {what}: {}",
                self.log_text()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// The RBAC attributes of a request: API group, resource (with its
/// subresource), verb, namespace and name, as the API server's
/// RequestInfo derives them.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Attributes {
    group: String,
    resource: String,
    verb: String,
    namespace: Option<String>,
    name: Option<String>,
}

fn attributes(method: &str, path: &str, watch: bool) -> Attributes {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, mut rest) = match segments.first() {
        Some(&"api") => ("", &segments[2..]),
        Some(&"apis") => (segments[1], &segments[3..]),
        _ => panic!("not a resource request: {path}"),
    };
    let mut namespace = None;
    if rest.len() >= 3 && rest[0] == "namespaces" {
        namespace = Some(rest[1].to_string());
        rest = &rest[2..];
    }
    let name = rest.get(1).map(|n| n.to_string());
    let resource = match rest.get(2) {
        Some(sub) => format!("{}/{sub}", rest[0]),
        None => rest[0].to_string(),
    };
    let verb = match (method, name.is_some()) {
        ("GET", _) if watch => "watch",
        ("GET", true) => "get",
        ("GET", false) => "list",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", true) => "delete",
        ("DELETE", false) => "deletecollection",
        _ => panic!("{method} {path}"),
    };
    Attributes {
        group: group.to_string(),
        resource,
        verb: verb.to_string(),
        namespace,
        name,
    }
}

/// The scheduler's service account's rights: the ClusterRole's anywhere,
/// each Role's in its namespace.
struct Rights {
    cluster: Vec<Rule>,
    namespaced: Vec<(String, Vec<Rule>)>,
}

impl Rights {
    /// Scheduler mode's, plus batch mode's ClusterRole when `batch`.
    fn of(batch: bool) -> Rights {
        let mut rights = Rights::of_manifests();
        if batch {
            rights.cluster.extend(rules(&batch_cluster_role()));
        }
        rights
    }

    fn of_manifests() -> Rights {
        let account = str_of(&pod_spec(), "/serviceAccountName").to_string();
        let namespaced = objects()
            .into_iter()
            .filter(|o| o["kind"] == "RoleBinding" && binds(o, &account))
            .map(|b| {
                assert_eq!(b["roleRef"]["kind"], "Role", "{b}");
                let role = object("Role", Some(str_of(&b, "/roleRef/name")));
                let namespace = str_of(&role, "/metadata/namespace").to_string();
                assert_eq!(b["metadata"]["namespace"], namespace.as_str());
                (namespace, rules(&role))
            })
            .collect();
        Rights {
            cluster: rules(&cluster_role()),
            namespaced,
        }
    }

    /// Whether they let the service account make this request.
    fn grant(&self, a: &Attributes) -> bool {
        let allows = |r: &Rule| r.allows(&a.group, &a.resource, &a.verb, a.name.as_deref());
        self.cluster.iter().any(allows)
            || self
                .namespaced
                .iter()
                .any(|(ns, rules)| a.namespace.as_ref() == Some(ns) && rules.iter().any(allows))
    }
}

/// Every request sift made of the fake API server, as RBAC attributes,
/// each checked against the RBAC.
fn requests_are_granted(api: &FakeApiServer) -> BTreeSet<Attributes> {
    granted_requests(api, false)
}

/// As [`requests_are_granted`], with batch mode's rights too when `batch`.
fn granted_requests(api: &FakeApiServer, batch: bool) -> BTreeSet<Attributes> {
    let rights = Rights::of(batch);
    let mut seen = BTreeSet::new();
    for r in api.requests() {
        let a = attributes(&r.method, &r.path, r.watch);
        assert!(
            rights.grant(&a),
            "sift schedule made {r}, which its RBAC does not grant: {a:?}"
        );
        seen.insert(a);
    }
    seen
}

fn node(name: &str) -> Value {
    json!({"kind": "Node", "metadata": {"name": name,
            "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}},
           "spec": {},
           "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                      "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                      "conditions": [{"type": "Ready", "status": "True"}]}})
}

fn fake_api_server(dir: &Path) -> (FakeApiServer, PathBuf) {
    let api = FakeApiServer::start();
    api.add(node("n1"));
    api.add(json!({"kind": "Namespace", "metadata": {"name": "default"}}));
    api.add(json!({"kind": "Namespace", "metadata": {"name": namespace()}}));
    let kubeconfig = dir.join("kubeconfig");
    api.kubeconfig(&kubeconfig);
    (api, kubeconfig)
}

/// The probes are `sift schedule`'s routes on its port: alive while the
/// API server is away (the kubelet must not restart it for that), not
/// ready before its first lists are in, ready (`leader` or `standby`) once
/// they are and the ConfigMap's plugins are loaded.
#[test]
fn probes_are_sift_schedule_routes_and_readiness_waits_for_the_api_server() {
    let sift = sift_container();
    let port = listen_port();
    let probe = |name: &str| {
        let p = &sift[name];
        assert!(p.is_object(), "the sift container has no {name}");
        assert_eq!(
            container_port(&sift, &p["httpGet"]["port"]),
            port,
            "{name} port vs --listen"
        );
        str_of(p, "/httpGet/path").to_string()
    };
    let (startup, liveness, readiness) = (
        probe("startupProbe"),
        probe("livenessProbe"),
        probe("readinessProbe"),
    );
    assert_eq!(readiness, "/readyz");

    // An API server that is not there.
    let dir = sift_tests::temp_dir("deploy-scheduler-probes-down");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let kubeconfig = dir.join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: c\n\
             clusters: [{{name: c, cluster: {{server: \"{url}\"}}}}]\n\
             users: [{{name: u, user: {{token: t}}}}]\n\
             contexts: [{{name: c, context: {{cluster: c, user: u}}}}]\n"
        ),
    )
    .unwrap();
    let down = Scheduler::start(&dir, &kubeconfig, None);
    for path in [&startup, &liveness] {
        let (code, body) = down.get(path);
        assert_eq!(code, 200, "{path}: {body}");
    }
    let (code, body) = down.get(&readiness);
    assert_eq!(code, 503, "{readiness} before the first lists: {body}");
    assert!(body.contains("not synced"), "{readiness}: {body}");
    drop(down);

    // An API server with a node: synced, ready.
    let dir = sift_tests::temp_dir("deploy-scheduler-probes-up");
    let (_api, kubeconfig) = fake_api_server(&dir);
    let up = Scheduler::start(&dir, &kubeconfig, None);
    up.wait_for("/readyz 200", || up.get(&readiness).0 == 200);
    let body = up.get(&readiness).1;
    assert!(
        matches!(body.trim(), "leader" | "standby"),
        "{readiness}: {body}"
    );
    for path in ["/status", "/metrics", "/livez"] {
        assert_eq!(up.get(path).0, 200, "{path}");
    }
    let status: Value = serde_json::from_str(&up.get("/status").1).unwrap();
    assert_eq!(status["scheduler"], scheduler_name().as_str());
    assert_eq!(status["ready"], true, "{status}");
}

/// What `sift schedule`, run with the Deployment's arguments, asks of an
/// API server is what the RBAC grants: its lists and watches, the Lease
/// (in the Role's namespace, by the Role's name), and, as the leader with
/// the example pod pending, the binding and whatever follows it.
#[test]
fn what_sift_schedule_asks_of_the_api_server_is_granted() {
    // With the Deployment's election: sift reads its Lease, creates it,
    // leads, and renews it.
    let dir = sift_tests::temp_dir("deploy-scheduler-rbac-lease");
    let (api, kubeconfig) = fake_api_server(&dir);
    let elected = Scheduler::start(&dir, &kubeconfig, None);
    let lease = |a: &Attributes| a.group == "coordination.k8s.io" && a.resource == "leases";
    elected.wait_for("a Lease read, created and renewed", || {
        let seen = requests_are_granted(&api);
        seen.iter().any(|a| lease(a) && a.verb == "get")
            && seen.iter().any(|a| lease(a) && a.verb == "create")
            && seen.iter().any(|a| lease(a) && a.verb == "update")
    });
    let seen = requests_are_granted(&api);
    for a in seen.iter().filter(|a| lease(a)) {
        assert_eq!(a.namespace.as_deref(), Some(namespace().as_str()), "{a:?}");
    }
    for resource in ["nodes", "pods", "namespaces"] {
        for verb in ["list", "watch"] {
            assert!(
                seen.iter()
                    .any(|a| a.group.is_empty() && a.resource == resource && a.verb == verb),
                "no {verb} of {resource}: {seen:?}"
            );
        }
    }
    assert_eq!(elected.get("/readyz").1.trim(), "leader");
    drop(elected);

    // As the leader (election off, for a quick start), with the example
    // pod pending: sift takes it (its schedulerName is the config's) and
    // binds it.
    let dir = sift_tests::temp_dir("deploy-scheduler-rbac-bind");
    let (api, kubeconfig) = fake_api_server(&dir);
    let mut pod = example_pod();
    pod["metadata"]["namespace"] = json!("default");
    api.add(pod);
    let leader = Scheduler::start(&dir, &kubeconfig, Some(false));
    let example = str_of(&example_pod(), "/metadata/name").to_string();
    let wrote = |resource: &str, verb: &str, name: &str| {
        requests_are_granted(&api).iter().any(|a| {
            a.resource == resource
                && a.verb == verb
                && a.namespace.as_deref() == Some("default")
                && (name.is_empty() || a.name.as_deref() == Some(name))
        })
    };
    leader.wait_for("the example pod's binding", || {
        wrote("pods/binding", "create", &example)
    });
    assert_eq!(leader.get("/readyz").1.trim(), "leader");

    // A pod that fits only if a lower-priority one goes: sift preempts
    // (the victim's DisruptionTarget condition, then its delete) and
    // reports the pod unschedulable for now (its PodScheduled condition
    // and nomination, and events).
    let cpu_pod = |name: &str, scheduler: &str, priority: i32, cpu: &str| {
        json!({"kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedulerName": scheduler, "priority": priority,
                     "containers": [{"name": "c", "image": "app:1",
                                     "resources": {"requests": {"cpu": cpu}}}]}})
    };
    let mut victim = cpu_pod("victim", "default-scheduler", 0, "3900m");
    victim["spec"]["nodeName"] = json!("n1");
    victim["status"] = json!({"phase": "Running"});
    api.add(victim);
    api.add(cpu_pod("preemptor", "sift", 1000, "1"));
    leader.wait_for("the preemption's writes", || {
        wrote("pods/status", "patch", "victim")
            && wrote("pods", "delete", "victim")
            && wrote("pods/status", "patch", "preemptor")
            && requests_are_granted(&api)
                .iter()
                .any(|a| a.group == "events.k8s.io" && a.verb == "create")
    });
    // And whatever sift writes next.
    std::thread::sleep(Duration::from_millis(500));
    requests_are_granted(&api);
}

/// Batch mode, run with the Deployment's arguments and `--mode batch`,
/// asks of the API server only what scheduler mode's and batch mode's
/// RBAC grant together: Volcano's PodGroups and Queues and PriorityClasses
/// listed and watched, a gang bound, its PodGroup's status patched.
#[test]
fn what_batch_mode_asks_of_the_api_server_is_granted() {
    let dir = sift_tests::temp_dir("deploy-scheduler-rbac-batch");
    let (api, kubeconfig) = fake_api_server(&dir);
    api.add(
        json!({"kind": "Queue", "apiVersion": "scheduling.volcano.sh/v1beta1",
        "metadata": {"name": "default"}, "spec": {"weight": 1}}),
    );
    api.add(
        json!({"kind": "PodGroup", "apiVersion": "scheduling.volcano.sh/v1beta1",
        "metadata": {"name": "gang", "namespace": "default"},
        "spec": {"minMember": 2, "queue": "default"}}),
    );
    for i in 0..2 {
        api.add(json!({"kind": "Pod",
            "metadata": {"name": format!("gang-{i}"), "namespace": "default",
                         "annotations": {"scheduling.k8s.io/group-name": "gang"}},
            "spec": {"schedulerName": scheduler_name(),
                     "containers": [{"name": "c", "image": "app:1",
                                     "resources": {"requests": {"cpu": "1"}}}]}}));
    }
    let batch = Scheduler::start_with(&dir, &kubeconfig, Some(false), &["--mode", "batch"]);
    let seen = |group: &str, resource: &str, verb: &str| {
        granted_requests(&api, true)
            .iter()
            .any(|a| a.group == group && a.resource == resource && a.verb == verb)
    };
    batch.wait_for("the gang bound and its PodGroup patched", || {
        api.bindings().len() == 2 && seen("scheduling.volcano.sh", "podgroups", "patch")
    });
    for (group, resource) in [
        ("scheduling.volcano.sh", "podgroups"),
        ("scheduling.volcano.sh", "queues"),
        ("scheduling.k8s.io", "priorityclasses"),
    ] {
        for verb in ["list", "watch"] {
            assert!(seen(group, resource, verb), "no {verb} of {resource}");
        }
    }
    // And whatever sift writes next.
    std::thread::sleep(Duration::from_millis(500));
    granted_requests(&api, true);
    // Scheduler mode's rights alone would not do.
    let alone = Rights::of(false);
    assert!(
        api.requests()
            .iter()
            .any(|r| !alone.grant(&attributes(&r.method, &r.path, r.watch))),
        "batch mode needed nothing of deploy/scheduler/batch"
    );
}
