//! Explain an error: thin commands over `leasehold_core::explain`. The "Paste an error" box
//! sends the text (and, optionally, the task the user plans to run, kept with the instance).

use leasehold_core::catalog::EstimateRequest;
use leasehold_core::diagnose::Lang;
use leasehold_core::explain::{self, Explanation};
use leasehold_core::ApiError;
use tracing::instrument;

use crate::state::AppState;

/// What `text` means on `instance` (its latest Verify run and planned task). `plan`, when
/// given, becomes the instance's planned task.
#[tauri::command]
#[instrument(skip(state, text), fields(bytes = text.len()), err(Debug))]
pub async fn explain_error(
    state: tauri::State<'_, AppState>,
    instance: Option<String>,
    text: String,
    lang: Lang,
    plan: Option<EstimateRequest>,
) -> Result<Explanation, ApiError> {
    Ok(explain::explain_on(
        &state.store,
        instance.as_deref(),
        &text,
        lang,
        plan.as_ref(),
        state.now(),
    )
    .await?)
}

/// The task planned for `instance`, to fill the box's plan fields.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn explain_plan(
    state: tauri::State<'_, AppState>,
    instance: String,
) -> Result<Option<EstimateRequest>, ApiError> {
    Ok(explain::load_plan(&state.store, &instance).await?)
}
