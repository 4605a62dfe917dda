//! DynamicResources: a pod's ResourceClaims (DRA with structured
//! parameters) must be allocatable, or already allocated, on the node.
//! Restated from kube-scheduler 1.36's `dynamicresources` plugin and the
//! "incubating" structured allocator of `k8s.io/dynamic-resource-allocation`
//! v0.36.0, which 1.36's default feature gates select; research notes in
//! `docs/upstream/dynamicresources.md`.
//!
//! PreFilter (`prepare`, [`claims`]): resolves `spec.resourceClaims` to
//! ResourceClaims (by name, or a template's claim through
//! `status.resourceClaimStatuses`, which must be owned by the pod), with
//! upstream's messages; skips pods without claims; keeps allocated
//! claims' `nodeSelector`; checks each unallocated claim's requests
//! (request type, DeviceClass existence); gathers the devices held by
//! every allocated claim (admin-access results excepted), the
//! ResourceSlices and the DeviceClasses for the allocator.
//!
//! Filter (`filter`): allocated claims must select the node; unallocated
//! claims must be allocatable on it ([`allocator`]): slices whose
//! `nodeName` is the node, whose `nodeSelector` matches it, `allNodes`,
//! or per-device node selection; complete, valid pools ([`slices`]:
//! newest generation, `resourceSliceCount`, duplicate devices or counter
//! sets, unknown counters); devices not in use by allocated claims nor by
//! another claim of the pod, unless `adminAccess`; `exactly` requests
//! with `ExactCount` (`count`) and `All`; `firstAvailable` subrequests in
//! order; DeviceClass and request CEL selectors ([`cel`]);
//! `matchAttribute` and `distinctAttribute` constraints (the latter as
//! "all different"); consumable capacity ([`capacity`]); partitionable
//! devices' `consumesCounters` against their pool's `sharedCounters`,
//! counting allocated devices and this attempt's picks; untolerated
//! `NoSchedule`/`NoExecute` device taints; the 32-devices-per-claim
//! limit. Reasons and codes are upstream's: UAU `cannot allocate all
//! claims`, `invalid resource pools were encountered`, `resourceclaim not
//! available on the node`; an allocator error (a CEL error, a malformed
//! claim) is `Error`.
//!
//! Reserve and PreBind (`pre_bind`, `prebind.rs`): [`State::allocations`]
//! (over [`allocator::Allocator::allocate`]) chooses the devices on the
//! node; each claim is written back with the allocation and the pod in
//! `reservedFor` (contract 0.7), which the host applies before binding.
//!
//! Not covered, and why:
//! - Unreserve and PostFilter (deallocating): the host writes the
//!   allocation before binding and never unreserves after a write. The
//!   writes are applied at once, so there is no in-flight claim state:
//!   "is in the process of being allocated" never happens.
//! - Score: upstream scores only `firstAvailable` choices (weight 2);
//!   out of scope here.
//! - Extended resources backed by DRA (`DRAExtendedResource`): needs the
//!   NodeResourcesFit delegation and a scheduler-owned claim.
//! - Binding conditions: a failed binding (a `bindingFailureConditions`
//!   type `True` in `status.devices`) makes an allocated claim
//!   unavailable, but the binding timeout (allocation timestamp plus
//!   `bindingTimeout`) needs a clock and is not checked; PreBind's wait
//!   is the host's.
//! - Consumable capacity is covered ([`capacity`]: `capacity.requests`,
//!   request policies, sharing of `allowMultipleAllocations` devices,
//!   other pods' shared allocations by `consumedCapacity`), but amounts are
//!   compared to thousandths, `distinctAttribute` is "all different" where
//!   upstream compares a new device with the last one stored per request,
//!   and the `shareID`s results carry are placeholders numbered per attempt
//!   (Reserve must give each a fresh UID, as upstream does).
//! - CEL differences listed in [`cel`] (no type checking, cel-rust error
//!   texts, no cost limit, some Kubernetes libraries).
//! - A malformed allocation `nodeSelector` term matches no node, where
//!   upstream fails PreFilter with its parse error.
//! - `filterTimeout` (10 s per node upstream): the host's per-call deadline
//!   bounds the search instead.

