//! The fake API server's writes (`sift_tests::apiserver`), driven with raw
//! HTTP/1.1 requests, so that what is tested is the fake and not a client:
//! bindings, pod status patches and deletions, creations, Events, Leases,
//! the policy, scheduling and Volcano kinds, and the write faults.

use serde_json::{Value, json};
use sift_tests::apiserver::{FakeApiServer, Resource};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// One keep-alive connection to the fake.
struct Conn {
    reader: BufReader<TcpStream>,
}

impl Conn {
    fn open(api: &FakeApiServer) -> Conn {
        let s = TcpStream::connect(api.addr()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        Conn {
            reader: BufReader::new(s),
        }
    }

    fn send(&mut self, method: &str, path: &str, content_type: &str, body: Option<&Value>) {
        let body = body.map(Value::to_string).unwrap_or_default();
        let mut head =
            format!("{method} {path} HTTP/1.1\r\nHost: fake\r\nAccept: application/json\r\n");
        if !body.is_empty() {
            head.push_str(&format!(
                "Content-Type: {content_type}\r\nContent-Length: {}\r\n",
                body.len()
            ));
        }
        head.push_str("\r\n");
        let s = self.reader.get_mut();
        s.write_all(head.as_bytes()).unwrap();
        s.write_all(body.as_bytes()).unwrap();
    }

    /// The status and the JSON body of the next response; None when the
    /// connection closed first.
    fn response(&mut self) -> Option<(u16, Value)> {
        let mut line = String::new();
        if self.reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let code = line.split_whitespace().nth(1)?.parse().ok()?;
        let mut length = 0;
        loop {
            let mut h = String::new();
            self.reader.read_line(&mut h).ok()?;
            if h.trim().is_empty() {
                break;
            }
            if let Some((name, value)) = h.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().ok()?;
            }
        }
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body).ok()?;
        Some((code, serde_json::from_slice(&body).unwrap()))
    }

    fn call(&mut self, method: &str, path: &str, ct: &str, body: Option<&Value>) -> (u16, Value) {
        self.send(method, path, ct, body);
        self.response().expect("an answer")
    }
}

const JSON: &str = "application/json";
const STRATEGIC: &str = "application/strategic-merge-patch+json";
const MERGE: &str = "application/merge-patch+json";

fn call(
    api: &FakeApiServer,
    method: &str,
    path: &str,
    ct: &str,
    body: Option<&Value>,
) -> (u16, Value) {
    Conn::open(api).call(method, path, ct, body)
}

fn get(api: &FakeApiServer, path: &str) -> (u16, Value) {
    call(api, "GET", path, JSON, None)
}

/// A watch read event by event.
struct Watch {
    reader: BufReader<TcpStream>,
}

impl Watch {
    fn open(api: &FakeApiServer, path: &str) -> Watch {
        let mut s = TcpStream::connect(api.addr()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(s, "GET {path} HTTP/1.1\r\nHost: fake\r\n\r\n").unwrap();
        let mut reader = BufReader::new(s);
        let mut status = String::new();
        reader.read_line(&mut status).unwrap();
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        loop {
            let mut h = String::new();
            reader.read_line(&mut h).unwrap();
            if h.trim().is_empty() {
                break;
            }
        }
        Watch { reader }
    }

    fn event(&mut self) -> Value {
        let mut size = String::new();
        self.reader.read_line(&mut size).unwrap();
        let n = usize::from_str_radix(size.trim(), 16).unwrap();
        assert!(n > 0, "the watch ended");
        let mut data = vec![0; n + 2];
        self.reader.read_exact(&mut data).unwrap();
        serde_json::from_slice(&data[..n]).unwrap()
    }
}

fn node(name: &str) -> Value {
    json!({"kind": "Node", "metadata": {"name": name}})
}

fn pod(name: &str) -> Value {
    json!({"kind": "Pod", "metadata": {"name": name, "namespace": "ns"},
           "spec": {"containers": [{"name": "c"}]},
           "status": {"phase": "Pending", "nominatedNodeName": "n9",
                      "conditions": [{"type": "PodScheduled", "status": "False",
                                      "reason": "Unschedulable"}]}})
}

fn binding(name: &str, node: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Binding",
           "metadata": {"name": name, "namespace": "ns", "annotations": {"sift/at": "1"}},
           "target": {"apiVersion": "v1", "kind": "Node", "name": node}})
}

