//! Rows of the rental ledger: instances, their billing-rule versions, the append-only event log
//! and budgets. Plain rows with decimals kept as text; `crate::billing` turns them into domain
//! values and decides what may be written. Functions take a `SqliteConnection` so the same call
//! works on the pool and inside a write transaction.

use chrono::{DateTime, Utc};
use sqlx::{FromRow, SqliteConnection};

use super::StoreError;

#[derive(Debug, Clone, FromRow)]
pub struct InstanceRow {
    pub id: i64,
    pub name: String,
    pub provider: String,
    pub region: Option<String>,
    pub gpu_model: String,
    pub currency: String,
    pub notes: Option<String>,
    pub planned_hours: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// An instance to insert (no id yet).
#[derive(Debug, Clone)]
pub struct NewInstanceRow<'a> {
    pub name: &'a str,
    pub provider: &'a str,
    pub region: Option<&'a str>,
    pub gpu_model: &'a str,
    pub currency: &'a str,
    pub notes: Option<&'a str>,
    pub planned_hours: Option<String>,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, FromRow)]
pub struct RulesRow {
    pub id: i64,
    pub instance_id: i64,
    pub effective_from: DateTime<Utc>,
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

#[derive(Debug, Clone, FromRow)]
pub struct EventRow {
    pub id: i64,
    pub instance_id: i64,
    pub kind: String,
    pub at: DateTime<Utc>,
    pub rules_id: Option<i64>,
    pub traffic_gb: Option<String>,
}

pub async fn insert_instance(
    conn: &mut SqliteConnection,
    row: &NewInstanceRow<'_>,
) -> Result<i64, StoreError> {
    let id = sqlx::query_scalar(
        "INSERT INTO instances (name, provider, region, gpu_model, currency, notes, planned_hours, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
    )
    .bind(row.name)
    .bind(row.provider)
    .bind(row.region)
    .bind(row.gpu_model)
    .bind(row.currency)
    .bind(row.notes)
    .bind(row.planned_hours.as_deref())
    .bind(row.created_at)
    .fetch_one(conn)
    .await?;
    Ok(id)
}

pub async fn find_instance(
    conn: &mut SqliteConnection,
    name: &str,
) -> Result<Option<InstanceRow>, StoreError> {
    Ok(
        sqlx::query_as::<_, InstanceRow>("SELECT * FROM instances WHERE name = ?")
            .bind(name)
            .fetch_optional(conn)
            .await?,
    )
}

/// The name of instance `id`, if it is still there.
pub async fn instance_name(
    conn: &mut SqliteConnection,
    id: i64,
) -> Result<Option<String>, StoreError> {
    Ok(
        sqlx::query_scalar::<_, String>("SELECT name FROM instances WHERE id = ?")
            .bind(id)
            .fetch_optional(conn)
            .await?,
    )
}

pub async fn list_instances(conn: &mut SqliteConnection) -> Result<Vec<InstanceRow>, StoreError> {
    Ok(
        sqlx::query_as::<_, InstanceRow>("SELECT * FROM instances ORDER BY created_at, id")
            .fetch_all(conn)
            .await?,
    )
}

/// Insert one rules version (its `id` and `instance_id` fields are ignored; `instance_id` is
/// the argument) and return its id.
pub async fn insert_rules(
    conn: &mut SqliteConnection,
    instance_id: i64,
    row: &RulesRow,
) -> Result<i64, StoreError> {
    let id = sqlx::query_scalar(
        "INSERT INTO billing_rules (instance_id, effective_from, price_per_gpu_hour, gpu_count,
             billing_starts, stopped_billing, stopped_rate, no_gpu_rate, data_disk_per_hour,
             snapshot_per_hour, public_ip_per_hour, traffic_per_gb, granularity, wipe_after_stopped_days)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
    )
    .bind(instance_id)
    .bind(row.effective_from)
    .bind(&row.price_per_gpu_hour)
    .bind(row.gpu_count)
    .bind(&row.billing_starts)
    .bind(&row.stopped_billing)
    .bind(row.stopped_rate.as_deref())
    .bind(row.no_gpu_rate.as_deref())
    .bind(&row.data_disk_per_hour)
    .bind(&row.snapshot_per_hour)
    .bind(&row.public_ip_per_hour)
    .bind(&row.traffic_per_gb)
    .bind(&row.granularity)
    .bind(row.wipe_after_stopped_days)
    .fetch_one(conn)
    .await?;
    Ok(id)
}

