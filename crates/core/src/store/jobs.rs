//! Rows of `jobs`: detached remote jobs and where their log was last read. `crate::job::record`
//! turns them into domain values.

use chrono::{DateTime, Utc};
use sqlx::{FromRow, SqliteConnection};

use super::StoreError;

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct JobRow {
    pub id: String,
    pub instance_id: Option<i64>,
    pub target: String,
    pub ssh_command: String,
    pub identity_files: String,
    pub known_hosts: Option<String>,
    pub name: Option<String>,
    pub recipe: Option<String>,
    pub options: String,
    pub script: String,
    pub state: String,
    pub exit_code: Option<i64>,
    pub log_bytes: i64,
    pub last_offset: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

pub async fn insert(conn: &mut SqliteConnection, row: &JobRow) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO jobs (id, instance_id, target, ssh_command, identity_files, known_hosts, name,
                           recipe, options, script, state, exit_code, log_bytes, last_offset,
                           created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(&row.id)
    .bind(row.instance_id)
    .bind(&row.target)
    .bind(&row.ssh_command)
    .bind(&row.identity_files)
    .bind(row.known_hosts.as_deref())
    .bind(row.name.as_deref())
    .bind(row.recipe.as_deref())
    .bind(&row.options)
    .bind(&row.script)
    .bind(&row.state)
    .bind(row.exit_code)
    .bind(row.log_bytes)
    .bind(row.last_offset)
    .bind(row.created_at)
    .bind(row.updated_at)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn find(conn: &mut SqliteConnection, id: &str) -> Result<Option<JobRow>, StoreError> {
    Ok(
        sqlx::query_as::<_, JobRow>("SELECT * FROM jobs WHERE id = ?")
            .bind(id)
            .fetch_optional(conn)
            .await?,
    )
}

/// Every job, oldest first.
pub async fn list(conn: &mut SqliteConnection) -> Result<Vec<JobRow>, StoreError> {
    Ok(
        sqlx::query_as::<_, JobRow>("SELECT * FROM jobs ORDER BY created_at, id")
            .fetch_all(conn)
            .await?,
    )
}

/// Record a state reading. The offset only ever moves forward (two attaches at once must not
/// move it back).
pub async fn update_state(
    conn: &mut SqliteConnection,
    id: &str,
    state: &str,
    exit_code: Option<i64>,
    log_bytes: i64,
    at: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE jobs SET state = ?, exit_code = ?, log_bytes = ?, updated_at = ? WHERE id = ?",
    )
    .bind(state)
    .bind(exit_code)
    .bind(log_bytes)
    .bind(at)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() > 0)
}

pub async fn update_offset(
    conn: &mut SqliteConnection,
    id: &str,
    offset: i64,
    at: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE jobs SET last_offset = max(last_offset, ?), updated_at = ? WHERE id = ?",
    )
    .bind(offset)
    .bind(at)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() > 0)
}
