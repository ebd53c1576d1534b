//! Install and jobs: thin commands over `leasehold_core::install` and `leasehold_core::job`.
//! A recipe runs as a detached job on the instance's live connection; its log streams through a
//! channel with the progress read from it, and attaching again after a restart starts over from
//! any byte.

use std::collections::BTreeMap;

use leasehold_core::diagnose::Lang;
use leasehold_core::install::serve::ServeCheck;
use leasehold_core::install::status::RecipeStatuses;
use leasehold_core::install::{self, JobLog, RecipeInfo};
use leasehold_core::job::record::{self, JobRecord};
use leasehold_core::job::{CancelReport, JobStatus};
use leasehold_core::usecase;
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
    Ok(usecase::install::start(&state.context(), &instance, &recipe, options).await?)
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
    let mut send = |log: JobLog| {
        let _ = on_log.send(log);
    };
    Ok(usecase::install::follow(&state.context(), &instance, &id, from, &mut send).await?)
}

/// Stop job `id`'s whole process group.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn job_cancel(
    state: tauri::State<'_, AppState>,
    instance: String,
    id: String,
) -> Result<CancelReport, ApiError> {
    Ok(usecase::install::cancel_job(&state.context(), &instance, &id).await?)
}

/// Each recipe's state on `instance` from its last Verify run (the recipe cards).
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn install_status(
    state: tauri::State<'_, AppState>,
    instance: String,
) -> Result<RecipeStatuses, ApiError> {
    Ok(install::status::for_instance(&state.store, &instance).await?)
}

/// The jobs of `instance` with the state of the running ones read again from the instance
/// (after an app restart or a reconnect).
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn job_refresh(
    state: tauri::State<'_, AppState>,
    instance: String,
) -> Result<Vec<JobRecord>, ApiError> {
    Ok(usecase::install::refresh_jobs(&state.context(), &instance).await?)
}

/// Check the server a finished server recipe (Ollama, vLLM, TGI) left running, through a port
/// forward: one answer, its speed, and whether an Ollama model spills onto the CPU.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn install_check_server(
    state: tauri::State<'_, AppState>,
    instance: String,
    id: String,
    lang: Lang,
) -> Result<ServeCheck, ApiError> {
    let context = state.context();
    Ok(usecase::install::check_server(&context, &instance, &id, lang).await?)
}
