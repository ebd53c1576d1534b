//! The watchdog card on the instance page: thin commands over `leasehold_core::watchdog`'s use
//! cases.

use leasehold_core::usecase;
use leasehold_core::watchdog::{
    InstallReport, RemoveReport, WatchdogOptions, WatchdogRequest, WatchdogStatus,
};
use leasehold_core::ApiError;
use tracing::instrument;

use crate::state::AppState;

#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn watchdog_defaults(
    state: tauri::State<'_, AppState>,
    instance: String,
) -> Result<WatchdogOptions, ApiError> {
    Ok(usecase::watchdog::defaults(&state.context(), &instance).await?)
}

/// Install (or replace) the watchdog with `request` over the instance's defaults.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn watchdog_install(
    state: tauri::State<'_, AppState>,
    instance: String,
    request: WatchdogRequest,
) -> Result<InstallReport, ApiError> {
    Ok(usecase::watchdog::install(&state.context(), &instance, &request).await?)
}

#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn watchdog_status(
    state: tauri::State<'_, AppState>,
    instance: String,
    state_dir: Option<String>,
) -> Result<WatchdogStatus, ApiError> {
    let context = state.context();
    Ok(usecase::watchdog::status(&context, &instance, state_dir.as_deref()).await?)
}

#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn watchdog_remove(
    state: tauri::State<'_, AppState>,
    instance: String,
    state_dir: Option<String>,
) -> Result<RemoveReport, ApiError> {
    let context = state.context();
    Ok(usecase::watchdog::remove(&context, &instance, state_dir.as_deref()).await?)
}