pub mod allocator;
pub mod capacity;
pub mod cel;
pub mod claims;
mod json;
pub mod policy;
mod prebind;
pub mod slices;

use allocator::{AllocError, Allocator, Class};
use json::{at, is_set, list, text};
use serde_json::Value;
use sift_sdk::selector::NodeSelector;
use sift_sdk::{
    Args, ClusterView, ExtensionPoints, Node, NodeFields, ObjectWrite, Plugin, Pod, Prepare,
    Status, export_plugin,
};
use std::collections::{BTreeSet, HashMap, HashSet};

pub const ERR_CANNOT_ALLOCATE: &str = "cannot allocate all claims";
pub const ERR_NOT_AVAILABLE: &str = "resourceclaim not available on the node";
pub const ERR_INVALID_POOLS: &str = "invalid resource pools were encountered";

pub struct DynamicResources;

/// What PreFilter found, for Filter.
#[derive(Default)]
pub struct State {
    /// The allocated claims' `status.allocation.nodeSelector`s.
    allocated: Vec<NodeSelector>,
    /// An allocated claim's device binding failed: the claim is not
    /// available on any node.
    binding_failed: bool,
    /// The unallocated claims, ready to allocate per node.
    allocator: Option<Allocator>,
}

impl Plugin for DynamicResources {
    const NAME: &'static str = "DynamicResources";
    const NODE_FIELDS: NodeFields = NodeFields::LABELS;
    const EXTENSION_POINTS: ExtensionPoints =
        ExtensionPoints::FILTER.union(ExtensionPoints::RESERVE);
    const POD_OBJECT: bool = true;
    /// Not `ResourceClaimTemplate`: the scheduler reads only the claims the
    /// resourceclaim controller creates from templates.
    const OBJECT_KINDS: &'static [&'static str] =
        &["ResourceClaim", "ResourceSlice", "DeviceClass"];
    type PodState = State;

    fn new(_: Args) -> Result<Self, String> {
        Ok(DynamicResources)
    }

    fn prepare(&self, pod: &Pod, cluster: &dyn ClusterView) -> Prepare<State> {
        match prepare(pod, cluster) {
            Ok(Some(state)) => Prepare::Proceed(state),
            Ok(None) => Prepare::Skip,
            Err(status) => Prepare::Reject(status),
        }
    }

    fn filter(&self, _: &Pod, state: &State, node: &Node) -> Status {
        filter(state, node)
    }

    fn pre_bind(
        &self,
        pod: &Pod,
        node: &Node,
        cluster: &dyn ClusterView,
    ) -> Result<Vec<ObjectWrite>, Status> {
        let Some(state) = prepare(pod, cluster)? else {
            return Ok(Vec::new());
        };
        let object: Value = match &pod.object {
            Some(o) => serde_json::from_str(o).map_err(|e| Status::error(e.to_string()))?,
            None => return Err(Status::error("the pod object is missing")),
        };
        prebind::writes(&state, pod, &object, node, cluster).map_err(Status::error)
    }
}

impl State {
    /// What Reserve would write for `node`: for each claim of the pod that
    /// is not allocated yet, its key (`<namespace>/<name>`) and a value
    /// shaped as its `status.allocation` (`devices.results[]` with
    /// `request`, `driver`, `pool`, `device` and, where they apply,
    /// `adminAccess`, `tolerations`, `shareID`, `consumedCapacity`,
    /// `bindingConditions`; `devices.config[]`; `nodeSelector`).
    /// `Ok(Some(vec![]))` when every claim is already allocated;
    /// `Ok(None)` when the claims cannot all be allocated on the node.
    pub fn allocations(&self, node: &Node) -> Result<Option<Vec<(String, Value)>>, AllocError> {
        let Some(a) = &self.allocator else {
            return Ok(Some(Vec::new()));
        };
        Ok(a.allocate(&node.name, &node.labels)?.map(|allocations| {
            a.claims
                .iter()
                .map(|c| c.key.clone())
                .zip(allocations)
                .collect()
        }))
    }
}

