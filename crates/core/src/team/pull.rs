//! Pull: the team's events after this laptop's cursor, written into the local working copy.
//!
//! The server numbers events in commit order (see `push`), so "everything after the last number
//! I applied" misses nothing. A page is one statement (one round trip): the server sends the page
//! as two JSON arrays, the events and the instances they belong to (each instance once, not once
//! per event), and the page is applied in one local transaction together with the new cursor,
//! with one multi-row statement per table: a link that drops mid-pull leaves the cursor where the
//! last whole page ended, and the next pull sends the rest again; an event already here is
//! skipped by its uid. A pull skips the events this laptop pushed itself (it has them), and
//! moves its cursor past them using the team's counter read in the same snapshot.
//!
//! Rows from the server come from other members' laptops, so each is checked like input: a row
//! this version cannot read is listed as a conflict, never written into the ledger.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::str::FromStr;

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use sqlx::{FromRow, SqliteConnection};

use super::conflicts::Warmup;
use super::records::{self, PulledRecord};
use super::server::Server;
use super::TeamError;
use crate::billing::rows;
use crate::store::ledger::RulesRow;
use crate::store::team::{self as repo, ConflictRow, PulledInstance, SharedRules};
use crate::store::{Store, StoreError};

/// Events per page: 100 000 events arrive in five round trips, each overlapping the writing of
/// the page before.
pub const PAGE: i64 = 25_000;

/// The first page is smaller: nothing overlaps its wait, and the server sends it sooner.
const FIRST_PAGE: i64 = 2_500;

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

/// One page as the server sends it.
#[derive(Debug, Clone, FromRow)]
struct Page {
    head: i64,
    events: i64,
    last_event: Option<i64>,
    records: i64,
    last_record: Option<i64>,
    events_json: String,
    instances_json: String,
    records_json: String,
    budgets_json: Option<String>,
    /// The most events (and records) asked for: fewer means caught up.
    #[sqlx(skip)]
    limit: i64,
}

/// An event of a page (every field optional: a row from a newer or broken client must be
/// reported, not fail the whole page). It arrives as a JSON array in field order (half the
/// server's work of an object with keys, for the thousands of events of a page).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct PageEvent {
    seq: Option<i64>,
    uid: Option<String>,
    instance_uid: Option<String>,
    kind: Option<String>,
    at: Option<String>,
    recorded_by: Option<String>,
    origin_seq: Option<i64>,
    traffic_gb: Option<String>,
    rules: Option<serde_json::Value>,
}

/// An instance of a page.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct PageInstance {
    uid: Option<String>,
    name: Option<String>,
    provider: Option<String>,
    region: Option<String>,
    gpu_model: Option<String>,
    currency: Option<String>,
    notes: Option<String>,
    planned_hours: Option<String>,
    created_at: Option<String>,
    recorded_by: Option<String>,
}

/// A team budget as the server holds it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct TeamBudgetRow {
    currency: Option<String>,
    amount: Option<String>,
    set_by: Option<String>,
}

