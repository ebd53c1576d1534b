//! "Stop now" (instance page, reminders, tray): thin commands over `leasehold_core::stop`.

use leasehold_core::billing::StopApi;
use leasehold_core::ssh::Secret;
use leasehold_core::stop::{self, ApiEndpoints, StopPlan, StopReport, StopVia, StopWait};
use leasehold_core::ApiError;
use tracing::instrument;

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
pub fn stop_save_api_key(api: StopApi, api_key: Secret) -> Result<(), ApiError> {
    Ok(stop::save_api_key(api, &api_key)?)
}

/// Power `instance` off now (over SSH with `command`, or through its provider's API) and record
/// `stopped` once confirmed; the live connection is closed afterwards.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn stop_now(
    state: tauri::State<'_, AppState>,
    instance: String,
    via: StopVia,
    command: Option<String>,
    provider_id: Option<String>,
) -> Result<StopReport, ApiError> {
    let report = match via {
        StopVia::Api => {
            stop::over_api(
                &state.store,
                &instance,
                &ApiEndpoints::from_env(),
                provider_id.as_deref(),
                None,
                StopWait::default(),
                state.clock.as_ref(),
            )
            .await?
        }
        StopVia::Ssh => {
            let request = stop::request_for(&state.store, &instance, None).await?;
            let target = state.live_target(&instance).await?;
            // The window has no "cancel" for a stop: it runs until confirmed or refused.
            stop::over_ssh_with(
                &state.store,
                &instance,
                target.as_ref(),
                request,
                command.as_deref(),
                StopWait::default(),
                state.clock.as_ref(),
                std::future::pending(),
            )
            .await?
        }
    };
    state.live.disconnect(&instance).await;
    Ok(report)
}
