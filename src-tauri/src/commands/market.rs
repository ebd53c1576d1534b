//! The market on Choose GPU (core `market`): the live offers for the task, a refresh on demand,
//! the review's defaults, and renting an offer through the provider's create call.

use leasehold_core::account::{Endpoints, Provider};
use leasehold_core::catalog::recommend::RecommendRequest;
use leasehold_core::market::rent::{self, RentDefaults, RentRequest, Rented};
use leasehold_core::market::view::{self, MarketView};
use leasehold_core::market::{self, RefreshReport};
use leasehold_core::ApiError;
use tracing::instrument;

use crate::state::AppState;

/// The kept offers ranked for the task Choose GPU describes, in the user's currency.
#[tauri::command]
#[instrument(skip(state, request), err(Debug))]
pub async fn market_for_task(
    state: tauri::State<'_, AppState>,
    request: RecommendRequest,
    currency: String,
) -> Result<MarketView, ApiError> {
    Ok(view::for_request(&state.store, &request, &currency).await?)
}

/// Fetch every provider's offers now (the app also does every 15 minutes).
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn market_refresh(state: tauri::State<'_, AppState>) -> Result<RefreshReport, ApiError> {
    Ok(market::refresh(
        &state.store,
        &Endpoints::checked_from_env()?,
        None,
        state.now(),
    )
    .await?)
}

/// What the review screen starts from: the image, the disk and the user's public key.
#[tauri::command]
pub fn market_rent_defaults(provider: Provider) -> RentDefaults {
    rent::defaults(provider, leasehold_core::paths::home_dir().as_deref())
}

/// Rent the offer and record it as created; nothing is recorded when the provider refuses.
#[tauri::command]
#[instrument(skip(state, request), fields(provider = ?request.provider), err(Debug))]
pub async fn market_rent(
    state: tauri::State<'_, AppState>,
    request: RentRequest,
) -> Result<Rented, ApiError> {
    Ok(rent::rent(
        &state.store,
        &Endpoints::checked_from_env()?,
        &request,
        state.now(),
    )
    .await?)
}
