//! Power through the provider's API: on, off, release. The ledger records the change only once
//! the provider confirms it (off: it reports the instance stopped; on: running; release: it no
//! longer lists it, or says terminated) — an accepted request is not a stopped meter.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::remote::{PowerVerb, RemoteState};
use super::{client, key_of, AccountError, AccountRef, Backoff, Endpoints, Provider};
use crate::billing::{ledger, InstanceState, PowerAction};
use crate::clock::Clock;
use crate::stop::StopWait;
use crate::store::accounts as repo;
use crate::store::Store;

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

/// Which account and provider id an instance is linked to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct InstanceLink {
    pub instance: String,
    pub account: AccountRef,
    pub remote_id: String,
    pub remote_state: Option<RemoteState>,
    pub seen_at: DateTime<Utc>,
    /// Recorded by a sync (nobody had recorded it).
    pub imported: bool,
    /// False while an imported instance waits to be named or kept.
    pub acknowledged: bool,
    /// Where the ledger disagreed with the provider.
    pub note: Option<String>,
    /// The power changes the API offers for it now.
    pub verbs: Vec<PowerVerb>,
}

/// The link of `name`, if it has one.
pub async fn link_of(store: &Store, name: &str) -> Result<Option<InstanceLink>, AccountError> {
    let mut conn = store
        .pool()
        .acquire()
        .await
        .map_err(crate::store::StoreError::from)?;
    let Some(row) = crate::store::ledger::find_instance(&mut conn, name).await? else {
        return Err(AccountError::Billing(
            crate::billing::BillingError::UnknownInstance {
                name: name.to_owned(),
            },
        ));
    };
    let Some(link) = repo::link_of_instance(&mut conn, row.id).await? else {
        return Ok(None);
    };
    let Some(account) = repo::account_by_id(&mut conn, link.account_id).await? else {
        return Ok(None);
    };
    let provider = Provider::parse(&account.provider)?;
    let remote_state = RemoteState::parse(&link.remote_state);
    Ok(Some(InstanceLink {
        instance: link.name,
        account: AccountRef {
            provider,
            label: account.label,
        },
        remote_id: link.remote_id,
        remote_state,
        seen_at: link.seen_at,
        imported: link.imported,
        acknowledged: link.acknowledged,
        note: link.note,
        verbs: verbs_now(provider, remote_state),
    }))
}

/// The link of `name` when its account can `verb` it now: linked, the provider offers the
/// verb, the last sync still saw it, and the account's key is at hand (keychain or its
/// environment variable). Stop leads with this route when it holds.
pub async fn ready_for(
    store: &Store,
    name: &str,
    verb: PowerVerb,
) -> Result<Option<InstanceLink>, AccountError> {
    let Some(link) = link_of(store, name).await? else {
        return Ok(None);
    };
    if !link.account.provider.verbs().contains(&verb)
        || link.remote_state == Some(RemoteState::Gone)
    {
        return Ok(None);
    }
    Ok(account_key(store, &link.account)
        .await
        .is_ok()
        .then_some(link))
}

async fn account_key(
    store: &Store,
    account: &AccountRef,
) -> Result<crate::ssh::Secret, AccountError> {
    let key_env = {
        let mut conn = store
            .pool()
            .acquire()
            .await
            .map_err(crate::store::StoreError::from)?;
        super::row_of(&mut conn, account).await?.key_env
    };
    key_of(account, key_env.as_deref())
}

/// How the provider sees `name` right now, through its linked account: `None` when it no
/// longer lists it. What Stop's look after a hand-recorded stop asks when the instance is
/// linked (`NotLinked` otherwise).
pub async fn state_now(
    store: &Store,
    name: &str,
    endpoints: &Endpoints,
    now: DateTime<Utc>,
) -> Result<Option<RemoteState>, AccountError> {
    let link = link_of(store, name)
        .await?
        .ok_or_else(|| AccountError::NotLinked {
            name: name.to_owned(),
        })?;
    let key = account_key(store, &link.account).await?;
    let api = client::api(link.account.provider, endpoints, key, Backoff::default())?;
    Ok(client::one(&api, &link.remote_id, now)
        .await?
        .map(|remote| remote.state))
}

