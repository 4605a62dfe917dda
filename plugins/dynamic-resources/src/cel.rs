//! Device selectors: CEL expressions over one variable, `device`,
//! evaluated with the `cel` crate (cel-rust).
//!
//! `device` is a map: `driver` (string), `allowMultipleAllocations`
//! (bool), `attributes[<domain>][<id>]` (int, bool, string, or a semver
//! value for `version` attributes) and `capacity[<domain>][<id>]` (a
//! Quantity). A domain the device lacks reads as an empty map when it is
//! one the cluster's devices or the selectors' string literals name (a
//! plain map cannot answer every absent key); any other absent domain is a
//! `no such key` runtime error where upstream yields an empty map.
//!
//! Kubernetes' Quantity and semver libraries are restated here as opaque
//! values: `quantity(s)`, `isQuantity(s)`, `compareTo`, `isLessThan`,
//! `isGreaterThan`, `add`, `sub`, `sign`, `asInteger`, `isInteger`,
//! `asApproximateFloat`, and `semver(s)`, `isSemver(s)`, `major`, `minor`,
//! `patch` (with `compareTo`/`isLessThan`/`isGreaterThan` shared); `==`
//! compares by value.
//!
//! Differences from cel-go that remain: no compile-time type checking
//! (upstream rejects undeclared names even in a branch never evaluated),
//! error texts are cel-rust's (except `no such key: <id>`, worded as
//! upstream), no runtime cost limit, and Kubernetes' URL/IP/CIDR/format/
//! `ext.Sets` libraries are absent.

use crate::slices::{Attr, Device};
use cel::extractors::This;
use cel::objects::{Key, Map, Opaque};
use cel::{Context, Env, ExecutionError, Program, Value};
use sift_sdk::Quantity;
use std::cmp::Ordering;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// A Kubernetes quantity inside CEL.
#[derive(Debug, PartialEq, Eq)]
struct Qty(Quantity);

impl Opaque for Qty {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.Quantity"
    }
}

/// A semantic version inside CEL.
#[derive(Debug, PartialEq, Eq)]
pub struct Semver {
    major: u64,
    minor: u64,
    patch: u64,
    pre: Vec<String>,
}

impl Opaque for Semver {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.Semver"
    }
}

impl Semver {
    /// Strict semver 2.0: `MAJOR.MINOR.PATCH[-pre][+build]`.
    pub fn parse(s: &str) -> Option<Semver> {
        let s = s.split_once('+').map_or(s, |(v, _)| v);
        let (core, pre) = match s.split_once('-') {
            Some((c, p)) => (c, p.split('.').map(str::to_string).collect()),
            None => (s, Vec::new()),
        };
        let mut parts = core.split('.');
        let mut num = || -> Option<u64> {
            let p = parts.next()?;
            if p.is_empty() || (p.len() > 1 && p.starts_with('0')) {
                return None;
            }
            p.parse().ok()
        };
        let v = Semver {
            major: num()?,
            minor: num()?,
            patch: num()?,
            pre,
        };
        parts.next().is_none().then_some(v)
    }

    /// Semver precedence: numbers, then a pre-release before the release,
    /// pre-release identifiers numerically or lexically.
    pub fn precedence(&self, o: &Semver) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(o.major, o.minor, o.patch))
            .then_with(|| match (self.pre.is_empty(), o.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => {
                    for (a, b) in self.pre.iter().zip(&o.pre) {
                        let c = match (a.parse::<u64>(), b.parse::<u64>()) {
                            (Ok(x), Ok(y)) => x.cmp(&y),
                            (Ok(_), Err(_)) => Ordering::Less,
                            (Err(_), Ok(_)) => Ordering::Greater,
                            (Err(_), Err(_)) => a.cmp(b),
                        };
                        if c != Ordering::Equal {
                            return c;
                        }
                    }
                    self.pre.len().cmp(&o.pre.len())
                }
            })
    }
}

type R = Result<Value, ExecutionError>;

fn qty(v: &Value) -> Option<Quantity> {
    match v {
        Value::Opaque(o) => o.downcast_ref::<Qty>().map(|q| q.0),
        Value::Int(i) => Some(Quantity::from_units(*i)),
        _ => None,
    }
}

fn semver(v: &Value) -> Option<&Semver> {
    match v {
        Value::Opaque(o) => o.downcast_ref::<Semver>(),
        _ => None,
    }
}

