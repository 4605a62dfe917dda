//! The `extenders:` stanza end to end: one sift simulating (conformance
//! simulation cases, `sift simulate`, `sift filter`) calls another sift,
//! `sift serve`, as its filter extender over loopback, in both
//! nodeCacheCapable modes; a scripted extender checks errors, `ignorable`,
//! `managedResources` and the prioritize verb's weighting.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};

fn sift(args: &[&str]) -> Output {
    Command::new(sift_tests::sift_bin())
        .args(args)
        .env("SIFT_PLUGINS_DIR", sift_tests::plugins_dir())
        .env("SIFT_CACHE_DIR", sift_tests::temp_dir("extenders-cache"))
        .current_dir(sift_tests::workspace_root())
        .output()
        .expect("run sift")
}

/// `sift serve` on the bundled plugins (default filters), killed on drop.
struct Serve {
    child: Child,
    base: String,
}

impl Serve {
    fn start(extra: &[&str]) -> Serve {
        let plugins = sift_tests::plugins_dir();
        let mut child = Command::new(sift_tests::sift_bin())
            .args(["serve", "--listen", "127.0.0.1:0", "--plugins"])
            .arg(&plugins)
            .args(extra)
            .env("SIFT_CACHE_DIR", sift_tests::temp_dir("extenders-cache"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("sift serve starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_string();
        Serve {
            child,
            base: format!("http://{addr}"),
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An extender whose answers a closure gives, per verb; it records the
/// verbs called and the bodies received.
struct Scripted {
    base: String,
    calls: Arc<Mutex<Vec<(String, Value)>>>,
}

impl Scripted {
    fn start(answer: fn(&str, &Value) -> (u16, String)) -> Scripted {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}/ext", listener.local_addr().unwrap());
        let calls = Arc::new(Mutex::new(Vec::new()));
        let seen = calls.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request_line = String::new();
                if reader.read_line(&mut request_line).is_err() {
                    continue;
                }
                let path = request_line
                    .split_whitespace()
                    .nth(1)
                    .unwrap_or("")
                    .to_string();
                let mut length = 0;
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
                        break;
                    }
                    if let Some((k, v)) = h.split_once(':')
                        && k.eq_ignore_ascii_case("content-length")
                    {
                        length = v.trim().parse().unwrap_or(0);
                    }
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let verb = path.rsplit('/').next().unwrap_or("").to_string();
                let (status, reply) = answer(&verb, &body);
                seen.lock().unwrap().push((verb, body));
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}",
                    reply.len()
                );
            }
        });
        Scripted { base, calls }
    }

    fn verbs(&self) -> Vec<String> {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .map(|(v, _)| v.clone())
            .collect()
    }
}

fn node(name: &str, tainted: bool) -> Value {
    let mut n = json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}});
    if tainted {
        n["spec"] =
            json!({"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]});
    }
    n
}

fn pod(name: &str, extra_resource: Option<&str>) -> Value {
    let mut requests = json!({"cpu": "1", "memory": "1Gi"});
    if let Some(r) = extra_resource {
        requests[r] = json!("1");
    }
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}")},
        "spec": {"containers": [{"name": "c", "resources": {"requests": requests}}]}})
}

