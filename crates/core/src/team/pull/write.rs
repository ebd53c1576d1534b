//! Writing a checked page into the local working copy: its new instances (a name taken here goes
//! under a free one, and the user is told), rules versions and events, and the new cursors, in
//! one SQLite transaction.

use std::collections::{BTreeSet, HashSet};

use chrono::{DateTime, Utc};
use sqlx::SqliteConnection;

use super::check::{checked_budgets, CheckedEvent};
use super::{Cursors, Prepared, Pulled};
use crate::store::team::{self as repo, ConflictRow, PageWriter, PulledInstance, SharedRules};
use crate::store::StoreError;
use crate::team::records;
use crate::team::TeamError;

/// Write one prepared page and its cursors in one local transaction; the instances (by uid) it
/// wrote events of.
pub(super) async fn apply(
    writer: &mut PageWriter,
    prepared: &mut Prepared,
    next: Cursors,
    laptop: &str,
    now: DateTime<Utc>,
    pulled: &mut Pulled,
) -> Result<BTreeSet<String>, TeamError> {
    let mut tx = writer.begin().await?;
    let events = std::mem::take(&mut prepared.events);
    let applied = write_page(&mut tx, prepared, events, now).await?;
    pulled.events += applied.events;
    pulled.touched.extend(applied.touched.iter().cloned());
    if prepared.page.caught_up() {
        pulled.records += records::apply(&mut tx, &prepared.records, laptop, now).await?;
        repo::replace_team_budgets(&mut tx, &checked_budgets(&prepared.budgets)).await?;
    }
    repo::set_pulled_seq(&mut tx, next.events, next.records).await?;
    tx.commit().await.map_err(StoreError::from)?;
    Ok(applied.touched)
}

/// A free local name for a shared instance whose name is taken here by another instance:
/// `name@member`, else `name@member-<uid prefix>`, else those with a counter, however many
/// instances already took them (another member may have pushed any of these names).
pub(super) async fn free_name(
    conn: &mut SqliteConnection,
    name: &str,
    member: &str,
    uid: &str,
) -> Result<String, StoreError> {
    let prefix: String = uid.chars().take(8).collect();
    let mut candidates = [
        format!("{name}@{member}"),
        format!("{name}@{member}-{prefix}"),
    ]
    .into_iter()
    .chain((2u64..).map(|n| format!("{name}@{member}-{prefix}-{n}")));
    loop {
        let candidate = candidates.next().unwrap_or_default();
        if !repo::name_taken(conn, &candidate).await? {
            return Ok(candidate);
        }
    }
}

/// What one page changed here.
pub(super) struct Applied {
    events: i64,
    touched: BTreeSet<String>,
}

/// Write one page: its new instances, every rules version and every event, each with a few
/// multi-row statements (an instance whose name is taken here alone goes on its own).
pub(super) async fn write_page(
    conn: &mut SqliteConnection,
    prepared: &Prepared,
    events: Vec<CheckedEvent>,
    now: DateTime<Utc>,
) -> Result<Applied, TeamError> {
    let instances = &prepared.instances;
    for (row, reason) in &prepared.unreadable {
        let uid = row.uid.clone().unwrap_or_default();
        let instance_uid = row.instance_uid.clone().unwrap_or_default();
        let name = instances
            .get(instance_uid.as_str())
            .and_then(|i| i.as_ref().ok())
            .map(|i| i.local_name.clone())
            .unwrap_or_default();
        repo::record_conflict(
            conn,
            &ConflictRow {
                key: format!("unreadable:{uid}:{}", row.seq.unwrap_or_default()),
                kind: "unreadable".into(),
                instance_uid,
                instance_name: name,
                member: row.recorded_by.clone().unwrap_or_default(),
                detail: reason.clone(),
                found_at: now,
            },
        )
        .await?;
    }
    let used: Vec<String> = events
        .iter()
        .map(|e| e.instance_uid.as_str())
        .collect::<HashSet<_>>()
        .into_iter()
        .map(str::to_owned)
        .collect();
    let used_uids: Vec<&str> = used.iter().map(String::as_str).collect();
    let mut instance_ids = repo::local_ids(conn, "instances", &used_uids).await?;
    let new_instances: Vec<PulledInstance> = used_uids
        .iter()
        .filter(|uid| !instance_ids.contains_key(**uid))
        .filter_map(|uid| instances.get(*uid)?.as_ref().ok().cloned())
        .collect();
    let under_own_name = repo::insert_pulled_instances(conn, &new_instances).await?;
    for instance in &new_instances {
        let id = match under_own_name.get(&instance.uid) {
            Some(id) => *id,
            None => insert_renamed(conn, instance, now).await?,
        };
        instance_ids.insert(instance.uid.clone(), id);
    }
    let rules: Vec<(i64, &SharedRules)> = prepared
        .rules
        .iter()
        .filter_map(|r| Some((*instance_ids.get(r.instance_uid.as_str())?, &r.rules)))
        .collect();
    repo::insert_pulled_rules(conn, &rules).await?;
    let rules_uids: Vec<&str> = prepared
        .rules
        .iter()
        .map(|r| r.rules.uid.as_str())
        .collect();
    let rules_ids = repo::local_ids(conn, "billing_rules", &rules_uids).await?;
    // Every event's instance is readable (its row was checked with it) and now written here.
    let pulled: Vec<repo::PulledEvent> = events
        .into_iter()
        .filter_map(|e| {
            Some(repo::PulledEvent {
                instance_id: *instance_ids.get(e.instance_uid.as_str())?,
                rules_id: e
                    .rules_uid
                    .as_deref()
                    .and_then(|uid| rules_ids.get(uid).copied()),
                uid: e.uid,
                kind: e.kind,
                at: e.at,
                traffic_gb: e.traffic_gb,
                recorded_by: e.recorded_by,
                origin_seq: e.origin_seq,
            })
        })
        .collect();
    let inserted = repo::insert_pulled_events(conn, pulled).await?;
    Ok(Applied {
        events: inserted,
        touched: used.into_iter().collect(),
    })
}

/// Insert a shared instance whose name is taken here under a free one, and tell the user.
pub(super) async fn insert_renamed(
    conn: &mut SqliteConnection,
    instance: &PulledInstance,
    now: DateTime<Utc>,
) -> Result<i64, TeamError> {
    let shared_name = &instance.local_name;
    let member = &instance.recorded_by;
    let local_name = free_name(conn, shared_name, member, &instance.uid).await?;
    let id = repo::insert_pulled_instance(
        conn,
        &PulledInstance {
            local_name: local_name.clone(),
            ..instance.clone()
        },
    )
    .await?;
    repo::record_conflict(
        conn,
        &ConflictRow {
            key: format!("name_collision:{}", instance.uid),
            kind: "name_collision".into(),
            instance_uid: instance.uid.clone(),
            instance_name: local_name.clone(),
            member: member.clone(),
            detail: format!(
                "{member}'s instance {shared_name:?} has the same name as one of yours; it is kept here as {local_name:?}"
            ),
            found_at: now,
        },
    )
    .await?;
    Ok(id)
}
