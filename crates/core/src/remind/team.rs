//! Team reminders: "left running" alerts ([`left_running_due`]: a member's instance billing while
//! its GPUs sit idle, told to its own member and to whoever the team names, once per idle
//! stretch, `team::alerts`) and team budget reminders: the same 50/80/100 % thresholds as an instance's budget, for the team's
//! month-to-date spend in each currency that has a team budget (`team::views::budget_use` shows
//! the same figures on the Team page).
//!
//! Every member's app checks them against its working copy, which holds every member's events
//! after a sync, so each member is told on their own laptop; the budgets are the ones last read
//! from the team's server (kept in `team_budgets`, replaced by every sync and the
//! Team page), so the check works offline and costs the server nothing per tick. Like the
//! instance triggers, [`budget_due`] is pure and `due_at` is found by bisection over the cost
//! engine (a month's spend never decreases as time passes), so the same question gets the same
//! answer; [`tick`] fires each threshold of each month once, and after a sleep only the most
//! urgent of a budget.

use std::collections::{BTreeMap, HashMap};
use std::str::FromStr;

use chrono::{DateTime, Datelike, Utc};
use rust_decimal::Decimal;

use super::triggers::first_moment;
use super::{RemindError, Reminder, ReminderKind, ReminderRules};
use crate::billing::engine;
use crate::billing::ledger::{histories, InstanceHistory};
use crate::billing::money::{display_amount, display_rate};
use crate::billing::report::BUDGET_THRESHOLDS;
use crate::billing::BillingError;
use crate::store::team::reminders as repo;
use crate::store::{Store, StoreError};
use crate::team::alerts::{self, AlertSettings, IdleStretch};
use crate::team::views::{self, left_running, month_start, TeamInstance};

/// A team budget for the month in one currency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamBudgetLine {
    pub currency: String,
    pub amount: Decimal,
}

/// The team reminders that hold at `now`: for each budget, every threshold the month's spend has
/// reached, with the moment it was crossed. `instance` is the team's name and `instance_id` 0
/// (a team reminder belongs to no instance); `params.scope` is `team`.
pub fn budget_due(
    team: &str,
    budgets: &[TeamBudgetLine],
    instances: &[InstanceHistory],
    now: DateTime<Utc>,
) -> Result<Vec<Reminder>, RemindError> {
    let since = month_start(now);
    let month = format!("{:04}-{:02}", now.year(), now.month());
    let mut due = Vec::new();
    for budget in budgets {
        let mine: Vec<&InstanceHistory> = instances
            .iter()
            .filter(|i| i.currency.code() == budget.currency)
            .collect();
        let mut before = Vec::with_capacity(mine.len());
        for instance in &mine {
            before.push(engine::compute(&instance.events, since)?.total()?);
        }
        let spend_at = |at: DateTime<Utc>| -> Result<Decimal, BillingError> {
            let mut spent = Decimal::ZERO;
            for (instance, before) in mine.iter().zip(&before) {
                spent += engine::compute(&instance.events, at)?.total()? - before;
            }
            Ok(spent)
        };
        let spent = spend_at(now)?;
        let mut burn = Decimal::ZERO;
        for instance in &mine {
            burn += engine::compute(&instance.events, now)?.burn_rate_per_hour;
        }
        for threshold in BUDGET_THRESHOLDS {
            let target = budget.amount * Decimal::from(threshold) / Decimal::ONE_HUNDRED;
            if spent < target || budget.amount <= Decimal::ZERO {
                continue;
            }
            let due_at = first_moment(since, now, |at| Ok(spend_at(at)? >= target))?;
            let kind = match threshold {
                50 => ReminderKind::Budget50,
                80 => ReminderKind::Budget80,
                _ => ReminderKind::Budget100,
            };
            let (used, amount) = (display_amount(spent), display_amount(budget.amount));
            let currency = &budget.currency;
            due.push(Reminder {
                instance: team.to_owned(),
                instance_id: 0,
                kind,
                due_at,
                occurrence: format!("{month} {} {currency}", budget.amount.normalize()),
                detail: format!(
                    "team {team}: {used} {currency} spent this month of a {amount} {currency} team budget ({threshold} % reached)"
                ),
                params: BTreeMap::from([
                    ("scope".to_owned(), "team".to_owned()),
                    ("percent".to_owned(), threshold.to_string()),
                    ("used".to_owned(), used.to_string()),
                    ("budget".to_owned(), amount.to_string()),
                    ("month".to_owned(), month.clone()),
                ]),
                currency: currency.clone(),
                burn_rate_per_hour: display_rate(burn),
                stakes: super::stakes::stakes(
                    kind,
                    Some(budget.amount),
                    spent,
                    display_rate(burn),
                ),
            });
        }
    }
    due.sort_by(|a, b| (a.due_at, &a.currency, a.kind).cmp(&(b.due_at, &b.currency, b.kind)));
    Ok(due)
}

