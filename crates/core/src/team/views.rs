//! The team views, computed from the local working copy (which holds every member's events
//! after a sync), so they work offline too: who is running what and at what hourly burn, the
//! month-to-date spend by member, project and GPU, the team budgets with the same 50/80/100 % thresholds
//! as an instance's budget, and "left running" alerts ([`AlertSettings`] lives here, the type the
//! Team page shows; `team::alerts` sets and exchanges it).
//!
//! The budget and idle checks are pure functions of their inputs: the reminders (`remind`) and
//! the GPU monitor's busy hours (`monitor`) feed them.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Datelike, TimeZone, Utc};
use rust_decimal::Decimal;
use serde::Serialize;
use ts_rs::TS;

use super::conflicts::Conflict;
use super::TeamError;
use crate::billing::engine;
use crate::billing::events::{settle, InstanceState};
use crate::billing::money::{display_amount, display_rate};
use crate::billing::{rows, BudgetUse};
use crate::store::ledger as ledger_repo;
use crate::store::team as repo;
use crate::store::Store;

/// One instance of any member, as the team views show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct TeamInstance {
    pub uid: String,
    pub name: String,
    pub member: String,
    /// The project it is rented for, if anyone said (`team::set_project`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub project: Option<String>,
    pub gpu_model: String,
    pub gpu_count: u32,
    pub state: Option<InstanceState>,
    pub state_since: Option<DateTime<Utc>>,
    pub currency: String,
    /// What one more hour costs now; "0.00" when nothing bills.
    #[ts(type = "string")]
    pub burn_rate_per_hour: Decimal,
    #[ts(type = "string")]
    pub total: Decimal,
    /// Spent since the start of the month (UTC).
    #[ts(type = "string")]
    pub month_to_date: Decimal,
}

impl TeamInstance {
    /// Powered on (with or without GPU), or created and billed from creation.
    pub fn is_running(&self) -> bool {
        match self.state {
            Some(InstanceState::Running | InstanceState::NoGpu) => true,
            Some(InstanceState::Created) => self.burn_rate_per_hour > Decimal::ZERO,
            _ => false,
        }
    }
}

/// One line of a spend breakdown: money in one currency (amounts in different currencies are
/// never added together).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct SpendLine {
    pub key: String,
    pub currency: String,
    #[ts(type = "string")]
    pub amount: Decimal,
}

/// Month-to-date spend.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct MonthSpend {
    pub since: DateTime<Utc>,
    pub by_member: Vec<SpendLine>,
    pub by_gpu: Vec<SpendLine>,
    /// By project; `key` is "" for instances without one.
    pub by_project: Vec<SpendLine>,
    /// The team's total per currency (`key` is the currency).
    pub total: Vec<SpendLine>,
}

/// A team budget for the month in one currency, and how much of it is used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct TeamBudget {
    pub currency: String,
    pub set_by: String,
    #[serde(flatten)]
    pub usage: BudgetUse,
}

/// A member as the team views show them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct Member {
    pub name: String,
    pub last_sync_at: Option<DateTime<Utc>>,
    pub running: u32,
    /// Hourly burn of their running instances, per currency.
    pub burn: Vec<SpendLine>,
}

/// The start of `now`'s month, UTC.
pub fn month_start(now: DateTime<Utc>) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(now.year(), now.month(), 1, 0, 0, 0)
        .single()
        .unwrap_or(now)
}

