use super::*;
use serde_json::json;
use sift_sdk::{ClusterTables, Code, Labels};
use std::sync::Arc;

fn cluster(objects: Vec<Value>) -> ClusterTables {
    let mut t = ClusterTables::default();
    for o in objects {
        let kind = text(&o, &["kind"]).to_string();
        let name = text(&o, &["metadata", "name"]).to_string();
        let key = if kind == "ResourceClaim" {
            format!("{}/{name}", text(&o, &["metadata", "namespace"]))
        } else {
            name
        };
        t.objects.entry(kind).or_default().insert(key, o);
    }
    t
}

fn pod(claims: &[&str]) -> Pod {
    let entries: Vec<Value> = claims
        .iter()
        .map(|c| json!({"name": c, "resourceClaimName": c}))
        .collect();
    let object = json!({"metadata": {"name": "p", "namespace": "default", "uid": "u"},
                        "spec": {"resourceClaims": entries}});
    Pod {
        name: "p".into(),
        namespace: "default".into(),
        uid: "u".into(),
        object: Some(Arc::from(object.to_string())),
        ..Pod::default()
    }
}

fn claim(name: &str, class: &str, count: u32) -> Value {
    json!({"kind": "ResourceClaim", "metadata": {"name": name, "namespace": "default"},
           "spec": {"devices": {"requests": [{"name": "req-0",
               "exactly": {"deviceClassName": class, "count": count}}]}}})
}

fn class(name: &str, selector: Option<&str>) -> Value {
    let mut c = json!({"kind": "DeviceClass", "metadata": {"name": name}, "spec": {}});
    if let Some(s) = selector {
        c["spec"]["selectors"] = json!([{"cel": {"expression": s}}]);
    }
    c
}

