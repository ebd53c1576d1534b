//! Pull: the team's events after this laptop's cursor, written into the local working copy.
//!
//! The server numbers events in commit order (see `push`), so "everything after the last number
//! I applied" misses nothing. A page is one statement (one round trip) bringing the events and the
//! instances they belong to (each instance once, not once per event): the first page, and any
//! page after one that was not full, as JSON together with the shared records ([`PULL`]); the
//! pages of a long pull in PostgreSQL's binary `COPY` format ([`copy_page`]), five times less
//! work for the server than building JSON. Each page is applied in one local transaction
//! together with the new cursor,
//! with one multi-row statement per table: a link that drops mid-pull leaves the cursor where the
//! last whole page ended, and the next pull sends the rest again; an event already here is
//! skipped by its uid. A pull skips the events this laptop pushed itself (it has them), and
//! moves its cursor past them using the team's counter read in the same snapshot.
//!
//! Rows from the server come from other members' laptops, so each is checked like input
//! ([`check`], pure): a row that fails is listed as an unreadable conflict with who pushed it,
//! never written into the ledger. [`write`] writes a checked page and its cursors.

use std::collections::BTreeSet;

mod check;
mod write;

use chrono::{DateTime, Utc};
use futures::TryStreamExt;
use serde::Deserialize;
use sqlx::FromRow;

pub(crate) use check::canonical_time;
use check::{CheckedEvent, CheckedRules, PageEvent, PageInstance, Refused};
use write::{apply, checkpoint_later, page_writer};

