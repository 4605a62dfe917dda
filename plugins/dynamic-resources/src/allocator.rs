//! The structured-parameters allocator for one node (upstream's
//! "incubating" allocator, which 1.36's default gates select), restated:
//! a first-fit, depth-first search over the claims' requests and the
//! devices of the node's complete, valid pools, backtracking across
//! requests and claims. [`Allocator::allocate`] returns one
//! `status.allocation`-shaped value per claim, for Reserve to write.

use crate::capacity::{self, Amounts};
use crate::cel::{self, EvalError, Selector};
use crate::json::{at, int, list, text};
use crate::slices::{Attr, Device, Pool, Slice, pools_for};
use serde_json::{Value, json};
use sift_sdk::model::{Taint, Toleration};
use sift_sdk::toleration::tolerates;
use sift_sdk::{Labels, Quantity};
use std::collections::{BTreeSet, HashMap, HashSet};

/// At most this many devices per claim (`AllocationResultsMaxSize`).
pub const MAX_DEVICES_PER_CLAIM: usize = 32;

/// A device's identity in allocation results.
pub type DeviceId = (String, String, String);

/// A DeviceClass: its selectors and configuration.
pub struct Class {
    pub name: String,
    pub selectors: Vec<Selector>,
    pub config: Vec<Value>,
}

impl Class {
    pub fn parse(name: &str, v: &Value) -> Class {
        Class {
            name: name.to_string(),
            selectors: list(v, &["spec", "selectors"])
                .iter()
                .map(|s| Selector::compile(text(s, &["cel", "expression"])))
                .collect(),
            config: list(v, &["spec", "config"]).to_vec(),
        }
    }
}

/// One way to satisfy a request: `exactly`, or one `firstAvailable`
/// subrequest.
pub struct Sub {
    /// The name results carry: `<request>` or `<request>/<subrequest>`.
    pub name: String,
    pub class: String,
    pub selectors: Vec<Result<Selector, String>>,
    pub all: bool,
    pub count: usize,
    pub admin: bool,
    pub tolerations: Vec<Toleration>,
    pub tolerations_json: Vec<Value>,
    /// `capacity.requests` (consumable capacity).
    pub capacity: Vec<(String, Quantity)>,
    /// A malformed request (e.g. an unknown allocation mode).
    pub error: Option<String>,
}

pub struct Request {
    pub name: String,
    pub subs: Vec<Sub>,
}

pub enum Constraint {
    Match {
        requests: Vec<String>,
        attribute: String,
    },
    Distinct {
        requests: Vec<String>,
        attribute: String,
    },
    Empty,
}

/// An unallocated claim of the pod.
pub struct Claim {
    /// `<namespace>/<name>`.
    pub key: String,
    pub requests: Vec<Request>,
    pub constraints: Vec<Constraint>,
    pub config: Vec<Value>,
}

fn sub(claim: &str, name: String, v: &Value) -> Sub {
    let mut error = None;
    let selectors = list(v, &["selectors"])
        .iter()
        .enumerate()
        .map(|(i, s)| match at(s, &["cel", "expression"]).and_then(Value::as_str) {
            Some(e) => Ok(Selector::compile(e)),
            None => Err(format!(
                "claim {claim}, request {name}, selector #{i}: CEL expression empty (unsupported selector type?)"
            )),
        })
        .collect();
    let mode = text(v, &["allocationMode"]);
    let all = match mode {
        "" | "ExactCount" => false,
        "All" => true,
        other => {
            error = Some(format!(
                "claim {claim}, request {name}: unsupported count mode {other}"
            ));
            false
        }
    };
    let tolerations_json = list(v, &["tolerations"]).to_vec();
    Sub {
        class: text(v, &["deviceClassName"]).to_string(),
        selectors,
        all,
        count: int(v, &["count"]).unwrap_or(1).max(0) as usize,
        admin: at(v, &["adminAccess"]).and_then(Value::as_bool) == Some(true),
        tolerations: tolerations_json
            .iter()
            .map(|t| Toleration {
                key: text(t, &["key"]).to_string(),
                operator: text(t, &["operator"]).to_string(),
                value: text(t, &["value"]).to_string(),
                effect: text(t, &["effect"]).to_string(),
                toleration_seconds: int(t, &["tolerationSeconds"]),
            })
            .collect(),
        tolerations_json,
        capacity: capacity::requests(v),
        error,
        name,
    }
}

