//! `deploy/`: the Kubernetes manifests, kube-scheduler's configuration and
//! the image recipe, checked offline. First against Kubernetes' own schemas
//! (PyPI's `kubernetes-validate`, strict: unknown fields fail), then against
//! what a schema cannot know: that sift accepts the Deployment's flags and
//! the ConfigMap's config, that the probes are sift's routes, that the
//! Service, the RBAC and the extender's urlPrefix fit together, and that
//! the pods run as the restricted Pod Security profile requires.

use serde_json::Value;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

/// The Kubernetes version the schemas are taken from: k8s-openapi's
/// `v1_35` (tests/Cargo.toml), the API sift reads.
const KUBERNETES_VERSION: &str = "1.35.0";

/// How to get the validator (scripts/test.sh installs it).
const INSTALL_VALIDATOR: &str = "python3 -m pip install kubernetes-validate \
     (scripts/test.sh installs the pinned version)";

fn deploy_dir() -> PathBuf {
    sift_tests::workspace_root().join("deploy")
}

/// The manifests `kubectl apply -f deploy/manifests/` applies, in order.
fn manifest_files() -> Vec<PathBuf> {
    let dir = deploy_dir().join("manifests");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no manifests in {}", dir.display());
    files
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

/// The one object of this kind (and name, if given).
fn object(kind: &str, name: Option<&str>) -> Value {
    let found: Vec<Value> = objects()
        .into_iter()
        .filter(|o| o["kind"] == kind && name.is_none_or(|n| o["metadata"]["name"] == n))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "expected one {kind} {name:?} in deploy/manifests, found {}",
        found.len()
    );
    found.into_iter().next().unwrap()
}

fn str_of<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no string at {pointer} in {v:#}"))
}

fn deployment() -> Value {
    object("Deployment", Some("sift"))
}

fn pod_spec() -> Value {
    deployment()["spec"]["template"]["spec"].clone()
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

fn args() -> Vec<String> {
    sift_container()["args"]
        .as_array()
        .expect("the sift container has args")
        .iter()
        .map(|a| a.as_str().expect("args are strings").to_string())
        .collect()
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

/// Where the sift container mounts the named volume.
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

/// The name of the volume mounted at `path` (or a parent of it).
fn volume_at(container: &Value, path: &str) -> String {
    container["volumeMounts"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| Path::new(path).starts_with(str_of(m, "/mountPath")))
        .map(|m| str_of(m, "/name").to_string())
        .unwrap_or_else(|| panic!("container {} mounts nothing at {path}", container["name"]))
}

/// The port number a probe or Service names, by number or container port name.
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
    let port = listen
        .rsplit_once(':')
        .and_then(|(_, p)| p.parse().ok())
        .unwrap_or_else(|| panic!("--listen {listen} has no port"));
    assert!(
        listen.starts_with("0.0.0.0:") || listen.starts_with("[::]:"),
        "--listen {listen}: sift must listen on all addresses to be reached through the Service"
    );
    port
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The ConfigMap's sift.yaml, written to a file of its own.
fn configmap_config(dir: &Path) -> PathBuf {
    let sift = sift_container();
    let path = flag_value(&args(), "--config").expect("the Deployment passes --config");
    let file = Path::new(&path).file_name().unwrap().to_str().unwrap();
    let vol = volume(&volume_at(&sift, &path));
    let name = str_of(&vol, "/configMap/name");
    let cm = object("ConfigMap", Some(name));
    let text = cm["data"][file]
        .as_str()
        .unwrap_or_else(|| panic!("ConfigMap {name} has no key {file}, the --config file"));
    let out = dir.join(file);
    std::fs::write(&out, text).unwrap();
    out
}

fn sift(args: &[&str], cache: &str) -> Output {
    sift_tests::run_sift(args, cache)
}

#[test]
fn manifests_pass_kubernetes_schemas_strictly() {
    let files = manifest_files();
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
        objects().len(),
        "each object validated once: {report}"
    );
    assert!(report.contains("against version 1.35"), "{report}");
}

#[test]
fn deployment_flags_are_sift_serve_flags() {
    let args = args();
    assert_eq!(args[0], "serve", "the image's entrypoint is sift: {args:?}");
    assert!(
        sift_container().get("command").is_none(),
        "the image's entrypoint (/usr/bin/sift) must run the args"
    );
    let help = sift(&["serve", "--help"], "deploy-help");
    assert!(help.status.success(), "{}", text(&help));
    let help = String::from_utf8_lossy(&help.stdout);
    let known: BTreeSet<&str> = help
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|w| w.starts_with("--"))
        .collect();
    for a in &args[1..] {
        if let Some(flag) = a.strip_prefix("--") {
            let flag = format!("--{}", flag.split('=').next().unwrap());
            assert!(
                known.contains(flag.as_str()),
                "the Deployment passes {flag}, which `sift serve` does not have: {known:?}"
            );
        }
    }
    assert!(
        args.iter().any(|a| a == "--in-cluster"),
        "the Deployment must watch its cluster: --in-cluster"
    );
}

