//! The `extenders:` stanza, as KubeSchedulerConfiguration (v1) spells it:
//! HTTP services kube-scheduler calls after its filters (`filterVerb`) and
//! beside its score plugins (`prioritizeVerb`).
//!
//! ```yaml
//! extenders:
//!   - urlPrefix: http://127.0.0.1:8888/scheduler
//!     filterVerb: filter
//!     prioritizeVerb: prioritize
//!     weight: 2                 # required (> 0) with prioritizeVerb
//!     nodeCacheCapable: false   # false: send node objects; true: names
//!     ignorable: true           # an error skips it instead of failing the pod
//!     httpTimeout: 5s           # default 5s (kube-scheduler's)
//!     maxReplyBytes: 64Mi       # sift's own; default: the request's size + 16Mi
//!     managedResources:         # called only for pods asking for one
//!       - {name: example.com/gpu, ignoredByScheduler: true}
//! ```

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// kube-scheduler's `DefaultExtenderTimeout`.
pub const DEFAULT_EXTENDER_TIMEOUT: Duration = Duration::from_secs(5);

/// One entry of `extenders:`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExtenderConfig {
    pub url_prefix: String,
    #[serde(default)]
    pub filter_verb: String,
    #[serde(default)]
    pub prioritize_verb: String,
    /// Accepted; sift does not call it (its preemption is its own).
    #[serde(default)]
    pub preempt_verb: String,
    /// Accepted; sift never binds (a simulation assumes).
    #[serde(default)]
    pub bind_verb: String,
    #[serde(default)]
    pub weight: i64,
    /// Accepted: the scheme of `urlPrefix` decides (sift speaks http).
    #[serde(rename = "enableHTTPS", default)]
    pub enable_https: bool,
    /// Accepted, not used: sift speaks http only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_config: Option<serde_json::Value>,
    /// A Go duration ("5s", "1m30s"); unset or 0: 5s.
    #[serde(
        rename = "httpTimeout",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub http_timeout: Option<String>,
    #[serde(default)]
    pub node_cache_capable: bool,
    #[serde(default)]
    pub managed_resources: Vec<ManagedResource>,
    #[serde(default)]
    pub ignorable: bool,
    /// sift's own: the largest reply read, as a quantity ("64Mi"). Unset:
    /// the request's size plus [`DEFAULT_REPLY_ALLOWANCE`], since a filter
    /// reply holds a subset of the nodes sent plus their failure reasons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_reply_bytes: Option<String>,
}

/// What a reply may hold beyond the request's own size when
/// `maxReplyBytes` is unset: room for a failure reason per node of a large
/// cluster.
pub const DEFAULT_REPLY_ALLOWANCE: u64 = 16 << 20;

/// `ExtenderManagedResource`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ManagedResource {
    pub name: String,
    /// NodeResourcesFit then ignores it (kube-scheduler's
    /// `ignoredByScheduler`).
    #[serde(default)]
    pub ignored_by_scheduler: bool,
}

impl ExtenderConfig {
    /// `maxReplyBytes`, if set.
    pub fn max_reply_bytes(&self) -> Result<Option<u64>> {
        let Some(text) = &self.max_reply_bytes else {
            return Ok(None);
        };
        let q = sift_sdk::Quantity::parse(text).map_err(|e| anyhow::anyhow!("{text:?}: {e}"))?;
        if q.value() < 1024 {
            bail!("{text:?} is below 1Ki: no reply would fit");
        }
        Ok(Some(q.value() as u64))
    }

    /// `httpTimeout`, defaulted.
    pub fn timeout(&self) -> Result<Duration> {
        match self.http_timeout.as_deref() {
            None => Ok(DEFAULT_EXTENDER_TIMEOUT),
            Some(s) => {
                let d = parse_go_duration(s)?;
                Ok(if d.is_zero() {
                    DEFAULT_EXTENDER_TIMEOUT
                } else {
                    d
                })
            }
        }
    }
}

/// kube-scheduler's `validateExtenders`, with its messages, plus what sift
/// needs: a usable `http://` prefix and timeout.
pub fn check_extenders(extenders: &[ExtenderConfig]) -> Result<()> {
    let mut binders = 0;
    let mut managed = std::collections::BTreeSet::new();
    for (i, e) in extenders.iter().enumerate() {
        let at = format!("extenders[{i}]");
        if !e.prioritize_verb.is_empty() && e.weight <= 0 {
            bail!(
                "{at}.weight: Invalid value: {}: must have a positive weight applied to it",
                e.weight
            );
        }
        if !e.bind_verb.is_empty() {
            binders += 1;
        }
        for (j, r) in e.managed_resources.iter().enumerate() {
            if !sift_sdk::resources::is_extended_resource_name(&r.name) {
                bail!(
                    "{at}.managedResources[{j}].name: Invalid value: {:?}: is an invalid extended resource name",
                    r.name
                );
            }
            if !managed.insert(r.name.as_str()) {
                bail!(
                    "{at}.managedResources[{j}].name: Invalid value: {:?}: duplicate extender managed resource name",
                    r.name
                );
            }
        }
        if !e.url_prefix.starts_with("http://") {
            bail!(
                "{at}.urlPrefix: {:?}: sift calls extenders over http:// only",
                e.url_prefix
            );
        }
        if let Err(err) = e.timeout() {
            bail!("{at}.httpTimeout: {err:#}");
        }
        if let Err(err) = e.max_reply_bytes() {
            bail!("{at}.maxReplyBytes: {err:#}");
        }
    }
    if binders > 1 {
        bail!(
            "extenders: Invalid value: \"found {binders} extenders implementing bind\": only one extender can implement bind"
        );
    }
    Ok(())
}