fn compare(f: &str, a: &Value, b: &Value) -> Result<Ordering, ExecutionError> {
    if let (Some(x), Some(y)) = (semver(a), semver(b)) {
        return Ok(x.precedence(y));
    }
    match (a, b) {
        (Value::Opaque(_), Value::Opaque(_)) => match (qty(a), qty(b)) {
            (Some(x), Some(y)) => Ok(x.cmp(&y)),
            _ => Err(ExecutionError::function_error(f, "no such overload")),
        },
        _ => Err(ExecutionError::function_error(f, "no such overload")),
    }
}

fn quantity_of(f: &str, v: &Value) -> Result<Quantity, ExecutionError> {
    qty(v).ok_or_else(|| ExecutionError::function_error(f, "no such overload"))
}

const NANOS: i128 = 1_000_000_000;

/// A quantity in nano-units, to milli precision (the SDK's quantity
/// exposes its value rounded up to thousandths).
fn nanos(q: Quantity) -> i128 {
    q.milli_value() as i128 * 1_000_000
}

/// The root context every evaluation starts from: the standard library,
/// optional syntax, the string and list extensions and Kubernetes'
/// quantity and semver functions.
pub fn context() -> Context<'static, 'static> {
    let mut env = Env::stdlib().with_optional_support(true);
    let _ = env.add_extension(cel::extensions::strings);
    let _ = env.add_extension(cel::extensions::lists);
    let mut ctx = Context::with_env(Arc::new(env));
    let _ = ctx.add_function("quantity", |s: Arc<String>| -> R {
        Quantity::parse(&s)
            .map(|q| Value::Opaque(Arc::new(Qty(q))))
            .map_err(|e| ExecutionError::function_error("quantity", e))
    });
    let _ = ctx.add_function("isQuantity", |s: Arc<String>| -> bool {
        Quantity::parse(&s).is_ok()
    });
    let _ = ctx.add_function("semver", |s: Arc<String>| -> R {
        Semver::parse(&s)
            .map(|v| Value::Opaque(Arc::new(v)))
            .ok_or_else(|| ExecutionError::function_error("semver", "invalid semver"))
    });
    let _ = ctx.add_function("isSemver", |s: Arc<String>| -> bool {
        Semver::parse(&s).is_some()
    });
    let _ = ctx.add_function("compareTo", |This(a): This<Value>, b: Value| -> R {
        Ok(Value::Int(compare("compareTo", &a, &b)? as i64))
    });
    let _ = ctx.add_function("isLessThan", |This(a): This<Value>, b: Value| -> R {
        Ok(Value::Bool(
            compare("isLessThan", &a, &b)? == Ordering::Less,
        ))
    });
    let _ = ctx.add_function("isGreaterThan", |This(a): This<Value>, b: Value| -> R {
        Ok(Value::Bool(
            compare("isGreaterThan", &a, &b)? == Ordering::Greater,
        ))
    });
    let _ = ctx.add_function("add", |This(a): This<Value>, b: Value| -> R {
        let q = quantity_of("add", &a)?.saturating_add(quantity_of("add", &b)?);
        Ok(Value::Opaque(Arc::new(Qty(q))))
    });
    let _ = ctx.add_function("sub", |This(a): This<Value>, b: Value| -> R {
        let a = quantity_of("sub", &a)?;
        let b = quantity_of("sub", &b)?;
        let diff = Quantity::parse(&format!("{}n", nanos(a) - nanos(b)))
            .map_err(|e| ExecutionError::function_error("sub", e))?;
        Ok(Value::Opaque(Arc::new(Qty(diff))))
    });
    let _ = ctx.add_function("sign", |This(a): This<Value>| -> R {
        Ok(Value::Int(
            quantity_of("sign", &a)?.cmp(&Quantity::ZERO) as i64
        ))
    });
    let _ = ctx.add_function("isInteger", |This(a): This<Value>| -> R {
        Ok(Value::Bool(
            nanos(quantity_of("isInteger", &a)?) % NANOS == 0,
        ))
    });
    let _ = ctx.add_function("asInteger", |This(a): This<Value>| -> R {
        let n = nanos(quantity_of("asInteger", &a)?);
        if n % NANOS != 0 || (n / NANOS) > i64::MAX as i128 {
            return Err(ExecutionError::function_error(
                "asInteger",
                "cannot convert value to integer",
            ));
        }
        Ok(Value::Int((n / NANOS) as i64))
    });
    let _ = ctx.add_function("asApproximateFloat", |This(a): This<Value>| -> R {
        Ok(Value::Float(
            nanos(quantity_of("asApproximateFloat", &a)?) as f64 / NANOS as f64,
        ))
    });
    for (name, part) in [("major", 0usize), ("minor", 1), ("patch", 2)] {
        let _ = ctx.add_function(name, move |This(a): This<Value>| -> R {
            let v = semver(&a)
                .ok_or_else(|| ExecutionError::function_error(name, "no such overload"))?;
            Ok(Value::Int([v.major, v.minor, v.patch][part] as i64))
        });
    }
    ctx
}