/// Every instance in the working copy, costed at `now` and at the start of the month.
pub async fn instances(store: &Store, now: DateTime<Utc>) -> Result<Vec<TeamInstance>, TeamError> {
    let mut conn = store.read().await?;
    let since = month_start(now);
    let recorders: HashMap<i64, (String, Option<String>)> = repo::instance_recorders(&mut conn)
        .await?
        .into_iter()
        .map(|(id, uid, member)| (id, (uid, member)))
        .collect();
    let local_member = repo::link(&mut conn).await?.map(|l| l.member);
    let projects: HashMap<i64, String> = repo::projects(&mut conn).await?.into_iter().collect();
    let mut found = Vec::new();
    for row in ledger_repo::list_instances(&mut conn).await? {
        let rules = ledger_repo::rules_for(&mut conn, row.id).await?;
        let event_rows = ledger_repo::events_for(&mut conn, row.id).await?;
        let costed = (|| {
            let events = settle(rows::events_from_rows(&rules, &event_rows)?)?.accepted;
            let at_now = engine::compute(&events, now)?;
            let at_start = engine::compute(&events, since)?;
            let total = at_now.total()?;
            let before = at_start.total()?;
            Ok::<_, crate::billing::BillingError>((at_now, total, before))
        })();
        // One instance this version cannot bill is left out of the team views (the conflicts
        // list names it), not the whole page.
        let (at_now, total, before) = match costed {
            Ok(costed) => costed,
            Err(err) => {
                tracing::warn!(instance = %row.name, %err, "instance left out of the team views");
                continue;
            }
        };
        let (uid, member) = recorders.get(&row.id).cloned().unwrap_or_default();
        found.push(TeamInstance {
            uid,
            name: row.name,
            member: member.or_else(|| local_member.clone()).unwrap_or_default(),
            project: projects.get(&row.id).cloned(),
            gpu_model: row.gpu_model,
            gpu_count: at_now.rules.as_ref().map_or(0, |r| r.gpu_count),
            state: at_now.state,
            state_since: at_now.state_since,
            currency: row.currency,
            burn_rate_per_hour: display_rate(at_now.burn_rate_per_hour),
            total: display_amount(total),
            month_to_date: display_amount(total - before),
        });
    }
    Ok(found)
}

fn sum_by(instances: &[TeamInstance], key: impl Fn(&TeamInstance) -> String) -> Vec<SpendLine> {
    let mut sums: BTreeMap<(String, String), Decimal> = BTreeMap::new();
    for instance in instances {
        *sums
            .entry((key(instance), instance.currency.clone()))
            .or_default() += instance.month_to_date;
    }
    sums.into_iter()
        .map(|((key, currency), amount)| SpendLine {
            key,
            currency,
            amount: display_amount(amount),
        })
        .collect()
}

/// Month-to-date spend by member, by GPU model, by project and in total.
pub fn month_spend(instances: &[TeamInstance], now: DateTime<Utc>) -> MonthSpend {
    MonthSpend {
        since: month_start(now),
        by_member: sum_by(instances, |i| i.member.clone()),
        by_gpu: sum_by(instances, |i| i.gpu_model.clone()),
        by_project: sum_by(instances, |i| i.project.clone().unwrap_or_default()),
        total: sum_by(instances, |i| i.currency.clone()),
    }
}

/// The team's hourly burn per currency: what running instances add each hour.
pub fn burn_by_currency(instances: &[TeamInstance]) -> BTreeMap<String, Decimal> {
    let mut burn = BTreeMap::new();
    for instance in instances {
        *burn.entry(instance.currency.clone()).or_default() += instance.burn_rate_per_hour;
    }
    burn
}

/// Use of each team budget (`(currency, amount, set_by)`) by the month's spend, with the
/// 50/80/100 % threshold reached and when it runs out at the current burn. Pure: `remind`
/// raises its reminders from `threshold_reached` the way it does for an instance's budget.
pub fn budget_use(
    budgets: &[(String, Decimal, String)],
    instances: &[TeamInstance],
    now: DateTime<Utc>,
) -> Result<Vec<TeamBudget>, TeamError> {
    let spend = month_spend(instances, now);
    let burn = burn_by_currency(instances);
    budgets
        .iter()
        .map(|(currency, amount, set_by)| {
            let used = spend
                .total
                .iter()
                .find(|l| &l.key == currency)
                .map_or(Decimal::ZERO, |l| l.amount);
            let usage = BudgetUse::new(
                *amount,
                used,
                burn.get(currency).copied().unwrap_or_default(),
                now,
            )?;
            Ok(TeamBudget {
                currency: currency.clone(),
                set_by: set_by.clone(),
                usage,
            })
        })
        .collect()
}

