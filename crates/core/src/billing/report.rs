//! What the ledger answers, as the UI and `--json` see it: money as 2-decimal strings with a
//! currency, times in RFC 3339. Built from the engine's full-precision [`Costing`].

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::engine::{Costing, Interval};
use super::events::InstanceState;
use super::money::{display_amount, display_quantity, display_rate, Currency};
use super::rules::BillingRules;
use super::BillingError;

/// Cost per category. `storage` holds storage-only stopped billing plus data-disk and snapshot
/// fees; `stopped` is a stopped-instance rate other than storage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct CostBreakdown {
    #[ts(type = "string")]
    pub compute: Decimal,
    #[ts(type = "string")]
    pub no_gpu: Decimal,
    #[ts(type = "string")]
    pub stopped: Decimal,
    #[ts(type = "string")]
    pub storage: Decimal,
    #[ts(type = "string")]
    pub ip: Decimal,
    #[ts(type = "string")]
    pub traffic: Decimal,
}

impl CostBreakdown {
    pub(crate) fn shown(charges: &super::engine::Charges) -> Result<Self, BillingError> {
        let money = charges.shown()?;
        Ok(Self {
            compute: money.compute,
            no_gpu: money.no_gpu,
            stopped: money.stopped,
            storage: money.storage,
            ip: money.ip,
            traffic: money.traffic,
        })
    }
}

/// One stretch of the timeline in one state under one set of rules, with what it cost.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct CostInterval {
    pub state: InstanceState,
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    /// Still going: `end` is the report's `as_of`.
    pub ongoing: bool,
    /// False before billing started.
    pub billed: bool,
    #[ts(type = "string")]
    pub rate_per_hour: Decimal,
    /// Hours charged for the state after rounding up to the provider's unit.
    #[ts(type = "string")]
    pub billed_hours: Decimal,
    #[ts(type = "string")]
    pub cost: Decimal,
    pub breakdown: CostBreakdown,
}

impl CostInterval {
    fn shown(interval: &Interval) -> Result<Self, BillingError> {
        Ok(Self {
            state: interval.state,
            start: interval.start,
            end: interval.end,
            ongoing: interval.ongoing,
            billed: interval.billed,
            rate_per_hour: display_rate(interval.rate_per_hour),
            billed_hours: billed_hours(interval.billed_seconds),
            cost: interval.charges.shown_total()?,
            breakdown: CostBreakdown::shown(&interval.charges)?,
        })
    }
}

/// Seconds as hours, six decimals at most, by integer arithmetic (a long timeline has many).
fn billed_hours(seconds: i64) -> Decimal {
    // Micro-hours, rounded half up; seconds are never negative.
    let micro_hours = (i128::from(seconds) * 1_000_000 + 1800) / 3600;
    Decimal::try_from_i128_with_scale(micro_hours, 6)
        .map(display_quantity)
        .unwrap_or_default()
}

/// Spending against a budget; warnings at 50 %, 80 % and 100 %.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct BudgetUse {
    #[ts(type = "string")]
    pub amount: Decimal,
    #[ts(type = "string")]
    pub used: Decimal,
    /// Percent of the budget spent, one decimal.
    #[ts(type = "string")]
    pub percent_used: Decimal,
    /// The highest warning threshold reached: 50, 80 or 100; `null` below 50 %.
    pub threshold_reached: Option<u32>,
    /// When the budget runs out at the current burn rate; `null` when it is spent already or
    /// nothing is being billed.
    pub exhausted_at: Option<DateTime<Utc>>,
    /// Whole minutes until `exhausted_at` (rounded down), so every screen says "in 17 min" alike.
    #[ts(type = "number | null")]
    pub minutes_left: Option<i64>,
    /// How loudly to show it: `critical` once spent or under [`CRITICAL_MINUTES_LEFT`]
    /// minutes from empty, `warning` from 50 % or under an hour, else `calm`.
    pub urgency: BudgetUrgency,
}

/// A percentage as the screens show it: one decimal, half away from zero (`88.6`, `50.0`).
pub fn shown_percent(percent: Decimal) -> Decimal {
    let mut shown =
        percent.round_dp_with_strategy(1, rust_decimal::RoundingStrategy::MidpointAwayFromZero);
    shown.rescale(1);
    shown
}

/// Warning thresholds, in percent of the budget.
pub const BUDGET_THRESHOLDS: [u32; 3] = [50, 80, 100];

/// Under this many minutes to empty, a budget is critical whatever share is spent: a bar at
/// 50.6 % with one minute left is red, not amber. Reminders use the same figure.
pub const CRITICAL_MINUTES_LEFT: i64 = 15;

