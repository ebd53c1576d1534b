//! The cost engine: a pure function of the event list and `now`.
//!
//! How billing units are counted (the way per-unit providers bill): each *state run* — a
//! stretch between two power/state changes — is cut into units of the provider's granularity
//! (second, minute, hour) starting at the run's first instant, and every unit that has begun is
//! charged in full, at the rate in effect when it began. So a 61-minute session on an hourly
//! provider costs two hours, a stop and a start open a new unit, and a rule change takes effect
//! from the next unit (the unit in progress keeps its price). Fees that do not depend on the
//! power state (data disk, snapshot, public IP) run as one long run from the moment billing
//! starts until release. A run's granularity is the one in effect when the run (or, for fees,
//! billing) began.
//!
//! Consequences the property tests pin down: the cost never decreases as `now` advances,
//! nothing accrues after release, an event that changes no rate (a rule change to identical
//! rules, recorded traffic of zero GB) never changes the cost, and with per-second granularity
//! cutting a run in two at a whole second costs exactly the same.
//!
//! Amounts are accumulated as `rate × seconds` (exact decimals, since every unit is a whole
//! number of seconds) and divided by 3600 once, so splitting a sum never introduces rounding.
//!
//! Every multiplication and sum is checked: a stored value too large for a decimal (a price
//! recorded before the input ranges existed, a hand-edited database) ends in
//! `billing.amount_overflow`, never in a panic that would take every later report with it.

use chrono::{DateTime, Duration, Utc};
use rust_decimal::Decimal;

use super::events::{EventKind, InstanceState, LedgerEvent, Replay};
use super::rules::{BillingRules, BillingStart, Granularity, StoppedBilling};
use super::BillingError;

const SECONDS_PER_HOUR: i64 = 3600;

/// Charges per category. Time-based categories hold `rate × seconds`; traffic holds money.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Charges {
    pub compute: Decimal,
    pub no_gpu: Decimal,
    pub stopped: Decimal,
    pub storage: Decimal,
    pub ip: Decimal,
    pub traffic: Decimal,
}

// The engine's callers add and multiply through it; the checked arithmetic itself lives with money.
pub(crate) use super::money::{add, mul};

impl Charges {
    fn add(&mut self, other: &Self) -> Result<(), BillingError> {
        // Most intervals touch two or three categories; adding zeros is not free for decimals.
        for (sum, part) in [
            (&mut self.compute, other.compute),
            (&mut self.no_gpu, other.no_gpu),
            (&mut self.stopped, other.stopped),
            (&mut self.storage, other.storage),
            (&mut self.ip, other.ip),
            (&mut self.traffic, other.traffic),
        ] {
            if !part.is_zero() {
                *sum = add("cost", *sum, part)?;
            }
        }
        Ok(())
    }

    /// Money per category, at full precision.
    pub fn in_money(&self) -> MoneyBreakdown {
        let hours = |rate_seconds: Decimal| {
            if rate_seconds.is_zero() {
                Decimal::ZERO
            } else {
                rate_seconds / Decimal::from(SECONDS_PER_HOUR)
            }
        };
        MoneyBreakdown {
            compute: hours(self.compute),
            no_gpu: hours(self.no_gpu),
            stopped: hours(self.stopped),
            storage: hours(self.storage),
            ip: hours(self.ip),
            traffic: self.traffic,
        }
    }

    /// The total, at full precision: one division, so it equals the sum of the parts exactly
    /// whenever the parts are.
    pub fn total(&self) -> Result<Decimal, BillingError> {
        add(
            "total",
            self.rate_seconds()? / Decimal::from(SECONDS_PER_HOUR),
            self.traffic,
        )
    }

    fn rate_seconds(&self) -> Result<Decimal, BillingError> {
        [self.no_gpu, self.stopped, self.storage, self.ip]
            .into_iter()
            .try_fold(self.compute, |sum, part| add("total", sum, part))
    }

    /// The total as shown (two decimals), without a decimal division: what a long timeline
    /// needs once per interval.
    pub fn shown_total(&self) -> Result<Decimal, BillingError> {
        let traffic = mul("traffic", self.traffic, Decimal::from(SECONDS_PER_HOUR))?;
        Ok(shown_from_rate_seconds(add(
            "total",
            self.rate_seconds()?,
            traffic,
        )?))
    }

