//! From "what is due" to "what to say now", with memory in SQLite.
//!
//! Each tick gets the reminders that hold now ([`super::triggers`]) and answers two lists:
//! `fired` (new this tick: send them to the desktop, the tray and the webhooks) and `open` (what
//! the in-app popup shows: fired, still holding, neither snoozed nor dismissed). An occurrence
//! fires once; after a snooze runs out it fires once more if it still holds. Because the record
//! is written in the same transaction that decides, a restart neither repeats a reminder nor
//! loses one that came due while the app was closed: it fires on the first tick after start.
//! After a sleep several reminders of one family may be due at once (50 %, 80 % and 100 % of a
//! budget); only the most urgent is sent, the others are recorded as silently caught up.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, NaiveTime, TimeZone, Utc};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{RemindError, Reminder, ReminderKind, ReminderRules};
use crate::store::reminders::{self as repo, ReminderRow};
use crate::store::{Store, StoreError};

/// What one tick decided.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct Tick {
    /// New this tick: to be sent.
    pub fired: Vec<Reminder>,
    /// What the popup shows: fired earlier or now, still holding, not snoozed or dismissed.
    pub open: Vec<Reminder>,
    /// Inside the quiet hours: only what breaks through them
    /// ([`super::stakes::breaks_quiet_hours`]) was fired.
    pub quiet: bool,
}

/// How long to put a reminder off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum Snooze {
    /// One hour from now.
    Hour,
    /// Tomorrow morning, local time.
    Tomorrow,
}

/// The local hour "until tomorrow" means.
pub const TOMORROW_HOUR: u32 = 9;

impl Snooze {
    /// When a snooze chosen at `now` ends; "tomorrow" is [`TOMORROW_HOUR`] o'clock of the next
    /// local day in `zone` (on a day the clocks skip that hour, the first valid moment after).
    pub fn until<Tz: TimeZone>(self, now: DateTime<Utc>, zone: &Tz) -> DateTime<Utc> {
        match self {
            Self::Hour => now + Duration::hours(1),
            Self::Tomorrow => {
                let local_day = now.with_timezone(zone).date_naive();
                let morning = (local_day + Duration::days(1))
                    .and_time(NaiveTime::from_hms_opt(TOMORROW_HOUR, 0, 0).unwrap_or_default());
                (0..3)
                    .find_map(|extra| {
                        zone.from_local_datetime(&(morning + Duration::hours(extra)))
                            .earliest()
                    })
                    .map_or(now + Duration::hours(24), |at| at.with_timezone(&Utc))
            }
        }
    }
}

fn in_quiet_hours<Tz: TimeZone>(
    rules: &ReminderRules,
    now: DateTime<Utc>,
    zone: &Tz,
) -> Result<bool, RemindError> {
    match &rules.quiet_hours {
        None => Ok(false),
        Some(quiet) => quiet.contains(now.with_timezone(zone).time()),
    }
}

