//! Back up and Release: thin commands over `leasehold_core::backup` and `leasehold_core::release`.
//! Scans and checks run on the instance's live connection; a download reports progress through
//! a channel and can be stopped with `backup_cancel`.

use std::path::PathBuf;

use leasehold_core::backup::{self, AtRiskReport, BackupProgress, BackupRecord, ScanOptions};
use leasehold_core::release::{self, BackupStatus, CheckOutcome, FinalBill, ReleaseRequest};
use leasehold_core::update::Activity;
use leasehold_core::usecase::{self, backup::BackupChoice, backup::Reach};
use leasehold_core::ApiError;
use tauri::ipc::Channel;
use tracing::instrument;

use crate::state::AppState;

/// What on `instance` would be lost (default roots when `roots` is empty).
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn backup_scan(
    state: tauri::State<'_, AppState>,
    instance: String,
    roots: Vec<String>,
) -> Result<AtRiskReport, ApiError> {
    Ok(usecase::backup::scan(&state.context(), &instance, roots).await?)
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
    let choice = BackupChoice {
        paths,
        local_dir: PathBuf::from(local_dir),
        export_environment,
    };
    let send = move |progress: &BackupProgress| {
        let _ = on_progress.send(progress.clone());
    };
    Ok(usecase::backup::run(&state.context(), &instance, choice, &send).await?)
}

/// Stop the backup running for `instance` (what was copied stays; running it again resumes).
#[tauri::command]
#[instrument(skip(state))]
pub fn backup_cancel(state: tauri::State<'_, AppState>, instance: String) {
    usecase::backup::cancel(&state.context(), &instance);
}

/// `git push` in repository `repo` on `instance`; the record keeps its output.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn backup_git_push(
    state: tauri::State<'_, AppState>,
    instance: String,
    repo: String,
) -> Result<BackupRecord, ApiError> {
    Ok(usecase::backup::git_push(&state.context(), &instance, &repo).await?)
}

/// Copy `path` into the provider's file storage on `instance` (AutoDL's autodl-fs).
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn backup_to_file_storage(
    state: tauri::State<'_, AppState>,
    instance: String,
    path: String,
) -> Result<BackupRecord, ApiError> {
    Ok(usecase::backup::to_file_storage(&state.context(), &instance, &path).await?)
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
    let options = ScanOptions::default();
    Ok(usecase::backup::release_check(&state.context(), &instance, &options, Reach::Live).await?)
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
