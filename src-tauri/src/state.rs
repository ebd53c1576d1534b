//! What every command shares, handed to Tauri with `app.manage` (no globals).

use std::path::{Path, PathBuf};
use std::str::FromStr;

use std::sync::Arc;

use leasehold_core::connect::LiveTargets;
use leasehold_core::ssh::{ConnectOptions, SshTarget};
use leasehold_core::ApiError;

use crate::cancel::Cancellable;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool};

/// Set this to use another database file (tests, a second profile); the CLI's `--db` twin.
pub const DB_ENV: &str = "LEASEHOLD_DB";

pub struct AppState {
    pub db: SqlitePool,
    pub db_path: PathBuf,
    pub log_dir: PathBuf,
    /// Open SSH connections by instance, shared by Verify, terminals and port forwards.
    pub live: LiveTargets,
    /// Verify runs the UI can stop, by instance.
    pub checks: Cancellable,
}

impl AppState {
    pub fn db_path_from_env() -> PathBuf {
        std::env::var_os(DB_ENV)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(leasehold_core::paths::default_db_path)
    }

    pub async fn open(db_path: PathBuf, log_dir: PathBuf) -> Result<Self, String> {
        let db = open_db(&db_path).await.map_err(|err| err.to_string())?;
        Ok(Self {
            db,
            db_path,
            log_dir,
            live: LiveTargets::default(),
            checks: Cancellable::default(),
        })
    }

    /// A pooled connection for one command.
    pub async fn conn(&self) -> Result<sqlx::pool::PoolConnection<sqlx::Sqlite>, ApiError> {
        self.db
            .acquire()
            .await
            .map_err(|err| ApiError::new("store.query", err.to_string()))
    }
}

impl AppState {
    /// The open connection of `instance`, dialling its saved target when there is none.
    pub async fn live_target(&self, instance: &str) -> Result<Arc<SshTarget>, ApiError> {
        let mut conn = self.conn().await?;
        Ok(self
            .live
            .get_or_connect(&mut conn, instance, ConnectOptions::default())
            .await?)
    }
}

async fn open_db(path: &Path) -> Result<SqlitePool, Box<dyn std::error::Error>> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let options = SqliteConnectOptions::from_str("sqlite://")?
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .foreign_keys(true);
    let pool = SqlitePool::connect_with(options).await?;
    sqlx::migrate!("../crates/core/migrations")
        .run(&pool)
        .await?;
    Ok(pool)
}
