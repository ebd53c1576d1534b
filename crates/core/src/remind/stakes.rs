//! What waiting costs: the sums that turn a reminder from "half the budget is gone" into "it runs
//! out in 40 minutes, and snoozing an hour costs ¥3,600".
//!
//! Pure functions of the burn rate, the budget and `now`, so the popup, the webhooks and the CLI
//! say the same figures and each is tested without a clock or a window.

use chrono::{DateTime, TimeZone, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{Reminder, ReminderKind, Snooze};
use crate::billing::money::display_amount;

/// Below this many minutes of budget left a reminder is at its most urgent.
pub use crate::billing::report::CRITICAL_MINUTES_LEFT;

/// How loudly a reminder should speak: the popup's colour and whether it breaks through the
/// quiet hours.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize, TS,
)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum Urgency {
    /// Worth knowing: an idle GPU, a release coming up.
    #[default]
    Notice,
    /// Money is going faster than planned (80 % of the budget, the planned hours over).
    Warning,
    /// The budget is spent, or runs out within [`CRITICAL_MINUTES_LEFT`] minutes, or a stop
    /// the ledger holds is contradicted by a machine that still answers.
    Critical,
}

/// What waiting costs for one reminder's instance.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Stakes {
    pub urgency: Urgency,
    /// Share of the budget spent, percent (whole, may pass 100); `null` without a budget.
    #[ts(type = "number | null")]
    pub budget_percent: Option<i64>,
    /// The same share with one decimal, as the budget bars show it (`88.6`, where
    /// `budget_percent` is 88): the figure a card prints. `null` without a budget.
    #[ts(type = "string | null")]
    pub percent_used: Option<Decimal>,
    /// What is left of the budget (negative when over); `null` without a budget.
    #[ts(type = "string | null")]
    pub budget_left: Option<Decimal>,
    /// Minutes until the budget runs out at the current burn rate: 0 when already spent,
    /// `null` without a budget or while nothing bills.
    #[ts(type = "number | null")]
    pub minutes_to_empty: Option<i64>,
    /// The price of each snooze, filled in by [`price_snoozes`] (it needs the user's zone).
    pub snoozes: Vec<SnoozeCost>,
}

/// What one snooze would cost if nothing changes meanwhile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct SnoozeCost {
    pub snooze: Snooze,
    pub until: DateTime<Utc>,
    #[ts(type = "string")]
    pub cost: Decimal,
    /// The cost passes the user's threshold: ask "are you sure?" before snoozing.
    pub needs_confirmation: bool,
}

/// Minutes until `spent` reaches `budget` at `burn_rate_per_hour`: `Some(0)` when it already
/// has, `None` when nothing bills (the budget never runs out). Rounded down: "runs out in
/// 3 minutes" must not be said at 3 min 50 s.
pub fn minutes_to_empty(
    budget: Decimal,
    spent: Decimal,
    burn_rate_per_hour: Decimal,
) -> Option<i64> {
    let left = budget - spent;
    if left <= Decimal::ZERO {
        return Some(0);
    }
    if burn_rate_per_hour <= Decimal::ZERO {
        return None;
    }
    let minutes = (left * Decimal::from(60) / burn_rate_per_hour).floor();
    Some(i64::try_from(minutes).unwrap_or(i64::MAX))
}

/// What `seconds` more at `burn_rate_per_hour` cost, rounded for display.
pub fn cost_of_waiting(burn_rate_per_hour: Decimal, seconds: i64) -> Decimal {
    if seconds <= 0 || burn_rate_per_hour <= Decimal::ZERO {
        return Decimal::ZERO;
    }
    display_amount(burn_rate_per_hour * Decimal::from(seconds) / Decimal::from(3600))
}

/// Whole percent of the budget spent (a zero budget counts as fully spent).
pub fn budget_percent(budget: Decimal, spent: Decimal) -> i64 {
    if budget <= Decimal::ZERO {
        return 100;
    }
    i64::try_from((spent * Decimal::ONE_HUNDRED / budget).floor()).unwrap_or(i64::MAX)
}

/// Share of the budget spent with one decimal (a zero budget counts as fully spent), rounded as
/// `BudgetUse::percent_used` is, so a card and a bar say the same figure.
pub fn percent_used(budget: Decimal, spent: Decimal) -> Decimal {
    if budget <= Decimal::ZERO {
        return crate::billing::report::shown_percent(Decimal::ONE_HUNDRED);
    }
    spent
        .checked_mul(Decimal::ONE_HUNDRED)
        .and_then(|hundredfold| hundredfold.checked_div(budget))
        .map_or(Decimal::MAX, crate::billing::report::shown_percent)
}

