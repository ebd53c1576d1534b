//! Verify: thin commands over `leasehold_core::verify`. The battery runs on the instance's live
//! connection, reports each probe through a channel, and can be stopped from the UI.

use chrono::Utc;
use leasehold_core::connect;
use leasehold_core::diagnose::{DiagnoseContext, Lang};
use leasehold_core::probe::{BatteryOptions, ProbeEvent};
use leasehold_core::verify::{self, VerifyReport};
use leasehold_core::ApiError;
use tauri::ipc::Channel;
use tracing::instrument;

use crate::state::AppState;

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
) -> Result<VerifyReport, ApiError> {
    let expected_gpu_count =
        connect::rented_gpu_count(&mut *state.conn().await?, &instance).await?;
    let target = state.live_target(&instance).await?;
    let mut options = BatteryOptions::default();
    options.stress = stress;
    let context = DiagnoseContext {
        lang,
        expected_gpu_count,
    };
    let sink = move |event: ProbeEvent| {
        let _ = on_progress.send(event);
    };
    let run = verify::verify(target.as_ref(), &options, &context, &sink, Utc::now());
    match state.checks.run(&instance, run).await {
        Some(report) => Ok(report?),
        None => Err(ApiError::new("verify.cancelled", "the checks were stopped")),
    }
}

/// Stop the checks running on `instance` (no-op when none run).
#[tauri::command]
#[instrument(skip(state))]
pub fn verify_cancel(state: tauri::State<'_, AppState>, instance: String) {
    state.checks.cancel(&instance);
}