/// PreFilter: `None` to skip (the pod has no claim).
fn prepare(pod: &Pod, cluster: &dyn ClusterView) -> Result<Option<State>, Status> {
    let object: Value = match &pod.object {
        Some(o) => serde_json::from_str(o).map_err(|e| Status::error(e.to_string()))?,
        None => return Err(Status::error("the pod object is missing")),
    };
    let namespace = if pod.namespace.is_empty() {
        "default"
    } else {
        &pod.namespace
    };
    let found = claims::lookup(&object, namespace, &pod.name, &pod.uid, cluster)?;
    if found.is_empty() {
        return Ok(None);
    }
    let mut state = State::default();
    let mut pending = Vec::new();
    for c in &found {
        if let Some(allocation) = at(c.value, &["status", "allocation"]).filter(|a| !a.is_null()) {
            if let Some(sel) = allocation.get("nodeSelector").filter(|s| !s.is_null()) {
                state.allocated.push(json::node_selector(sel));
            }
            state.binding_failed |= binding_failed(c.value);
            continue;
        }
        let key = c.key();
        for r in list(c.value, &["spec", "devices", "requests"]) {
            let name = text(r, &["name"]);
            if let Some(e) = r.get("exactly").filter(|e| !e.is_null()) {
                check_class(text(e, &["deviceClassName"]), name, cluster)?;
            } else if !list(r, &["firstAvailable"]).is_empty() {
                for s in list(r, &["firstAvailable"]) {
                    let sub = format!("{name}/{}", text(s, &["name"]));
                    check_class(text(s, &["deviceClassName"]), &sub, cluster)?;
                }
            } else {
                return Err(Status::unresolvable(format!(
                    "resource claim {key}, request {name}: unknown request type"
                )));
            }
        }
        pending.push(allocator::Claim::parse(key, c.value));
    }
    if !pending.is_empty() {
        state.allocator = Some(build_allocator(pending, cluster));
    }
    Ok(Some(state))
}

/// Whether a device of an allocated claim reports one of its
/// `bindingFailureConditions` as `True` in `status.devices` (binding
/// conditions and device status are on by default in 1.36). The binding
/// timeout needs a clock and is not checked.
fn binding_failed(claim: &Value) -> bool {
    let devices = list(claim, &["status", "devices"]);
    list(claim, &["status", "allocation", "devices", "results"])
        .iter()
        .any(|r| {
            let failures: Vec<&str> = list(r, &["bindingFailureConditions"])
                .iter()
                .filter_map(Value::as_str)
                .collect();
            !failures.is_empty()
                && devices.iter().any(|d| {
                    ["driver", "pool", "device"]
                        .iter()
                        .all(|k| text(d, &[k]) == text(r, &[k]))
                        && list(d, &["conditions"]).iter().any(|c| {
                            failures.contains(&text(c, &["type"])) && text(c, &["status"]) == "True"
                        })
                })
        })
}

/// A request's class must be named and exist.
fn check_class(class: &str, request: &str, cluster: &dyn ClusterView) -> Result<(), Status> {
    if class.is_empty() {
        return Err(Status::error(format!(
            "request {request}: unsupported request type"
        )));
    }
    if cluster.object("DeviceClass", class).is_none() {
        return Err(Status::unresolvable(format!(
            "request {request}: device class {class} does not exist"
        )));
    }
    Ok(())
}

