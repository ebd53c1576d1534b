//! What a merge could not settle by itself, for the user to see: events the billing rules refuse
//! in the merged log (a second release, a start of a running instance), shared instances kept
//! under another name because the name was taken here, and rows this version cannot read.
//! Nothing is dropped: refused events stay in the ledger (left out of the bill the same way on
//! every laptop) and stay listed, with the event that stands in the bill in their place, until a
//! member chooses which of the two to keep ([`resolve`]). Events are immutable, so the choice is a
//! new record (`store::withdrawals`): the other event is left out of every replay from then on.
//! [`exchange`] shares these records with the team at each sync, so every laptop settles the same
//! way and computes the same bill.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::server::Server;
use super::TeamError;
use crate::billing::{events::settle, rows};
use crate::store::conflict_replays::{self as replays_repo, ReplayInputs};
use crate::store::ledger as ledger_repo;
use crate::store::team as repo;
use crate::store::withdrawals::{self, ReplayedEvent, WithdrawalRow};
use crate::store::{Store, StoreError};
use crate::Coded;

/// One conflict, as `team sync --json` and the Settings → Team list show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Conflict {
    /// `refused_event`, `name_collision` or `unreadable`.
    pub kind: String,
    /// The instance's name on this laptop.
    pub instance: String,
    pub instance_uid: String,
    /// Who recorded the event (or the instance, for a name collision).
    pub member: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub event_uid: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub event_kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub at: Option<DateTime<Utc>>,
    /// The billing rule's error code for a refused event (`billing.after_release`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub code: Option<String>,
    /// What happened, in English (the UI words it from `kind` and `code`).
    pub message: String,
    /// For a notice a pull stored (`name_collision`, `unreadable`): what [`dismiss`] takes once
    /// the user has read it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub key: Option<String>,
    /// For a refused event: the accepted event of the same kind it collides with (the one in the
    /// bill now). Resolving keeps one of the two.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub standing: Option<StandingEvent>,
}

/// The event that stands in the bill where a refused one would not fit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct StandingEvent {
    pub event_uid: String,
    pub member: String,
    pub event_kind: String,
    pub at: DateTime<Utc>,
}

/// Refused events of one instance, each with the accepted event of its kind before it, from its
/// rules versions and its events in replay order.
fn refused_in(
    instance: &ReplayInputs,
    rules: &[ledger_repo::RulesRow],
    replayed: &[ReplayedEvent],
) -> Result<Vec<Conflict>, TeamError> {
    let settled = match rows::events_from_rows(rules, replayed.iter().map(|row| &row.event))
        .and_then(settle)
    {
        Ok(settled) => settled,
        // A value this version refuses outright: that instance is listed as broken, the report
        // (and the sync that makes it) goes on for the others.
        Err(err) => return Ok(vec![broken_instance(instance, &err)]),
    };
    let event_of = |index: usize| &replayed[index].event;
    let refused_at: Vec<usize> = settled.refused.iter().map(|(index, _)| *index).collect();
    let member_of = |index: usize| {
        replayed
            .get(index)
            .and_then(|row| row.recorded_by.clone())
            .unwrap_or_default()
    };
    Ok(settled
        .refused
        .into_iter()
        .map(|(index, err)| {
            let row = event_of(index);
            let standing = (0..index)
                .rev()
                .find(|&i| event_of(i).kind == row.kind && !refused_at.contains(&i))
                .map(|i| StandingEvent {
                    event_uid: replayed[i].uid.clone(),
                    member: member_of(i),
                    event_kind: event_of(i).kind.clone(),
                    at: event_of(i).at,
                });
            Conflict {
                kind: "refused_event".into(),
                instance: instance.name.clone(),
                instance_uid: instance.uid.clone(),
                member: member_of(index),
                event_uid: Some(replayed[index].uid.clone()),
                event_kind: Some(row.kind.clone()),
                at: Some(row.at),
                code: Some(err.code().to_owned()),
                key: None,
                message: format!(
                    "{} of {:?} at {} does not fit the merged ledger and is left out of the bill: {err}",
                    row.kind, instance.name, row.at
                ),
                standing,
            }
        })
        .collect())
}

