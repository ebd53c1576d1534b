//! The shared records besides the ledger: an instance's budget and project, backup records, release checks
//! and overrides, reminders' state (fired, snoozed, dismissed — so a reminder dealt with on one
//! laptop is not sent again by another member's app for the same shared instance).
//!
//! Local triggers (SQLite migration 0170) note every change in `team_records` with a Lamport
//! version; [`push`] sends the pending ones in one statement and the server keeps, per record,
//! the higher (version, laptop); `pull` brings the others' records and [`apply`] writes each one
//! that wins over what is here. Backups and release records are never changed once written, so
//! they merge by key; a removed budget travels as an empty body.
//!
//! A record comes from another member's laptop, so it is checked like input: one this version
//! cannot read is listed as a conflict and skipped (inside a savepoint, so a row the local
//! constraints refuse cannot stop the rest of the sync).

use std::str::FromStr;

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use sqlx::SqliteConnection;

use super::server::Server;
use super::TeamError;
use crate::store::backups::{self as backup_repo, BackupItemRow, BackupRow, ReleaseCheckRow};
use crate::store::team::{self as repo, ConflictRow};
use crate::store::{Store, StoreError};

/// Push every pending record in one statement (none: no round trip); how many were sent.
pub async fn push(
    store: &Store,
    server: &mut Server,
    team_id: i64,
    member: &str,
    laptop: &str,
) -> Result<i64, TeamError> {
    let pending = {
        let mut conn = store.read().await?;
        repo::pending_records(&mut conn).await?
    };
    if pending.is_empty() {
        return Ok(0);
    }
    let sent = server
        .push_records(team_id, member, laptop, &pending)
        .await?;
    let done: Vec<(&str, i64, i64)> = pending
        .iter()
        .map(|r| (r.kind.as_str(), r.local_id, r.version))
        .collect();
    let mut tx = store.write().await?;
    repo::mark_records_shared(&mut tx, &done).await?;
    tx.commit().await.map_err(StoreError::from)?;
    Ok(sent)
}

/// A record as a pull page carries it.
#[derive(Debug, Clone, Default)]
pub struct PulledRecord {
    pub kind: Option<String>,
    pub key: Option<String>,
    pub instance_uid: Option<String>,
    pub body: Option<serde_json::Value>,
    pub version: Option<i64>,
    pub laptop: Option<String>,
    pub recorded_by: Option<String>,
    pub seq: Option<i64>,
}

/// Kinds whose records never change once written.
const WRITE_ONCE: [&str; 3] = ["backup", "release_check", "release_override"];
const KINDS: [&str; 6] = [
    "budget",
    "project",
    "reminder",
    "backup",
    "release_check",
    "release_override",
];

/// Write the pulled records that win over what is here; how many were written.
pub async fn apply(
    conn: &mut SqliteConnection,
    records: &[PulledRecord],
    laptop: &str,
    now: DateTime<Utc>,
) -> Result<i64, TeamError> {
    let mut written = 0;
    for record in records {
        let kind = record.kind.as_deref().unwrap_or_default();
        if !KINDS.contains(&kind) {
            // A kind a newer version shares: nothing here could show it.
            tracing::debug!(kind, "shared record of an unknown kind skipped");
            continue;
        }
        repo::begin_record(conn).await?;
        let outcome = apply_one(conn, record, kind, laptop, now).await;
        repo::end_record(conn, outcome.is_ok()).await?;
        match outcome {
            Ok(true) => written += 1,
            Ok(false) => {}
            Err(reason) => {
                let instance_uid = record.instance_uid.clone().unwrap_or_default();
                let name = repo::instance_name_by_uid(conn, &instance_uid).await?;
                repo::record_conflict(
                    conn,
                    &ConflictRow {
                        key: format!(
                            "unreadable:{kind}:{}:{}",
                            record.key.as_deref().unwrap_or_default(),
                            record.version.unwrap_or_default()
                        ),
                        kind: "unreadable".into(),
                        instance_uid,
                        instance_name: name,
                        member: record.recorded_by.clone().unwrap_or_default(),
                        detail: format!("a shared {kind} record: {reason}"),
                        found_at: now,
                    },
                )
                .await?;
            }
        }
    }
    Ok(written)
}

/// How far past this laptop's clock a pulled record's time may lie: clocks drift a little, but a
/// release check or backup "from the future" would outrank every real one.
pub const CLOCK_SKEW: chrono::Duration = chrono::Duration::minutes(10);

/// `at`, unless it lies beyond `now` plus [`CLOCK_SKEW`].
fn not_future(at: DateTime<Utc>, now: DateTime<Utc>) -> Result<DateTime<Utc>, String> {
    if at > now + CLOCK_SKEW {
        return Err(format!(
            "it is dated {}, later than this laptop's clock allows",
            at.to_rfc3339()
        ));
    }
    Ok(at)
}