/// Every instance's rules versions, grouped by instance, each instance's in [`rules_for`]'s order.
pub async fn all_rules(conn: &mut SqliteConnection) -> Result<Vec<RulesRow>, StoreError> {
    Ok(sqlx::query_as::<_, RulesRow>(
        "SELECT * FROM billing_rules ORDER BY instance_id, effective_from, id",
    )
    .fetch_all(conn)
    .await?)
}

pub async fn rules_for(
    conn: &mut SqliteConnection,
    instance_id: i64,
) -> Result<Vec<RulesRow>, StoreError> {
    Ok(sqlx::query_as::<_, RulesRow>(
        "SELECT * FROM billing_rules WHERE instance_id = ? ORDER BY effective_from, id",
    )
    .bind(instance_id)
    .fetch_all(conn)
    .await?)
}

/// Append one event recorded on this laptop (its `id` and `instance_id` fields are ignored),
/// with what the team needs of it: a new time-ordered uid, the member the laptop is linked as
/// (none while unlinked; connecting fills it in), and its order on this laptop, which is its id.
/// The id is chosen here as SQLite would (one past the largest), inside the caller's write
/// transaction, so the order number can be written with it.
pub async fn insert_event(
    conn: &mut SqliteConnection,
    instance_id: i64,
    row: &EventRow,
) -> Result<i64, StoreError> {
    let id = sqlx::query_scalar(
        "INSERT INTO ledger_events (id, instance_id, kind, at, rules_id, traffic_gb, uid,
                                    recorded_by, origin_seq)
         SELECT next.id, ?, ?, ?, ?, ?, (SELECT uid FROM new_uid),
                (SELECT member FROM team_link), next.id
         FROM (SELECT coalesce(max(id), 0) + 1 AS id FROM ledger_events) next
         RETURNING id",
    )
    .bind(instance_id)
    .bind(&row.kind)
    .bind(row.at)
    .bind(row.rules_id)
    .bind(row.traffic_gb.as_deref())
    .fetch_one(conn)
    .await?;
    Ok(id)
}

/// The event log in the order every laptop replays it: by time, then by the member who recorded
/// it, then in the recording laptop's own order (the uid as a last resort). On one laptop this is
/// the order the events were written in (writers keep time order, and `at` is RFC 3339 UTC text
/// from one encoder, which sorts by time); after a team merge it is the same on every laptop.
/// Events withdrawn when a member resolved a team conflict (`store::team::withdrawals`) are left out.
pub async fn events_for(
    conn: &mut SqliteConnection,
    instance_id: i64,
) -> Result<Vec<EventRow>, StoreError> {
    Ok(sqlx::query_as::<_, EventRow>(
        "SELECT * FROM ledger_events WHERE instance_id = ?
             AND NOT EXISTS (SELECT 1 FROM withdrawn_events w WHERE w.event_uid = ledger_events.uid)
         ORDER BY at, coalesce(recorded_by, ''), coalesce(origin_seq, id), uid",
    )
    .bind(instance_id)
    .fetch_all(conn)
    .await?)
}

pub async fn set_budget(
    conn: &mut SqliteConnection,
    instance_id: i64,
    amount: Option<&str>,
) -> Result<(), StoreError> {
    match amount {
        Some(amount) => {
            sqlx::query(
                "INSERT INTO budgets (instance_id, amount) VALUES (?, ?)
                 ON CONFLICT (instance_id) DO UPDATE SET amount = excluded.amount",
            )
            .bind(instance_id)
            .bind(amount)
            .execute(conn)
            .await?;
        }
        None => {
            sqlx::query("DELETE FROM budgets WHERE instance_id = ?")
                .bind(instance_id)
                .execute(conn)
                .await?;
        }
    }
    Ok(())
}

pub async fn budget_for(
    conn: &mut SqliteConnection,
    instance_id: i64,
) -> Result<Option<String>, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT amount FROM budgets WHERE instance_id = ?")
            .bind(instance_id)
            .fetch_optional(conn)
            .await?,
    )
}
