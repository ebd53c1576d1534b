//! The dashboard's GPU monitor: thin commands over `leasehold_core::monitor`. The stream runs on
//! the instance's live connection and sends every event through a channel until `monitor_stop`
//! (the page closed); `monitor_watch` feeds the minute history in the background.

use leasehold_core::diagnose::Lang;
use leasehold_core::monitor::history::{self, BusyHours, GpuMinute};
use leasehold_core::monitor::live::{self, monitor_key};
use leasehold_core::monitor::MonitorEvent;
use leasehold_core::usecase;
use leasehold_core::ApiError;
use tauri::ipc::Channel;
use tracing::instrument;

use crate::state::AppState;

/// Stream `instance`'s GPUs every `interval_ms` (default 1000) until `monitor_stop`.
#[tauri::command]
#[instrument(skip(state, on_event), err(Debug))]
pub async fn monitor_start(
    state: tauri::State<'_, AppState>,
    instance: String,
    interval_ms: Option<u32>,
    lang: Lang,
    on_event: Channel<MonitorEvent>,
) -> Result<(), ApiError> {
    let sink = move |event: MonitorEvent| {
        let _ = on_event.send(event);
    };
    Ok(usecase::monitor::stream(&state.context(), &instance, interval_ms, lang, &sink).await?)
}

/// Stop `instance`'s stream (no-op when none runs).
#[tauri::command]
#[instrument(skip(state))]
pub fn monitor_stop(state: tauri::State<'_, AppState>, instance: String) {
    state.checks.cancel(&monitor_key(&instance));
}

/// Word `instance`'s open stream's findings in `lang` from now on (the app's language changed);
/// no-op when none runs.
#[tauri::command]
#[instrument(skip(state))]
pub fn monitor_language(state: tauri::State<'_, AppState>, instance: String, lang: Lang) {
    state.monitor_languages.set(&instance, lang);
}

/// The last day of `instance`'s minute history.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn monitor_history(
    state: tauri::State<'_, AppState>,
    instance: String,
) -> Result<Vec<GpuMinute>, ApiError> {
    let now = state.now();
    Ok(history::utilisation_since(&state.store, &instance, now - live::HISTORY_SPAN, now).await?)
}

/// `instance`'s GPU-busy hours and what its idle time cost.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn monitor_busy_hours(
    state: tauri::State<'_, AppState>,
    instance: String,
) -> Result<BusyHours, ApiError> {
    Ok(history::busy_hours(&state.store, &instance, state.now()).await?)
}