/// A member's instance billing while its GPUs sit idle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct LeftRunning {
    pub instance: String,
    pub instance_uid: String,
    pub member: String,
    pub idle_minutes: u32,
    pub currency: String,
    #[ts(type = "string")]
    pub burn_rate_per_hour: Decimal,
    /// What the idle stretch has cost so far.
    #[ts(type = "string")]
    pub wasted: Decimal,
}

/// Idle minutes after which a billing instance counts as left running, until the team sets its own
/// (`team::alerts`).
pub const LEFT_RUNNING_AFTER_MINUTES: u32 = 30;

/// "Left running" alerts: every running instance whose GPUs have been idle for at least
/// `after_minutes`. `idle_minutes` maps an instance uid to its current idle stretch, as the
/// monitor's busy hours measure it (an instance without a measurement raises nothing). Pure.
pub fn left_running(
    instances: &[TeamInstance],
    idle_minutes: &HashMap<String, u32>,
    after_minutes: u32,
) -> Vec<LeftRunning> {
    instances
        .iter()
        .filter(|i| i.is_running())
        .filter_map(|i| {
            let idle = *idle_minutes.get(&i.uid)?;
            (idle >= after_minutes).then(|| LeftRunning {
                instance: i.name.clone(),
                instance_uid: i.uid.clone(),
                member: i.member.clone(),
                idle_minutes: idle,
                currency: i.currency.clone(),
                burn_rate_per_hour: i.burn_rate_per_hour,
                wasted: display_amount(
                    i.burn_rate_per_hour * Decimal::from(idle) / Decimal::from(60),
                ),
            })
        })
        .collect()
}

/// Members with what each is running now. `known` are the members the server lists (with their
/// last sync); anyone who recorded an instance is listed too.
pub fn members(
    known: &[(String, Option<DateTime<Utc>>)],
    instances: &[TeamInstance],
) -> Vec<Member> {
    let mut by_name: BTreeMap<String, Member> = BTreeMap::new();
    for (name, last_sync_at) in known {
        by_name.insert(
            name.clone(),
            Member {
                name: name.clone(),
                last_sync_at: *last_sync_at,
                running: 0,
                burn: Vec::new(),
            },
        );
    }
    for instance in instances.iter().filter(|i| !i.member.is_empty()) {
        let member = by_name
            .entry(instance.member.clone())
            .or_insert_with(|| Member {
                name: instance.member.clone(),
                last_sync_at: None,
                running: 0,
                burn: Vec::new(),
            });
        if instance.is_running() {
            member.running += 1;
            match member
                .burn
                .iter_mut()
                .find(|l| l.currency == instance.currency)
            {
                Some(line) => line.amount += instance.burn_rate_per_hour,
                None => member.burn.push(SpendLine {
                    key: instance.member.clone(),
                    currency: instance.currency.clone(),
                    amount: instance.burn_rate_per_hour,
                }),
            }
        }
    }
    by_name.into_values().collect()
}

/// A member's last Verify of an instance, with the instance's name here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct SharedVerify {
    pub instance: String,
    /// Who rented the instance.
    pub member: String,
    #[serde(flatten)]
    pub summary: super::verify::VerifySummary,
}

/// Who is told about a member's instance left running, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct AlertSettings {
    /// Members told about every member's left-running instance, besides its own member (who is
    /// always told). Empty: only the instance's own member.
    pub recipients: Vec<String>,
    /// Idle minutes after which a billing instance counts as left running.
    pub after_minutes: u32,
    /// Who set them last; `None`: never set, these are the defaults.
    pub set_by: Option<String>,
}

impl Default for AlertSettings {
    fn default() -> Self {
        Self {
            recipients: Vec::new(),
            after_minutes: LEFT_RUNNING_AFTER_MINUTES,
            set_by: None,
        }
    }
}

impl AlertSettings {
    /// Whether `me` is told about an instance of `owner`'s left running. Pure.
    pub fn tells(&self, me: &str, owner: &str) -> bool {
        me == owner || self.recipients.iter().any(|r| r == me)
    }
}

