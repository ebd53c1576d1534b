//! Reminders and webhooks (core `remind`, `webhook`): the popup's list and actions, the rules,
//! the saved webhooks and their test button, and the tray's labels.

use leasehold_core::remind::{rules, schedule, ReminderKind, ReminderRules, Snooze};
use leasehold_core::ssh::Secret;
use leasehold_core::usecase;
use leasehold_core::webhook::{saved, Delivery, WebhookView};
use leasehold_core::{AdapterError, ApiError};

use crate::board::{Board, ReminderBoard, TrayLabels};
use crate::state::AppState;

/// What the popup shows now (the scheduler's last tick).
#[tauri::command]
#[tracing::instrument(skip_all)]
pub fn remind_board(board: tauri::State<'_, ReminderBoard>) -> Board {
    board.current()
}

#[tauri::command]
#[tracing::instrument(skip(state, board), err(Debug))]
pub async fn remind_snooze(
    state: tauri::State<'_, AppState>,
    board: tauri::State<'_, ReminderBoard>,
    instance_id: i64,
    kind: ReminderKind,
    occurrence: String,
    snooze: Snooze,
) -> Result<(), ApiError> {
    let until = snooze.until(state.now(), &chrono::Local);
    schedule::snooze(&state.store, instance_id, kind, &occurrence, until).await?;
    board.forget(instance_id, kind);
    board.wake();
    Ok(())
}

#[tauri::command]
#[tracing::instrument(skip(state, board), err(Debug))]
pub async fn remind_dismiss(
    state: tauri::State<'_, AppState>,
    board: tauri::State<'_, ReminderBoard>,
    instance_id: i64,
    kind: ReminderKind,
    occurrence: String,
) -> Result<(), ApiError> {
    schedule::dismiss(&state.store, instance_id, kind, &occurrence, state.now()).await?;
    board.forget(instance_id, kind);
    board.wake();
    Ok(())
}

#[tauri::command]
#[tracing::instrument(skip_all, err(Debug))]
pub async fn remind_rules_load(
    state: tauri::State<'_, AppState>,
) -> Result<ReminderRules, ApiError> {
    Ok(rules::load(&mut *state.conn().await?).await?)
}

#[tauri::command]
#[tracing::instrument(skip(state, board), err(Debug))]
pub async fn remind_rules_save(
    state: tauri::State<'_, AppState>,
    board: tauri::State<'_, ReminderBoard>,
    rules: ReminderRules,
) -> Result<(), ApiError> {
    rules::save(&mut *state.conn().await?, &rules, state.now()).await?;
    board.wake();
    Ok(())
}

#[tauri::command]
#[tracing::instrument(skip_all, err(Debug))]
pub async fn webhook_list(state: tauri::State<'_, AppState>) -> Result<Vec<WebhookView>, ApiError> {
    Ok(saved::list(&state.store).await?)
}

/// `url` and `secret` are credentials: skipped by the log, kept only in the keychain.
#[tauri::command]
#[tracing::instrument(skip(state, url, secret), err(Debug))]
pub async fn webhook_add(
    state: tauri::State<'_, AppState>,
    kind: String,
    label: String,
    url: Secret,
    secret: Option<Secret>,
) -> Result<WebhookView, ApiError> {
    Ok(usecase::webhook::add(&state.context(), &kind, &label, &url, secret).await?)
}

#[tauri::command]
#[tracing::instrument(skip(state), err(Debug))]
pub async fn webhook_remove(state: tauri::State<'_, AppState>, id: i64) -> Result<(), ApiError> {
    Ok(saved::remove(&state.store, id).await?)
}

#[tauri::command]
#[tracing::instrument(skip(state), err(Debug))]
pub async fn webhook_test(
    state: tauri::State<'_, AppState>,
    id: i64,
) -> Result<Delivery, ApiError> {
    Ok(usecase::webhook::test(&state.context(), id).await?)
}

/// The tray's words in the UI's language (the tray is drawn by Rust, the text lives in the
/// locale files).
#[tauri::command]
#[tracing::instrument(skip_all)]
pub fn tray_labels(board: tauri::State<'_, ReminderBoard>, labels: TrayLabels) {
    board.set_labels(labels);
    board.wake();
}

/// Whether the app starts at login.
#[tauri::command]
#[tracing::instrument(skip_all, err(Debug))]
pub fn autostart_enabled(app: tauri::AppHandle) -> Result<bool, ApiError> {
    use tauri_plugin_autostart::ManagerExt;
    app.autolaunch()
        .is_enabled()
        .map_err(|err| AdapterError::Autostart(err.to_string()).into())
}

#[tauri::command]
#[tracing::instrument(skip(app), err(Debug))]
pub fn autostart_set(app: tauri::AppHandle, enabled: bool) -> Result<(), ApiError> {
    use tauri_plugin_autostart::ManagerExt;
    let launcher = app.autolaunch();
    if enabled {
        launcher.enable()
    } else {
        launcher.disable()
    }
    .map_err(|err| AdapterError::Autostart(err.to_string()).into())
}
