//! Rows of verify runs (facts and findings as JSON text). `crate::verify::history` decodes
//! them and computes what changed between runs.

use chrono::{DateTime, Utc};
use sqlx::{FromRow, SqliteConnection};

use super::StoreError;

#[derive(Debug, Clone, FromRow)]
pub struct ProbeRunRow {
    pub id: i64,
    pub instance_id: Option<i64>,
    pub target: String,
    pub collected_at: DateTime<Utc>,
    pub facts: String,
    pub findings: String,
    pub finding_keys: String,
    pub errors: i64,
    pub warnings: i64,
}

#[derive(Debug, Clone)]
pub struct NewProbeRunRow<'a> {
    pub instance_id: Option<i64>,
    pub target: &'a str,
    pub collected_at: DateTime<Utc>,
    pub facts: &'a str,
    pub findings: &'a str,
    pub finding_keys: &'a str,
    pub errors: i64,
    pub warnings: i64,
}

/// Which runs belong together: those of one recorded instance, or of one target address.
#[derive(Debug, Clone, Copy)]
pub enum RunOwner<'a> {
    Instance(i64),
    Target(&'a str),
}

pub async fn insert_probe_run(
    conn: &mut SqliteConnection,
    run: &NewProbeRunRow<'_>,
) -> Result<i64, StoreError> {
    let id = sqlx::query(
        "INSERT INTO probe_runs (instance_id, target, collected_at, facts, findings, finding_keys, errors, warnings)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(run.instance_id)
    .bind(run.target)
    .bind(run.collected_at)
    .bind(run.facts)
    .bind(run.findings)
    .bind(run.finding_keys)
    .bind(run.errors)
    .bind(run.warnings)
    .execute(conn)
    .await?
    .last_insert_rowid();
    Ok(id)
}

/// The owner's runs, newest first.
pub async fn list_probe_runs(
    conn: &mut SqliteConnection,
    owner: RunOwner<'_>,
    limit: i64,
) -> Result<Vec<ProbeRunRow>, StoreError> {
    let query = match owner {
        RunOwner::Instance(id) => sqlx::query_as::<_, ProbeRunRow>(
            "SELECT * FROM probe_runs WHERE instance_id = ? ORDER BY collected_at DESC, id DESC LIMIT ?",
        )
        .bind(id),
        RunOwner::Target(target) => sqlx::query_as::<_, ProbeRunRow>(
            "SELECT * FROM probe_runs WHERE instance_id IS NULL AND target = ? ORDER BY collected_at DESC, id DESC LIMIT ?",
        )
        .bind(target),
    };
    Ok(query.bind(limit).fetch_all(conn).await?)
}

pub async fn get_probe_run(
    conn: &mut SqliteConnection,
    id: i64,
) -> Result<Option<ProbeRunRow>, StoreError> {
    Ok(
        sqlx::query_as::<_, ProbeRunRow>("SELECT * FROM probe_runs WHERE id = ?")
            .bind(id)
            .fetch_optional(conn)
            .await?,
    )
}

/// The owner's run just before `run` (by time, then id).
pub async fn previous_probe_run(
    conn: &mut SqliteConnection,
    run: &ProbeRunRow,
) -> Result<Option<ProbeRunRow>, StoreError> {
    let sql = match run.instance_id {
        Some(_) => {
            "SELECT * FROM probe_runs WHERE instance_id = ? AND (collected_at < ? OR (collected_at = ? AND id < ?))
             ORDER BY collected_at DESC, id DESC LIMIT 1"
        }
        None => {
            "SELECT * FROM probe_runs WHERE instance_id IS NULL AND target = ? AND (collected_at < ? OR (collected_at = ? AND id < ?))
             ORDER BY collected_at DESC, id DESC LIMIT 1"
        }
    };
    let query = sqlx::query_as::<_, ProbeRunRow>(sql);
    let query = match run.instance_id {
        Some(id) => query.bind(id),
        None => query.bind(run.target.clone()),
    };
    Ok(query
        .bind(run.collected_at)
        .bind(run.collected_at)
        .bind(run.id)
        .fetch_optional(conn)
        .await?)
}