impl Claim {
    pub fn parse(key: String, v: &Value) -> Claim {
        let devices = at(v, &["spec", "devices"]).unwrap_or(&Value::Null);
        let requests = list(devices, &["requests"])
            .iter()
            .map(|r| {
                let name = text(r, &["name"]).to_string();
                let subs = if let Some(e) = r.get("exactly").filter(|e| !e.is_null()) {
                    vec![sub(&key, name.clone(), e)]
                } else {
                    list(r, &["firstAvailable"])
                        .iter()
                        .map(|s| sub(&key, format!("{name}/{}", text(s, &["name"])), s))
                        .collect()
                };
                Request { name, subs }
            })
            .collect();
        let names = |c: &Value| -> Vec<String> {
            list(c, &["requests"])
                .iter()
                .filter_map(|r| r.as_str().map(str::to_string))
                .collect()
        };
        let constraints = list(devices, &["constraints"])
            .iter()
            .map(|c| {
                if let Some(a) = c.get("matchAttribute").and_then(Value::as_str) {
                    Constraint::Match {
                        requests: names(c),
                        attribute: a.to_string(),
                    }
                } else if let Some(a) = c.get("distinctAttribute").and_then(Value::as_str) {
                    Constraint::Distinct {
                        requests: names(c),
                        attribute: a.to_string(),
                    }
                } else {
                    Constraint::Empty
                }
            })
            .collect();
        Claim {
            key,
            requests,
            constraints,
            config: list(devices, &["config"]).to_vec(),
        }
    }
}

/// Why allocation failed other than "no solution".
#[derive(Debug, PartialEq)]
pub enum AllocError {
    /// No solution, and a relevant pool was invalid (a per-node verdict).
    InvalidPools,
    /// Anything else (a broken selector, a malformed claim): upstream
    /// makes the whole attempt an `Error`.
    Fatal(String),
}

/// What PreFilter gathered for allocating on any node.
pub struct Allocator {
    pub claims: Vec<Claim>,
    pub classes: HashMap<String, Class>,
    pub slices: Vec<Slice>,
    /// Devices held by allocated claims (admin-access results and shared
    /// allocations excepted).
    pub in_use: HashSet<DeviceId>,
    /// What shared allocations (results with a `shareID`) consume of
    /// multi-allocatable devices.
    pub shared: HashMap<DeviceId, Amounts>,
    /// Attribute/capacity domains `device` answers with an empty map.
    pub domains: BTreeSet<String>,
}

/// A pool's shared counters (partitionable devices): each counter's value
/// and what devices of allocated claims already consume of it.
#[derive(Default)]
struct PoolCounters {
    value: HashMap<(String, String), Quantity>,
    consumed: HashMap<(String, String), Quantity>,
}

