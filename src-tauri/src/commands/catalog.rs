//! Choose GPU: thin commands over `leasehold_core::catalog`.

use leasehold_core::catalog::{
    self, CatalogListing, Estimate, EstimateRequest, LocalGpuReport, ModelShape, PriceEntry,
    RecommendRequest, Recommendation, TorchWheelChoice, TorchWheelRequest,
};
use leasehold_core::ApiError;
use tracing::instrument;

use crate::state::AppState;

#[tauri::command]
#[instrument(err(Debug))]
pub fn estimate_vram(request: EstimateRequest) -> Result<Estimate, ApiError> {
    catalog::estimate(&request).map_err(Into::into)
}

#[tauri::command]
#[instrument(err(Debug))]
pub fn recommend_gpus(request: RecommendRequest) -> Result<Recommendation, ApiError> {
    catalog::recommend(&request).map_err(Into::into)
}

#[tauri::command]
#[instrument(err(Debug))]
pub fn choose_torch_wheel(request: TorchWheelRequest) -> Result<TorchWheelChoice, ApiError> {
    catalog::choose_torch_wheel(&request).map_err(Into::into)
}

#[tauri::command]
pub fn gpu_catalog() -> CatalogListing {
    catalog::catalog_listing()
}

#[tauri::command]
pub fn model_presets() -> Vec<ModelShape> {
    catalog::model_presets().into_iter().cloned().collect()
}

/// NVML is loaded on first use; `async` keeps that off the UI thread.
#[tauri::command(async)]
#[instrument(err(Debug))]
pub fn local_gpus(request: Option<EstimateRequest>) -> Result<LocalGpuReport, ApiError> {
    catalog::check_local_gpus(request.as_ref()).map_err(Into::into)
}

/// Prices paid for earlier rentals (the newest rental per GPU): the recommender's price list
/// for the GPUs the user has not typed a price for.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn earlier_prices(
    state: tauri::State<'_, AppState>,
) -> Result<Vec<PriceEntry>, ApiError> {
    Ok(catalog::earlier_prices(&state.store, state.now()).await?)
}
