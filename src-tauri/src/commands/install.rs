//! Install and jobs: thin commands over `leasehold_core::install` and `leasehold_core::job`.
//! A recipe runs as a detached job on the instance's live connection; its log streams through a
//! channel with the progress read from it, and attaching again after a restart starts over from
//! any byte.

use std::collections::BTreeMap;

use leasehold_core::install::{self, JobLog, RecipeInfo};
use leasehold_core::job::record::{self, JobRecord};
use leasehold_core::job::{CancelReport, JobStatus};
use leasehold_core::ApiError;
use tauri::ipc::Channel;
use tracing::instrument;

use crate::state::AppState;

#[tauri::command(async)]
pub fn install_recipes() -> Vec<RecipeInfo> {
    install::catalog()
}

/// Start `recipe` with `options` on `instance`; returns at once with the running job.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn install_start(
    state: tauri::State<'_, AppState>,
    instance: String,
    recipe: String,
    options: BTreeMap<String, String>,
) -> Result<JobStatus, ApiError> {
    let target = state.live_target(&instance).await?;
    Ok(install::start_on_instance(
        &state.store,
        &target,
        &instance,
        &recipe,
        options,
        state.now(),
    )
    .await?)
}

/// The jobs of `instance`, oldest first.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn job_list(
    state: tauri::State<'_, AppState>,
    instance: String,
) -> Result<Vec<JobRecord>, ApiError> {
    Ok(record::list_for_instance(&state.store, &instance).await?)
}

/// Stream job `id`'s log from byte `from` until it ends; reconnects by itself after a drop.
#[tauri::command]
#[instrument(skip(state, on_log), err(Debug))]
pub async fn job_attach(
    state: tauri::State<'_, AppState>,
    instance: String,
    id: String,
    from: u64,
    on_log: Channel<JobLog>,
) -> Result<JobStatus, ApiError> {
    let target = state.live_target(&instance).await?;
    let mut send = |log: JobLog| {
        let _ = on_log.send(log);
    };
    Ok(install::follow_recorded(
        &state.store,
        target.as_ref(),
        &id,
        from,
        &mut send,
        state.clock.as_ref(),
    )
    .await?)
}

/// Stop job `id`'s whole process group.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn job_cancel(
    state: tauri::State<'_, AppState>,
    instance: String,
    id: String,
) -> Result<CancelReport, ApiError> {
    let target = state.live_target(&instance).await?;
    Ok(record::cancel_recorded(&state.store, target.as_ref(), &id, state.clock.as_ref()).await?)
}