/// How urgent a reminder of `kind` is, given what is left of the budget.
pub fn urgency(
    kind: ReminderKind,
    budget_percent: Option<i64>,
    minutes_to_empty: Option<i64>,
) -> Urgency {
    let spent = budget_percent.is_some_and(|p| p >= 100);
    let running_out = minutes_to_empty.is_some_and(|m| m < CRITICAL_MINUTES_LEFT);
    if spent
        || running_out
        || matches!(
            kind,
            ReminderKind::StopContradicted | ReminderKind::ReleasedButListed | ReminderKind::Outbid
        )
    {
        return Urgency::Critical;
    }
    match kind {
        ReminderKind::Budget80
        | ReminderKind::OverPlanned
        | ReminderKind::WipeDeadline
        | ReminderKind::PriceIncrease => Urgency::Warning,
        _ if budget_percent.is_some_and(|p| p >= 80)
            || minutes_to_empty.is_some_and(|m| m < 60) =>
        {
            Urgency::Warning
        }
        _ => Urgency::Notice,
    }
}

/// The stakes of a reminder on an instance with this budget, spend and burn rate (snoozes not
/// yet priced).
pub fn stakes(
    kind: ReminderKind,
    budget: Option<Decimal>,
    spent: Decimal,
    burn_rate_per_hour: Decimal,
) -> Stakes {
    let budget_percent = budget.map(|b| budget_percent(b, spent));
    let minutes = budget.and_then(|b| minutes_to_empty(b, spent, burn_rate_per_hour));
    Stakes {
        urgency: urgency(kind, budget_percent, minutes),
        budget_percent,
        percent_used: budget.map(|b| percent_used(b, spent)),
        budget_left: budget.map(|b| display_amount(b - spent)),
        minutes_to_empty: minutes,
        snoozes: Vec::new(),
    }
}

/// Whether a reminder is sent even inside the quiet hours: a spent budget, a contradicted stop,
/// a released instance the provider still lists or an outbid (whose GPU goes to someone else
/// while the storage bills) costs more by morning than a notification at night.
pub fn breaks_quiet_hours(reminder: &Reminder) -> bool {
    reminder.kind == ReminderKind::Budget100
        || reminder.kind == ReminderKind::StopContradicted
        || reminder.kind == ReminderKind::ReleasedButListed
        || reminder.kind == ReminderKind::Outbid
        || reminder.stakes.urgency == Urgency::Critical
}

/// Price each snooze of each reminder at `now` in the user's `zone`; a snooze that costs more
/// than `confirm_above` (when set) asks first.
pub fn price_snoozes<Tz: TimeZone>(
    reminders: &mut [Reminder],
    now: DateTime<Utc>,
    zone: &Tz,
    confirm_above: Option<Decimal>,
) {
    for reminder in reminders {
        let rate = reminder.burn_rate_per_hour;
        reminder.stakes.snoozes = [Snooze::Hour, Snooze::Tomorrow]
            .into_iter()
            .map(|snooze| {
                let until = snooze.until(now, zone);
                let cost = cost_of_waiting(rate, (until - now).num_seconds());
                SnoozeCost {
                    snooze,
                    until,
                    cost,
                    needs_confirmation: confirm_above.is_some_and(|limit| cost > limit),
                }
            })
            .collect();
    }
}

/// One card per problem: of the reminders about the same instance and the same family (the
/// budget's thresholds, the planned hours), the most urgent; a team's left-running alert for an
/// instance this laptop already warns about as idle is the same problem told twice.
pub fn one_per_problem(reminders: Vec<Reminder>) -> Vec<Reminder> {
    let locally_idle: Vec<String> = reminders
        .iter()
        .filter(|r| r.kind == ReminderKind::GpuIdle && !r.params.contains_key("scope"))
        .map(|r| r.instance.clone())
        .collect();
    let mut kept: Vec<Reminder> = Vec::new();
    for reminder in reminders {
        let team = reminder.params.get("scope").is_some_and(|s| s == "team");
        let about = reminder.params.get("target").unwrap_or(&reminder.instance);
        if team && reminder.kind == ReminderKind::GpuIdle && locally_idle.contains(about) {
            continue;
        }
        let same = kept.iter().position(|k| {
            problem_of(k) == problem_of(&reminder)
                && k.kind.family().is_some()
                && k.kind.family().map(|f| f.0) == reminder.kind.family().map(|f| f.0)
        });
        match same {
            Some(at) if rank(&kept[at]) < rank(&reminder) => kept[at] = reminder,
            Some(_) => {}
            None => kept.push(reminder),
        }
    }
    kept
}