/// The conflict shown for an instance whose ledger this version cannot bill at all.
fn broken_instance(instance: &ReplayInputs, err: &crate::billing::BillingError) -> Conflict {
    Conflict {
        kind: "broken_instance".into(),
        instance: instance.name.clone(),
        instance_uid: instance.uid.clone(),
        member: String::new(),
        event_uid: None,
        event_kind: None,
        at: None,
        code: Some(err.code().to_owned()),
        key: None,
        message: crate::billing::ledger::broken(&instance.name, err).message,
        standing: None,
    }
}

/// The slice of `rows` (grouped by instance id) that belongs to `instance_id`.
fn group_of<T>(rows: &[T], instance_id: i64, id_of: impl Fn(&T) -> i64) -> &[T] {
    let start = rows.partition_point(|row| id_of(row) < instance_id);
    let end = rows.partition_point(|row| id_of(row) <= instance_id);
    &rows[start..end]
}

/// Which replay code a kept report came from: a kept report is reused only by the version that
/// computed it (a newer one may settle differently).
const REPLAY_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "/1");

fn fingerprint_of(instance: &ReplayInputs) -> String {
    format!("{REPLAY_VERSION} {}", instance.fingerprint)
}

/// Reports replayed by this process and not kept in the database yet: by instance id, the
/// fingerprint they were replayed at and the instance's refused events.
pub type Replays = HashMap<i64, (String, Vec<Conflict>)>;

/// What one look at the working copy found.
struct Replayed {
    /// Every instance, in the report's order.
    instances: Vec<ReplayInputs>,
    /// The reports kept in the database: `(fingerprint, refused JSON)` by instance id.
    kept: HashMap<i64, (String, String)>,
    /// The instances replayed now: neither a kept report nor one of `known` was current.
    fresh: Replays,
}

/// Replay the instances whose fingerprint matches neither their kept report nor `known`: every
/// instance, or only those with uids in `only`.
async fn replay(
    store: &Store,
    known: &Replays,
    only: Option<&[String]>,
) -> Result<Replayed, TeamError> {
    let mut conn = store.pool().acquire().await.map_err(StoreError::from)?;
    // One snapshot: the fingerprints describe exactly the rows replayed.
    let mut snapshot = sqlx::Connection::begin(&mut *conn)
        .await
        .map_err(StoreError::from)?;
    let instances = match only {
        None => replays_repo::inputs(&mut snapshot).await?,
        Some(uids) => replays_repo::inputs_of(&mut snapshot, uids).await?,
    };
    let kept = replays_repo::kept(&mut snapshot).await?;
    let current = |i: &ReplayInputs| {
        let fingerprint = fingerprint_of(i);
        kept.get(&i.instance_id).map(|(f, _)| f) == Some(&fingerprint)
            || known.get(&i.instance_id).map(|(f, _)| f) == Some(&fingerprint)
    };
    let stale: Vec<&ReplayInputs> = instances.iter().filter(|i| !current(i)).collect();
    let mut fresh = Replays::new();
    if !stale.is_empty() {
        let rules = ledger_repo::all_rules(&mut snapshot).await?;
        let replayed = if only.is_none() && stale.len() == instances.len() {
            withdrawals::replayed_events_all(&mut snapshot).await?
        } else {
            let ids: Vec<i64> = stale.iter().map(|i| i.instance_id).collect();
            withdrawals::replayed_events_of(&mut snapshot, &ids).await?
        };
        for instance in &stale {
            let id = instance.instance_id;
            let found = refused_in(
                instance,
                group_of(&rules, id, |row| row.instance_id),
                group_of(&replayed, id, |row| row.event.instance_id),
            )?;
            fresh.insert(id, (fingerprint_of(instance), found));
        }
    }
    snapshot.rollback().await.map_err(StoreError::from)?;
    Ok(Replayed {
        instances,
        kept,
        fresh,
    })
}

