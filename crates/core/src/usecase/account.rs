//! Provider accounts: add one, sync them, set the ledger beside the provider's charges.

use chrono::NaiveDate;

use super::ActionError;
use crate::account::reconcile::{self, ReconcileRow};
use crate::account::sync::{self, AccountSyncReport};
use crate::account::{self, AccountError, AccountRef, AddReport, Backoff};
use crate::ssh::Secret;

use super::Context;

/// Check the key with one read-only call, keep it (in the keychain, else read from `key_env`
/// at each sync), then sync once. The label is checked by `account::add`.
pub async fn add(
    context: &Context<'_>,
    account: &AccountRef,
    key: &Secret,
    key_env: Option<&str>,
) -> Result<AddReport, ActionError> {
    let endpoints = context.endpoints()?;
    Ok(account::add(
        context.store,
        account,
        key,
        key_env,
        &endpoints,
        context.now(),
    )
    .await?)
}

/// Each account's sync, in order: a report, or the account and why it failed.
pub struct SyncOutcome(pub Vec<Result<AccountSyncReport, (AccountRef, AccountError)>>);

impl SyncOutcome {
    /// The accounts that synced; the failures were logged.
    pub fn synced(self) -> Vec<AccountSyncReport> {
        self.0.into_iter().filter_map(Result::ok).collect()
    }
}

/// Sync one account now, or every one. Asked for one account, its failure is the answer;
/// asked for all, each account's failure is its own, logged and handed back beside the rest.
pub async fn sync(
    context: &Context<'_>,
    only: Option<&AccountRef>,
) -> Result<SyncOutcome, ActionError> {
    let endpoints = context.endpoints()?;
    let results = sync::sync_all(
        context.store,
        only,
        &endpoints,
        Backoff::default(),
        context.now(),
    )
    .await?;
    let mut outcome = Vec::with_capacity(results.len());
    for result in results {
        match result {
            Err((_, err)) if only.is_some() => return Err(err.into()),
            Err((account, err)) => {
                tracing::warn!(provider = account.provider.as_str(), %err, "sync failed");
                outcome.push(Err((account, err)));
            }
            Ok(report) => outcome.push(Ok(report)),
        }
    }
    Ok(SyncOutcome(outcome))
}

/// The ledger beside the provider's charges for the last `days` days up to today.
pub async fn reconcile_last_days(
    context: &Context<'_>,
    instance: &str,
    days: u32,
) -> Result<Vec<ReconcileRow>, ActionError> {
    let (from, to) = reconcile::last_days(context.now().date_naive(), days);
    reconcile_between(context, Some(instance), from, to).await
}

/// The ledger beside the provider's charges from `from` to `to` (every linked instance when
/// `instance` is `None`).
pub async fn reconcile_between(
    context: &Context<'_>,
    instance: Option<&str>,
    from: NaiveDate,
    to: NaiveDate,
) -> Result<Vec<ReconcileRow>, ActionError> {
    Ok(reconcile::reconcile(
        context.store,
        instance,
        from,
        to,
        &context.endpoints()?,
        Backoff::default(),
        context.now(),
    )
    .await?)
}
