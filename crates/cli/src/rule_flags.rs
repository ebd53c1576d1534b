//! The billing-rule flags shared by `instance add` and `instance rules`.

use std::process::ExitCode;

use clap::Args;
use leasehold_core::billing::{
    BillingRules, BillingStart, Granularity, HourlyExtra, QuotedFee, StoppedBilling,
};

use crate::ledger::{decimal, optional_decimal};
use crate::output;

/// Billing rule fields. Amounts are per hour in the instance's currency unless named otherwise.
#[derive(Args, Default)]
pub struct RuleFlags {
    /// Price of one GPU for one hour (multiplied by --count).
    #[arg(long, allow_hyphen_values = true)]
    pub price: Option<String>,
    /// Number of GPUs.
    #[arg(long, allow_hyphen_values = true)]
    count: Option<String>,
    /// When billing starts: at creation or at the first power-on.
    #[arg(long, value_name = "created|running")]
    billing_starts: Option<String>,
    /// What a stopped instance costs per hour: none, storage:RATE or rate:RATE.
    #[arg(
        long,
        value_name = "none|storage:RATE|rate:RATE",
        allow_hyphen_values = true
    )]
    stopped_billing: Option<String>,
    /// Hourly rate in no-GPU mode (无卡模式); without it `no-gpu` is refused.
    #[arg(long, allow_hyphen_values = true)]
    no_gpu_rate: Option<String>,
    /// Data disk fee as the provider quotes it: per hour (`0.04`), or with a unit
    /// (`1/day`, `30/month`, `0.005/gb-day`, `0.07/gb-month`; per GB needs --disk-size-gb).
    #[arg(long, value_name = "RATE[/UNIT]", allow_hyphen_values = true)]
    disk_fee: Option<String>,
    /// Size of the data disk in GB, for a --disk-fee quoted per GB.
    #[arg(long, value_name = "GB", allow_hyphen_values = true)]
    disk_size_gb: Option<String>,
    /// Snapshot fee, quoted like --disk-fee (per GB needs --snapshot-size-gb).
    #[arg(long, value_name = "RATE[/UNIT]", allow_hyphen_values = true)]
    snapshot_fee: Option<String>,
    /// Size of the snapshot in GB, for a --snapshot-fee quoted per GB.
    #[arg(long, value_name = "GB", allow_hyphen_values = true)]
    snapshot_size_gb: Option<String>,
    /// Public IP fee: per hour, or `RATE/day`, `RATE/month`.
    #[arg(long, value_name = "RATE[/UNIT]", allow_hyphen_values = true)]
    ip_fee: Option<String>,
    /// Price per GB of traffic.
    #[arg(long, allow_hyphen_values = true)]
    traffic_price: Option<String>,
    /// Billing unit, each billed stretch rounded up to it.
    #[arg(long, value_name = "second|minute|hour")]
    granularity: Option<String>,
    /// Days a stopped instance is kept before the provider wipes it (0 = never).
    #[arg(long, allow_hyphen_values = true)]
    wipe_after_days: Option<String>,
}

/// The hourly figure of a fee typed as `RATE[/UNIT]`: core reads the quote and converts it.
fn hourly(
    extra: HourlyExtra,
    text: Option<&str>,
    size_gb: Option<rust_decimal::Decimal>,
) -> Result<Option<rust_decimal::Decimal>, ExitCode> {
    let Some(text) = text else { return Ok(None) };
    QuotedFee::parse(extra.field(), text, size_gb)
        .and_then(|quote| quote.per_hour(extra))
        .map(Some)
        .map_err(|err| output::fail(&err))
}

impl RuleFlags {
    /// `base` with every given flag applied.
    pub fn apply(&self, mut rules: BillingRules) -> Result<BillingRules, ExitCode> {
        if let Some(price) = &self.price {
            rules.price_per_gpu_hour = decimal("price_per_gpu_hour", price)?;
        }
        if let Some(count) = &self.count {
            rules.gpu_count = count.trim().parse().map_err(|_| {
                output::bad_input(format!(
                    "--count {count:?} is not a whole number of GPUs (1 or more)"
                ))
            })?;
        }
        if let Some(starts) = &self.billing_starts {
            rules.billing_starts = starts
                .parse::<BillingStart>()
                .map_err(|e| output::fail(&e))?;
        }
        if let Some(stopped) = &self.stopped_billing {
            rules.stopped_billing = stopped
                .parse::<StoppedBilling>()
                .map_err(|e| output::fail(&e))?;
        }
        if let Some(rate) = optional_decimal("no_gpu_rate", self.no_gpu_rate.as_deref())? {
            rules.no_gpu_rate = Some(rate);
        }
        let disk_size = optional_decimal("data_disk_size_gb", self.disk_size_gb.as_deref())?;
        if let Some(fee) = hourly(HourlyExtra::DataDisk, self.disk_fee.as_deref(), disk_size)? {
            rules.data_disk_per_hour = fee;
        }
        let snapshot_size = optional_decimal("snapshot_size_gb", self.snapshot_size_gb.as_deref())?;
        let snapshot = self.snapshot_fee.as_deref();
        if let Some(fee) = hourly(HourlyExtra::Snapshot, snapshot, snapshot_size)? {
            rules.snapshot_per_hour = fee;
        }
        if let Some(fee) = hourly(HourlyExtra::PublicIp, self.ip_fee.as_deref(), None)? {
            rules.public_ip_per_hour = fee;
        }
        if let Some(price) = optional_decimal("traffic_per_gb", self.traffic_price.as_deref())? {
            rules.traffic_per_gb = price;
        }
        if let Some(granularity) = &self.granularity {
            rules.granularity = granularity
                .parse::<Granularity>()
                .map_err(|e| output::fail(&e))?;
        }
        if let Some(days) = &self.wipe_after_days {
            let days: u32 = days.trim().parse().map_err(|_| {
                output::bad_input(format!(
                    "--wipe-after-days {days:?} is not a whole number of days (0 = never)"
                ))
            })?;
            rules.wipe_after_stopped_days = (days > 0).then_some(days);
        }
        Ok(rules)
    }
}
