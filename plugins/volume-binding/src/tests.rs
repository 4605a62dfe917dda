use super::*;
use serde_json::json;
use sift_sdk::{ClusterTables, Volume};

fn cluster(objects: Vec<Value>) -> ClusterTables {
    let namespaced = ["PersistentVolumeClaim", "CSIStorageCapacity"];
    let mut t = ClusterTables::default();
    for o in objects {
        let kind = text(&o, &["kind"]).to_string();
        let name = text(&o, &["metadata", "name"]).to_string();
        let key = if namespaced.contains(&kind.as_str()) {
            let ns = match text(&o, &["metadata", "namespace"]) {
                "" => "default",
                ns => ns,
            };
            format!("{ns}/{name}")
        } else {
            name
        };
        t.objects.entry(kind).or_default().insert(key, o);
    }
    t
}

fn class(name: &str, mode: &str, provisioner: &str) -> Value {
    json!({"kind": "StorageClass", "metadata": {"name": name},
           "provisioner": provisioner, "volumeBindingMode": mode})
}

fn claim(name: &str, class: &str) -> Value {
    json!({"kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
           "spec": {"storageClassName": class}})
}

fn bound(name: &str, class: &str, pv: &str) -> Value {
    let mut c = claim(name, class);
    c["spec"]["volumeName"] = json!(pv);
    c["metadata"]["annotations"] = json!({BIND_COMPLETED: "yes"});
    c
}

fn sized(mut c: Value, size: &str) -> Value {
    c["spec"]["resources"] = json!({"requests": {"storage": size}});
    c
}

fn pv(name: &str, class: &str, size: &str, host: Option<&str>) -> Value {
    let mut v = json!({"kind": "PersistentVolume", "metadata": {"name": name},
        "spec": {"storageClassName": class, "capacity": {"storage": size}},
        "status": {"phase": "Available"}});
    if let Some(h) = host {
        v["spec"]["nodeAffinity"] = json!({"required": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [h]}]}]}});
    }
    v
}

fn pod(claims: &[&str]) -> Pod {
    Pod {
        name: "p".into(),
        namespace: "default".into(),
        uid: "pod-uid".into(),
        volumes: claims
            .iter()
            .enumerate()
            .map(|(i, c)| Volume {
                name: format!("v{i}"),
                claim_name: c.to_string(),
                ephemeral: false,
                object: format!(
                    r#"{{"name":"v{i}","persistentVolumeClaim":{{"claimName":"{c}"}}}}"#
                )
                .into(),
            })
            .collect(),
        ..Pod::default()
    }
}

fn node(name: &str) -> Node {
    Node {
        name: name.into(),
        labels: [("kubernetes.io/hostname", name)].into_iter().collect(),
        ..Node::default()
    }
}

/// The node's verdict: `Ok(())` or (code, reasons); PreFilter's applies
/// to every node.
fn verdict(pod: &Pod, t: &ClusterTables, n: &Node) -> Result<(), (Code, Vec<String>)> {
    let status = match VolumeBinding.prepare(pod, t) {
        Prepare::Skip => Status::success(),
        Prepare::Reject(s) => s,
        Prepare::Proceed(state) | Prepare::Narrow(state, _) => VolumeBinding.filter(pod, &state, n),
    };
    if status.is_success() {
        Ok(())
    } else {
        Err((
            status.code,
            status.reasons().iter().map(|r| r.to_string()).collect(),
        ))
    }
}

fn rejected(code: Code, reasons: &[&str]) -> Result<(), (Code, Vec<String>)> {
    Err((code, reasons.iter().map(|r| r.to_string()).collect()))
}

const UU: Code = Code::UnschedulableAndUnresolvable;

#[test]
fn a_pod_without_claims_is_skipped() {
    let t = cluster(vec![]);
    assert!(matches!(
        VolumeBinding.prepare(&pod(&[]), &t),
        Prepare::Skip
    ));
}

#[test]
fn prefilter_rejects_missing_lost_deleting_and_immediate_claims() {
    let wait = class("wait", "WaitForFirstConsumer", "");
    let imm = class("imm", "Immediate", "");
    let mut lost = bound("lost", "wait", "gone");
    lost["status"] = json!({"phase": "Lost"});
    let mut deleting = claim("deleting", "wait");
    deleting["metadata"]["deletionTimestamp"] = json!("2025-01-01T00:00:00Z");
    let mut prebound = claim("prebound", "wait");
    prebound["spec"]["volumeName"] = json!("pv");
    let t = cluster(vec![
        wait,
        imm,
        lost,
        deleting,
        prebound,
        claim("i", "imm"),
        claim("none", ""),
    ]);
    let n = node("n1");
    let cases: [(&[&str], &str); 6] = [
        (&["absent"], "persistentvolumeclaim \"absent\" not found"),
        (
            &["lost"],
            "persistentvolumeclaim \"lost\" bound to non-existent persistentvolume \"gone\"",
        ),
        (
            &["deleting"],
            "persistentvolumeclaim \"deleting\" is being deleted",
        ),
        (&["prebound"], ERR_UNBOUND_IMMEDIATE),
        (&["i"], ERR_UNBOUND_IMMEDIATE),
        (&["none"], ERR_UNBOUND_IMMEDIATE),
    ];
    for (claims, reason) in cases {
        assert_eq!(
            verdict(&pod(claims), &t, &n),
            rejected(UU, &[reason]),
            "{claims:?}"
        );
    }
}

