//! Reading a page as it arrived (JSON or binary `COPY`) into rows, and checking them: pure work,
//! so it runs on a blocking thread beside the writer and is tested without a server.

use sqlx::FromRow;

use super::check::{self, PageEvent, PageInstance};
use super::{parse_list, Extras, Page, Prepared};
use crate::team::TeamError;

/// One page as [`PULL`](super::fetch::PULL) sends it.
#[derive(Debug, Clone, FromRow)]
pub(super) struct JsonPage {
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

/// Columns of [`copy_page`](super::fetch::copy_page)'s rows.
pub(super) const COPY_COLUMNS: usize = 11;

/// A page as it arrived, not yet read.
pub(super) enum Arrived {
    Json(JsonPage),
    Copied(Vec<u8>),
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

/// Read a copied page ([`copy_page`](super::fetch::copy_page)). The fields are text, checked
/// like a JSON page's values afterwards; a field that is not UTF-8 fails the page, as it would in
/// JSON.
fn read_copied(bytes: &[u8], limit: i64) -> Result<PageRows, TeamError> {
    let unreadable = |err: &dyn std::fmt::Display| TeamError::Server {
        detail: format!("the team database sent an unreadable page: {err}"),
    };
    let rows =
        crate::team::copy_binary::read_rows::<COPY_COLUMNS>(bytes).map_err(|e| unreadable(&e))?;
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
pub(super) fn prepare(arrived: Arrived, limit: i64) -> Result<Prepared, TeamError> {
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
