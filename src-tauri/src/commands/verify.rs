//! Verify: thin commands over `leasehold_core::verify`. The battery runs on the instance's live
//! connection, reports each probe through a channel, can be stopped from the UI, and every run is
//! kept with what changed since the one before.

use leasehold_core::diagnose::Lang;
use leasehold_core::probe::ProbeEvent;
use leasehold_core::usecase;
use leasehold_core::verify::history::{self, RunSummary};
use leasehold_core::verify::VerifyOutcome;
use leasehold_core::ApiError;
use tauri::ipc::Channel;
use tracing::instrument;

use crate::state::AppState;

/// How many earlier runs the Verify page lists.
const HISTORY_LIMIT: u32 = 20;

/// Run the checks on `instance`; `stress` adds the matmul stress test. Findings are written in
/// `lang`. Fails with `verify.cancelled` when stopped with `verify_cancel`.
#[tauri::command]
#[instrument(skip(state, on_progress), err(Debug))]
pub async fn verify_run(
    state: tauri::State<'_, AppState>,
    instance: String,
    stress: bool,
    lang: Lang,
    on_progress: Channel<ProbeEvent>,
) -> Result<VerifyOutcome, ApiError> {
    let sink = move |event: ProbeEvent| {
        let _ = on_progress.send(event);
    };
    Ok(usecase::verify::run(&state.context(), &instance, stress, lang, &sink).await?)
}

/// Stop the checks running on `instance` (no-op when none run).
#[tauri::command]
#[instrument(skip(state))]
pub fn verify_cancel(state: tauri::State<'_, AppState>, instance: String) {
    state.checks.cancel(&instance);
}

/// Earlier runs of `instance`, newest first.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn verify_history(
    state: tauri::State<'_, AppState>,
    instance: String,
) -> Result<Vec<RunSummary>, ApiError> {
    Ok(history::history(&state.store, Some(&instance), "", HISTORY_LIMIT).await?)
}

/// One stored run and what changed since the run before it.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn verify_load(
    state: tauri::State<'_, AppState>,
    id: i64,
) -> Result<VerifyOutcome, ApiError> {
    Ok(usecase::verify::load_run(&state.context(), id).await?)
}
