//! The rental ledger (core `billing`): record rentals and power changes, read bills, estimate.
//! Every command reads the clock once and hands it to core, which never reads it itself.

use chrono::{DateTime, Utc};
use leasehold_core::billing::{
    self, ledger, BillingError, CostEstimate, EstimateInput, Forecast, InstanceDetail,
    InstanceSummary, NewInstance, PowerAction, ProviderPreset, RentVsBuy, RentVsBuyInput,
};
use leasehold_core::{ApiError, Coded};
use serde::Serialize;
use ts_rs::TS;

use crate::state::AppState;

/// A refused form: `{code, message}` plus the field it is about, so the UI can show the message
/// next to that field.
#[derive(Debug, Serialize, TS)]
#[ts(export)]
pub struct FormError {
    pub code: String,
    pub message: String,
    /// The form field (`name`, `price_per_gpu_hour`, `gpu_count`, …); `null` for the whole form.
    pub field: Option<String>,
}

impl From<BillingError> for FormError {
    fn from(err: BillingError) -> Self {
        Self {
            code: err.code().to_owned(),
            message: err.to_string(),
            field: err.field().map(str::to_owned),
        }
    }
}

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
pub fn validate_rental(rental: NewInstance) -> Result<(), FormError> {
    rental.validate().map(drop).map_err(Into::into)
}

#[tauri::command]
#[tracing::instrument(skip_all, fields(name = %rental.name), err(Debug))]
pub async fn add_rental(
    state: tauri::State<'_, AppState>,
    rental: NewInstance,
) -> Result<InstanceSummary, FormError> {
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
pub fn estimate_cost(input: EstimateInput) -> Result<CostEstimate, FormError> {
    billing::estimate(&input).map_err(Into::into)
}

#[tauri::command]
#[tracing::instrument(skip_all, err(Debug))]
pub fn rent_vs_buy(input: RentVsBuyInput) -> Result<RentVsBuy, FormError> {
    billing::rent_vs_buy(&input).map_err(Into::into)
}

#[cfg(test)]
mod tests {
    use rust_decimal::Decimal;

    use super::*;

    #[test]
    fn a_refused_value_names_the_field_the_ui_shows_it_next_to() {
        let err = FormError::from(BillingError::InvalidPrice {
            field: "price_per_gpu_hour",
            value: Decimal::ZERO,
        });
        assert_eq!(err.code, "billing.invalid_price");
        assert_eq!(err.field.as_deref(), Some("price_per_gpu_hour"));

        let err = FormError::from(BillingError::UnknownCurrency { code: "CYN".into() });
        assert_eq!(
            err.field.as_deref(),
            Some("currency"),
            "a currency error belongs next to the currency picker"
        );
    }

    #[test]
    fn a_taken_name_is_shown_next_to_the_name_and_ledger_errors_belong_to_the_whole_form() {
        let err = FormError::from(BillingError::DuplicateName { name: "a".into() });
        assert_eq!(err.field.as_deref(), Some("name"));

        let err = FormError::from(BillingError::NoGpuUnavailable);
        assert_eq!(
            err.field, None,
            "not about one field: shown above the buttons"
        );
        assert_eq!(err.code, "billing.no_gpu_unavailable");
    }
}
