//! Before renting: what a job will cost, and what splitting it into several runs with stops in
//! between costs under each stopped-billing rule.
//!
//! The seeds' formula is price × hours + storage + traffic, and their warning is the split job:
//! 10 hours on a 4090 run as two sessions with a 20-hour stop between them costs the same as one
//! session when stopping is free, but can cost several times more when the provider keeps
//! billing a stopped instance. Both answers come from the same engine as the live ledger, run on
//! a made-up event list, so rounding and fees behave exactly as they will on the real bill.

use chrono::{DateTime, Duration, TimeZone, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::engine::{self, add, MoneyBreakdown};
use super::events::{EventKind, LedgerEvent};
use super::money::{display_amount, display_quantity, display_rate, Currency};
use super::rules::{
    at_most, limits, non_negative, rate_in_range, BillingRules, BillingStart, Granularity,
    StoppedBilling,
};
use super::BillingError;

/// What the user plans.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct EstimateInput {
    pub currency: String,
    #[ts(type = "string")]
    pub price_per_gpu_hour: Decimal,
    pub gpu_count: u32,
    /// Hours of GPU work.
    #[ts(type = "string")]
    pub hours: Decimal,
    /// Data disk / snapshot fees per hour while the instance exists.
    #[ts(type = "string")]
    pub storage_per_hour: Decimal,
    #[ts(type = "string")]
    pub public_ip_per_hour: Decimal,
    #[ts(type = "string")]
    pub traffic_gb: Decimal,
    #[ts(type = "string")]
    pub traffic_per_gb: Decimal,
    pub granularity: Granularity,
    /// Sessions the work is split into (1 = one uninterrupted run).
    pub runs: u32,
    /// Hours stopped between two sessions.
    #[ts(type = "string")]
    pub stop_hours_between: Decimal,
    /// Storage-only rate of a stopped instance, to compare (per hour).
    #[ts(type = "string | null")]
    pub stopped_storage_rate: Option<Decimal>,
    /// Other (discounted) rate of a stopped instance, to compare (per hour).
    #[ts(type = "string | null")]
    pub stopped_rate: Option<Decimal>,
}

impl EstimateInput {
    /// One uninterrupted run, no fees, per-second billing.
    pub fn simple(
        currency: &str,
        price_per_gpu_hour: Decimal,
        gpu_count: u32,
        hours: Decimal,
    ) -> Self {
        Self {
            currency: currency.to_owned(),
            price_per_gpu_hour,
            gpu_count,
            hours,
            storage_per_hour: Decimal::ZERO,
            public_ip_per_hour: Decimal::ZERO,
            traffic_gb: Decimal::ZERO,
            traffic_per_gb: Decimal::ZERO,
            granularity: Granularity::Second,
            runs: 1,
            stop_hours_between: Decimal::ZERO,
            stopped_storage_rate: None,
            stopped_rate: None,
        }
    }
}

/// The cost of the job as one uninterrupted run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct CostEstimate {
    pub currency: Currency,
    #[ts(type = "string")]
    pub hours: Decimal,
    #[ts(type = "string")]
    pub compute: Decimal,
    #[ts(type = "string")]
    pub storage: Decimal,
    #[ts(type = "string")]
    pub ip: Decimal,
    #[ts(type = "string")]
    pub traffic: Decimal,
    #[ts(type = "string")]
    pub total: Decimal,
    /// Present when the job is split into more than one run.
    pub split: Option<SplitRunComparison>,
}

/// The split job priced under each stopped-billing rule, side by side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct SplitRunComparison {
    pub runs: u32,
    #[ts(type = "string")]
    pub hours_per_run: Decimal,
    #[ts(type = "string")]
    pub stop_hours_between: Decimal,
    /// The same work as one uninterrupted run, for reference.
    #[ts(type = "string")]
    pub continuous_total: Decimal,
    pub options: Vec<SplitRunOption>,
}