use super::conflicts::Warmup;
use super::server::Server;
use super::TeamError;
use crate::store::team as repo;
use crate::store::{Store, StoreError};

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
fn next_page(limit: i64, left: i64) -> i64 {
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

/// One page as [`PULL`] sends it.
#[derive(Debug, Clone, FromRow)]
struct JsonPage {
    head: i64,
    events: i64,
    last_event: Option<i64>,
    records: i64,
    last_record: Option<i64>,
    events_json: String,
    instances_json: String,
    records_json: String,
    budgets_json: Option<String>,
}

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

/// Columns of [`copy_page`]'s rows.
const COPY_COLUMNS: usize = 11;

/// A page as it arrived, not yet read.
enum Arrived {
    Json(JsonPage),
    Copied(Vec<u8>),
}

/// What a page says besides its rows.
#[derive(Debug, Clone)]
struct Page {
    head: i64,
    events: i64,
    last_event: Option<i64>,
    records: i64,
    last_record: Option<i64>,
    /// The shared records and team budgets, on a page read by [`PULL`] (a copied page brings
    /// none).
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
        let laptop = super::push::parse_uuid("laptop uid", who.laptop)?;
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

/// Fetch and read the pages after `at`, one after another, handing each to the writer. Stops
/// after the last page, or as soon as the writer has stopped (its error is the pull's).
async fn fetch_pages(
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

/// A page's rows, read.
struct PageRows {
    page: Page,
    events: Vec<PageEvent>,
    instances: Vec<PageInstance>,
}

fn read_json(page: JsonPage, limit: i64) -> Result<PageRows, TeamError> {
    Ok(PageRows {
        events: parse_list(&page.events_json, "events")?,
        instances: parse_list(&page.instances_json, "instances")?,
        page: Page {
            head: page.head,
            events: page.events,
            last_event: page.last_event,
            records: page.records,
            last_record: page.last_record,
            extras: Some(Extras {
                records_json: page.records_json,
                budgets_json: page.budgets_json,
            }),
            limit,
        },
    })
}

/// Read a copied page ([`copy_page`]). The fields are text, checked like a JSON page's values
/// afterwards; a field that is not UTF-8 fails the page, as it would in JSON.
fn read_copied(bytes: &[u8], limit: i64) -> Result<PageRows, TeamError> {
    let unreadable = |err: &dyn std::fmt::Display| TeamError::Server {
        detail: format!("the team database sent an unreadable page: {err}"),
    };
    let rows = super::copy_binary::read_rows::<COPY_COLUMNS>(bytes).map_err(|e| unreadable(&e))?;
    let mut head = None;
    let mut events = Vec::new();
    let mut instances = Vec::new();
    for row in rows {
        let mut fields = row.into_iter();
        let mut next = || {
            fields
                .next()
                .flatten()
                .map(|bytes| std::str::from_utf8(bytes).map(str::to_owned))
                .transpose()
                .map_err(|e| unreadable(&e))
        };
        let number = |field: Option<String>| field.and_then(|n| n.parse::<i64>().ok());
        match next()?.as_deref() {
            Some("h") => head = number(next()?),
            Some("e") => events.push(PageEvent {
                seq: number(next()?),
                uid: next()?,
                instance_uid: next()?,
                kind: next()?,
                at: next()?,
                recorded_by: next()?,
                origin_seq: number(next()?),
                traffic_gb: next()?,
                // Text the server wrote from a `jsonb`; if it still did not read as JSON, as
                // a string it fails the rules check and the event is listed as unreadable.
                rules: next()?.map(|json: String| {
                    serde_json::from_str(&json).unwrap_or(serde_json::Value::String(json))
                }),
            }),
            Some("i") => instances.push(PageInstance {
                uid: next()?,
                name: next()?,
                provider: next()?,
                region: next()?,
                gpu_model: next()?,
                currency: next()?,
                notes: next()?,
                planned_hours: next()?,
                created_at: next()?,
                recorded_by: next()?,
            }),
            other => return Err(unreadable(&format!("a row of kind {other:?}"))),
        }
    }
    let head = head.ok_or_else(|| unreadable(&"the team's counter is missing"))?;
    Ok(PageRows {
        page: Page {
            head,
            events: i64::try_from(events.len()).unwrap_or(i64::MAX),
            last_event: events.iter().filter_map(|e| e.seq).max(),
            records: 0,
            last_record: None,
            extras: None,
            limit,
        },
        events,
        instances,
    })
}

/// Read a page and check every row (pure work, no database).
fn prepare(arrived: Arrived, limit: i64) -> Result<Prepared, TeamError> {
    let PageRows {
        page,
        events: rows,
        instances,
    } = match arrived {
        Arrived::Json(page) => read_json(page, limit)?,
        Arrived::Copied(bytes) => read_copied(&bytes, limit)?,
    };
    let check::Checked {
        events,
        rules,
        unreadable,
    } = check::check_rows(rows, &instances);
    Ok(Prepared {
        page,
        instances,
        events,
        rules,
        unreadable,
    })
}

#[cfg(test)]
mod tests {
    use super::super::copy_binary::CopyRows;
    use super::*;

    /// The page sizes a pull of `total` events asks for, the first page included.
    fn page_sizes(total: i64) -> Vec<i64> {
        let mut sizes = vec![FIRST_PAGE];
        let mut at = FIRST_PAGE.min(total);
        while at < total {
            let limit = next_page(sizes[sizes.len() - 1], total - at);
            sizes.push(limit);
            at += limit.min(total - at);
        }
        sizes
    }

    #[test]
    fn pages_grow_to_the_most_and_shrink_again_before_the_end() {
        let sizes = page_sizes(100_000);
        assert_eq!(
            sizes,
            [2_500, 5_000, 10_000, 20_000, 25_000, 18_750, 9_375, 4_687, 2_500, 2_500]
        );
        // A short pull never reaches the largest page; a long one stays there in its middle.
        assert_eq!(page_sizes(12_000), [2_500, 4_750, 2_500, 2_500]);
        let long = page_sizes(1_000_000);
        assert!(long.iter().filter(|&&size| size == PAGE).count() > 30);
        assert_eq!(long.last(), Some(&FIRST_PAGE));
        assert!(long.iter().all(|&size| (FIRST_PAGE..=PAGE).contains(&size)));
    }

    const INSTANCE: &str = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";

    fn text_row(rows: &mut CopyRows, fields: [Option<&str>; COPY_COLUMNS]) {
        rows.row();
        for field in fields {
            rows.text(field);
        }
    }

    fn head(rows: &mut CopyRows, last_seq: &str) {
        let mut fields = [None; COPY_COLUMNS];
        fields[0] = Some("h");
        fields[1] = Some(last_seq);
        text_row(rows, fields);
    }

    fn event(rows: &mut CopyRows, seq: &str, uid: &str, kind: &str, rules: Option<&str>) {
        text_row(
            rows,
            [
                Some("e"),
                Some(seq),
                Some(uid),
                Some(INSTANCE),
                Some(kind),
                Some("2026-03-01T08:00:00Z"),
                Some("bob"),
                Some("7"),
                None,
                rules,
                None,
            ],
        );
    }

    fn instance(rows: &mut CopyRows, name: &str) {
        text_row(
            rows,
            [
                Some("i"),
                Some(INSTANCE),
                Some(name),
                Some("autodl"),
                None,
                Some("A100"),
                Some("CNY"),
                Some("tab\there\nnewline \\N \"quoted\""),
                None,
                Some("2026-03-01T08:00:00Z"),
                Some("bob"),
            ],
        );
    }

    #[test]
    fn a_copied_page_reads_as_a_json_page_would_and_brings_no_records() {
        let mut rows = CopyRows::new(COPY_COLUMNS as i16);
        event(
            &mut rows,
            "41",
            "0190a1b2-c3d4-7e5f-8a9b-000000000001",
            "started",
            None,
        );
        instance(&mut rows, "shared-a100");
        // Rules that are not JSON at all: the event is refused, not the page.
        event(
            &mut rows,
            "42",
            "0190a1b2-c3d4-7e5f-8a9b-000000000002",
            "rule_changed",
            Some("{not json"),
        );
        head(&mut rows, "50");
        let prepared = prepare(Arrived::Copied(rows.finish()), 5_000).expect("readable page");
        let page = &prepared.page;
        assert_eq!((page.head, page.events, page.last_event), (50, 2, Some(42)));
        assert!(page.extras.is_none());
        assert_eq!(
            prepared.instances[0].notes.as_deref(),
            Some("tab\there\nnewline \\N \"quoted\"")
        );
        assert_eq!(prepared.events.len(), 1);
        assert_eq!(prepared.unreadable.len(), 1);
        assert!(
            prepared.unreadable[0].1.contains("rules"),
            "{:?}",
            prepared.unreadable
        );

        // Short of its limit it is caught up on events, but the records still need a JSON page.
        let at = Cursors {
            events: 40,
            records: 3,
        };
        let (next, more) = after(page, at);
        assert!(more);
        assert_eq!((next.events, next.records), (50, 3));
        let json_page = Page {
            extras: Some(Extras {
                records_json: "[]".into(),
                budgets_json: None,
            }),
            events: 0,
            last_event: None,
            ..page.clone()
        };
        let (next, more) = after(&json_page, next);
        assert!(!more);
        assert_eq!((next.events, next.records), (50, 50));
    }

    #[test]
    fn a_copied_page_without_the_counter_or_with_an_unknown_row_is_refused() {
        let mut rows = CopyRows::new(COPY_COLUMNS as i16);
        instance(&mut rows, "shared-a100");
        let err = prepare(Arrived::Copied(rows.finish()), 5_000)
            .err()
            .expect("refused");
        assert!(err.to_string().contains("counter"), "{err}");

        let mut rows = CopyRows::new(COPY_COLUMNS as i16);
        head(&mut rows, "50");
        let mut odd = [None; COPY_COLUMNS];
        odd[0] = Some("x");
        text_row(&mut rows, odd);
        assert!(prepare(Arrived::Copied(rows.finish()), 5_000).is_err());

        let mut cut = CopyRows::new(COPY_COLUMNS as i16);
        head(&mut cut, "50");
        let bytes = cut.finish();
        assert!(prepare(Arrived::Copied(bytes[..bytes.len() - 1].to_vec()), 5_000).is_err());
    }
}
