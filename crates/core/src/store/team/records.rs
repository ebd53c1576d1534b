//! The shared records besides the ledger (`team_records`, migration 0170): what is pending, what
//! a pull writes, with its version and the laptop it came from.

use sqlx::{FromRow, SqliteConnection};

use crate::store::StoreError;

/// A shareable row (budget, backup, release check or override, reminder state) whose current
/// version the server does not hold yet, with its content as JSON (`None`: removed).
#[derive(Debug, Clone, FromRow)]
pub struct PendingRecord {
    pub kind: String,
    pub local_id: i64,
    pub key: String,
    pub version: i64,
    pub instance_uid: String,
    pub body: Option<String>,
}

/// Every pending record, with its body built from its table as it is now. A backup travels
/// without where it was saved on this computer (folder and file paths) and without `git push`'s
/// output (it may name remotes with their credentials): what it saved and when is what the team
/// needs.
pub async fn pending_records(
    conn: &mut SqliteConnection,
) -> Result<Vec<PendingRecord>, StoreError> {
    Ok(sqlx::query_as::<_, PendingRecord>(
        "SELECT t.kind, t.local_id, t.key, t.version, i.uid AS instance_uid,
                CASE WHEN b.instance_id IS NULL THEN NULL
                     ELSE json_object('amount', b.amount) END AS body
         FROM team_records t JOIN instances i ON i.id = t.local_id
         LEFT JOIN budgets b ON b.instance_id = t.local_id
         WHERE t.shared = 0 AND t.kind = 'budget'
         UNION ALL
         SELECT t.kind, t.local_id, t.key, t.version, i.uid,
                CASE WHEN i.project IS NULL THEN NULL
                     ELSE json_object('project', i.project) END
         FROM team_records t JOIN instances i ON i.id = t.local_id
         WHERE t.shared = 0 AND t.kind = 'project'
         UNION ALL
         SELECT t.kind, t.local_id, t.key, t.version, i.uid,
                json_object('kind', r.kind, 'occurrence', r.occurrence, 'due_at', r.due_at,
                            'fired_at', r.fired_at, 'silent', r.silent,
                            'snoozed_until', r.snoozed_until, 'dismissed_at', r.dismissed_at)
         FROM team_records t JOIN reminders r ON r.id = t.local_id
         JOIN instances i ON i.id = r.instance_id
         WHERE t.shared = 0 AND t.kind = 'reminder'
         UNION ALL
         SELECT t.kind, t.local_id, t.key, t.version, i.uid,
                json_object('target', b.target, 'local_dir', '',
                            'started_at', b.started_at, 'finished_at', b.finished_at,
                            'files', b.files, 'bytes', b.bytes,
                            'items', json((SELECT json_group_array(json_object(
                                'kind', it.kind, 'remote_path', it.remote_path,
                                'local_path', NULL, 'files', it.files, 'bytes', it.bytes,
                                'sha256', it.sha256,
                                'detail', CASE WHEN it.kind = 'git_push' THEN NULL
                                               ELSE it.detail END))
                                FROM backup_items it WHERE it.backup_id = b.id)))
         FROM team_records t JOIN backups b ON b.id = t.local_id
         JOIN instances i ON i.id = b.instance_id
         WHERE t.shared = 0 AND t.kind = 'backup'
         UNION ALL
         SELECT t.kind, t.local_id, t.key, t.version, i.uid,
                json_object('at', c.at, 'blocked', c.blocked, 'checks', json(c.checks))
         FROM team_records t JOIN release_checks c ON c.id = t.local_id
         JOIN instances i ON i.id = c.instance_id
         WHERE t.shared = 0 AND t.kind = 'release_check'
         UNION ALL
         SELECT t.kind, t.local_id, t.key, t.version, i.uid,
                json_object('check_key', (SELECT k.key FROM team_records k
                                          WHERE k.kind = 'release_check' AND k.local_id = o.check_id),
                            'code', o.code, 'reason', o.reason, 'at', o.at)
         FROM team_records t JOIN release_overrides o ON o.id = t.local_id
         JOIN instances i ON i.id = o.instance_id
         WHERE t.shared = 0 AND t.kind = 'release_override'",
    )
    .fetch_all(conn)
    .await?)
}

/// Mark records as held by the server, each only if it is still at the version pushed (a change
/// made meanwhile stays pending).
pub async fn mark_records_shared(
    conn: &mut SqliteConnection,
    pushed: &[(&str, i64, i64)],
) -> Result<(), StoreError> {
    let list = serde_json::to_string(pushed).map_err(|err| StoreError::Corrupt {
        what: "team records",
        value: err.to_string(),
    })?;
    sqlx::query(
        "UPDATE team_records SET shared = 1
         WHERE shared = 0 AND (kind, local_id, version) IN
             (SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each(?))",
    )
    .bind(list)
    .execute(conn)
    .await?;
    Ok(())
}

