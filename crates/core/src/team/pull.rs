//! Pull: the team's events after this laptop's cursor, written into the local working copy.
//!
//! The server numbers events in commit order (see `push`), so "everything after the last number
//! I applied" misses nothing. Each page is applied in one local transaction together with the
//! new cursor: a link that drops mid-pull leaves the cursor where the last whole page ended, and
//! the next pull sends the rest again; an event already here is skipped by its uid. A pull skips
//! the events this laptop pushed itself (it has them), and moves its cursor past them using the
//! team's counter read in the same snapshot.
//!
//! Rows from the server come from other members' laptops, so each is checked like input: a row
//! this version cannot read is listed as a conflict, never written into the ledger.

use std::collections::HashMap;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use sqlx::{FromRow, SqliteConnection};

use super::server::Server;
use super::TeamError;
use crate::billing::rows;
use crate::store::ledger::RulesRow;
use crate::store::team::{self as repo, ConflictRow, PulledEvent, PulledInstance, SharedRules};
use crate::store::{Store, StoreError};

/// Events per page.
pub const PAGE: i64 = 10_000;

const PULL: &str = "
WITH touch AS (
    UPDATE members SET last_sync_at = now() WHERE team_id = $1 AND name = $5 RETURNING 1
)
SELECT t.last_seq AS head, e.seq, e.uid::text AS uid, e.kind, e.at, e.recorded_by, e.origin_seq,
       e.traffic_gb, e.rules::text AS rules,
       i.uid::text AS instance_uid, i.name, i.provider, i.region, i.gpu_model, i.currency, i.notes,
       i.planned_hours, i.created_at AS instance_created_at, i.recorded_by AS instance_recorded_by
FROM teams t
LEFT JOIN LATERAL (
    SELECT * FROM ledger_events le
    WHERE le.team_id = t.id AND le.seq > $2 AND le.laptop <> $3::uuid
    ORDER BY le.seq LIMIT $4
) e ON true
LEFT JOIN instances i ON i.uid = e.instance_uid
WHERE t.id = $1
ORDER BY e.seq";

/// One row of a pull page: the team's counter, and an event with its instance (all `None` when
/// the page is empty).
#[derive(Debug, Clone, FromRow)]
struct PulledRow {
    head: i64,
    seq: Option<i64>,
    uid: Option<String>,
    kind: Option<String>,
    at: Option<String>,
    recorded_by: Option<String>,
    origin_seq: Option<i64>,
    traffic_gb: Option<String>,
    rules: Option<String>,
    instance_uid: Option<String>,
    name: Option<String>,
    provider: Option<String>,
    region: Option<String>,
    gpu_model: Option<String>,
    currency: Option<String>,
    notes: Option<String>,
    planned_hours: Option<String>,
    instance_created_at: Option<String>,
    instance_recorded_by: Option<String>,
}

/// What one pull did.
#[derive(Debug, Default)]
pub struct Pulled {
    pub events: i64,
}

/// Pull everything after the cursor.
pub async fn pull(
    store: &Store,
    server: &mut Server,
    team_id: i64,
    member: &str,
    laptop: &str,
    now: DateTime<Utc>,
) -> Result<Pulled, TeamError> {
    let mut pulled = Pulled::default();
    let mut cursor = {
        let mut conn = store.pool().acquire().await.map_err(StoreError::from)?;
        repo::link(&mut conn)
            .await?
            .ok_or(TeamError::NotConnected)?
            .pulled_seq
    };
    loop {
        let page: Vec<PulledRow> = sqlx::query_as(PULL)
            .bind(team_id)
            .bind(cursor)
            .bind(laptop)
            .bind(PAGE)
            .bind(member)
            .fetch_all(&mut server.conn)
            .await
            .map_err(|e| server.failed(&e))?;
        let events: Vec<&PulledRow> = page.iter().filter(|r| r.seq.is_some()).collect();
        let full = i64::try_from(events.len()).unwrap_or(0) >= PAGE;
        let next = if full {
            events.last().and_then(|r| r.seq).unwrap_or(cursor)
        } else {
            page.first().map_or(cursor, |r| r.head).max(cursor)
        };
        let mut tx = store.write().await?;
        pulled.events += apply_page(&mut tx, &events, now).await?;
        repo::set_pulled_seq(&mut tx, next).await?;
        tx.commit().await.map_err(StoreError::from)?;
        cursor = next;
        if !full {
            return Ok(pulled);
        }
    }
}

/// A pulled row checked and ready to write.
struct Checked<'a> {
    uid: &'a str,
    kind: &'a str,
    at: &'a str,
    recorded_by: &'a str,
    origin_seq: i64,
    traffic_gb: Option<&'a str>,
    rules: Option<SharedRules>,
    instance: PulledInstance<'a>,
    shared_name: &'a str,
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

