//! Team-mode rows in the local database: the link to the team's server (never its password),
//! the events not yet on the server, the rows pulled from it, and the conflicts found while
//! merging. Times and decimals travel as the exact text the recording laptop stored, so every
//! laptop replays identical values. `crate::team` decides what is pushed and pulled.

use chrono::{DateTime, Utc};
use serde::Deserialize;
use sqlx::{FromRow, SqliteConnection};

use super::StoreError;

/// The one team this database is linked to.
#[derive(Debug, Clone, FromRow)]
pub struct LinkRow {
    pub url: String,
    pub member: String,
    pub team: String,
    pub team_id: i64,
    pub laptop_uid: String,
    pub pulled_seq: i64,
    /// The server sequence number of the last shared record pulled.
    pub pulled_record_seq: i64,
    pub connected_at: DateTime<Utc>,
    pub last_sync_at: Option<DateTime<Utc>>,
}

pub async fn link(conn: &mut SqliteConnection) -> Result<Option<LinkRow>, StoreError> {
    Ok(sqlx::query_as::<_, LinkRow>(
        "SELECT url, member, team, team_id, laptop_uid, pulled_seq, pulled_record_seq, connected_at,
             last_sync_at
         FROM team_link WHERE id = 1",
    )
    .fetch_optional(conn)
    .await?)
}

