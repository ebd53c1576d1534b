//! What every command shares, handed to Tauri with `app.manage` (no globals).

use std::path::PathBuf;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use leasehold_core::connect::LiveTargets;
use leasehold_core::ssh::{ConnectOptions, SshTarget};
use leasehold_core::store::{Store, StoreError};
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
}

impl AppState {
    pub fn db_path_from_env() -> PathBuf {
        std::env::var_os(DB_ENV)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(leasehold_core::paths::default_db_path)
    }

    pub async fn open(db_path: PathBuf, log_dir: PathBuf) -> Result<Self, StoreError> {
        let store = Store::open(&db_path).await?;
        Ok(Self {
            store,
            db_path,
            log_dir,
            live: LiveTargets::default(),
            checks: RunningChecks::default(),
            clock: Arc::new(SystemClock),
        })
    }

    /// A pooled connection for one command.
    pub async fn conn(&self) -> Result<sqlx::pool::PoolConnection<sqlx::Sqlite>, ApiError> {
        self.store
            .pool()
            .acquire()
            .await
            .map_err(|err| ApiError::from(StoreError::from(err)))
    }

    /// "Now" for a command: read once from the clock and handed to core, which never reads it.
    pub fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    /// The open connection of `instance`, dialling its saved target when there is none.
    pub async fn live_target(&self, instance: &str) -> Result<Arc<SshTarget>, ApiError> {
        let mut conn = self.conn().await?;
        Ok(self
            .live
            .get_or_connect(&mut conn, instance, ConnectOptions::default())
            .await?)
    }
}
