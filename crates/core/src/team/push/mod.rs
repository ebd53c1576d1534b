//! Push: the events this laptop recorded that the server does not hold yet, in chunks.
//!
//! Each chunk bumps the team's sequence counter (a row lock held until it commits, so the
//! team's pushes commit one after another in sequence order), inserts the chunk's instances and
//! events, skipping any the server holds already, and reports how many events were new. A small
//! chunk (an incremental sync) is one statement, one round trip once prepared. A large one
//! travels by `COPY`: straight into the table when the server holds none of its events, through
//! a staging table and `ON CONFLICT (uid) DO NOTHING` when it does. Only after the server
//! answered are the events marked shared here; if the link drops in between, the next push sends
//! them again and the server ignores the copies: nothing is lost or doubled.
//!
//! This file holds the chunking, the choice of path and the marking; the statements are
//! `team::server::events` (the one-statement path) and `team::server::copied_events` (the `COPY`
//! path, whose row encoding and fallback are a subject of their own).

use super::server::copied_events::CopyEvent;
use super::server::events::Sent;
use super::server::Server;
use super::TeamError;
use crate::store::team::{self as repo, PendingChunk, PendingEvent, SharedRules};
use crate::store::{Store, StoreError};

/// Events per push statement: large enough that 100 000 events take few round trips, small
/// enough that one statement stays a few megabytes.
pub const CHUNK: i64 = 25_000;

/// The first chunk is smaller: the server starts on it sooner, and the next chunk is read here
/// while it works.
const FIRST_CHUNK: i64 = 5_000;

/// Each chunk after the first is twice the one before, up to [`CHUNK`]: this laptop reads a
/// chunk in about half the time the server takes to insert one, so the next chunk is ready when
/// the server is done with the last (a jump straight to [`CHUNK`] left the server idle for the
/// better part of the first chunk's time).
fn next_chunk(limit: i64) -> i64 {
    limit.saturating_mul(2).min(CHUNK)
}

/// From this many events on, a chunk travels by `COPY` (a few more round trips, far less work
/// for the server per row); below it, the one-statement path keeps an incremental sync at one
/// round trip.
pub const COPY_FROM: usize = 1_000;

/// The rules version an event brings to the server, as JSON text.
fn rules_json(chunk: &PendingChunk, event: &PendingEvent) -> Result<Option<String>, TeamError> {
    let Some(uid) = &event.rules_uid else {
        return Ok(None);
    };
    let r = chunk.rules.get(uid).ok_or_else(|| StoreError::Corrupt {
        what: "billing_rules",
        value: uid.clone(),
    })?;
    let shared = SharedRules {
        uid: uid.clone(),
        effective_from: r.effective_from.clone(),
        price_per_gpu_hour: r.price_per_gpu_hour.clone(),
        gpu_count: r.gpu_count,
        billing_starts: r.billing_starts.clone(),
        stopped_billing: r.stopped_billing.clone(),
        stopped_rate: r.stopped_rate.clone(),
        no_gpu_rate: r.no_gpu_rate.clone(),
        data_disk_per_hour: r.data_disk_per_hour.clone(),
        snapshot_per_hour: r.snapshot_per_hour.clone(),
        public_ip_per_hour: r.public_ip_per_hour.clone(),
        traffic_per_gb: r.traffic_per_gb.clone(),
        granularity: r.granularity.clone(),
        wipe_after_stopped_days: r.wipe_after_stopped_days,
    };
    serde_json::to_string(&shared)
        .map(Some)
        .map_err(|err| TeamError::Server {
            detail: format!("could not encode a rules version: {err}"),
        })
}

/// A uid this laptop stored, as a UUID (one that is not is a corrupt local value).
pub(super) fn parse_uuid(what: &'static str, text: &str) -> Result<uuid::Uuid, TeamError> {
    uuid::Uuid::parse_str(text).map_err(|_| {
        StoreError::Corrupt {
            what,
            value: text.to_owned(),
        }
        .into()
    })
}

/// A large chunk's events as its `COPY` rows carry them (every uid parsed, every rules version
/// encoded).
fn copy_events(chunk: &PendingChunk) -> Result<Vec<CopyEvent<'_>>, TeamError> {
    chunk
        .events
        .iter()
        .map(|event| {
            Ok(CopyEvent {
                uid: parse_uuid("event uid", &event.uid)?,
                instance_uid: parse_uuid("instance uid", &event.instance_uid)?,
                event,
                rules: rules_json(chunk, event)?,
            })
        })
        .collect()
}

/// A chunk the server committed, not yet marked shared here.
#[derive(Debug, Clone, Copy)]
struct Acknowledged {
    /// Its last event here.
    last_id: i64,
    /// The sequence numbers it was given, `(base, base + n]`.
    base: i64,
    end: i64,
}

