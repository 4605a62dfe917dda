//! Consumable capacity (`DRAConsumableCapacity`, beta and on in 1.36): a
//! request's `capacity.requests`, rounded by the device's request policy,
//! and what a device with `allowMultipleAllocations` has left to share.
//! Amounts are compared in thousandths (the SDK's quantity precision for
//! arithmetic).

use crate::json::{at, quantity, text};
use crate::policy::Policy;
use crate::slices::{Device, split_name};
use serde_json::Value;
use sift_sdk::Quantity;
use std::collections::BTreeMap;

/// A capacity's name under its domain: `(domain, id)`.
pub type Name = (String, String);

/// Amounts per capacity.
pub type Amounts = BTreeMap<Name, Quantity>;

/// A request's `capacity.requests`, names resolved against `driver` later.
pub fn requests(sub: &Value) -> Vec<(String, Quantity)> {
    at(sub, &["capacity", "requests"])
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.clone(), quantity(Some(v))?)))
        .collect()
}

/// What picking `d` for a request with `requests` consumes of each of its
/// capacities, or `None` when the device cannot serve the request: it
/// lacks a requested capacity, the policy refuses the amount, or the
/// amount exceeds the capacity.
pub fn consumption(d: &Device, requests: &[(String, Quantity)]) -> Option<Amounts> {
    let requested: BTreeMap<Name, Quantity> = requests
        .iter()
        .map(|(k, q)| (split_name(k, &d.driver), *q))
        .collect();
    if requested.keys().any(|k| !d.capacity.contains_key(k)) {
        return None;
    }
    let mut out = Amounts::new();
    for (name, value) in &d.capacity {
        let policy = d.policies.get(name);
        let amount = match (requested.get(name), policy) {
            (Some(r), Some(p)) => p.round(*r)?,
            (Some(r), None) => *r,
            (
                None,
                Some(Policy {
                    default: Some(q), ..
                }),
            ) => *q,
            (None, _) => *value,
        };
        if amount > *value {
            return None;
        }
        out.insert(name.clone(), amount);
    }
    Some(out)
}

/// Adds `more` into `total`.
pub fn add(total: &mut Amounts, more: &Amounts) {
    for (k, q) in more {
        let e = total.entry(k.clone()).or_insert(Quantity::ZERO);
        *e = e.saturating_add(*q);
    }
}

/// An allocated result's `consumedCapacity`, names resolved against its
/// driver.
pub fn consumed(result: &Value) -> Amounts {
    let driver = text(result, &["driver"]);
    at(result, &["consumedCapacity"])
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((split_name(k, driver), quantity(Some(v))?)))
        .collect()
}

/// A quantity as the API prints a whole or milli amount.
pub fn format(q: Quantity) -> String {
    let m = q.milli_value();
    if m % 1000 == 0 {
        (m / 1000).to_string()
    } else {
        format!("{m}m")
    }
}