/// Link this database to a team (replacing any earlier link) and sign every row recorded before
/// with `member`: from now on they are this member's rows in the team's log. The new link's
/// `shared_through` starts at 0, so the old one must be settled first ([`settle_shared`]).
pub async fn set_link(conn: &mut SqliteConnection, row: &LinkRow) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM team_link")
        .execute(&mut *conn)
        .await?;
    sqlx::query(
        "INSERT INTO team_link (id, url, member, team, team_id, laptop_uid, pulled_seq,
             pulled_record_seq, connected_at, last_sync_at)
         VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(&row.url)
    .bind(&row.member)
    .bind(&row.team)
    .bind(row.team_id)
    .bind(&row.laptop_uid)
    .bind(row.pulled_seq)
    .bind(row.pulled_record_seq)
    .bind(row.connected_at)
    .bind(row.last_sync_at)
    .execute(&mut *conn)
    .await?;
    for table in ["instances", "ledger_events"] {
        sqlx::query(&format!(
            "UPDATE {table} SET recorded_by = ? WHERE recorded_by IS NULL"
        ))
        .bind(&row.member)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

pub async fn delete_link(conn: &mut SqliteConnection) -> Result<(), StoreError> {
    settle_shared(&mut *conn).await?;
    sqlx::query("DELETE FROM team_link").execute(conn).await?;
    Ok(())
}

/// Move the pull cursors (events, shared records).
pub async fn set_pulled_seq(
    conn: &mut SqliteConnection,
    seq: i64,
    record_seq: i64,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE team_link SET pulled_seq = ?, pulled_record_seq = ? WHERE id = 1")
        .bind(seq)
        .bind(record_seq)
        .execute(conn)
        .await?;
    Ok(())
}

/// Move the pull cursor from `from` to `to`, only if it is at `from` now (a pull that ran
/// meanwhile has moved it itself).
pub async fn advance_pulled_seq(
    conn: &mut SqliteConnection,
    from: i64,
    to: i64,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE team_link SET pulled_seq = ? WHERE id = 1 AND pulled_seq = ?")
        .bind(to)
        .bind(from)
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn set_last_sync(
    conn: &mut SqliteConnection,
    at: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE team_link SET last_sync_at = ? WHERE id = 1")
        .bind(at)
        .execute(conn)
        .await?;
    Ok(())
}

/// One event not yet on the server. Read as a JSON array per row, so the fields are in
/// [`pending_events`]' column order.
#[derive(Debug, Clone, Deserialize)]
pub struct PendingEvent {
    pub event_id: i64,
    pub uid: String,
    pub kind: String,
    pub at: String,
    pub recorded_by: String,
    pub origin_seq: i64,
    pub traffic_gb: Option<String>,
    pub instance_uid: String,
    /// The rules version a `created` / `rule_changed` event brings (in [`PendingChunk::rules`]).
    pub rules_uid: Option<String>,
}

/// An instance that pending events belong to, as the server holds it.
#[derive(Debug, Clone, Deserialize)]
pub struct PendingInstance {
    /// The local id of its first event in the chunk: the order instances are sent in.
    pub first_event_id: i64,
    pub uid: String,
    pub name: String,
    pub provider: String,
    pub region: Option<String>,
    pub gpu_model: String,
    pub currency: String,
    pub notes: Option<String>,
    pub planned_hours: Option<String>,
    pub created_at: String,
    pub recorded_by: String,
}

/// A rules version that pending events bring.
#[derive(Debug, Clone, Deserialize)]
pub struct PendingRules {
    pub rules_uid: String,
    pub effective_from: String,
    pub price_per_gpu_hour: String,
    pub gpu_count: i64,
    pub billing_starts: String,
    pub stopped_billing: String,
    pub stopped_rate: Option<String>,
    pub no_gpu_rate: Option<String>,
    pub data_disk_per_hour: String,
    pub snapshot_per_hour: String,
    pub public_ip_per_hour: String,
    pub traffic_per_gb: String,
    pub granularity: String,
    pub wipe_after_stopped_days: Option<i64>,
}

/// Events not yet on the server, with each of their instances and rules versions once: everything
/// the server needs to hold them.
#[derive(Debug, Clone, Default)]
pub struct PendingChunk {
    /// Oldest first.
    pub events: Vec<PendingEvent>,
    /// In their first event's order.
    pub instances: Vec<PendingInstance>,
    /// By rules uid.
    pub rules: std::collections::HashMap<String, PendingRules>,
}

/// Up to `limit` events after local id `after_id` the server does not hold yet, oldest first.
/// `member` signs rows that predate the link (there are none once `set_link` ran, but a row may
/// come from an older tool). One statement: the events, and their instances and rules versions
/// each once, as three JSON documents (see `bulk`).
pub async fn pending_events(
    conn: &mut SqliteConnection,
    member: &str,
    after_id: i64,
    limit: i64,
) -> Result<PendingChunk, StoreError> {
    let (events, instances, rules): (Option<String>, Option<String>, Option<String>) =
        sqlx::query_as(&format!(
            "WITH chunk AS MATERIALIZED (
                 SELECT id, uid, kind, at, recorded_by, origin_seq, traffic_gb, instance_id,
                        rules_id
                 FROM ledger_events
                 WHERE shared = 0 AND id > max(?2, {SHARED_THROUGH})
                 ORDER BY id LIMIT ?3
             )
             SELECT
                 (SELECT json_group_array(json_array(
                      e.id, e.uid, e.kind, CAST(e.at AS TEXT), coalesce(e.recorded_by, ?1),
                      coalesce(e.origin_seq, e.id), e.traffic_gb, i.uid, r.uid))
                  FROM chunk e JOIN instances i ON i.id = e.instance_id
                  LEFT JOIN billing_rules r ON r.id = e.rules_id),
                 (SELECT json_group_array(json_array(
                      c.first, i.uid, i.name, i.provider, i.region, i.gpu_model, i.currency,
                      i.notes, i.planned_hours, CAST(i.created_at AS TEXT),
                      coalesce(i.recorded_by, ?1)))
                  FROM (SELECT instance_id, min(id) AS first FROM chunk GROUP BY instance_id) c
                  JOIN instances i ON i.id = c.instance_id),
                 (SELECT json_group_array(json_array(
                      r.uid, CAST(r.effective_from AS TEXT), r.price_per_gpu_hour, r.gpu_count,
                      r.billing_starts, r.stopped_billing, r.stopped_rate, r.no_gpu_rate,
                      r.data_disk_per_hour, r.snapshot_per_hour, r.public_ip_per_hour,
                      r.traffic_per_gb, r.granularity, r.wipe_after_stopped_days))
                  FROM billing_rules r
                  WHERE r.id IN (SELECT rules_id FROM chunk WHERE rules_id IS NOT NULL))",
        ))
        .bind(member)
        .bind(after_id)
        .bind(limit)
        .fetch_one(conn)
        .await?;
    let mut events: Vec<PendingEvent> = super::bulk::json_rows("pending events", events)?;
    events.sort_unstable_by_key(|e| e.event_id);
    let mut instances: Vec<PendingInstance> =
        super::bulk::json_rows("pending instances", instances)?;
    instances.sort_unstable_by_key(|i| i.first_event_id);
    let rules: Vec<PendingRules> = super::bulk::json_rows("pending rules", rules)?;
    Ok(PendingChunk {
        events,
        instances,
        rules: rules
            .into_iter()
            .map(|r| (r.rules_uid.clone(), r))
            .collect(),
    })
}

/// The last local event id up to which the server holds every event (migration 0260), whatever
/// the rows' own `shared` flags say; 0 without a link.
const SHARED_THROUGH: &str = "(SELECT coalesce(max(shared_through), 0) FROM team_link)";

/// Events recorded here the server does not hold yet.
pub async fn count_pending(conn: &mut SqliteConnection) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar(&format!(
        "SELECT count(*) FROM ledger_events WHERE shared = 0 AND id > {SHARED_THROUGH}"
    ))
    .fetch_one(conn)
    .await?)
}

