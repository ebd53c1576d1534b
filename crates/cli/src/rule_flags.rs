//! The billing-rule flags shared by `instance add` and `instance rules`.

use std::process::ExitCode;

use clap::Args;
use leasehold_core::billing::{BillingRules, BillingStart, Granularity, StoppedBilling};

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
    /// Data disk fee per hour.
    #[arg(long, allow_hyphen_values = true)]
    disk_fee: Option<String>,
    /// Snapshot fee per hour.
    #[arg(long, allow_hyphen_values = true)]
    snapshot_fee: Option<String>,
    /// Public IP fee per hour.
    #[arg(long, allow_hyphen_values = true)]
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
        if let Some(fee) = optional_decimal("data_disk_per_hour", self.disk_fee.as_deref())? {
            rules.data_disk_per_hour = fee;
        }
        if let Some(fee) = optional_decimal("snapshot_per_hour", self.snapshot_fee.as_deref())? {
            rules.snapshot_per_hour = fee;
        }
        if let Some(fee) = optional_decimal("public_ip_per_hour", self.ip_fee.as_deref())? {
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