#[test]
fn a_class_without_binding_mode_is_an_error() {
    let mut c = class("nomode", "", "");
    c.as_object_mut().unwrap().remove("volumeBindingMode");
    let t = cluster(vec![c, claim("c", "nomode")]);
    assert_eq!(
        verdict(&pod(&["c"]), &t, &node("n1")),
        rejected(
            Code::Error,
            &["VolumeBindingMode not set for StorageClass \"nomode\""]
        )
    );
}

#[test]
fn ephemeral_claims_must_exist_and_belong_to_the_pod() {
    let mut p = pod(&[]);
    p.volumes.push(Volume {
        name: "scratch".into(),
        claim_name: "p-scratch".into(),
        ephemeral: true,
        object: r#"{"name":"scratch","ephemeral":{}}"#.into(),
    });
    let n = node("n1");
    let t = cluster(vec![]);
    assert_eq!(
        verdict(&p, &t, &n),
        rejected(
            UU,
            &[
                "waiting for ephemeral volume controller to create the persistentvolumeclaim \"p-scratch\""
            ]
        )
    );
    let mut c = bound("p-scratch", "wait", "pv");
    c["metadata"]["ownerReferences"] = json!([{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "other", "controller": true}]);
    let t = cluster(vec![c.clone(), pv("pv", "wait", "1Gi", None)]);
    assert_eq!(
        verdict(&p, &t, &n),
        rejected(
            UU,
            &["PVC default/p-scratch was not created for pod default/p (pod is not owner)"]
        )
    );
    c["metadata"]["ownerReferences"][0]["uid"] = json!("pod-uid");
    let t = cluster(vec![c, pv("pv", "wait", "1Gi", None)]);
    assert_eq!(verdict(&p, &t, &n), Ok(()));
}

#[test]
fn bound_volumes_must_exist_and_admit_the_node() {
    let t = cluster(vec![
        bound("a", "wait", "pv-a"),
        bound("b", "wait", "pv-missing"),
        pv("pv-a", "wait", "1Gi", Some("n1")),
    ]);
    assert_eq!(verdict(&pod(&["a"]), &t, &node("n1")), Ok(()));
    assert_eq!(
        verdict(&pod(&["a"]), &t, &node("n2")),
        rejected(UU, &[ERR_REASON_NODE_CONFLICT])
    );
    assert_eq!(
        verdict(&pod(&["b"]), &t, &node("n1")),
        rejected(UU, &[ERR_REASON_PV_NOT_EXIST])
    );
    // The first failing bound claim ends the check.
    assert_eq!(
        verdict(&pod(&["a", "b"]), &t, &node("n2")),
        rejected(UU, &[ERR_REASON_NODE_CONFLICT])
    );
}

#[test]
fn two_claims_never_take_the_same_volume() {
    let t = cluster(vec![
        class("wait", "WaitForFirstConsumer", ""),
        sized(claim("a", "wait"), "1Gi"),
        sized(claim("b", "wait"), "1Gi"),
        pv("only", "wait", "5Gi", Some("n1")),
        pv("second", "wait", "5Gi", Some("n2")),
        pv("third", "wait", "5Gi", Some("n2")),
    ]);
    assert_eq!(
        verdict(&pod(&["a", "b"]), &t, &node("n1")),
        rejected(UU, &[ERR_REASON_BIND_CONFLICT])
    );
    assert_eq!(verdict(&pod(&["a", "b"]), &t, &node("n2")), Ok(()));
}

#[test]
fn smaller_claims_choose_first() {
    // The pod lists the big claim first; upstream matches the small one
    // first, which takes the labelled volume the big one needed.
    let mut big = sized(claim("big", "wait"), "5Gi");
    big["spec"]["selector"] = json!({"matchLabels": {"tier": "gold"}});
    let mut gold = pv("gold", "wait", "5Gi", Some("n1"));
    gold["metadata"]["labels"] = json!({"tier": "gold"});
    let t = cluster(vec![
        class("wait", "WaitForFirstConsumer", ""),
        big,
        sized(claim("small", "wait"), "1Gi"),
        gold,
        pv("plain", "wait", "10Gi", Some("n1")),
    ]);
    assert_eq!(
        verdict(&pod(&["big", "small"]), &t, &node("n1")),
        rejected(UU, &[ERR_REASON_BIND_CONFLICT])
    );
}

