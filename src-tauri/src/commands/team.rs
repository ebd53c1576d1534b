//! Team mode (core `team`): link to the team's PostgreSQL, sync, the team views. The password
//! typed in Settings goes to core (then the OS keychain) and never comes back.

use leasehold_core::ssh::Secret;
use leasehold_core::team::{self, Conflict, ConnectRequest, SyncReport, TeamLink, TeamStatus};
use leasehold_core::usecase;
use leasehold_core::ApiError;

use crate::state::AppState;

#[tauri::command]
#[tracing::instrument(skip_all, err(Debug))]
pub async fn team_link(state: tauri::State<'_, AppState>) -> Result<Option<TeamLink>, ApiError> {
    Ok(team::link(&state.store).await?)
}

#[tauri::command]
#[tracing::instrument(skip_all, err(Debug))]
pub async fn team_connect(
    state: tauri::State<'_, AppState>,
    url: String,
    member: String,
    team: String,
    password: Option<Secret>,
) -> Result<TeamLink, ApiError> {
    let request = ConnectRequest {
        url,
        member,
        team,
        password,
    };
    Ok(team::connect(&state.store, request, state.now()).await?)
}

#[tauri::command]
#[tracing::instrument(skip_all, err(Debug))]
pub async fn team_sync(state: tauri::State<'_, AppState>) -> Result<SyncReport, ApiError> {
    Ok(team::sync(&state.store, state.now()).await?)
}

#[tauri::command]
#[tracing::instrument(skip_all, err(Debug))]
pub async fn team_status(state: tauri::State<'_, AppState>) -> Result<TeamStatus, ApiError> {
    Ok(team::status(&state.store, state.now()).await?)
}

#[tauri::command]
#[tracing::instrument(skip_all, err(Debug))]
pub async fn team_conflicts(state: tauri::State<'_, AppState>) -> Result<Vec<Conflict>, ApiError> {
    Ok(team::conflicts::conflicts(&state.store).await?)
}

/// Set the team's monthly budget in one currency (every member sees it; 50/80/100 % reminders);
/// answers the team status with it.
#[tauri::command]
#[tracing::instrument(skip_all, err(Debug))]
pub async fn team_set_budget(
    state: tauri::State<'_, AppState>,
    currency: String,
    amount: String,
) -> Result<TeamStatus, ApiError> {
    Ok(usecase::team::set_budget(&state.context(), &currency, &amount).await?)
}

/// The project `instance` is rented for, if anyone said.
#[tauri::command]
#[tracing::instrument(skip(state), err(Debug))]
pub async fn instance_project(
    state: tauri::State<'_, AppState>,
    instance: String,
) -> Result<Option<String>, ApiError> {
    Ok(team::project_of(&state.store, &instance).await?)
}

/// Say which project `instance` is rented for (`None` clears it); answers it as saved.
#[tauri::command]
#[tracing::instrument(skip(state), err(Debug))]
pub async fn instance_set_project(
    state: tauri::State<'_, AppState>,
    instance: String,
    project: Option<String>,
) -> Result<Option<String>, ApiError> {
    let context = state.context();
    Ok(usecase::team::set_project(&context, &instance, project.as_deref()).await?)
}

/// Keep `keep_uid` (the refused event or the one standing in its place) and withdraw the other;
/// answers the conflicts left.
#[tauri::command]
#[tracing::instrument(skip_all, err(Debug))]
pub async fn team_resolve_conflict(
    state: tauri::State<'_, AppState>,
    event_uid: String,
    keep_uid: String,
) -> Result<Vec<Conflict>, ApiError> {
    Ok(team::conflicts::resolve(&state.store, &event_uid, &keep_uid, state.now()).await?)
}

/// Dismiss a notice a pull stored (name kept under another name, unreadable row) once read;
/// answers the conflicts left.
#[tauri::command]
#[tracing::instrument(skip_all, err(Debug))]
pub async fn team_dismiss_conflict(
    state: tauri::State<'_, AppState>,
    key: String,
) -> Result<Vec<Conflict>, ApiError> {
    Ok(team::conflicts::dismiss(&state.store, &key, state.now()).await?)
}

/// Name who is told about any member's instance left running, and after how many idle minutes
/// (the instance's own member always is); answers the team status with them.
#[tauri::command]
#[tracing::instrument(skip_all, err(Debug))]
pub async fn team_set_alerts(
    state: tauri::State<'_, AppState>,
    recipients: Vec<String>,
    after_minutes: u32,
) -> Result<TeamStatus, ApiError> {
    Ok(usecase::team::set_alerts(&state.context(), &recipients, after_minutes).await?)
}

/// Share (or stop sharing) this laptop's last Verify results with the team from the next sync;
/// answers the team status.
#[tauri::command]
#[tracing::instrument(skip_all, err(Debug))]
pub async fn team_share_verify(
    state: tauri::State<'_, AppState>,
    share: bool,
) -> Result<TeamStatus, ApiError> {
    Ok(usecase::team::share_verify(&state.context(), share).await?)
}

/// Put off a team reminder (a team budget's threshold, a left-running alert) for an hour or until
/// tomorrow morning.
#[tauri::command]
#[tracing::instrument(skip(state, board), err(Debug))]
pub async fn team_snooze_reminder(
    state: tauri::State<'_, AppState>,
    board: tauri::State<'_, crate::board::ReminderBoard>,
    kind: leasehold_core::remind::ReminderKind,
    occurrence: String,
    snooze: leasehold_core::remind::Snooze,
) -> Result<(), ApiError> {
    let until = snooze.until(state.now(), &chrono::Local);
    leasehold_core::remind::team::snooze(&state.store, kind, &occurrence, until).await?;
    board.forget(0, kind);
    board.wake();
    Ok(())
}

/// Close a team reminder (a team budget's threshold, a left-running alert) in the popup.
#[tauri::command]
#[tracing::instrument(skip(state, board), err(Debug))]
pub async fn team_dismiss_reminder(
    state: tauri::State<'_, AppState>,
    board: tauri::State<'_, crate::board::ReminderBoard>,
    kind: leasehold_core::remind::ReminderKind,
    occurrence: String,
) -> Result<(), ApiError> {
    leasehold_core::remind::team::dismiss(&state.store, kind, &occurrence, state.now()).await?;
    board.forget(0, kind);
    board.wake();
    Ok(())
}

#[tauri::command]
#[tracing::instrument(skip_all, err(Debug))]
pub async fn team_disconnect(
    state: tauri::State<'_, AppState>,
) -> Result<Option<TeamLink>, ApiError> {
    Ok(team::disconnect(&state.store).await?)
}