/// Runs one simulation case through `sift conformance`.
fn conformance(dir: &Path, name: &str, case: Value) -> Output {
    let file = dir.join(format!("{name}.json"));
    std::fs::write(&file, serde_json::to_string_pretty(&case).unwrap()).unwrap();
    sift(&["conformance", file.to_str().unwrap()])
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The simulating sift runs only NodeName; the extender, `sift serve`,
/// runs the default filters, so its TaintToleration is what keeps pods off
/// the tainted nodes, and its rejections are the FitError's histogram.
#[test]
fn sift_serve_filters_for_a_simulating_sift_in_both_node_cache_modes() {
    let dir = sift_tests::temp_dir("extenders-loopback");
    let nodes = vec![node("n1", true), node("n2", true), node("n3", false)];
    let cluster = dir.join("cluster.json");
    std::fs::write(
        &cluster,
        json!({"apiVersion": "v1", "kind": "List", "items": nodes}).to_string(),
    )
    .unwrap();
    // Node names only make sense to a server that knows the cluster.
    let server = Serve::start(&["--cluster", cluster.to_str().unwrap()]);
    let taint = "node(s) had untolerated taint(s)";
    for cache in [false, true] {
        let config = json!({"extenders": [{"urlPrefix": server.base, "filterVerb": "filter",
                                           "nodeCacheCapable": cache}]});
        let o = conformance(
            &dir,
            &format!("binds-{cache}"),
            json!({"name": format!("extender keeps the untainted node (cache {cache})"),
                   "filters": ["NodeName"], "config": config, "nodes": nodes,
                   "workload": [pod("a", None), pod("b", None)],
                   "expect": {"binds": {"default/a": "n3", "default/b": "n3"}}}),
        );
        assert!(o.status.success(), "{}", text(&o));
        let all_tainted = vec![node("n1", true), node("n2", true)];
        let o = conformance(
            &dir,
            &format!("message-{cache}"),
            json!({"name": "extender rejects every node", "filters": ["NodeName"],
                   "config": config, "nodes": all_tainted, "workload": [pod("a", None)],
                   "expect": {"unscheduled": ["default/a"], "messages": {"default/a":
                       format!("0/2 nodes are available: 2 {taint}. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")}}}),
        );
        assert!(o.status.success(), "{}", text(&o));
    }

    // `sift simulate` and `sift filter` call it from a config file.
    let config = dir.join("config.yaml");
    std::fs::write(
        &config,
        format!(
            "plugins:\n  filter:\n    disabled: [{{name: \"*\"}}]\n    enabled: [{{name: NodeName}}]\nextenders:\n  - {{urlPrefix: \"{}\", filterVerb: filter}}\n",
            server.base
        ),
    )
    .unwrap();
    let workload = dir.join("workload.ndjson");
    std::fs::write(
        &workload,
        [pod("a", None), pod("b", None)]
            .iter()
            .map(|p| json!({"type": "ADDED", "object": p}).to_string())
            .collect::<Vec<_>>()
            .join("\n"),
    )
    .unwrap();
    let pods = dir.join("pods.jsonl");
    let o = sift(&[
        "simulate",
        "--cluster",
        cluster.to_str().unwrap(),
        "--workload",
        workload.to_str().unwrap(),
        "-c",
        config.to_str().unwrap(),
        "--pods-out",
        pods.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let out = std::fs::read_to_string(&pods).unwrap();
    for line in out.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["node"], "n3", "{line}");
    }
    let pending = dir.join("pending.json");
    std::fs::write(&pending, pod("p", None).to_string()).unwrap();
    let o = sift(&[
        "filter",
        "--config",
        config.to_str().unwrap(),
        "--cluster",
        cluster.to_str().unwrap(),
        "--pod",
        pending.to_str().unwrap(),
        "-o",
        "json",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v[0]["feasibleNodes"], json!(["n3"]), "{v}");
    assert_eq!(v[0]["statuses"]["n1"]["reasons"], json!([taint]), "{v}");
}

fn scripted_case(
    dir: &Path,
    name: &str,
    extender: Value,
    workload: Vec<Value>,
    expect: Value,
) -> Output {
    conformance(
        dir,
        name,
        json!({"name": name, "filters": ["NodeName"], "config": {"extenders": [extender]},
               "nodes": [node("n1", false), node("n2", false), node("n3", false)],
               "workload": workload, "expect": expect}),
    )
}

#[test]
fn errors_fail_the_pod_unless_ignorable_and_managed_resources_decide_who_is_asked() {
    let dir = sift_tests::temp_dir("extenders-errors");
    let failing = Scripted::start(|verb, _| match verb {
        "filter" => (200, json!({"Error": "boom"}).to_string()),
        _ => (500, String::new()),
    });
    let ext = |extra: Value| {
        let mut e = json!({"urlPrefix": failing.base, "filterVerb": "filter"});
        e.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        e
    };
    let o = scripted_case(
        &dir,
        "error-fails",
        ext(json!({})),
        vec![pod("a", None)],
        json!({"unscheduled": ["default/a"], "messages": {"default/a": "boom"}}),
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = scripted_case(
        &dir,
        "ignorable",
        ext(json!({"ignorable": true})),
        vec![pod("a", None)],
        json!({"binds": {"default/a": "n1"}}),
    );
    assert!(o.status.success(), "{}", text(&o));
    // Managed resources: a pod that asks for none is not sent; one that
    // does is, and fails.
    let before = failing.verbs().len();
    let o = scripted_case(
        &dir,
        "managed",
        ext(json!({"managedResources": [{"name": "example.com/fpga"}]})),
        vec![pod("plain", None), pod("fpga", Some("example.com/fpga"))],
        json!({"binds": {"default/plain": "n1"}, "unscheduled": ["default/fpga"]}),
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(failing.verbs().len(), before + 1);
    // An HTTP error names the verb, URL and code, as kube-scheduler does.
    let o = scripted_case(
        &dir,
        "http-500",
        json!({"urlPrefix": failing.base, "filterVerb": "nope"}),
        vec![pod("a", None)],
        json!({"messages": {"default/a": format!("failed nope with extender at URL {}/nope, code 500", failing.base)}}),
    );
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn prioritize_scores_are_scaled_and_weighted_and_filter_failures_explain() {
    let dir = sift_tests::temp_dir("extenders-prioritize");
    // Filter: n1 fails (Unschedulable), the others pass, sent back as
    // names or objects as asked. Prioritize: n3 scores 10, n2 3.
    let ext = Scripted::start(|verb, body| match verb {
        "filter" => {
            let mut reply = json!({"FailedNodes": {"n1": "n1 is busy"}, "Error": ""});
            if body["NodeNames"].is_array() {
                let names: Vec<&Value> = body["NodeNames"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|n| *n != "n1")
                    .collect();
                reply["NodeNames"] = json!(names);
            } else {
                let items: Vec<&Value> = body["Nodes"]["items"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|n| n["metadata"]["name"] != "n1")
                    .collect();
                reply["Nodes"] = json!({"items": items});
            }
            (200, reply.to_string())
        }
        "prioritize" => (
            200,
            json!([{"Host": "n2", "Score": 3}, {"Host": "n3", "Score": 10}]).to_string(),
        ),
        _ => (404, String::new()),
    });
    for cache in [false, true] {
        let o = scripted_case(
            &dir,
            &format!("prioritize-{cache}"),
            json!({"urlPrefix": ext.base, "filterVerb": "filter", "prioritizeVerb": "prioritize",
                   "weight": 2, "nodeCacheCapable": cache}),
            vec![pod("a", None)],
            json!({"binds": {"default/a": "n3"}}),
        );
        assert!(o.status.success(), "{}", text(&o));
    }
    // What was sent: the pod object, and node objects or names.
    let calls = ext.calls.lock().unwrap().clone();
    let (_, first) = calls.iter().find(|(v, _)| v == "filter").unwrap();
    assert_eq!(first["Pod"]["metadata"]["name"], "a");
    assert_eq!(first["Nodes"]["items"].as_array().unwrap().len(), 3);
    assert!(first["NodeNames"].is_null());
    let (_, prio) = calls.iter().find(|(v, _)| v == "prioritize").unwrap();
    assert_eq!(prio["Nodes"]["items"].as_array().unwrap().len(), 2);
    let last = &calls.iter().rev().find(|(v, _)| v == "filter").unwrap().1;
    assert_eq!(last["NodeNames"], json!(["n1", "n2", "n3"]));

    // --explain shows the extender's verdict and its weighted scores.
    let cluster = dir.join("cluster.json");
    std::fs::write(
        &cluster,
        json!({"apiVersion": "v1", "kind": "List",
               "items": [node("n1", false), node("n2", false), node("n3", false), pod("a", None)]})
        .to_string(),
    )
    .unwrap();
    let config = dir.join("config.yaml");
    std::fs::write(
        &config,
        format!(
            "extenders:\n  - {{urlPrefix: \"{}\", filterVerb: filter, prioritizeVerb: prioritize, weight: 2}}\n",
            ext.base
        ),
    )
    .unwrap();
    let o = sift(&[
        "simulate",
        "--cluster",
        cluster.to_str().unwrap(),
        "-c",
        config.to_str().unwrap(),
        "--explain",
        "default/a",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("n1 is busy"), "{out}");
    assert!(out.contains(&ext.base), "{out}");
}

#[test]
fn a_bad_extender_config_is_an_error_naming_the_field() {
    let dir = sift_tests::temp_dir("extenders-config");
    let config = dir.join("bad.yaml");
    std::fs::write(
        &config,
        "extenders:\n  - {urlPrefix: \"http://127.0.0.1:1\", prioritizeVerb: p}\n",
    )
    .unwrap();
    let cluster: PathBuf = dir.join("cluster.json");
    std::fs::write(
        &cluster,
        json!({"apiVersion": "v1", "kind": "List", "items": [node("n1", false), pod("a", None)]})
            .to_string(),
    )
    .unwrap();
    let o = sift(&[
        "simulate",
        "--cluster",
        cluster.to_str().unwrap(),
        "-c",
        config.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains(
            "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it"
        ),
        "{}",
        text(&o)
    );
}

/// An extender's rejection is not something evicting pods can change:
/// preemption's dry run finds no victim to evict there, which upstream
/// reports as an error, and the pod is not retried forever.
#[test]
fn a_node_only_an_extender_rejects_is_not_a_preemption_candidate() {
    let dir = sift_tests::temp_dir("extenders-preemption");
    let busy = Scripted::start(|_, _| {
        (
            200,
            json!({"FailedNodes": {"n1": "n1 is busy"}, "NodeNames": []}).to_string(),
        )
    });
    let mut lo = pod("lo", None);
    lo["spec"]["nodeName"] = json!("n1");
    let mut hi = pod("hi", None);
    hi["spec"]["priority"] = json!(100);
    let o = conformance(
        &dir,
        "no-victim",
        json!({"name": "extender rejection, lower-priority pod on the node",
               "filters": ["NodeName"],
               "config": {"extenders": [{"urlPrefix": busy.base, "filterVerb": "filter",
                                         "nodeCacheCapable": true}]},
               "nodes": [node("n1", false)], "pods": [lo], "workload": [hi],
               "expect": {"unscheduled": ["default/hi"], "preempted": {"default/hi": []},
                          "messages": {"default/hi":
                              "0/1 nodes are available: 1 n1 is busy. expected at least one victim pod on node \"n1\""}}}),
    );
    assert!(o.status.success(), "{}", text(&o));
}

/// Issue 29 §7, §9, §11, §14: what a misbehaving extender sends is bounded
/// and named. A reply past the cap is refused as it streams in (a 200 MB
/// reply took 1.3 GB); a node name it invents is cut in the message; its
/// `Error` text cannot drive a terminal; a score outside 0..=10 gives no
/// score (it used to be multiplied in); a timeout names the extender and
/// its httpTimeout instead of "timeout: global".
#[test]
fn a_misbehaving_extender_is_bounded_and_named() {
    let dir = sift_tests::temp_dir("extenders-hostile");
    let hostile = Scripted::start(|verb, _| match verb {
        "escape" => (200, json!({"Error": "bad\u{1b}[31m red\nline"}).to_string()),
        "invent" => (
            200,
            json!({"NodeNames": ["x".repeat(100_000)], "Error": ""}).to_string(),
        ),
        "big" => (
            200,
            json!({"NodeNames": ["n1"], "FailedNodes": {"n2": "y".repeat(20 << 20)}, "Error": ""})
                .to_string(),
        ),
        "slow" => {
            std::thread::sleep(std::time::Duration::from_millis(1500));
            (200, json!({"NodeNames": ["n1"], "Error": ""}).to_string())
        }
        "pass" => (
            200,
            json!({"NodeNames": ["n1", "n2", "n3"], "Error": ""}).to_string(),
        ),
        "score" => (
            200,
            json!([{"Host": "n3", "Score": 11}, {"Host": "n2", "Score": 3}]).to_string(),
        ),
        _ => (404, String::new()),
    });
    let base = &hostile.base;
    let case = |name: &str, extender: Value, expect: Value| {
        let o = scripted_case(&dir, name, extender, vec![pod("a", None)], expect);
        assert!(o.status.success(), "{name}: {}", text(&o));
    };
    case(
        "escape",
        json!({"urlPrefix": base, "filterVerb": "escape"}),
        json!({"messages": {"default/a": "bad\\u{1b}[31m red\\nline"}}),
    );
    case(
        "invent",
        json!({"urlPrefix": base, "filterVerb": "invent", "nodeCacheCapable": true}),
        json!({"messages": {"default/a": format!(
            "extender {base:?} claims a filtered node \"{}... (99744 more bytes)\" which is not found in the input node list",
            "x".repeat(256)
        )}}),
    );
    // With maxReplyBytes, that is the cap.
    case(
        "big-capped",
        json!({"urlPrefix": base, "filterVerb": "big", "nodeCacheCapable": true, "maxReplyBytes": "1Ki"}),
        json!({"messages": {"default/a": format!(
            "Post \"{base}/big\": the reply is larger than 1024 bytes (the extender's maxReplyBytes)"
        )}}),
    );
    // The default cap is the request's size plus 16Mi: a 20 MiB reply to a
    // three-node request is refused (the capped run recorded the request).
    case(
        "big-default",
        json!({"urlPrefix": base, "filterVerb": "big", "nodeCacheCapable": true}),
        json!({"messages": {"default/a": format!(
            "Post \"{base}/big\": the reply is larger than {} bytes (the request's size plus 16Mi; set maxReplyBytes to allow more)",
            // The request: the pod object and three names.
            request_size(&hostile, "big") + (16 << 20)
        )}}),
    );
    case(
        "big-allowed",
        json!({"urlPrefix": base, "filterVerb": "big", "nodeCacheCapable": true, "maxReplyBytes": "64Mi"}),
        json!({"binds": {"default/a": "n1"}}),
    );
    case(
        "slow",
        json!({"urlPrefix": base, "filterVerb": "slow", "nodeCacheCapable": true, "httpTimeout": "200ms"}),
        json!({"messages": {"default/a": format!(
            "Post \"{base}/slow\": extender {base} gave no reply within its httpTimeout of 200ms"
        )}}),
    );
    // n3's 11 is out of range: the extender gives no score, so the nodes
    // tie and the first in order wins (with the 11 counted, n3 would).
    case(
        "score",
        json!({"urlPrefix": base, "filterVerb": "pass", "prioritizeVerb": "score",
               "weight": 1, "nodeCacheCapable": true}),
        json!({"binds": {"default/a": "n1"}}),
    );
}

/// The size of the last request body `hostile` received for `verb`.
fn request_size(hostile: &Scripted, verb: &str) -> usize {
    let calls = hostile.calls.lock().unwrap();
    let (_, body) = calls.iter().rev().find(|(v, _)| v == verb).unwrap();
    // sift sends compact JSON, as serde_json writes it back.
    serde_json::to_string(body).unwrap().len()
}
