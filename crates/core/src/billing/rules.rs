//! A provider's billing rules for one instance, as the user read them on the provider's page.
//!
//! Every field is something the seeds tell renters to check before creating an instance: when
//! billing starts, what a stopped instance costs, the extra fees (data disk, snapshot, public IP,
//! traffic), the billing granularity, the no-GPU mode rate, and how long a stopped instance is
//! kept before the provider wipes it.

use std::fmt;
use std::str::FromStr;

use rust_decimal::Decimal;
use rust_decimal_macros::dec;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::BillingError;

/// When the provider starts charging for a new instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum BillingStart {
    /// From creation, even before the first login (many providers do this).
    Created,
    /// From the first power-on.
    Running,
}

/// What a stopped (powered-off, not released) instance costs per hour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[ts(export)]
pub enum StoppedBilling {
    /// Nothing while stopped.
    None,
    /// Only storage, at this rate per instance-hour.
    Storage {
        #[ts(type = "string")]
        rate: Decimal,
    },
    /// Some other (often discounted) rate per instance-hour.
    Rate {
        #[ts(type = "string")]
        rate: Decimal,
    },
}

/// The unit a provider bills in. Each billed stretch is counted in whole units, rounded up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum Granularity {
    Second,
    Minute,
    Hour,
}

impl Granularity {
    pub fn seconds(self) -> i64 {
        match self {
            Self::Second => 1,
            Self::Minute => 60,
            Self::Hour => 3600,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Second => "second",
            Self::Minute => "minute",
            Self::Hour => "hour",
        }
    }
}

impl FromStr for Granularity {
    type Err = BillingError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "second" | "seconds" | "s" => Ok(Self::Second),
            "minute" | "minutes" | "min" | "m" => Ok(Self::Minute),
            "hour" | "hours" | "h" => Ok(Self::Hour),
            _ => Err(BillingError::InvalidInput {
                field: "granularity",
                reason: format!("{s:?} is not one of second, minute, hour"),
            }),
        }
    }
}

impl BillingStart {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Created => "created",
            Self::Running => "running",
        }
    }
}

impl FromStr for BillingStart {
    type Err = BillingError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "created" | "creation" => Ok(Self::Created),
            "running" | "power-on" | "power_on" | "started" => Ok(Self::Running),
            _ => Err(BillingError::InvalidInput {
                field: "billing_starts",
                reason: format!("{s:?} is not one of created, running"),
            }),
        }
    }
}

impl StoppedBilling {
    pub fn kind(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Storage { .. } => "storage",
            Self::Rate { .. } => "rate",
        }
    }

    pub fn rate(self) -> Option<Decimal> {
        match self {
            Self::None => None,
            Self::Storage { rate } | Self::Rate { rate } => Some(rate),
        }
    }
}

/// `none`, `storage:RATE` or `rate:RATE` (the CLI's `--stopped-billing` syntax).
impl FromStr for StoppedBilling {
    type Err = BillingError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |reason: String| BillingError::InvalidInput {
            field: "stopped_billing",
            reason,
        };
        let text = s.trim();
        if text.eq_ignore_ascii_case("none") {
            return Ok(Self::None);
        }
        let (kind, rate_text) = text
            .split_once(':')
            .ok_or_else(|| bad(format!("{s:?} is not one of none, storage:RATE, rate:RATE")))?;
        let rate = parse_decimal("stopped_billing", rate_text)?;
        match kind.trim().to_ascii_lowercase().as_str() {
            "storage" => Ok(Self::Storage { rate }),
            "rate" => Ok(Self::Rate { rate }),
            other => Err(bad(format!(
                "{other:?} is not one of none, storage:RATE, rate:RATE"
            ))),
        }
    }
}

impl fmt::Display for StoppedBilling {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::None => f.write_str("none"),
            Self::Storage { rate } => write!(f, "storage:{rate}"),
            Self::Rate { rate } => write!(f, "rate:{rate}"),
        }
    }
}

/// Upper limits on what is typed or stored, checked where input enters (the CLI and the app
/// share these checks). Far above any real price — the largest real hourly prices are in
/// currencies with small units, such as an H100 at about 1.3 million VND an hour — and far
/// below what would overflow a decimal over centuries of billed seconds. The engine still checks
/// every operation; these limits keep a typo from being stored at all.
pub mod limits {
    use super::{dec, Decimal};

    /// Any hourly price or fee (per GPU, per instance, while stopped), and the price of a GB.
    pub const MAX_RATE: Decimal = dec!(100000000);
    /// GPUs in one rented instance (real machines have 1 to 16).
    pub const MAX_GPU_COUNT: u32 = 256;
    /// Hours of a plan or an estimate (about 11 years).
    pub const MAX_HOURS: Decimal = dec!(100000);
    /// Gigabytes of traffic recorded at once.
    pub const MAX_TRAFFIC_GB: Decimal = dec!(1000000000);
    /// A budget or a purchase price.
    pub const MAX_AMOUNT: Decimal = dec!(1000000000000000);
    /// Days a provider keeps a stopped instance (ten years).
    pub const MAX_WIPE_DAYS: u32 = 3650;
}

/// `value` must not exceed `max`.
pub(crate) fn at_most(
    field: &'static str,
    value: Decimal,
    max: Decimal,
) -> Result<(), BillingError> {
    if value > max {
        Err(BillingError::TooLarge { field, value, max })
    } else {
        Ok(())
    }
}

