//! Pull: the team's events after this laptop's cursor, written into the local working copy.
//!
//! The server numbers events in commit order (see `push`), so "everything after the last number
//! I applied" misses nothing. A page is one statement (one round trip) bringing the events and the
//! instances they belong to (each instance once, not once per event): the first page, and any
//! page after one that was not full, as JSON together with the shared records; the pages of a
//! long pull in PostgreSQL's binary `COPY` format, five times less work for the server than
//! building JSON ([`fetch`] asks for them). Each page is applied in one local transaction
//! together with the new cursor,
//! with one multi-row statement per table: a link that drops mid-pull leaves the cursor where the
//! last whole page ended, and the next pull sends the rest again; an event already here is
//! skipped by its uid. A pull skips the events this laptop pushed itself (it has them), and
//! moves its cursor past them using the team's counter read in the same snapshot.
//!
//! Rows from the server come from other members' laptops, so each is checked like input
//! ([`read`] reads a page, [`check`] checks its rows, both pure): a row that fails is listed as an
//! unreadable conflict with who pushed it, never written into the ledger. [`write`] writes a
//! checked page and its cursors. This file holds what those steps share and [`pull`], which runs
//! them side by side.

use std::collections::BTreeSet;

mod check;
mod fetch;
mod read;
mod write;

use chrono::{DateTime, Utc};
use serde::Deserialize;

pub(crate) use check::canonical_time;
use check::{CheckedEvent, CheckedRules, PageInstance, Refused};
use fetch::fetch_pages;
pub use fetch::{FIRST_PAGE, PAGE};
use write::{apply, checkpoint_later, page_writer};

use super::conflicts::Warmup;
use super::server::Server;
use super::TeamError;
use crate::store::team as repo;
use crate::store::{Store, StoreError};

/// What a page says besides its rows.
#[derive(Debug, Clone)]
struct Page {
    head: i64,
    events: i64,
    last_event: Option<i64>,
    records: i64,
    last_record: Option<i64>,
    /// The shared records and team budgets, on a page read by [`PULL`](fetch::PULL) (a copied
    /// page brings none).
    extras: Option<Extras>,
    /// The most events (and records) asked for: fewer means caught up.
    limit: i64,
}

/// The shared records and team budgets of a page, as JSON.
#[derive(Debug, Clone)]
struct Extras {
    records_json: String,
    budgets_json: Option<String>,
}

/// What one pull did.
#[derive(Debug, Default)]
pub struct Pulled {
    pub events: i64,
    pub records: i64,
    /// Instances (by uid) that received events: only their conflicts can have changed.
    pub touched: BTreeSet<String>,
}

/// The cursors a pull continues from.
#[derive(Debug, Clone, Copy)]
struct Cursors {
    events: i64,
    records: i64,
}

/// Where the cursors stand once `page` is applied, and whether more pages follow.
fn after(page: &Page, at: Cursors) -> (Cursors, bool) {
    let events_full = page.events >= page.limit;
    let records_full = page.records >= page.limit;
    let events = if events_full {
        page.last_event.unwrap_or(at.events)
    } else {
        page.head.max(at.events)
    };
    // Records are held back while events are not caught up, and come only on a JSON page.
    let records = match (events_full, page.extras.is_some(), records_full) {
        (true, _, _) | (false, false, _) => at.records,
        (false, true, true) => page.last_record.unwrap_or(at.records),
        (false, true, false) => page.head.max(at.records),
    };
    let more = events_full || records_full || page.extras.is_none();
    (Cursors { events, records }, more)
}

/// Who pulls, and when.
#[derive(Debug, Clone, Copy)]
pub struct Pulling<'a> {
    pub team_id: i64,
    pub member: &'a str,
    /// This laptop's uid: its own events are not sent back.
    pub laptop: &'a str,
    pub now: DateTime<Utc>,
}

/// A page read and checked, with the cursors it leaves and whether more pages follow it.
struct Fetched {
    prepared: Prepared,
    next: Cursors,
    more: bool,
}

/// Pages fetched and read ahead of the writer: one waits while another is written and a third
/// arrives, so the writer (the slower side of a pull, and its critical path) never waits for a
/// page the server has already sent.
const PAGES_AHEAD: usize = 1;

/// Pull everything after the cursors. The server sends and this laptop reads the next pages
/// while one is written here, and the conflict report's replays of the pages already written
/// run beside both.
pub async fn pull(
    store: &Store,
    server: &mut Server,
    who: Pulling<'_>,
    warmup: &mut Warmup,
) -> Result<Pulled, TeamError> {
    let Pulling { laptop, now, .. } = who;
    let at = {
        let mut conn = store.pool().acquire().await.map_err(StoreError::from)?;
        let link = repo::link(&mut conn)
            .await?
            .ok_or(TeamError::NotConnected)?;
        Cursors {
            events: link.pulled_seq,
            records: link.pulled_record_seq,
        }
    };
    let mut writer = page_writer(store).await?;
    let (pages, arriving) = tokio::sync::mpsc::channel(PAGES_AHEAD);
    let writing = async {
        // Owned by the writing, so the fetching learns as soon as the writing stops.
        let mut arriving = arriving;
        let mut pulled = Pulled::default();
        while let Some(Fetched {
            mut prepared,
            next,
            more,
        }) = arriving.recv().await
        {
            let touched = apply(&mut writer, &mut prepared, next, laptop, now, &mut pulled).await?;
            if !more {
                return Ok(pulled);
            }
            warmup.nudge_instances(store, touched);
        }
        // Only a failed fetching stops before the last page, and its error is the one returned.
        Err(TeamError::Server {
            detail: "the pull stopped before its last page".into(),
        })
    };
    // The writer goes on with the pages already read when the fetching fails, so a pull cut
    // midway keeps every page that arrived whole. A failure of either leaves the cursor where
    // the last applied page ended.
    let (fetched, written) = tokio::join!(fetch_pages(server, who, at, pages), writing);
    fetched?;
    let pulled = written?;
    checkpoint_later(writer);
    Ok(pulled)
}

fn parse_list<T: for<'de> Deserialize<'de>>(json: &str, what: &str) -> Result<Vec<T>, TeamError> {
    // The JSON is built by this version's own query from typed columns, so its shape and types
    // are known; only the values are another laptop's input, and `check` reads those.
    serde_json::from_str(json).map_err(|err| TeamError::Server {
        detail: format!("the team database sent unreadable {what}: {err}"),
    })
}

/// A page read and checked (on a blocking thread), ready to write.
struct Prepared {
    page: Page,
    instances: Vec<PageInstance>,
    /// Sorted by uid: the uid index then takes them in its own order.
    events: Vec<CheckedEvent>,
    rules: Vec<CheckedRules>,
    /// Rows this version cannot read, with the reason: listed as conflicts, never written.
    unreadable: Vec<Refused>,
}

#[cfg(test)]
mod tests;
