//! ResourceSlices and the pools they form, as the allocator sees them for
//! one node: which slices are relevant, which generation of a pool
//! counts, and whether a pool is complete and valid.

use crate::json::{at, flag, int, is_set, list, node_selector, text};
use serde_json::Value;
use sift_sdk::model::Taint;
use sift_sdk::selector::NodeSelector;
use sift_sdk::{Labels, Quantity};
use std::collections::{BTreeMap, HashSet};

/// A device attribute value (`int`, `bool`, `string`, `version`); a list
/// value (1.36 has `DRAListTypeAttributes` off) is `Unsupported`.
#[derive(Clone, Debug, PartialEq)]
pub enum Attr {
    Int(i64),
    Bool(bool),
    Str(String),
    Version(String),
    Unsupported,
}

/// Where a slice or device is available.
#[derive(Clone, Debug, Default)]
pub struct Placement {
    pub node_name: Option<String>,
    pub all_nodes: bool,
    pub node_selector: Option<(NodeSelector, Value)>,
}

impl Placement {
    fn of(v: &Value) -> Placement {
        Placement {
            node_name: Some(text(v, &["nodeName"]))
                .filter(|n| !n.is_empty())
                .map(str::to_string),
            all_nodes: flag(v, &["allNodes"]),
            node_selector: at(v, &["nodeSelector"])
                .filter(|s| !s.is_null())
                .map(|s| (node_selector(s), s.clone())),
        }
    }

    fn matches(&self, node: &str, labels: &Labels) -> bool {
        self.node_name.as_deref() == Some(node)
            || self.all_nodes
            || self
                .node_selector
                .as_ref()
                .is_some_and(|(s, _)| s.matches(node, labels))
    }

    fn is_set(&self) -> bool {
        self.node_name.is_some() || self.all_nodes || self.node_selector.is_some()
    }
}

/// Counter name → amount.
pub type Counters = BTreeMap<String, Quantity>;

fn counters(v: &Value) -> Counters {
    at(v, &["counters"])
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, c)| {
            (
                k.clone(),
                quantity(c.get("value")).unwrap_or(Quantity::ZERO),
            )
        })
        .collect()
}

fn quantity(v: Option<&Value>) -> Option<Quantity> {
    match v? {
        Value::String(s) => Quantity::parse(s).ok(),
        Value::Number(n) => Quantity::parse(&n.to_string()).ok(),
        _ => None,
    }
}

/// One device of a slice.
#[derive(Clone, Debug)]
pub struct Device {
    pub driver: String,
    pub pool: String,
    pub name: String,
    /// `(domain, id)` → value; a name without a domain is filed under the
    /// driver.
    pub attributes: BTreeMap<(String, String), Attr>,
    pub capacity: BTreeMap<(String, String), Quantity>,
    /// Capacities' `requestPolicy` (consumable capacity).
    pub policies: BTreeMap<(String, String), crate::policy::Policy>,
    pub taints: Vec<Taint>,
    pub allow_multiple: bool,
    pub binding_conditions: Vec<String>,
    pub binding_failure_conditions: Vec<String>,
    pub binds_to_node: bool,
    /// With `perDeviceNodeSelection`: the device's own placement.
    pub placement: Option<Placement>,
    /// `(counterSet, counter → amount)` it consumes from its pool's
    /// shared counters (partitionable devices).
    pub consumes: Vec<(String, Counters)>,
}

impl Device {
    /// The attribute named `domain/id`, or a bare `id` under the driver.
    pub fn attribute(&self, qualified: &str) -> Option<&Attr> {
        let (domain, id) = match qualified.split_once('/') {
            Some((d, i)) => (d, i),
            None => (self.driver.as_str(), qualified),
        };
        self.attributes.get(&(domain.to_string(), id.to_string()))
    }
}

/// A ResourceSlice.
#[derive(Clone, Debug)]
pub struct Slice {
    pub name: String,
    pub driver: String,
    pub pool: String,
    pub generation: i64,
    pub slice_count: i64,
    pub placement: Placement,
    pub per_device: bool,
    /// Shared counter sets: name → counter → value.
    pub counter_sets: Vec<(String, Counters)>,
    pub devices: Vec<Device>,
}

/// `domain/id`, or a bare id under the driver's domain.
pub fn split_name(name: &str, driver: &str) -> (String, String) {
    match name.split_once('/') {
        Some((d, i)) => (d.to_string(), i.to_string()),
        None => (driver.to_string(), name.to_string()),
    }
}

fn attr(v: &Value) -> Attr {
    if let Some(i) = v.get("int").and_then(Value::as_i64) {
        Attr::Int(i)
    } else if let Some(b) = v.get("bool").and_then(Value::as_bool) {
        Attr::Bool(b)
    } else if let Some(s) = v.get("string").and_then(Value::as_str) {
        Attr::Str(s.to_string())
    } else if let Some(s) = v.get("version").and_then(Value::as_str) {
        Attr::Version(s.to_string())
    } else {
        Attr::Unsupported
    }
}