/// A compiled selector: the program, or the compile error's text.
pub struct Selector {
    pub program: Result<Program, String>,
}

impl Selector {
    pub fn compile(expression: &str) -> Selector {
        let env = Env::stdlib().with_optional_support(true);
        Selector {
            program: env.compile(expression).map_err(|e| e.to_string()),
        }
    }
}

/// Why a selector did not give an answer.
pub enum EvalError {
    Compile(String),
    Runtime(String),
}

/// The string literals of expressions, candidates for attribute domains.
pub fn string_literals(expression: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut chars = expression.chars();
    while let Some(c) = chars.next() {
        if c == '"' || c == '\'' {
            let mut s = String::new();
            for d in chars.by_ref() {
                if d == c {
                    break;
                }
                s.push(d);
            }
            out.insert(s);
        }
    }
    out
}

fn key(s: &str) -> Key {
    Key::String(Arc::new(s.to_string()))
}

fn attr_value(a: &Attr) -> Option<Value> {
    Some(match a {
        Attr::Int(i) => Value::Int(*i),
        Attr::Bool(b) => Value::Bool(*b),
        Attr::Str(s) => Value::String(Arc::new(s.clone())),
        Attr::Version(v) => match Semver::parse(v) {
            Some(s) => Value::Opaque(Arc::new(s)),
            None => Value::String(Arc::new(v.clone())),
        },
        Attr::Unsupported => return None,
    })
}

/// The `device` variable, or the error of an unsupported attribute.
pub fn device_value(d: &Device, domains: &BTreeSet<String>) -> Result<Value, String> {
    let mut attributes: HashMap<Key, HashMap<Key, Value>> = domains
        .iter()
        .map(|dom| (key(dom), HashMap::new()))
        .collect();
    for ((domain, id), a) in &d.attributes {
        let v = attr_value(a)
            .ok_or_else(|| format!("attribute {domain}/{id}: unsupported attribute value"))?;
        attributes
            .entry(key(domain))
            .or_default()
            .insert(key(id), v);
    }
    let mut capacity: HashMap<Key, HashMap<Key, Value>> = domains
        .iter()
        .map(|dom| (key(dom), HashMap::new()))
        .collect();
    for ((domain, id), q) in &d.capacity {
        capacity
            .entry(key(domain))
            .or_default()
            .insert(key(id), Value::Opaque(Arc::new(Qty(*q))));
    }
    let nested = |m: HashMap<Key, HashMap<Key, Value>>| -> Value {
        Value::Map(Map {
            map: Arc::new(
                m.into_iter()
                    .map(|(k, v)| (k, Value::Map(Map { map: Arc::new(v) })))
                    .collect(),
            ),
        })
    };
    let device: HashMap<Key, Value> = [
        (key("driver"), Value::String(Arc::new(d.driver.clone()))),
        (
            key("allowMultipleAllocations"),
            Value::Bool(d.allow_multiple),
        ),
        (key("attributes"), nested(attributes)),
        (key("capacity"), nested(capacity)),
    ]
    .into();
    Ok(Value::Map(Map {
        map: Arc::new(device),
    }))
}

/// Evaluates a selector against a device value.
pub fn eval(root: &Context, s: &Selector, device: &Value) -> Result<bool, EvalError> {
    let program = s
        .program
        .as_ref()
        .map_err(|e| EvalError::Compile(e.clone()))?;
    let mut ctx = root.new_inner_scope();
    ctx.add_variable_from_value("device", device.clone());
    match program.execute(&ctx) {
        Ok(Value::Bool(b)) => Ok(b),
        Ok(other) => Err(EvalError::Runtime(format!(
            "expression must evaluate to bool, got {other:?}"
        ))),
        Err(ExecutionError::NoSuchKey(k)) => Err(EvalError::Runtime(format!("no such key: {k}"))),
        Err(e) => Err(EvalError::Runtime(e.to_string())),
    }
}