/// Mark every pending event up to local id `last_id` as held by the server: the events of one
/// `pending_events` chunk (it takes them in id order, and new events get higher ids). One
/// number moves (`team_link.shared_through`, migration 0260); the rows are left as they are.
pub async fn mark_shared_through(
    conn: &mut SqliteConnection,
    last_id: i64,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE team_link SET shared_through = max(shared_through, ?)")
        .bind(last_id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Write the link's `shared_through` into the events' own flags and set it back to 0: done
/// before the link changes, so the flags alone say what the server holds.
pub async fn settle_shared(conn: &mut SqliteConnection) -> Result<(), StoreError> {
    sqlx::query(&format!(
        "UPDATE ledger_events SET shared = 1 WHERE shared = 0 AND id <= {SHARED_THROUGH}"
    ))
    .execute(&mut *conn)
    .await?;
    sqlx::query("UPDATE team_link SET shared_through = 0")
        .execute(conn)
        .await?;
    Ok(())
}

/// The local ids of the rows of `table` (`instances` or `billing_rules`) among team-wide ids
/// `uids`, by uid.
pub async fn local_ids(
    conn: &mut SqliteConnection,
    table: &'static str,
    uids: &[&str],
) -> Result<std::collections::HashMap<String, i64>, StoreError> {
    debug_assert!(matches!(table, "instances" | "billing_rules"));
    if uids.is_empty() {
        return Ok(Default::default());
    }
    let list = serde_json::to_string(uids).map_err(|err| StoreError::Corrupt {
        what: "uids",
        value: err.to_string(),
    })?;
    let found: Vec<(String, i64)> = sqlx::query_as(&format!(
        "SELECT uid, id FROM {table} WHERE uid IN (SELECT value FROM json_each(?))"
    ))
    .bind(list)
    .fetch_all(conn)
    .await?;
    Ok(found.into_iter().collect())
}

/// The local id of the instance with team-wide id `uid`.
pub async fn instance_id_by_uid(
    conn: &mut SqliteConnection,
    uid: &str,
) -> Result<Option<i64>, StoreError> {
    Ok(sqlx::query_scalar("SELECT id FROM instances WHERE uid = ?")
        .bind(uid)
        .fetch_optional(conn)
        .await?)
}

pub async fn name_taken(conn: &mut SqliteConnection, name: &str) -> Result<bool, StoreError> {
    Ok(
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM instances WHERE name = ?")
            .bind(name)
            .fetch_one(conn)
            .await?
            > 0,
    )
}

/// An instance as the team's server holds it, inserted here under `local_name`.
#[derive(Debug, Clone)]
pub struct PulledInstance<'a> {
    pub uid: &'a str,
    pub local_name: &'a str,
    pub provider: &'a str,
    pub region: Option<&'a str>,
    pub gpu_model: &'a str,
    pub currency: &'a str,
    pub notes: Option<&'a str>,
    pub planned_hours: Option<&'a str>,
    pub created_at: &'a str,
    pub recorded_by: &'a str,
}

/// Insert one pulled instance under `row.local_name`, which the caller made free here.
pub async fn insert_pulled_instance(
    conn: &mut SqliteConnection,
    row: &PulledInstance<'_>,
) -> Result<i64, StoreError> {
    insert_pulled_instances(conn, std::slice::from_ref(row))
        .await?
        .remove(row.uid)
        .ok_or_else(|| StoreError::Corrupt {
            what: "instance name or uid already here",
            value: row.local_name.to_owned(),
        })
}

/// Rows per statement of [`insert_pulled_instances`]: 10 parameters each.
const PULLED_INSTANCES_PER_STATEMENT: usize = 1_000;

/// Insert pulled instances under their own names where those are free here, with multi-row
/// statements; the local ids of those inserted, by uid. One whose name is taken (here, or by an
/// earlier row of the same list) is left out, for the caller to insert under another name.
pub async fn insert_pulled_instances(
    conn: &mut SqliteConnection,
    rows: &[PulledInstance<'_>],
) -> Result<std::collections::HashMap<String, i64>, StoreError> {
    let mut inserted = std::collections::HashMap::with_capacity(rows.len());
    for batch in rows.chunks(PULLED_INSTANCES_PER_STATEMENT) {
        let values = vec!["(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"; batch.len()].join(", ");
        let sql = format!(
            "INSERT INTO instances (uid, name, provider, region, gpu_model, currency, notes,
                 planned_hours, created_at, recorded_by)
             VALUES {values}
             ON CONFLICT DO NOTHING RETURNING uid, id"
        );
        let mut query = sqlx::query_as::<_, (String, i64)>(&sql);
        for row in batch {
            query = query
                .bind(row.uid)
                .bind(row.local_name)
                .bind(row.provider)
                .bind(row.region)
                .bind(row.gpu_model)
                .bind(row.currency)
                .bind(row.notes)
                .bind(row.planned_hours)
                .bind(row.created_at)
                .bind(row.recorded_by);
        }
        inserted.extend(query.fetch_all(&mut *conn).await?);
    }
    Ok(inserted)
}

/// A rules version pulled from the server (decimals as text, already checked).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct SharedRules {
    pub uid: String,
    pub effective_from: String,
    pub price_per_gpu_hour: String,
    pub gpu_count: i64,
    pub billing_starts: String,
    pub stopped_billing: String,
    pub stopped_rate: Option<String>,
    pub no_gpu_rate: Option<String>,
    pub data_disk_per_hour: String,
    pub snapshot_per_hour: String,
    pub public_ip_per_hour: String,
    pub traffic_per_gb: String,
    pub granularity: String,
    pub wipe_after_stopped_days: Option<i64>,
}