    /// Each category as shown (two decimals), as [`Charges::shown_total`] does.
    pub fn shown(&self) -> Result<MoneyBreakdown, BillingError> {
        let hour = Decimal::from(SECONDS_PER_HOUR);
        Ok(MoneyBreakdown {
            compute: shown_from_rate_seconds(self.compute),
            no_gpu: shown_from_rate_seconds(self.no_gpu),
            stopped: shown_from_rate_seconds(self.stopped),
            storage: shown_from_rate_seconds(self.storage),
            ip: shown_from_rate_seconds(self.ip),
            traffic: shown_from_rate_seconds(mul("traffic", self.traffic, hour)?),
        })
    }
}

/// `rate_seconds / 3600` rounded half away from zero to two decimals, in integer arithmetic:
/// `mantissa × 100 / (3600 × 10^scale)`. Falls back to decimal division if it cannot fit.
fn shown_from_rate_seconds(rate_seconds: Decimal) -> Decimal {
    if rate_seconds.is_zero() {
        return Decimal::new(0, 2);
    }
    let mantissa = rate_seconds.mantissa();
    let divisor = 10i128
        .checked_pow(rate_seconds.scale())
        .and_then(|p| p.checked_mul(i128::from(SECONDS_PER_HOUR)));
    match (divisor, mantissa.checked_mul(100)) {
        (Some(divisor), Some(numerator)) => {
            let (quotient, remainder) = (numerator / divisor, numerator % divisor);
            let rounded = if remainder.abs() * 2 >= divisor {
                quotient + numerator.signum()
            } else {
                quotient
            };
            Decimal::try_from_i128_with_scale(rounded, 2).unwrap_or_else(|_| {
                super::money::display_amount(rate_seconds / Decimal::from(SECONDS_PER_HOUR))
            })
        }
        _ => super::money::display_amount(rate_seconds / Decimal::from(SECONDS_PER_HOUR)),
    }
}

/// Money per category, full precision.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MoneyBreakdown {
    pub compute: Decimal,
    pub no_gpu: Decimal,
    pub stopped: Decimal,
    pub storage: Decimal,
    pub ip: Decimal,
    pub traffic: Decimal,
}

/// One stretch of time in one state under one set of rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interval {
    pub state: InstanceState,
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    /// Still going at `now`.
    pub ongoing: bool,
    /// False before billing started (billing from power-on, not yet powered on).
    pub billed: bool,
    /// Hourly rate of the state plus the fixed fees, while billed.
    pub rate_per_hour: Decimal,
    /// Seconds charged for the state in this interval (whole units begun in it).
    pub billed_seconds: i64,
    pub charges: Charges,
}

/// Everything the engine derives from a ledger at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Costing {
    /// `None` when `now` is before creation (or the ledger is empty).
    pub state: Option<InstanceState>,
    pub state_since: Option<DateTime<Utc>>,
    pub created_at: Option<DateTime<Utc>>,
    pub billing_started_at: Option<DateTime<Utc>>,
    pub released_at: Option<DateTime<Utc>>,
    /// Rules in effect at `now`.
    pub rules: Option<BillingRules>,
    pub charges: Charges,
    pub intervals: Vec<Interval>,
    /// What one more hour in the current state would cost (traffic excluded).
    pub burn_rate_per_hour: Decimal,
    /// Time spent running with GPUs, actual (not rounded).
    pub running_seconds: i64,
    /// When the provider wipes the instance if it stays stopped.
    pub wipe_at: Option<DateTime<Utc>>,
}

impl Costing {
    pub fn total(&self) -> Result<Decimal, BillingError> {
        self.charges.total()
    }
}

/// Unit starts in `[anchor, t)`: the number of units charged by time `t`.
fn units_begun(anchor: DateTime<Utc>, unit_seconds: i64, t: DateTime<Utc>) -> i64 {
    let elapsed = t - anchor;
    // Nanoseconds fit an i64 for 292 years; 64-bit division is several times cheaper than
    // 128-bit, and this runs four times per interval.
    if let Some(nanos) = elapsed.num_nanoseconds() {
        if nanos <= 0 {
            return 0;
        }
        let unit = unit_seconds * 1_000_000_000;
        return (nanos - 1) / unit + 1;
    }
    let nanos =
        i128::from(elapsed.num_seconds()) * 1_000_000_000 + i128::from(elapsed.subsec_nanos());
    if nanos <= 0 {
        return 0;
    }
    let unit = i128::from(unit_seconds) * 1_000_000_000;
    i64::try_from((nanos - 1) / unit + 1).unwrap_or(i64::MAX)
}

