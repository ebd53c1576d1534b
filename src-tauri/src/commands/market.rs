//! The market on Choose GPU (core `market`): the live offers for the task, a refresh on demand
//! (and the alerts it sets off), the price alerts, the review's defaults, and renting an offer
//! through the provider's create call.

use leasehold_core::account::Provider;
use leasehold_core::catalog::recommend::RecommendRequest;
use leasehold_core::market::alerts::{self, Alert, AlertRule, RefreshRound};
use leasehold_core::market::filter::OfferFilter;
use leasehold_core::market::rent::{RentDefaults, RentRequest, Rented};
use leasehold_core::market::view::{self, MarketView};
use leasehold_core::usecase;
use leasehold_core::ApiError;
use tracing::instrument;

use crate::state::AppState;

/// The kept offers ranked for the task Choose GPU describes, through the screen's filter
/// (its price cap in the user's currency), in the user's currency.
#[tauri::command]
#[instrument(skip(state, request), err(Debug))]
pub async fn market_for_task(
    state: tauri::State<'_, AppState>,
    request: RecommendRequest,
    filter: OfferFilter,
    currency: String,
) -> Result<MarketView, ApiError> {
    Ok(view::for_request(&state.store, &request, &filter, &currency).await?)
}

/// Fetch every provider's offers now (the app also does every 15 minutes), and fire the alerts
/// that now hold.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn market_refresh(state: tauri::State<'_, AppState>) -> Result<RefreshRound, ApiError> {
    Ok(usecase::market::refresh(&state.context(), None).await?)
}

/// Every price alert, oldest first.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn market_alerts(state: tauri::State<'_, AppState>) -> Result<Vec<Alert>, ApiError> {
    Ok(alerts::list(&state.store).await?)
}

/// Watch for `gpu` below a price or back in stock.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn market_alert_add(
    state: tauri::State<'_, AppState>,
    gpu: String,
    rule: AlertRule,
) -> Result<Alert, ApiError> {
    Ok(alerts::add(&state.store, &gpu, rule, state.now()).await?)
}

#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn market_alert_remove(
    state: tauri::State<'_, AppState>,
    id: i64,
) -> Result<(), ApiError> {
    Ok(alerts::remove(&state.store, id).await?)
}

/// What the review screen starts from: the image, the disk and the user's public key.
#[tauri::command]
pub fn market_rent_defaults(provider: Provider) -> RentDefaults {
    usecase::market::rent_defaults(provider)
}

/// Rent the offer and record it as created; nothing is recorded when the provider refuses.
#[tauri::command]
#[instrument(skip(state, request), fields(provider = ?request.provider), err(Debug))]
pub async fn market_rent(
    state: tauri::State<'_, AppState>,
    request: RentRequest,
) -> Result<Rented, ApiError> {
    Ok(usecase::market::rent(&state.context(), &request).await?)
}
