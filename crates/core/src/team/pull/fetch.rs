//! Fetching a pull's pages: the one statement a page is, the round trips to the server and how
//! large each page is, kept apart from reading and writing them so the network side of a pull
//! can be read (and tuned) alone.

use futures::TryStreamExt;

use super::read::prepare;
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

/// The one statement of a page: up to `limit` events after the events cursor (none this laptop
/// pushed), the instances they belong to, and, once the events are caught up, up to `limit`
/// shared records after the records cursor and the team's budgets; it also marks this member as
/// just synced. They come as binary `COPY` rows of eleven text columns, the first saying what
/// the row is: `h` the team's counter, `e` an event, `i` an instance, `r` a record, `b` a budget.
///
/// `COPY` takes no parameters, so the values are written into the statement: numbers and a UUID
/// printed by this program, and the member's name as hex digits, which nothing can make read
/// as SQL.
pub(super) fn page_statement(
    who: Pulling<'_>,
    laptop: uuid::Uuid,
    at: Cursors,
    limit: i64,
) -> String {
    let team_id = who.team_id;
    let member = hex::encode(who.member);
    let (events, records) = (at.events, at.records);
    format!(
        "COPY (
    WITH touch AS (
        UPDATE members SET last_sync_at = now()
        WHERE team_id = {team_id} AND name = convert_from(decode('{member}', 'hex'), 'UTF8')
        RETURNING 1
    ), page AS (
        SELECT le.seq, le.uid, le.instance_uid, le.kind, le.at, le.recorded_by, le.origin_seq,
               le.traffic_gb, le.rules
        FROM ledger_events le
        WHERE le.team_id = {team_id} AND le.seq > {events} AND le.laptop <> '{laptop}'::uuid
        ORDER BY le.seq LIMIT {limit}
    ), caught_up AS (
        SELECT count(*) < {limit} AS yes FROM page
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
    UNION ALL
    (SELECT 'r', r.seq::text, r.kind, r.key, r.instance_uid::text, r.body::text,
            r.version::text, r.laptop::text, r.recorded_by, NULL, NULL
     FROM shared_records r, caught_up
     WHERE caught_up.yes AND r.team_id = {team_id} AND r.seq > {records}
           AND r.laptop <> '{laptop}'::uuid
     ORDER BY r.seq LIMIT {limit})
    UNION ALL
    SELECT 'b', b.currency, b.amount, b.set_by, NULL, NULL, NULL, NULL, NULL, NULL, NULL
    FROM team_budgets b, caught_up WHERE caught_up.yes AND b.team_id = {team_id}
) TO STDOUT (FORMAT binary)"
    )
}

/// Ask the server for the page of up to `limit` events after `at` (one round trip), and read it
/// on a blocking thread, so the reading overlaps the writing of the page before.
async fn fetch_prepared(
    server: &mut Server,
    who: Pulling<'_>,
    at: Cursors,
    limit: i64,
) -> Result<Prepared, TeamError> {
    let laptop = crate::team::push::parse_uuid("laptop uid", who.laptop)?;
    let statement = page_statement(who, laptop, at, limit);
    let read: Result<Vec<u8>, sqlx::Error> = async {
        let mut rows = server.conn.copy_out_raw(&statement).await?;
        let mut bytes = Vec::new();
        while let Some(chunk) = rows.try_next().await? {
            bytes.extend_from_slice(&chunk);
        }
        Ok(bytes)
    }
    .await;
    let bytes = read.map_err(|e| server.failed(&e))?;
    tokio::task::spawn_blocking(move || prepare(&bytes, limit))
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
    let mut limit = FIRST_PAGE;
    loop {
        let prepared = fetch_prepared(server, who, at, limit).await?;
        let (next, more) = after(&prepared.page, at);
        limit = next_page(limit, prepared.page.head.saturating_sub(next.events));
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
        at = next;
    }
}
