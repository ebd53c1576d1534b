//! Verify page (core `verify`): run the probe battery here or on an instance with progress
//! streamed to the window, keep the run, read the history and what changed.

use leasehold_core::diagnose::diff::RunDiff;
use leasehold_core::diagnose::{self, Finding};
use leasehold_core::probe::{Facts, ProbeEvent};
use leasehold_core::target::LocalTarget;
use leasehold_core::verify::history::{self, RunSummary};
use leasehold_core::verify::{
    self, SshConnection, VerifyError, VerifyOutcome, VerifyReport, VerifyRequest,
};
use leasehold_core::ApiError;
use tauri::ipc::Channel;

use crate::state::AppState;

async fn run_and_keep(
    state: &AppState,
    target: &dyn leasehold_core::target::Target,
    request: &VerifyRequest,
    progress: Channel<ProbeEvent>,
) -> Result<VerifyOutcome, VerifyError> {
    if let Some(name) = &request.instance {
        history::check_instance(&state.db, name).await?;
    }
    let sink = move |event: ProbeEvent| {
        // A closed window only loses progress, never the run.
        let _ = progress.send(event);
    };
    let report = verify::verify(
        target,
        &request.battery_options(),
        &request.context(),
        &sink,
        chrono::Utc::now(),
    )
    .await?;
    let recorded = history::record(&state.db, request.instance.as_deref(), &report).await?;
    Ok(VerifyOutcome { report, recorded })
}

#[tauri::command]
#[tracing::instrument(skip(state, progress), err(Debug))]
pub async fn verify_local(
    state: tauri::State<'_, AppState>,
    request: VerifyRequest,
    progress: Channel<ProbeEvent>,
) -> Result<VerifyOutcome, ApiError> {
    Ok(run_and_keep(&state, &LocalTarget, &request, progress).await?)
}

/// `connection` carries no password: keys and the agent only (passwords stay in the keychain).
#[tauri::command]
#[tracing::instrument(skip(state, progress), err(Debug))]
pub async fn verify_ssh(
    state: tauri::State<'_, AppState>,
    connection: SshConnection,
    request: VerifyRequest,
    progress: Channel<ProbeEvent>,
) -> Result<VerifyOutcome, ApiError> {
    let target = connection
        .request()
        .connect()
        .await
        .map_err(VerifyError::from)?;
    let outcome = run_and_keep(&state, &target, &request, progress).await;
    target.disconnect().await;
    Ok(outcome?)
}

#[tauri::command]
#[tracing::instrument(skip(state), err(Debug))]
pub async fn verify_history(
    state: tauri::State<'_, AppState>,
    instance: Option<String>,
    target: String,
    limit: Option<u32>,
) -> Result<Vec<RunSummary>, ApiError> {
    Ok(history::history(&state.db, instance.as_deref(), &target, limit.unwrap_or(50)).await?)
}

#[tauri::command]
#[tracing::instrument(skip(state), err(Debug))]
pub async fn verify_run(
    state: tauri::State<'_, AppState>,
    id: i64,
) -> Result<VerifyReport, ApiError> {
    Ok(history::load(&state.db, id).await?)
}

#[tauri::command]
#[tracing::instrument(skip(state), err(Debug))]
pub async fn verify_changes(
    state: tauri::State<'_, AppState>,
    id: i64,
) -> Result<Option<RunDiff>, ApiError> {
    Ok(history::changes(&state.db, id).await?)
}

/// The findings of stored facts in another language (pure; for a language switch).
#[tauri::command]
#[tracing::instrument(skip(facts))]
pub fn diagnose_facts(facts: Facts, request: VerifyRequest) -> Vec<Finding> {
    diagnose::diagnose(&facts, &request.context())
}
