//! Rows of `ledger_withdrawals` (migration 0180): a member's choice between two events that cannot
//! both stand, recorded as a new row (events are immutable). `ledger::events_for` leaves the
//! withdrawn events out through the `withdrawn_events` view; `crate::team::conflicts` records,
//! shares and pulls these rows.

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use sqlx::{FromRow, SqliteConnection};

use crate::store::{bulk, StoreError};

/// One resolution.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct WithdrawalRow {
    pub uid: String,
    pub instance_uid: String,
    pub event_uid: String,
    pub kept_uid: String,
    pub recorded_by: String,
    pub at: String,
}

/// Record one (a pulled one arrives `shared`); a uid already here is left as it is.
pub async fn insert(
    conn: &mut SqliteConnection,
    row: &WithdrawalRow,
    shared: bool,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "INSERT INTO ledger_withdrawals (uid, instance_uid, event_uid, kept_uid, recorded_by, at, shared)
         VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (uid) DO NOTHING",
    )
    .bind(&row.uid)
    .bind(&row.instance_uid)
    .bind(&row.event_uid)
    .bind(&row.kept_uid)
    .bind(&row.recorded_by)
    .bind(&row.at)
    .bind(shared)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// Whether any resolution is held here.
pub async fn any(conn: &mut SqliteConnection) -> Result<bool, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM ledger_withdrawals)")
            .fetch_one(conn)
            .await?,
    )
}

/// The resolutions the team's server does not hold yet.
pub async fn unshared(conn: &mut SqliteConnection) -> Result<Vec<WithdrawalRow>, StoreError> {
    Ok(sqlx::query_as::<_, WithdrawalRow>(
        "SELECT uid, instance_uid, event_uid, kept_uid, recorded_by, at FROM ledger_withdrawals
         WHERE shared = 0 ORDER BY at, uid",
    )
    .fetch_all(conn)
    .await?)
}

pub async fn mark_shared(conn: &mut SqliteConnection, uids: &[String]) -> Result<(), StoreError> {
    for uid in uids {
        sqlx::query("UPDATE ledger_withdrawals SET shared = 1 WHERE uid = ?")
            .bind(uid)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// An event of the ledger by uid: (instance uid, kind, time), if it is here.
pub async fn event(
    conn: &mut SqliteConnection,
    uid: &str,
) -> Result<Option<(String, String, DateTime<Utc>)>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT i.uid, e.kind, e.at FROM ledger_events e JOIN instances i ON i.id = e.instance_id
         WHERE e.uid = ?",
    )
    .bind(uid)
    .fetch_optional(conn)
    .await?)
}

/// Every instance's events as replays see them (withdrawn ones left out), grouped by instance
/// and within an instance in the order `ledger::events_for` returns them, with each event's uid
/// and recorder: the whole working copy in one read.
pub async fn replayed_events_all(
    conn: &mut SqliteConnection,
) -> Result<Vec<ReplayedEvent>, StoreError> {
    replayed_events(conn, None, true).await
}

/// [`replayed_events_all`] for the instances `instance_ids` only (the team's conflict report,
/// for the instances whose ledger changed since it last looked).
pub async fn replayed_events_of(
    conn: &mut SqliteConnection,
    instance_ids: &[i64],
) -> Result<Vec<ReplayedEvent>, StoreError> {
    replayed_events(conn, Some(instance_ids), true).await
}

/// [`replayed_events_of`] as if no resolution were held: the conflicts a pulled resolution may
/// settle.
pub async fn unresolved_events_of(
    conn: &mut SqliteConnection,
    instance_ids: &[i64],
) -> Result<Vec<ReplayedEvent>, StoreError> {
    replayed_events(conn, Some(instance_ids), false).await
}

/// The uids of the resolutions held here.
pub async fn uids(conn: &mut SqliteConnection) -> Result<HashSet<String>, StoreError> {
    Ok(sqlx::query_scalar("SELECT uid FROM ledger_withdrawals")
        .fetch_all(conn)
        .await?
        .into_iter()
        .collect())
}

async fn replayed_events(
    conn: &mut SqliteConnection,
    instance_ids: Option<&[i64]>,
    honour_withdrawals: bool,
) -> Result<Vec<ReplayedEvent>, StoreError> {
    let withdrawn: HashSet<String> = if honour_withdrawals {
        sqlx::query_scalar("SELECT event_uid FROM withdrawn_events")
            .fetch_all(&mut *conn)
            .await?
            .into_iter()
            .collect()
    } else {
        HashSet::new()
    };
    const COLUMNS: &str = "json_group_array(json_array(id, instance_id, kind, at, rules_id,
                               traffic_gb, uid, recorded_by, origin_seq))";
    let doc: Option<String> = match instance_ids {
        None => {
            sqlx::query_scalar(&format!("SELECT {COLUMNS} FROM ledger_events"))
                .fetch_one(&mut *conn)
                .await?
        }
        Some(ids) => {
            let ids = serde_json::to_string(ids).map_err(|err| StoreError::Corrupt {
                what: "instance ids",
                value: err.to_string(),
            })?;
            sqlx::query_scalar(&format!(
                "SELECT {COLUMNS} FROM ledger_events
                 WHERE instance_id IN (SELECT value FROM json_each(?))"
            ))
            .bind(ids)
            .fetch_one(&mut *conn)
            .await?
        }
    };
    type Row = (
        i64,
        i64,
        String,
        String,
        Option<i64>,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<i64>,
    );
    let mut rows: Vec<Row> = bulk::json_rows("ledger events", doc)?;
    rows.retain(|row| row.6.as_ref().is_none_or(|uid| !withdrawn.contains(uid)));
    // `ledger::events_for`'s order, compared the way SQLite compares: text byte by byte. The
    // rows are put in order by their positions: sorting the wide rows themselves spent most of
    // its time moving them.
    fn key(row: &Row) -> (i64, &str, &str, i64, Option<&str>) {
        (
            row.1,
            row.3.as_str(),
            row.7.as_deref().unwrap_or(""),
            row.8.unwrap_or(row.0),
            row.6.as_deref(),
        )
    }
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_unstable_by(|&a, &b| key(&rows[a]).cmp(&key(&rows[b])));
    let mut slots: Vec<Option<Row>> = rows.into_iter().map(Some).collect();
    let rows = order.into_iter().filter_map(|index| slots[index].take());
    rows.map(
        |(id, instance_id, kind, at, rules_id, traffic_gb, uid, recorded_by, _)| {
            Ok(ReplayedEvent {
                event: crate::store::ledger::EventRow {
                    id,
                    instance_id,
                    kind,
                    at: bulk::stored_time("event time", &at)?,
                    rules_id,
                    traffic_gb,
                },
                uid: uid.ok_or_else(|| StoreError::Corrupt {
                    what: "event uid",
                    value: id.to_string(),
                })?,
                recorded_by,
            })
        },
    )
    .collect()
}

/// An event with its team identity, as [`replayed_events_all`] returns it.
#[derive(Debug, Clone, FromRow)]
pub struct ReplayedEvent {
    #[sqlx(flatten)]
    pub event: crate::store::ledger::EventRow,
    pub uid: String,
    pub recorded_by: Option<String>,
}
