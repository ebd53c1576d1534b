//! Back up and Release: thin commands over `leasehold_core::backup` and `leasehold_core::release`.
//! Scans and checks run on the instance's live connection; a download reports progress through
//! a channel and can be stopped with `backup_cancel`.

use std::path::PathBuf;

use leasehold_core::backup::{
    self, AtRiskReport, BackupProgress, BackupRecord, RunRequest, ScanOptions,
};
use leasehold_core::release::{self, BackupStatus, CheckOutcome, FinalBill, ReleaseRequest};
use leasehold_core::update::Activity;
use leasehold_core::ApiError;
use tauri::ipc::Channel;
use tracing::instrument;

use crate::state::AppState;

/// Backups share the app's stoppable runs, under their own key per instance.
fn run_key(instance: &str) -> String {
    format!("backup:{instance}")
}

fn cancelled() -> ApiError {
    backup::BackupError::Cancelled.into()
}

/// What on `instance` would be lost (default roots when `roots` is empty).
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn backup_scan(
    state: tauri::State<'_, AppState>,
    instance: String,
    roots: Vec<String>,
) -> Result<AtRiskReport, ApiError> {
    let target = state.live_target(&instance).await?;
    let options = ScanOptions {
        roots,
        path_prefix: None,
    };
    Ok(backup::scan_recorded(
        &state.store,
        target.as_ref(),
        Some(&instance),
        &options,
        state.now(),
    )
    .await?)
}

/// Copy `paths` from `instance` into `local_dir`, reporting progress; recorded when done.
#[tauri::command]
#[instrument(skip(state, on_progress), err(Debug))]
pub async fn backup_run(
    state: tauri::State<'_, AppState>,
    instance: String,
    paths: Vec<String>,
    local_dir: String,
    export_environment: bool,
    on_progress: Channel<BackupProgress>,
) -> Result<Vec<BackupRecord>, ApiError> {
    let target = state.live_target(&instance).await?;
    // An update waits until the backup ends (`update::gate`).
    let _running = state.running_work.begin(Activity::Backup);
    let local_dir = PathBuf::from(local_dir);
    let send = move |progress: &BackupProgress| {
        let _ = on_progress.send(progress.clone());
    };
    let work = async {
        let mut records = Vec::new();
        if !paths.is_empty() {
            let request = RunRequest {
                remote_paths: paths,
                local_dir: local_dir.clone(),
                instance: Some(instance.clone()),
            };
            records.push(
                backup::run(&state.store, &target, &request, &send, state.clock.as_ref()).await?,
            );
        }
        if export_environment {
            records.push(
                backup::export_environment(
                    &state.store,
                    &target,
                    Some(&instance),
                    &local_dir,
                    state.clock.as_ref(),
                )
                .await?,
            );
        }
        Ok::<_, backup::BackupError>(records)
    };
    match Box::pin(state.checks.run(&run_key(&instance), work)).await {
        Some(result) => Ok(result?),
        None => Err(cancelled()),
    }
}

/// Stop the backup running for `instance` (what was copied stays; running it again resumes).
#[tauri::command]
#[instrument(skip(state))]
pub fn backup_cancel(state: tauri::State<'_, AppState>, instance: String) {
    state.checks.cancel(&run_key(&instance));
}

/// `git push` in repository `repo` on `instance`; the record keeps its output.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn backup_git_push(
    state: tauri::State<'_, AppState>,
    instance: String,
    repo: String,
) -> Result<BackupRecord, ApiError> {
    let target = state.live_target(&instance).await?;
    Ok(backup::git_push(
        &state.store,
        &target,
        Some(&instance),
        &repo,
        state.clock.as_ref(),
    )
    .await?)
}

/// Copy `path` into the provider's file storage on `instance` (AutoDL's autodl-fs).
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn backup_to_file_storage(
    state: tauri::State<'_, AppState>,
    instance: String,
    path: String,
) -> Result<BackupRecord, ApiError> {
    let target = state.live_target(&instance).await?;
    Ok(backup::copy_to_instance_file_storage(
        &state.store,
        &target,
        &instance,
        &path,
        state.clock.as_ref(),
    )
    .await?)
}

/// Every backup of `instance`, newest first.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn backup_history(
    state: tauri::State<'_, AppState>,
    instance: String,
) -> Result<Vec<BackupRecord>, ApiError> {
    Ok(backup::record::history(&state.store, &instance).await?)
}

/// Last backup, wipe deadline and latest check of `instance` (the instance page's card).
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn backup_status(
    state: tauri::State<'_, AppState>,
    instance: String,
) -> Result<BackupStatus, ApiError> {
    Ok(release::backup_status(&state.store, &instance, state.now()).await?)
}

/// Run the release checklist live on `instance` and record it.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn release_check(
    state: tauri::State<'_, AppState>,
    instance: String,
) -> Result<CheckOutcome, ApiError> {
    // An instance that cannot be reached (never connected, powered off, gone) still gets its
    // checklist: what only a look could tell is blocked until overridden with a reason.
    let target = match state.live_target(&instance).await {
        Ok(target) => target,
        Err(unreached) => {
            return Ok(release::check_unreached(
                &state.store,
                &instance,
                &unreached.message,
                state.now(),
            )
            .await?)
        }
    };
    Ok(release::check(
        &state.store,
        target.as_ref(),
        &instance,
        &ScanOptions::default(),
        state.now(),
    )
    .await?)
}

/// Record the release of `instance` when nothing blocked is left un-overridden and `confirm`
/// is its name; returns the final bill.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn release_instance(
    state: tauri::State<'_, AppState>,
    instance: String,
    confirm: String,
    overrides: Vec<(String, String)>,
    no_check: Option<String>,
) -> Result<FinalBill, ApiError> {
    let _running = state.running_work.begin(Activity::Release);
    let request = ReleaseRequest {
        name: instance,
        confirm,
        overrides,
        no_check,
        fresh: None,
    };
    Ok(release::release(&state.store, request, state.now(), None).await?)
}

/// The final bill of `instance` as of now.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn release_bill(
    state: tauri::State<'_, AppState>,
    instance: String,
) -> Result<FinalBill, ApiError> {
    Ok(release::final_bill(&state.store, &instance, state.now(), None).await?)
}