impl Slice {
    pub fn parse(name: &str, v: &Value) -> Slice {
        let spec = v.get("spec").unwrap_or(&Value::Null);
        let driver = text(spec, &["driver"]).to_string();
        let pool = text(spec, &["pool", "name"]).to_string();
        let per_device = flag(spec, &["perDeviceNodeSelection"]);
        let counter_sets = list(spec, &["sharedCounters"])
            .iter()
            .map(|c| (text(c, &["name"]).to_string(), counters(c)))
            .collect();
        let devices = list(spec, &["devices"])
            .iter()
            .map(|d| Device {
                driver: driver.clone(),
                pool: pool.clone(),
                name: text(d, &["name"]).to_string(),
                attributes: at(d, &["attributes"])
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| (split_name(k, &driver), attr(v)))
                    .collect(),
                capacity: at(d, &["capacity"])
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                    .filter_map(|(k, v)| Some((split_name(k, &driver), quantity(v.get("value"))?)))
                    .collect(),
                policies: at(d, &["capacity"])
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                    .filter_map(|(k, v)| {
                        Some((split_name(k, &driver), crate::policy::Policy::parse(v)?))
                    })
                    .collect(),
                taints: list(d, &["taints"])
                    .iter()
                    .map(|t| Taint {
                        key: text(t, &["key"]).to_string(),
                        value: text(t, &["value"]).to_string(),
                        effect: text(t, &["effect"]).to_string(),
                    })
                    .collect(),
                allow_multiple: flag(d, &["allowMultipleAllocations"]),
                binding_conditions: strings(d, "bindingConditions"),
                binding_failure_conditions: strings(d, "bindingFailureConditions"),
                binds_to_node: flag(d, &["bindsToNode"]),
                placement: per_device.then(|| Placement::of(d)),
                consumes: list(d, &["consumesCounters"])
                    .iter()
                    .map(|c| (text(c, &["counterSet"]).to_string(), counters(c)))
                    .collect(),
            })
            .collect();
        Slice {
            name: name.to_string(),
            generation: int(spec, &["pool", "generation"]).unwrap_or(0),
            slice_count: int(spec, &["pool", "resourceSliceCount"]).unwrap_or(1),
            placement: Placement::of(spec),
            per_device,
            counter_sets,
            devices,
            driver,
            pool,
        }
    }

    /// Whether the slice concerns the node (upstream: relevant slices).
    fn relevant(&self, node: &str, labels: &Labels) -> bool {
        !self.counter_sets.is_empty()
            || self.placement.matches(node, labels)
            || (self.per_device
                && self.devices.iter().any(|d| {
                    d.placement
                        .as_ref()
                        .is_some_and(|p| p.matches(node, labels))
                }))
    }

    /// Whether a device of this slice may be allocated on the node.
    pub fn device_on_node(&self, d: &Device, node: &str, labels: &Labels) -> bool {
        match &d.placement {
            Some(p) if p.is_set() => p.matches(node, labels),
            _ => self.placement.matches(node, labels),
        }
    }
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    list(v, &[key])
        .iter()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect()
}

/// A pool as the allocator sees it for one node.
#[derive(Debug)]
pub struct Pool<'a> {
    pub driver: &'a str,
    pub name: &'a str,
    /// Its slices of the current generation relevant to the node, by name.
    pub slices: Vec<&'a Slice>,
    pub incomplete: bool,
    pub invalid: bool,
    pub binding_conditions: bool,
}

/// The pools for `node`, in search order: driver, then pool name, pools
/// with a device carrying binding conditions last.
pub fn pools_for<'a>(all: &'a [Slice], node: &str, labels: &Labels) -> Vec<Pool<'a>> {
    let mut by_pool: BTreeMap<(&str, &str), Vec<&Slice>> = BTreeMap::new();
    for s in all.iter().filter(|s| s.relevant(node, labels)) {
        by_pool.entry((&s.driver, &s.pool)).or_default().push(s);
    }
    let mut pools = Vec::new();
    for ((driver, name), slices) in by_pool {
        let generation = slices.iter().map(|s| s.generation).max().unwrap_or(0);
        let mut slices: Vec<&Slice> = slices
            .into_iter()
            .filter(|s| s.generation == generation)
            .collect();
        slices.sort_by(|a, b| a.name.cmp(&b.name));
        let wanted = slices[0].slice_count;
        let mut incomplete = false;
        // All slices of this pool in the cluster, of its generation: the
        // pool may span nodes.
        let cluster: Vec<&Slice> = all
            .iter()
            .filter(|s| s.driver == driver && s.pool == name)
            .collect();
        if (slices.len() as i64) < wanted {
            if cluster.iter().any(|s| s.generation > generation) {
                // Obsolete: a newer generation exists elsewhere.
                continue;
            }
            let same = cluster
                .iter()
                .filter(|s| s.generation == generation)
                .count();
            incomplete = (same as i64) < wanted;
        }
        let invalid = invalid(
            cluster
                .iter()
                .copied()
                .filter(|s| s.generation == generation),
        );
        let binding_conditions = slices
            .iter()
            .any(|s| s.devices.iter().any(|d| !d.binding_conditions.is_empty()));
        pools.push(Pool {
            driver,
            name,
            slices,
            incomplete,
            invalid,
            binding_conditions,
        });
    }
    pools.sort_by_key(|p| p.binding_conditions);
    pools
}

/// A pool is invalid when two slices name the same device or define the
/// same counter set, or a device consumes an unknown counter set or
/// counter.
fn invalid<'a>(slices: impl Iterator<Item = &'a Slice>) -> bool {
    let slices: Vec<&Slice> = slices.collect();
    let mut devices = HashSet::new();
    let mut sets: BTreeMap<&str, &Counters> = BTreeMap::new();
    for s in &slices {
        for (name, counters) in &s.counter_sets {
            if sets.insert(name, counters).is_some() {
                return true;
            }
        }
    }
    for s in &slices {
        for d in &s.devices {
            if !devices.insert(d.name.as_str()) {
                return true;
            }
            for (set, counters) in &d.consumes {
                match sets.get(set.as_str()) {
                    None => return true,
                    Some(known) if counters.keys().any(|c| !known.contains_key(c)) => return true,
                    Some(_) => {}
                }
            }
        }
    }
    false
}

/// Whether the slice object is well formed enough to read (has a spec).
pub fn is_slice(v: &Value) -> bool {
    is_set(v, &["spec"])
}