/// Everything `team status` shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct TeamStatus {
    pub team: String,
    pub member: String,
    /// The server, without password.
    pub url: String,
    /// Whether the server answered just now (else everything is from the last sync).
    pub online: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub server_error: Option<crate::ApiError>,
    pub last_sync_at: Option<DateTime<Utc>>,
    /// Events and shared records changed here that the server does not hold yet.
    pub pending_push: i64,
    pub members: Vec<Member>,
    /// Every member's running instances, highest burn first.
    pub running: Vec<TeamInstance>,
    pub month_to_date: MonthSpend,
    pub budgets: Vec<TeamBudget>,
    /// Running instances idle for the team's alert minutes ([`LEFT_RUNNING_AFTER_MINUTES`] unless
    /// set) or more.
    pub left_running: Vec<LeftRunning>,
    /// Who is told about left-running instances, and after how long (`team::alerts`).
    pub alerts: AlertSettings,
    /// Whether this laptop shares its last Verify results (`team::verify`, off by default).
    pub share_verify: bool,
    /// The last Verify of each instance, from the members who share them.
    pub verify: Vec<SharedVerify>,
    pub conflicts: Vec<Conflict>,
    pub as_of: DateTime<Utc>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    fn instance(
        name: &str,
        member: &str,
        state: InstanceState,
        burn: Decimal,
        month: Decimal,
    ) -> TeamInstance {
        TeamInstance {
            uid: format!("uid-{name}"),
            name: name.into(),
            member: member.into(),
            project: None,
            gpu_model: "A100".into(),
            gpu_count: 1,
            state: Some(state),
            state_since: None,
            currency: "CNY".into(),
            burn_rate_per_hour: burn,
            total: month,
            month_to_date: month,
        }
    }

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, 20, 12, 0, 0).unwrap()
    }

    #[test]
    fn the_month_starts_on_the_first_at_midnight_utc() {
        assert_eq!(
            month_start(now()),
            Utc.with_ymd_and_hms(2026, 3, 1, 0, 0, 0).unwrap()
        );
    }

    #[test]
    fn a_team_budget_reaches_each_threshold_as_the_month_spend_grows() {
        let budgets = vec![("CNY".to_owned(), dec!(1000), "prof".to_owned())];
        for (spent, expected) in [
            (dec!(499), None),
            (dec!(500), Some(50)),
            (dec!(800), Some(80)),
            (dec!(1200), Some(100)),
        ] {
            let team = vec![instance(
                "a",
                "alice",
                InstanceState::Running,
                dec!(5),
                spent,
            )];
            let used = budget_use(&budgets, &team, now()).unwrap();
            assert_eq!(
                used[0].usage.threshold_reached, expected,
                "spent {spent} of 1000"
            );
        }
    }

    #[test]
    fn spend_in_different_currencies_is_never_added() {
        let mut usd = instance("b", "bob", InstanceState::Running, dec!(1), dec!(3));
        usd.currency = "USD".into();
        let team = vec![
            instance("a", "alice", InstanceState::Running, dec!(5), dec!(10)),
            usd,
        ];
        let spend = month_spend(&team, now());
        assert_eq!(
            spend.total.len(),
            2,
            "one total per currency: {:?}",
            spend.total
        );
    }

    #[test]
    fn an_idle_running_instance_is_reported_left_running_but_a_stopped_one_is_not() {
        let team = vec![
            instance("busy", "alice", InstanceState::Running, dec!(6), dec!(1)),
            instance("idle", "bob", InstanceState::Running, dec!(6), dec!(1)),
            instance("off", "carol", InstanceState::Stopped, dec!(0), dec!(1)),
        ];
        let idle = HashMap::from([
            ("uid-busy".to_owned(), 5),
            ("uid-idle".to_owned(), 90),
            ("uid-off".to_owned(), 600),
        ]);
        let alerts = left_running(&team, &idle, 30);
        assert_eq!(
            alerts.len(),
            1,
            "only bob's idle running instance: {alerts:?}"
        );
        assert_eq!(alerts[0].member, "bob");
        assert_eq!(alerts[0].wasted, dec!(9.00), "90 idle minutes at 6/h");
    }
}
