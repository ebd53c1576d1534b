//! Push: the events this laptop recorded that the server does not hold yet, in chunks, each
//! one statement (one round trip once prepared).
//!
//! Each statement bumps the team's sequence counter (a row lock held until it commits, so the
//! team's pushes commit one after another in sequence order), inserts the chunk's instances and
//! events with `ON CONFLICT (uid) DO NOTHING`, and reports how many events were new. Only after
//! the server answered are the events marked shared here; if the link drops in between, the next
//! push sends them again and the server ignores the copies: nothing is lost or doubled.

use super::server::Server;
use super::TeamError;
use crate::store::team::{self as repo, PendingEvent, SharedRules};
use crate::store::{Store, StoreError};

/// Events per push statement: large enough that 100 000 events take few round trips, small
/// enough that one statement stays a few megabytes.
pub const CHUNK: i64 = 25_000;

/// From this many events on, a chunk travels by `COPY` into a staging table (a few more round
/// trips, far less work for the server per row); below it, the one-statement path keeps an
/// incremental sync at one round trip.
pub const COPY_FROM: usize = 1_000;

/// The staging table of one `COPY` push: gone at the end of its transaction. The instance
/// columns are filled on the first event of each instance in the chunk only.
const STAGING: &str = "
CREATE TEMP TABLE team_push_staging (
    ord bigint, uid text, instance_uid text, kind text, at text, recorded_by text,
    origin_seq bigint, traffic_gb text, rules text,
    i_name text, i_provider text, i_region text, i_gpu_model text, i_currency text, i_notes text,
    i_planned_hours text, i_created_at text, i_recorded_by text
) ON COMMIT DROP";

/// Columns of [`STAGING`].
const STAGING_COLUMNS: i16 = 18;

/// [`PUSH`] reading the staged chunk: the same numbering under the team's row lock, the same
/// `ON CONFLICT (uid) DO NOTHING`.
const PUSH_STAGED: &str = "
WITH bump AS (
    UPDATE teams SET last_seq = last_seq + $2 WHERE id = $1 RETURNING last_seq - $2 AS base
), new_instances AS (
    INSERT INTO instances (uid, team_id, name, provider, region, gpu_model, currency, notes,
                           planned_hours, created_at, recorded_by)
    SELECT s.instance_uid::uuid, $1, s.i_name, s.i_provider, s.i_region, s.i_gpu_model,
           s.i_currency, s.i_notes, s.i_planned_hours, s.i_created_at, s.i_recorded_by
    FROM team_push_staging s
    WHERE s.i_created_at IS NOT NULL
    ON CONFLICT (uid) DO NOTHING
), new_events AS (
    INSERT INTO ledger_events (uid, team_id, seq, instance_uid, kind, at, recorded_by, origin_seq,
                               laptop, traffic_gb, rules)
    SELECT s.uid::uuid, $1, bump.base + s.ord, s.instance_uid::uuid, s.kind, s.at, s.recorded_by,
           s.origin_seq, $3::uuid, s.traffic_gb, s.rules::jsonb
    FROM bump, team_push_staging s
    ON CONFLICT (uid) DO NOTHING
    RETURNING 1
)
SELECT count(*) FROM new_events";

const PUSH: &str = "
WITH bump AS (
    UPDATE teams SET last_seq = last_seq + $2 WHERE id = $1 RETURNING last_seq - $2 AS base
), new_instances AS (
    INSERT INTO instances (uid, team_id, name, provider, region, gpu_model, currency, notes,
                           planned_hours, created_at, recorded_by)
    SELECT i.uid::uuid, $1, i.name, i.provider, i.region, i.gpu_model, i.currency, i.notes,
           i.planned_hours, i.created_at, i.recorded_by
    FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                $9::text[], $10::text[], $11::text[], $12::text[])
         AS i(uid, name, provider, region, gpu_model, currency, notes, planned_hours, created_at,
              recorded_by)
    ON CONFLICT (uid) DO NOTHING
), new_events AS (
    INSERT INTO ledger_events (uid, team_id, seq, instance_uid, kind, at, recorded_by, origin_seq,
                               laptop, traffic_gb, rules)
    SELECT e.uid::uuid, $1, bump.base + e.ord, e.instance_uid::uuid, e.kind, e.at, e.recorded_by,
           e.origin_seq, $13::uuid, e.traffic_gb, e.rules::jsonb
    FROM bump,
         unnest($14::text[], $15::text[], $16::text[], $17::text[], $18::text[], $19::int8[],
                $20::text[], $21::text[]) WITH ORDINALITY
         AS e(uid, instance_uid, kind, at, recorded_by, origin_seq, traffic_gb, rules, ord)
    ON CONFLICT (uid) DO NOTHING
    RETURNING 1
)
SELECT count(*) FROM new_events";