fn bind_path(name: &str) -> String {
    format!("/api/v1/namespaces/ns/pods/{name}/binding")
}

fn message(status: &Value) -> &str {
    status["message"].as_str().unwrap_or_default()
}

#[test]
fn bindings_assign_once_as_the_api_server_does() {
    let api = FakeApiServer::start();
    api.add(node("n1"));
    api.add(pod("p"));
    let rv = api.resource_version();
    let mut w = Watch::open(
        &api,
        &format!("/api/v1/pods?watch=true&resourceVersion={rv}"),
    );

    let (code, s) = call(
        &api,
        "POST",
        &bind_path("p"),
        JSON,
        Some(&binding("p", "n1")),
    );
    assert_eq!(code, 201, "{s}");
    assert_eq!(
        s,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
               "code": 201})
    );
    let p = api.get("Pod", "ns", "p").unwrap();
    assert_eq!(p["spec"]["nodeName"], "n1");
    assert_eq!(p["metadata"]["annotations"]["sift/at"], "1");
    assert!(p["status"].get("nominatedNodeName").is_none(), "{p}");
    let conditions = p["status"]["conditions"].as_array().unwrap();
    assert_eq!(conditions.len(), 1, "{p}");
    assert_eq!(
        (&conditions[0]["type"], &conditions[0]["status"]),
        (&json!("PodScheduled"), &json!("True"))
    );
    let e = w.event();
    assert_eq!(e["type"], "MODIFIED");
    assert_eq!(e["object"]["spec"]["nodeName"], "n1");
    assert_eq!(
        e["object"]["metadata"]["resourceVersion"],
        (rv + 1).to_string()
    );

    // Once only.
    let (code, s) = call(
        &api,
        "POST",
        &bind_path("p"),
        JSON,
        Some(&binding("p", "n2")),
    );
    assert_eq!((code, &s["reason"]), (409, &json!("Conflict")), "{s}");
    assert!(
        message(&s).ends_with(r#"pod p is already assigned to node "n1""#),
        "{s}"
    );
    // Missing.
    let (code, s) = call(
        &api,
        "POST",
        &bind_path("q"),
        JSON,
        Some(&binding("q", "n1")),
    );
    assert_eq!((code, &s["reason"]), (404, &json!("NotFound")), "{s}");
    assert_eq!(message(&s), r#"pods "q" not found"#);
    // Another pod of the same name.
    api.add(pod("r"));
    let mut b = binding("r", "n1");
    b["metadata"]["uid"] = json!("not-its-uid");
    let (code, s) = call(&api, "POST", &bind_path("r"), JSON, Some(&b));
    assert_eq!(code, 409, "{s}");
    assert!(
        message(&s).contains("Precondition failed: UID in precondition: not-its-uid"),
        "{s}"
    );
    b["metadata"]["uid"] = api.get("Pod", "ns", "r").unwrap()["metadata"]["uid"].clone();
    assert_eq!(call(&api, "POST", &bind_path("r"), JSON, Some(&b)).0, 201);
    // Gated, and being deleted.
    let mut gated = pod("g");
    gated["spec"]["schedulingGates"] = json!([{"name": "wait"}]);
    api.add(gated);
    let (code, s) = call(
        &api,
        "POST",
        &bind_path("g"),
        JSON,
        Some(&binding("g", "n1")),
    );
    assert_eq!(code, 409, "{s}");
    assert!(
        message(&s).contains("non-empty .spec.schedulingGates"),
        "{s}"
    );
    let mut going = pod("d");
    going["metadata"]["deletionTimestamp"] = json!("2025-01-01T00:00:00Z");
    api.add(going);
    let (code, s) = call(
        &api,
        "POST",
        &bind_path("d"),
        JSON,
        Some(&binding("d", "n1")),
    );
    assert_eq!(code, 409, "{s}");
    assert!(
        message(&s).ends_with("pod d is being deleted, cannot be assigned to a host"),
        "{s}"
    );
    // A binding named for another pod.
    let (code, _) = call(
        &api,
        "POST",
        &bind_path("g"),
        JSON,
        Some(&binding("p", "n1")),
    );
    assert_eq!(code, 400);

    let bound: Vec<_> = api
        .bindings()
        .into_iter()
        .map(|(pod, node, code)| format!("{pod}>{node}:{code}"))
        .collect();
    assert_eq!(
        bound,
        [
            "ns/p>n1:201",
            "ns/p>n2:409",
            "ns/q>n1:404",
            "ns/r>n1:409",
            "ns/r>n1:201",
            "ns/g>n1:409",
            "ns/d>n1:409",
            "ns/g>n1:400"
        ]
    );
    let log = api.requests();
    let last = log.last().unwrap();
    assert_eq!(
        (last.method.as_str(), last.path.as_str(), last.status),
        ("POST", "/api/v1/namespaces/ns/pods/g/binding", 400)
    );
    assert!(last.is_write());
    assert_eq!(last.subresource.as_deref(), Some("binding"));
    assert_eq!(last.body.as_ref().unwrap()["target"]["name"], "n1");
    assert_eq!(api.lists("pods"), 0, "writes are not lists");
}

#[test]
fn failed_binds_answer_the_code_and_bind_nothing() {
    let api = FakeApiServer::start();
    api.add(pod("p"));
    api.fail_binds(2, 500);
    for _ in 0..2 {
        let (code, s) = call(
            &api,
            "POST",
            &bind_path("p"),
            JSON,
            Some(&binding("p", "n1")),
        );
        assert_eq!((code, &s["reason"]), (500, &json!("InternalError")), "{s}");
        assert!(api.get("Pod", "ns", "p").unwrap()["spec"]["nodeName"].is_null());
    }
    api.set_failing(Some("pods"), Some(503));
    assert_eq!(
        call(
            &api,
            "POST",
            &bind_path("p"),
            JSON,
            Some(&binding("p", "n1"))
        )
        .0,
        503
    );
    api.set_failing(Some("pods"), None);
    assert_eq!(
        call(
            &api,
            "POST",
            &bind_path("p"),
            JSON,
            Some(&binding("p", "n1"))
        )
        .0,
        201
    );
    let codes: Vec<u16> = api.bindings().iter().map(|b| b.2).collect();
    assert_eq!(codes, [500, 500, 503, 201]);
}

#[test]
fn status_patches_merge_conditions_by_type() {
    let api = FakeApiServer::start();
    let mut p = pod("p");
    p["status"]["conditions"] = json!([
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "old"},
        {"type": "Ready", "status": "False"}
    ]);
    api.add(p);
    let path = "/api/v1/namespaces/ns/pods/p/status";
    let patch = json!({
        "metadata": {"uid": "ignored"},
        "spec": {"nodeName": "ignored"},
        "status": {
            "$setElementOrder/conditions": [{"type": "PodScheduled"}, {"type": "Ready"},
                                            {"type": "DisruptionTarget"}],
            "conditions": [
                {"type": "PodScheduled", "message": "0/3 nodes are available"},
                {"type": "DisruptionTarget", "status": "True"}
            ],
            "nominatedNodeName": null
        }
    });
    let (code, got) = call(&api, "PATCH", path, STRATEGIC, Some(&patch));
    assert_eq!(code, 200, "{got}");
    assert_eq!(
        got["status"]["conditions"],
        json!([
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
             "message": "0/3 nodes are available"},
            {"type": "Ready", "status": "False"},
            {"type": "DisruptionTarget", "status": "True"}
        ])
    );
    assert!(got["status"].get("nominatedNodeName").is_none(), "{got}");
    assert!(
        got["spec"]["nodeName"].is_null(),
        "a status patch leaves the spec"
    );
    assert_eq!(
        got["metadata"]["uid"],
        api.get("Pod", "ns", "p").unwrap()["metadata"]["uid"]
    );
    assert_eq!(
        got["metadata"]["resourceVersion"],
        api.resource_version().to_string()
    );
    assert_eq!(api.status_patches(), [("ns/p".to_string(), patch)]);

    // A merge patch replaces the list.
    let (code, got) = call(
        &api,
        "PATCH",
        path,
        MERGE,
        Some(&json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}})),
    );
    assert_eq!(code, 200);
    assert_eq!(
        got["status"]["conditions"],
        json!([{"type": "Ready", "status": "True"}])
    );
    // Missing; a patch type the fake does not apply.
    let (code, s) = call(
        &api,
        "PATCH",
        "/api/v1/namespaces/ns/pods/q/status",
        STRATEGIC,
        Some(&json!({})),
    );
    assert_eq!((code, &s["reason"]), (404, &json!("NotFound")));
    assert_eq!(
        call(
            &api,
            "PATCH",
            path,
            "application/json-patch+json",
            Some(&json!({}))
        )
        .0,
        415
    );

    // PUT replaces the status, under the resourceVersion it carries.
    let mut whole = api.get("Pod", "ns", "p").unwrap();
    whole["status"] = json!({"phase": "Running"});
    let (code, got) = call(&api, "PUT", path, JSON, Some(&whole));
    assert_eq!(code, 200, "{got}");
    assert_eq!(got["status"], json!({"phase": "Running"}));
    let (code, s) = call(&api, "PUT", path, JSON, Some(&whole));
    assert_eq!(code, 409, "stale resourceVersion: {s}");
    assert!(message(&s).contains("the object has been modified"), "{s}");
}