/// Rows per insert statement of [`insert_pulled_rules`]: 15 parameters each, well under
/// SQLite's 32 766.
const PULLED_RULES_PER_STATEMENT: usize = 500;

/// Insert pulled rules versions that are not here yet, each with the local id of its instance,
/// with bound multi-row statements (as [`insert_pulled_events`]; reading fifteen fields out of
/// JSON per rules version cost more than writing it).
pub async fn insert_pulled_rules(
    conn: &mut SqliteConnection,
    rules: &[(i64, &SharedRules)],
) -> Result<(), StoreError> {
    for batch in rules.chunks(PULLED_RULES_PER_STATEMENT) {
        let values = vec!["(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"; batch.len()].join(", ");
        let sql = format!(
            "INSERT INTO billing_rules (uid, instance_id, effective_from, price_per_gpu_hour,
                 gpu_count, billing_starts, stopped_billing, stopped_rate, no_gpu_rate,
                 data_disk_per_hour, snapshot_per_hour, public_ip_per_hour, traffic_per_gb,
                 granularity, wipe_after_stopped_days)
             VALUES {values}
             ON CONFLICT (uid) DO NOTHING"
        );
        let mut query = sqlx::query(&sql);
        for (instance_id, r) in batch {
            query = query
                .bind(r.uid.as_str())
                .bind(*instance_id)
                .bind(r.effective_from.as_str())
                .bind(r.price_per_gpu_hour.as_str())
                .bind(r.gpu_count)
                .bind(r.billing_starts.as_str())
                .bind(r.stopped_billing.as_str())
                .bind(r.stopped_rate.as_deref())
                .bind(r.no_gpu_rate.as_deref())
                .bind(r.data_disk_per_hour.as_str())
                .bind(r.snapshot_per_hour.as_str())
                .bind(r.public_ip_per_hour.as_str())
                .bind(r.traffic_per_gb.as_str())
                .bind(r.granularity.as_str())
                .bind(r.wipe_after_stopped_days);
        }
        query.execute(&mut *conn).await?;
    }
    Ok(())
}