/// What makes sense from the state the last sync saw.
fn verbs_now(provider: Provider, state: Option<RemoteState>) -> Vec<PowerVerb> {
    provider
        .verbs()
        .iter()
        .copied()
        .filter(|verb| {
            !matches!(
                (verb, state),
                (_, Some(RemoteState::Gone))
                    | (PowerVerb::On, Some(RemoteState::Running))
                    | (PowerVerb::Off, Some(RemoteState::Stopped))
            )
        })
        .collect()
}

/// The imported instance was named or kept: it no longer asks.
pub async fn acknowledge(store: &Store, name: &str) -> Result<(), AccountError> {
    let mut tx = store.write().await?;
    let row = crate::store::ledger::find_instance(&mut tx, name)
        .await?
        .ok_or_else(|| AccountError::NotLinked {
            name: name.to_owned(),
        })?;
    if !repo::acknowledge(&mut tx, row.id).await? {
        return Err(AccountError::NotLinked {
            name: name.to_owned(),
        });
    }
    tx.commit().await.map_err(crate::store::StoreError::from)?;
    Ok(())
}

fn ledger_action(verb: PowerVerb) -> PowerAction {
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

/// Power `name` on, off or release it through its provider's API, wait until the provider
/// confirms, then record it. A release needs the release checklist first: the latest check on
/// this laptop must not be blocked.
pub async fn power(
    store: &Store,
    name: &str,
    verb: PowerVerb,
    endpoints: &Endpoints,
    backoff: Backoff,
    wait: StopWait,
    clock: &dyn Clock,
) -> Result<PowerReport, AccountError> {
    let link = link_of(store, name)
        .await?
        .ok_or_else(|| AccountError::NotLinked {
            name: name.to_owned(),
        })?;
    let provider = link.account.provider;
    if !provider.verbs().contains(&verb) {
        return Err(AccountError::ActionUnsupported {
            provider: provider.display(),
            action: verb.as_str(),
            hint: ": Lambda instances cannot be stopped, only terminated (released)",
        });
    }
    if verb == PowerVerb::Release {
        release_allowed(store, name).await?;
    }
    let key = account_key(store, &link.account).await?;
    let api = client::api(provider, endpoints, key, backoff)?;
    let started = Instant::now();
    client::power(&api, &link.remote_id, verb).await?;
    confirm(&api, &link.remote_id, verb, wait, started, clock).await?;
    let now = clock.now();
    let state = ledger::show(store, name, now).await?.summary.state;
    let recorded_at = if already(verb, state) {
        None
    } else {
        ledger::record(store, name, ledger_action(verb), now).await?;
        Some(now)
    };
    let mut tx = store.write().await?;
    if let Some(row) = crate::store::ledger::find_instance(&mut tx, name).await? {
        repo::update_seen(&mut tx, row.id, verb.confirmed_by().as_str(), now, None).await?;
    }
    tx.commit().await.map_err(crate::store::StoreError::from)?;
    Ok(PowerReport {
        instance: name.to_owned(),
        provider,
        verb,
        recorded_at,
        waited_seconds: started.elapsed().as_secs(),
    })
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

/// Ask until the provider reports the state that confirms `verb`; a look that fails is asked
/// again, a refused key is final.
async fn confirm(
    api: &super::http::Api,
    id: &str,
    verb: PowerVerb,
    wait: StopWait,
    started: Instant,
    clock: &dyn Clock,
) -> Result<(), AccountError> {
    tokio::time::sleep(Duration::from_millis(200).min(wait.every)).await;
    loop {
        let last = match client::one(api, id, clock.now()).await {
            Ok(None) if verb == PowerVerb::Release => return Ok(()),
            Ok(Some(remote)) if remote.state == verb.confirmed_by() => return Ok(()),
            Ok(Some(remote)) => remote.provider_word,
            Ok(None) => "gone".to_owned(),
            Err(err @ AccountError::KeyRefused { .. }) => return Err(err),
            Err(err) => err.to_string(),
        };
        if started.elapsed() >= wait.limit {
            return Err(AccountError::NotConfirmed {
                provider: api.provider().display(),
                seconds: started.elapsed().as_secs(),
                last,
            });
        }
        tokio::time::sleep(wait.every).await;
    }
}
