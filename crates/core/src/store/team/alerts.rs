//! Team "left running" alerts' rows (migration 0190): the team's alert settings and the other
//! members' idle reports as last pulled, and (for `crate::team::verify`) a laptop setting and the
//! last Verify runs. `crate::team::alerts` and `team::verify` decide; this only reads and writes.

use chrono::{DateTime, Utc};
use sqlx::SqliteConnection;

use crate::store::StoreError;

/// `(recipients as a JSON list, after_minutes, set_by)`, if the team ever set them.
pub async fn settings(
    conn: &mut SqliteConnection,
) -> Result<Option<(String, i64, String)>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT recipients, after_minutes, set_by FROM team_alert_settings WHERE id = 1",
    )
    .fetch_optional(conn)
    .await?)
}

pub async fn replace_settings(
    conn: &mut SqliteConnection,
    settings: Option<(&str, i64, &str)>,
) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM team_alert_settings")
        .execute(&mut *conn)
        .await?;
    if let Some((recipients, after_minutes, set_by)) = settings {
        sqlx::query(
            "INSERT INTO team_alert_settings (id, recipients, after_minutes, set_by)
             VALUES (1, ?, ?, ?)",
        )
        .bind(recipients)
        .bind(after_minutes)
        .bind(set_by)
        .execute(conn)
        .await?;
    }
    Ok(())
}

/// One instance's idle stretch as a member's app measured it.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct IdleRow {
    pub instance_uid: String,
    pub idle_since: Option<DateTime<Utc>>,
    pub idle_minutes: i64,
    pub measured_at: DateTime<Utc>,
    pub reported_by: String,
}

pub async fn idle_reports(conn: &mut SqliteConnection) -> Result<Vec<IdleRow>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT instance_uid, idle_since, idle_minutes, measured_at, reported_by FROM team_idle
         ORDER BY instance_uid",
    )
    .fetch_all(conn)
    .await?)
}

pub async fn replace_idle_reports(
    conn: &mut SqliteConnection,
    rows: &[IdleRow],
) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM team_idle")
        .execute(&mut *conn)
        .await?;
    for row in rows {
        sqlx::query(
            "INSERT INTO team_idle (instance_uid, idle_since, idle_minutes, measured_at, reported_by)
             VALUES (?, ?, ?, ?, ?)",
        )
        .bind(&row.instance_uid)
        .bind(row.idle_since)
        .bind(row.idle_minutes)
        .bind(row.measured_at)
        .bind(&row.reported_by)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// A setting of this laptop's, in the `settings` table (one JSON value per key, no migration).
pub async fn setting(conn: &mut SqliteConnection, key: &str) -> Result<Option<String>, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT value FROM settings WHERE key = ?")
            .bind(key)
            .fetch_optional(conn)
            .await?,
    )
}

pub async fn put_setting(
    conn: &mut SqliteConnection,
    key: &str,
    value: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
    )
    .bind(key)
    .bind(value)
    .bind(now)
    .execute(conn)
    .await?;
    Ok(())
}

/// The last Verify of each instance run here: `(instance uid, collected_at, errors, warnings,
/// finding keys as JSON)`.
pub async fn last_verify_runs(
    conn: &mut SqliteConnection,
) -> Result<Vec<(String, DateTime<Utc>, i64, i64, String)>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT i.uid, p.collected_at, p.errors, p.warnings, p.finding_keys
         FROM probe_runs p JOIN instances i ON i.id = p.instance_id
         WHERE i.uid IS NOT NULL AND p.id = (
             SELECT q.id FROM probe_runs q WHERE q.instance_id = p.instance_id
             ORDER BY q.collected_at DESC, q.id DESC LIMIT 1)
         ORDER BY i.uid",
    )
    .fetch_all(conn)
    .await?)
}

/// The uids of the instances with a GPU minute recorded since `since` (what the monitor watches now).
pub async fn watched_since(
    conn: &mut SqliteConnection,
    since: DateTime<Utc>,
) -> Result<Vec<String>, StoreError> {
    Ok(sqlx::query_scalar(
        // One primary-key range look-up per instance ((instance_id, minute, gpu_index)).
        "SELECT i.uid FROM instances i WHERE i.uid IS NOT NULL AND EXISTS (
             SELECT 1 FROM gpu_minutes g WHERE g.instance_id = i.id AND g.minute >= ?)",
    )
    .bind(since)
    .fetch_all(conn)
    .await?)
}