fn check(row: &PulledRow) -> Result<Checked<'_>, String> {
    let text = |value: &'_ Option<String>, what: &str| -> Result<(), String> {
        value
            .as_ref()
            .map(|_| ())
            .ok_or_else(|| format!("{what} is missing"))
    };
    for (value, what) in [
        (&row.uid, "uid"),
        (&row.kind, "kind"),
        (&row.at, "time"),
        (&row.recorded_by, "member"),
        (&row.instance_uid, "instance"),
        (&row.name, "instance name"),
        (&row.provider, "provider"),
        (&row.gpu_model, "GPU model"),
        (&row.currency, "currency"),
        (&row.instance_created_at, "creation time"),
        (&row.instance_recorded_by, "instance member"),
    ] {
        text(value, what)?;
    }
    let uid = row.uid.as_deref().unwrap_or_default();
    let instance_uid = row.instance_uid.as_deref().unwrap_or_default();
    for id in [uid, instance_uid] {
        uuid::Uuid::parse_str(id).map_err(|_| format!("{id:?} is not a UUID"))?;
    }
    let kind = row.kind.as_deref().unwrap_or_default();
    if !KINDS.contains(&kind) {
        return Err(format!("unknown event kind {kind:?}"));
    }
    let at = row.at.as_deref().unwrap_or_default();
    for time in [at, row.instance_created_at.as_deref().unwrap_or_default()] {
        DateTime::parse_from_rfc3339(time).map_err(|_| format!("{time:?} is not a time"))?;
    }
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
    let rules = match row.rules.as_deref() {
        None => None,
        Some(json) => {
            let rules: SharedRules =
                serde_json::from_str(json).map_err(|err| format!("unreadable rules: {err}"))?;
            check_rules(&rules)?;
            Some(rules)
        }
    };
    if matches!(kind, "created" | "rule_changed") != rules.is_some() {
        return Err("rules do not match the event kind".into());
    }
    Ok(Checked {
        uid,
        kind,
        at,
        recorded_by: row.recorded_by.as_deref().unwrap_or_default(),
        origin_seq: row.origin_seq.unwrap_or_default(),
        traffic_gb,
        rules,
        shared_name: row.name.as_deref().unwrap_or_default(),
        instance: PulledInstance {
            uid: instance_uid,
            local_name: row.name.as_deref().unwrap_or_default(),
            provider: row.provider.as_deref().unwrap_or_default(),
            region: row.region.as_deref(),
            gpu_model: row.gpu_model.as_deref().unwrap_or_default(),
            currency: row.currency.as_deref().unwrap_or_default(),
            notes: row.notes.as_deref(),
            planned_hours: row.planned_hours.as_deref(),
            created_at: row.instance_created_at.as_deref().unwrap_or_default(),
            recorded_by: row.instance_recorded_by.as_deref().unwrap_or_default(),
        },
    })
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

/// Write one page; how many events were new here.
async fn apply_page(
    conn: &mut SqliteConnection,
    rows: &[&PulledRow],
    now: DateTime<Utc>,
) -> Result<i64, TeamError> {
    let mut instance_ids: HashMap<String, i64> = HashMap::new();
    let mut inserted = 0;
    for row in rows {
        let checked = match check(row) {
            Ok(checked) => checked,
            Err(reason) => {
                let uid = row.uid.clone().unwrap_or_default();
                repo::record_conflict(
                    conn,
                    &ConflictRow {
                        key: format!("unreadable:{uid}:{}", row.seq.unwrap_or_default()),
                        kind: "unreadable".into(),
                        instance_uid: row.instance_uid.clone().unwrap_or_default(),
                        instance_name: row.name.clone().unwrap_or_default(),
                        member: row.recorded_by.clone().unwrap_or_default(),
                        detail: reason,
                        found_at: now,
                    },
                )
                .await?;
                continue;
            }
        };
        let instance_id = match instance_ids.get(checked.instance.uid) {
            Some(id) => *id,
            None => {
                let id = match repo::instance_by_uid(conn, checked.instance.uid).await? {
                    Some(known) => known.id,
                    None => insert_instance(conn, &checked, now).await?,
                };
                instance_ids.insert(checked.instance.uid.to_owned(), id);
                id
            }
        };
        let rules_id = match &checked.rules {
            Some(rules) => Some(repo::insert_pulled_rules(conn, instance_id, rules).await?),
            None => None,
        };
        let new = repo::insert_pulled_event(
            conn,
            &PulledEvent {
                uid: checked.uid,
                instance_id,
                kind: checked.kind,
                at: checked.at,
                rules_id,
                traffic_gb: checked.traffic_gb,
                recorded_by: checked.recorded_by,
                origin_seq: checked.origin_seq,
            },
        )
        .await?;
        if new {
            inserted += 1;
        }
    }
    Ok(inserted)
}

/// Insert a shared instance met for the first time, under its own name when free here.
async fn insert_instance(
    conn: &mut SqliteConnection,
    checked: &Checked<'_>,
    now: DateTime<Utc>,
) -> Result<i64, TeamError> {
    let shared_name = checked.shared_name;
    if !repo::name_taken(conn, shared_name).await? {
        return Ok(repo::insert_pulled_instance(conn, &checked.instance).await?);
    }
    let member = checked.instance.recorded_by;
    let local_name = free_name(conn, shared_name, member, checked.instance.uid).await?;
    let id = repo::insert_pulled_instance(
        conn,
        &PulledInstance {
            local_name: &local_name,
            ..checked.instance.clone()
        },
    )
    .await?;
    repo::record_conflict(
        conn,
        &ConflictRow {
            key: format!("name_collision:{}", checked.instance.uid),
            kind: "name_collision".into(),
            instance_uid: checked.instance.uid.to_owned(),
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
