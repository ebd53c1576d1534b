//! Rows of `backups` and `backup_items`, and of `release_checks` and `release_overrides`
//! (the release gate's memory). `crate::backup::record` and `crate::release` turn them into
//! domain values.

use chrono::{DateTime, Utc};
use sqlx::{FromRow, SqliteConnection};

use super::StoreError;

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct BackupRow {
    pub id: i64,
    pub instance_id: Option<i64>,
    pub target: String,
    pub local_dir: String,
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
    pub files: i64,
    pub bytes: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct BackupItemRow {
    pub id: i64,
    pub backup_id: i64,
    pub kind: String,
    pub remote_path: String,
    pub local_path: Option<String>,
    pub files: i64,
    pub bytes: i64,
    pub sha256: Option<String>,
    pub detail: Option<String>,
}

/// Insert a backup (its `id` is ignored) and return the new id.
pub async fn insert_backup(
    conn: &mut SqliteConnection,
    row: &BackupRow,
) -> Result<i64, StoreError> {
    let done = sqlx::query(
        "INSERT INTO backups (instance_id, target, local_dir, started_at, finished_at, files, bytes)
         VALUES (?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(row.instance_id)
    .bind(&row.target)
    .bind(&row.local_dir)
    .bind(row.started_at)
    .bind(row.finished_at)
    .bind(row.files)
    .bind(row.bytes)
    .execute(conn)
    .await?;
    Ok(done.last_insert_rowid())
}

/// Insert an item of backup `row.backup_id` (its `id` is ignored).
pub async fn insert_item(
    conn: &mut SqliteConnection,
    row: &BackupItemRow,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO backup_items (backup_id, kind, remote_path, local_path, files, bytes, sha256, detail)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(row.backup_id)
    .bind(&row.kind)
    .bind(&row.remote_path)
    .bind(row.local_path.as_deref())
    .bind(row.files)
    .bind(row.bytes)
    .bind(row.sha256.as_deref())
    .bind(row.detail.as_deref())
    .execute(conn)
    .await?;
    Ok(())
}

/// Backups of one instance, newest first.
pub async fn for_instance(
    conn: &mut SqliteConnection,
    instance_id: i64,
) -> Result<Vec<BackupRow>, StoreError> {
    Ok(sqlx::query_as::<_, BackupRow>(
        "SELECT * FROM backups WHERE instance_id = ? ORDER BY started_at DESC, id DESC",
    )
    .bind(instance_id)
    .fetch_all(conn)
    .await?)
}

/// Backups of a target that is no recorded instance, newest first.
pub async fn for_target(
    conn: &mut SqliteConnection,
    target: &str,
) -> Result<Vec<BackupRow>, StoreError> {
    Ok(sqlx::query_as::<_, BackupRow>(
        "SELECT * FROM backups WHERE instance_id IS NULL AND target = ? ORDER BY started_at DESC, id DESC",
    )
    .bind(target)
    .fetch_all(conn)
    .await?)
}

pub async fn items(
    conn: &mut SqliteConnection,
    backup_id: i64,
) -> Result<Vec<BackupItemRow>, StoreError> {
    Ok(sqlx::query_as::<_, BackupItemRow>(
        "SELECT * FROM backup_items WHERE backup_id = ? ORDER BY id",
    )
    .bind(backup_id)
    .fetch_all(conn)
    .await?)
}

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct ReleaseCheckRow {
    pub id: i64,
    pub instance_id: i64,
    pub at: DateTime<Utc>,
    pub blocked: bool,
    /// JSON array of checks.
    pub checks: String,
}

pub async fn insert_check(
    conn: &mut SqliteConnection,
    row: &ReleaseCheckRow,
) -> Result<i64, StoreError> {
    let done = sqlx::query(
        "INSERT INTO release_checks (instance_id, at, blocked, checks) VALUES (?, ?, ?, ?)",
    )
    .bind(row.instance_id)
    .bind(row.at)
    .bind(row.blocked)
    .bind(&row.checks)
    .execute(conn)
    .await?;
    Ok(done.last_insert_rowid())
}

/// The latest check of an instance.
pub async fn latest_check(
    conn: &mut SqliteConnection,
    instance_id: i64,
) -> Result<Option<ReleaseCheckRow>, StoreError> {
    Ok(sqlx::query_as::<_, ReleaseCheckRow>(
        "SELECT * FROM release_checks WHERE instance_id = ? ORDER BY at DESC, id DESC LIMIT 1",
    )
    .bind(instance_id)
    .fetch_optional(conn)
    .await?)
}

/// The latest check of an instance run on this laptop: not one pulled from a teammate
/// (`team_records.laptop` names the laptop a pulled one came from; NULL is this one).
pub async fn latest_check_run_here(
    conn: &mut SqliteConnection,
    instance_id: i64,
) -> Result<Option<ReleaseCheckRow>, StoreError> {
    Ok(sqlx::query_as::<_, ReleaseCheckRow>(
        "SELECT c.* FROM release_checks c
         WHERE c.instance_id = ?
           AND NOT EXISTS (SELECT 1 FROM team_records t
                           WHERE t.kind = 'release_check' AND t.local_id = c.id
                             AND t.laptop IS NOT NULL)
         ORDER BY c.at DESC, c.id DESC LIMIT 1",
    )
    .bind(instance_id)
    .fetch_optional(conn)
    .await?)
}

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct ReleaseOverrideRow {
    pub id: i64,
    pub instance_id: i64,
    pub check_id: Option<i64>,
    pub code: String,
    pub reason: String,
    pub at: DateTime<Utc>,
}

pub async fn insert_override(
    conn: &mut SqliteConnection,
    row: &ReleaseOverrideRow,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO release_overrides (instance_id, check_id, code, reason, at) VALUES (?, ?, ?, ?, ?)",
    )
    .bind(row.instance_id)
    .bind(row.check_id)
    .bind(&row.code)
    .bind(&row.reason)
    .bind(row.at)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn overrides(
    conn: &mut SqliteConnection,
    instance_id: i64,
) -> Result<Vec<ReleaseOverrideRow>, StoreError> {
    Ok(sqlx::query_as::<_, ReleaseOverrideRow>(
        "SELECT * FROM release_overrides WHERE instance_id = ? ORDER BY at, id",
    )
    .bind(instance_id)
    .fetch_all(conn)
    .await?)
}
