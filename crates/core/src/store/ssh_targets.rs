//! Rows of `ssh_targets`: how each instance is reached, without secrets. `crate::connect` turns
//! them into domain values.

use chrono::{DateTime, Utc};
use sqlx::{FromRow, SqliteConnection};

use super::StoreError;

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct SshTargetRow {
    pub instance_id: i64,
    pub ssh_command: String,
    pub auth_method: String,
    pub key_path: Option<String>,
    pub host: String,
    pub port: i64,
    pub user: String,
    pub saved_at: DateTime<Utc>,
}

/// Insert or replace the target of `row.instance_id`.
pub async fn upsert(conn: &mut SqliteConnection, row: &SshTargetRow) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO ssh_targets (instance_id, ssh_command, auth_method, key_path, host, port, user, saved_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (instance_id) DO UPDATE SET
             ssh_command = excluded.ssh_command, auth_method = excluded.auth_method,
             key_path = excluded.key_path, host = excluded.host, port = excluded.port,
             user = excluded.user, saved_at = excluded.saved_at",
    )
    .bind(row.instance_id)
    .bind(&row.ssh_command)
    .bind(&row.auth_method)
    .bind(row.key_path.as_deref())
    .bind(&row.host)
    .bind(row.port)
    .bind(&row.user)
    .bind(row.saved_at)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn find(
    conn: &mut SqliteConnection,
    instance_id: i64,
) -> Result<Option<SshTargetRow>, StoreError> {
    Ok(
        sqlx::query_as::<_, SshTargetRow>("SELECT * FROM ssh_targets WHERE instance_id = ?")
            .bind(instance_id)
            .fetch_optional(conn)
            .await?,
    )
}

pub async fn delete(conn: &mut SqliteConnection, instance_id: i64) -> Result<bool, StoreError> {
    let done = sqlx::query("DELETE FROM ssh_targets WHERE instance_id = ?")
        .bind(instance_id)
        .execute(conn)
        .await?;
    Ok(done.rows_affected() > 0)
}
