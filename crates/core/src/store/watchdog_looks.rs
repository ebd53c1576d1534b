//! Rows of `watchdog_looks` (migration 0320): the newest read of each instance's watchdog, kept
//! so the instance's status can say whether it protects the instance without dialling it.

use chrono::{DateTime, Utc};
use sqlx::SqliteConnection;

use super::StoreError;

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct WatchdogLookRow {
    pub instance_id: i64,
    pub looked_at: DateTime<Utc>,
    pub installed: bool,
    pub running: bool,
    pub phase: Option<String>,
    /// Comma-separated signal names the watchdog could not read; empty when none.
    pub unreadable: String,
}

impl WatchdogLookRow {
    /// The signals it could not read, in the order it named them.
    pub fn unreadable_signals(&self) -> Vec<String> {
        self.unreadable
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    }
}

/// Keep `row` as the instance's newest look.
pub async fn upsert(conn: &mut SqliteConnection, row: &WatchdogLookRow) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO watchdog_looks (instance_id, looked_at, installed, running, phase, unreadable)
         VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (instance_id) DO UPDATE SET
             looked_at = excluded.looked_at, installed = excluded.installed,
             running = excluded.running, phase = excluded.phase, unreadable = excluded.unreadable",
    )
    .bind(row.instance_id)
    .bind(row.looked_at)
    .bind(row.installed)
    .bind(row.running)
    .bind(&row.phase)
    .bind(&row.unreadable)
    .execute(conn)
    .await?;
    Ok(())
}

/// The newest look at `instance_id`'s watchdog, if it was ever read.
pub async fn of_instance(
    conn: &mut SqliteConnection,
    instance_id: i64,
) -> Result<Option<WatchdogLookRow>, StoreError> {
    Ok(sqlx::query_as::<_, WatchdogLookRow>(
        "SELECT instance_id, looked_at, installed, running, phase, unreadable
         FROM watchdog_looks WHERE instance_id = ?",
    )
    .bind(instance_id)
    .fetch_optional(conn)
    .await?)
}

/// Every instance's newest look.
pub async fn all(conn: &mut SqliteConnection) -> Result<Vec<WatchdogLookRow>, StoreError> {
    Ok(sqlx::query_as::<_, WatchdogLookRow>(
        "SELECT instance_id, looked_at, installed, running, phase, unreadable FROM watchdog_looks",
    )
    .fetch_all(conn)
    .await?)
}