/// Everything the allocator reads: the slices, the classes the claims
/// name, and the devices allocated claims hold.
fn build_allocator(claims: Vec<allocator::Claim>, cluster: &dyn ClusterView) -> Allocator {
    let mut classes = HashMap::new();
    for c in &claims {
        for r in &c.requests {
            for s in &r.subs {
                if let Some(v) = cluster.object("DeviceClass", &s.class) {
                    classes
                        .entry(s.class.clone())
                        .or_insert_with(|| Class::parse(&s.class, v));
                }
            }
        }
    }
    let slices: Vec<slices::Slice> = cluster
        .objects("ResourceSlice")
        .into_iter()
        .filter(|(_, v)| slices::is_slice(v))
        .map(|(name, v)| slices::Slice::parse(name, v))
        .collect();
    let mut in_use = HashSet::new();
    let mut shared: HashMap<allocator::DeviceId, capacity::Amounts> = HashMap::new();
    for (_, claim) in cluster.objects("ResourceClaim") {
        if !is_set(claim, &["status", "allocation"]) {
            continue;
        }
        for r in list(claim, &["status", "allocation", "devices", "results"]) {
            if r.get("adminAccess").and_then(Value::as_bool) == Some(true) {
                continue;
            }
            let id = (
                text(r, &["driver"]).to_string(),
                text(r, &["pool"]).to_string(),
                text(r, &["device"]).to_string(),
            );
            if is_set(r, &["shareID"]) {
                capacity::add(shared.entry(id).or_default(), &capacity::consumed(r));
            } else {
                in_use.insert(id);
            }
        }
    }
    // Domains `device.attributes[...]` answers with an empty map: every
    // domain a device has, and every string literal of a selector.
    let mut domains = BTreeSet::new();
    for s in &slices {
        domains.insert(s.driver.clone());
        for d in &s.devices {
            domains.extend(d.attributes.keys().map(|(dom, _)| dom.clone()));
            domains.extend(d.capacity.keys().map(|(dom, _)| dom.clone()));
        }
    }
    let mut sources: Vec<&str> = Vec::new();
    for c in cluster.objects("DeviceClass") {
        if classes.contains_key(c.0) {
            for s in list(c.1, &["spec", "selectors"]) {
                sources.push(text(s, &["cel", "expression"]));
            }
        }
    }
    let mut claim_sources = Vec::new();
    for c in &claims {
        if let Some(v) = cluster.object("ResourceClaim", &c.key) {
            for r in list(v, &["spec", "devices", "requests"]) {
                let mut subs = vec![r.get("exactly").cloned().unwrap_or(Value::Null)];
                subs.extend(list(r, &["firstAvailable"]).iter().cloned());
                for s in subs {
                    for sel in list(&s, &["selectors"]) {
                        claim_sources.push(text(sel, &["cel", "expression"]).to_string());
                    }
                }
            }
        }
    }
    for s in sources
        .into_iter()
        .chain(claim_sources.iter().map(String::as_str))
    {
        domains.extend(cel::string_literals(s));
    }
    Allocator {
        claims,
        classes,
        slices,
        in_use,
        shared,
        domains,
    }
}

/// Filter: allocated claims' node selectors, then allocation on the node.
fn filter(state: &State, node: &Node) -> Status {
    let unavailable = state.binding_failed
        || state
            .allocated
            .iter()
            .any(|s| !s.matches(&node.name, &node.labels));
    if let Some(a) = &state.allocator {
        match a.allocate(&node.name, &node.labels) {
            Ok(Some(_)) => {}
            Ok(None) => return Status::unresolvable(ERR_CANNOT_ALLOCATE),
            Err(AllocError::InvalidPools) => return Status::unresolvable(ERR_INVALID_POOLS),
            Err(AllocError::Fatal(e)) => return Status::error(e),
        }
    }
    if unavailable {
        return Status::unresolvable(ERR_NOT_AVAILABLE);
    }
    Status::success()
}

export_plugin!(DynamicResources);

#[cfg(test)]
mod tests;