/// Write one record if it wins; `Err` says why it cannot be read.
async fn apply_one(
    conn: &mut SqliteConnection,
    record: &PulledRecord,
    kind: &str,
    my_laptop: &str,
    now: DateTime<Utc>,
) -> Result<bool, String> {
    let key = record.key.as_deref().ok_or("no key")?;
    let version = record.version.filter(|v| *v > 0).ok_or("no version")?;
    let laptop = record.laptop.as_deref().ok_or("no laptop")?;
    let member = record.recorded_by.as_deref().ok_or("no member")?;
    let db = |err: StoreError| err.to_string();
    if let Some(here) = repo::local_record(conn, kind, key).await.map_err(db)? {
        if WRITE_ONCE.contains(&kind) {
            return Ok(false);
        }
        let here_laptop = here.laptop.as_deref().unwrap_or(my_laptop);
        if (here.version, here_laptop) >= (version, laptop) {
            return Ok(false);
        }
    }
    let instance_uid = record.instance_uid.as_deref().ok_or("no instance")?;
    let instance_id = repo::instance_id_by_uid(conn, instance_uid)
        .await
        .map_err(db)?
        .ok_or_else(|| format!("instance {instance_uid} is not known here"))?;
    let body = record.body.as_ref().filter(|b| !b.is_null());
    let local_id = match kind {
        "budget" => put_budget(conn, instance_id, body).await?,
        "project" => put_project(conn, instance_id, body).await?,
        "reminder" => put_reminder(conn, instance_id, body.ok_or("no content")?, now).await?,
        "backup" => put_backup(conn, instance_id, member, body.ok_or("no content")?, now).await?,
        "release_check" => put_check(conn, instance_id, body.ok_or("no content")?, now).await?,
        _ => put_override(conn, instance_id, body.ok_or("no content")?, now).await?,
    };
    repo::set_pulled_record(conn, kind, local_id, key, version, laptop, member)
        .await
        .map_err(db)?;
    Ok(true)
}

fn text<'a>(body: &'a serde_json::Value, field: &str) -> Result<&'a str, String> {
    body.get(field)
        .and_then(serde_json::Value::as_str)
        .ok_or_else(|| format!("{field} is missing"))
}

fn optional_text<'a>(body: &'a serde_json::Value, field: &str) -> Option<&'a str> {
    body.get(field).and_then(serde_json::Value::as_str)
}

fn count(body: &serde_json::Value, field: &str) -> Result<i64, String> {
    body.get(field)
        .and_then(serde_json::Value::as_i64)
        .filter(|n| *n >= 0)
        .ok_or_else(|| format!("{field} is not a count"))
}

/// A time as the local database wrote it (RFC 3339, with a space or a `T`).
fn time(text: &str) -> Result<DateTime<Utc>, String> {
    DateTime::parse_from_rfc3339(text)
        .or_else(|_| DateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f%:z"))
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| format!("{text:?} is not a time"))
}

fn checked_time(body: &serde_json::Value, field: &str) -> Result<String, String> {
    time(text(body, field)?).map(|t| t.to_rfc3339())
}

fn optional_time(body: &serde_json::Value, field: &str) -> Result<Option<String>, String> {
    optional_text(body, field)
        .map(|t| time(t).map(|t| t.to_rfc3339()))
        .transpose()
}

async fn put_budget(
    conn: &mut SqliteConnection,
    instance_id: i64,
    body: Option<&serde_json::Value>,
) -> Result<i64, String> {
    let amount = match body {
        None => None,
        Some(body) => {
            let amount = text(body, "amount")?;
            let parsed =
                Decimal::from_str(amount).map_err(|_| format!("{amount:?} is not an amount"))?;
            crate::billing::new_instance::validate_budget(parsed).map_err(|e| e.to_string())?;
            Some(amount)
        }
    };
    crate::store::ledger::set_budget(conn, instance_id, amount)
        .await
        .map_err(|e| e.to_string())?;
    Ok(instance_id)
}

async fn put_project(
    conn: &mut SqliteConnection,
    instance_id: i64,
    body: Option<&serde_json::Value>,
) -> Result<i64, String> {
    let project = body
        .map(|b| {
            let name = text(b, "project")?;
            super::address::check_name("project", name).map_err(|e| e.to_string())
        })
        .transpose()?;
    repo::set_project(conn, instance_id, project.as_deref())
        .await
        .map_err(|e| e.to_string())?;
    Ok(instance_id)
}

