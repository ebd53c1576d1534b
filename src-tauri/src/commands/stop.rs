//! "Stop now" (instance page, reminders, tray): one call each into `leasehold_core::stop`.

use leasehold_core::account::Provider;
use leasehold_core::ssh::Secret;
use leasehold_core::stop::{self, HandCheck, HandStop, StopPlan, StopReport, StopVia};
use leasehold_core::usecase;
use leasehold_core::ApiError;
use tracing::instrument;

use crate::board::ReminderBoard;
use crate::state::AppState;

/// How "Stop now" would go: the command, the API, whether an id and a key are saved.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn stop_plan(
    state: tauri::State<'_, AppState>,
    instance: String,
) -> Result<StopPlan, ApiError> {
    Ok(stop::plan(&state.store, &instance, state.now()).await?)
}

/// Keep a provider's API key in the OS keychain.
#[tauri::command]
#[instrument(skip(api_key), err(Debug))]
pub fn stop_save_api_key(api: Provider, api_key: Secret) -> Result<(), ApiError> {
    Ok(stop::save_api_key(api, &api_key)?)
}

/// Power `instance` off now (over SSH with `command` on the live connection, or through its
/// provider's API) and record `stopped` once confirmed; the live connection is closed
/// afterwards.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn stop_now(
    state: tauri::State<'_, AppState>,
    instance: String,
    via: StopVia,
    command: Option<String>,
    provider_id: Option<String>,
) -> Result<StopReport, ApiError> {
    let (command, provider_id) = (command.as_deref(), provider_id.as_deref());
    Ok(usecase::stop::stop_now(&state.context(), &instance, via, command, provider_id).await?)
}

/// "Already stopped at the provider — record it": record `stopped` on the user's word, then
/// look (the provider's API, else a fresh SSH login) whether it still answers; the reminders
/// raise `stop_contradicted` when it does.
#[tauri::command]
#[instrument(skip(state, board), err(Debug))]
pub async fn stop_record_by_hand(
    state: tauri::State<'_, AppState>,
    board: tauri::State<'_, ReminderBoard>,
    instance: String,
) -> Result<HandStop, ApiError> {
    let stopped = usecase::stop::record_by_hand(&state.context(), &instance).await?;
    board.wake();
    Ok(stopped)
}

/// Look again whether a stop recorded by hand holds (after the user stopped it in the console).
#[tauri::command]
#[instrument(skip(state, board), err(Debug))]
pub async fn stop_check_again(
    state: tauri::State<'_, AppState>,
    board: tauri::State<'_, ReminderBoard>,
    instance: String,
) -> Result<Option<HandCheck>, ApiError> {
    let check = usecase::stop::check_again(&state.context(), &instance).await?;
    board.wake();
    Ok(check)
}
