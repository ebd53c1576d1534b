//! Rows of `stop_checks`: the newest look, after a stop recorded by hand, at whether the
//! machine still answers.

use chrono::{DateTime, Utc};
use sqlx::SqliteConnection;

use super::StoreError;

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct StopCheckRow {
    pub instance_id: i64,
    pub checked_at: DateTime<Utc>,
    pub answered: bool,
    pub via: String,
}

/// Keep `row` as the instance's newest look.
pub async fn upsert(conn: &mut SqliteConnection, row: &StopCheckRow) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO stop_checks (instance_id, checked_at, answered, via) VALUES (?, ?, ?, ?)
         ON CONFLICT (instance_id) DO UPDATE SET
             checked_at = excluded.checked_at, answered = excluded.answered, via = excluded.via",
    )
    .bind(row.instance_id)
    .bind(row.checked_at)
    .bind(row.answered)
    .bind(&row.via)
    .execute(conn)
    .await?;
    Ok(())
}

/// Every instance's newest look.
pub async fn all(conn: &mut SqliteConnection) -> Result<Vec<StopCheckRow>, StoreError> {
    Ok(sqlx::query_as::<_, StopCheckRow>(
        "SELECT instance_id, checked_at, answered, via FROM stop_checks",
    )
    .fetch_all(conn)
    .await?)
}
