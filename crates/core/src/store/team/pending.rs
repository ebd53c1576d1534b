//! The events recorded here that the server does not hold yet, read as one chunk with their
//! instances and rules versions (see `bulk`).

use serde::Deserialize;
use sqlx::SqliteConnection;

use super::link::SHARED_THROUGH;
use crate::store::StoreError;

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
    let mut events: Vec<PendingEvent> = crate::store::bulk::json_rows("pending events", events)?;
    events.sort_unstable_by_key(|e| e.event_id);
    let mut instances: Vec<PendingInstance> =
        crate::store::bulk::json_rows("pending instances", instances)?;
    instances.sort_unstable_by_key(|i| i.first_event_id);
    let rules: Vec<PendingRules> = crate::store::bulk::json_rows("pending rules", rules)?;
    Ok(PendingChunk {
        events,
        instances,
        rules: rules
            .into_iter()
            .map(|r| (r.rules_uid.clone(), r))
            .collect(),
    })
}

/// Events recorded here the server does not hold yet.
pub async fn count_pending(conn: &mut SqliteConnection) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar(&format!(
        "SELECT count(*) FROM ledger_events WHERE shared = 0 AND id > {SHARED_THROUGH}"
    ))
    .fetch_one(conn)
    .await?)
}

/// Mark every event not shared, so all of them are pushed again (linking to another team).
pub async fn unshare_events(conn: &mut SqliteConnection) -> Result<(), StoreError> {
    sqlx::query("UPDATE ledger_events SET shared = 0")
        .execute(conn)
        .await?;
    Ok(())
}