#[test]
fn provisioning_is_checked_for_claims_without_a_volume() {
    let mut topo = class("topo", "WaitForFirstConsumer", "csi.example");
    topo["allowedTopologies"] =
        json!([{"matchLabelExpressions": [{"key": "kubernetes.io/hostname", "values": ["n1"]}]}]);
    let t = cluster(vec![
        topo,
        sized(claim("c", "topo"), "1Gi"),
        json!({"kind": "CSIDriver", "metadata": {"name": "csi.example"},
               "spec": {"storageCapacity": true}}),
        json!({"kind": "CSIStorageCapacity", "metadata": {"name": "cap", "namespace": "kube-system"},
               "storageClassName": "topo", "capacity": "1Gi", "nodeTopology": {}}),
    ]);
    assert_eq!(verdict(&pod(&["c"]), &t, &node("n1")), Ok(()));
    assert_eq!(
        verdict(&pod(&["c"]), &t, &node("n2")),
        rejected(UU, &[ERR_REASON_BIND_CONFLICT])
    );
    let mut t2 = t.clone();
    t2.objects
        .get_mut("PersistentVolumeClaim")
        .unwrap()
        .insert("default/c".into(), sized(claim("c", "topo"), "2Gi"));
    assert_eq!(
        verdict(&pod(&["c"]), &t2, &node("n1")),
        rejected(UU, &[ERR_REASON_NOT_ENOUGH_SPACE])
    );
}

#[test]
fn a_claim_selected_for_another_node_fails_fast() {
    let mut c = claim("c", "wait");
    c["metadata"]["annotations"] = json!({matching::SELECTED_NODE: "n1"});
    let t = cluster(vec![
        class("wait", "WaitForFirstConsumer", "csi.example"),
        c,
    ]);
    assert_eq!(verdict(&pod(&["c"]), &t, &node("n1")), Ok(()));
    assert_eq!(
        verdict(&pod(&["c"]), &t, &node("n2")),
        rejected(UU, &[ERR_REASON_BIND_CONFLICT])
    );
}

#[test]
fn migrated_in_tree_volumes_are_checked_translated_per_node() {
    let mut gce = pv("gce", "wait", "1Gi", None);
    gce["spec"]["gcePersistentDisk"] = json!({"pdName": "d"});
    gce["metadata"]["labels"] = json!({"topology.kubernetes.io/zone": "us-east-1"});
    let csinode = |name: &str, plugins: &str| {
        json!({"kind": "CSINode", "metadata": {"name": name,
               "annotations": {migration::MIGRATED_PLUGINS: plugins}}, "spec": {"drivers": []}})
    };
    let t = cluster(vec![
        bound("c", "wait", "gce"),
        gce,
        csinode("migrated", "kubernetes.io/gce-pd"),
        csinode("legacy", ""),
    ]);
    let mut migrated = node("migrated");
    migrated.labels = [("topology.gke.io/zone", "us-east-2")]
        .into_iter()
        .collect();
    assert_eq!(
        verdict(&pod(&["c"]), &t, &migrated),
        rejected(UU, &[ERR_REASON_NODE_CONFLICT])
    );
    let mut legacy = node("legacy");
    legacy.labels = [("topology.gke.io/zone", "us-east-2")]
        .into_iter()
        .collect();
    assert_eq!(verdict(&pod(&["c"]), &t, &legacy), Ok(()));
}

#[test]
fn reasons_come_in_upstreams_order() {
    let t = cluster(vec![
        class("wait", "WaitForFirstConsumer", ""),
        bound("a", "wait", "pv-a"),
        claim("b", "wait"),
        pv("pv-a", "wait", "1Gi", Some("elsewhere")),
    ]);
    assert_eq!(
        verdict(&pod(&["a", "b"]), &t, &node("n1")),
        rejected(UU, &[ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT])
    );
}

#[test]
fn malformed_objects_do_not_panic() {
    let t = cluster(vec![
        json!({"kind": "StorageClass", "metadata": {"name": "wait"}, "provisioner": 5,
               "volumeBindingMode": "WaitForFirstConsumer", "allowedTopologies": "x"}),
        json!({"kind": "PersistentVolumeClaim", "metadata": {"name": "c", "namespace": "default",
               "annotations": "x"}, "spec": {"storageClassName": "wait",
               "resources": {"requests": {"storage": []}}, "selector": 7}}),
        json!({"kind": "PersistentVolume", "metadata": {"name": "v"}, "spec": {
               "storageClassName": "wait", "capacity": {"storage": "lots"},
               "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": 3}]}},
               "claimRef": "x"}, "status": {"phase": "Available"}}),
    ]);
    let _ = verdict(&pod(&["c"]), &t, &node("n1"));
}