/// The team budgets this version can read (`(currency, amount, set_by)`).
fn checked_budgets(rows: &[TeamBudgetRow]) -> Vec<(String, String, String)> {
    rows.iter()
        .filter_map(|row| {
            let currency = crate::billing::Currency::parse(row.currency.as_deref()?).ok()?;
            let amount = Decimal::from_str(row.amount.as_deref()?).ok()?;
            crate::billing::new_instance::validate_budget(amount).ok()?;
            Some((
                currency.code().to_owned(),
                amount.normalize().to_string(),
                row.set_by.clone()?,
            ))
        })
        .collect()
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

/// Ask the server for the page of up to `limit` events after `at` (one round trip).
async fn fetch(
    server: &mut Server,
    team_id: i64,
    member: &str,
    laptop: &str,
    at: Cursors,
    limit: i64,
) -> Result<Page, TeamError> {
    let page: Page = sqlx::query_as(PULL)
        .bind(team_id)
        .bind(at.events)
        .bind(laptop)
        .bind(limit)
        .bind(member)
        .bind(at.records)
        .fetch_one(&mut server.conn)
        .await
        .map_err(|e| server.failed(&e))?;
    Ok(Page { limit, ..page })
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
    // Records are held back while events are not caught up.
    let records = match (events_full, records_full) {
        (true, _) => at.records,
        (false, true) => page.last_record.unwrap_or(at.records),
        (false, false) => page.head.max(at.records),
    };
    (Cursors { events, records }, events_full || records_full)
}

/// Apply one page and its cursors in one local transaction.
async fn apply(
    store: &Store,
    page: &Page,
    next: Cursors,
    laptop: &str,
    now: DateTime<Utc>,
    pulled: &mut Pulled,
) -> Result<(), TeamError> {
    let mut tx = store.write().await?;
    let applied = apply_page(&mut tx, page, now).await?;
    pulled.events += applied.events;
    pulled.touched.extend(applied.touched);
    if page.events < page.limit {
        let list: Vec<PulledRecord> = parse_list(&page.records_json, "records")?;
        pulled.records += records::apply(&mut tx, &list, laptop, now).await?;
        let budgets: Vec<TeamBudgetRow> =
            parse_list(page.budgets_json.as_deref().unwrap_or("[]"), "team budgets")?;
        repo::replace_team_budgets(&mut tx, &checked_budgets(&budgets)).await?;
    }
    repo::set_pulled_seq(&mut tx, next.events, next.records).await?;
    tx.commit().await.map_err(StoreError::from)?;
    Ok(())
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

/// Pull everything after the cursors. While one page is written here the server already sends
/// the next, and the conflict report's replays of the pages already written run beside both.
pub async fn pull(
    store: &Store,
    server: &mut Server,
    who: Pulling<'_>,
    warmup: &mut Warmup,
) -> Result<Pulled, TeamError> {
    let Pulling {
        team_id,
        member,
        laptop,
        now,
    } = who;
    let mut pulled = Pulled::default();
    let mut at = {
        let mut conn = store.pool().acquire().await.map_err(StoreError::from)?;
        let link = repo::link(&mut conn)
            .await?
            .ok_or(TeamError::NotConnected)?;
        Cursors {
            events: link.pulled_seq,
            records: link.pulled_record_seq,
        }
    };
    let mut page = fetch(server, team_id, member, laptop, at, FIRST_PAGE).await?;
    loop {
        let (next, more) = after(&page, at);
        if !more {
            apply(store, &page, next, laptop, now, &mut pulled).await?;
            return Ok(pulled);
        }
        // A failure of either leaves the cursor where the last applied page ended.
        let (applied, fetched) = tokio::join!(
            apply(store, &page, next, laptop, now, &mut pulled),
            fetch(server, team_id, member, laptop, next, PAGE)
        );
        applied?;
        warmup.nudge(store);
        page = fetched?;
        at = next;
    }
}

fn parse_list<T: for<'de> Deserialize<'de>>(json: &str, what: &str) -> Result<Vec<T>, TeamError> {
    // The JSON is built by this version's own query from typed columns, so its shape and types
    // are known; only the values are another laptop's input, and `check` reads those.
    serde_json::from_str(json).map_err(|err| TeamError::Server {
        detail: format!("the team database sent unreadable {what}: {err}"),
    })
}

/// A pulled event checked and ready to write (as `store::team::PulledEvent`)
#[derive(Debug, Serialize)]
struct CheckedEvent<'a> {
    uid: &'a str,
    instance_uid: &'a str,
    kind: &'a str,
    at: &'a str,
    recorded_by: &'a str,
    origin_seq: i64,
    traffic_gb: Option<&'a str>,
    rules_uid: Option<String>,
}

/// A pulled rules version with the instance it belongs to.
#[derive(Debug, Serialize)]
struct CheckedRules<'a> {
    instance_uid: &'a str,
    #[serde(flatten)]
    rules: SharedRules,
}

const KINDS: [&str; 7] = [
    "created",
    "started",
    "stopped",
    "no_gpu_started",
    "released",
    "rule_changed",
    "traffic_recorded",
];

fn required<'a>(value: &'a Option<String>, what: &str) -> Result<&'a str, String> {
    value.as_deref().ok_or_else(|| format!("{what} is missing"))
}

fn check_uuid(id: &str) -> Result<(), String> {
    uuid::Uuid::parse_str(id)
        .map(|_| ())
        .map_err(|_| format!("{id:?} is not a UUID"))
}

fn check_time(time: &str) -> Result<(), String> {
    DateTime::parse_from_rfc3339(time)
        .map(|_| ())
        .map_err(|_| format!("{time:?} is not a time"))
}

/// An instance as it will be written here (name not yet made free).
fn check_instance(row: &PageInstance) -> Result<PulledInstance<'_>, String> {
    let uid = required(&row.uid, "instance")?;
    check_uuid(uid)?;
    let created_at = required(&row.created_at, "creation time")?;
    check_time(created_at)?;
    Ok(PulledInstance {
        uid,
        local_name: required(&row.name, "instance name")?,
        provider: required(&row.provider, "provider")?,
        region: row.region.as_deref(),
        gpu_model: required(&row.gpu_model, "GPU model")?,
        currency: required(&row.currency, "currency")?,
        notes: row.notes.as_deref(),
        planned_hours: row.planned_hours.as_deref(),
        created_at,
        recorded_by: required(&row.recorded_by, "instance member")?,
    })
}

