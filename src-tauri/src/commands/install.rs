//! Install and jobs: thin commands over `leasehold_core::install` and `leasehold_core::job`.
//! A recipe runs as a detached job on the instance's live connection; its log streams through a
//! channel with the progress read from it, and attaching again after a restart starts over from
//! any byte.

use std::collections::BTreeMap;

use leasehold_core::connect;
use leasehold_core::install::{self, progress::Progress, RecipeInfo};
use leasehold_core::job::record::{self, JobRecord};
use leasehold_core::job::{CancelReport, JobStatus, Utf8Chunks};
use leasehold_core::ApiError;
use serde::Serialize;
use tauri::ipc::Channel;
use tracing::instrument;
use ts_rs::TS;

use crate::state::AppState;

/// A piece of a job's log as the Install page shows it.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct JobLog {
    /// Log bytes delivered so far, this piece included (attach again from here).
    #[ts(type = "number")]
    pub offset: u64,
    pub text: String,
    pub progress: Progress,
}

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
    let saved = connect::load_target(&mut *state.conn().await?, &instance)
        .await?
        .ok_or_else(|| ApiError::new("connect.no_target", "connect to this instance first"))?;
    let key = match &saved.auth {
        connect::AuthChoice::Key { path } => Some(path.clone()),
        _ => None,
    };
    let target = state.live_target(&instance).await?;
    Ok(install::start_on_instance(
        &state.store,
        &target,
        &instance,
        &saved.ssh_command,
        key.as_deref(),
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
    let started = std::time::Instant::now();
    let mut progress = Progress::default();
    let mut text = Utf8Chunks::default();
    let mut delivered = from;
    let mut sink = |chunk: &[u8]| {
        delivered += chunk.len() as u64;
        progress.feed(chunk, started.elapsed().as_secs_f64());
        let _ = on_log.send(JobLog {
            offset: delivered,
            text: text.push(chunk),
            progress: progress.clone(),
        });
    };
    let mut offset = from;
    Ok(record::attach_recorded(
        &state.store,
        target.as_ref(),
        &id,
        &mut offset,
        &mut sink,
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