/// One stopped-billing rule applied to the split job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct SplitRunOption {
    /// `none`, `storage`, `rate`, or `full_price` (a stopped instance billed like a running one).
    pub rule: String,
    #[ts(type = "string")]
    pub stopped_rate_per_hour: Decimal,
    /// What the stops cost.
    #[ts(type = "string")]
    pub stopped_cost: Decimal,
    #[ts(type = "string")]
    pub total: Decimal,
    /// `total / continuous_total`, two decimals (1.00 = stopping costs nothing extra).
    #[ts(type = "string")]
    pub times_continuous: Decimal,
}

/// An arbitrary fixed origin for made-up ledgers; only durations matter.
fn origin() -> DateTime<Utc> {
    Utc.timestamp_opt(0, 0).single().unwrap_or_default()
}

const MAX_RUNS: u32 = 1000;

fn hours_to_duration(field: &'static str, hours: Decimal) -> Result<Duration, BillingError> {
    if hours < Decimal::ZERO || hours > limits::MAX_HOURS {
        return Err(BillingError::InvalidInput {
            field,
            reason: format!(
                "expected between 0 and {} hours (got {hours})",
                limits::MAX_HOURS
            ),
        });
    }
    // Whole seconds, rounded up: the engine bills whole seconds anyway.
    let seconds = (hours * Decimal::from(3600)).ceil();
    let seconds = i64::try_from(seconds).map_err(|_| BillingError::InvalidInput {
        field,
        reason: format!("{hours} hours is out of range"),
    })?;
    Ok(Duration::seconds(seconds))
}

impl EstimateInput {
    fn rules(&self, stopped_billing: StoppedBilling) -> BillingRules {
        BillingRules {
            price_per_gpu_hour: self.price_per_gpu_hour,
            gpu_count: self.gpu_count,
            billing_starts: BillingStart::Created,
            stopped_billing,
            no_gpu_rate: None,
            data_disk_per_hour: self.storage_per_hour,
            snapshot_per_hour: Decimal::ZERO,
            public_ip_per_hour: self.public_ip_per_hour,
            traffic_per_gb: self.traffic_per_gb,
            granularity: self.granularity,
            wipe_after_stopped_days: None,
        }
    }

    fn validate(&self) -> Result<Currency, BillingError> {
        let currency = Currency::parse(&self.currency)?;
        self.rules(StoppedBilling::None).validate()?;
        if self.hours <= Decimal::ZERO {
            return Err(BillingError::InvalidInput {
                field: "hours",
                reason: format!("hours must be greater than zero (got {})", self.hours),
            });
        }
        hours_to_duration("hours", self.hours)?;
        hours_to_duration("stop_hours_between", self.stop_hours_between)?;
        non_negative("traffic_gb", self.traffic_gb)?;
        at_most("traffic_gb", self.traffic_gb, limits::MAX_TRAFFIC_GB)?;
        if let Some(rate) = self.stopped_storage_rate {
            rate_in_range("stopped_storage_rate", rate)?;
        }
        if let Some(rate) = self.stopped_rate {
            rate_in_range("stopped_rate", rate)?;
        }
        if self.runs == 0 || self.runs > MAX_RUNS {
            return Err(BillingError::InvalidInput {
                field: "runs",
                reason: format!("expected 1 to {MAX_RUNS} runs (got {})", self.runs),
            });
        }
        Ok(currency)
    }

