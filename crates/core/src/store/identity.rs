//! This database file's own id (migration 0290): random, made once, never changed.

use sqlx::SqliteConnection;

use super::StoreError;

/// The id; a file whose row is missing (edited by hand) is reported as corrupt.
pub async fn database_id(conn: &mut SqliteConnection) -> Result<String, StoreError> {
    let id: Option<String> = sqlx::query_scalar("SELECT id FROM database_identity WHERE only = 1")
        .fetch_optional(&mut *conn)
        .await?;
    id.filter(|id| !id.is_empty()).ok_or(StoreError::Corrupt {
        what: "database identity",
        value: String::new(),
    })
}
