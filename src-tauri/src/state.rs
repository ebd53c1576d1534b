//! What every command shares, handed to Tauri with `app.manage` (no globals).

use std::path::PathBuf;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use leasehold_core::connect::LiveTargets;
use leasehold_core::monitor::live::StreamLanguages;
use leasehold_core::store::{OpenFailure, Store, StoreError};
use leasehold_core::update::RunningWork;
use leasehold_core::usecase::Context;
use leasehold_core::verify::RunningChecks;
use leasehold_core::{ApiError, Clock, SystemClock};

/// Set this to use another database file (tests, a second profile); the CLI's `--db` twin.
pub const DB_ENV: &str = "LEASEHOLD_DB";

pub struct AppState {
    pub store: Store,
    pub db_path: PathBuf,
    pub log_dir: PathBuf,
    /// Open SSH connections by instance, shared by Verify, terminals and port forwards.
    pub live: LiveTargets,
    /// Verify runs the UI can stop, by instance.
    pub checks: RunningChecks,
    /// Where every command's "now" comes from.
    pub clock: Arc<dyn Clock>,
    /// The language each open GPU dashboard's findings are worded in.
    pub monitor_languages: StreamLanguages,
    /// Backups, followed installs, stops and releases running now: an update waits for them.
    pub running_work: Arc<RunningWork>,
    /// The power-on hunts whose loop runs in this app (`keeper_watch`).
    pub hunts: crate::hunt_runners::HuntRunners,
}

impl AppState {
    pub fn db_path_from_env() -> PathBuf {
        std::env::var_os(DB_ENV)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(leasehold_core::paths::default_db_path)
    }

    /// The state around an open store (`db_path` is the file the user's data lives in, even when
    /// `store` is a read-only copy of it).
    pub fn new(store: Store, db_path: PathBuf, log_dir: PathBuf) -> Self {
        Self {
            store,
            db_path,
            log_dir,
            live: LiveTargets::default(),
            checks: RunningChecks::default(),
            clock: Arc::new(SystemClock),
            monitor_languages: StreamLanguages::default(),
            running_work: Arc::default(),
            hunts: crate::hunt_runners::HuntRunners::default(),
        }
    }

    /// A pooled connection for one command.
    pub async fn conn(&self) -> Result<sqlx::pool::PoolConnection<sqlx::Sqlite>, ApiError> {
        self.store
            .pool()
            .acquire()
            .await
            .map_err(|err| ApiError::from(StoreError::from(err)))
    }

    /// The handles a use case borrows (`leasehold_core::usecase`): a command is one call with it.
    pub fn context(&self) -> Context<'_> {
        Context {
            store: &self.store,
            live: &self.live,
            checks: &self.checks,
            languages: &self.monitor_languages,
            running_work: &self.running_work,
            clock: self.clock.as_ref(),
        }
    }

    /// "Now" for a command: read once from the clock and handed to core, which never reads it.
    pub fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }
}

/// How the database opened at start, and what the recovery screen did since. Always managed;
/// `AppState` joins it once a store is open (at start, or after a recovery action).
pub struct Startup {
    pub db_path: PathBuf,
    pub log_dir: PathBuf,
    /// "Now" for the recovery actions (the time in a kept file's name).
    pub clock: Arc<dyn Clock>,
    status: std::sync::Mutex<StoreStatus>,
}

/// What the UI asks first: can the app start, and on what.
#[derive(Debug, Clone, Default, serde::Serialize, ts_rs::TS)]
#[ts(export)]
pub struct StoreStatus {
    /// Why the database could not be opened; `null` once a store is open.
    pub failure: Option<OpenFailure>,
    /// Set when the app runs on a read-only copy: the copy's path.
    pub read_only_copy: Option<String>,
    /// Set after "start fresh": where the old file was kept.
    pub kept_as: Option<String>,
}

impl Startup {
    pub fn new(db_path: PathBuf, log_dir: PathBuf) -> Self {
        Self {
            db_path,
            log_dir,
            clock: Arc::new(SystemClock),
            status: std::sync::Mutex::default(),
        }
    }

    pub fn status(&self) -> StoreStatus {
        self.lock().clone()
    }

    /// A store is open: hand it to the commands. `read_only_copy` is the copy's path when the
    /// store is one.
    pub fn opened(&self, app: &tauri::AppHandle, store: Store, read_only_copy: Option<PathBuf>) {
        use tauri::Manager;
        let state = AppState::new(store, self.db_path.clone(), self.log_dir.clone());
        app.manage(state);
        let mut status = self.lock();
        status.failure = None;
        status.read_only_copy = read_only_copy.map(|p| p.display().to_string());
    }

    pub fn failed(&self, failure: OpenFailure) {
        self.lock().failure = Some(failure);
    }

    pub fn kept_as(&self, path: &std::path::Path) {
        self.lock().kept_as = Some(path.display().to_string());
    }

    // A std mutex: held for a copy or an assignment, never across an await.
    fn lock(&self) -> std::sync::MutexGuard<'_, StoreStatus> {
        self.status
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
