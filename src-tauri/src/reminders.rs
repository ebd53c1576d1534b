//! The reminder scheduler: a background task that asks core what is due every
//! [`TICK`] (and at once after a wake from sleep, a snooze or new rules), records what fired,
//! and hands it to the sinks: the in-app popup (an event with the open list), desktop
//! notifications, the saved webhooks and the tray.

use std::time::Duration;

use chrono::{DateTime, Utc};
use leasehold_core::remind::{self, Reminder, ReminderKind};
use leasehold_core::webhook::{self, saved, WebhookMessage};
use tauri::{AppHandle, Emitter, Manager};

use crate::board::{Board, ReminderBoard};
use crate::state::AppState;
use crate::tray;

/// How often the triggers are evaluated; with one-minute GPU samples, a reminder reaches the
/// popup at most this long plus one sample after its condition holds.
pub const TICK: Duration = Duration::from_secs(30);
/// How often the wall clock is looked at: the timer does not run while the laptop sleeps, so a
/// short step notices a wake soon and ticks at once.
const STEP: Duration = Duration::from_secs(5);
/// The event the popup listens to.
pub const BOARD_EVENT: &str = "reminders";

/// Start the scheduler. It waits for the database (the recovery screen may still be showing).
pub fn start(app: &AppHandle) {
    app.manage(ReminderBoard::default());
    let app = app.clone();
    tauri::async_runtime::spawn(async move { run(app).await });
}

async fn run(app: AppHandle) {
    let mut last: Option<DateTime<Utc>> = None;
    loop {
        let board = app.state::<ReminderBoard>();
        if let Some(state) = app.try_state::<AppState>() {
            let now = state.now();
            let due = last
                .is_none_or(|at| now - at >= chrono::Duration::from_std(TICK).unwrap_or_default());
            if due {
                if let Some(at) = last {
                    if now - at > chrono::Duration::from_std(TICK * 3).unwrap_or_default() {
                        tracing::info!(since = %at, "catching up after a pause (sleep or a busy machine)");
                    }
                }
                last = Some(now);
                if let Err(err) = tick_once(&app, &state, &board, now).await {
                    tracing::warn!(%err, "reminder tick failed");
                }
            }
        }
        tokio::select! {
            () = tokio::time::sleep(STEP) => {}
            () = board.woken() => last = None,
        }
    }
}

async fn tick_once(
    app: &AppHandle,
    state: &AppState,
    board: &ReminderBoard,
    now: DateTime<Utc>,
) -> Result<(), leasehold_core::ApiError> {
    let round = remind::round(&state.store, now, &chrono::Local).await?;
    board.set(Board {
        open: round.open,
        quiet: round.quiet,
        checked_at: Some(now),
    });
    if let Err(err) = app.emit(BOARD_EVENT, board.current()) {
        tracing::warn!(%err, "could not tell the window about reminders");
    }
    for reminder in &round.fired {
        if reminder.params.contains_key("scope") {
            tracing::info!(team = %reminder.instance, kind = reminder.kind.as_str(), "team reminder fired");
        } else {
            tracing::info!(instance = %reminder.instance, kind = reminder.kind.as_str(), "reminder fired");
        }
        notify_desktop(app, reminder);
    }
    if round.rules.power_off_at_budget {
        for reminder in round
            .fired
            .iter()
            .filter(|r| r.kind == ReminderKind::Budget100 && !r.params.contains_key("scope"))
        {
            power_off_over_budget(state, reminder.instance.clone());
        }
    }
    if !round.fired.is_empty() {
        send_webhooks(state.store.clone(), round.fired, now);
    }
    tray::refresh(app, state, board, now).await;
    Ok(())
}

/// The opt-in "power off at 100 % of the budget": the same Stop as the dialog's (core
/// `stop::by_plan`), off the tick's path; a plan that needs the user (the console, a missing
/// key) leaves the reminder to speak.
fn power_off_over_budget(state: &AppState, instance: String) {
    let (store, clock) = (state.store.clone(), state.clock.clone());
    tauri::async_runtime::spawn(async move {
        let endpoints = leasehold_core::stop::ApiEndpoints::from_env();
        let wait = leasehold_core::stop::StopWait::default();
        match leasehold_core::stop::by_plan(&store, &instance, &endpoints, wait, clock.as_ref())
            .await
        {
            Ok(report) => {
                tracing::info!(%instance, via = ?report.via, "powered off at 100 % of budget");
            }
            Err(err) => tracing::warn!(%instance, %err, "could not power off at 100 % of budget"),
        }
    });
}

/// A desktop notification; where the desktop has no notification service (a bare X server),
/// the popup is still there, so a failure is only logged.
fn notify_desktop(app: &AppHandle, reminder: &Reminder) {
    use tauri_plugin_notification::NotificationExt;
    let shown = app
        .notification()
        .builder()
        .title(format!("Leasehold · {}", reminder.instance))
        .body(format!(
            "{} — {} {}/h",
            reminder.detail, reminder.burn_rate_per_hour, reminder.currency
        ))
        .show();
    if let Err(err) = shown {
        tracing::debug!(%err, "no desktop notification service");
    }
}

/// Post each fired reminder to every saved webhook, off the scheduler's path (retries can take
/// seconds).
fn send_webhooks(store: leasehold_core::store::Store, fired: Vec<Reminder>, now: DateTime<Utc>) {
    tauri::async_runtime::spawn(async move {
        let client = match webhook::client() {
            Ok(client) => client,
            Err(err) => {
                tracing::warn!(%err, "no HTTP client for webhooks");
                return;
            }
        };
        for reminder in &fired {
            let message = WebhookMessage::from_reminder(reminder);
            match saved::send_to_all(&client, &store, &message, now).await {
                Ok(results) => {
                    for (hook, outcome) in results {
                        if let Err(err) = outcome {
                            tracing::warn!(id = hook.id, kind = hook.kind.as_str(), %err, "webhook not delivered");
                        }
                    }
                }
                Err(err) => tracing::warn!(%err, "could not read the saved webhooks"),
            }
        }
    });
}