/// Keep the most urgent reminder of each (instance, family); the rest are returned second.
fn most_urgent(reminders: Vec<Reminder>) -> (Vec<Reminder>, Vec<Reminder>) {
    let mut best: BTreeMap<(i64, &'static str), Reminder> = BTreeMap::new();
    let mut kept = Vec::new();
    let mut behind = Vec::new();
    for reminder in reminders {
        let Some((family, rank)) = reminder.kind.family() else {
            kept.push(reminder);
            continue;
        };
        let key = (reminder.instance_id, family);
        match best.remove(&key) {
            None => {
                best.insert(key, reminder);
            }
            Some(current) => {
                let current_rank = current.kind.family().map_or(0, |(_, r)| r);
                let (winner, loser) = if rank > current_rank {
                    (reminder, current)
                } else {
                    (current, reminder)
                };
                behind.push(loser);
                best.insert(key, winner);
            }
        }
    }
    kept.extend(best.into_values());
    kept.sort_by(|a, b| (a.due_at, &a.instance, a.kind).cmp(&(b.due_at, &b.instance, b.kind)));
    (kept, behind)
}

fn row_of(reminder: &Reminder, fired_at: DateTime<Utc>, silent: bool) -> ReminderRow {
    ReminderRow {
        instance_id: reminder.instance_id,
        kind: reminder.kind.as_str().to_owned(),
        occurrence: reminder.occurrence.clone(),
        due_at: reminder.due_at,
        fired_at,
        silent,
        snoozed_until: None,
        dismissed_at: None,
    }
}

/// Decide what fires now among `due` (what holds at `now`), record it, and say what is open.
/// `zone` is the user's time zone, for the quiet hours.
#[tracing::instrument(skip_all, err, fields(due = due.len()))]
pub async fn tick<Tz: TimeZone>(
    store: &Store,
    due: &[Reminder],
    rules: &ReminderRules,
    now: DateTime<Utc>,
    zone: &Tz,
) -> Result<Tick, RemindError> {
    let quiet = in_quiet_hours(rules, now, zone)?;
    let mut tx = store.write().await?;
    let mut candidates = Vec::new();
    let mut open = Vec::new();
    for reminder in due.iter().filter(|r| r.due_at <= now) {
        let row = repo::find(
            &mut tx,
            reminder.instance_id,
            reminder.kind.as_str(),
            &reminder.occurrence,
        )
        .await?;
        match row {
            None => candidates.push(reminder.clone()),
            Some(row) if row.dismissed_at.is_some() => {}
            Some(row) => match row.snoozed_until {
                Some(until) if until > now => {}
                Some(_) => candidates.push(reminder.clone()),
                None => open.push(reminder.clone()),
            },
        }
    }
    // Inside the quiet hours only what costs more by morning than a notification at night
    // (a spent budget, a contradicted stop, minutes left) is sent; the rest waits.
    if quiet {
        candidates.retain(super::stakes::breaks_quiet_hours);
    }
    let fired = {
        let (send, caught_up) = most_urgent(candidates);
        for reminder in &send {
            repo::record_fired(&mut tx, &row_of(reminder, now, false)).await?;
        }
        for reminder in &caught_up {
            repo::record_fired(&mut tx, &row_of(reminder, now, true)).await?;
        }
        send
    };
    tx.commit().await.map_err(StoreError::from)?;
    open.extend(fired.iter().cloned());
    let (open, _) = most_urgent(open);
    Ok(Tick { fired, open, quiet })
}

/// The kinds a snooze or a dismissal applies to together: the whole family, so putting off the
/// 100 % budget reminder does not uncover the 80 % one behind it.
fn kinds_with(kind: ReminderKind) -> Vec<ReminderKind> {
    match kind.family() {
        None => vec![kind],
        Some((family, _)) => ReminderKind::ALL
            .into_iter()
            .filter(|k| k.family().is_some_and(|(f, _)| f == family))
            .collect(),
    }
}

/// Put a fired reminder (and the rest of its family) off until `until`.
#[tracing::instrument(skip(store), err)]
pub async fn snooze(
    store: &Store,
    instance_id: i64,
    kind: ReminderKind,
    occurrence: &str,
    until: DateTime<Utc>,
) -> Result<(), RemindError> {
    let mut tx = store.write().await?;
    let mut any = false;
    for kind in kinds_with(kind) {
        any |= repo::snooze(&mut tx, instance_id, kind.as_str(), occurrence, until).await?;
    }
    if !any {
        return Err(RemindError::NotFired);
    }
    tx.commit().await.map_err(StoreError::from)?;
    Ok(())
}

/// The user dealt with it: never show this occurrence (or its family's) again.
#[tracing::instrument(skip(store), err)]
pub async fn dismiss(
    store: &Store,
    instance_id: i64,
    kind: ReminderKind,
    occurrence: &str,
    now: DateTime<Utc>,
) -> Result<(), RemindError> {
    let mut tx = store.write().await?;
    let mut any = false;
    for kind in kinds_with(kind) {
        any |= repo::dismiss(&mut tx, instance_id, kind.as_str(), occurrence, now).await?;
    }
    if !any {
        return Err(RemindError::NotFired);
    }
    tx.commit().await.map_err(StoreError::from)?;
    Ok(())
}