/// Every instance's refused events now. An instance is replayed only when its fingerprint (its
/// events, rules versions, the resolutions, its name) matches neither the report kept for it
/// (`store::conflict_replays`) nor one in `known` (a [`Warmup`]'s); what was replayed is kept
/// for the next time.
async fn refused_using(store: &Store, mut known: Replays) -> Result<Vec<Conflict>, TeamError> {
    let Replayed {
        instances,
        kept,
        fresh,
    } = replay(store, &known, None).await?;
    known.extend(fresh);
    // Only what is current now is kept (a warm-up's report of an instance changed since is not).
    let mut current = Replays::new();
    for instance in &instances {
        let fingerprint = fingerprint_of(instance);
        if let Some((f, report)) = known.remove(&instance.instance_id) {
            if f == fingerprint {
                current.insert(instance.instance_id, (f, report));
            }
        }
    }
    keep_reports(store, &current).await;
    let mut found = Vec::new();
    for instance in &instances {
        if let Some((_, conflicts)) = current.remove(&instance.instance_id) {
            found.extend(conflicts);
        } else if let Some((_, json)) = kept.get(&instance.instance_id) {
            let conflicts: Vec<Conflict> =
                serde_json::from_str(json).map_err(|err| StoreError::Corrupt {
                    what: "kept conflict report",
                    value: err.to_string(),
                })?;
            found.extend(conflicts);
        }
    }
    Ok(found)
}

/// Keep the reports just replayed. Only a saving: if it fails (another writer holds the database
/// past the busy timeout), the next report replays these instances again.
async fn keep_reports(store: &Store, reports: &Replays) {
    if reports.is_empty() {
        return;
    }
    let kept = async {
        let rows = reports
            .iter()
            .map(|(id, (fingerprint, report))| {
                Ok((*id, fingerprint.clone(), serde_json::to_string(report)?))
            })
            .collect::<Result<Vec<_>, serde_json::Error>>()
            .map_err(|err| StoreError::Corrupt {
                what: "conflict report",
                value: err.to_string(),
            })?;
        let mut tx = store.write().await?;
        replays_repo::keep(&mut tx, &rows).await?;
        tx.commit().await.map_err(StoreError::from)
    };
    if let Err(err) = kept.await {
        tracing::warn!(%err, "conflict report not kept; the next one replays again");
    }
}

/// Replays done in the background while a sync works on (pushes, writes pulled pages), so the
/// report at its end replays only what changed after the last warm-up. The results stay in
/// memory until that report keeps them: a warm-up never waits for the database's writer, which
/// the pull holds. At most one warm-up runs at a time.
#[derive(Default)]
pub struct Warmup {
    replays: std::sync::Arc<std::sync::Mutex<Replays>>,
    running: Option<tokio::task::JoinHandle<()>>,
    /// Instances (by uid) written since the running warm-up started: the next one looks at them.
    waiting: std::collections::BTreeSet<String>,
}

impl Warmup {
    /// Start a warm-up over every instance whose report is not current, unless one is running.
    pub fn nudge(&mut self, store: &Store) {
        if !self.is_running() {
            self.start(store, None);
        }
    }

    /// Note instances (by uid) just written, and start a warm-up over those noted so far unless
    /// one is running (the next one takes them): it looks at these instances only, so a pull's
    /// warm-ups cost what its pages brought, not the whole ledger each time.
    pub fn nudge_instances(&mut self, store: &Store, uids: impl IntoIterator<Item = String>) {
        self.waiting.extend(uids);
        if !self.is_running() && !self.waiting.is_empty() {
            let only = std::mem::take(&mut self.waiting).into_iter().collect();
            self.start(store, Some(only));
        }
    }

    fn is_running(&self) -> bool {
        self.running.as_ref().is_some_and(|r| !r.is_finished())
    }

    fn start(&mut self, store: &Store, only: Option<Vec<String>>) {
        let store = store.clone();
        let replays = std::sync::Arc::clone(&self.replays);
        self.running = Some(tokio::spawn(async move {
            let known = replays.lock().map(|r| r.clone()).unwrap_or_default();
            match replay(&store, &known, only.as_deref()).await {
                Ok(done) => {
                    if let Ok(mut replays) = replays.lock() {
                        replays.extend(done.fresh);
                    }
                }
                Err(err) => {
                    tracing::debug!(%err, "conflict warm-up failed; the sync's report replays");
                }
            }
        }));
    }