/// Parse a decimal amount typed by a person (`2.50`), naming the field when it is not one.
pub fn parse_decimal(field: &'static str, text: &str) -> Result<Decimal, BillingError> {
    Decimal::from_str(text.trim()).map_err(|_| BillingError::InvalidInput {
        field,
        reason: format!("{text:?} is not a decimal number"),
    })
}

/// The billing rules in effect from some moment on. All rates are per hour, in the instance's
/// currency; fees are per instance (not per GPU) except the GPU price.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct BillingRules {
    /// Price of one GPU for one hour while running.
    #[ts(type = "string")]
    pub price_per_gpu_hour: Decimal,
    pub gpu_count: u32,
    pub billing_starts: BillingStart,
    pub stopped_billing: StoppedBilling,
    /// Hourly rate in no-GPU mode (无卡模式); `None` when the provider has no such mode.
    #[ts(type = "string | null")]
    pub no_gpu_rate: Option<Decimal>,
    /// Data disk fee per hour, charged whenever the instance exists and is billed.
    #[ts(type = "string")]
    pub data_disk_per_hour: Decimal,
    /// Snapshot fee per hour, charged whenever the instance exists and is billed.
    #[ts(type = "string")]
    pub snapshot_per_hour: Decimal,
    /// Public IP fee per hour, charged whenever the instance exists and is billed.
    #[ts(type = "string")]
    pub public_ip_per_hour: Decimal,
    /// Price of one GB of recorded traffic.
    #[ts(type = "string")]
    pub traffic_per_gb: Decimal,
    pub granularity: Granularity,
    /// A stopped instance is wiped after this many days (AutoDL: 15); `None` when never.
    pub wipe_after_stopped_days: Option<u32>,
}

impl BillingRules {
    /// Rules with only the GPU price set: billed from creation, nothing while stopped, no
    /// extra fees, per-second granularity.
    pub fn simple(price_per_gpu_hour: Decimal, gpu_count: u32) -> Self {
        Self {
            price_per_gpu_hour,
            gpu_count,
            billing_starts: BillingStart::Created,
            stopped_billing: StoppedBilling::None,
            no_gpu_rate: None,
            data_disk_per_hour: Decimal::ZERO,
            snapshot_per_hour: Decimal::ZERO,
            public_ip_per_hour: Decimal::ZERO,
            traffic_per_gb: Decimal::ZERO,
            granularity: Granularity::Second,
            wipe_after_stopped_days: None,
        }
    }

    /// Hourly price of the whole instance while its GPUs run.
    pub fn compute_rate(&self) -> Result<Decimal, BillingError> {
        super::money::mul(
            "hourly rate",
            self.price_per_gpu_hour,
            Decimal::from(self.gpu_count),
        )
    }

    /// Hourly fees charged in every billed state: data disk + snapshot + public IP.
    pub fn fixed_fees_per_hour(&self) -> Result<Decimal, BillingError> {
        super::money::add(
            "hourly fees",
            super::money::add(
                "hourly fees",
                self.data_disk_per_hour,
                self.snapshot_per_hour,
            )?,
            self.public_ip_per_hour,
        )
    }

    /// Reject what no provider bills: a GPU price of zero or less, negative fees, no GPUs, and
    /// anything beyond [`limits`].
    pub fn validate(&self) -> Result<(), BillingError> {
        if self.price_per_gpu_hour <= Decimal::ZERO {
            return Err(BillingError::InvalidPrice {
                field: "price_per_gpu_hour",
                value: self.price_per_gpu_hour,
            });
        }
        at_most(
            "price_per_gpu_hour",
            self.price_per_gpu_hour,
            limits::MAX_RATE,
        )?;
        if self.gpu_count == 0 {
            return Err(BillingError::InvalidInput {
                field: "gpu_count",
                reason: "an instance has at least one GPU".into(),
            });
        }
        at_most(
            "gpu_count",
            Decimal::from(self.gpu_count),
            Decimal::from(limits::MAX_GPU_COUNT),
        )?;
        if let Some(rate) = self.stopped_billing.rate() {
            rate_in_range("stopped_billing", rate)?;
        }
        if let Some(rate) = self.no_gpu_rate {
            rate_in_range("no_gpu_rate", rate)?;
        }
        rate_in_range("data_disk_per_hour", self.data_disk_per_hour)?;
        rate_in_range("snapshot_per_hour", self.snapshot_per_hour)?;
        rate_in_range("public_ip_per_hour", self.public_ip_per_hour)?;
        rate_in_range("traffic_per_gb", self.traffic_per_gb)?;
        match self.wipe_after_stopped_days {
            Some(0) => {
                return Err(BillingError::InvalidInput {
                    field: "wipe_after_stopped_days",
                    reason: "a wipe deadline is at least one day; leave it empty when the provider keeps stopped instances".into(),
                })
            }
            Some(days) => at_most(
                "wipe_after_stopped_days",
                Decimal::from(days),
                Decimal::from(limits::MAX_WIPE_DAYS),
            )?,
            None => {}
        }
        Ok(())
    }
}

/// A rate or fee: zero or more, at most [`limits::MAX_RATE`].
pub(crate) fn rate_in_range(field: &'static str, value: Decimal) -> Result<(), BillingError> {
    non_negative(field, value)?;
    at_most(field, value, limits::MAX_RATE)
}

pub(crate) fn non_negative(field: &'static str, value: Decimal) -> Result<(), BillingError> {
    if value < Decimal::ZERO {
        Err(BillingError::NegativeAmount { field, value })
    } else {
        Ok(())
    }
}