/// The rules version an event carries to the server, as JSON text.
fn rules_json(event: &PendingEvent) -> Result<Option<String>, TeamError> {
    let r = &event.rules;
    let Some(uid) = r.rules_uid.clone() else {
        return Ok(None);
    };
    let missing = || StoreError::Corrupt {
        what: "billing_rules",
        value: uid.clone(),
    };
    let shared = SharedRules {
        uid: uid.clone(),
        effective_from: r.effective_from.clone().ok_or_else(missing)?,
        price_per_gpu_hour: r.price_per_gpu_hour.clone().ok_or_else(missing)?,
        gpu_count: r.gpu_count.ok_or_else(missing)?,
        billing_starts: r.billing_starts.clone().ok_or_else(missing)?,
        stopped_billing: r.stopped_billing.clone().ok_or_else(missing)?,
        stopped_rate: r.stopped_rate.clone(),
        no_gpu_rate: r.no_gpu_rate.clone(),
        data_disk_per_hour: r.data_disk_per_hour.clone().ok_or_else(missing)?,
        snapshot_per_hour: r.snapshot_per_hour.clone().ok_or_else(missing)?,
        public_ip_per_hour: r.public_ip_per_hour.clone().ok_or_else(missing)?,
        traffic_per_gb: r.traffic_per_gb.clone().ok_or_else(missing)?,
        granularity: r.granularity.clone().ok_or_else(missing)?,
        wipe_after_stopped_days: r.wipe_after_stopped_days,
    };
    serde_json::to_string(&shared)
        .map(Some)
        .map_err(|err| TeamError::Server {
            detail: format!("could not encode a rules version: {err}"),
        })
}

/// The chunk as `COPY` rows for [`STAGING`].
fn staged_rows(chunk: &[PendingEvent]) -> Result<Vec<u8>, TeamError> {
    let mut rows = super::copy_binary::CopyRows::new(STAGING_COLUMNS);
    let mut seen = std::collections::HashSet::new();
    for (ord, e) in (1i64..).zip(chunk) {
        let rules = rules_json(e)?;
        rows.row();
        rows.int8(ord);
        rows.text(Some(&e.uid));
        rows.text(Some(&e.instance_uid));
        rows.text(Some(&e.kind));
        rows.text(Some(&e.at));
        rows.text(Some(&e.recorded_by));
        rows.int8(e.origin_seq);
        rows.text(e.traffic_gb.as_deref());
        rows.text(rules.as_deref());
        if seen.insert(e.instance_uid.as_str()) {
            rows.text(Some(&e.name));
            rows.text(Some(&e.provider));
            rows.text(e.region.as_deref());
            rows.text(Some(&e.gpu_model));
            rows.text(Some(&e.currency));
            rows.text(e.notes.as_deref());
            rows.text(e.planned_hours.as_deref());
            rows.text(Some(&e.instance_created_at));
            rows.text(Some(&e.instance_recorded_by));
        } else {
            for _ in 0..9 {
                rows.text(None);
            }
        }
    }
    Ok(rows.finish())
}

