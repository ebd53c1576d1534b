//! `account power`: on, off or release of an instance linked to a provider account, through the
//! provider route ([`super::api`]) and its one confirmation loop. The ledger records the change
//! only once the provider confirms it (off: it reports the instance stopped; on: running;
//! release: it no longer has it) — an accepted request is not a stopped meter.

use std::time::Instant;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::account::{AccountError, Backoff, Endpoints, PowerVerb, Provider};
use crate::billing::{ledger, InstanceState, PowerAction};
use crate::clock::Clock;
use crate::store::accounts as repo;
use crate::store::Store;

use super::api::ProviderRoute;
use super::instance::Resolved;
use super::{StopError, StopWait};

/// A confirmed power change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct PowerReport {
    pub instance: String,
    pub provider: Provider,
    pub verb: PowerVerb,
    /// When the ledger recorded it (`null` when the ledger already said so).
    pub recorded_at: Option<DateTime<Utc>>,
    #[ts(type = "number")]
    pub waited_seconds: u64,
}

/// The ledger's event for a confirmed verb.
pub fn ledger_action(verb: PowerVerb) -> PowerAction {
    match verb {
        PowerVerb::On => PowerAction::Start,
        PowerVerb::Off => PowerAction::Stop,
        PowerVerb::Release => PowerAction::Release,
    }
}

fn already(verb: PowerVerb, state: Option<InstanceState>) -> bool {
    matches!(
        (verb, state),
        (PowerVerb::On, Some(InstanceState::Running))
            | (PowerVerb::Off, Some(InstanceState::Stopped))
            | (_, Some(InstanceState::Released))
    )
}

/// Power `name` on, off or release it through its linked account's API, wait until the
/// provider confirms, then record it. A release needs the release checklist first: the latest
/// check on this laptop must not be blocked.
pub async fn power(
    store: &Store,
    name: &str,
    verb: PowerVerb,
    endpoints: &Endpoints,
    backoff: Backoff,
    wait: StopWait,
    clock: &dyn Clock,
) -> Result<PowerReport, StopError> {
    let resolved = Resolved::resolve(store, name, clock.now()).await?;
    let route = ProviderRoute::linked(&resolved, verb)?;
    if verb == PowerVerb::Release {
        release_allowed(store, name).await?;
    }
    let started = Instant::now();
    route
        .power(endpoints, verb, backoff, wait, started, clock)
        .await
        .map_err(|outcome| route.unconfirmed_power(outcome))?;
    let now = clock.now();
    let recorded_at = if already(verb, resolved.state()) {
        None
    } else {
        ledger::record(store, name, ledger_action(verb), now).await?;
        Some(now)
    };
    seen(store, &resolved, verb, now).await?;
    Ok(PowerReport {
        instance: resolved.name.clone(),
        provider: route.provider,
        verb,
        recorded_at,
        waited_seconds: started.elapsed().as_secs(),
    })
}

/// Keep on the link what the provider confirmed, as a sync would have seen it.
pub(super) async fn seen(
    store: &Store,
    resolved: &Resolved,
    verb: PowerVerb,
    now: DateTime<Utc>,
) -> Result<(), StopError> {
    let mut tx = store.write().await?;
    repo::update_seen(
        &mut tx,
        resolved.instance_id,
        verb.confirmed_by().as_str(),
        now,
        None,
    )
    .await?;
    tx.commit().await.map_err(crate::store::StoreError::from)?;
    Ok(())
}

async fn release_allowed(store: &Store, name: &str) -> Result<(), AccountError> {
    let blocked = |why: String| AccountError::ReleaseBlocked {
        name: name.to_owned(),
        blocked: why,
    };
    match crate::release::latest_check(store, name).await {
        Ok(Some(check)) if !check.blocked => Ok(()),
        Ok(Some(check)) => Err(blocked(crate::release::blocking(&check.checks).join(", "))),
        Ok(None) => Err(blocked("no release check has been run".to_owned())),
        Err(err) => Err(blocked(err.to_string())),
    }
}
