//! The notices a pull stored for the user (`team_conflicts`): a name kept under another name, a
//! row this version cannot read; dismissed per laptop (migration 0220).

use chrono::{DateTime, Utc};
use sqlx::{FromRow, SqliteConnection};

use crate::store::StoreError;

/// A conflict a pull stored for the user.
#[derive(Debug, Clone, FromRow)]
pub struct ConflictRow {
    pub key: String,
    pub kind: String,
    pub instance_uid: String,
    pub instance_name: String,
    pub member: String,
    pub detail: String,
    pub found_at: DateTime<Utc>,
}

/// Store a notice unless one with its key is here; whether it is new.
pub async fn record_conflict(
    conn: &mut SqliteConnection,
    row: &ConflictRow,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "INSERT INTO team_conflicts (key, kind, instance_uid, instance_name, member, detail, found_at)
         VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING",
    )
    .bind(&row.key)
    .bind(&row.kind)
    .bind(&row.instance_uid)
    .bind(&row.instance_name)
    .bind(&row.member)
    .bind(&row.detail)
    .bind(row.found_at)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() > 0)
}

pub async fn stored_conflicts(conn: &mut SqliteConnection) -> Result<Vec<ConflictRow>, StoreError> {
    Ok(sqlx::query_as::<_, ConflictRow>(
        "SELECT key, kind, instance_uid, instance_name, member, detail, found_at
         FROM team_conflicts WHERE dismissed_at IS NULL ORDER BY found_at, key",
    )
    .fetch_all(conn)
    .await?)
}

/// Dismiss the stored notice `key` at `now`; whether one was listed.
pub async fn dismiss_conflict(
    conn: &mut SqliteConnection,
    key: &str,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE team_conflicts SET dismissed_at = ? WHERE key = ? AND dismissed_at IS NULL",
    )
    .bind(now)
    .bind(key)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() > 0)
}
