//! Leader election over a `coordination.k8s.io/v1` Lease, as client-go's
//! `tools/leaderelection` does it for kube-scheduler (and Volcano):
//!
//! - A candidate reads the Lease every `retry_period` (jittered ×1.2). It
//!   takes it when it is missing, released (no holder), or not renewed
//!   for `lease_duration` as measured by the candidate's own clock since
//!   it last saw the record change (clocks of different machines are
//!   never compared). Taking and renewing are an update with the
//!   resourceVersion read: of two candidates, the API server lets one
//!   win and answers 409 to the other.
//! - The leader renews every `retry_period`; if no renewal succeeds for
//!   `renew_deadline` it has lost, and stops scheduling at once (the
//!   caller exits, as kube-scheduler does, and is restarted).
//! - On shutdown the leader releases the Lease (`ReleaseOnCancel`: no
//!   holder, a 1-second duration) so a standby takes over at once.
//!
//! Why not a crate: kube-lease-manager (the maintained one for kube 5)
//! renews by server-side apply with its own duration-and-grace model,
//! not client-go's lease/renew-deadline/retry triple whose defaults
//! (15 s/10 s/2 s) operators know; kube-leader-election targets kube 4.
//! The protocol is one GET and one PUT, written out here.

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::PostParams;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// kube-scheduler's `leaderElection` settings.
#[derive(Clone, Debug)]
pub struct Election {
    pub namespace: String,
    pub name: String,
    /// `<hostname>_<random>`, unique per process.
    pub identity: String,
    pub lease_duration: Duration,
    pub renew_deadline: Duration,
    pub retry_period: Duration,
}

/// What the last read of the Lease showed, and when this process saw it
/// change.
struct Observed {
    holder: String,
    renew: Option<String>,
    resource_version: Option<String>,
    at: Instant,
}

