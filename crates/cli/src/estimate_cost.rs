//! `leasehold estimate-cost`: price a job before renting, and the split-run comparison.

use std::process::ExitCode;

use clap::Args;
use leasehold_core::billing::{estimate, EstimateInput, Granularity};
use rust_decimal::Decimal;

use crate::ledger::{decimal, optional_decimal};
use crate::output;

#[derive(Args)]
pub struct EstimateCostArgs {
    /// Price of one GPU for one hour.
    #[arg(long, allow_hyphen_values = true)]
    price: String,
    #[arg(long, default_value = "1")]
    count: u32,
    /// Hours of GPU work.
    #[arg(long, allow_hyphen_values = true)]
    hours: String,
    #[arg(long)]
    currency: String,
    /// Data disk / snapshot fees per hour while the instance exists.
    #[arg(long, allow_hyphen_values = true)]
    storage_fee: Option<String>,
    /// Public IP fee per hour.
    #[arg(long, allow_hyphen_values = true)]
    ip_fee: Option<String>,
    /// Expected traffic in GB.
    #[arg(long, allow_hyphen_values = true)]
    traffic_gb: Option<String>,
    /// Price per GB of traffic.
    #[arg(long, allow_hyphen_values = true)]
    traffic_price: Option<String>,
    #[arg(long, value_name = "second|minute|hour", default_value = "second")]
    granularity: String,
    /// Split the work into this many sessions…
    #[arg(long, default_value = "1")]
    runs: u32,
    /// …with this many hours stopped between two sessions.
    #[arg(long, allow_hyphen_values = true)]
    stop_hours: Option<String>,
    /// Storage-only rate of a stopped instance per hour, to compare.
    #[arg(long, allow_hyphen_values = true)]
    stopped_storage_rate: Option<String>,
    /// Other (discounted) rate of a stopped instance per hour, to compare.
    #[arg(long, allow_hyphen_values = true)]
    stopped_rate: Option<String>,
    #[arg(long)]
    json: bool,
}

pub fn run(args: &EstimateCostArgs) -> ExitCode {
    let run = || -> Result<ExitCode, ExitCode> {
        let zero = |v: Option<Decimal>| v.unwrap_or(Decimal::ZERO);
        let input = EstimateInput {
            currency: args.currency.clone(),
            price_per_gpu_hour: decimal("price_per_gpu_hour", &args.price)?,
            gpu_count: args.count,
            hours: decimal("hours", &args.hours)?,
            storage_per_hour: zero(optional_decimal(
                "storage_fee",
                args.storage_fee.as_deref(),
            )?),
            public_ip_per_hour: zero(optional_decimal("ip_fee", args.ip_fee.as_deref())?),
            traffic_gb: zero(optional_decimal("traffic_gb", args.traffic_gb.as_deref())?),
            traffic_per_gb: zero(optional_decimal(
                "traffic_price",
                args.traffic_price.as_deref(),
            )?),
            granularity: args
                .granularity
                .parse::<Granularity>()
                .map_err(|e| output::fail(&e))?,
            runs: args.runs,
            stop_hours_between: zero(optional_decimal("stop_hours", args.stop_hours.as_deref())?),
            stopped_storage_rate: optional_decimal(
                "stopped_storage_rate",
                args.stopped_storage_rate.as_deref(),
            )?,
            stopped_rate: optional_decimal("stopped_rate", args.stopped_rate.as_deref())?,
        };
        let result = estimate(&input).map_err(|e| output::fail(&e))?;
        if args.json {
            return Ok(output::print_json(&result));
        }
        let cur = &result.currency;
        say!(
            "{} h: {} {cur} (compute {}, storage {}, IP {}, traffic {})",
            result.hours,
            result.total,
            result.compute,
            result.storage,
            result.ip,
            result.traffic
        );
        if let Some(split) = &result.split {
            say!(
                "as {} runs of {} h with {} h stopped between:",
                split.runs,
                split.hours_per_run,
                split.stop_hours_between
            );
            for option in &split.options {
                say!(
                    "  stopped billing {:<10} {:>10} {cur}  (×{} of one run)",
                    option.rule,
                    option.total,
                    option.times_continuous
                );
            }
        }
        Ok(ExitCode::SUCCESS)
    };
    run().unwrap_or_else(|code| code)
}