/// A stretch of billing counted from `anchor` in units of `granularity`.
#[derive(Debug, Clone, Copy)]
struct Meter {
    anchor: DateTime<Utc>,
    unit_seconds: i64,
}

impl Meter {
    fn new(anchor: DateTime<Utc>, granularity: Granularity) -> Self {
        Self {
            anchor,
            unit_seconds: granularity.seconds(),
        }
    }

    /// Seconds charged for units beginning in `[start, end)`.
    fn charged_seconds(&self, start: DateTime<Utc>, end: DateTime<Utc>) -> i64 {
        let units = units_begun(self.anchor, self.unit_seconds, end)
            - units_begun(self.anchor, self.unit_seconds, start);
        units.saturating_mul(self.unit_seconds)
    }
}

/// The hourly rate of `state` under `rules` and the category it is charged to.
fn state_rate(
    state: InstanceState,
    rules: &BillingRules,
) -> Result<(Decimal, Category), BillingError> {
    Ok(match state {
        InstanceState::Created | InstanceState::Running => {
            (rules.compute_rate()?, Category::Compute)
        }
        InstanceState::NoGpu => (rules.no_gpu_rate.unwrap_or_default(), Category::NoGpu),
        InstanceState::Stopped => match rules.stopped_billing {
            StoppedBilling::None => (Decimal::ZERO, Category::Stopped),
            StoppedBilling::Storage { rate } => (rate, Category::Storage),
            StoppedBilling::Rate { rate } => (rate, Category::Stopped),
        },
        InstanceState::Released => (Decimal::ZERO, Category::Stopped),
    })
}

#[derive(Debug, Clone, Copy)]
enum Category {
    Compute,
    NoGpu,
    Stopped,
    Storage,
}

impl Charges {
    fn charge(&mut self, category: Category, rate_seconds: Decimal) -> Result<(), BillingError> {
        let sum = match category {
            Category::Compute => &mut self.compute,
            Category::NoGpu => &mut self.no_gpu,
            Category::Stopped => &mut self.stopped,
            Category::Storage => &mut self.storage,
        };
        *sum = add("cost", *sum, rate_seconds)?;
        Ok(())
    }
}

/// The walk over the events, one open interval at a time.
struct Walk<'a> {
    state: InstanceState,
    rules: &'a BillingRules,
    open_since: DateTime<Utc>,
    run: Meter,
    fees: Option<Meter>,
    pending_traffic: Decimal,
    charges: Charges,
    intervals: Vec<Interval>,
    running_seconds: i64,
}

impl<'a> Walk<'a> {
    fn close(&mut self, end: DateTime<Utc>, ongoing: bool) -> Result<(), BillingError> {
        let start = self.open_since;
        let mut charges = Charges {
            traffic: std::mem::take(&mut self.pending_traffic),
            ..Charges::default()
        };
        let mut rate_per_hour = Decimal::ZERO;
        let mut billed_seconds = 0;
        if let Some(fees) = self.fees {
            let (rate, category) = state_rate(self.state, self.rules)?;
            billed_seconds = self.run.charged_seconds(start, end);
            if !rate.is_zero() && billed_seconds != 0 {
                charges.charge(category, mul("cost", rate, Decimal::from(billed_seconds))?)?;
            }
            let storage_rate = add(
                "storage fees",
                self.rules.data_disk_per_hour,
                self.rules.snapshot_per_hour,
            )?;
            let ip_rate = self.rules.public_ip_per_hour;
            if !(storage_rate.is_zero() && ip_rate.is_zero()) {
                let fee_seconds = Decimal::from(fees.charged_seconds(start, end));
                charges.storage = add(
                    "storage fees",
                    charges.storage,
                    mul("storage fees", storage_rate, fee_seconds)?,
                )?;
                charges.ip = add(
                    "public IP fees",
                    charges.ip,
                    mul("public IP fees", ip_rate, fee_seconds)?,
                )?;
            }
            rate_per_hour = add(
                "hourly rate",
                add("hourly rate", rate, storage_rate)?,
                ip_rate,
            )?;
        }
        if self.state == InstanceState::Running {
            self.running_seconds = self
                .running_seconds
                .saturating_add((end - start).num_seconds());
        }
        self.charges.add(&charges)?;
        if end > start || !charges.traffic.is_zero() {
            self.intervals.push(Interval {
                state: self.state,
                start,
                end,
                ongoing,
                billed: self.fees.is_some(),
                rate_per_hour,
                billed_seconds,
                charges,
            });
        }
        self.open_since = end;
        Ok(())
    }
}