fn check_event<'a>(
    row: &'a PageEvent,
    instances: &HashMap<&str, Result<PulledInstance<'a>, String>>,
) -> Result<(CheckedEvent<'a>, Option<SharedRules>), String> {
    let uid = required(&row.uid, "uid")?;
    check_uuid(uid)?;
    let instance_uid = required(&row.instance_uid, "instance")?;
    match instances.get(instance_uid) {
        Some(Ok(_)) => {}
        Some(Err(reason)) => return Err(reason.clone()),
        None => return Err("instance is missing".into()),
    }
    let kind = required(&row.kind, "kind")?;
    if !KINDS.contains(&kind) {
        return Err(format!("unknown event kind {kind:?}"));
    }
    let at = required(&row.at, "time")?;
    check_time(at)?;
    let recorded_by = required(&row.recorded_by, "member")?;
    let traffic_gb = row.traffic_gb.as_deref();
    if (kind == "traffic_recorded") != traffic_gb.is_some() {
        return Err("traffic amount does not match the event kind".into());
    }
    if let Some(gb) = traffic_gb {
        let gb = Decimal::from_str(gb).map_err(|_| format!("{gb:?} is not an amount"))?;
        if gb.is_sign_negative() {
            return Err("negative traffic".into());
        }
    }
    let rules = match &row.rules {
        None | Some(serde_json::Value::Null) => None,
        Some(json) => {
            let rules: SharedRules = serde_json::from_value(json.clone())
                .map_err(|err| format!("unreadable rules: {err}"))?;
            check_rules(&rules)?;
            Some(rules)
        }
    };
    if matches!(kind, "created" | "rule_changed") != rules.is_some() {
        return Err("rules do not match the event kind".into());
    }
    Ok((
        CheckedEvent {
            uid,
            instance_uid,
            kind,
            at,
            recorded_by,
            origin_seq: row.origin_seq.unwrap_or_default(),
            traffic_gb,
            rules_uid: rules.as_ref().map(|r| r.uid.clone()),
        },
        rules,
    ))
}

/// The rules must read back as valid billing rules here, or the bill could not be computed.
fn check_rules(rules: &SharedRules) -> Result<(), String> {
    uuid::Uuid::parse_str(&rules.uid).map_err(|_| "rules id is not a UUID".to_owned())?;
    let effective_from = DateTime::parse_from_rfc3339(&rules.effective_from)
        .map_err(|_| "rules time is not a time".to_owned())?
        .with_timezone(&Utc);
    let row = RulesRow {
        id: 0,
        instance_id: 0,
        effective_from,
        price_per_gpu_hour: rules.price_per_gpu_hour.clone(),
        gpu_count: rules.gpu_count,
        billing_starts: rules.billing_starts.clone(),
        stopped_billing: rules.stopped_billing.clone(),
        stopped_rate: rules.stopped_rate.clone(),
        no_gpu_rate: rules.no_gpu_rate.clone(),
        data_disk_per_hour: rules.data_disk_per_hour.clone(),
        snapshot_per_hour: rules.snapshot_per_hour.clone(),
        public_ip_per_hour: rules.public_ip_per_hour.clone(),
        traffic_per_gb: rules.traffic_per_gb.clone(),
        granularity: rules.granularity.clone(),
        wipe_after_stopped_days: rules.wipe_after_stopped_days,
    };
    let parsed = rows::rules_from_row(&row).map_err(|err| err.to_string())?;
    parsed.validate().map_err(|err| err.to_string())
}

/// A free local name for a shared instance whose name is taken here by another instance.
async fn free_name(
    conn: &mut SqliteConnection,
    name: &str,
    member: &str,
    uid: &str,
) -> Result<String, StoreError> {
    let candidate = format!("{name}@{member}");
    if !repo::name_taken(conn, &candidate).await? {
        return Ok(candidate);
    }
    Ok(format!("{name}@{member}-{}", &uid[..8]))
}

/// What one page changed here.
struct Applied {
    events: i64,
    touched: BTreeSet<String>,
}