    /// The job as a ledger: created and running at once, `runs` sessions of equal length with
    /// `stop_hours_between` stopped between them, released after the last session.
    fn ledger(
        &self,
        runs: u32,
        stopped_billing: StoppedBilling,
    ) -> Result<Vec<LedgerEvent>, BillingError> {
        let total = hours_to_duration("hours", self.hours)?;
        let gap = hours_to_duration("stop_hours_between", self.stop_hours_between)?;
        let per_run = total / i32::try_from(runs).unwrap_or(1);
        let mut t = origin();
        let mut events = vec![
            LedgerEvent::new(t, EventKind::Created(Box::new(self.rules(stopped_billing)))),
            LedgerEvent::new(t, EventKind::Started),
        ];
        if self.traffic_gb > Decimal::ZERO {
            events.push(LedgerEvent::new(
                t,
                EventKind::TrafficRecorded(self.traffic_gb),
            ));
        }
        for run in 0..runs {
            // The last run takes the remainder, so the runs always add up to `hours`.
            t += if run + 1 == runs {
                total - per_run * i32::try_from(runs - 1).unwrap_or(0)
            } else {
                per_run
            };
            if run + 1 < runs {
                events.push(LedgerEvent::new(t, EventKind::Stopped));
                t += gap;
                events.push(LedgerEvent::new(t, EventKind::Started));
            }
        }
        events.push(LedgerEvent::new(t, EventKind::Released));
        Ok(events)
    }

    fn price(
        &self,
        runs: u32,
        stopped_billing: StoppedBilling,
    ) -> Result<MoneyBreakdown, BillingError> {
        let events = self.ledger(runs, stopped_billing)?;
        let end = events.last().map_or_else(origin, |e| e.at);
        let costing = engine::compute(&events, end)?;
        Ok(costing.charges.in_money())
    }
}

fn total_of(m: &MoneyBreakdown) -> Result<Decimal, BillingError> {
    [m.no_gpu, m.stopped, m.storage, m.ip, m.traffic]
        .into_iter()
        .try_fold(m.compute, |sum, part| add("estimate", sum, part))
}

/// Price a job before renting it.
pub fn estimate(input: &EstimateInput) -> Result<CostEstimate, BillingError> {
    let currency = input.validate()?;
    let one_run = input.price(1, StoppedBilling::None)?;
    let continuous_total = total_of(&one_run)?;
    let split = if input.runs > 1 {
        let compute_rate = input.rules(StoppedBilling::None).compute_rate()?;
        let mut rules = vec![("none", StoppedBilling::None)];
        if let Some(rate) = input.stopped_storage_rate {
            rules.push(("storage", StoppedBilling::Storage { rate }));
        }
        if let Some(rate) = input.stopped_rate {
            rules.push(("rate", StoppedBilling::Rate { rate }));
        }
        rules.push(("full_price", StoppedBilling::Rate { rate: compute_rate }));
        let no_stop_cost = total_of(&input.price(input.runs, StoppedBilling::None)?)?;
        let mut options = Vec::with_capacity(rules.len());
        for (rule, stopped_billing) in rules {
            let total = total_of(&input.price(input.runs, stopped_billing)?)?;
            let overflow = || BillingError::Overflow { what: "estimate" };
            options.push(SplitRunOption {
                rule: rule.to_owned(),
                stopped_rate_per_hour: display_rate(stopped_billing.rate().unwrap_or_default()),
                stopped_cost: display_amount(total.checked_sub(no_stop_cost).ok_or_else(overflow)?),
                total: display_amount(total),
                times_continuous: display_amount(if continuous_total > Decimal::ZERO {
                    total.checked_div(continuous_total).ok_or_else(overflow)?
                } else {
                    Decimal::ONE
                }),
            });
        }
        Some(SplitRunComparison {
            runs: input.runs,
            hours_per_run: display_quantity((input.hours / Decimal::from(input.runs)).round_dp(4)),
            stop_hours_between: display_quantity(input.stop_hours_between),
            continuous_total: display_amount(continuous_total),
            options,
        })
    } else {
        None
    };
    Ok(CostEstimate {
        currency,
        hours: display_quantity(input.hours),
        compute: display_amount(one_run.compute),
        storage: display_amount(one_run.storage),
        ip: display_amount(one_run.ip),
        traffic: display_amount(one_run.traffic),
        total: display_amount(continuous_total),
        split,
    })
}
