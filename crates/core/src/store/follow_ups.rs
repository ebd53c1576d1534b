//! Rows of `follow_ups`: an instance Leasehold brought up itself (a hunt's success, a rental
//! made in the app), to be connected and verified before work starts on it.

use chrono::{DateTime, Utc};
use sqlx::SqliteConnection;

use super::StoreError;

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct FollowUpRow {
    pub instance_id: i64,
    /// `hunt` or `rent`.
    pub reason: String,
    pub asked_at: DateTime<Utc>,
}

pub async fn put(
    conn: &mut SqliteConnection,
    instance_id: i64,
    reason: &str,
    at: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO follow_ups (instance_id, reason, asked_at) VALUES (?, ?, ?)
         ON CONFLICT (instance_id) DO UPDATE SET reason = excluded.reason,
             asked_at = excluded.asked_at",
    )
    .bind(instance_id)
    .bind(reason)
    .bind(at)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn of_instance(
    conn: &mut SqliteConnection,
    instance_id: i64,
) -> Result<Option<FollowUpRow>, StoreError> {
    Ok(sqlx::query_as::<_, FollowUpRow>(
        "SELECT instance_id, reason, asked_at FROM follow_ups WHERE instance_id = ?",
    )
    .bind(instance_id)
    .fetch_optional(conn)
    .await?)
}

pub async fn delete(conn: &mut SqliteConnection, instance_id: i64) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM follow_ups WHERE instance_id = ?")
        .bind(instance_id)
        .execute(conn)
        .await?;
    Ok(())
}