    /// Wait for the running warm-up; what the warm-ups replayed.
    pub async fn finish(self) -> Replays {
        if let Some(running) = self.running {
            let _ = running.await;
        }
        std::sync::Arc::try_unwrap(self.replays)
            .ok()
            .and_then(|r| r.into_inner().ok())
            .unwrap_or_default()
    }
}

/// Every conflict in the working copy now: refused events, then the ones pulls stored.
pub async fn conflicts(store: &Store) -> Result<Vec<Conflict>, TeamError> {
    conflicts_using(store, Replays::new()).await
}

/// [`conflicts`], reusing what a [`Warmup`] replayed.
pub async fn conflicts_using(store: &Store, known: Replays) -> Result<Vec<Conflict>, TeamError> {
    let mut found = refused_using(store, known).await?;
    let mut conn = store.pool().acquire().await.map_err(StoreError::from)?;
    for row in repo::stored_conflicts(&mut conn).await? {
        found.push(Conflict {
            kind: row.kind,
            instance: row.instance_name,
            instance_uid: row.instance_uid,
            member: row.member,
            event_uid: None,
            event_kind: None,
            at: Some(row.found_at),
            code: None,
            key: Some(row.key),
            message: row.detail,
            standing: None,
        });
    }
    Ok(found)
}

/// Settle a refused event's conflict by keeping `keep_uid` (the refused event itself or the one
/// standing in its place) and withdrawing the other, as this member, at `now`. Nothing is
/// edited: the choice is a new record, shared at the next sync. Returns the conflicts left.
#[tracing::instrument(skip(store), err)]
pub async fn resolve(
    store: &Store,
    event_uid: &str,
    keep_uid: &str,
    now: DateTime<Utc>,
) -> Result<Vec<Conflict>, TeamError> {
    let member = super::current_link(store)
        .await?
        .ok_or(TeamError::NotConnected)?
        .member;
    let found = conflicts(store).await?;
    let conflict = found
        .iter()
        .find(|c| c.kind == "refused_event" && c.event_uid.as_deref() == Some(event_uid))
        .ok_or(TeamError::ConflictGone)?;
    let standing = conflict.standing.as_ref().ok_or(TeamError::ConflictGone)?;
    let withdrawn = if keep_uid == event_uid {
        standing.event_uid.as_str()
    } else if keep_uid == standing.event_uid {
        event_uid
    } else {
        return Err(TeamError::ConflictGone);
    };
    let row = WithdrawalRow {
        uid: uuid::Uuid::now_v7().to_string(),
        instance_uid: conflict.instance_uid.clone(),
        event_uid: withdrawn.to_owned(),
        kept_uid: keep_uid.to_owned(),
        recorded_by: member,
        at: now.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, false),
    };
    let mut tx = store.write().await?;
    withdrawals::insert(&mut tx, &row, false).await?;
    tx.commit().await.map_err(StoreError::from)?;
    conflicts(store).await
}

/// Dismiss a notice a pull stored (a shared name kept under another name here, a row this version
/// cannot read) once the user has read it: kept with the time, no longer listed. Only this
/// laptop's list changes (these notices are about this laptop's copy). Returns the conflicts left.
#[tracing::instrument(skip(store), err)]
pub async fn dismiss(
    store: &Store,
    key: &str,
    now: DateTime<Utc>,
) -> Result<Vec<Conflict>, TeamError> {
    let mut tx = store.write().await?;
    let dismissed = repo::dismiss_conflict(&mut tx, key, now).await?;
    tx.commit().await.map_err(StoreError::from)?;
    if !dismissed {
        return Err(TeamError::ConflictGone);
    }
    conflicts(store).await
}

#[derive(sqlx::FromRow)]
struct ServerWithdrawal {
    uid: String,
    instance_uid: String,
    event_uid: String,
    kept_uid: String,
    recorded_by: String,
    at: String,
}

/// A row from another laptop, checked like any input from the server (its time in the local
/// ledger's form, which `withdrawn_events` compares as text).
fn checked(row: ServerWithdrawal) -> Option<WithdrawalRow> {
    for id in [&row.uid, &row.instance_uid, &row.event_uid, &row.kept_uid] {
        uuid::Uuid::parse_str(id).ok()?;
    }
    let at = super::pull::canonical_time(&row.at).ok()?;
    Some(WithdrawalRow {
        uid: row.uid,
        instance_uid: row.instance_uid,
        event_uid: row.event_uid,
        kept_uid: row.kept_uid,
        recorded_by: row.recorded_by,
        at,
    })
}