/// What a reminder is about: its instance, or for a team's (all of them carry instance id 0)
/// the team, the instance it names and the budget's currency, so two teammates' idle instances
/// or a team's budgets in two currencies stay two cards.
fn problem_of(reminder: &Reminder) -> (i64, &str, Option<&String>, Option<&String>, &str) {
    (
        reminder.instance_id,
        &reminder.instance,
        reminder.params.get("scope"),
        reminder.params.get("target"),
        &reminder.currency,
    )
}

fn rank(reminder: &Reminder) -> (Urgency, u8) {
    (
        reminder.stakes.urgency,
        reminder.kind.family().map_or(0, |f| f.1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::FixedOffset;
    use rust_decimal_macros::dec;

    #[test]
    fn time_to_empty_at_a_high_burn_rate_is_minutes() {
        // ¥3,600/h is ¥60 a minute: ¥50 left lasts 0 whole minutes, ¥600 left ten.
        assert_eq!(
            minutes_to_empty(dec!(10000), dec!(9950), dec!(3600)),
            Some(0)
        );
        assert_eq!(
            minutes_to_empty(dec!(10000), dec!(9400), dec!(3600)),
            Some(10)
        );
    }

    #[test]
    fn time_to_empty_rounds_down_so_it_never_promises_more_time() {
        // ¥100 at ¥7/h: 857.14 minutes; 857, not 858.
        assert_eq!(minutes_to_empty(dec!(100), dec!(0), dec!(7)), Some(857));
    }

    #[test]
    fn a_spent_budget_has_no_time_left_and_one_that_is_not_billing_never_empties() {
        assert_eq!(minutes_to_empty(dec!(100), dec!(1026), dec!(3600)), Some(0));
        assert_eq!(minutes_to_empty(dec!(100), dec!(100), dec!(0)), Some(0));
        assert_eq!(minutes_to_empty(dec!(100), dec!(40), dec!(0)), None);
    }

    #[test]
    fn snooze_cost_is_the_burn_rate_times_the_wait() {
        assert_eq!(cost_of_waiting(dec!(3600), 3600), dec!(3600));
        assert_eq!(cost_of_waiting(dec!(2.5), 90 * 60), dec!(3.75));
        assert_eq!(cost_of_waiting(dec!(0), 3600), dec!(0));
        assert_eq!(cost_of_waiting(dec!(10), -5), dec!(0));
    }

    fn reminder(kind: ReminderKind, rate: Decimal) -> Reminder {
        Reminder {
            instance: "train".into(),
            instance_id: 1,
            kind,
            due_at: "2026-12-03T10:00:00Z".parse().unwrap(),
            occurrence: "100".into(),
            detail: String::new(),
            params: Default::default(),
            currency: "CNY".into(),
            burn_rate_per_hour: rate,
            stakes: Stakes::default(),
        }
    }

    #[test]
    fn snoozes_are_priced_until_their_end_and_ask_above_the_threshold() {
        let now: DateTime<Utc> = "2026-12-03T14:00:00Z".parse().unwrap();
        let beijing = FixedOffset::east_opt(8 * 3600).unwrap();
        let mut list = vec![reminder(ReminderKind::GpuIdle, dec!(3600))];
        price_snoozes(&mut list, now, &beijing, Some(dec!(500)));
        let snoozes = &list[0].stakes.snoozes;
        assert_eq!(snoozes[0].snooze, Snooze::Hour);
        assert_eq!(snoozes[0].cost, dec!(3600));
        assert!(
            snoozes[0].needs_confirmation,
            "¥3,600 is above a ¥500 threshold"
        );
        // 22:00 in Beijing to 09:00 tomorrow: eleven hours.
        assert_eq!(snoozes[1].cost, dec!(39600));
        let mut cheap = vec![reminder(ReminderKind::GpuIdle, dec!(2))];
        price_snoozes(&mut cheap, now, &beijing, Some(dec!(500)));
        assert!(!cheap[0].stakes.snoozes[0].needs_confirmation);
        price_snoozes(&mut list, now, &beijing, None);
        assert!(
            list[0].stakes.snoozes.iter().all(|s| !s.needs_confirmation),
            "no threshold, no question"
        );
    }

    #[test]
    fn urgency_escalates_over_budget_and_in_the_last_quarter_hour() {
        let over = stakes(
            ReminderKind::Budget50,
            Some(dec!(100)),
            dec!(1026),
            dec!(3600),
        );
        assert_eq!(over.budget_percent, Some(1026));
        assert_eq!(over.percent_used, Some(dec!(1026.0)));
        assert_eq!(over.urgency, Urgency::Critical);
        assert_eq!(over.budget_left, Some(dec!(-926)));
        let half = stakes(
            ReminderKind::Budget50,
            Some(dec!(10000)),
            dec!(5000),
            dec!(2),
        );
        assert_eq!(half.urgency, Urgency::Notice);
        let half_fast = stakes(
            ReminderKind::Budget50,
            Some(dec!(10000)),
            dec!(5000),
            dec!(36000),
        );
        assert_eq!(half_fast.minutes_to_empty, Some(8));
        assert_eq!(
            half_fast.urgency,
            Urgency::Critical,
            "half spent but gone in 8 minutes"
        );
        let idle = stakes(ReminderKind::GpuIdle, None, dec!(5), dec!(2));
        assert_eq!(idle.urgency, Urgency::Notice);
        assert_eq!(idle.minutes_to_empty, None);
        assert_eq!(idle.percent_used, None);
    }

    #[test]
    fn the_card_figure_has_the_bars_decimal_where_the_tier_is_whole() {
        let past_80 = stakes(ReminderKind::Budget80, Some(dec!(500)), dec!(443), dec!(2));
        assert_eq!(past_80.budget_percent, Some(88));
        assert_eq!(past_80.percent_used, Some(dec!(88.6)));
        assert_eq!(
            past_80.percent_used.map(|p| p.to_string()),
            Some("88.6".into())
        );
        let even = stakes(ReminderKind::Budget50, Some(dec!(100)), dec!(50), dec!(2));
        assert_eq!(
            even.percent_used.map(|p| p.to_string()),
            Some("50.0".into())
        );
        assert_eq!(percent_used(Decimal::ZERO, dec!(3)), dec!(100.0));
    }

    #[test]
    fn a_spent_budget_breaks_through_quiet_hours_and_an_idle_gpu_does_not() {
        let mut spent = reminder(ReminderKind::Budget100, dec!(2));
        spent.stakes = stakes(ReminderKind::Budget100, Some(dec!(100)), dec!(100), dec!(2));
        assert!(breaks_quiet_hours(&spent));
        let idle = reminder(ReminderKind::GpuIdle, dec!(2));
        assert!(!breaks_quiet_hours(&idle));
        let mut half_but_fast = reminder(ReminderKind::Budget50, dec!(36000));
        half_but_fast.stakes = stakes(
            ReminderKind::Budget50,
            Some(dec!(10000)),
            dec!(5000),
            dec!(36000),
        );
        assert!(breaks_quiet_hours(&half_but_fast));
    }

    #[test]
    fn one_card_per_problem_keeps_the_most_urgent_of_a_family_and_drops_the_team_echo() {
        let mut b50 = reminder(ReminderKind::Budget50, dec!(2));
        b50.occurrence = "100".into();
        let mut b100 = reminder(ReminderKind::Budget100, dec!(2));
        b100.stakes.urgency = Urgency::Critical;
        let idle = reminder(ReminderKind::GpuIdle, dec!(2));
        let mut team_idle = reminder(ReminderKind::GpuIdle, dec!(2));
        team_idle.instance_id = 99;
        team_idle.instance = "Lab".into();
        team_idle.params.insert("scope".into(), "team".into());
        team_idle.params.insert("target".into(), "train".into());
        let kept = one_per_problem(vec![b50, idle, b100, team_idle]);
        let kinds: Vec<_> = kept.iter().map(|r| r.kind).collect();
        assert_eq!(kinds, vec![ReminderKind::Budget100, ReminderKind::GpuIdle]);
        assert!(kept.iter().all(|r| !r.params.contains_key("scope")));
    }

    #[test]
    fn two_teammates_idle_instances_and_two_currencies_of_team_budget_stay_apart() {
        let team = |kind, target: Option<&str>, currency: &str| {
            let mut r = reminder(kind, dec!(2));
            r.instance_id = 0;
            r.instance = "lab".into();
            r.currency = currency.into();
            r.params.insert("scope".into(), "team".into());
            if let Some(target) = target {
                r.params.insert("target".into(), target.into());
            }
            r
        };
        let kept = one_per_problem(vec![
            team(ReminderKind::GpuIdle, Some("bob-a100"), "CNY"),
            team(ReminderKind::GpuIdle, Some("carol-h100"), "CNY"),
            team(ReminderKind::Budget50, None, "CNY"),
            team(ReminderKind::Budget80, None, "USD"),
            team(ReminderKind::Budget50, None, "USD"),
        ]);
        let shown: Vec<_> = kept
            .iter()
            .map(|r| (r.kind, r.params.get("target").cloned(), r.currency.clone()))
            .collect();
        assert_eq!(
            shown,
            vec![
                (ReminderKind::GpuIdle, Some("bob-a100".into()), "CNY".into()),
                (
                    ReminderKind::GpuIdle,
                    Some("carol-h100".into()),
                    "CNY".into()
                ),
                (ReminderKind::Budget50, None, "CNY".into()),
                (ReminderKind::Budget80, None, "USD".into()),
            ]
        );
    }
}