/// How loudly a budget's state is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum BudgetUrgency {
    Calm,
    Warning,
    Critical,
}

impl BudgetUrgency {
    /// From the threshold reached and the minutes left.
    pub fn of(threshold_reached: Option<u32>, minutes_left: Option<i64>) -> Self {
        if threshold_reached == Some(100) || minutes_left.is_some_and(|m| m < CRITICAL_MINUTES_LEFT)
        {
            Self::Critical
        } else if threshold_reached.is_some() || minutes_left.is_some_and(|m| m < 60) {
            Self::Warning
        } else {
            Self::Calm
        }
    }
}

impl BudgetUse {
    /// `used` and `burn_rate_per_hour` at full precision.
    pub fn new(
        amount: Decimal,
        used: Decimal,
        burn_rate_per_hour: Decimal,
        now: DateTime<Utc>,
    ) -> Result<Self, BillingError> {
        let overflow = BillingError::Overflow { what: "budget" };
        let percent = if amount > Decimal::ZERO {
            used.checked_mul(Decimal::ONE_HUNDRED)
                .and_then(|hundredfold| hundredfold.checked_div(amount))
                .ok_or(overflow)?
        } else {
            Decimal::ONE_HUNDRED
        };
        let threshold_reached = BUDGET_THRESHOLDS
            .iter()
            .rev()
            .find(|t| percent >= Decimal::from(**t))
            .copied();
        let remaining = amount
            .checked_sub(used)
            .ok_or(BillingError::Overflow { what: "budget" })?;
        // When the division does not fit, the budget lasts longer than any date can say.
        let exhausted_at = (remaining > Decimal::ZERO && burn_rate_per_hour > Decimal::ZERO)
            .then(|| {
                let seconds = remaining
                    .checked_mul(Decimal::from(3600))?
                    .checked_div(burn_rate_per_hour)?
                    .ceil();
                i64::try_from(seconds)
                    .ok()
                    .and_then(chrono::Duration::try_seconds)
                    .and_then(|d| now.checked_add_signed(d))
            })
            .flatten();
        let minutes_left = exhausted_at.map(|at| (at - now).num_minutes().max(0));
        Ok(Self {
            amount: display_amount(amount),
            used: display_amount(used),
            percent_used: shown_percent(percent),
            threshold_reached,
            exhausted_at,
            minutes_left,
            urgency: BudgetUrgency::of(threshold_reached, minutes_left),
        })
    }
}

/// `leasehold cost NAME --json`: the bill so far.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct CostReport {
    pub name: String,
    pub currency: Currency,
    /// The moment the report describes.
    pub as_of: DateTime<Utc>,
    /// `null` when `as_of` is before creation.
    pub state: Option<InstanceState>,
    #[ts(type = "string")]
    pub total: Decimal,
    pub breakdown: CostBreakdown,
    /// Cost of one more hour in the current state, fees included, traffic excluded.
    #[ts(type = "string")]
    pub burn_rate_per_hour: Decimal,
    pub billing_started_at: Option<DateTime<Utc>>,
    pub released_at: Option<DateTime<Utc>>,
    /// When the provider wipes the instance if it stays stopped.
    pub wipe_at: Option<DateTime<Utc>>,
    pub budget: Option<BudgetUse>,
    pub intervals: Vec<CostInterval>,
}

impl CostReport {
    /// The report of an instance named `name` from the engine's result at `as_of`.
    pub fn new(
        name: &str,
        currency: &Currency,
        costing: &Costing,
        budget: Option<Decimal>,
        as_of: DateTime<Utc>,
    ) -> Result<Self, BillingError> {
        let total = costing.total()?;
        Ok(Self {
            name: name.to_owned(),
            currency: currency.clone(),
            as_of,
            state: costing.state,
            total: display_amount(total),
            breakdown: CostBreakdown::shown(&costing.charges)?,
            burn_rate_per_hour: display_rate(costing.burn_rate_per_hour),
            billing_started_at: costing.billing_started_at,
            released_at: costing.released_at,
            wipe_at: costing.wipe_at,
            budget: budget
                .map(|b| BudgetUse::new(b, total, costing.burn_rate_per_hour, as_of))
                .transpose()?,
            intervals: costing
                .intervals
                .iter()
                .map(CostInterval::shown)
                .collect::<Result<_, _>>()?,
        })
    }
}