/// A pulled event, already checked, with the local ids of its instance and rules version. Its
/// text is owned: it moves into the insert statement's values instead of being copied there.
#[derive(Debug, Clone)]
pub struct PulledEvent {
    pub uid: String,
    pub instance_id: i64,
    pub kind: String,
    pub at: String,
    pub rules_id: Option<i64>,
    pub traffic_gb: Option<String>,
    pub recorded_by: String,
    pub origin_seq: i64,
}

/// Rows per insert statement of [`insert_pulled_events`]: 8 parameters each, well under
/// SQLite's 32 766, and few enough statements that 100 000 events cost a hundred.
const PULLED_EVENTS_PER_STATEMENT: usize = 1_000;

fn pulled_events_sql(rows: usize) -> String {
    let values = vec!["(?, ?, ?, ?, ?, ?, ?, ?, 1)"; rows].join(", ");
    format!(
        "INSERT INTO ledger_events (uid, instance_id, kind, at, rules_id, traffic_gb,
             recorded_by, origin_seq, shared)
         VALUES {values}
         ON CONFLICT (uid) DO NOTHING"
    )
}

/// Insert pulled events with bound multi-row statements (SQLite reads bound values directly,
/// where a JSON array would be parsed again for every field); how many were new (an event
/// already here is skipped by its uid). Sorted by uid first: the uid index then takes them in
/// its own order, a fifth less work than in random order. Each statement's values are bound
/// here while SQLite's thread runs the statement before (binding is about a quarter of the
/// time SQLite takes to write the rows, and was spent with SQLite idle).
pub async fn insert_pulled_events(
    conn: &mut SqliteConnection,
    mut events: Vec<PulledEvent>,
) -> Result<i64, StoreError> {
    if events.is_empty() {
        return Ok(0);
    }
    events.sort_unstable_by(|a, b| a.uid.cmp(&b.uid));
    let total = events.len();
    let statements = total.div_ceil(PULLED_EVENTS_PER_STATEMENT);
    let full_sql = pulled_events_sql(PULLED_EVENTS_PER_STATEMENT);
    let last_sql = pulled_events_sql(total - (statements - 1) * PULLED_EVENTS_PER_STATEMENT);
    let mut rows = events.into_iter();
    let mut bound = |index: usize| {
        let sql = if index + 1 == statements {
            &last_sql
        } else {
            &full_sql
        };
        let mut query = sqlx::query(sql.as_str());
        for e in rows.by_ref().take(PULLED_EVENTS_PER_STATEMENT) {
            query = query
                .bind(e.uid)
                .bind(e.instance_id)
                .bind(e.kind)
                .bind(e.at)
                .bind(e.rules_id)
                .bind(e.traffic_gb)
                .bind(e.recorded_by)
                .bind(e.origin_seq);
        }
        query
    };
    let mut inserted = 0u64;
    let mut running = bound(0);
    for index in 1..statements {
        // `join!` polls in order: the statement is handed to SQLite's thread first, then the
        // next one is bound while it runs.
        let (done, next) = futures::join!(running.execute(&mut *conn), async { bound(index) });
        inserted += done?.rows_affected();
        running = next;
    }
    inserted += running.execute(&mut *conn).await?.rows_affected();
    Ok(i64::try_from(inserted).unwrap_or(i64::MAX))
}

/// A conflict a pull stored for the user.
#[derive(Debug, Clone, FromRow)]
pub struct ConflictRow {
    pub key: String,
    pub kind: String,
    pub instance_uid: String,
    pub instance_name: String,
    pub member: String,
    pub detail: String,
    pub found_at: DateTime<Utc>,
}