/// Send one large chunk through `COPY` into a staging table and insert it from there, in one
/// transaction: a cut anywhere before the commit leaves nothing on the server.
async fn push_chunk_copied(
    server: &mut Server,
    team_id: i64,
    laptop: &str,
    chunk: &[PendingEvent],
) -> Result<i64, TeamError> {
    let payload = staged_rows(chunk)?;
    let count = i64::try_from(chunk.len()).unwrap_or(i64::MAX);
    let result: Result<i64, sqlx::Error> = async {
        let mut tx = sqlx::Connection::begin(&mut server.conn).await?;
        sqlx::query(STAGING).execute(&mut *tx).await?;
        let mut copy = tx
            .copy_in_raw("COPY team_push_staging FROM STDIN (FORMAT binary)")
            .await?;
        if let Err(err) = copy.send(payload).await {
            // The connection is likely gone; the server drops the transaction either way.
            let _ = copy.abort("push interrupted").await;
            return Err(err);
        }
        copy.finish().await?;
        let inserted: i64 = sqlx::query_scalar(PUSH_STAGED)
            .bind(team_id)
            .bind(count)
            .bind(laptop)
            .fetch_one(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(inserted)
    }
    .await;
    result.map_err(|e| server.failed(&e))
}

/// Send one chunk; how many of its events the server did not have yet.
async fn push_chunk(
    server: &mut Server,
    team_id: i64,
    laptop: &str,
    chunk: &[PendingEvent],
) -> Result<i64, TeamError> {
    if chunk.len() >= COPY_FROM {
        return push_chunk_copied(server, team_id, laptop, chunk).await;
    }
    let mut seen = std::collections::HashSet::new();
    let instances: Vec<&PendingEvent> = chunk
        .iter()
        .filter(|e| seen.insert(e.instance_uid.as_str()))
        .collect();
    let column = |f: fn(&PendingEvent) -> Option<String>| -> Vec<Option<String>> {
        instances.iter().map(|e| f(e)).collect()
    };
    let rules = chunk
        .iter()
        .map(rules_json)
        .collect::<Result<Vec<_>, _>>()?;
    let count = i64::try_from(chunk.len()).unwrap_or(i64::MAX);
    let inserted: i64 = sqlx::query_scalar(PUSH)
        .bind(team_id)
        .bind(count)
        .bind(column(|e| Some(e.instance_uid.clone())))
        .bind(column(|e| Some(e.name.clone())))
        .bind(column(|e| Some(e.provider.clone())))
        .bind(column(|e| e.region.clone()))
        .bind(column(|e| Some(e.gpu_model.clone())))
        .bind(column(|e| Some(e.currency.clone())))
        .bind(column(|e| e.notes.clone()))
        .bind(column(|e| e.planned_hours.clone()))
        .bind(column(|e| Some(e.instance_created_at.clone())))
        .bind(column(|e| Some(e.instance_recorded_by.clone())))
        .bind(laptop)
        .bind(chunk.iter().map(|e| e.uid.as_str()).collect::<Vec<_>>())
        .bind(
            chunk
                .iter()
                .map(|e| e.instance_uid.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(chunk.iter().map(|e| e.kind.as_str()).collect::<Vec<_>>())
        .bind(chunk.iter().map(|e| e.at.as_str()).collect::<Vec<_>>())
        .bind(
            chunk
                .iter()
                .map(|e| e.recorded_by.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(chunk.iter().map(|e| e.origin_seq).collect::<Vec<_>>())
        .bind(
            chunk
                .iter()
                .map(|e| e.traffic_gb.as_deref())
                .collect::<Vec<_>>(),
        )
        .bind(rules)
        .fetch_one(&mut server.conn)
        .await
        .map_err(|e| server.failed(&e))?;
    Ok(inserted)
}

async fn pending_after(
    store: &Store,
    member: &str,
    after_id: i64,
) -> Result<Vec<PendingEvent>, TeamError> {
    let mut conn = store.pool().acquire().await.map_err(StoreError::from)?;
    let r = repo::pending_events(&mut conn, member, after_id, CHUNK).await?;
    Ok(r)
}

async fn mark_shared(store: &Store, last_id: Option<i64>) -> Result<(), TeamError> {
    let Some(last_id) = last_id else {
        return Ok(());
    };
    let mut tx = store.write().await?;
    repo::mark_shared_through(&mut tx, last_id).await?;
    tx.commit().await.map_err(StoreError::from)?;
    Ok(())
}

/// Push every pending event; how many the server did not have yet. While the server inserts one
/// chunk, the next is read here and the one before is marked shared, so the local work and the
/// network overlap.
pub async fn push(
    store: &Store,
    server: &mut Server,
    team_id: i64,
    member: &str,
    laptop: &str,
) -> Result<i64, TeamError> {
    let mut pushed = 0;
    let mut chunk = pending_after(store, member, 0).await?;
    // The last event of the chunk the server acknowledged last, not yet marked here.
    let mut acknowledged = None;
    while !chunk.is_empty() {
        let last_id = chunk.last().map_or(0, |e| e.event_id);
        let full = i64::try_from(chunk.len()).unwrap_or(0) >= CHUNK;
        let (sent, next, marked) = tokio::join!(
            push_chunk(server, team_id, laptop, &chunk),
            async {
                if full {
                    pending_after(store, member, last_id).await
                } else {
                    Ok(Vec::new())
                }
            },
            mark_shared(store, acknowledged)
        );
        marked?;
        // Marked only once the server answered: a cut before that sends the chunk again.
        pushed += sent?;
        acknowledged = Some(last_id);
        chunk = next?;
    }
    mark_shared(store, acknowledged).await?;
    Ok(pushed)
}