/// Cost and state of a ledger at `now`. Events after `now` have not happened yet and are
/// ignored. Fails only when the events themselves are invalid (see [`Replay`]).
pub fn compute(events: &[LedgerEvent], now: DateTime<Utc>) -> Result<Costing, BillingError> {
    let mut replay = Replay::new();
    let mut walk: Option<Walk<'_>> = None;
    let mut billing_started_at = None;
    for event in events.iter().take_while(|e| e.at <= now) {
        replay.apply(event)?;
        let Some(w) = walk.as_mut() else {
            // The first event is `Created` (the replay checked it).
            if let EventKind::Created(rules) = &event.kind {
                let fees = (rules.billing_starts == BillingStart::Created)
                    .then(|| Meter::new(event.at, rules.granularity));
                billing_started_at = fees.map(|m| m.anchor);
                walk = Some(Walk {
                    state: InstanceState::Created,
                    rules,
                    open_since: event.at,
                    run: Meter::new(event.at, rules.granularity),
                    fees,
                    pending_traffic: Decimal::ZERO,
                    charges: Charges::default(),
                    intervals: Vec::with_capacity(events.len()),
                    running_seconds: 0,
                });
            }
            continue;
        };
        match &event.kind {
            EventKind::TrafficRecorded(gb) => {
                w.pending_traffic = add(
                    "traffic",
                    w.pending_traffic,
                    mul("traffic", *gb, w.rules.traffic_per_gb)?,
                )?;
            }
            EventKind::RuleChanged(rules) => {
                w.close(event.at, false)?;
                w.rules = rules;
            }
            EventKind::Created(_) => {}
            kind => {
                w.close(event.at, false)?;
                w.state = replay.state.unwrap_or(InstanceState::Released);
                w.run = Meter::new(event.at, w.rules.granularity);
                let powers_on = matches!(kind, EventKind::Started | EventKind::NoGpuStarted);
                if powers_on && w.fees.is_none() {
                    w.fees = Some(Meter::new(event.at, w.rules.granularity));
                    billing_started_at = Some(event.at);
                }
            }
        }
    }
    let Some(mut walk) = walk else {
        return Ok(Costing {
            state: None,
            state_since: None,
            created_at: None,
            billing_started_at: None,
            released_at: None,
            rules: None,
            charges: Charges::default(),
            intervals: Vec::new(),
            burn_rate_per_hour: Decimal::ZERO,
            running_seconds: 0,
            wipe_at: None,
        });
    };
    let mut burn_rate_per_hour = Decimal::ZERO;
    if walk.state != InstanceState::Released {
        walk.close(now, true)?;
        if walk.fees.is_some() {
            burn_rate_per_hour = add(
                "hourly rate",
                state_rate(walk.state, walk.rules)?.0,
                walk.rules.fixed_fees_per_hour()?,
            )?;
        }
    }
    // Every figure a report derives from these charges must fit, so a report can never be the
    // first to find out.
    walk.charges.shown_total()?;
    walk.charges.total()?;
    let wipe_at = match (walk.state, walk.rules.wipe_after_stopped_days) {
        (InstanceState::Stopped, Some(days)) => walk
            .run
            .anchor
            .checked_add_signed(Duration::days(i64::from(days))),
        _ => None,
    };
    Ok(Costing {
        state: Some(walk.state),
        state_since: Some(walk.run.anchor),
        created_at: replay.created_at,
        billing_started_at,
        released_at: replay.released_at,
        rules: Some(walk.rules.clone()),
        charges: walk.charges,
        intervals: walk.intervals,
        burn_rate_per_hour,
        running_seconds: walk.running_seconds,
        wipe_at,
    })
}