#[test]
fn deployment_paths_ports_and_volumes_agree() {
    let args = args();
    let sift = sift_container();
    let spec = pod_spec();

    // The port sift listens on is the container port the probes and the
    // Service use.
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

    // The plugins directory is a writable volume, filled by the
    // initContainer from the image's bundled components.
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
    let inits = containers(&spec, "initContainers");
    let install = inits
        .iter()
        .find(|c| c["name"] == "install-plugins")
        .expect("an initContainer install-plugins");
    assert_eq!(
        install["image"], sift["image"],
        "the defaults come from sift's image"
    );
    let command: Vec<&str> = install["command"]
        .as_array()
        .expect("install-plugins has a command")
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    let dest = command.last().unwrap();
    assert_eq!(
        Path::new(dest),
        Path::new(&mount_path(install, "plugins")),
        "install-plugins copies into the plugins volume: {command:?}"
    );

    // The config file is the ConfigMap's, mounted as a directory (a subPath
    // mount never sees an edit).
    let config = flag_value(&args, "--config").expect("--config");
    let config_volume = volume_at(&sift, &config);
    assert!(volume(&config_volume).get("configMap").is_some());
    let mount = sift["volumeMounts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == config_volume.as_str())
        .unwrap();
    assert!(
        mount.get("subPath").is_none(),
        "config mounted by subPath: {mount}"
    );
    configmap_config(&sift_tests::temp_dir("deploy-paths"));

    // The compile cache is a writable volume, the root filesystem being
    // read-only.
    let cache = sift["env"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["name"] == "SIFT_CACHE_DIR")
        .map(|e| str_of(e, "/value").to_string())
        .expect("SIFT_CACHE_DIR is set");
    assert_eq!(
        mount_path(&sift, "cache"),
        cache,
        "SIFT_CACHE_DIR vs its mount"
    );
    assert!(
        volume("cache").get("emptyDir").is_some(),
        "cache: an emptyDir"
    );
}

/// A running `sift serve`, stopped on drop.
struct Served {
    child: Child,
    addr: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn probes_are_sift_routes_and_readiness_waits_for_the_api_server() {
    let dir = sift_tests::temp_dir("deploy-probes");
    let config = configmap_config(&dir);
    // An API server that is not there: the watch cannot list, as in a pod
    // whose API server is unreachable. (`--in-cluster` needs a pod's
    // service account; `--kubeconfig` is the same watch.)
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let api = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let kubeconfig = dir.join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: c\n\
             clusters: [{{name: c, cluster: {{server: \"{api}\"}}}}]\n\
             users: [{{name: u, user: {{token: t}}}}]\n\
             contexts: [{{name: c, context: {{cluster: c, user: u}}}}]\n"
        ),
    )
    .unwrap();

    // The Deployment's own arguments, with this machine's paths and port.
    let plugins = sift_tests::plugins_dir();
    let mut run: Vec<String> = Vec::new();
    let deployment_args = args();
    let mut it = deployment_args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--in-cluster" => run.extend(["--kubeconfig".into(), kubeconfig.display().to_string()]),
            "--listen" | "--config" | "--plugins" => {
                let value = match a.as_str() {
                    "--listen" => "127.0.0.1:0".to_string(),
                    "--config" => config.display().to_string(),
                    _ => plugins.display().to_string(),
                };
                it.next();
                run.extend([a.clone(), value]);
            }
            _ => run.push(a.clone()),
        }
    }
    let mut child = Command::new(sift_tests::sift_bin())
        .args(&run)
        .env("SIFT_CACHE_DIR", dir.join("cache"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run sift serve");
    let stdout = child.stdout.take().unwrap();
    let mut served = Served {
        child,
        addr: String::new(),
    };
    let mut lines = BufReader::new(stdout).lines();
    served.addr = loop {
        match lines.next() {
            Some(Ok(line)) => {
                if let Some(a) = line.strip_prefix("listening on ") {
                    break a.trim().to_string();
                }
            }
            _ => panic!("sift serve {run:?} exited before listening"),
        }
    };

    let agent = sift_tests::http_agent(Duration::from_secs(10));
    let get = |path: &str| sift_tests::http_get(&agent, &format!("http://{}{path}", served.addr));

    let sift = sift_container();
    let port = listen_port();
    for probe in ["startupProbe", "livenessProbe", "readinessProbe"] {
        let p = &sift[probe];
        assert!(p.is_object(), "the sift container has no {probe}");
        assert_eq!(
            container_port(&sift, &p["httpGet"]["port"]),
            port,
            "{probe} port vs --listen"
        );
        let path = str_of(p, "/httpGet/path");
        let (code, body) = get(path);
        if probe == "readinessProbe" {
            // Not ready until the first lists are in: kube-scheduler must
            // not be sent to a replica with an empty cluster.
            assert_eq!(code, 503, "{probe} {path}: {body}");
            assert!(body.contains("API server"), "{probe} {path}: {body}");
        } else {
            // Alive while the API server is away: the kubelet must not
            // restart sift for it.
            assert_eq!(code, 200, "{probe} {path}: {body}");
        }
    }
    // And the endpoints deploy/README.md sends the operator to.
    for path in ["/status", "/metrics"] {
        assert_eq!(get(path).0, 200, "{path}");
    }
}

#[test]
fn cluster_role_grants_what_sift_watches_and_no_more() {
    let spec = pod_spec();
    let namespace = str_of(&deployment(), "/metadata/namespace").to_string();
    let account = str_of(&spec, "/serviceAccountName").to_string();
    let sa = object("ServiceAccount", Some(&account));
    assert_eq!(str_of(&sa, "/metadata/namespace"), namespace);

    let binding = objects()
        .into_iter()
        .find(|o| {
            o["kind"] == "ClusterRoleBinding"
                && o["subjects"].as_array().into_iter().flatten().any(|s| {
                    s["kind"] == "ServiceAccount"
                        && s["name"] == account.as_str()
                        && s["namespace"] == namespace.as_str()
                })
        })
        .unwrap_or_else(|| panic!("no ClusterRoleBinding for {namespace}/{account}"));
    assert_eq!(binding["roleRef"]["kind"], "ClusterRole");
    let role = object("ClusterRole", Some(str_of(&binding, "/roleRef/name")));

    let mut granted = BTreeSet::new();
    for rule in role["rules"].as_array().expect("rules") {
        let list = |k: &str| -> Vec<String> {
            rule[k]
                .as_array()
                .into_iter()
                .flatten()
                .map(|v| v.as_str().unwrap().to_string())
                .collect()
        };
        for group in list("apiGroups") {
            for resource in list("resources") {
                for verb in list("verbs") {
                    granted.insert((group.clone(), resource.clone(), verb));
                }
            }
        }
    }
    let mut wanted = BTreeSet::new();
    for resource in ["nodes", "pods", "namespaces"] {
        for verb in ["get", "list", "watch"] {
            wanted.insert((String::new(), resource.to_string(), verb.to_string()));
        }
    }
    // The default spread's selectors, the volume filters' objects and
    // DynamicResources'.
    for (group, resource) in [
        ("", "services"),
        ("", "replicationcontrollers"),
        ("apps", "replicasets"),
        ("apps", "statefulsets"),
        ("", "persistentvolumeclaims"),
        ("", "persistentvolumes"),
        ("storage.k8s.io", "storageclasses"),
        ("storage.k8s.io", "csinodes"),
        ("storage.k8s.io", "csidrivers"),
        ("storage.k8s.io", "csistoragecapacities"),
        ("storage.k8s.io", "volumeattachments"),
        ("resource.k8s.io", "resourceclaims"),
        ("resource.k8s.io", "resourceslices"),
        ("resource.k8s.io", "deviceclasses"),
    ] {
        for verb in ["list", "watch"] {
            wanted.insert((group.to_string(), resource.to_string(), verb.to_string()));
        }
    }
    assert_eq!(
        granted, wanted,
        "sift reads what its plugins read, nothing else"
    );
}

#[test]
fn service_selects_sift_pods_on_the_port_sift_listens_on() {
    let service = object("Service", Some("sift"));
    let dep = deployment();
    assert_eq!(
        service["metadata"]["namespace"],
        dep["metadata"]["namespace"]
    );
    let labels = &dep["spec"]["template"]["metadata"]["labels"];
    let selector = service["spec"]["selector"].as_object().expect("a selector");
    assert!(!selector.is_empty());
    for (k, v) in selector {
        assert_eq!(
            &labels[k], v,
            "Service selector {k} vs the pod template's labels"
        );
    }
    for (k, v) in dep["spec"]["selector"]["matchLabels"].as_object().unwrap() {
        assert_eq!(
            &labels[k], v,
            "Deployment selector {k} vs the pod template's labels"
        );
    }
    let ports = service["spec"]["ports"].as_array().unwrap();
    assert_eq!(ports.len(), 1, "one port: the extender's");
    let target = ports[0].get("targetPort").unwrap_or(&ports[0]["port"]);
    assert_eq!(
        container_port(&sift_container(), target),
        listen_port(),
        "the Service's targetPort vs --listen"
    );
}

#[test]
fn configmap_config_is_accepted_by_sift() {
    let dir = sift_tests::temp_dir("deploy-config");
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
        "deploy-config-cache",
    );
    assert!(out.status.success(), "{}", text(&out));
    // Every filter the config enables has a bundled component (the image's
    // plugins, which the initContainer installs).
    let parsed = sift_host::config::Config::load(&config).unwrap();
    let enabled = parsed.filter_plugins();
    let listed = String::from_utf8_lossy(&out.stdout);
    for p in &enabled {
        assert!(
            listed
                .lines()
                .any(|l| l.split_whitespace().next() == Some(p.name.as_str()) && l.contains(" #")),
            "{} is enabled but no bundled component serves it:\n{listed}",
            p.name
        );
    }
    assert!(!enabled.is_empty());
    // The Deployment decides where plugins and the cache live: a config
    // that set them would point sift at directories the pod does not have
    // (or a read-only root filesystem).
    assert!(
        parsed.plugins_dir.is_none(),
        "pluginsDir belongs to --plugins"
    );
    assert!(
        parsed.cache_dir.is_none(),
        "cacheDir belongs to SIFT_CACHE_DIR"
    );
}

#[test]
fn kube_scheduler_extender_is_one_sift_parses_and_points_at_the_service() {
    let file = deploy_dir().join("kube-scheduler-config.yaml");
    let docs = yaml_documents(&file);
    assert_eq!(docs.len(), 1);
    let ksc = &docs[0];
    assert_eq!(ksc["apiVersion"], "kubescheduler.config.k8s.io/v1");
    assert_eq!(ksc["kind"], "KubeSchedulerConfiguration");
    // No schema is published for KubeSchedulerConfiguration: its v1
    // fields, as k8s.io/kube-scheduler/config/v1 spells them.
    let top = [
        "apiVersion",
        "kind",
        "parallelism",
        "leaderElection",
        "clientConnection",
        "healthzBindAddress",
        "metricsBindAddress",
        "enableProfiling",
        "enableContentionProfiling",
        "percentageOfNodesToScore",
        "podInitialBackoffSeconds",
        "podMaxBackoffSeconds",
        "profiles",
        "extenders",
        "delayCacheUntilActive",
    ];
    let client = [
        "kubeconfig",
        "acceptContentTypes",
        "contentType",
        "qps",
        "burst",
    ];
    let election = [
        "leaderElect",
        "leaseDuration",
        "renewDeadline",
        "retryPeriod",
        "resourceLock",
        "resourceName",
        "resourceNamespace",
    ];
    for (at, value, known) in [
        ("", ksc, &top[..]),
        ("clientConnection.", &ksc["clientConnection"], &client[..]),
        ("leaderElection.", &ksc["leaderElection"], &election[..]),
    ] {
        for key in value.as_object().into_iter().flatten().map(|(k, _)| k) {
            assert!(
                known.contains(&key.as_str()),
                "{}: {at}{key} is not a KubeSchedulerConfiguration v1 field",
                file.display()
            );
        }
    }
    // With --config, kube-scheduler ignores --kubeconfig: the file says it.
    assert!(ksc["clientConnection"]["kubeconfig"].is_string());

    // sift reads the same `extenders:` stanza (KubeSchedulerConfiguration's
    // spelling, unknown fields refused, upstream's validation): a typo here
    // fails here, not in kube-scheduler's log.
    let extenders = ksc["extenders"].as_array().expect("extenders");
    let dir = sift_tests::temp_dir("deploy-extenders");
    let only = serde_json::json!({
        "apiVersion": ksc["apiVersion"], "kind": ksc["kind"], "extenders": extenders,
    });
    let path = dir.join("extenders.yaml");
    std::fs::write(&path, serde_json::to_string_pretty(&only).unwrap()).unwrap();
    let plugins = sift_tests::plugins_dir();
    let out = sift(
        &[
            "plugins",
            "list",
            "--config",
            path.to_str().unwrap(),
            "--plugins",
            plugins.to_str().unwrap(),
        ],
        "deploy-extenders-cache",
    );
    assert!(out.status.success(), "{}", text(&out));

    // The one extender is sift's Service, asked for the filter verb only,
    // with node names (sift keeps its own nodes).
    assert_eq!(extenders.len(), 1);
    let e = &extenders[0];
    let url = str_of(e, "/urlPrefix");
    let rest = url
        .strip_prefix("http://")
        .unwrap_or_else(|| panic!("urlPrefix {url}: sift serves http"));
    let (authority, _path) = rest.split_once('/').unwrap_or((rest, ""));
    let (host, port) = authority
        .rsplit_once(':')
        .unwrap_or_else(|| panic!("urlPrefix {url} has no port"));
    let labels: Vec<&str> = host.split('.').collect();
    assert!(
        labels.len() >= 3 && labels[2] == "svc",
        "urlPrefix {url}: NAME.NAMESPACE.svc"
    );
    let service = object("Service", Some(labels[0]));
    assert_eq!(
        service["metadata"]["namespace"], labels[1],
        "urlPrefix {url} vs the Service's namespace"
    );
    let port: u64 = port.parse().unwrap();
    assert!(
        service["spec"]["ports"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["port"].as_u64() == Some(port)),
        "urlPrefix {url}: the Service has no port {port}"
    );
    let verb = flag_value(&args(), "--filter-verb").unwrap_or_else(|| "filter".into());
    assert_eq!(
        e["filterVerb"],
        verb.as_str(),
        "sift answers <prefix>/{verb}"
    );
    for unserved in ["preemptVerb", "bindVerb"] {
        assert!(
            e.get(unserved).is_none_or(|v| v == ""),
            "{unserved}: sift serve answers the filter and prioritize verbs only"
        );
    }
    assert_eq!(
        e["nodeCacheCapable"], true,
        "sift watches the cluster: PodTopologySpread and InterPodAffinity need NodeNames"
    );
    assert!(
        e["ignorable"].is_boolean(),
        "ignorable is a choice: make it explicitly"
    );
}

#[test]
fn pods_meet_the_restricted_pod_security_profile() {
    let ns = object("Namespace", None);
    assert_eq!(
        str_of(&ns, "/metadata/name"),
        str_of(&deployment(), "/metadata/namespace")
    );
    assert_eq!(
        ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"], "restricted",
        "the namespace enforces the profile the pods are written for"
    );
    let spec = pod_spec();
    let pod = &spec["securityContext"];
    let all: Vec<Value> = containers(&spec, "initContainers")
        .into_iter()
        .chain(containers(&spec, "containers"))
        .collect();
    assert!(all.len() >= 2);
    for c in &all {
        let name = c["name"].as_str().unwrap();
        let sc = &c["securityContext"];
        // A container's setting wins over the pod's.
        let effective = |k: &str| sc.get(k).unwrap_or(&pod[k]).clone();
        assert_eq!(effective("runAsNonRoot"), true, "{name}: runAsNonRoot");
        let uid = effective("runAsUser").as_u64();
        assert!(
            uid.is_some_and(|u| u > 0),
            "{name}: a numeric non-root runAsUser"
        );
        assert_eq!(
            effective("seccompProfile")["type"],
            "RuntimeDefault",
            "{name}: seccompProfile"
        );
        assert_eq!(sc["allowPrivilegeEscalation"], false, "{name}");
        assert_eq!(sc["readOnlyRootFilesystem"], true, "{name}");
        assert_eq!(
            sc["capabilities"]["drop"],
            serde_json::json!(["ALL"]),
            "{name}"
        );
        assert!(
            sc["capabilities"].get("add").is_none(),
            "{name} adds capabilities"
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

#[test]
fn image_recipe_fits_the_deployment() {
    let recipe = std::fs::read_to_string(deploy_dir().join("Containerfile")).unwrap();
    let instructions: Vec<(String, String)> = recipe
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once(' '))
        .map(|(i, rest)| (i.to_uppercase(), rest.trim().to_string()))
        .collect();
    let all = |i: &str| -> Vec<String> {
        instructions
            .iter()
            .filter(|(k, _)| k == i)
            .map(|(_, v)| v.clone())
            .collect()
    };
    assert_eq!(all("FROM"), ["scratch"], "one stage, FROM scratch");
    assert!(all("RUN").is_empty(), "FROM scratch has nothing to RUN");

    // The image's user is the pod's.
    let pod = &pod_spec()["securityContext"];
    let user = format!("{}:{}", pod["runAsUser"], pod["runAsGroup"]);
    assert_eq!(
        all("USER"),
        [user],
        "USER vs the pod's runAsUser:runAsGroup"
    );

    // The Deployment runs what the image holds: sift as the entrypoint
    // (args only), and the initContainer's cp and plugins directory.
    let copied: Vec<String> = all("COPY")
        .iter()
        .map(|c| c.split_whitespace().last().unwrap().to_string())
        .collect();
    assert_eq!(all("ENTRYPOINT"), [r#"["/usr/bin/sift"]"#]);
    assert!(copied.contains(&"/usr/bin/sift".to_string()), "{copied:?}");
    let spec = pod_spec();
    let install = containers(&spec, "initContainers")
        .into_iter()
        .find(|c| c["name"] == "install-plugins")
        .unwrap();
    let command: Vec<String> = install["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    let in_image = |path: &str| {
        copied
            .iter()
            .any(|dest| Path::new(path).starts_with(dest.trim_end_matches('/')))
    };
    assert!(in_image(&command[0]), "{} is not in the image", command[0]);
    let source = &command[command.len() - 2];
    assert!(in_image(source), "{source} is not in the image");

    // build-image.sh puts into the context what the COPY lines name.
    let script = sift_tests::workspace_root().join("scripts/build-image.sh");
    let check = Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .unwrap();
    assert!(check.status.success(), "{}", text(&check));
    let script = std::fs::read_to_string(&script).unwrap();
    let tool = Path::new(&command[0])
        .file_name()
        .unwrap()
        .to_str()
        .unwrap();
    assert!(
        script.contains(&format!("\"$context/bin/{tool}\"")),
        "build-image.sh does not install busybox as bin/{tool}"
    );
}

/// sift's routes have no authentication (and /cluster, when allowed,
/// rewrites sift's view of the cluster): a NetworkPolicy admits only
/// kube-scheduler (on the pod network by its static pods' label, on the
/// host network by address) and Prometheus, to sift's port only.
#[test]
fn network_policy_admits_only_the_scheduler_and_monitoring_to_sift_port() {
    let policy = object("NetworkPolicy", Some("sift"));
    let dep = deployment();
    assert_eq!(
        policy["metadata"]["namespace"], dep["metadata"]["namespace"],
        "the policy is in sift's namespace"
    );
    // It selects sift's pods (and only by labels they carry).
    let labels = &dep["spec"]["template"]["metadata"]["labels"];
    let selector = &policy["spec"]["podSelector"];
    assert!(
        selector.get("matchExpressions").is_none(),
        "{selector}: matchLabels only"
    );
    let match_labels = selector["matchLabels"]
        .as_object()
        .expect("podSelector.matchLabels (an empty selector selects every pod)");
    assert!(!match_labels.is_empty());
    for (k, v) in match_labels {
        assert_eq!(
            &labels[k], v,
            "podSelector {k} vs the pod template's labels"
        );
    }
    let types: Vec<&str> = policy["spec"]["policyTypes"]
        .as_array()
        .expect("policyTypes")
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(types.contains(&"Ingress"), "{types:?}");
    assert!(
        !types.contains(&"Egress"),
        "sift must reach the API server: egress is not restricted"
    );

    // Every rule names its peers (a rule without `from` admits everyone)
    // and sift's port only (one without `ports` admits every port).
    let sift = sift_container();
    let port = listen_port();
    let rules = policy["spec"]["ingress"].as_array().expect("ingress rules");
    assert!(!rules.is_empty());
    let mut peers = Vec::new();
    for rule in rules {
        let from = rule["from"]
            .as_array()
            .filter(|f| !f.is_empty())
            .unwrap_or_else(|| panic!("a rule admits everyone: {rule}"));
        peers.extend(from.iter().cloned());
        let ports = rule["ports"]
            .as_array()
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| panic!("a rule admits every port: {rule}"));
        for p in ports {
            assert_eq!(
                container_port(&sift, &p["port"]),
                port,
                "NetworkPolicy port {p} vs --listen"
            );
            assert!(p.get("endPort").is_none(), "{p}");
            assert!(p.get("protocol").is_none_or(|v| v == "TCP"), "{p}");
        }
    }
    // The Service's port leads to that same container port.
    let service = object("Service", Some("sift"));
    let target = &service["spec"]["ports"][0]["targetPort"];
    assert_eq!(container_port(&sift, target), port);

    // kube-scheduler as a pod: its static pods' label, in kube-system.
    assert!(
        peers.iter().any(|p| {
            p["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"] == "kube-system"
                && p["podSelector"]["matchLabels"]["component"] == "kube-scheduler"
        }),
        "no peer selects kube-scheduler's pods in kube-system: {peers:?}"
    );
    // kube-scheduler on the host network: by address.
    assert!(
        peers.iter().any(|p| p["ipBlock"]["cidr"].is_string()),
        "no ipBlock for a host-network kube-scheduler: {peers:?}"
    );
    // No peer admits a whole namespace's pods, or every address.
    for p in &peers {
        if p.get("namespaceSelector").is_some() {
            assert!(
                p["podSelector"]["matchLabels"]
                    .as_object()
                    .is_some_and(|m| !m.is_empty()),
                "a peer admits every pod of a namespace: {p}"
            );
        }
        if let Some(cidr) = p["ipBlock"]["cidr"].as_str() {
            assert!(!cidr.ends_with("/0"), "a peer admits every address: {p}");
        }
        assert!(
            p.get("namespaceSelector").is_some() || p.get("ipBlock").is_some(),
            "a podSelector alone admits only sift-system's own pods: {p}"
        );
    }

    // The Deployment does not turn /cluster on.
    assert!(
        !args()
            .iter()
            .any(|a| a.starts_with("--allow-cluster-events")),
        "the Deployment allows /cluster events"
    );
}
