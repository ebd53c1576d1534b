//! Reading a page as it arrived (binary `COPY` rows, see `team::server::pages`) into rows, and
//! checking them: pure work, so it runs on a blocking thread beside the writer and is tested
//! without a server.

use super::check::{self, PageEvent, PageInstance, TeamBudgetRow};
use super::{Page, Prepared};
use crate::team::records::PulledRecord;
use crate::team::TeamError;

/// Columns of a page's rows: what the row is, then up to ten fields.
pub(super) const COPY_COLUMNS: usize = 11;

/// A page's rows, read, not yet checked.
#[derive(Default)]
struct PageRows {
    head: Option<i64>,
    events: Vec<PageEvent>,
    instances: Vec<PageInstance>,
    records: Vec<PulledRecord>,
    budgets: Vec<TeamBudgetRow>,
}

/// JSON the server wrote from a `jsonb`. Should it still not read as JSON, it is kept as a
/// string, which the checks refuse like any other misshapen value: the row fails, not the page.
fn json(text: String) -> serde_json::Value {
    serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text))
}

/// Read a page's rows. The fields are text, checked afterwards; a field that is not UTF-8, a
/// row of an unknown kind or a payload cut short fails the page (the next pull asks again).
fn read_rows(bytes: &[u8]) -> Result<PageRows, TeamError> {
    let unreadable = |err: &dyn std::fmt::Display| TeamError::Server {
        detail: format!("the team database sent an unreadable page: {err}"),
    };
    let rows =
        crate::team::copy_binary::read_rows::<COPY_COLUMNS>(bytes).map_err(|e| unreadable(&e))?;
    let mut read = PageRows::default();
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
            Some("h") => read.head = number(next()?),
            Some("e") => read.events.push(PageEvent {
                seq: number(next()?),
                uid: next()?,
                instance_uid: next()?,
                kind: next()?,
                at: next()?,
                recorded_by: next()?,
                origin_seq: number(next()?),
                traffic_gb: next()?,
                rules: next()?.map(json),
            }),
            Some("i") => read.instances.push(PageInstance {
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
            Some("r") => read.records.push(PulledRecord {
                seq: number(next()?),
                kind: next()?,
                key: next()?,
                instance_uid: next()?,
                body: next()?.map(json),
                version: number(next()?),
                laptop: next()?,
                recorded_by: next()?,
            }),
            Some("b") => read.budgets.push(TeamBudgetRow {
                currency: next()?,
                amount: next()?,
                set_by: next()?,
            }),
            other => return Err(unreadable(&format!("a row of kind {other:?}"))),
        }
    }
    Ok(read)
}

/// Read a page of up to `limit` events and check every row (pure work, no database).
pub(super) fn prepare(bytes: &[u8], limit: i64) -> Result<Prepared, TeamError> {
    let rows = read_rows(bytes)?;
    let head = rows.head.ok_or_else(|| TeamError::Server {
        detail: "the team database sent a page without the team's counter".into(),
    })?;
    let count = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    let page = Page {
        head,
        events: count(rows.events.len()),
        last_event: rows.events.iter().filter_map(|e| e.seq).max(),
        records: count(rows.records.len()),
        last_record: rows.records.iter().filter_map(|r| r.seq).max(),
        limit,
    };
    let check::Checked {
        instances,
        events,
        rules,
        unreadable,
    } = check::check_rows(rows.events, &rows.instances);
    Ok(Prepared {
        page,
        instances,
        events,
        rules,
        unreadable,
        records: rows.records,
        budgets: rows.budgets,
    })
}
