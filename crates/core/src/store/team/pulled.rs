//! Writing the rows a pull brought (already checked by `crate::team::pull`): instances, rules
//! versions and events, with multi-row statements, and the lookups of their local ids.

use sqlx::pool::PoolConnection;
use sqlx::{Sqlite, SqliteConnection, Transaction};

use crate::store::{Store, StoreError};

/// The connection a pull writes its pages on, with SQLite's automatic checkpoints off: each
/// page's commit would otherwise copy the write-ahead log back into the database file, and sync
/// it, while the user waits for the pull. The log is copied once, after the pull
/// ([`PageWriter::checkpoint_later`]), as PostgreSQL's own checkpointer does after a commit. The
/// connection is closed when the pull is done or fails, never handed back to the pool with that
/// setting.
pub struct PageWriter(PoolConnection<Sqlite>);

impl PageWriter {
    pub async fn open(store: &Store) -> Result<Self, StoreError> {
        let mut conn = store.read().await?;
        conn.close_on_drop();
        sqlx::query("PRAGMA wal_autocheckpoint = 0")
            .execute(&mut *conn)
            .await?;
        Ok(Self(conn))
    }

    /// Start writing a page, taking the write lock up front, as `Store::write` does.
    pub async fn begin(&mut self) -> Result<Transaction<'_, Sqlite>, StoreError> {
        Ok(sqlx::Connection::begin_with(&mut *self.0, "BEGIN IMMEDIATE").await?)
    }

    /// Copy the pull's pages from the write-ahead log into the database file, without making the
    /// sync wait for it (readers and writers go on meanwhile; one that exits first leaves the log
    /// to the next checkpoint, as SQLite always does).
    pub fn checkpoint_later(self) {
        let mut writer = self.0;
        tokio::spawn(async move {
            if let Err(err) = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
                .execute(&mut *writer)
                .await
            {
                tracing::debug!(%err, "checkpoint after a pull failed; the next one copies the log");
            }
        });
    }
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

/// The local name of the instance with team-wide id `uid` (empty when it is not here).
pub async fn instance_name_by_uid(
    conn: &mut SqliteConnection,
    uid: &str,
) -> Result<String, StoreError> {
    let name: Option<String> = sqlx::query_scalar("SELECT name FROM instances WHERE uid = ?")
        .bind(uid)
        .fetch_optional(conn)
        .await?;
    Ok(name.unwrap_or_default())
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

/// An instance as the team's server holds it, checked, inserted here under `local_name`; the
/// values that have one canonical form here (provider key, currency code, planned hours, the
/// creation time in UTC) in that form.
#[derive(Debug, Clone)]
pub struct PulledInstance {
    pub uid: String,
    pub local_name: String,
    pub provider: &'static str,
    pub region: Option<String>,
    pub gpu_model: String,
    pub currency: String,
    pub notes: Option<String>,
    pub planned_hours: Option<String>,
    pub created_at: String,
    pub recorded_by: String,
}

/// Insert one pulled instance under `row.local_name`, which the caller made free here.
pub async fn insert_pulled_instance(
    conn: &mut SqliteConnection,
    row: &PulledInstance,
) -> Result<i64, StoreError> {
    insert_pulled_instances(conn, std::slice::from_ref(row))
        .await?
        .remove(&row.uid)
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
    rows: &[PulledInstance],
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
                .bind(row.uid.as_str())
                .bind(row.local_name.as_str())
                .bind(row.provider)
                .bind(row.region.as_deref())
                .bind(row.gpu_model.as_str())
                .bind(row.currency.as_str())
                .bind(row.notes.as_deref())
                .bind(row.planned_hours.as_deref())
                .bind(row.created_at.as_str())
                .bind(row.recorded_by.as_str());
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
