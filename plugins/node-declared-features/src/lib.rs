//! NodeDeclaredFeatures: a pod that uses a node-level capability goes only
//! to nodes whose kubelet declares it in `status.declaredFeatures`.
//! Restated from kube-scheduler 1.36's `nodedeclaredfeatures` plugin and
//! the `k8s.io/component-helpers/nodedeclaredfeatures` library (v0.36.0)
//! it calls; research notes in `docs/upstream/nodedeclaredfeatures.md`.
//!
//! The gate is beta and on in 1.36, so the plugin is in the default
//! profile (the last filter). What it does:
//!
//! - PreFilter infers the features the pod needs from its spec over the
//!   1.36 registry ([`REGISTRY`]). Only two can be needed at scheduling:
//!   `RestartAllContainersOnContainerExits` (a container or init container
//!   with a `restartPolicyRules` entry whose action is
//!   `RestartAllContainers`) and `UserNamespacesHostNetworkSupport`
//!   (`hostNetwork: true` with `hostUsers: false`; an absent `hostUsers`
//!   does not count). Ephemeral containers are not read. A pod needing
//!   nothing is skipped, so most pods never reach Filter.
//! - Filter passes a node only if it declares every needed feature, else
//!   `UnschedulableAndUnresolvable` with [`ERR_REASON`] (a node changes
//!   its declarations only when its kubelet restarts, so preemption cannot
//!   help).
//! - A node's list is mapped onto the registry as upstream's `TryMap`
//!   does: names it does not know are dropped, and the list is walked in
//!   step with the sorted registry, assuming it is sorted (the kubelet
//!   writes it so). An unsorted list can lose known entries; that quirk is
//!   kept ([`node_features`]).
//! - No registered feature has a `MaxVersion` in 1.36, so the scheduler's
//!   version drops no requirement and is not modelled.
//!
//! Not certain: the reason string. Every bitmap-form plugin read carries
//! the constant [`ERR_REASON`], and the bitmap API is the only one 1.36's
//! library has; 1.35 said instead
//! `node declared features check failed - unsatisfied requirements: <A>, <B>`.
//! The plugin's 1.36 source itself was not read (see the notes).
//!
//! The node's features come as [`Node::declared_features`] (contract
//! 0.7), not the whole Node: a real node's object is kilobytes, and this
//! filter is on by default. The pod's fields are not in sift's model, so
//! the plugin reads the whole Pod (the escape hatch); a missing or
//! unparsable one is an `Error`: the host sends it whenever a plugin asks.

use serde::Deserialize;
use sift_sdk::{Args, ClusterView, Node, NodeFields, Plugin, Pod, Prepare, Status, export_plugin};

pub const ERR_REASON: &str = "node(s) didn't match Pod's required features";

/// The 1.36 registry (`features.AllFeatures`), sorted by name as upstream
/// sorts it: a feature's index is its bit in a [`Features`] set.
pub const REGISTRY: [&str; 5] = [
    "ExtendWebSocketsToKubelet",
    "InPlacePodLevelResourcesVerticalScaling",
    "InPlacePodVerticalScalingInitContainers",
    "RestartAllContainersOnContainerExits",
    "UserNamespacesHostNetworkSupport",
];

/// A set of registry features, one bit per [`REGISTRY`] index.
pub type Features = u8;

const RESTART_ALL: Features = 1 << 3;
const USERNS_HOST_NETWORK: Features = 1 << 4;

pub struct NodeDeclaredFeatures;

impl Plugin for NodeDeclaredFeatures {
    const NAME: &'static str = "NodeDeclaredFeatures";
    const NODE_FIELDS: NodeFields = NodeFields::DECLARED_FEATURES;
    const POD_OBJECT: bool = true;
    /// The features the pod needs (never empty: an empty set skips).
    type PodState = Features;

    fn new(_: Args) -> Result<Self, String> {
        Ok(NodeDeclaredFeatures)
    }

    fn prepare(&self, pod: &Pod, _: &dyn ClusterView) -> Prepare<Features> {
        let Some(object) = &pod.object else {
            return Prepare::Reject(Status::error("the host sent no pod object"));
        };
        match serde_json::from_str::<PodView>(object) {
            Err(e) => Prepare::Reject(Status::error(format!("pod object: {e}"))),
            Ok(view) => match required(&view.spec) {
                0 => Prepare::Skip,
                needed => Prepare::Proceed(needed),
            },
        }
    }

    fn filter(&self, _: &Pod, needed: &Features, node: &Node) -> Status {
        let declared = *node.derived(node_features);
        if needed & !declared == 0 {
            Status::success()
        } else {
            Status::unresolvable(ERR_REASON)
        }
    }
}