/// "Left running" alerts for `me`: every running instance idle for the team's alert minutes
/// whose member is `me` or who the team names `me` to be told (`AlertSettings::tells`). Due from
/// the moment the idle stretch reached the alert minutes; one occurrence per stretch (its
/// instance and first idle minute), so it fires once however long the stretch lasts, and again
/// only after the GPUs worked in between. A `gpu_idle` reminder with `params.scope` `team` and
/// `params.alert` `left_running`; `instance` is the team's name, `params.target` the instance's.
/// Pure.
pub fn left_running_due(
    team: &str,
    me: &str,
    settings: &AlertSettings,
    instances: &[TeamInstance],
    idle: &HashMap<String, IdleStretch>,
) -> Vec<Reminder> {
    let minutes: HashMap<String, u32> = idle
        .iter()
        .map(|(uid, s)| (uid.clone(), s.minutes))
        .collect();
    let mut due: Vec<Reminder> = left_running(instances, &minutes, settings.after_minutes)
        .into_iter()
        .filter(|alert| settings.tells(me, &alert.member))
        .filter_map(|alert| {
            let stretch = idle.get(&alert.instance_uid)?;
            let after = chrono::Duration::minutes(i64::from(settings.after_minutes.saturating_sub(1)));
            let (member, name, idle_minutes) = (&alert.member, &alert.instance, alert.idle_minutes);
            let (rate, currency) = (alert.burn_rate_per_hour, &alert.currency);
            Some(Reminder {
                instance: team.to_owned(),
                instance_id: 0,
                kind: ReminderKind::GpuIdle,
                due_at: stretch.since + after,
                occurrence: format!("left_running {} {}", alert.instance_uid, stretch.since.to_rfc3339()),
                detail: format!(
                    "team {team}: {member}'s {name} has had idle GPUs for {idle_minutes} minutes while it bills {rate} {currency}/h"
                ),
                params: BTreeMap::from([
                    ("scope".to_owned(), "team".to_owned()),
                    ("alert".to_owned(), "left_running".to_owned()),
                    ("member".to_owned(), member.clone()),
                    ("target".to_owned(), name.clone()),
                    ("minutes".to_owned(), idle_minutes.to_string()),
                    ("wasted".to_owned(), alert.wasted.to_string()),
                ]),
                currency: currency.clone(),
                burn_rate_per_hour: rate,
                stakes: super::stakes::stakes(ReminderKind::GpuIdle, None, Decimal::ZERO, rate),
            })
        })
        .collect();
    due.sort_by(|a, b| (a.due_at, &a.occurrence).cmp(&(b.due_at, &b.occurrence)));
    due
}

/// The team's name and budgets as last read from its server; `None` when this database is not
/// linked to a team.
async fn linked_budgets(
    store: &Store,
) -> Result<Option<(String, Vec<TeamBudgetLine>)>, RemindError> {
    let mut conn = store.pool().acquire().await.map_err(StoreError::from)?;
    let Some(link) = crate::store::team::link(&mut conn).await? else {
        return Ok(None);
    };
    let budgets = crate::store::team::team_budgets(&mut conn)
        .await?
        .into_iter()
        .filter_map(|(currency, amount, _)| {
            Some(TeamBudgetLine {
                currency,
                amount: Decimal::from_str(&amount).ok()?,
            })
        })
        .collect();
    Ok(Some((link.team, budgets)))
}

/// The team reminders that hold at `now` in this database's working copy (none when unlinked):
/// the budgets' thresholds and the left-running alerts for this member.
pub async fn due_in_store(store: &Store, now: DateTime<Utc>) -> Result<Vec<Reminder>, RemindError> {
    let Some((team, budgets)) = linked_budgets(store).await? else {
        return Ok(Vec::new());
    };
    let mut due = if budgets.is_empty() {
        Vec::new()
    } else {
        budget_due(&team, &budgets, &histories(store).await?, now)?
    };
    let me = {
        let mut conn = store.pool().acquire().await.map_err(StoreError::from)?;
        crate::store::team::link(&mut conn)
            .await?
            .map(|l| l.member)
            .unwrap_or_default()
    };
    let settings = alerts::settings(store).await?;
    let instances = views::instances(store, now).await?;
    let idle = alerts::idle_stretches(store, &instances, &me, now).await?;
    due.extend(left_running_due(&team, &me, &settings, &instances, &idle));
    Ok(due)
}

