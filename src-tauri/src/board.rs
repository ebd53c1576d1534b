//! What the reminder scheduler, the tray and the commands share: the popup's open reminders,
//! the words Rust shows outside the window in the UI's language, and the scheduler's wake-up.
//! Kept apart from both the scheduler (`reminders`) and the tray (`tray`), which each read it,
//! so neither imports the other's home.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use leasehold_core::remind::{Reminder, ReminderKind};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

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

    pub fn set(&self, board: Board) {
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

    /// Resolves at the next [`ReminderBoard::wake`]: the scheduler's early tick.
    pub fn woken(&self) -> tokio::sync::futures::Notified<'_> {
        self.wake.notified()
    }

    pub fn has_tray(&self) -> bool {
        self.tray_ready.load(Ordering::Relaxed)
    }
}
