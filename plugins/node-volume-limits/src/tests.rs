use super::*;
use serde_json::json;
use sift_sdk::{ClusterTables, Code};

fn claim_volume(name: &str) -> Volume {
    let object = json!({"name": name, "persistentVolumeClaim": {"claimName": name}});
    Volume {
        name: name.into(),
        claim_name: name.into(),
        ephemeral: false,
        object: object.to_string().into(),
    }
}

fn ephemeral_volume(pod: &str, name: &str) -> Volume {
    let object = json!({"name": name, "ephemeral": {}});
    Volume {
        name: name.into(),
        claim_name: format!("{pod}-{name}"),
        ephemeral: true,
        object: object.to_string().into(),
    }
}

fn inline_volume_of(name: &str, source: Value) -> Volume {
    let mut object = json!({"name": name});
    object
        .as_object_mut()
        .unwrap()
        .extend(source.as_object().unwrap().clone());
    Volume {
        name: name.into(),
        object: object.to_string().into(),
        ..Default::default()
    }
}

fn pod(name: &str, volumes: Vec<Volume>) -> Pod {
    Pod {
        name: name.into(),
        namespace: "default".into(),
        uid: format!("uid-{name}"),
        volumes,
        ..Default::default()
    }
}

/// A claim bound to a CSI volume of `driver` named after the claim.
fn bound(tables: &mut ClusterTables, claim: &str, driver: &str) {
    let objects = &mut tables.objects;
    objects.entry("PersistentVolumeClaim".into()).or_default().insert(
        format!("default/{claim}"),
        json!({"metadata": {"name": claim, "namespace": "default"}, "spec": {"volumeName": claim}}),
    );
    objects.entry("PersistentVolume".into()).or_default().insert(
        claim.into(),
        json!({"metadata": {"name": claim}, "spec": {"csi": {"driver": driver, "volumeHandle": claim}}}),
    );
}

fn object(tables: &mut ClusterTables, kind: &str, key: &str, value: Value) {
    tables
        .objects
        .entry(kind.into())
        .or_default()
        .insert(key.into(), value);
}

fn csinode(tables: &mut ClusterTables, node: &str, drivers: Value) {
    object(
        tables,
        "CSINode",
        node,
        json!({"metadata": {"name": node}, "spec": {"drivers": drivers}}),
    );
}

fn node(name: &str, pods: Vec<(&str, Vec<Volume>)>) -> Node {
    Node {
        name: name.into(),
        volumes: pods
            .into_iter()
            .map(|(p, volumes)| PodVolumes {
                pod: format!("default/{p}"),
                volumes,
            })
            .collect(),
        ..Default::default()
    }
}

fn run(tables: &ClusterTables, pod: &Pod, node: &Node) -> Option<Status> {
    let plugin = NodeVolumeLimits::default();
    match plugin.prepare(pod, tables) {
        Prepare::Skip => None,
        Prepare::Proceed(state) => Some(plugin.filter(pod, &state, node)),
        Prepare::Reject(s) => Some(s),
        Prepare::Narrow(..) => panic!("unexpected narrow"),
    }
}

const EBS: &str = "ebs.csi.aws.com";

#[test]
fn a_pod_without_countable_volumes_is_skipped() {
    let tables = ClusterTables::default();
    let host_path = inline_volume_of("h", json!({"hostPath": {"path": "/"}}));
    assert_eq!(
        run(&tables, &pod("p", vec![host_path]), &node("n", vec![])),
        None
    );
    assert_eq!(run(&tables, &pod("p", vec![]), &node("n", vec![])), None);
    // An in-line Azure File volume is translatable, so PreFilter does not
    // skip; its migration is off, so it is not counted.
    let file = inline_volume_of(
        "f",
        json!({"azureFile": {"shareName": "s", "secretName": "x"}}),
    );
    let got = run(&tables, &pod("p", vec![file]), &node("n", vec![])).unwrap();
    assert!(got.is_success());
}