pub async fn record_conflict(
    conn: &mut SqliteConnection,
    row: &ConflictRow,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO team_conflicts (key, kind, instance_uid, instance_name, member, detail, found_at)
         VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING",
    )
    .bind(&row.key)
    .bind(&row.kind)
    .bind(&row.instance_uid)
    .bind(&row.instance_name)
    .bind(&row.member)
    .bind(&row.detail)
    .bind(row.found_at)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn stored_conflicts(conn: &mut SqliteConnection) -> Result<Vec<ConflictRow>, StoreError> {
    Ok(sqlx::query_as::<_, ConflictRow>(
        "SELECT key, kind, instance_uid, instance_name, member, detail, found_at
         FROM team_conflicts WHERE dismissed_at IS NULL ORDER BY found_at, key",
    )
    .fetch_all(conn)
    .await?)
}

/// Dismiss the stored notice `key` at `now`; whether one was listed.
pub async fn dismiss_conflict(
    conn: &mut SqliteConnection,
    key: &str,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE team_conflicts SET dismissed_at = ? WHERE key = ? AND dismissed_at IS NULL",
    )
    .bind(now)
    .bind(key)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// Who recorded each instance (`None` before the laptop joined a team), by local id.
pub async fn instance_recorders(
    conn: &mut SqliteConnection,
) -> Result<Vec<(i64, String, Option<String>)>, StoreError> {
    Ok(
        sqlx::query_as("SELECT id, uid, recorded_by FROM instances ORDER BY id")
            .fetch_all(conn)
            .await?,
    )
}

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

/// Every pending record, with its body built from its table as it is now.
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
                json_object('target', b.target, 'local_dir', b.local_dir,
                            'started_at', b.started_at, 'finished_at', b.finished_at,
                            'files', b.files, 'bytes', b.bytes,
                            'items', json((SELECT json_group_array(json_object(
                                'kind', it.kind, 'remote_path', it.remote_path,
                                'local_path', it.local_path, 'files', it.files, 'bytes', it.bytes,
                                'sha256', it.sha256, 'detail', it.detail))
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

/// Replace the cached team budgets (`(currency, amount, set_by)`).
pub async fn replace_team_budgets(
    conn: &mut SqliteConnection,
    budgets: &[(String, String, String)],
) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM team_budgets")
        .execute(&mut *conn)
        .await?;
    for (currency, amount, set_by) in budgets {
        sqlx::query("INSERT INTO team_budgets (currency, amount, set_by) VALUES (?, ?, ?)")
            .bind(currency)
            .bind(amount)
            .bind(set_by)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// The team budgets as last pulled (`(currency, amount, set_by)`).
pub async fn team_budgets(
    conn: &mut SqliteConnection,
) -> Result<Vec<(String, String, String)>, StoreError> {
    Ok(
        sqlx::query_as("SELECT currency, amount, set_by FROM team_budgets ORDER BY currency")
            .fetch_all(conn)
            .await?,
    )
}

/// Set an instance's project (`None` clears it); false when no such instance.
pub async fn set_project(
    conn: &mut SqliteConnection,
    instance_id: i64,
    project: Option<&str>,
) -> Result<bool, StoreError> {
    let done = sqlx::query("UPDATE instances SET project = ? WHERE id = ?")
        .bind(project)
        .bind(instance_id)
        .execute(conn)
        .await?;
    Ok(done.rows_affected() > 0)
}

/// The project of the instance called `name`: `None` when there is no such instance.
pub async fn project_of(
    conn: &mut SqliteConnection,
    name: &str,
) -> Result<Option<Option<String>>, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT project FROM instances WHERE name = ?")
            .bind(name)
            .fetch_optional(conn)
            .await?,
    )
}

/// Each instance's project, by local id (instances without one are left out).
pub async fn projects(conn: &mut SqliteConnection) -> Result<Vec<(i64, String)>, StoreError> {
    Ok(
        sqlx::query_as("SELECT id, project FROM instances WHERE project IS NOT NULL")
            .fetch_all(conn)
            .await?,
    )
}
