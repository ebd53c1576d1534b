//! Team-mode rows in the local database: the link to the team's server (never its password),
//! the events not yet on the server, the rows pulled from it, and the conflicts found while
//! merging. Times and decimals travel as the exact text the recording laptop stored, so every
//! laptop replays identical values. `crate::team` decides what is pushed and pulled.

use chrono::{DateTime, Utc};
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
    pub connected_at: DateTime<Utc>,
    pub last_sync_at: Option<DateTime<Utc>>,
}

pub async fn link(conn: &mut SqliteConnection) -> Result<Option<LinkRow>, StoreError> {
    Ok(sqlx::query_as::<_, LinkRow>(
        "SELECT url, member, team, team_id, laptop_uid, pulled_seq, connected_at, last_sync_at
         FROM team_link WHERE id = 1",
    )
    .fetch_optional(conn)
    .await?)
}

/// Link this database to a team (replacing any earlier link) and sign every row recorded before
/// with `member`: from now on they are this member's rows in the team's log.
pub async fn set_link(conn: &mut SqliteConnection, row: &LinkRow) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM team_link")
        .execute(&mut *conn)
        .await?;
    sqlx::query(
        "INSERT INTO team_link (id, url, member, team, team_id, laptop_uid, pulled_seq, connected_at,
             last_sync_at)
         VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(&row.url)
    .bind(&row.member)
    .bind(&row.team)
    .bind(row.team_id)
    .bind(&row.laptop_uid)
    .bind(row.pulled_seq)
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
    sqlx::query("DELETE FROM team_link").execute(conn).await?;
    Ok(())
}

pub async fn set_pulled_seq(conn: &mut SqliteConnection, seq: i64) -> Result<(), StoreError> {
    sqlx::query("UPDATE team_link SET pulled_seq = ? WHERE id = 1")
        .bind(seq)
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

/// One event not yet on the server, with its instance and (for `created`/`rule_changed`) its
/// rules version: everything the server needs to hold it.
#[derive(Debug, Clone, FromRow)]
pub struct PendingEvent {
    pub event_id: i64,
    pub uid: String,
    pub kind: String,
    pub at: String,
    pub recorded_by: String,
    pub origin_seq: i64,
    pub traffic_gb: Option<String>,
    pub instance_uid: String,
    pub name: String,
    pub provider: String,
    pub region: Option<String>,
    pub gpu_model: String,
    pub currency: String,
    pub notes: Option<String>,
    pub planned_hours: Option<String>,
    pub instance_created_at: String,
    pub instance_recorded_by: String,
    #[sqlx(flatten)]
    pub rules: PendingRules,
}

/// The rules columns of a [`PendingEvent`]; all `None` for events without rules.
#[derive(Debug, Clone, FromRow)]
pub struct PendingRules {
    pub rules_uid: Option<String>,
    pub effective_from: Option<String>,
    pub price_per_gpu_hour: Option<String>,
    pub gpu_count: Option<i64>,
    pub billing_starts: Option<String>,
    pub stopped_billing: Option<String>,
    pub stopped_rate: Option<String>,
    pub no_gpu_rate: Option<String>,
    pub data_disk_per_hour: Option<String>,
    pub snapshot_per_hour: Option<String>,
    pub public_ip_per_hour: Option<String>,
    pub traffic_per_gb: Option<String>,
    pub granularity: Option<String>,
    pub wipe_after_stopped_days: Option<i64>,
}

/// Up to `limit` events the server does not hold yet, oldest first. `member` signs rows that
/// predate the link (there are none once `set_link` ran, but a row may come from an older tool).
pub async fn pending_events(
    conn: &mut SqliteConnection,
    member: &str,
    limit: i64,
) -> Result<Vec<PendingEvent>, StoreError> {
    Ok(sqlx::query_as::<_, PendingEvent>(
        "SELECT e.id AS event_id, e.uid, e.kind, CAST(e.at AS TEXT) AS at,
                coalesce(e.recorded_by, ?1) AS recorded_by, coalesce(e.origin_seq, e.id) AS origin_seq,
                e.traffic_gb,
                i.uid AS instance_uid, i.name, i.provider, i.region, i.gpu_model, i.currency, i.notes,
                i.planned_hours, CAST(i.created_at AS TEXT) AS instance_created_at,
                coalesce(i.recorded_by, ?1) AS instance_recorded_by,
                r.uid AS rules_uid, CAST(r.effective_from AS TEXT) AS effective_from,
                r.price_per_gpu_hour, r.gpu_count, r.billing_starts, r.stopped_billing,
                r.stopped_rate, r.no_gpu_rate, r.data_disk_per_hour, r.snapshot_per_hour,
                r.public_ip_per_hour, r.traffic_per_gb, r.granularity, r.wipe_after_stopped_days
         FROM ledger_events e
         JOIN instances i ON i.id = e.instance_id
         LEFT JOIN billing_rules r ON r.id = e.rules_id
         WHERE e.shared = 0
         ORDER BY e.id
         LIMIT ?2",
    )
    .bind(member)
    .bind(limit)
    .fetch_all(conn)
    .await?)
}

pub async fn count_pending(conn: &mut SqliteConnection) -> Result<i64, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT count(*) FROM ledger_events WHERE shared = 0")
            .fetch_one(conn)
            .await?,
    )
}