#[test]
fn the_limit_counts_unique_volumes_of_the_node_and_the_pod() {
    let mut t = ClusterTables::default();
    for c in ["a", "b", "c"] {
        bound(&mut t, c, EBS);
    }
    csinode(
        &mut t,
        "n",
        json!([{"name": EBS, "nodeID": "n", "allocatable": {"count": 2}}]),
    );
    let p = pod("p", vec![claim_volume("c")]);
    // Two volumes on the node, a third wanted: over the limit of 2.
    let full = node(
        "n",
        vec![
            ("x", vec![claim_volume("a")]),
            ("y", vec![claim_volume("b")]),
        ],
    );
    let got = run(&t, &p, &full).unwrap();
    assert_eq!(got.code, Code::Unschedulable);
    assert_eq!(got.reasons(), [ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED]);
    // Two pods sharing one volume count it once.
    let shared = node(
        "n",
        vec![
            ("x", vec![claim_volume("a")]),
            ("y", vec![claim_volume("a")]),
        ],
    );
    assert!(run(&t, &p, &shared).unwrap().is_success());
    // The pod's volume already on the node is not counted again.
    let same = node(
        "n",
        vec![
            ("x", vec![claim_volume("a")]),
            ("y", vec![claim_volume("c")]),
        ],
    );
    assert!(run(&t, &p, &same).unwrap().is_success());
    // A node without a CSINode has no limit.
    assert!(
        run(
            &t,
            &p,
            &node("m", vec![("x", vec![claim_volume("a"), claim_volume("b")])])
        )
        .unwrap()
        .is_success()
    );
}

#[test]
fn attachments_count_unless_a_pod_on_the_node_uses_the_volume() {
    let mut t = ClusterTables::default();
    for c in ["a", "b"] {
        bound(&mut t, c, EBS);
    }
    csinode(
        &mut t,
        "n",
        json!([{"name": EBS, "nodeID": "n", "allocatable": {"count": 1}}]),
    );
    let va = |pv: &str| json!({"metadata": {"name": pv}, "spec": {"attacher": EBS, "nodeName": "n", "source": {"persistentVolumeName": pv}}});
    object(&mut t, "VolumeAttachment", "va-a", va("a"));
    let p = pod("p", vec![claim_volume("b")]);
    // The attachment of `a` fills the node.
    let got = run(&t, &p, &node("n", vec![])).unwrap();
    assert_eq!(got.code, Code::Unschedulable);
    // The pod's own volume attached already still counts as new, as
    // upstream's count has it.
    let p2 = pod("p", vec![claim_volume("a")]);
    assert_eq!(
        run(&t, &p2, &node("n", vec![])).unwrap().code,
        Code::Unschedulable
    );
    // An attachment of a volume a pod on the node uses counts once.
    assert!(
        run(&t, &p2, &node("n", vec![("x", vec![claim_volume("a")])]))
            .unwrap()
            .is_success()
    );
}

#[test]
fn unbound_claims_count_under_their_class_provisioner() {
    let mut t = ClusterTables::default();
    object(
        &mut t,
        "StorageClass",
        "sc",
        json!({"metadata": {"name": "sc"}, "provisioner": EBS}),
    );
    object(
        &mut t,
        "StorageClass",
        "intree",
        json!({"metadata": {"name": "intree"}, "provisioner": "kubernetes.io/aws-ebs"}),
    );
    object(
        &mut t,
        "StorageClass",
        "file",
        json!({"metadata": {"name": "file"}, "provisioner": "kubernetes.io/azure-file"}),
    );
    for (c, class) in [
        ("u1", "sc"),
        ("u2", "intree"),
        ("u3", "file"),
        ("u4", "missing"),
    ] {
        object(
            &mut t,
            "PersistentVolumeClaim",
            &format!("default/{c}"),
            json!({"metadata": {"name": c, "namespace": "default"}, "spec": {"storageClassName": class}}),
        );
    }
    let index = Index::build(&t);
    let counted = |c: &str| index.claims[&format!("default/{c}")].counted.clone();
    let handle = |c: &str| format!("{EBS}/{UNBOUND_HANDLE_PREFIX}-default/{c}");
    assert_eq!(counted("u1"), Some((handle("u1"), EBS.into())));
    assert_eq!(counted("u2"), Some((handle("u2"), EBS.into())));
    assert_eq!(counted("u3"), None);
    assert_eq!(counted("u4"), None);
}

