//! The reminder scheduler: a background task that asks core what is due every
//! [`TICK`] (and at once after a wake from sleep, a snooze or new rules), records what fired,
//! and hands it to the sinks: the in-app popup (an event with the open list), desktop
//! notifications, the saved webhooks and the tray.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use chrono::{DateTime, Utc};
use leasehold_core::remind::{self, Reminder, ReminderKind};
use leasehold_core::webhook::{self, saved, WebhookMessage};
use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Emitter, Manager};
use ts_rs::TS;

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

/// What the popup shows.
#[derive(Debug, Clone, Default, Serialize, TS)]
#[ts(export)]
pub struct Board {
    pub open: Vec<Reminder>,
    /// Inside the quiet hours: new reminders wait.
    pub quiet: bool,
    /// The last tick; `null` before the first.
    pub checked_at: Option<DateTime<Utc>>,
}

/// The words Rust shows outside the window (the tray, a job's desktop notification), sent by
/// the UI in its language.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct TrayLabels {
    pub open: String,
    pub quit: String,
    /// "{rate} {currency}/h" pattern for a running instance's line.
    pub per_hour: String,
    /// "may cost {rate} {currency}/h" pattern for an instance whose stop or release the
    /// provider has not confirmed.
    #[serde(default = "default_may_cost")]
    pub may_cost: String,
    /// "Total {rate}" pattern.
    pub total: String,
    /// Shown when nothing bills.
    pub nothing_billing: String,
    /// "{job} finished on {instance}" pattern (see `jobs_watch`).
    pub job_succeeded: String,
    /// "{job} failed on {instance} (exit {code})" pattern.
    pub job_failed: String,
    /// "{job} was cancelled on {instance}" pattern.
    pub job_cancelled: String,
    /// "{job} on {instance} is lost" pattern (the instance restarted, or its folder is gone).
    pub job_lost: String,
    /// "New instance on your {provider} account: {name}" pattern (see `accounts_watch`).
    pub account_new_instance: String,
    /// "Your {gpu} is on — billing {rate} since {since}" pattern: a power-on hunt's success
    /// (see `keeper_watch`); `{rate}` is filled with the `per_hour` pattern.
    #[serde(default = "default_keeper_on")]
    pub keeper_on: String,
    /// "{name} · waiting for a GPU ({tries} tries so far)": a hunt under way.
    #[serde(default = "default_keeper_hunting")]
    pub keeper_hunting: String,
    /// "Power on {name} when a GPU frees up": start a hunt from the tray.
    #[serde(default = "default_keeper_hunt_start")]
    pub keeper_hunt_start: String,
    /// "{gpu} at {price} per GPU on {provider} ({region})": a market alert that holds;
    /// `{price}` is filled with the `per_hour` pattern.
    #[serde(default = "default_market_alert")]
    pub market_alert: String,
    /// "budget gone in {minutes} min": a tray line whose budget runs out soon.
    #[serde(default = "default_budget_minutes_left")]
    pub budget_minutes_left: String,
    /// "budget spent": a tray line over its budget.
    #[serde(default = "default_budget_spent")]
    pub budget_spent: String,
}

fn default_budget_minutes_left() -> String {
    "budget gone in {minutes} min".into()
}

fn default_budget_spent() -> String {
    "budget spent".into()
}

fn default_market_alert() -> String {
    "{gpu} at {price} per GPU on {provider} ({region})".into()
}

fn default_keeper_hunting() -> String {
    "{name} · waiting for a GPU ({tries} tries so far)".into()
}

fn default_keeper_hunt_start() -> String {
    "Power on {name} when a GPU frees up".into()
}

fn default_may_cost() -> String {
    "may cost {rate} {currency}/h".into()
}

fn default_keeper_on() -> String {
    "Your {gpu} is on — billing {rate} since {since}".into()
}

impl Default for TrayLabels {
    fn default() -> Self {
        Self {
            open: "Open Leasehold".into(),
            quit: "Quit".into(),
            per_hour: "{rate} {currency}/h".into(),
            may_cost: default_may_cost(),
            total: "Total {rate}".into(),
            nothing_billing: "Nothing is billing".into(),
            job_succeeded: "{job} finished on {instance}".into(),
            job_failed: "{job} failed on {instance} (exit {code})".into(),
            job_cancelled: "{job} was cancelled on {instance}".into(),
            job_lost:
                "{job} on {instance} is lost: the instance restarted or its job folder is gone"
                    .into(),
            account_new_instance: "New instance on your {provider} account: {name}".into(),
            keeper_on: default_keeper_on(),
            keeper_hunting: default_keeper_hunting(),
            keeper_hunt_start: default_keeper_hunt_start(),
            market_alert: default_market_alert(),
            budget_minutes_left: default_budget_minutes_left(),
            budget_spent: default_budget_spent(),
        }
    }
}

/// The scheduler's shared state, managed by Tauri.
#[derive(Default)]
pub struct ReminderBoard {
    // std mutexes: held for a clone or an assignment, never across an await.
    board: Mutex<Board>,
    labels: Mutex<TrayLabels>,
    wake: tokio::sync::Notify,
    /// The tray icon exists: closing the window hides it instead of quitting.
    pub tray_ready: AtomicBool,
}

impl ReminderBoard {
    pub fn current(&self) -> Board {
        self.board
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn set(&self, board: Board) {
        *self
            .board
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = board;
    }

    /// Drop a reminder from the popup at once (the next tick confirms it).
    pub fn forget(&self, instance_id: i64, kind: ReminderKind) {
        let mut board = self
            .board
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        board
            .open
            .retain(|r| !(r.instance_id == instance_id && r.kind == kind));
    }

    pub fn labels(&self) -> TrayLabels {
        self.labels
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    pub fn set_labels(&self, labels: TrayLabels) {
        *self
            .labels
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = labels;
    }

    /// Tick now instead of at the next interval.
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    pub fn has_tray(&self) -> bool {
        self.tray_ready.load(Ordering::Relaxed)
    }
}

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
            () = board.wake.notified() => last = None,
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
