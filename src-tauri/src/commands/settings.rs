//! Preferences and wizard drafts (core `settings`).

use leasehold_core::settings::{self, Preferences};
use leasehold_core::ApiError;

use crate::state::AppState;

#[tauri::command]
#[tracing::instrument(skip_all, err(Debug))]
pub async fn load_preferences(state: tauri::State<'_, AppState>) -> Result<Preferences, ApiError> {
    Ok(settings::load_preferences(&mut *state.conn().await?).await?)
}

#[tauri::command]
#[tracing::instrument(skip(state), err(Debug))]
pub async fn save_preferences(
    state: tauri::State<'_, AppState>,
    preferences: Preferences,
) -> Result<(), ApiError> {
    Ok(settings::save_preferences(&mut *state.conn().await?, &preferences, state.now()).await?)
}

#[tauri::command]
#[tracing::instrument(skip(state), err(Debug))]
pub async fn load_draft(
    state: tauri::State<'_, AppState>,
    wizard: String,
) -> Result<Option<serde_json::Value>, ApiError> {
    Ok(settings::load_draft(&mut *state.conn().await?, &wizard).await?)
}

#[tauri::command]
#[tracing::instrument(skip(state, draft), err(Debug))]
pub async fn save_draft(
    state: tauri::State<'_, AppState>,
    wizard: String,
    draft: serde_json::Value,
) -> Result<(), ApiError> {
    Ok(settings::save_draft(&mut *state.conn().await?, &wizard, &draft, state.now()).await?)
}

#[tauri::command]
#[tracing::instrument(skip(state), err(Debug))]
pub async fn clear_draft(
    state: tauri::State<'_, AppState>,
    wizard: String,
) -> Result<(), ApiError> {
    Ok(settings::clear_draft(&mut *state.conn().await?, &wizard).await?)
}
