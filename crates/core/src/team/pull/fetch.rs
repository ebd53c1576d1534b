//! Fetching a pull's pages: the round trips to the server (the statement a page is lives in
//! `team::server::pages`) and how large each page is, kept apart from reading and writing them so
//! the network side of a pull can be read (and tuned) alone.

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

/// Ask the server for the page of up to `limit` events after `at` (one round trip), and read it
/// on a blocking thread, so the reading overlaps the writing of the page before.
async fn fetch_prepared(
    server: &mut Server,
    who: Pulling<'_>,
    at: Cursors,
    limit: i64,
) -> Result<Prepared, TeamError> {
    let laptop = crate::team::push::parse_uuid("laptop uid", who.laptop)?;
    let bytes = server
        .fetch_page(
            who.team_id,
            who.member,
            laptop,
            (at.events, at.records),
            limit,
        )
        .await?;
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
