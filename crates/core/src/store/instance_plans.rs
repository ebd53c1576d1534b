//! Rows of planned tasks: the estimator's request per instance, as JSON text.
//! `crate::explain` decodes and validates them.

use chrono::{DateTime, Utc};
use sqlx::SqliteConnection;

use super::StoreError;

pub async fn upsert(
    conn: &mut SqliteConnection,
    instance_id: i64,
    request: &str,
    saved_at: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO instance_plans (instance_id, request, saved_at) VALUES (?, ?, ?)
         ON CONFLICT (instance_id) DO UPDATE SET request = excluded.request, saved_at = excluded.saved_at",
    )
    .bind(instance_id)
    .bind(request)
    .bind(saved_at)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn find(
    conn: &mut SqliteConnection,
    instance_id: i64,
) -> Result<Option<String>, StoreError> {
    Ok(
        sqlx::query_scalar::<_, String>("SELECT request FROM instance_plans WHERE instance_id = ?")
            .bind(instance_id)
            .fetch_optional(conn)
            .await?,
    )
}
