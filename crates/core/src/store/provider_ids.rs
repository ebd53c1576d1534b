//! Rows of `provider_ids`: the provider's own id of each rental, which its stop API needs.

use chrono::{DateTime, Utc};
use sqlx::SqliteConnection;

use super::StoreError;

/// Insert or replace the provider id of `instance_id`.
pub async fn upsert(
    conn: &mut SqliteConnection,
    instance_id: i64,
    provider_instance_id: &str,
    saved_at: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO provider_ids (instance_id, provider_instance_id, saved_at) VALUES (?, ?, ?)
         ON CONFLICT (instance_id) DO UPDATE SET
             provider_instance_id = excluded.provider_instance_id, saved_at = excluded.saved_at",
    )
    .bind(instance_id)
    .bind(provider_instance_id)
    .bind(saved_at)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn find(
    conn: &mut SqliteConnection,
    instance_id: i64,
) -> Result<Option<String>, StoreError> {
    Ok(sqlx::query_scalar::<_, String>(
        "SELECT provider_instance_id FROM provider_ids WHERE instance_id = ?",
    )
    .bind(instance_id)
    .fetch_optional(conn)
    .await?)
}
