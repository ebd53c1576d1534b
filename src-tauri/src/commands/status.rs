//! The instance's one status (core `status`): what the instance page's header, the rentals list
//! and the tray read, and the one-click answer to a GPU count that differs from the rules.

use leasehold_core::status::totals::Totals;
use leasehold_core::status::{self, InstanceStatus, ListedInstance};
use leasehold_core::ApiError;
use tracing::instrument;

use crate::state::AppState;

#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn instance_status(
    state: tauri::State<'_, AppState>,
    instance: String,
) -> Result<InstanceStatus, ApiError> {
    Ok(status::for_instance(&state.store, &instance, state.now()).await?)
}

/// Every rental with its status (the Rentals page).
#[tauri::command]
#[instrument(skip_all, err(Debug))]
pub async fn instance_statuses(
    state: tauri::State<'_, AppState>,
) -> Result<Vec<ListedInstance>, ApiError> {
    Ok(status::listing(&state.store, state.now()).await?.instances)
}

/// The line over the Rentals list: costing now and this month (in this computer's time zone),
/// per currency.
#[tauri::command]
#[instrument(skip_all, err(Debug))]
pub async fn rentals_totals(state: tauri::State<'_, AppState>) -> Result<Totals, ApiError> {
    Ok(status::totals::load(&state.store, state.now(), &chrono::Local).await?)
}

/// Update the rules to the GPU count the monitor sees, from now on.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn instance_match_gpu_count(
    state: tauri::State<'_, AppState>,
    instance: String,
) -> Result<InstanceStatus, ApiError> {
    Ok(status::match_gpu_count(&state.store, &instance, state.now()).await?)
}

/// The renter says the rental's price is right: the "price looks wrong" card goes until the
/// price changes.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn instance_acknowledge_price(
    state: tauri::State<'_, AppState>,
    instance: String,
) -> Result<InstanceStatus, ApiError> {
    Ok(status::acknowledge_price(&state.store, &instance, state.now()).await?)
}

/// "Not now" to connecting and verifying an instance Leasehold brought up itself.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn instance_follow_up_dismiss(
    state: tauri::State<'_, AppState>,
    instance: String,
) -> Result<(), ApiError> {
    Ok(status::dismiss_follow_up(&state.store, &instance, state.now()).await?)
}