/// Extended resources the extenders manage with `ignoredByScheduler`:
/// kube-scheduler makes them NodeResourcesFit's `ignoredResources`.
pub fn ignored_by_scheduler(extenders: &[ExtenderConfig]) -> Vec<String> {
    extenders
        .iter()
        .flat_map(|e| &e.managed_resources)
        .filter(|r| r.ignored_by_scheduler)
        .map(|r| r.name.clone())
        .collect()
}

/// A Go `time.Duration` string: numbers with units ns, us, µs, ms, s, m,
/// h, e.g. "1m30s", "250ms", "0".
pub fn parse_go_duration(s: &str) -> Result<Duration> {
    let text = s.trim();
    if text == "0" {
        return Ok(Duration::ZERO);
    }
    let mut rest = text;
    let mut secs = 0.0f64;
    if rest.is_empty() {
        bail!("{s:?} is not a duration like 5s or 1m30s");
    }
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (num, tail) = rest.split_at(num_end);
        let unit_end = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, next) = tail.split_at(unit_end);
        let n: f64 = num
            .parse()
            .map_err(|_| anyhow::anyhow!("{s:?} is not a duration like 5s or 1m30s"))?;
        let scale = match unit {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => bail!("{s:?}: unknown unit {unit:?} (ns, us, ms, s, m, h)"),
        };
        secs += n * scale;
        rest = next;
    }
    if !(0.0..=86_400.0).contains(&secs) {
        bail!("{s:?} is out of range");
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext(yaml: &str) -> Vec<ExtenderConfig> {
        serde_saphyr::from_str_with_options(yaml, crate::input::yaml::options()).unwrap()
    }

    #[test]
    fn validation_messages_are_upstream_s() {
        let bad_weight = ext("[{urlPrefix: 'http://a', prioritizeVerb: p, weight: -2}]");
        assert_eq!(
            check_extenders(&bad_weight).unwrap_err().to_string(),
            "extenders[0].weight: Invalid value: -2: must have a positive weight applied to it"
        );
        let two_binders =
            ext("[{urlPrefix: 'http://a', bindVerb: b}, {urlPrefix: 'http://b', bindVerb: b}]");
        assert!(
            check_extenders(&two_binders)
                .unwrap_err()
                .to_string()
                .contains("only one extender can implement bind")
        );
        let dup = ext(
            "[{urlPrefix: 'http://a', managedResources: [{name: example.com/x}]}, {urlPrefix: 'http://b', managedResources: [{name: example.com/x}]}]",
        );
        assert!(
            check_extenders(&dup)
                .unwrap_err()
                .to_string()
                .contains("duplicate extender managed resource name")
        );
        let native = ext("[{urlPrefix: 'http://a', managedResources: [{name: cpu}]}]");
        assert!(check_extenders(&native).is_err());
        let https = ext("[{urlPrefix: 'https://a', filterVerb: f}]");
        assert!(
            check_extenders(&https)
                .unwrap_err()
                .to_string()
                .contains("http://")
        );
        let ok = ext(
            "[{urlPrefix: 'http://a', filterVerb: f, prioritizeVerb: p, weight: 1, httpTimeout: 1m30s, managedResources: [{name: example.com/x, ignoredByScheduler: true}]}]",
        );
        check_extenders(&ok).unwrap();
        assert_eq!(ok[0].timeout().unwrap(), Duration::from_secs(90));
        assert_eq!(ignored_by_scheduler(&ok), ["example.com/x"]);
        assert_eq!(
            ext("[{urlPrefix: 'http://a'}]")[0].timeout().unwrap(),
            DEFAULT_EXTENDER_TIMEOUT
        );
    }

    #[test]
    fn go_durations() {
        assert_eq!(
            parse_go_duration("250ms").unwrap(),
            Duration::from_millis(250)
        );
        assert_eq!(
            parse_go_duration("1h1s").unwrap(),
            Duration::from_secs(3601)
        );
        assert_eq!(parse_go_duration("0s").unwrap(), Duration::ZERO);
        assert!(parse_go_duration("5").is_err());
        assert!(parse_go_duration("5d").is_err());
        assert!(parse_go_duration("").is_err());
    }
}