/// Write one page: new instances one by one (a name may collide), then every rules version and
/// every event in one statement each.
async fn apply_page(
    conn: &mut SqliteConnection,
    page: &Page,
    now: DateTime<Utc>,
) -> Result<Applied, TeamError> {
    let events: Vec<PageEvent> = parse_list(&page.events_json, "events")?;
    let instance_rows: Vec<PageInstance> = parse_list(&page.instances_json, "instances")?;
    let instances: HashMap<&str, Result<PulledInstance<'_>, String>> = instance_rows
        .iter()
        .filter_map(|row| Some((row.uid.as_deref()?, check_instance(row))))
        .collect();
    let mut checked = Vec::with_capacity(events.len());
    let mut rules = Vec::new();
    let mut used: HashSet<&str> = HashSet::new();
    for row in &events {
        match check_event(row, &instances) {
            Ok((event, event_rules)) => {
                used.insert(event.instance_uid);
                if let Some(r) = event_rules {
                    rules.push(CheckedRules {
                        instance_uid: event.instance_uid,
                        rules: r,
                    });
                }
                checked.push(event);
            }
            Err(reason) => {
                let uid = row.uid.clone().unwrap_or_default();
                let instance_uid = row.instance_uid.clone().unwrap_or_default();
                let name = instances
                    .get(instance_uid.as_str())
                    .and_then(|i| i.as_ref().ok())
                    .map(|i| i.local_name.to_owned())
                    .unwrap_or_default();
                repo::record_conflict(
                    conn,
                    &ConflictRow {
                        key: format!("unreadable:{uid}:{}", row.seq.unwrap_or_default()),
                        kind: "unreadable".into(),
                        instance_uid,
                        instance_name: name,
                        member: row.recorded_by.clone().unwrap_or_default(),
                        detail: reason,
                        found_at: now,
                    },
                )
                .await?;
            }
        }
    }
    let used: Vec<&str> = used.into_iter().collect();
    let mut instance_ids = repo::local_ids(conn, "instances", &used).await?;
    for uid in &used {
        if instance_ids.contains_key(*uid) {
            continue;
        }
        if let Some(Ok(instance)) = instances.get(uid) {
            let id = insert_instance(conn, instance, now).await?;
            instance_ids.insert((*uid).to_owned(), id);
        }
    }
    repo::insert_pulled_rules(conn, &to_json(&rules)?).await?;
    let rules_uids: Vec<&str> = rules.iter().map(|r| r.rules.uid.as_str()).collect();
    let rules_ids = repo::local_ids(conn, "billing_rules", &rules_uids).await?;
    // An event whose instance could not be written (its row unreadable) was listed above.
    let mut pulled: Vec<repo::PulledEvent<'_>> = checked
        .iter()
        .filter_map(|e| {
            Some(repo::PulledEvent {
                uid: e.uid,
                instance_id: *instance_ids.get(e.instance_uid)?,
                kind: e.kind,
                at: e.at,
                rules_id: e
                    .rules_uid
                    .as_deref()
                    .and_then(|uid| rules_ids.get(uid).copied()),
                traffic_gb: e.traffic_gb,
                recorded_by: e.recorded_by,
                origin_seq: e.origin_seq,
            })
        })
        .collect();
    let inserted = repo::insert_pulled_events(conn, &mut pulled).await?;
    Ok(Applied {
        events: inserted,
        touched: used.into_iter().map(str::to_owned).collect(),
    })
}

fn to_json<T: Serialize>(rows: &T) -> Result<String, TeamError> {
    serde_json::to_string(rows).map_err(|err| TeamError::Server {
        detail: format!("could not encode pulled rows: {err}"),
    })
}

/// Insert a shared instance met for the first time, under its own name when free here.
async fn insert_instance(
    conn: &mut SqliteConnection,
    instance: &PulledInstance<'_>,
    now: DateTime<Utc>,
) -> Result<i64, TeamError> {
    let shared_name = instance.local_name;
    if !repo::name_taken(conn, shared_name).await? {
        return Ok(repo::insert_pulled_instance(conn, instance).await?);
    }
    let member = instance.recorded_by;
    let local_name = free_name(conn, shared_name, member, instance.uid).await?;
    let id = repo::insert_pulled_instance(
        conn,
        &PulledInstance {
            local_name: &local_name,
            ..instance.clone()
        },
    )
    .await?;
    repo::record_conflict(
        conn,
        &ConflictRow {
            key: format!("name_collision:{}", instance.uid),
            kind: "name_collision".into(),
            instance_uid: instance.uid.to_owned(),
            instance_name: local_name.clone(),
            member: member.to_owned(),
            detail: format!(
                "{member}'s instance {shared_name:?} has the same name as one of yours; it is kept here as {local_name:?}"
            ),
            found_at: now,
        },
    )
    .await?;
    Ok(id)
}
