//! Rows of saved SSH targets: one per instance, replaced when the provider hands out a new port
//! (AutoDL does on every power-on). Never holds a secret.

use chrono::{DateTime, Utc};
use sqlx::{FromRow, SqliteConnection};

use super::StoreError;

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct SshTargetRow {
    pub instance_id: i64,
    pub host: String,
    pub port: i64,
    pub user: String,
    pub identity_file: Option<String>,
    pub jump: String,
    /// `key`, `agent` or `password`.
    pub auth: String,
    pub host_key_fingerprint: Option<String>,
    pub updated_at: DateTime<Utc>,
}

/// Insert or replace the instance's target.
#[tracing::instrument(skip_all, err, fields(instance_id = row.instance_id))]
pub async fn save(conn: &mut SqliteConnection, row: &SshTargetRow) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO ssh_targets
             (instance_id, host, port, user, identity_file, jump, auth, host_key_fingerprint,
              updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (instance_id) DO UPDATE SET
             host = excluded.host, port = excluded.port, user = excluded.user,
             identity_file = excluded.identity_file, jump = excluded.jump, auth = excluded.auth,
             host_key_fingerprint = excluded.host_key_fingerprint,
             updated_at = excluded.updated_at",
    )
    .bind(row.instance_id)
    .bind(&row.host)
    .bind(row.port)
    .bind(&row.user)
    .bind(&row.identity_file)
    .bind(&row.jump)
    .bind(&row.auth)
    .bind(&row.host_key_fingerprint)
    .bind(row.updated_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// The instance's target, if one was saved.
#[tracing::instrument(skip(conn), err)]
pub async fn for_instance(
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

/// Forget the instance's target.
#[tracing::instrument(skip(conn), err)]
pub async fn delete(conn: &mut SqliteConnection, instance_id: i64) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM ssh_targets WHERE instance_id = ?")
        .bind(instance_id)
        .execute(conn)
        .await?;
    Ok(())
}