impl PoolCounters {
    /// Over every slice of the pool's newest generation, cluster-wide: the
    /// counter sets may sit in a slice of their own, and devices of other
    /// nodes may draw on them.
    fn of(a: &Allocator, driver: &str, pool: &str) -> PoolCounters {
        let slices: Vec<&Slice> = a
            .slices
            .iter()
            .filter(|s| s.driver == driver && s.pool == pool)
            .collect();
        let generation = slices.iter().map(|s| s.generation).max().unwrap_or(0);
        let mut out = PoolCounters::default();
        for s in slices.iter().filter(|s| s.generation == generation) {
            for (set, counters) in &s.counter_sets {
                for (name, q) in counters {
                    out.value.insert((set.clone(), name.clone()), *q);
                }
            }
            for d in &s.devices {
                let id = (d.driver.clone(), d.pool.clone(), d.name.clone());
                if !a.in_use.contains(&id) {
                    continue;
                }
                for (set, counters) in &d.consumes {
                    for (name, q) in counters {
                        let e = out
                            .consumed
                            .entry((set.clone(), name.clone()))
                            .or_insert(Quantity::ZERO);
                        *e = e.saturating_add(*q);
                    }
                }
            }
        }
        out
    }
}

/// A device picked in this attempt.
#[derive(Clone)]
struct Pick {
    /// Index into the attempt's device list.
    device: usize,
    /// Index of the request in its claim, and of the subrequest.
    request: usize,
    sub: usize,
    /// For a device with `allowMultipleAllocations`: what this pick
    /// consumes of its capacities (the device stays available to others).
    shared: Option<Amounts>,
}

struct Candidate<'a> {
    slice: &'a Slice,
    device: &'a Device,
}

struct Search<'a> {
    a: &'a Allocator,
    node: &'a str,
    pools: Vec<Pool<'a>>,
    devices: Vec<Candidate<'a>>,
    /// One `(claim, request)` per step.
    steps: Vec<(usize, usize)>,
    picks: Vec<Vec<Pick>>,
    /// A relevant pool was invalid.
    invalid: bool,
    /// Dedicated devices picked in this attempt, by any claim and
    /// admin-access requests included (upstream's "allocating" devices):
    /// device index → number of picks.
    used: HashMap<usize, u32>,
    root: ::cel::Context<'static, 'static>,
    values: HashMap<usize, Result<::cel::Value, String>>,
    /// The devices each `All` (sub)request selects, found before the
    /// search.
    all_devices: HashMap<(usize, usize, usize), Vec<usize>>,
    /// Per pool: shared counters, and what allocated devices consume.
    counters: HashMap<(String, String), PoolCounters>,
    selected: HashMap<(usize, usize, usize, usize), bool>,
}

impl Allocator {
    /// Allocates every claim for `node`: `Ok(Some(allocations))`, one
    /// `status.allocation`-shaped value per claim in order (`devices.results[]`
    /// with `request`, `driver`, `pool`, `device`; `devices.config[]`;
    /// `nodeSelector`), `Ok(None)` when there is no solution.
    pub fn allocate(&self, node: &str, labels: &Labels) -> Result<Option<Vec<Value>>, AllocError> {
        for c in &self.claims {
            if let Some(i) = c
                .constraints
                .iter()
                .position(|k| matches!(k, Constraint::Empty))
            {
                return Err(AllocError::Fatal(format!(
                    "claim {}, constraint #{i}: empty constraint (unsupported constraint type?)",
                    c.key
                )));
            }
            for r in &c.requests {
                for s in &r.subs {
                    if let Some(e) = &s.error {
                        return Err(AllocError::Fatal(e.clone()));
                    }
                    if let Some(Err(e)) = s.selectors.iter().find(|s| s.is_err()) {
                        return Err(AllocError::Fatal(e.clone()));
                    }
                }
            }
            let need: usize = c
                .requests
                .iter()
                .map(|r| {
                    r.subs
                        .iter()
                        .filter(|s| !s.all)
                        .map(|s| s.count)
                        .min()
                        .unwrap_or(0)
                })
                .sum();
            if need > MAX_DEVICES_PER_CLAIM {
                return Err(AllocError::Fatal(format!(
                    "claim {}: number of requested devices {need} exceeds the claim limit of {MAX_DEVICES_PER_CLAIM}",
                    c.key
                )));
            }
        }
        let pools = pools_for(&self.slices, node, labels);
        let mut devices = Vec::new();
        for p in pools.iter().filter(|p| !p.incomplete && !p.invalid) {
            for s in &p.slices {
                for d in &s.devices {
                    if s.device_on_node(d, node, labels) {
                        devices.push(Candidate {
                            slice: s,
                            device: d,
                        });
                    }
                }
            }
        }
        let steps = self
            .claims
            .iter()
            .enumerate()
            .flat_map(|(c, claim)| (0..claim.requests.len()).map(move |r| (c, r)))
            .collect();
        let mut search = Search {
            a: self,
            node,
            invalid: pools.iter().any(|p| p.invalid),
            pools,
            devices,
            steps,
            picks: vec![Vec::new(); self.claims.len()],
            used: HashMap::new(),
            root: cel::context(),
            values: HashMap::new(),
            counters: HashMap::new(),
            selected: HashMap::new(),
            all_devices: HashMap::new(),
        };
        search.validate()?;
        if search.step(0)? {
            Ok(Some(search.results()))
        } else if search.invalid {
            Err(AllocError::InvalidPools)
        } else {
            Ok(None)
        }
    }
}