/// Mark events (by local id) as held by the server.
pub async fn mark_shared(conn: &mut SqliteConnection, event_ids: &[i64]) -> Result<(), StoreError> {
    // One statement per chunk: SQLite allows 32 766 parameters.
    for chunk in event_ids.chunks(10_000) {
        let placeholders = vec!["?"; chunk.len()].join(",");
        let sql = format!("UPDATE ledger_events SET shared = 1 WHERE id IN ({placeholders})");
        let mut query = sqlx::query(&sql);
        for id in chunk {
            query = query.bind(id);
        }
        query.execute(&mut *conn).await?;
    }
    Ok(())
}

/// What is known locally about an instance id the server sent.
#[derive(Debug, Clone, FromRow)]
pub struct KnownInstance {
    pub id: i64,
    pub name: String,
}

pub async fn instance_by_uid(
    conn: &mut SqliteConnection,
    uid: &str,
) -> Result<Option<KnownInstance>, StoreError> {
    Ok(
        sqlx::query_as::<_, KnownInstance>("SELECT id, name FROM instances WHERE uid = ?")
            .bind(uid)
            .fetch_optional(conn)
            .await?,
    )
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

pub async fn insert_pulled_instance(
    conn: &mut SqliteConnection,
    row: &PulledInstance<'_>,
) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar(
        "INSERT INTO instances (uid, name, provider, region, gpu_model, currency, notes,
             planned_hours, created_at, recorded_by)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
    )
    .bind(row.uid)
    .bind(row.local_name)
    .bind(row.provider)
    .bind(row.region)
    .bind(row.gpu_model)
    .bind(row.currency)
    .bind(row.notes)
    .bind(row.planned_hours)
    .bind(row.created_at)
    .bind(row.recorded_by)
    .fetch_one(conn)
    .await?)
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

/// Insert a pulled rules version unless it is already here; its local id either way.
pub async fn insert_pulled_rules(
    conn: &mut SqliteConnection,
    instance_id: i64,
    rules: &SharedRules,
) -> Result<i64, StoreError> {
    if let Some(id) = sqlx::query_scalar("SELECT id FROM billing_rules WHERE uid = ?")
        .bind(&rules.uid)
        .fetch_optional(&mut *conn)
        .await?
    {
        return Ok(id);
    }
    Ok(sqlx::query_scalar(
        "INSERT INTO billing_rules (uid, instance_id, effective_from, price_per_gpu_hour, gpu_count,
             billing_starts, stopped_billing, stopped_rate, no_gpu_rate, data_disk_per_hour,
             snapshot_per_hour, public_ip_per_hour, traffic_per_gb, granularity, wipe_after_stopped_days)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
    )
    .bind(&rules.uid)
    .bind(instance_id)
    .bind(&rules.effective_from)
    .bind(&rules.price_per_gpu_hour)
    .bind(rules.gpu_count)
    .bind(&rules.billing_starts)
    .bind(&rules.stopped_billing)
    .bind(rules.stopped_rate.as_deref())
    .bind(rules.no_gpu_rate.as_deref())
    .bind(&rules.data_disk_per_hour)
    .bind(&rules.snapshot_per_hour)
    .bind(&rules.public_ip_per_hour)
    .bind(&rules.traffic_per_gb)
    .bind(&rules.granularity)
    .bind(rules.wipe_after_stopped_days)
    .fetch_one(conn)
    .await?)
}

/// An event pulled from the server, already checked.
#[derive(Debug, Clone)]
pub struct PulledEvent<'a> {
    pub uid: &'a str,
    pub instance_id: i64,
    pub kind: &'a str,
    pub at: &'a str,
    pub rules_id: Option<i64>,
    pub traffic_gb: Option<&'a str>,
    pub recorded_by: &'a str,
    pub origin_seq: i64,
}

/// Insert a pulled event; false when it was here already (same uid).
pub async fn insert_pulled_event(
    conn: &mut SqliteConnection,
    row: &PulledEvent<'_>,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "INSERT INTO ledger_events (uid, instance_id, kind, at, rules_id, traffic_gb, recorded_by,
             origin_seq, shared)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1)
         ON CONFLICT (uid) DO NOTHING",
    )
    .bind(row.uid)
    .bind(row.instance_id)
    .bind(row.kind)
    .bind(row.at)
    .bind(row.rules_id)
    .bind(row.traffic_gb)
    .bind(row.recorded_by)
    .bind(row.origin_seq)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
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
         FROM team_conflicts ORDER BY found_at, key",
    )
    .fetch_all(conn)
    .await?)
}

/// Who recorded each event of one instance, in the order `ledger::events_for` returns them.
#[derive(Debug, Clone, FromRow)]
pub struct EventOrigin {
    pub uid: String,
    pub recorded_by: Option<String>,
}

pub async fn event_origins(
    conn: &mut SqliteConnection,
    instance_id: i64,
) -> Result<Vec<EventOrigin>, StoreError> {
    Ok(sqlx::query_as::<_, EventOrigin>(
        "SELECT uid, recorded_by FROM ledger_events WHERE instance_id = ?
         ORDER BY at, coalesce(recorded_by, ''), coalesce(origin_seq, id), uid",
    )
    .bind(instance_id)
    .fetch_all(conn)
    .await?)
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