/// A refused event and the one standing in its place, on one instance, in either order: what a
/// resolution must name.
type Pair = (String, String, String);

fn pair(instance_uid: &str, a: &str, b: &str) -> Pair {
    let (first, second) = if a <= b { (a, b) } else { (b, a) };
    (instance_uid.to_owned(), first.to_owned(), second.to_owned())
}

fn pair_of(conflict: &Conflict) -> Option<Pair> {
    let refused = conflict.event_uid.as_deref()?;
    let standing = conflict.standing.as_ref()?;
    Some(pair(&conflict.instance_uid, refused, &standing.event_uid))
}

/// The pairs a pulled resolution may settle: those the replay finds now (`current`, with the
/// resolutions held here honoured) and those it finds with none honoured (two members who chose
/// opposite ways each settle the conflict the other one's choice hides), on the instances the
/// resolutions name.
async fn settleable_pairs(
    store: &Store,
    current: &[Conflict],
    rows: &[ServerWithdrawal],
) -> Result<std::collections::HashSet<Pair>, TeamError> {
    let mut pairs: std::collections::HashSet<Pair> = current.iter().filter_map(pair_of).collect();
    let named: std::collections::BTreeSet<&str> =
        rows.iter().map(|r| r.instance_uid.as_str()).collect();
    let named: Vec<&str> = named.into_iter().collect();
    let mut conn = store.pool().acquire().await.map_err(StoreError::from)?;
    let ids = repo::local_ids(&mut conn, "instances", &named).await?;
    let id_list: Vec<i64> = ids.values().copied().collect();
    let events = withdrawals::unresolved_events_of(&mut conn, &id_list).await?;
    let rules = ledger_repo::all_rules(&mut conn).await?;
    for (uid, id) in &ids {
        let instance = ReplayInputs {
            instance_id: *id,
            name: String::new(),
            uid: uid.clone(),
            fingerprint: String::new(),
        };
        let found = refused_in(
            &instance,
            group_of(&rules, *id, |row| row.instance_id),
            group_of(&events, *id, |row| row.event.instance_id),
        )?;
        pairs.extend(found.iter().filter_map(pair_of));
    }
    Ok(pairs)
}

