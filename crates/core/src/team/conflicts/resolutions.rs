//! Resolutions: the choice a member makes between a refused event and the one standing in its
//! place, and how these choices travel, with each one pulled from the server applied only where
//! it settles a conflict the replay here finds.

use chrono::{DateTime, Utc};

use super::replay::{group_of, refused_in};
use super::{conflicts, Conflict};
use crate::store::ledger as ledger_repo;
use crate::store::team as repo;
use crate::store::team::conflict_replays::ReplayInputs;
use crate::store::team::withdrawals::{self, WithdrawalRow};
use crate::store::{Store, StoreError};
use crate::team::server::withdrawals::ServerWithdrawal;
use crate::team::server::Server;
use crate::team::TeamError;

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
    let member = crate::team::current_link(store)
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

/// A row from another laptop, checked like any input from the server (its time in the local
/// ledger's form, which `withdrawn_events` compares as text).
fn checked(row: ServerWithdrawal) -> Option<WithdrawalRow> {
    for id in [&row.uid, &row.instance_uid, &row.event_uid, &row.kept_uid] {
        uuid::Uuid::parse_str(id).ok()?;
    }
    let at = crate::team::time::canonical_time(&row.at).ok()?;
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
    let mut conn = store.read().await?;
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
        let mut conn = store.read().await?;
        withdrawals::unshared(&mut conn).await?
    };
    if !mine.is_empty() {
        server.push_withdrawals(team_id, &mine).await?;
        let mut tx = store.write().await?;
        let uids: Vec<String> = mine.iter().map(|r| r.uid.clone()).collect();
        withdrawals::mark_shared(&mut tx, &uids).await?;
        tx.commit().await.map_err(StoreError::from)?;
    }
    let resolved_here = {
        let mut conn = store.read().await?;
        withdrawals::any(&mut conn).await?
    };
    if !resolved_here && !current.iter().any(|c| c.standing.is_some()) {
        return Ok(0);
    }
    let theirs = server.withdrawals(team_id).await?;
    let held = {
        let mut conn = store.read().await?;
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
#[path = "resolutions_tests.rs"]
mod tests;
