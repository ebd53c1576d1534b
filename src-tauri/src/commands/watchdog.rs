//! The watchdog card on the instance page: thin commands over `leasehold_core::watchdog`.

use leasehold_core::billing::{ledger, ProviderKey};
use leasehold_core::watchdog::{
    self, InstallReport, RemoveReport, WatchdogOptions, WatchdogRequest, WatchdogStatus,
};
use leasehold_core::ApiError;
use tracing::instrument;

use crate::state::AppState;

/// The watchdog settings for `instance`: the defaults with its provider's power-off command.
async fn defaults(state: &AppState, instance: &str) -> Result<WatchdogOptions, ApiError> {
    let detail = ledger::show(&state.store, instance, state.now()).await?;
    Ok(WatchdogOptions::for_provider(
        ProviderKey::parse(&detail.summary.provider).ok(),
    ))
}

#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn watchdog_defaults(
    state: tauri::State<'_, AppState>,
    instance: String,
) -> Result<WatchdogOptions, ApiError> {
    defaults(&state, &instance).await
}

/// Install (or replace) the watchdog with `request` over the instance's defaults.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn watchdog_install(
    state: tauri::State<'_, AppState>,
    instance: String,
    request: WatchdogRequest,
) -> Result<InstallReport, ApiError> {
    let options = WatchdogOptions::resolve(&request, defaults(&state, &instance).await?)?;
    let target = state.live_target(&instance).await?;
    Ok(watchdog::install(target.as_ref(), &options).await?)
}

#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn watchdog_status(
    state: tauri::State<'_, AppState>,
    instance: String,
    state_dir: Option<String>,
) -> Result<WatchdogStatus, ApiError> {
    let target = state.live_target(&instance).await?;
    let dir = state_dir.unwrap_or_else(|| watchdog::DEFAULT_STATE_DIR.to_owned());
    Ok(watchdog::status_kept(&state.store, &instance, target.as_ref(), &dir, state.now()).await?)
}

#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn watchdog_remove(
    state: tauri::State<'_, AppState>,
    instance: String,
    state_dir: Option<String>,
) -> Result<RemoveReport, ApiError> {
    let target = state.live_target(&instance).await?;
    let dir = state_dir.unwrap_or_else(|| watchdog::DEFAULT_STATE_DIR.to_owned());
    Ok(watchdog::remove(target.as_ref(), &dir).await?)
}