/// One rental at a glance: a card on the Rentals screen, a row of `instance list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct InstanceSummary {
    pub id: i64,
    pub name: String,
    pub provider: String,
    pub region: Option<String>,
    pub gpu_model: String,
    pub gpu_count: u32,
    pub currency: Currency,
    #[ts(type = "string")]
    pub price_per_gpu_hour: Decimal,
    /// `null` when `as_of` is before creation.
    pub state: Option<InstanceState>,
    pub state_since: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub billing_started_at: Option<DateTime<Utc>>,
    pub released_at: Option<DateTime<Utc>>,
    /// Time spent running with GPUs.
    #[ts(type = "number")]
    pub running_seconds: i64,
    #[ts(type = "string")]
    pub total: Decimal,
    #[ts(type = "string")]
    pub burn_rate_per_hour: Decimal,
    #[ts(type = "string | null")]
    pub planned_hours: Option<Decimal>,
    pub budget: Option<BudgetUse>,
    pub wipe_at: Option<DateTime<Utc>>,
    pub notes: Option<String>,
    pub as_of: DateTime<Utc>,
}

impl InstanceSummary {
    /// Costing money right now: not released, and burning at more than zero an hour.
    pub fn is_billing(&self) -> bool {
        self.state.is_some_and(|s| s != InstanceState::Released)
            && self.burn_rate_per_hour > Decimal::ZERO
    }
}

/// The instances billing now, and their burn rates summed per currency code (never across
/// currencies), as the tray shows them.
pub fn billing_now(
    summaries: &[InstanceSummary],
) -> (
    Vec<&InstanceSummary>,
    std::collections::BTreeMap<String, Decimal>,
) {
    let billing: Vec<&InstanceSummary> = summaries.iter().filter(|s| s.is_billing()).collect();
    let mut totals = std::collections::BTreeMap::new();
    for summary in &billing {
        *totals
            .entry(summary.currency.code().to_owned())
            .or_insert(Decimal::ZERO) += summary.burn_rate_per_hour;
    }
    (billing, totals)
}

/// One event as shown on the instance's timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct EventView {
    /// `created`, `started`, `stopped`, `no_gpu_started`, `released`, `rule_changed`,
    /// `traffic_recorded`.
    pub kind: String,
    pub at: DateTime<Utc>,
    /// The rules from this moment on (`created`, `rule_changed`).
    pub rules: Option<BillingRules>,
    #[ts(type = "string | null")]
    pub traffic_gb: Option<Decimal>,
}

/// `instance show`: the summary, the rules in effect, the timeline and the bill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct InstanceDetail {
    pub summary: InstanceSummary,
    /// Rules in effect at `as_of`.
    pub rules: BillingRules,
    pub events: Vec<EventView>,
    pub report: CostReport,
}

/// "If you keep it until T": the bill at `until` if nothing else is recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Forecast {
    pub name: String,
    pub currency: Currency,
    pub now: DateTime<Utc>,
    pub until: DateTime<Utc>,
    /// The state assumed to continue until `until`.
    pub state: Option<InstanceState>,
    #[ts(type = "string")]
    pub total_now: Decimal,
    #[ts(type = "string")]
    pub total_at_until: Decimal,
    /// `total_at_until - total_now`.
    #[ts(type = "string")]
    pub additional: Decimal,
    pub budget_at_until: Option<BudgetUse>,
}

#[cfg(test)]
mod budget_urgency_tests {
    use super::*;
    use chrono::TimeZone;
    use rust_decimal_macros::dec;

    #[test]
    fn a_budget_minutes_from_empty_is_critical_whatever_share_is_spent() {
        let now = Utc.with_ymd_and_hms(2026, 12, 4, 14, 36, 0).unwrap();
        // 50.6 % spent, 1.33 left at 4.80 an hour: under 17 minutes.
        let use_ = BudgetUse::new(dec!(100), dec!(98.67), dec!(4.8), now).unwrap();
        assert_eq!(use_.minutes_left, Some(16));
        assert_eq!(use_.urgency, BudgetUrgency::Warning);
        let use_ = BudgetUse::new(dec!(100), dec!(50.6), dec!(240), now).unwrap();
        assert_eq!(use_.threshold_reached, Some(50));
        assert_eq!(use_.minutes_left, Some(12));
        assert_eq!(
            use_.urgency,
            BudgetUrgency::Critical,
            "red at 50.6 % with 12 minutes left"
        );
    }

    #[test]
    fn urgency_follows_the_share_spent_and_the_time_left() {
        use BudgetUrgency::*;
        for (threshold, minutes, expected) in [
            (None, None, Calm),
            (None, Some(600), Calm),
            (None, Some(59), Warning),
            (Some(50), Some(600), Warning),
            (Some(80), None, Warning),
            (None, Some(14), Critical),
            (Some(100), None, Critical),
        ] {
            assert_eq!(
                BudgetUrgency::of(threshold, minutes),
                expected,
                "{threshold:?} {minutes:?}"
            );
        }
    }
}