/// The pod fields the inference reads. Unknown fields are skipped, so
/// only these are parsed out of the whole pod.
#[derive(Deserialize, Default)]
struct PodView {
    #[serde(default)]
    spec: PodSpecView,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct PodSpecView {
    host_network: bool,
    host_users: Option<bool>,
    containers: Vec<ContainerView>,
    init_containers: Vec<ContainerView>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct ContainerView {
    restart_policy_rules: Vec<RuleView>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RuleView {
    action: String,
}

/// The features a pod needs to be scheduled (`InferForPodScheduling`).
fn required(spec: &PodSpecView) -> Features {
    let mut needed = 0;
    let restart_all = spec
        .containers
        .iter()
        .chain(&spec.init_containers)
        .flat_map(|c| &c.restart_policy_rules)
        .any(|r| r.action == "RestartAllContainers");
    if restart_all {
        needed |= RESTART_ALL;
    }
    if spec.host_network && spec.host_users == Some(false) {
        needed |= USERNS_HOST_NETWORK;
    }
    needed
}

/// The registry features a node declares, kept with the node
/// ([`Node::derived`]) as upstream maps them once per node update.
fn node_features(node: &Node) -> Features {
    map_sorted(&node.declared_features)
}

/// Upstream's `TryMap`: one pass over `declared` and [`REGISTRY`] in
/// step. A name below the registry's current one is unknown and dropped;
/// a name above it moves the registry on. So a name that comes after a
/// greater one in `declared` is never matched: `[UserNamespaces…,
/// RestartAll…]` keeps only the first.
fn map_sorted(declared: &[String]) -> Features {
    let (mut i, mut j, mut set) = (0, 0, 0);
    while i < declared.len() && j < REGISTRY.len() {
        match declared[i].as_str().cmp(REGISTRY[j]) {
            std::cmp::Ordering::Equal => {
                set |= 1 << j;
                i += 1;
                j += 1;
            }
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
        }
    }
    set
}

export_plugin!(NodeDeclaredFeatures);

#[cfg(test)]
mod tests {
    use super::*;
    use sift_sdk::Code;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn registry_is_sorted_so_indices_are_upstreams_bits() {
        assert!(REGISTRY.is_sorted());
        assert_eq!(REGISTRY[3], "RestartAllContainersOnContainerExits");
        assert_eq!(REGISTRY[4], "UserNamespacesHostNetworkSupport");
    }

    #[test]
    fn mapping_drops_unknown_names_and_relies_on_order() {
        let restart = "RestartAllContainersOnContainerExits";
        let userns = "UserNamespacesHostNetworkSupport";
        assert_eq!(
            map_sorted(&names(&[restart, userns])),
            RESTART_ALL | USERNS_HOST_NETWORK
        );
        assert_eq!(
            map_sorted(&names(&["Aaa", restart, "Sss", userns, "Zzz"])),
            RESTART_ALL | USERNS_HOST_NETWORK
        );
        assert_eq!(map_sorted(&names(&[userns, restart])), USERNS_HOST_NETWORK);
        assert_eq!(
            map_sorted(&names(&[restart, "ExtendWebSocketsToKubelet"])),
            RESTART_ALL
        );
        assert_eq!(map_sorted(&[]), 0);
    }

    #[test]
    fn inference_reads_containers_init_containers_and_host_users() {
        let spec = |json: &str| required(&serde_json::from_str::<PodView>(json).unwrap().spec);
        let rule = r#"{"restartPolicyRules":[{"action":"RestartAllContainers"}]}"#;
        assert_eq!(
            spec(&format!(r#"{{"spec":{{"containers":[{rule}]}}}}"#)),
            RESTART_ALL
        );
        assert_eq!(
            spec(&format!(r#"{{"spec":{{"initContainers":[{rule}]}}}}"#)),
            RESTART_ALL
        );
        assert_eq!(
            spec(r#"{"spec":{"containers":[{"restartPolicyRules":[{"action":"Restart"}]}]}}"#),
            0
        );
        assert_eq!(
            spec(r#"{"spec":{"hostNetwork":true,"hostUsers":false}}"#),
            USERNS_HOST_NETWORK
        );
        assert_eq!(spec(r#"{"spec":{"hostNetwork":true}}"#), 0);
        assert_eq!(spec(r#"{"spec":{"hostNetwork":true,"hostUsers":true}}"#), 0);
        assert_eq!(spec(r#"{"spec":{"hostUsers":false}}"#), 0);
        assert_eq!(spec(r#"{}"#), 0);
    }

    #[test]
    fn prepare_skips_or_proceeds_and_filter_reads_the_declared_features() {
        let plugin = NodeDeclaredFeatures;
        let cluster = sift_sdk::ClusterTables::default();
        let pod = |spec: &str| Pod {
            object: Some(format!(r#"{{"spec":{spec}}}"#).into()),
            ..Pod::default()
        };
        let node = |features: &[&str]| Node {
            declared_features: features.iter().map(|f| f.to_string()).collect(),
            ..Node::default()
        };
        assert!(matches!(
            plugin.prepare(&pod("{}"), &cluster),
            Prepare::Skip
        ));
        let userns = pod(r#"{"hostNetwork":true,"hostUsers":false}"#);
        let Prepare::Proceed(needed) = plugin.prepare(&userns, &cluster) else {
            panic!("a user-namespace pod on the host network needs a feature");
        };
        let declaring = node(&["UserNamespacesHostNetworkSupport"]);
        assert!(plugin.filter(&userns, &needed, &declaring).is_success());
        let rejected = plugin.filter(&userns, &needed, &node(&[]));
        assert_eq!(rejected.code, Code::UnschedulableAndUnresolvable);
        assert_eq!(rejected.reasons(), [ERR_REASON]);
        let no_pod = plugin.prepare(&Pod::default(), &cluster);
        assert!(matches!(no_pod, Prepare::Reject(s) if s.code == Code::Error));
    }
}