#[test]
fn leases_are_created_read_and_renewed_under_resource_versions() {
    let api = FakeApiServer::start();
    let base = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";
    let path = format!("{base}/sift");
    let (code, s) = get(&api, &path);
    assert_eq!(
        (code, message(&s)),
        (404, r#"leases.coordination.k8s.io "sift" not found"#)
    );
    let lease = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                       "metadata": {"name": "sift", "namespace": "kube-system"},
                       "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15}});
    let (code, created) = call(&api, "POST", base, JSON, Some(&lease));
    assert_eq!(code, 201, "{created}");
    assert_eq!(created["apiVersion"], "coordination.k8s.io/v1");
    assert_eq!(created["kind"], "Lease");
    let (code, s) = call(&api, "POST", base, JSON, Some(&lease));
    assert_eq!((code, &s["reason"]), (409, &json!("AlreadyExists")));
    let (code, read) = get(&api, &path);
    assert_eq!((code, &read), (200, &created));

    let mut renewed = read.clone();
    renewed["spec"]["renewTime"] = json!("2025-01-01T00:00:01.000000Z");
    let (code, got) = call(&api, "PUT", &path, JSON, Some(&renewed));
    assert_eq!(code, 200, "{got}");
    assert_ne!(
        got["metadata"]["resourceVersion"],
        read["metadata"]["resourceVersion"]
    );
    assert_eq!(api.lease("kube-system", "sift").unwrap(), got);
    // Stale: someone else renewed since.
    let (code, s) = call(&api, "PUT", &path, JSON, Some(&renewed));
    assert_eq!((code, &s["reason"]), (409, &json!("Conflict")));
    assert_eq!(
        message(&s),
        "Operation cannot be fulfilled on leases.coordination.k8s.io \"sift\": the object has \
         been modified; please apply your changes to the latest version and try again"
    );
    // No resourceVersion at all: Leases take no unconditional update.
    let mut bare = got.clone();
    bare["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    assert_eq!(call(&api, "PUT", &path, JSON, Some(&bare)).0, 422);
    // Forced conflicts.
    api.set_lease_conflicts(1);
    assert_eq!(call(&api, "PUT", &path, JSON, Some(&got)).0, 409);
    assert_eq!(call(&api, "PUT", &path, JSON, Some(&got)).0, 200);
    assert!(api.lease("kube-system", "other").is_none());
}

#[test]
fn graceful_deletes_mark_the_pod_then_remove_it() {
    let api = FakeApiServer::start();
    let mut bound = pod("p");
    bound["spec"]["nodeName"] = json!("n1");
    api.add(bound.clone());
    api.add(pod("pending"));
    let grace = Duration::from_millis(300);
    api.set_graceful_deletes(Some(grace));
    let rv = api.resource_version();
    let mut w = Watch::open(
        &api,
        &format!("/api/v1/pods?watch=true&resourceVersion={rv}"),
    );

    let uid = api.get("Pod", "ns", "p").unwrap()["metadata"]["uid"].clone();
    let wrong = json!({"kind": "DeleteOptions", "apiVersion": "v1",
                       "preconditions": {"uid": "another"}});
    let (code, s) = call(
        &api,
        "DELETE",
        "/api/v1/namespaces/ns/pods/p",
        JSON,
        Some(&wrong),
    );
    assert_eq!(code, 409, "{s}");
    assert!(
        message(&s).contains("Precondition failed: UID in precondition: another"),
        "{s}"
    );

    let start = Instant::now();
    let right = json!({"preconditions": {"uid": uid}});
    let (code, got) = call(
        &api,
        "DELETE",
        "/api/v1/namespaces/ns/pods/p",
        JSON,
        Some(&right),
    );
    assert_eq!(code, 200, "{got}");
    assert!(got["metadata"]["deletionTimestamp"].is_string(), "{got}");
    assert_eq!(got["metadata"]["deletionGracePeriodSeconds"], 1);
    let e = w.event();
    assert_eq!(e["type"], "MODIFIED");
    assert!(e["object"]["metadata"]["deletionTimestamp"].is_string());
    // Terminating: no binding, a second DELETE changes nothing.
    assert_eq!(
        call(&api, "DELETE", "/api/v1/namespaces/ns/pods/p", JSON, None).0,
        200
    );
    let e = w.event();
    assert_eq!(
        (&e["type"], &e["object"]["metadata"]["name"]),
        (&json!("DELETED"), &json!("p"))
    );
    let took = start.elapsed();
    assert!(took >= grace, "gone after {took:?}");
    assert!(took < grace * 5, "gone after {took:?}");
    assert!(api.get("Pod", "ns", "p").is_none());

    // Not on a node: nothing to stop, gone at once.
    let (code, got) = call(
        &api,
        "DELETE",
        "/api/v1/namespaces/ns/pods/pending",
        JSON,
        None,
    );
    assert_eq!(code, 200);
    assert!(got["metadata"]["deletionTimestamp"].is_null());
    assert_eq!(w.event()["type"], "DELETED");
    assert!(api.get("Pod", "ns", "pending").is_none());
    // Without graceful deletes, and missing.
    api.set_graceful_deletes(None);
    api.add(bound);
    assert_eq!(
        call(&api, "DELETE", "/api/v1/namespaces/ns/pods/p", JSON, None).0,
        200
    );
    assert!(api.get("Pod", "ns", "p").is_none());
    let (code, s) = call(&api, "DELETE", "/api/v1/namespaces/ns/pods/p", JSON, None);
    assert_eq!((code, &s["reason"]), (404, &json!("NotFound")));
    assert_eq!(api.deletes(), ["ns/p", "ns/p", "ns/pending", "ns/p"]);
}

#[test]
fn policy_scheduling_and_volcano_kinds_are_listed_and_watched() {
    let api = FakeApiServer::start();
    let pdb = |ns: &str, name: &str| {
        json!({"kind": "PodDisruptionBudget", "metadata": {"name": name, "namespace": ns},
               "spec": {"minAvailable": 1}})
    };
    api.add(pdb("a", "one"));
    api.add(pdb("b", "two"));
    api.add(json!({"kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}));
    api.add(json!({"kind": "Queue", "metadata": {"name": "default"}, "spec": {"weight": 1}}));
    api.add(
        json!({"kind": "PodGroup", "metadata": {"name": "job", "namespace": "a"},
                   "spec": {"minMember": 2}}),
    );
    let stored = api.get("PodDisruptionBudget", "a", "one").unwrap();
    assert_eq!(stored["apiVersion"], "policy/v1");

    let (code, l) = get(&api, "/apis/policy/v1/poddisruptionbudgets");
    assert_eq!(code, 200, "{l}");
    assert_eq!(
        (&l["kind"], &l["apiVersion"]),
        (&json!("PodDisruptionBudgetList"), &json!("policy/v1"))
    );
    let names: Vec<&str> = l["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["one", "two"]);
    let (_, l) = get(&api, "/apis/policy/v1/namespaces/b/poddisruptionbudgets");
    assert_eq!(l["items"].as_array().unwrap().len(), 1);
    assert_eq!(api.lists("poddisruptionbudgets"), 2);
    let (_, l) = get(&api, "/apis/scheduling.k8s.io/v1/priorityclasses");
    assert_eq!(l["items"][0]["value"], 1000);
    let (_, q) = get(&api, "/apis/scheduling.volcano.sh/v1beta1/queues/default");
    assert_eq!(q["apiVersion"], "scheduling.volcano.sh/v1beta1");

    let mut w = Watch::open(
        &api,
        "/apis/scheduling.volcano.sh/v1beta1/podgroups?watch=true",
    );
    let e = w.event();
    assert_eq!(
        (&e["type"], &e["object"]["kind"]),
        (&json!("ADDED"), &json!("PodGroup"))
    );
    assert!(api.wait_watching_kinds(&[Resource::PodGroups], Duration::from_secs(5)));

    // A PodGroup is replaced whole (status too) under its resourceVersion.
    let path = "/apis/scheduling.volcano.sh/v1beta1/namespaces/a/podgroups/job";
    let mut pg = e["object"].clone();
    pg["status"] = json!({"phase": "Running"});
    let (code, got) = call(&api, "PUT", path, JSON, Some(&pg));
    assert_eq!(code, 200, "{got}");
    assert_eq!(got["status"]["phase"], "Running");
    let e = w.event();
    assert_eq!(
        (&e["type"], &e["object"]["status"]["phase"]),
        (&json!("MODIFIED"), &json!("Running"))
    );
    assert_eq!(call(&api, "PUT", path, JSON, Some(&pg)).0, 409);
    // A Queue's status through its subresource.
    let path = "/apis/scheduling.volcano.sh/v1beta1/queues/default/status";
    let mut queue = q.clone();
    queue["status"] = json!({"state": "Open"});
    queue["spec"]["weight"] = json!(5);
    let (code, got) = call(&api, "PUT", path, JSON, Some(&queue));
    assert_eq!(code, 200, "{got}");
    assert_eq!(
        (&got["status"]["state"], &got["spec"]["weight"]),
        (&json!("Open"), &json!(1))
    );
    assert_eq!(call(&api, "PUT", path, JSON, Some(&queue)).0, 409);
}

#[test]
fn events_of_both_apis_are_created_and_patched() {
    let api = FakeApiServer::start();
    let new = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
                     "metadata": {"generateName": "p.", "namespace": "ns"},
                     "reason": "Scheduled", "note": "bound", "type": "Normal",
                     "regarding": {"kind": "Pod", "name": "p", "namespace": "ns"}});
    let (code, created) = call(
        &api,
        "POST",
        "/apis/events.k8s.io/v1/namespaces/ns/events",
        JSON,
        Some(&new),
    );
    assert_eq!(code, 201, "{created}");
    let name = created["metadata"]["name"].as_str().unwrap().to_string();
    assert!(name.starts_with("p.") && name.len() == 7, "{name}");
    assert!(created["metadata"]["resourceVersion"].is_string());
    let core = json!({"metadata": {"name": "old"}, "reason": "FailedScheduling",
                      "involvedObject": {"kind": "Pod", "name": "q"}});
    let (code, _) = call(
        &api,
        "POST",
        "/api/v1/namespaces/ns/events",
        JSON,
        Some(&core),
    );
    assert_eq!(code, 201);

    let path = format!("/apis/events.k8s.io/v1/namespaces/ns/events/{name}");
    let (code, got) = call(
        &api,
        "PATCH",
        &path,
        MERGE,
        Some(&json!({"series": {"count": 2}})),
    );
    assert_eq!(code, 200, "{got}");
    assert_eq!(
        (&got["series"]["count"], &got["note"]),
        (&json!(2), &json!("bound"))
    );
    let (code, _) = call(
        &api,
        "PATCH",
        "/api/v1/namespaces/ns/events/old",
        STRATEGIC,
        Some(&json!({"count": 3})),
    );
    assert_eq!(code, 200);
    let (code, _) = call(
        &api,
        "PATCH",
        "/api/v1/namespaces/ns/events/none",
        MERGE,
        Some(&json!({})),
    );
    assert_eq!(code, 404);

    let events = api.events();
    let seen: Vec<(&str, &str)> = events
        .iter()
        .map(|e| {
            (
                e["apiVersion"].as_str().unwrap(),
                e["reason"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("events.k8s.io/v1", "Scheduled"),
            ("v1", "FailedScheduling")
        ]
    );
    assert_eq!(events[1]["count"], 3);
}

#[test]
fn pods_are_created_and_writes_are_logged_slowed_and_refused() {
    let api = FakeApiServer::start();
    let mut c = Conn::open(&api);
    let new = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                     "spec": {"containers": [{"name": "c"}]}});
    // Bodies are read whole: the next request on the connection is served.
    let (code, created) = c.call("POST", "/api/v1/namespaces/ns/pods", JSON, Some(&new));
    assert_eq!(code, 201, "{created}");
    assert_eq!(created["metadata"]["namespace"], "ns");
    assert!(created["metadata"]["uid"].is_string());
    let (code, s) = c.call("POST", "/api/v1/namespaces/ns/pods", JSON, Some(&new));
    assert_eq!((code, &s["reason"]), (409, &json!("AlreadyExists")));
    let (code, got) = c.call("GET", "/api/v1/namespaces/ns/pods/p", JSON, None);
    assert_eq!((code, &got), (200, &created));
    let (code, s) = c.call("POST", "/api/v1/pods", JSON, Some(&new));
    assert_eq!(code, 405, "{s}");
    let (code, s) = c.call("DELETE", "/api/v1/nodes", JSON, None);
    assert_eq!(code, 405, "{s}");
    assert!(message(&s).contains("the fake API server serves"), "{s}");
    let (code, s) = c.call(
        "POST",
        "/api/v1/namespaces/ns/pods/p/eviction",
        JSON,
        Some(&json!({})),
    );
    assert_eq!(code, 404, "{s}");
    let (code, s) = c.call("GET", "/apis/apps/v1/deployments", JSON, None);
    assert_eq!(code, 404, "{s}");
    assert!(message(&s).contains("/apis/policy/v1/"), "{s}");
    let log: Vec<String> = api.requests().iter().map(|r| r.to_string()).collect();
    assert_eq!(
        log[..3],
        [
            "POST /api/v1/namespaces/ns/pods -> 201",
            "POST /api/v1/namespaces/ns/pods -> 409",
            "GET /api/v1/namespaces/ns/pods/p -> 200"
        ]
    );

    // Slow writes hold up their own connection only.
    let latency = Duration::from_millis(400);
    api.set_write_latency(latency);
    let start = Instant::now();
    c.send(
        "POST",
        &bind_path("p"),
        JSON,
        Some(&json!({"metadata": {"name": "p"},
                                                       "target": {"name": "n1"}})),
    );
    assert_eq!(get(&api, "/api/v1/nodes").0, 200);
    assert!(start.elapsed() < latency, "a read waited for a write");
    assert_eq!(c.response().unwrap().0, 201);
    assert!(start.elapsed() >= latency);

    // Down: a write waiting is not answered, its connection closes, and
    // it is not applied, even once the server is up again.
    let start = Instant::now();
    c.send("DELETE", "/api/v1/namespaces/ns/pods/p", JSON, None);
    std::thread::sleep(Duration::from_millis(50));
    api.set_down(true);
    assert!(c.response().is_none());
    api.set_down(false);
    std::thread::sleep((latency + Duration::from_millis(100)).saturating_sub(start.elapsed()));
    api.set_write_latency(Duration::ZERO);
    assert!(api.get("Pod", "ns", "p").is_some());
    assert!(api.deletes().is_empty());
    api.set_failing(None, Some(500));
    assert_eq!(
        call(&api, "DELETE", "/api/v1/namespaces/ns/pods/p", JSON, None).0,
        500
    );
    api.set_failing(None, None);
    assert_eq!(
        call(&api, "DELETE", "/api/v1/namespaces/ns/pods/p", JSON, None).0,
        200
    );
}