fn slice(name: &str, node: &str, devices: Value) -> Value {
    json!({"kind": "ResourceSlice", "metadata": {"name": name},
           "spec": {"driver": "drv", "nodeName": node,
                    "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                    "devices": devices}})
}

fn node(name: &str) -> Node {
    Node {
        name: name.into(),
        labels: Labels::new(vec![("kubernetes.io/hostname".into(), name.into())]),
        ..Node::default()
    }
}

fn state(p: &Pod, objects: Vec<Value>) -> Result<Option<State>, Status> {
    prepare(p, &cluster(objects))
}

#[test]
fn pod_without_claims_skips() {
    assert!(matches!(state(&pod(&[]), vec![]), Ok(None)));
}

#[test]
fn empty_class_name_is_an_error_in_prefilter() {
    let s = state(&pod(&["c"]), vec![claim("c", "", 1)]).err().unwrap();
    assert_eq!(s.code, Code::Error);
    assert_eq!(s.reasons(), ["request req-0: unsupported request type"]);
}

#[test]
fn allocation_is_shaped_like_status_allocation() {
    let objects = vec![
        claim("c", "gpu", 2),
        class("gpu", Some("device.driver == 'drv'")),
        slice(
            "s",
            "n1",
            json!([{"name": "d0"}, {"name": "d1"}, {"name": "d2"}]),
        ),
    ];
    let st = state(&pod(&["c"]), objects).unwrap().unwrap();
    let n = node("n1");
    let a = st.allocator.as_ref().unwrap();
    let got = a.allocate(&n.name, &n.labels).unwrap().unwrap();
    assert_eq!(
        got,
        vec![json!({
            "devices": {"results": [
                {"request": "req-0", "driver": "drv", "pool": "n1", "device": "d0"},
                {"request": "req-0", "driver": "drv", "pool": "n1", "device": "d1"},
            ]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]},
        })]
    );
    assert!(filter(&st, &n).is_success());
    let other = filter(&st, &node("n2"));
    assert_eq!(other.code, Code::UnschedulableAndUnresolvable);
    assert_eq!(other.reasons(), [ERR_CANNOT_ALLOCATE]);
}

#[test]
fn failed_binding_makes_an_allocated_claim_unavailable() {
    let mut c = claim("c", "gpu", 1);
    c["status"] = json!({
        "allocation": {"devices": {"results": [{"request": "req-0", "driver": "drv", "pool": "n1",
            "device": "d0", "bindingConditions": ["ready"], "bindingFailureConditions": ["failed"]}]}},
        "devices": [{"driver": "drv", "pool": "n1", "device": "d0",
                     "conditions": [{"type": "failed", "status": "True"}]}],
    });
    let st = state(&pod(&["c"]), vec![c]).unwrap().unwrap();
    assert_eq!(filter(&st, &node("n1")).reasons(), [ERR_NOT_AVAILABLE]);
}

#[test]
fn semver_orders_prereleases_first() {
    let v = |s| cel::Semver::parse(s).unwrap();
    assert!(cel::Semver::parse("1.2").is_none());
    assert!(cel::Semver::parse("01.2.3").is_none());
    assert_eq!(
        v("1.2.3-alpha").precedence(&v("1.2.3")),
        std::cmp::Ordering::Less
    );
    assert_eq!(
        v("1.10.0").precedence(&v("1.9.9")),
        std::cmp::Ordering::Greater
    );
}

#[test]
fn string_literals_are_domain_candidates() {
    let l = cel::string_literals(r#"device.attributes["a.example.com"].x == 'y'"#);
    assert!(l.contains("a.example.com") && l.contains("y"));
}

#[test]
fn shared_picks_carry_share_ids_and_consumed_capacity() {
    let mut c0 = claim("c0", "gpu", 1);
    c0["spec"]["devices"]["requests"][0]["exactly"]["capacity"] = json!({"requests": {"mem": "1"}});
    let mut c1 = c0.clone();
    c1["metadata"]["name"] = json!("c1");
    let objects = vec![
        c0,
        c1,
        class("gpu", None),
        slice(
            "s",
            "n1",
            json!([{"name": "d0", "allowMultipleAllocations": true,
                    "capacity": {"mem": {"value": "4", "requestPolicy":
                        {"default": "2", "validRange": {"min": "2", "step": "2", "max": "4"}}}}}]),
        ),
    ];
    let st = state(&pod(&["c0", "c1"]), objects).unwrap().unwrap();
    let n = node("n1");
    let got = st
        .allocator
        .as_ref()
        .unwrap()
        .allocate(&n.name, &n.labels)
        .unwrap()
        .unwrap();
    let results: Vec<&Value> = got.iter().map(|a| &a["devices"]["results"][0]).collect();
    assert_eq!(results[0]["device"], "d0");
    assert_eq!(results[1]["device"], "d0");
    assert_eq!(results[0]["consumedCapacity"], json!({"mem": "2"}));
    assert_ne!(results[0]["shareID"], results[1]["shareID"]);
}

#[test]
fn registers_natively_under_its_name() {
    assert_eq!(crate::sift_native_plugin().name, "DynamicResources");
}

#[test]
fn state_allocations_name_their_claims() {
    let objects = vec![
        claim("c", "gpu", 1),
        class("gpu", None),
        slice("s", "n1", json!([{"name": "d0"}])),
    ];
    let st = state(&pod(&["c"]), objects).unwrap().unwrap();
    let got = st.allocations(&node("n1")).unwrap().unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, "default/c");
    assert_eq!(got[0].1["devices"]["results"][0]["device"], "d0");
    assert_eq!(st.allocations(&node("n2")), Ok(None));
}

#[test]
fn network_attached_devices_merge_their_selectors() {
    let sel = |key: &str, op_field: bool, v: &str| {
        let req = json!([{"key": key, "operator": "In", "values": [v]}]);
        if op_field {
            json!({"nodeSelectorTerms": [{"matchFields": req}]})
        } else {
            json!({"nodeSelectorTerms": [{"matchExpressions": req}]})
        }
    };
    let net = |name: &str, selector: Value| {
        json!({"kind": "ResourceSlice", "metadata": {"name": name},
               "spec": {"driver": "drv", "nodeSelector": selector,
                        "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                        "devices": [{"name": "d"}]}})
    };
    let objects = vec![
        claim("c", "gpu", 4),
        class("gpu", None),
        net("a", sel("region", false, "r1")),
        net("b", sel("region", false, "r1")),
        net("c", sel("planet", false, "earth")),
        net("d", sel("metadata.name", true, "n1")),
    ];
    let st = state(&pod(&["c"]), objects).unwrap().unwrap();
    let mut n = node("n1");
    n.labels = Labels::new(vec![
        ("region".into(), "r1".into()),
        ("planet".into(), "earth".into()),
    ]);
    let got = st.allocations(&n).unwrap().unwrap();
    assert_eq!(
        got[0].1["nodeSelector"],
        json!({"nodeSelectorTerms": [{
            "matchExpressions": [
                {"key": "region", "operator": "In", "values": ["r1"]},
                {"key": "planet", "operator": "In", "values": ["earth"]},
            ],
            "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}],
        }]})
    );
}