/// What this database holds of a shared record.
#[derive(Debug, Clone, FromRow)]
pub struct LocalRecord {
    pub local_id: i64,
    pub version: i64,
    pub laptop: Option<String>,
}

pub async fn local_record(
    conn: &mut SqliteConnection,
    kind: &str,
    key: &str,
) -> Result<Option<LocalRecord>, StoreError> {
    Ok(sqlx::query_as::<_, LocalRecord>(
        "SELECT local_id, version, laptop FROM team_records WHERE kind = ? AND key = ?",
    )
    .bind(kind)
    .bind(key)
    .fetch_optional(conn)
    .await?)
}

/// After a pulled record was written into its table (whose trigger marked it as a change made
/// here): it is the pulled version, from `laptop`, and the server holds it.
pub async fn set_pulled_record(
    conn: &mut SqliteConnection,
    kind: &str,
    local_id: i64,
    key: &str,
    version: i64,
    laptop: &str,
    recorded_by: &str,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO team_records (kind, local_id, key, version, laptop, recorded_by, shared)
         VALUES (?, ?, ?, ?, ?, ?, 1)
         ON CONFLICT (kind, local_id) DO UPDATE SET key = excluded.key,
             version = excluded.version, laptop = excluded.laptop,
             recorded_by = excluded.recorded_by, shared = 1",
    )
    .bind(kind)
    .bind(local_id)
    .bind(key)
    .bind(version)
    .bind(laptop)
    .bind(recorded_by)
    .execute(conn)
    .await?;
    Ok(())
}

/// Share every record again (linking to another team).
pub async fn unshare_records(conn: &mut SqliteConnection) -> Result<(), StoreError> {
    sqlx::query("UPDATE team_records SET shared = 0")
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn count_pending_records(conn: &mut SqliteConnection) -> Result<i64, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT count(*) FROM team_records WHERE shared = 0")
            .fetch_one(conn)
            .await?,
    )
}

/// The local id of the release check with team-wide key `key`.
pub async fn release_check_by_key(
    conn: &mut SqliteConnection,
    key: &str,
) -> Result<Option<i64>, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT local_id FROM team_records WHERE kind = 'release_check' AND key = ?",
    )
    .bind(key)
    .fetch_optional(conn)
    .await?)
}

/// Write a pulled reminder state (insert or replace the occurrence's row); its local id.
#[allow(clippy::too_many_arguments)]
pub async fn put_pulled_reminder(
    conn: &mut SqliteConnection,
    instance_id: i64,
    kind: &str,
    occurrence: &str,
    due_at: &str,
    fired_at: &str,
    silent: bool,
    snoozed_until: Option<&str>,
    dismissed_at: Option<&str>,
) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar(
        "INSERT INTO reminders (instance_id, kind, occurrence, due_at, fired_at, silent,
             snoozed_until, dismissed_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (instance_id, kind, occurrence) DO UPDATE SET due_at = excluded.due_at,
             fired_at = excluded.fired_at, silent = excluded.silent,
             snoozed_until = excluded.snoozed_until, dismissed_at = excluded.dismissed_at
         RETURNING id",
    )
    .bind(instance_id)
    .bind(kind)
    .bind(occurrence)
    .bind(due_at)
    .bind(fired_at)
    .bind(silent)
    .bind(snoozed_until)
    .bind(dismissed_at)
    .fetch_one(conn)
    .await?)
}

/// Open the savepoint one pulled record is written in, so a row the local constraints refuse
/// undoes that record alone ([`end_record`] closes it).
pub async fn begin_record(conn: &mut SqliteConnection) -> Result<(), StoreError> {
    sqlx::query("SAVEPOINT team_record")
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Close [`begin_record`]'s savepoint: its writes kept when `keep`, else rolled back.
pub async fn end_record(conn: &mut SqliteConnection, keep: bool) -> Result<(), StoreError> {
    let release = if keep {
        "RELEASE team_record"
    } else {
        "ROLLBACK TO team_record"
    };
    sqlx::query(release).execute(&mut *conn).await?;
    if !keep {
        sqlx::query("RELEASE team_record")
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// The rowid of the row this connection inserted last.
pub async fn last_insert_rowid(conn: &mut SqliteConnection) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar("SELECT last_insert_rowid()")
        .fetch_one(conn)
        .await?)
}
