//! Volcano's `api.Resource`: milli-CPU, memory bytes and scalar resources
//! as floats, compared with its 0.1 tolerance. Scalars are milli-units as
//! Volcano stores them, except `pods`, a count: every task requests one
//! pod, and a node's idle `pods` is its allocatable minus its pods.

use sift_sdk::Resources;
use std::collections::BTreeMap;

/// Volcano's `Resource.String()`: `cpu 1000.00, memory 1073741824.00`, then
/// each scalar (milli-units, `pods` a count), as its logs print them.
impl std::fmt::Display for Res {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cpu {:.2}, memory {:.2}", self.cpu, self.memory)?;
        for (name, v) in &self.scalars {
            write!(f, ", {name} {v:.2}")?;
        }
        Ok(())
    }
}

/// Below this a dimension counts as zero (Volcano's `minResource`).
pub const MIN_RESOURCE: f64 = 0.1;
pub const PODS: &str = "pods";

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Res {
    pub cpu: f64,
    pub memory: f64,
    /// Sorted by name (Go ranges over a map; sift takes name order).
    pub scalars: BTreeMap<String, f64>,
}

impl Res {
    /// A resource list as Volcano's `NewResource` reads it.
    fn from_resources(r: &Resources) -> Res {
        let mut out = Res {
            cpu: r.milli_cpu as f64,
            memory: r.memory as f64,
            scalars: BTreeMap::new(),
        };
        if r.ephemeral_storage != 0 {
            out.scalars.insert(
                "ephemeral-storage".into(),
                r.ephemeral_storage as f64 * 1000.0,
            );
        }
        for (name, v) in &r.scalar {
            *out.scalars.entry(name.clone()).or_default() += *v as f64 * 1000.0;
        }
        out
    }

    /// A node's allocatable, `pods` included.
    pub fn allocatable(r: &Resources) -> Res {
        let mut out = Res::from_resources(r);
        out.scalars.insert(PODS.into(), r.allowed_pod_number as f64);
        out
    }

    /// A task's request (`GetPodResourceRequest`): its pod's requests and
    /// one pod.
    pub fn request(r: &Resources) -> Res {
        let mut out = Res::from_resources(r);
        out.scalars.insert(PODS.into(), 1.0);
        out
    }

    /// What a node's pods use: their requests and their count.
    pub fn used(requested: &Resources, pods: u32) -> Res {
        let mut out = Res::from_resources(requested);
        out.scalars.insert(PODS.into(), pods as f64);
        out
    }

    pub fn add(&mut self, o: &Res) -> &mut Res {
        self.cpu += o.cpu;
        self.memory += o.memory;
        for (k, v) in &o.scalars {
            *self.scalars.entry(k.clone()).or_default() += v;
        }
        self
    }

    pub fn sub(&mut self, o: &Res) -> &mut Res {
        self.cpu -= o.cpu;
        self.memory -= o.memory;
        for (k, v) in &o.scalars {
            *self.scalars.entry(k.clone()).or_default() -= v;
        }
        self
    }

    pub fn multi(&mut self, ratio: f64) -> &mut Res {
        self.cpu *= ratio;
        self.memory *= ratio;
        for v in self.scalars.values_mut() {
            *v *= ratio;
        }
        self
    }

    pub fn get(&self, name: &str) -> f64 {
        match name {
            "cpu" => self.cpu,
            "memory" => self.memory,
            _ => self.scalars.get(name).copied().unwrap_or(0.0),
        }
    }

    /// Dimensions of at least [`MIN_RESOURCE`] (`ResourceNames`).
    pub fn names(&self) -> Vec<&str> {
        let mut names = Vec::new();
        if self.cpu >= MIN_RESOURCE {
            names.push("cpu");
        }
        if self.memory >= MIN_RESOURCE {
            names.push("memory");
        }
        names.extend(
            self.scalars
                .iter()
                .filter(|(_, v)| **v >= MIN_RESOURCE)
                .map(|(k, _)| k.as_str()),
        );
        names
    }

    /// A best-effort request: nothing but `pods` (`IsEmpty`).
    pub fn is_empty(&self) -> bool {
        self.cpu < MIN_RESOURCE
            && self.memory < MIN_RESOURCE
            && self
                .scalars
                .iter()
                .all(|(k, v)| k == PODS || *v < MIN_RESOURCE)
    }

    /// `LessEqual(rr, Zero)`: every dimension of `self` within `other`'s,
    /// a dimension `other` lacks being zero.
    pub fn less_equal(&self, other: &Res) -> bool {
        self.insufficient(other).is_empty()
    }

    /// The dimensions where `self` exceeds `other` (`Zero` default): cpu,
    /// memory, then scalars by name (`LessEqualWithResourcesName`).
    pub fn insufficient(&self, other: &Res) -> Vec<&str> {
        let mut out = Vec::new();
        if !le(self.cpu, other.cpu) {
            out.push("cpu");
        }
        if !le(self.memory, other.memory) {
            out.push("memory");
        }
        for (k, v) in &self.scalars {
            if !le(*v, other.get(k)) {
                out.push(k.as_str());
            }
        }
        out
    }

