//! A device capacity's `requestPolicy` (consumable capacity): the amounts
//! a request may be granted, read with the slice and applied by
//! `capacity.rs`.

use crate::json::{at, list, quantity};
use serde_json::Value;
use sift_sdk::Quantity;

/// A capacity's `requestPolicy`.
#[derive(Clone, Debug, Default)]
pub struct Policy {
    pub default: Option<Quantity>,
    /// Sorted ascending.
    pub valid_values: Vec<Quantity>,
    pub min: Option<Quantity>,
    pub max: Option<Quantity>,
    pub step: Option<Quantity>,
}

impl Policy {
    /// `requestPolicy` of a device capacity, if set.
    pub fn parse(capacity: &Value) -> Option<Policy> {
        let p = at(capacity, &["requestPolicy"]).filter(|p| !p.is_null())?;
        let mut valid_values: Vec<Quantity> = list(p, &["validValues"])
            .iter()
            .filter_map(|v| quantity(Some(v)))
            .collect();
        valid_values.sort();
        Some(Policy {
            default: quantity(p.get("default")),
            valid_values,
            min: quantity(at(p, &["validRange", "min"])),
            max: quantity(at(p, &["validRange", "max"])),
            step: quantity(at(p, &["validRange", "step"])),
        })
    }

    /// The amount a request for `r` consumes, or `None` when the policy
    /// cannot grant it.
    pub fn round(&self, r: Quantity) -> Option<Quantity> {
        if !self.valid_values.is_empty() {
            return self.valid_values.iter().copied().find(|v| *v >= r);
        }
        if self.min.is_none() && self.max.is_none() && self.step.is_none() {
            return Some(r);
        }
        let min = self.min.unwrap_or(Quantity::ZERO);
        let mut v = r.max(min);
        if let Some(step) = self.step.filter(|s| !s.is_zero()) {
            let (v_m, min_m, step_m) = (v.milli_value(), min.milli_value(), step.milli_value());
            let steps = (v_m - min_m + step_m - 1) / step_m;
            v = Quantity::from_milli(min_m + steps * step_m);
        }
        match self.max {
            Some(max) if v > max => None,
            _ => Some(v),
        }
    }
}