/// Of `due`, the team reminders that fired here and are not closed: what the in-app popup lists
/// beside the instance reminders.
pub async fn open(store: &Store, due: &[Reminder]) -> Result<Vec<Reminder>, RemindError> {
    let mut conn = store.pool().acquire().await.map_err(StoreError::from)?;
    let mut open = Vec::new();
    for reminder in due {
        if repo::is_open(
            &mut conn,
            &reminder.instance,
            reminder.kind.as_str(),
            &reminder.occurrence,
        )
        .await?
        {
            open.push(reminder.clone());
        }
    }
    Ok(open)
}

/// Close a team reminder in the popup (it does not come back for this occurrence).
pub async fn dismiss(
    store: &Store,
    kind: ReminderKind,
    occurrence: &str,
    now: DateTime<Utc>,
) -> Result<(), RemindError> {
    let Some((team, _)) = linked_budgets(store).await? else {
        return Err(RemindError::NotFired);
    };
    let mut tx = store.write().await?;
    if !repo::dismiss(&mut tx, &team, kind.as_str(), occurrence, now).await? {
        return Err(RemindError::NotFired);
    }
    tx.commit().await.map_err(StoreError::from)?;
    Ok(())
}

/// Put off a team reminder until `until` (the popup's "in an hour" / "tomorrow"): hidden till
/// then, sent once more then if it still holds.
pub async fn snooze(
    store: &Store,
    kind: ReminderKind,
    occurrence: &str,
    until: DateTime<Utc>,
) -> Result<(), RemindError> {
    let Some((team, _)) = linked_budgets(store).await? else {
        return Err(RemindError::NotFired);
    };
    let mut tx = store.write().await?;
    if !repo::snooze(&mut tx, &team, kind.as_str(), occurrence, until).await? {
        return Err(RemindError::NotFired);
    }
    tx.commit().await.map_err(StoreError::from)?;
    Ok(())
}

/// Decide which of `due` fire now and record them: each occurrence once, and once more when its
/// snooze ran out; inside the quiet hours nothing new; of one budget's thresholds due together
/// only the most urgent is sent, the others are recorded as caught up. Returns what to send.
pub async fn tick<Tz: chrono::TimeZone>(
    store: &Store,
    due: &[Reminder],
    rules: &ReminderRules,
    now: DateTime<Utc>,
    zone: &Tz,
) -> Result<Vec<Reminder>, RemindError> {
    if let Some(quiet) = &rules.quiet_hours {
        if quiet.contains(now.with_timezone(zone).time())? {
            return Ok(Vec::new());
        }
    }
    let mut tx = store.write().await?;
    let mut fresh: HashMap<(String, String), Vec<Reminder>> = HashMap::new();
    let mut send = Vec::new();
    for reminder in due.iter().filter(|r| r.due_at <= now) {
        let kind = reminder.kind.as_str();
        if repo::end_snooze(&mut tx, &reminder.instance, kind, &reminder.occurrence, now).await? {
            send.push(reminder.clone());
        } else if !repo::fired(&mut tx, &reminder.instance, kind, &reminder.occurrence).await? {
            fresh
                .entry((reminder.instance.clone(), reminder.occurrence.clone()))
                .or_default()
                .push(reminder.clone());
        }
    }
    for (_, mut group) in fresh {
        group.sort_by_key(|r| r.kind.family().map_or(0, |(_, rank)| rank));
        let Some(most_urgent) = group.pop() else {
            continue;
        };
        for (reminder, silent) in group
            .iter()
            .map(|r| (r, true))
            .chain([(&most_urgent, false)])
        {
            repo::record_fired(
                &mut tx,
                &reminder.instance,
                reminder.kind.as_str(),
                &reminder.occurrence,
                reminder.due_at,
                now,
                silent,
            )
            .await?;
        }
        send.push(most_urgent);
    }
    tx.commit().await.map_err(StoreError::from)?;
    send.sort_by(|a, b| (a.due_at, &a.currency).cmp(&(b.due_at, &b.currency)));
    Ok(send)
}
