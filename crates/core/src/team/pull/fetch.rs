//! Fetching a pull's pages: the round trips to the server and how large each page is, kept apart
//! from reading and writing them so the network side of a pull can be read (and tuned) alone.

use futures::TryStreamExt;

use super::read::{prepare, Arrived, JsonPage};
use super::{after, Cursors, Fetched, Prepared, Pulling};
use crate::team::server::Server;
use crate::team::TeamError;

/// The most events per page: 100 000 events arrive in eight round trips, each overlapping the
/// writing of the page before.
pub const PAGE: i64 = 25_000;

/// The first page is small: nothing overlaps its wait, and the server sends it sooner.
pub const FIRST_PAGE: i64 = 2_500;

/// Each page after the first is twice the one before, up to [`PAGE`]: the server sends a page
/// in about the time this laptop takes to write half as many events, so the next page is ready
/// when the last one is written, from the second page on. Towards the end the pages shrink
/// again, each at most half of the `left` events the server holds past the cursor (its own
/// count, which includes this laptop's events it will skip): what the sync waits for after the
/// last page, writing it and replaying its instances for the conflict report, is then a small
/// page's worth, not a full one's.
pub(super) fn next_page(limit: i64, left: i64) -> i64 {
    limit
        .saturating_mul(2)
        .min(PAGE)
        .min((left / 2).max(FIRST_PAGE))
}

/// One page. The shared records (budgets, backups, …) come along only once the events are caught
/// up (`events` shorter than a page), so every instance a record names is already here.
const PULL: &str = "
WITH touch AS (
    UPDATE members SET last_sync_at = now() WHERE team_id = $1 AND name = $5 RETURNING 1
), page AS (
    SELECT le.seq, le.uid, le.instance_uid, le.kind, le.at, le.recorded_by, le.origin_seq,
           le.traffic_gb, le.rules
    FROM ledger_events le
    WHERE le.team_id = $1 AND le.seq > $2 AND le.laptop <> $3::uuid
    ORDER BY le.seq LIMIT $4
), caught_up AS (
    SELECT count(*) < $4 AS yes FROM page
), records AS (
    SELECT r.seq, r.kind, r.key, r.instance_uid, r.body, r.version, r.laptop, r.recorded_by
    FROM shared_records r, caught_up
    WHERE caught_up.yes AND r.team_id = $1 AND r.seq > $6 AND r.laptop <> $3::uuid
    ORDER BY r.seq LIMIT $4
)
SELECT t.last_seq AS head,
       (SELECT count(*) FROM page) AS events,
       (SELECT max(seq) FROM page) AS last_event,
       (SELECT count(*) FROM records) AS records,
       (SELECT max(seq) FROM records) AS last_record,
       coalesce((SELECT json_agg(json_build_array(
           p.seq, p.uid, p.instance_uid, p.kind, p.at, p.recorded_by, p.origin_seq, p.traffic_gb,
           p.rules) ORDER BY p.seq) FROM page p), '[]')::text AS events_json,
       coalesce((SELECT json_agg(json_build_object(
           'uid', i.uid, 'name', i.name, 'provider', i.provider, 'region', i.region,
           'gpu_model', i.gpu_model, 'currency', i.currency, 'notes', i.notes,
           'planned_hours', i.planned_hours, 'created_at', i.created_at,
           'recorded_by', i.recorded_by))
           FROM instances i WHERE i.uid IN (SELECT instance_uid FROM page)), '[]')::text
           AS instances_json,
       coalesce((SELECT json_agg(json_build_object(
           'kind', r.kind, 'key', r.key, 'instance_uid', r.instance_uid, 'body', r.body,
           'version', r.version, 'laptop', r.laptop, 'recorded_by', r.recorded_by, 'seq', r.seq)
           ORDER BY r.seq) FROM records r), '[]')::text AS records_json,
       (SELECT json_agg(json_build_object('currency', b.currency, 'amount', b.amount,
                                          'set_by', b.set_by) ORDER BY b.currency)
        FROM team_budgets b WHERE b.team_id = $1)::text AS budgets_json
FROM teams t
WHERE t.id = $1";