    /// `LessEqualWithDimension(rr, req)`: only the dimensions `req` asks
    /// for (`pods` never), without tolerance.
    pub fn less_equal_in(&self, other: &Res, req: &Res) -> bool {
        if req.cpu > 0.0 && self.cpu > other.cpu {
            return false;
        }
        if req.memory > 0.0 && self.memory > other.memory {
            return false;
        }
        req.scalars
            .iter()
            .filter(|(k, q)| k.as_str() != PODS && **q > 0.0)
            .all(|(k, _)| self.get(k) <= other.get(k))
    }

    /// Per dimension the smaller of the two (`MinDimensionResource`);
    /// a dimension `other` lacks is zero (`Zero`) or unbounded.
    pub fn min_dimension(&mut self, other: &Res, missing_is_infinite: bool) {
        self.cpu = self.cpu.min(other.cpu);
        self.memory = self.memory.min(other.memory);
        for (k, v) in self.scalars.iter_mut() {
            match other.scalars.get(k) {
                Some(o) => *v = v.min(*o),
                None if missing_is_infinite => {}
                None => *v = 0.0,
            }
        }
    }

    /// Per dimension the larger (`helpers.Max`).
    pub fn max(&self, other: &Res) -> Res {
        let mut out = Res {
            cpu: self.cpu.max(other.cpu),
            memory: self.memory.max(other.memory),
            scalars: BTreeMap::new(),
        };
        for (k, v) in self.scalars.iter().chain(other.scalars.iter()) {
            if *v > 0.0 {
                let e = out.scalars.entry(k.clone()).or_insert(0.0);
                *e = e.max(*v);
            }
        }
        out
    }

    /// The part of `self` above `other`, per dimension, floored at zero
    /// (`ExceededPart`).
    pub fn exceeded_part(&self, other: &Res) -> Res {
        let mut out = Res {
            cpu: (self.cpu - other.cpu).max(0.0),
            memory: (self.memory - other.memory).max(0.0),
            scalars: BTreeMap::new(),
        };
        for (k, v) in &self.scalars {
            out.scalars.insert(k.clone(), (v - other.get(k)).max(0.0));
        }
        out
    }

    /// Dimension-wise increase and decrease from `old` to `self` (`Diff`).
    pub fn diff(&self, old: &Res) -> (Res, Res) {
        let mut inc = Res::default();
        let mut dec = Res::default();
        let split = |new: f64, old: f64| -> (f64, f64) {
            if new > old {
                (new - old, 0.0)
            } else {
                (0.0, old - new)
            }
        };
        (inc.cpu, dec.cpu) = split(self.cpu, old.cpu);
        (inc.memory, dec.memory) = split(self.memory, old.memory);
        let names: std::collections::BTreeSet<&String> =
            self.scalars.keys().chain(old.scalars.keys()).collect();
        for k in names {
            let (i, d) = split(self.get(k), old.get(k));
            inc.scalars.insert(k.clone(), i);
            dec.scalars.insert(k.clone(), d);
        }
        (inc, dec)
    }
}

fn le(l: f64, r: f64) -> bool {
    l < r || (l - r).abs() < MIN_RESOURCE
}

/// `helpers.Share`: `l / r`, 1 when `r` is 0 and `l` is not.
pub fn share(l: f64, r: f64) -> f64 {
    if r == 0.0 {
        if l == 0.0 { 0.0 } else { 1.0 }
    } else {
        l / r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(cpu: f64, mem: f64, gpu: f64) -> Res {
        let mut r = Res {
            cpu,
            memory: mem,
            scalars: BTreeMap::new(),
        };
        if gpu > 0.0 {
            r.scalars.insert("nvidia.com/gpu".into(), gpu);
        }
        r
    }

    #[test]
    fn tolerance_and_missing_dimensions() {
        assert!(res(1000.05, 0.0, 0.0).less_equal(&res(1000.0, 0.0, 0.0)));
        assert!(!res(1000.2, 0.0, 0.0).less_equal(&res(1000.0, 0.0, 0.0)));
        // A scalar the other side lacks is zero.
        assert_eq!(
            res(0.0, 0.0, 1000.0).insufficient(&res(1.0, 1.0, 0.0)),
            vec!["nvidia.com/gpu"]
        );
        assert_eq!(
            res(2.0, 2.0, 0.0).insufficient(&res(1.0, 1.0, 0.0)),
            vec!["cpu", "memory"]
        );
    }

    #[test]
    fn best_effort_ignores_pods() {
        let mut r = Res::default();
        r.scalars.insert(PODS.into(), 1.0);
        assert!(r.is_empty());
        r.memory = 1.0;
        assert!(!r.is_empty());
    }

    #[test]
    fn diff_splits_increase_and_decrease() {
        let (inc, dec) = res(3.0, 1.0, 0.0).diff(&res(1.0, 4.0, 0.0));
        assert_eq!((inc.cpu, inc.memory), (2.0, 0.0));
        assert_eq!((dec.cpu, dec.memory), (0.0, 3.0));
    }
}
