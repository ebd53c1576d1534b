//! Provider accounts (Settings → Accounts, the instance page's power buttons and reconcile
//! card): thin commands over `leasehold_core::account`.

use leasehold_core::account::held::AcceptReport;
use leasehold_core::account::reconcile::ReconcileRow;
use leasehold_core::account::sync::AccountSyncReport;
use leasehold_core::account::{
    self, AccountRef, AccountRemoved, AccountSummary, AddReport, InstanceLink, PowerVerb,
};
use leasehold_core::billing::BillingRules;
use leasehold_core::ssh::Secret;
use leasehold_core::stop::PowerReport;
use leasehold_core::usecase;
use leasehold_core::ApiError;
use tracing::instrument;

use crate::state::AppState;

#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn account_list(
    state: tauri::State<'_, AppState>,
) -> Result<Vec<AccountSummary>, ApiError> {
    Ok(account::list(&state.store).await?)
}

/// Check the key with one read-only call, keep it in the keychain, then sync once.
#[tauri::command]
#[instrument(skip(state, api_key), err(Debug))]
pub async fn account_add(
    state: tauri::State<'_, AppState>,
    account: AccountRef,
    api_key: Secret,
) -> Result<AddReport, ApiError> {
    Ok(usecase::account::add(&state.context(), &account, &api_key, None).await?)
}

#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn account_remove(
    state: tauri::State<'_, AppState>,
    account: AccountRef,
) -> Result<AccountRemoved, ApiError> {
    Ok(account::remove(&state.store, &account).await?)
}

/// Apply the price change the sync held back for `instance`, from when it was first seen.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn account_accept(
    state: tauri::State<'_, AppState>,
    instance: String,
) -> Result<AcceptReport, ApiError> {
    Ok(account::held::accept_held_price(&state.store, &instance, state.now()).await?)
}

/// Sync one account now (or every one); each account's failure is its own.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn account_sync(
    state: tauri::State<'_, AppState>,
    account: Option<AccountRef>,
) -> Result<Vec<AccountSyncReport>, ApiError> {
    Ok(usecase::account::sync(&state.context(), account.as_ref())
        .await?
        .synced())
}

/// Which account and provider instance `instance` is linked to, if any.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn account_link(
    state: tauri::State<'_, AppState>,
    instance: String,
) -> Result<Option<InstanceLink>, ApiError> {
    Ok(account::link_of(&state.store, &instance).await?)
}

/// Power on, off or release through the provider's API; recorded once the provider confirms.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn account_power(
    state: tauri::State<'_, AppState>,
    instance: String,
    verb: PowerVerb,
) -> Result<PowerReport, ApiError> {
    Ok(usecase::stop::power(&state.context(), &instance, verb).await?)
}

/// The imported instance was named or kept: its card goes away.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn account_acknowledge(
    state: tauri::State<'_, AppState>,
    instance: String,
) -> Result<(), ApiError> {
    Ok(account::acknowledge(&state.store, &instance).await?)
}

/// The ledger beside the provider's charges for the last `days` days.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn account_reconcile(
    state: tauri::State<'_, AppState>,
    instance: String,
    days: u32,
) -> Result<Vec<ReconcileRow>, ApiError> {
    Ok(usecase::account::reconcile_last_days(&state.context(), &instance, days).await?)
}

/// Apply the rule reconcile suggested, from now on.
#[tauri::command]
#[instrument(skip(state, rules), err(Debug))]
pub async fn account_apply_rule(
    state: tauri::State<'_, AppState>,
    instance: String,
    rules: BillingRules,
) -> Result<(), ApiError> {
    Ok(account::reconcile::apply(&state.store, &instance, &rules, state.now()).await?)
}