fn blocks(t: &Taint) -> bool {
    t.effect == "NoSchedule" || t.effect == "NoExecute"
}

fn attr_eq(a: &Attr, b: &Attr) -> bool {
    a == b
}

/// Same key, operator and set of values.
fn same_requirement(a: &Value, b: &Value) -> bool {
    let values = |v: &Value| -> BTreeSet<String> {
        list(v, &["values"])
            .iter()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect()
    };
    text(a, &["key"]) == text(b, &["key"])
        && text(a, &["operator"]) == text(b, &["operator"])
        && values(a) == values(b)
}

impl<'a> Search<'a> {
    fn step(&mut self, step: usize) -> Result<bool, AllocError> {
        let Some(&(c, r)) = self.steps.get(step) else {
            return Ok(true);
        };
        let request = &self.a.claims[c].requests[r];
        for s in 0..request.subs.len() {
            let sub = &request.subs[s];
            let found = if sub.all {
                self.all(step, c, r, s)?
            } else {
                self.choose(step, c, r, s, 0, sub.count)?
            };
            if found {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// `ExactCount`: `remaining` more devices from `start` on, as
    /// combinations in search order.
    fn choose(
        &mut self,
        step: usize,
        c: usize,
        r: usize,
        s: usize,
        start: usize,
        remaining: usize,
    ) -> Result<bool, AllocError> {
        if remaining == 0 {
            return self.step(step + 1);
        }
        for i in start..self.devices.len() {
            if !self.candidate(i, c, r, s)? || !self.constraints_ok(i, c, r, s)? {
                continue;
            }
            self.push(i, c, r, s);
            if self.choose(step, c, r, s, i + 1, remaining - 1)? {
                return Ok(true);
            }
            self.pop(c);
        }
        Ok(false)
    }

    /// `All`: every selectable device of the node's pools, each free.
    /// Before searching, as upstream prepares each request: every
    /// (sub)request's class must exist, and an `All` request collects the
    /// devices its selectors pick, which needs every pool of the node
    /// complete and valid.
    fn validate(&mut self) -> Result<(), AllocError> {
        let a = self.a;
        for (c, claim) in a.claims.iter().enumerate() {
            for (r, request) in claim.requests.iter().enumerate() {
                for (s, sub) in request.subs.iter().enumerate() {
                    if !a.classes.contains_key(&sub.class) {
                        return Err(AllocError::Fatal(format!(
                            "claim {}, request {}: could not retrieve device class {}: deviceclass.resource.k8s.io \"{}\" not found",
                            claim.key, sub.name, sub.class, sub.class
                        )));
                    }
                    if !sub.all {
                        continue;
                    }
                    if let Some(p) = self.pools.iter().find(|p| p.incomplete || p.invalid) {
                        let why = if p.incomplete {
                            "currently being updated"
                        } else {
                            "currently invalid"
                        };
                        return Err(AllocError::Fatal(format!(
                            "claim {}, request {}: asks for all devices, but resource pool {}/{} is {why}",
                            claim.key, sub.name, p.driver, p.name
                        )));
                    }
                    let mut chosen = Vec::new();
                    for i in 0..self.devices.len() {
                        if self.selectable(i, c, r, s)? {
                            chosen.push(i);
                        }
                    }
                    self.all_devices.insert((c, r, s), chosen);
                }
            }
        }
        Ok(())
    }

    fn all(&mut self, step: usize, c: usize, r: usize, s: usize) -> Result<bool, AllocError> {
        let claim = &self.a.claims[c];
        let name = &claim.requests[r].subs[s].name;
        let chosen = self
            .all_devices
            .get(&(c, r, s))
            .cloned()
            .unwrap_or_default();
        if chosen.is_empty() {
            return Ok(false);
        }
        let mark = self.picks[c].len();
        for &i in &chosen {
            if !self.available(i, c, r, s)
                || !self.tolerated(i, c, r, s)
                || !self.capacity_fits(i, c, r, s)
                || !self.counters_fit(i)
            {
                self.unwind(c, mark);
                return Ok(false);
            }
            if !self.constraints_ok(i, c, r, s)? {
                let d = self.devices[i].device;
                self.unwind(c, mark);
                return Err(AllocError::Fatal(format!(
                    "claim {}, request {name}: cannot add device {}/{}/{} because a claim constraint would not be satisfied",
                    claim.key, d.driver, d.pool, d.name
                )));
            }
            self.push(i, c, r, s);
        }
        if self.picks[c].len() > MAX_DEVICES_PER_CLAIM {
            let n = self.picks[c].len();
            self.unwind(c, mark);
            return Err(AllocError::Fatal(format!(
                "claim {}: number of requested devices {n} exceeds the claim limit of {MAX_DEVICES_PER_CLAIM}",
                claim.key
            )));
        }
        if self.step(step + 1)? {
            return Ok(true);
        }
        self.unwind(c, mark);
        Ok(false)
    }

    fn push(&mut self, i: usize, c: usize, r: usize, s: usize) {
        let sub = &self.a.claims[c].requests[r].subs[s];
        let d = self.devices[i].device;
        let shared = if d.allow_multiple {
            capacity::consumption(d, &sub.capacity)
        } else {
            *self.used.entry(i).or_default() += 1;
            None
        };
        self.picks[c].push(Pick {
            device: i,
            request: r,
            sub: s,
            shared,
        });
    }

    fn pop(&mut self, c: usize) {
        if let Some(p) = self.picks[c].pop()
            && p.shared.is_none()
            && let Some(n) = self.used.get_mut(&p.device)
        {
            *n -= 1;
            if *n == 0 {
                self.used.remove(&p.device);
            }
        }
    }

    fn unwind(&mut self, c: usize, mark: usize) {
        while self.picks[c].len() > mark {
            self.pop(c);
        }
    }

    /// Not in use: by allocated claims or this attempt (admin access
    /// ignores both, but one claim never takes a device twice; a device an
    /// admin-access request took in this attempt is in use for the others).
    fn available(&self, i: usize, c: usize, r: usize, s: usize) -> bool {
        let d = self.devices[i].device;
        if d.allow_multiple {
            // Shared: not held exclusively, not twice for one request;
            // its capacity decides the rest.
            return !self.picks[c]
                .iter()
                .any(|p| p.device == i && p.request == r)
                && !self
                    .a
                    .in_use
                    .contains(&(d.driver.clone(), d.pool.clone(), d.name.clone()));
        }
        if self.picks[c].iter().any(|p| p.device == i) {
            return false;
        }
        if self.a.claims[c].requests[r].subs[s].admin {
            return true;
        }
        !self.used.contains_key(&i)
            && !self
                .a
                .in_use
                .contains(&(d.driver.clone(), d.pool.clone(), d.name.clone()))
    }

    /// Untolerated `NoSchedule`/`NoExecute` device taints block it.
    fn tolerated(&self, i: usize, c: usize, r: usize, s: usize) -> bool {
        let sub = &self.a.claims[c].requests[r].subs[s];
        self.devices[i]
            .device
            .taints
            .iter()
            .filter(|t| blocks(t))
            .all(|t| sub.tolerations.iter().any(|tol| tolerates(tol, t)))
    }

    fn candidate(&mut self, i: usize, c: usize, r: usize, s: usize) -> Result<bool, AllocError> {
        Ok(self.available(i, c, r, s)
            && self.selectable(i, c, r, s)?
            && self.tolerated(i, c, r, s)
            && self.capacity_fits(i, c, r, s)
            && self.counters_fit(i))
    }

    /// Consumable capacity: the request's capacity fits the device (its
    /// policy, its value); for a multi-allocatable device, together with
    /// what shared allocations and this attempt's picks consume.
    fn capacity_fits(&self, i: usize, c: usize, r: usize, s: usize) -> bool {
        let d = self.devices[i].device;
        let sub = &self.a.claims[c].requests[r].subs[s];
        let Some(mut total) = capacity::consumption(d, &sub.capacity) else {
            return false;
        };
        if !d.allow_multiple {
            return true;
        }
        if let Some(held) = self
            .a
            .shared
            .get(&(d.driver.clone(), d.pool.clone(), d.name.clone()))
        {
            capacity::add(&mut total, held);
        }
        for p in self.picks.iter().flatten().filter(|p| p.device == i) {
            if let Some(more) = &p.shared {
                capacity::add(&mut total, more);
            }
        }
        total
            .iter()
            .all(|(k, q)| d.capacity.get(k).is_none_or(|v| q <= v))
    }

    /// Partitionable devices: what the device consumes, with what
    /// allocated devices and this attempt's picks consume, fits each
    /// shared counter of its pool.
    fn counters_fit(&mut self, i: usize) -> bool {
        let d = self.devices[i].device;
        if d.consumes.is_empty() {
            return true;
        }
        let key = (d.driver.clone(), d.pool.clone());
        let a = self.a;
        let pool = self
            .counters
            .entry(key)
            .or_insert_with(|| PoolCounters::of(a, &d.driver, &d.pool));
        for (set, counters) in &d.consumes {
            for (name, amount) in counters {
                let k = (set.clone(), name.clone());
                let Some(value) = pool.value.get(&k) else {
                    return false;
                };
                let mut total = pool
                    .consumed
                    .get(&k)
                    .copied()
                    .unwrap_or(Quantity::ZERO)
                    .saturating_add(*amount);
                for (&j, &n) in &self.used {
                    let o = self.devices[j].device;
                    if o.driver != d.driver || o.pool != d.pool {
                        continue;
                    }
                    for (oset, oc) in &o.consumes {
                        if oset == set
                            && let Some(q) = oc.get(name)
                        {
                            for _ in 0..n {
                                total = total.saturating_add(*q);
                            }
                        }
                    }
                }
                if total > *value {
                    return false;
                }
            }
        }
        true
    }

    /// The class's selectors, then the request's, all true.
    fn selectable(&mut self, i: usize, c: usize, r: usize, s: usize) -> Result<bool, AllocError> {
        if let Some(&v) = self.selected.get(&(i, c, r, s)) {
            return Ok(v);
        }
        let a = self.a;
        let sub = &a.claims[c].requests[r].subs[s];
        let claim_key = &a.claims[c].key;
        let Some(class) = a.classes.get(&sub.class) else {
            return Err(AllocError::Fatal(format!(
                "claim {claim_key}, request {}: could not retrieve device class {}: deviceclass.resource.k8s.io \"{}\" not found",
                sub.name, sub.class, sub.class
            )));
        };
        let mut ok = true;
        let class_sel = class
            .selectors
            .iter()
            .enumerate()
            .map(|(n, s)| (format!("class {}", class.name), n, s));
        let claim_sel = sub.selectors.iter().enumerate().filter_map(|(n, s)| {
            s.as_ref()
                .ok()
                .map(|s| (format!("claim {claim_key}"), n, s))
        });
        let selectors: Vec<_> = class_sel.chain(claim_sel).collect();
        for (who, n, sel) in selectors {
            let device = self.device_value(i).map_err(AllocError::Fatal)?;
            match cel::eval(&self.root, sel, &device) {
                Ok(true) => {}
                Ok(false) => {
                    ok = false;
                    break;
                }
                Err(EvalError::Compile(e)) => {
                    return Err(AllocError::Fatal(format!(
                        "{who}: selector #{n}: CEL compile error: {e}"
                    )));
                }
                Err(EvalError::Runtime(e)) => {
                    return Err(AllocError::Fatal(format!(
                        "{who}: selector #{n}: CEL runtime error: {e}"
                    )));
                }
            }
        }
        self.selected.insert((i, c, r, s), ok);
        Ok(ok)
    }

    fn device_value(&mut self, i: usize) -> Result<::cel::Value, String> {
        let d = self.devices[i].device;
        let domains = &self.a.domains;
        self.values
            .entry(i)
            .or_insert_with(|| cel::device_value(d, domains))
            .clone()
    }

    /// The claim's constraints that cover request `r` (subrequest `s`)
    /// accept device `i` beside the devices the claim already took.
    fn constraints_ok(&self, i: usize, c: usize, r: usize, s: usize) -> Result<bool, AllocError> {
        let claim = &self.a.claims[c];
        let covers = |requests: &[String], r: usize, s: usize| {
            let req = &claim.requests[r];
            requests.is_empty()
                || requests
                    .iter()
                    .any(|n| *n == req.name || *n == req.subs[s].name)
        };
        let d = self.devices[i].device;
        for k in &claim.constraints {
            let (requests, attribute, distinct) = match k {
                Constraint::Match {
                    requests,
                    attribute,
                } => (requests, attribute, false),
                Constraint::Distinct {
                    requests,
                    attribute,
                } => (requests, attribute, true),
                Constraint::Empty => continue,
            };
            if !covers(requests, r, s) {
                continue;
            }
            let Some(value) = d.attribute(attribute) else {
                return Ok(false);
            };
            if *value == Attr::Unsupported {
                // A value of no known type never matches.
                return Ok(false);
            }
            for p in &self.picks[c] {
                if !covers(requests, p.request, p.sub) {
                    continue;
                }
                let other = self.devices[p.device].device.attribute(attribute);
                let equal = other.is_some_and(|o| attr_eq(o, value));
                if equal == distinct {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// One `status.allocation` per claim.
    fn results(&self) -> Vec<Value> {
        let mut out = Vec::new();
        let mut share = 0u64;
        for (c, claim) in self.a.claims.iter().enumerate() {
            let mut results = Vec::new();
            let mut used_requests: BTreeSet<&str> = BTreeSet::new();
            // Each used class, with the requests that used it.
            let mut classes: Vec<(&str, Vec<&str>)> = Vec::new();
            let mut local = false;
            let mut terms: Vec<Value> = Vec::new();
            for p in &self.picks[c] {
                let sub = &claim.requests[p.request].subs[p.sub];
                let cand = &self.devices[p.device];
                let d = cand.device;
                let mut r = json!({
                    "request": sub.name,
                    "driver": d.driver,
                    "pool": d.pool,
                    "device": d.name,
                });
                if sub.admin {
                    r["adminAccess"] = json!(true);
                }
                if !sub.tolerations_json.is_empty() {
                    r["tolerations"] = json!(sub.tolerations_json);
                }
                if let Some(consumed) = &p.shared {
                    share += 1;
                    r["shareID"] = json!(format!("00000000-0000-4000-8000-{share:012x}"));
                    let amounts: serde_json::Map<String, Value> = consumed
                        .iter()
                        .map(|((domain, id), q)| {
                            let name = if *domain == d.driver {
                                id.clone()
                            } else {
                                format!("{domain}/{id}")
                            };
                            (name, json!(capacity::format(*q)))
                        })
                        .collect();
                    r["consumedCapacity"] = Value::Object(amounts);
                }
                if !d.binding_conditions.is_empty() {
                    r["bindingConditions"] = json!(d.binding_conditions);
                    r["bindingFailureConditions"] = json!(d.binding_failure_conditions);
                }
                results.push(r);
                used_requests.insert(&claim.requests[p.request].name);
                used_requests.insert(&sub.name);
                match classes.iter_mut().find(|(c, _)| *c == sub.class) {
                    Some((_, requests)) => {
                        if !requests.contains(&sub.name.as_str()) {
                            requests.push(&sub.name);
                        }
                    }
                    None => classes.push((&sub.class, vec![&sub.name])),
                }
                let placement = match &d.placement {
                    Some(pl)
                        if pl.node_name.is_some() || pl.all_nodes || pl.node_selector.is_some() =>
                    {
                        pl
                    }
                    _ => &cand.slice.placement,
                };
                if placement.node_name.is_some() || d.binds_to_node {
                    local = true;
                } else if let Some((_, raw)) = &placement.node_selector {
                    terms.extend(list(raw, &["nodeSelectorTerms"]).iter().cloned());
                }
            }
            let mut config = Vec::new();
            for (class, requests) in classes {
                if let Some(k) = self.a.classes.get(class) {
                    for cfg in &k.config {
                        let mut cfg = cfg.clone();
                        if let Some(o) = cfg.as_object_mut() {
                            o.insert("source".into(), json!("FromClass"));
                            o.insert("requests".into(), json!(requests));
                        }
                        config.push(cfg);
                    }
                }
            }
            for cfg in &claim.config {
                let requests: Vec<&str> = list(cfg, &["requests"])
                    .iter()
                    .filter_map(Value::as_str)
                    .collect();
                if requests.is_empty() || requests.iter().any(|r| used_requests.contains(r)) {
                    let mut cfg = cfg.clone();
                    if let Some(o) = cfg.as_object_mut() {
                        o.insert("source".into(), json!("FromClaim"));
                    }
                    config.push(cfg);
                }
            }
            let mut allocation = json!({ "devices": { "results": results } });
            if !config.is_empty() {
                allocation["devices"]["config"] = json!(config);
            }
            if local {
                allocation["nodeSelector"] = json!({ "nodeSelectorTerms": [{
                    "matchFields": [{ "key": "metadata.name", "operator": "In", "values": [self.node] }]
                }]});
            } else if !terms.is_empty() {
                // Merge the single-term selectors into one term.
                let mut expressions = Vec::new();
                let mut fields = Vec::new();
                // Requirements already present are not repeated.
                let add = |to: &mut Vec<Value>, from: &[Value]| {
                    for r in from {
                        if !to.iter().any(|t| same_requirement(t, r)) {
                            to.push(r.clone());
                        }
                    }
                };
                for t in &terms {
                    add(&mut expressions, list(t, &["matchExpressions"]));
                    add(&mut fields, list(t, &["matchFields"]));
                }
                let mut term = json!({});
                if !expressions.is_empty() {
                    term["matchExpressions"] = json!(expressions);
                }
                if !fields.is_empty() {
                    term["matchFields"] = json!(fields);
                }
                allocation["nodeSelector"] = json!({ "nodeSelectorTerms": [term] });
            }
            out.push(allocation);
        }
        out
    }
}
