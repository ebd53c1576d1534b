//! `leasehold rent-vs-buy`: the month in which buying the card pays for itself.

use std::process::ExitCode;

use clap::Args;
use leasehold_core::billing::{rent_vs_buy, RentVsBuyInput};

use crate::ledger::decimal;
use crate::output;

#[derive(Args)]
pub struct RentVsBuyArgs {
    /// What buying the card (or machine) costs.
    #[arg(long, allow_hyphen_values = true)]
    card_price: String,
    /// Power draw under load, in watts.
    #[arg(long, allow_hyphen_values = true)]
    power_watts: String,
    /// Electricity price per kWh.
    #[arg(long, allow_hyphen_values = true)]
    electricity_price: String,
    /// Rental price per hour for the same hardware.
    #[arg(long, allow_hyphen_values = true)]
    rent_price: String,
    /// Hours of use per day.
    #[arg(long, allow_hyphen_values = true)]
    hours_per_day: String,
    /// Months of use.
    #[arg(long)]
    months: u32,
    #[arg(long)]
    currency: String,
    #[arg(long)]
    json: bool,
}

pub fn run(args: &RentVsBuyArgs) -> ExitCode {
    let run = || -> Result<ExitCode, ExitCode> {
        let input = RentVsBuyInput {
            currency: args.currency.clone(),
            card_price: decimal("card_price", &args.card_price)?,
            power_watts: decimal("power_watts", &args.power_watts)?,
            electricity_per_kwh: decimal("electricity_price", &args.electricity_price)?,
            rent_per_hour: decimal("rent_price", &args.rent_price)?,
            hours_per_day: decimal("hours_per_day", &args.hours_per_day)?,
            months: args.months,
        };
        let result = rent_vs_buy(&input).map_err(|e| output::fail(&e))?;
        if args.json {
            return Ok(output::print_json(&result));
        }
        let cur = &result.currency;
        say!(
            "renting: {} {cur}/month; owning: {} {cur}/month of electricity after the card",
            result.rent_per_month,
            result.power_per_month
        );
        match result.break_even_month {
            Some(month) => say!("buying pays for itself in month {month}"),
            None => {
                say!("buying never pays for itself: electricity alone costs as much as renting");
            }
        }
        say!(
            "over {} months: renting {} {cur}, buying {} {cur} → {} is cheaper",
            result.months,
            result.rent_total,
            result.buy_total,
            result.cheaper
        );
        Ok(ExitCode::SUCCESS)
    };
    run().unwrap_or_else(|code| code)
}