async fn put_reminder(
    conn: &mut SqliteConnection,
    instance_id: i64,
    body: &serde_json::Value,
    now: DateTime<Utc>,
) -> Result<i64, String> {
    let kind = text(body, "kind")?;
    let occurrence = text(body, "occurrence")?;
    if kind.is_empty() || kind.len() > 64 || occurrence.len() > 256 {
        return Err("reminder kind or occurrence out of bounds".into());
    }
    let silent = match body.get("silent") {
        Some(serde_json::Value::Bool(b)) => *b,
        Some(serde_json::Value::Number(n)) => n.as_i64() == Some(1),
        _ => false,
    };
    repo::put_pulled_reminder(
        conn,
        instance_id,
        kind,
        occurrence,
        &checked_time(body, "due_at")?,
        // When it fired and was dismissed are past events; when it is due or snoozed until may
        // lie ahead.
        &not_future(time(text(body, "fired_at")?)?, now)?.to_rfc3339(),
        silent,
        optional_time(body, "snoozed_until")?.as_deref(),
        optional_text(body, "dismissed_at")
            .map(|t| not_future(time(t)?, now).map(|t| t.to_rfc3339()))
            .transpose()?
            .as_deref(),
    )
    .await
    .map_err(|e| e.to_string())
}

const ITEM_KINDS: [&str; 6] = [
    "file",
    "folder",
    "packed_folder",
    "environment",
    "git_push",
    "file_storage",
];

async fn put_backup(
    conn: &mut SqliteConnection,
    instance_id: i64,
    member: &str,
    body: &serde_json::Value,
    now: DateTime<Utc>,
) -> Result<i64, String> {
    let db = |err: StoreError| err.to_string();
    let row = BackupRow {
        id: 0,
        instance_id: Some(instance_id),
        target: text(body, "target")?.to_owned(),
        // The copy is on the member's own computer, not here; where on it is not shared.
        local_dir: format!("{member}: (kept on {member}'s computer)"),
        started_at: not_future(time(text(body, "started_at")?)?, now)?,
        finished_at: not_future(time(text(body, "finished_at")?)?, now)?,
        files: count(body, "files")?,
        bytes: count(body, "bytes")?,
    };
    let items = match body.get("items") {
        Some(serde_json::Value::Array(items)) => items.as_slice(),
        None | Some(serde_json::Value::Null) => &[],
        Some(_) => return Err("items are not a list".into()),
    };
    let backup_id = backup_repo::insert_backup(conn, &row).await.map_err(db)?;
    for item in items {
        let kind = text(item, "kind")?;
        if !ITEM_KINDS.contains(&kind) {
            return Err(format!("unknown backup item kind {kind:?}"));
        }
        let sha256 = optional_text(item, "sha256");
        if sha256.is_some_and(|s| s.len() != 64 || !s.bytes().all(|b| b.is_ascii_hexdigit())) {
            return Err("a backup item's sha256 is not a hash".into());
        }
        backup_repo::insert_item(
            conn,
            &BackupItemRow {
                id: 0,
                backup_id,
                kind: kind.to_owned(),
                remote_path: text(item, "remote_path")?.to_owned(),
                // An older version shared these; they name the member's own computer.
                local_path: None,
                files: count(item, "files")?,
                bytes: count(item, "bytes")?,
                sha256: sha256.map(str::to_owned),
                detail: optional_text(item, "detail")
                    .filter(|_| kind != "git_push")
                    .map(|d| crate::redact::redact_urls(d).into_owned()),
            },
        )
        .await
        .map_err(db)?;
    }
    Ok(backup_id)
}

async fn put_check(
    conn: &mut SqliteConnection,
    instance_id: i64,
    body: &serde_json::Value,
    now: DateTime<Utc>,
) -> Result<i64, String> {
    let checks = body
        .get("checks")
        .filter(|c| c.is_array())
        .ok_or("checks are not a list")?;
    let blocked = match body.get("blocked") {
        Some(serde_json::Value::Bool(b)) => *b,
        Some(serde_json::Value::Number(n)) => n.as_i64() == Some(1),
        _ => return Err("blocked is missing".into()),
    };
    backup_repo::insert_check(
        conn,
        &ReleaseCheckRow {
            id: 0,
            instance_id,
            at: not_future(time(text(body, "at")?)?, now)?,
            blocked,
            checks: checks.to_string(),
        },
    )
    .await
    .map_err(|e| e.to_string())
}

async fn put_override(
    conn: &mut SqliteConnection,
    instance_id: i64,
    body: &serde_json::Value,
    now: DateTime<Utc>,
) -> Result<i64, String> {
    let db = |err: StoreError| err.to_string();
    let reason = text(body, "reason")?;
    if reason.trim().is_empty() {
        return Err("an override without a reason".into());
    }
    let check_id = match optional_text(body, "check_key") {
        Some(key) => repo::release_check_by_key(conn, key).await.map_err(db)?,
        None => None,
    };
    backup_repo::insert_override(
        conn,
        &backup_repo::ReleaseOverrideRow {
            id: 0,
            instance_id,
            check_id,
            code: text(body, "code")?.to_owned(),
            reason: reason.to_owned(),
            at: not_future(time(text(body, "at")?)?, now)?,
        },
    )
    .await
    .map_err(db)?;
    repo::last_insert_rowid(conn)
        .await
        .map_err(|err| match err {
            // The database's own words, as a conflict's detail has always given them.
            StoreError::Query(err) => err.to_string(),
            other => other.to_string(),
        })
}
