//! Finding the refused events: each instance's ledger replayed through the billing rules, which
//! is the costly part of the conflict report, so what was replayed is kept per instance and
//! replayed again only when that instance changed, and a sync warms it up while it works.

use std::collections::HashMap;

use super::{Conflict, StandingEvent};
use crate::billing::{events::settle, rows};
use crate::store::ledger as ledger_repo;
use crate::store::team::conflict_replays::{self as replays_repo, ReplayInputs};
use crate::store::team::withdrawals::{self, ReplayedEvent};
use crate::store::{Store, StoreError};
use crate::team::TeamError;
use crate::Coded;

/// Refused events of one instance, each with the accepted event of its kind before it, from its
/// rules versions and its events in replay order.
pub(super) fn refused_in(
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
pub(super) fn group_of<T>(rows: &[T], instance_id: i64, id_of: impl Fn(&T) -> i64) -> &[T] {
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
    // One snapshot: the fingerprints describe exactly the rows replayed.
    let mut snapshot = store.snapshot().await?;
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
/// (`store::team::conflict_replays`) nor one in `known` (a [`Warmup`]'s); what was replayed is kept
/// for the next time.
pub(super) async fn refused_using(
    store: &Store,
    mut known: Replays,
) -> Result<Vec<Conflict>, TeamError> {
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