/// A page of a long pull, after a full one: its events, their instances and the team's counter,
/// as `COPY` rows of eleven text columns, the first saying what the row is (`h`: the counter,
/// `e`: an event, `i`: an instance). `COPY` takes no parameters, so the values are written into
/// the statement: each is a number or a UUID printed by this program, never text from elsewhere.
/// Brings no shared records: the page after the last copied one is read by [`PULL`].
fn copy_page(team_id: i64, after: i64, laptop: uuid::Uuid, limit: i64) -> String {
    format!(
        "COPY (
    WITH page AS (
        SELECT le.seq, le.uid, le.instance_uid, le.kind, le.at, le.recorded_by, le.origin_seq,
               le.traffic_gb, le.rules
        FROM ledger_events le
        WHERE le.team_id = {team_id} AND le.seq > {after} AND le.laptop <> '{laptop}'::uuid
        ORDER BY le.seq LIMIT {limit}
    )
    SELECT 'h', t.last_seq::text, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
    FROM teams t WHERE t.id = {team_id}
    UNION ALL
    SELECT 'e', p.seq::text, p.uid::text, p.instance_uid::text, p.kind, p.at, p.recorded_by,
           p.origin_seq::text, p.traffic_gb, p.rules::text, NULL
    FROM page p
    UNION ALL
    SELECT 'i', i.uid::text, i.name, i.provider, i.region, i.gpu_model, i.currency, i.notes,
           i.planned_hours, i.created_at, i.recorded_by
    FROM instances i WHERE i.uid IN (SELECT instance_uid FROM page)
) TO STDOUT (FORMAT binary)"
    )
}

/// Ask the server for the page of up to `limit` events after `at` (one round trip), by `COPY`
/// when `copied`.
async fn fetch(
    server: &mut Server,
    who: Pulling<'_>,
    at: Cursors,
    limit: i64,
    copied: bool,
) -> Result<Arrived, TeamError> {
    if copied {
        let laptop = crate::team::push::parse_uuid("laptop uid", who.laptop)?;
        let statement = copy_page(who.team_id, at.events, laptop, limit);
        let read: Result<Vec<u8>, sqlx::Error> = async {
            let mut rows = server.conn.copy_out_raw(&statement).await?;
            let mut bytes = Vec::new();
            while let Some(chunk) = rows.try_next().await? {
                bytes.extend_from_slice(&chunk);
            }
            Ok(bytes)
        }
        .await;
        return read.map(Arrived::Copied).map_err(|e| server.failed(&e));
    }
    let page: JsonPage = sqlx::query_as(PULL)
        .bind(who.team_id)
        .bind(at.events)
        .bind(who.laptop)
        .bind(limit)
        .bind(who.member)
        .bind(at.records)
        .fetch_one(&mut server.conn)
        .await
        .map_err(|e| server.failed(&e))?;
    Ok(Arrived::Json(page))
}

/// Fetch a page and read it on a blocking thread, so the reading overlaps the writing of the
/// page before.
async fn fetch_prepared(
    server: &mut Server,
    who: Pulling<'_>,
    at: Cursors,
    limit: i64,
    copied: bool,
) -> Result<Prepared, TeamError> {
    let arrived = fetch(server, who, at, limit, copied).await?;
    tokio::task::spawn_blocking(move || prepare(arrived, limit))
        .await
        .map_err(|err| TeamError::Server {
            detail: format!("reading a pulled page failed: {err}"),
        })?
}

/// Fetch and read the pages after `at`, one after another, handing each to the writer. Stops
/// after the last page, or as soon as the writer has stopped (its error is the pull's).
pub(super) async fn fetch_pages(
    server: &mut Server,
    who: Pulling<'_>,
    mut at: Cursors,
    pages: tokio::sync::mpsc::Sender<Fetched>,
) -> Result<(), TeamError> {
    let mut prepared = fetch_prepared(server, who, at, FIRST_PAGE, false).await?;
    loop {
        let (next, more) = after(&prepared.page, at);
        let page = &prepared.page;
        // After a full page the pull is long: copied pages. After one that was not full, the
        // JSON page brings what is left and the shared records.
        let copied = page.events >= page.limit;
        let limit = if copied {
            next_page(page.limit, page.head.saturating_sub(next.events))
        } else {
            FIRST_PAGE
        };
        let handed = pages
            .send(Fetched {
                prepared,
                next,
                more,
            })
            .await;
        if handed.is_err() || !more {
            return Ok(());
        }
        prepared = fetch_prepared(server, who, next, limit, copied).await?;
        at = next;
    }
}
