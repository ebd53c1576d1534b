//! Pull: the team's events after this laptop's cursor, written into the local working copy.
//!
//! The server numbers events in commit order (see `push`), so "everything after the last number
//! I applied" misses nothing. A page is one statement (one round trip): a binary `COPY` of tagged
//! rows bringing the team's counter, the events and the instances they belong to (each instance
//! once, not once per event), and, once the events are caught up, the shared records and team
//! budgets ([`fetch`] asks for it). Where the cursors stand after a page is one rule, [`after`],
//! whatever the page brought. Each page is applied in one local transaction together with the new
//! cursors: a link that drops mid-pull leaves the cursor where the last whole page ended, and
//! the next pull sends the rest again; an event already here is skipped by its uid. A pull skips
//! the events this laptop pushed itself (it has them), and moves its cursor past them using the
//! team's counter read in the same snapshot.
//!
//! Rows from the server come from other members' laptops, so each is checked like input
//! ([`read`] reads a page, [`check`] checks its rows, both pure): a row that fails is listed as an
//! unreadable conflict with who pushed it, never written into the ledger. [`write`] writes a
//! checked page and its cursors. This file holds what those steps share and [`pull`], which runs
//! them side by side.

use std::collections::BTreeSet;

mod check;
mod cursor;
mod fetch;
mod read;
mod write;

use chrono::{DateTime, Utc};

use check::{CheckedEvent, CheckedInstances, CheckedRules, Refused, TeamBudgetRow};
use cursor::{after, Cursors, Page};
use fetch::fetch_pages;
pub use fetch::{FIRST_PAGE, PAGE};
use write::apply;

use super::conflicts::Warmup;
use super::server::Server;
use super::TeamError;
use crate::store::team as repo;
use crate::store::Store;
use crate::team::records::PulledRecord;

/// What one pull did.
#[derive(Debug, Default)]
pub struct Pulled {
    pub events: i64,
    pub records: i64,
    /// Instances (by uid) that received events: only their conflicts can have changed.
    pub touched: BTreeSet<String>,
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
        let mut conn = store.read().await?;
        let link = repo::link(&mut conn)
            .await?
            .ok_or(TeamError::NotConnected)?;
        Cursors {
            events: link.pulled_seq,
            records: link.pulled_record_seq,
        }
    };
    let mut writer = repo::PageWriter::open(store).await?;
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
    writer.checkpoint_later();
    Ok(pulled)
}

/// A page read and checked (on a blocking thread), ready to write.
struct Prepared {
    page: Page,
    /// The page's instances by uid, each checked once: an event of one that failed fails with it.
    instances: CheckedInstances,
    events: Vec<CheckedEvent>,
    rules: Vec<CheckedRules>,
    /// Rows this version cannot read, with the reason: listed as conflicts, never written.
    unreadable: Vec<Refused>,
    /// The shared records, checked as they are written ([`records::apply`](crate::team::records::apply)).
    records: Vec<PulledRecord>,
    /// The team's budgets, on a page whose events are caught up.
    budgets: Vec<TeamBudgetRow>,
}

#[cfg(test)]
mod tests;
