//! Which provider account and provider id a ledger instance is linked to, as the last sync saw
//! it. Powering a linked instance through its account is the job of the `stop` module.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::SqliteConnection;
use ts_rs::TS;

use super::remote::{PowerVerb, RemoteState};
use super::{AccountError, AccountRef, Provider};
use crate::store::accounts as repo;
use crate::store::Store;

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
    Ok(link_by_id(&mut conn, row.id).await?.map(|(link, _)| link))
}

/// The link of the instance with row id `instance_id`, with the environment variable its
/// account's key may be read from (on a machine without a keychain).
pub async fn link_by_id(
    conn: &mut SqliteConnection,
    instance_id: i64,
) -> Result<Option<(InstanceLink, Option<String>)>, AccountError> {
    let Some(link) = repo::link_of_instance(&mut *conn, instance_id).await? else {
        return Ok(None);
    };
    let Some(account) = repo::account_by_id(&mut *conn, link.account_id).await? else {
        return Ok(None);
    };
    let provider = Provider::parse(&account.provider)?;
    let remote_state = RemoteState::parse(&link.remote_state);
    Ok(Some((
        InstanceLink {
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
        },
        account.key_env,
    )))
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
