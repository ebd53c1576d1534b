//! The one SQLite database behind the app and the CLI.
//!
//! Why a module of its own: every other module (billing, ssh targets, probe runs, settings) keeps
//! its rows here, and all of them must open the file the same way — WAL so the app and the CLI
//! can read while one writes, foreign keys on, a busy timeout instead of instant "database is
//! locked" errors, `synchronous = NORMAL` (safe with WAL, much faster than FULL) — and run the same
//! embedded, forward-only migrations. Queries are runtime-checked (`sqlx::query_as` + `FromRow`)
//! so building needs no live database. One repository file per aggregate; writes take a
//! transaction that the caller commits only when every check passed.
//!
//! Opening checks the file (`PRAGMA quick_check`) before migrating it, so a damaged database is
//! found at start, not by whichever screen reads the broken page first; [`recovery`] says what a
//! failure to open means and offers the ways out (a read-only copy, a fresh start that keeps the
//! old file).

pub mod accounts;
pub mod backups;
pub mod bulk;
mod error;
pub mod follow_ups;
pub mod gpu_minutes;
pub mod identity;
pub mod instance_plans;
pub mod jobs;
pub mod keeper;
pub mod ledger;
pub mod market;
pub mod price_acks;
pub mod probe_runs;
pub mod provider_ids;
pub mod recovery;
pub mod reminders;
pub mod settings;
pub mod ssh_targets;
pub mod stop_checks;
pub mod team;
pub mod vast_looks;
pub mod watchdog_looks;

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::pool::PoolConnection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Sqlite, SqlitePool, Transaction};

pub use error::StoreError;
pub use recovery::{OpenFailure, OpenProblem, RecoveryAction};

/// How long a writer waits for another process's write lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// An open, migrated database.
#[derive(Debug, Clone)]
pub struct Store {
    pool: SqlitePool,
}

impl Store {
    /// Open (creating it and its parent folders when missing) and migrate the database at `path`.
    #[tracing::instrument(skip_all, err, fields(path = %path.display()))]
    pub async fn open(path: &Path) -> Result<Self, StoreError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|source| StoreError::CreateFolder {
                path: parent.display().to_string(),
                source,
            })?;
        }
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal);
        // A desktop app's database: connections stay open for the app's life instead of being
        // closed when idle and replaced every half hour (each reopen rebuilds its page cache).
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .idle_timeout(None)
            .max_lifetime(None)
            .connect_with(Self::tuned(options))
            .await
            .map_err(|source| StoreError::Open {
                path: path.display().to_string(),
                source,
            })?;
        Self::check_integrity(&pool, path).await?;
        Self::migrated(pool).await
    }

    /// `PRAGMA quick_check`: every page and index structurally sound (milliseconds for the sizes
    /// this app writes). Reports the first problem only.
    async fn check_integrity(pool: &SqlitePool, path: &Path) -> Result<(), StoreError> {
        let verdict: String = sqlx::query_scalar("PRAGMA quick_check(1)")
            .fetch_one(pool)
            .await
            .map_err(|source| StoreError::Open {
                path: path.display().to_string(),
                source,
            })?;
        if verdict == "ok" {
            Ok(())
        } else {
            Err(StoreError::Damaged {
                path: path.display().to_string(),
                detail: verdict,
            })
        }
    }

    /// A private in-memory database, migrated: one per test.
    pub async fn open_in_memory() -> Result<Self, StoreError> {
        let options = SqliteConnectOptions::from_str("sqlite::memory:").map_err(|source| {
            StoreError::Open {
                path: ":memory:".into(),
                source,
            }
        })?;
        // Every connection to `:memory:` is a different database, so keep exactly one alive.
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .min_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .connect_with(Self::tuned(options))
            .await
            .map_err(|source| StoreError::Open {
                path: ":memory:".into(),
                source,
            })?;
        Self::migrated(pool).await
    }

    fn tuned(options: SqliteConnectOptions) -> SqliteConnectOptions {
        options
            .foreign_keys(true)
            .busy_timeout(BUSY_TIMEOUT)
            .synchronous(SqliteSynchronous::Normal)
            // 16 MiB of page cache per connection (SQLite's default is 2 MiB): a team pull
            // writes tens of thousands of events into indexes keyed by random ids, and with the
            // small cache it re-reads index pages it has just written.
            .pragma("cache_size", "-16384")
    }

    async fn migrated(pool: SqlitePool) -> Result<Self, StoreError> {
        sqlx::migrate!("./migrations")
            .run(&pool)
            .await
            .map_err(StoreError::Migrate)?;
        Ok(Self { pool })
    }

    /// The pool, for repository reads.
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// One connection for a few repository reads (`store.read().await?`), handed back to the
    /// pool when dropped.
    pub async fn read(&self) -> Result<PoolConnection<Sqlite>, StoreError> {
        self.pool.acquire().await.map_err(StoreError::Query)
    }

    /// A read transaction: the reads made in it see one snapshot of the database. Dropped without
    /// `commit`, it ends having written nothing.
    pub async fn snapshot(&self) -> Result<Transaction<'static, Sqlite>, StoreError> {
        self.pool.begin().await.map_err(StoreError::Query)
    }

    /// Start a write. It takes the write lock up front (`BEGIN IMMEDIATE`), so the checks a
    /// writer makes before inserting cannot be invalidated by another process writing between
    /// them; dropping the transaction without `commit` writes nothing.
    pub async fn write(&self) -> Result<Transaction<'static, Sqlite>, StoreError> {
        self.pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::Query)
    }

    /// Close every connection (flushes the WAL); the CLI calls it before exiting.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}