/// Share this laptop's resolutions with the team and take the others', given the conflicts the
/// working copy shows now. A sync costs nothing extra unless there is something to exchange: the
/// push only when this laptop resolved something, the fetch only while a refused event is shown
/// or a resolution is held here (a resolution only ever changes a bill where its two events
/// conflict: a laptop that lacks one of them meets the conflict, and fetches, in the sync that
/// brings it; one that holds a resolution must see an opposite one made elsewhere). Returns how
/// many arrived or were newly listed as unreadable (either changes the conflict list).
pub async fn exchange(
    store: &Store,
    server: &mut Server,
    team_id: i64,
    current: &[Conflict],
    now: DateTime<Utc>,
) -> Result<i64, TeamError> {
    let mine = {
        let mut conn = store.pool().acquire().await.map_err(StoreError::from)?;
        withdrawals::unshared(&mut conn).await?
    };
    if !mine.is_empty() {
        let column = |f: fn(&WithdrawalRow) -> &String| -> Vec<String> {
            mine.iter().map(|r| f(r).clone()).collect()
        };
        sqlx::query(
            "INSERT INTO ledger_withdrawals (uid, team_id, instance_uid, event_uid, kept_uid, recorded_by, at)
             SELECT u::uuid, $1, i::uuid, e::uuid, k::uuid, r, a
             FROM UNNEST($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
                  AS t(u, i, e, k, r, a)
             ON CONFLICT (uid) DO NOTHING",
        )
        .bind(team_id)
        .bind(column(|r| &r.uid))
        .bind(column(|r| &r.instance_uid))
        .bind(column(|r| &r.event_uid))
        .bind(column(|r| &r.kept_uid))
        .bind(column(|r| &r.recorded_by))
        .bind(column(|r| &r.at))
        .execute(&mut server.conn)
        .await
        .map_err(|e| server.failed(&e))?;
        let mut tx = store.write().await?;
        let uids: Vec<String> = mine.iter().map(|r| r.uid.clone()).collect();
        withdrawals::mark_shared(&mut tx, &uids).await?;
        tx.commit().await.map_err(StoreError::from)?;
    }
    let resolved_here = {
        let mut conn = store.pool().acquire().await.map_err(StoreError::from)?;
        withdrawals::any(&mut conn).await?
    };
    if !resolved_here && !current.iter().any(|c| c.standing.is_some()) {
        return Ok(0);
    }
    let theirs: Vec<ServerWithdrawal> = sqlx::query_as(
        "SELECT uid::text AS uid, instance_uid::text AS instance_uid, event_uid::text AS event_uid,
                kept_uid::text AS kept_uid, recorded_by, at
         FROM ledger_withdrawals WHERE team_id = $1 ORDER BY pushed_at, uid",
    )
    .bind(team_id)
    .fetch_all(&mut server.conn)
    .await
    .map_err(|e| server.failed(&e))?;
    let held = {
        let mut conn = store.pool().acquire().await.map_err(StoreError::from)?;
        withdrawals::uids(&mut conn).await?
    };
    let theirs: Vec<ServerWithdrawal> = theirs
        .into_iter()
        .filter(|row| !held.contains(&row.uid))
        .collect();
    if theirs.is_empty() {
        return Ok(0);
    }
    // A resolution takes an event out of every bill, so it is honoured only when it settles a
    // conflict the replay here actually finds; anything else is listed, never applied.
    let pairs = settleable_pairs(store, current, &theirs).await?;
    let mut tx = store.write().await?;
    let mut arrived = 0;
    for row in theirs {
        let (uid, member, instance_uid) = (
            row.uid.clone(),
            row.recorded_by.clone(),
            row.instance_uid.clone(),
        );
        let (event_uid, kept_uid) = (row.event_uid.clone(), row.kept_uid.clone());
        let detail = match checked(row) {
            Some(row)
                if pairs.contains(&pair(&row.instance_uid, &row.event_uid, &row.kept_uid)) =>
            {
                arrived += i64::from(withdrawals::insert(&mut tx, &row, true).await?);
                continue;
            }
            Some(_) => format!(
                "{member}'s resolution withdrawing event {event_uid} for {kept_uid} does not \
                 settle a conflict of these two events here; it is not applied"
            ),
            None => format!("{member}'s resolution {uid:?} could not be read; it is not applied"),
        };
        let instance_name = repo::instance_name_by_uid(&mut tx, &instance_uid).await?;
        // A new notice changes the list the sync reports, as an arrived resolution does.
        arrived += i64::from(
            repo::record_conflict(
                &mut tx,
                &repo::ConflictRow {
                    key: format!("unreadable_resolution:{uid}"),
                    kind: "unreadable".into(),
                    instance_uid,
                    instance_name,
                    member,
                    detail,
                    found_at: now,
                },
            )
            .await?,
        );
    }
    tx.commit().await.map_err(StoreError::from)?;
    Ok(arrived)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(uid: &str, at: &str) -> ServerWithdrawal {
        let id = "0b9f6c2e-4d4a-4f59-9c2a-6f7e1d2c3b4a".to_owned();
        ServerWithdrawal {
            uid: uid.to_owned(),
            instance_uid: id.clone(),
            event_uid: id.clone(),
            kept_uid: id,
            recorded_by: "bob".to_owned(),
            at: at.to_owned(),
        }
    }

    #[test]
    fn a_resolution_from_the_server_is_taken_only_when_its_ids_and_time_read_back() {
        let uid = "5d1c1c6e-8a3b-4c0e-9f1d-2b3a4c5d6e7f";
        assert!(checked(row(uid, "2026-03-01T10:00:00+00:00")).is_some());
        assert!(checked(row(
            "x'; DROP TABLE ledger_events; --",
            "2026-03-01T10:00:00+00:00"
        ))
        .is_none());
        assert!(checked(row(uid, "yesterday")).is_none());
    }
}