/// Send one chunk.
async fn push_chunk(
    server: &mut Server,
    team_id: i64,
    laptop: &str,
    chunk: &PendingChunk,
) -> Result<Sent, TeamError> {
    if chunk.events.len() >= COPY_FROM {
        let events = copy_events(chunk)?;
        let laptop_uid = parse_uuid("laptop uid", laptop)?;
        return server
            .push_events_copied(team_id, laptop, laptop_uid, chunk, &events)
            .await;
    }
    let rules = chunk
        .events
        .iter()
        .map(|e| rules_json(chunk, e))
        .collect::<Result<Vec<_>, _>>()?;
    server.push_events(team_id, laptop, chunk, rules).await
}

async fn pending_after(
    store: &Store,
    member: &str,
    after_id: i64,
    limit: i64,
) -> Result<PendingChunk, TeamError> {
    let mut conn = store.read().await?;
    let r = repo::pending_events(&mut conn, member, after_id, limit).await?;
    Ok(r)
}

/// Read the next chunk in a task of its own: reading it (its JSON above all) is tens of
/// milliseconds of work, which on the push's own task would hold up the chunk being sent,
/// whose `COPY` data and answers wait for that task.
async fn read_ahead(
    store: &Store,
    member: &str,
    after_id: i64,
    limit: i64,
) -> Result<PendingChunk, TeamError> {
    let store = store.clone();
    let member = member.to_owned();
    tokio::spawn(async move { pending_after(&store, &member, after_id, limit).await })
        .await
        .map_err(|err| TeamError::Server {
            detail: format!("reading the next chunk to push failed: {err}"),
        })?
}

/// Mark an acknowledged chunk's events shared. If this laptop had pulled everything up to the
/// chunk's first number, it has everything up to its last too (the numbers between are its own
/// events, which a pull skips), so its pull cursor moves past them: the pull that follows a
/// large push does not make the server read through this laptop's own events to send nothing.
async fn mark_shared(store: &Store, acknowledged: Option<Acknowledged>) -> Result<(), TeamError> {
    let Some(chunk) = acknowledged else {
        return Ok(());
    };
    let mut tx = store.write().await?;
    repo::mark_shared_through(&mut tx, chunk.last_id).await?;
    repo::advance_pulled_seq(&mut tx, chunk.base, chunk.end).await?;
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
    let mut limit = FIRST_CHUNK;
    let mut chunk = pending_after(store, member, 0, limit).await?;
    // The chunk the server acknowledged last, not yet marked here.
    let mut acknowledged = None;
    while !chunk.events.is_empty() {
        let last_id = chunk.events.last().map_or(0, |e| e.event_id);
        let full = i64::try_from(chunk.events.len()).unwrap_or(0) >= limit;
        limit = next_chunk(limit);
        let (sent, next, marked) = tokio::join!(
            push_chunk(server, team_id, laptop, &chunk),
            async {
                if full {
                    read_ahead(store, member, last_id, limit).await
                } else {
                    Ok(PendingChunk::default())
                }
            },
            mark_shared(store, acknowledged)
        );
        marked?;
        // Marked only once the server answered: a cut before that sends the chunk again.
        let sent = sent?;
        pushed += sent.inserted;
        acknowledged = Some(Acknowledged {
            last_id,
            base: sent.base,
            end: sent
                .base
                .saturating_add(i64::try_from(chunk.events.len()).unwrap_or(i64::MAX)),
        });
        chunk = next?;
    }
    let (marked, analyzed) = tokio::join!(
        mark_shared(store, acknowledged),
        refresh_statistics(server, pushed)
    );
    marked?;
    analyzed?;
    Ok(pushed)
}

/// From this many events pushed at once on, the server's statistics of the ledger are refreshed.
pub const ANALYZE_FROM: i64 = 10_000;

/// After a bulk load the server's planner still believes the ledger as small as before it, and
/// plans the next pulls (pages of the new events) as if they were a few rows: a scan of the whole
/// rest of the ledger and an on-disk sort for each page. PostgreSQL's advice after a bulk load is
/// to `ANALYZE` at once rather than wait for autovacuum; it runs while this laptop marks the last
/// chunk shared. (A member whose role does not own the table gets a warning, not an error.)
///
/// A sample of 3 000 rows (a statistics target of 10, not the default 100) is plenty for what the
/// pulls ask of the planner (how many rows, and where `seq` begins and ends), and a tenth of the
/// default's work, which the push waits for. Autovacuum's own `ANALYZE` later takes the full
/// sample. One round trip: the three statements travel as one simple query.
async fn refresh_statistics(server: &mut Server, pushed: i64) -> Result<(), TeamError> {
    if pushed < ANALYZE_FROM {
        return Ok(());
    }
    server.refresh_ledger_statistics().await
}