/// Runs the election for as long as the process runs: `leading` is set
/// while this process holds the Lease; `lost` is called once if it loses
/// it after holding it. Returns when `stop` is set (releasing the Lease if
/// held).
pub async fn run(
    client: kube::Client,
    election: Election,
    leading: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    lost: impl FnOnce(),
) {
    let api: kube::Api<Lease> = kube::Api::namespaced(client, &election.namespace);
    let mut observed: Option<Observed> = None;
    // Acquire.
    loop {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        match try_acquire_or_renew(&api, &election, &mut observed).await {
            Ok(true) => break,
            Ok(false) => {}
            Err(e) => tracing::warn!(
                "leader election: cannot read or write lease {}/{}: {e}",
                election.namespace,
                election.name
            ),
        }
        tokio::time::sleep(jittered(election.retry_period)).await;
    }
    leading.store(true, Ordering::SeqCst);
    tracing::info!(
        identity = %election.identity,
        "leader election: became leader (lease {}/{})",
        election.namespace,
        election.name
    );
    // Renew.
    let mut last_renew = Instant::now();
    loop {
        tokio::time::sleep(election.retry_period).await;
        if stop.load(Ordering::SeqCst) {
            release(&api, &election).await;
            leading.store(false, Ordering::SeqCst);
            return;
        }
        let attempt = tokio::time::timeout(
            election.renew_deadline.saturating_sub(last_renew.elapsed()),
            try_acquire_or_renew(&api, &election, &mut observed),
        )
        .await;
        match attempt {
            Ok(Ok(true)) => last_renew = Instant::now(),
            Ok(Ok(false)) => {
                // Another holder: lost at once.
                break;
            }
            Ok(Err(e)) => {
                tracing::warn!("leader election: cannot renew: {e}");
                if last_renew.elapsed() >= election.renew_deadline {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    leading.store(false, Ordering::SeqCst);
    tracing::error!(
        "leader election lost: lease {}/{} not renewed within {:?}",
        election.namespace,
        election.name,
        election.renew_deadline
    );
    lost();
}

fn jittered(d: Duration) -> Duration {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    d + d.mul_f64(0.2 * f64::from(nanos % 1000) / 1000.0)
}

fn now_micro() -> MicroTime {
    MicroTime(jiff::Timestamp::now())
}

/// One round: take or renew the Lease; `Ok(false)` when another holder's
/// lease is still valid or the write lost a race.
async fn try_acquire_or_renew(
    api: &kube::Api<Lease>,
    election: &Election,
    observed: &mut Option<Observed>,
) -> Result<bool, String> {
    let seconds = election.lease_duration.as_secs().max(1) as i32;
    let current = api
        .get_opt(&election.name)
        .await
        .map_err(|e| e.to_string())?;
    let Some(mut lease) = current else {
        let lease = Lease {
            metadata: kube::api::ObjectMeta {
                name: Some(election.name.clone()),
                namespace: Some(election.namespace.clone()),
                ..Default::default()
            },
            spec: Some(LeaseSpec {
                holder_identity: Some(election.identity.clone()),
                lease_duration_seconds: Some(seconds),
                acquire_time: Some(now_micro()),
                renew_time: Some(now_micro()),
                lease_transitions: Some(0),
                ..Default::default()
            }),
        };
        return match api.create(&PostParams::default(), &lease).await {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
            Err(e) => Err(e.to_string()),
        };
    };
    let spec = lease.spec.clone().unwrap_or_default();
    let holder = spec.holder_identity.clone().unwrap_or_default();
    let renew = spec.renew_time.as_ref().map(|t| t.0.to_string());
    let rv = lease.metadata.resource_version.clone();
    let changed = observed
        .as_ref()
        .is_none_or(|o| o.holder != holder || o.renew != renew || o.resource_version != rv);
    if changed {
        *observed = Some(Observed {
            holder: holder.clone(),
            renew,
            resource_version: rv,
            at: Instant::now(),
        });
    }
    let held_by_other = !holder.is_empty() && holder != election.identity;
    let duration = spec
        .lease_duration_seconds
        .map_or(election.lease_duration, |s| {
            Duration::from_secs(s.max(0) as u64)
        });
    if held_by_other && observed.as_ref().is_some_and(|o| o.at.elapsed() < duration) {
        return Ok(false);
    }
    let mut new_spec = spec.clone();
    if holder != election.identity {
        new_spec.acquire_time = Some(now_micro());
        new_spec.lease_transitions =
            Some(spec.lease_transitions.unwrap_or(0) + i32::from(!holder.is_empty()));
    }
    new_spec.holder_identity = Some(election.identity.clone());
    new_spec.lease_duration_seconds = Some(seconds);
    new_spec.renew_time = Some(now_micro());
    lease.spec = Some(new_spec);
    match api
        .replace(&election.name, &PostParams::default(), &lease)
        .await
    {
        Ok(written) => {
            *observed = Some(Observed {
                holder: election.identity.clone(),
                renew: written
                    .spec
                    .as_ref()
                    .and_then(|s| s.renew_time.as_ref())
                    .map(|t| t.0.to_string()),
                resource_version: written.metadata.resource_version.clone(),
                at: Instant::now(),
            });
            Ok(true)
        }
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
        Err(e) => Err(e.to_string()),
    }
}

/// Gives the Lease up: no holder and a 1-second duration, so a standby
/// takes it at its next try.
async fn release(api: &kube::Api<Lease>, election: &Election) {
    let Ok(Some(mut lease)) = api.get_opt(&election.name).await else {
        return;
    };
    let Some(spec) = lease.spec.as_mut() else {
        return;
    };
    if spec.holder_identity.as_deref() != Some(election.identity.as_str()) {
        return;
    }
    spec.holder_identity = None;
    spec.lease_duration_seconds = Some(1);
    spec.renew_time = Some(now_micro());
    match api
        .replace(&election.name, &PostParams::default(), &lease)
        .await
    {
        Ok(_) => tracing::info!("leader election: lease released"),
        Err(e) => tracing::warn!("leader election: cannot release the lease: {e}"),
    }
}
