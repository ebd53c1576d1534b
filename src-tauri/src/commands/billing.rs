//! The rental ledger (core `billing`): record rentals and power changes, read bills, estimate.
//! Every command reads the clock once and hands it to core, which never reads it itself. A
//! refused form comes back as `ApiError` with the field it belongs next to.

use chrono::{DateTime, Utc};
use leasehold_core::billing::{
    self, ledger, CostEstimate, EstimateInput, Forecast, HourlyExtra, InstanceDetail,
    InstanceSummary, NewInstance, PowerAction, ProviderPreset, QuotedFee, RentVsBuy,
    RentVsBuyInput,
};
use leasehold_core::price_check::{PriceCheck, PriceCheckInput};
use leasehold_core::ApiError;
use rust_decimal::Decimal;

use crate::state::AppState;

#[tauri::command]
#[tracing::instrument]
pub fn provider_presets() -> Vec<ProviderPreset> {
    billing::presets()
}

#[tauri::command]
#[tracing::instrument]
pub fn currencies() -> Vec<&'static str> {
    billing::Currency::known().to_vec()
}

/// Every check that needs no database, run as the user steps through the form.
#[tauri::command]
#[tracing::instrument(skip_all, err(Debug))]
pub fn validate_rental(rental: NewInstance) -> Result<(), ApiError> {
    rental.validate().map(drop).map_err(Into::into)
}

/// A fee as the provider quotes it (per day, per month, per GB) as the hourly figure the rules keep.
#[tauri::command]
#[tracing::instrument(err(Debug))]
pub fn fee_per_hour(extra: HourlyExtra, fee: QuotedFee) -> Result<Decimal, ApiError> {
    fee.per_hour(extra).map_err(Into::into)
}

#[tauri::command]
#[tracing::instrument(skip_all, fields(name = %rental.name), err(Debug))]
pub async fn add_rental(
    state: tauri::State<'_, AppState>,
    rental: NewInstance,
) -> Result<InstanceSummary, ApiError> {
    Ok(ledger::add_instance(&state.store, &rental, state.now()).await?)
}

#[tauri::command]
#[tracing::instrument(skip_all, err(Debug))]
pub async fn list_rentals(
    state: tauri::State<'_, AppState>,
) -> Result<Vec<InstanceSummary>, ApiError> {
    Ok(ledger::list(&state.store, state.now()).await?)
}

#[tauri::command]
#[tracing::instrument(skip(state), err(Debug))]
pub async fn rental_detail(
    state: tauri::State<'_, AppState>,
    name: String,
) -> Result<InstanceDetail, ApiError> {
    Ok(ledger::show(&state.store, &name, state.now()).await?)
}

#[tauri::command]
#[tracing::instrument(skip(state), err(Debug))]
pub async fn record_power(
    state: tauri::State<'_, AppState>,
    name: String,
    action: PowerAction,
) -> Result<InstanceSummary, ApiError> {
    Ok(ledger::record(&state.store, &name, action, state.now()).await?)
}

#[tauri::command]
#[tracing::instrument(skip(state), err(Debug))]
pub async fn forecast_rental(
    state: tauri::State<'_, AppState>,
    name: String,
    until: DateTime<Utc>,
) -> Result<Forecast, ApiError> {
    Ok(ledger::forecast(&state.store, &name, state.now(), until).await?)
}

#[tauri::command]
#[tracing::instrument(skip_all, err(Debug))]
pub fn estimate_cost(input: EstimateInput) -> Result<CostEstimate, ApiError> {
    billing::estimate(&input).map_err(Into::into)
}

#[tauri::command]
#[tracing::instrument(skip_all, err(Debug))]
pub fn rent_vs_buy(input: RentVsBuyInput) -> Result<RentVsBuy, ApiError> {
    billing::rent_vs_buy(&input).map_err(Into::into)
}

/// A second look at a price before it is recorded (New rental's review): far from what was paid
/// before for this GPU or from the market's live offers, pays for the card within a week, over
/// the budget, or in the wrong currency.
#[tauri::command]
#[tracing::instrument(skip(state), err(Debug))]
pub async fn price_check(
    state: tauri::State<'_, AppState>,
    input: PriceCheckInput,
) -> Result<PriceCheck, ApiError> {
    Ok(leasehold_core::usecase::price::check(&state.context(), &input).await?)
}