#[test]
fn in_tree_volumes_count_as_their_csi_driver() {
    let mut t = ClusterTables::default();
    object(
        &mut t,
        "PersistentVolumeClaim",
        "default/old",
        json!({"metadata": {"name": "old", "namespace": "default"}, "spec": {"volumeName": "old"}}),
    );
    object(
        &mut t,
        "PersistentVolume",
        "old",
        json!({"metadata": {"name": "old"}, "spec": {"awsElasticBlockStore": {"volumeID": "aws://us-east-1a/vol-1"}}}),
    );
    csinode(
        &mut t,
        "n",
        json!([{"name": EBS, "nodeID": "n", "allocatable": {"count": 1}}]),
    );
    let inline = inline_volume_of("i", json!({"awsElasticBlockStore": {"volumeID": "vol-1"}}));
    // The PV and the in-line volume are one EBS volume, vol-1.
    let p = pod("p", vec![inline.clone()]);
    assert!(
        run(&t, &p, &node("n", vec![("x", vec![claim_volume("old")])]))
            .unwrap()
            .is_success()
    );
    let other = inline_volume_of("i", json!({"awsElasticBlockStore": {"volumeID": "vol-2"}}));
    let got = run(
        &t,
        &pod("p", vec![other]),
        &node("n", vec![("x", vec![claim_volume("old")])]),
    );
    assert_eq!(got.unwrap().code, Code::Unschedulable);
    // A malformed in-line id is an Error, naming the volume.
    let bad = inline_volume_of(
        "bad",
        json!({"awsElasticBlockStore": {"volumeID": "aws://z/disk-1"}}),
    );
    let got = run(&t, &pod("p", vec![bad]), &node("n", vec![])).unwrap();
    assert_eq!(got.code, Code::Error);
    assert_eq!(
        got.message(),
        "converting volume(bad) from inline to csi: failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume (aws://z/disk-1)"
    );
}

#[test]
fn claims_that_are_missing_or_not_the_pods_own() {
    let mut t = ClusterTables::default();
    csinode(
        &mut t,
        "n",
        json!([{"name": EBS, "nodeID": "n", "allocatable": {"count": 5}}]),
    );
    let p = pod("p", vec![claim_volume("gone")]);
    let got = run(&t, &p, &node("n", vec![])).unwrap();
    assert_eq!(got.code, Code::UnschedulableAndUnresolvable);
    assert_eq!(
        got.message(),
        r#"looking up PVC default/gone: persistentvolumeclaim "gone" not found"#
    );
    // A pod on the node whose claim is gone: not counted, no error.
    bound(&mut t, "a", EBS);
    let q = pod("q", vec![claim_volume("a")]);
    assert!(
        run(&t, &q, &node("n", vec![("x", vec![claim_volume("gone")])]))
            .unwrap()
            .is_success()
    );
    // An ephemeral volume's claim owned by another pod.
    object(
        &mut t,
        "PersistentVolumeClaim",
        "default/e-data",
        json!({
        "metadata": {"name": "e-data", "namespace": "default",
                     "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "e", "uid": "uid-other", "controller": true}]},
        "spec": {"volumeName": "a"}}),
    );
    let e = pod("e", vec![ephemeral_volume("e", "data")]);
    let got = run(&t, &e, &node("n", vec![])).unwrap();
    assert_eq!(got.code, Code::Error);
    assert_eq!(
        got.message(),
        "PVC default/e-data was not created for pod default/e (pod is not owner)"
    );
    // Owned by uid: counted (the same volume as `a`).
    object(
        &mut t,
        "PersistentVolumeClaim",
        "default/e-data",
        json!({
        "metadata": {"name": "e-data", "namespace": "default",
                     "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "e", "uid": "uid-e", "controller": true}]},
        "spec": {"volumeName": "a"}}),
    );
    assert!(
        run(&t, &e, &node("n", vec![("x", vec![claim_volume("a")])]))
            .unwrap()
            .is_success()
    );
    // On the node, by the owner's name.
    let on_node = node("n", vec![("e", vec![ephemeral_volume("e", "data")])]);
    assert!(run(&t, &q, &on_node).unwrap().is_success());
    let stranger = node(
        "n",
        vec![(
            "f",
            vec![Volume {
                claim_name: "e-data".into(),
                ..ephemeral_volume("f", "data")
            }],
        )],
    );
    let got = run(&t, &q, &stranger).unwrap();
    assert_eq!(got.code, Code::Error);
    assert_eq!(
        got.message(),
        "PVC default/e-data was not created for pod default/f (pod is not owner)"
    );
}
