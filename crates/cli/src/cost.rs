//! `leasehold cost NAME` and `leasehold forecast NAME --until TIME`: the bill so far and the bill
//! if nothing changes.

use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use leasehold_core::billing::{ledger, CostReport};
use leasehold_core::monitor::history::{self, BusyHours};
use serde::Serialize;

use crate::ledger::{block_on, open_existing, parse_time, time_or_now};
use crate::output;

#[derive(Args)]
pub struct CostArgs {
    name: String,
    /// The moment to price (RFC 3339); default now.
    #[arg(long)]
    at: Option<String>,
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct ForecastArgs {
    name: String,
    /// "If I keep it until…" (RFC 3339).
    #[arg(long)]
    until: String,
    /// Now (RFC 3339); default the wall clock.
    #[arg(long)]
    at: Option<String>,
    #[arg(long)]
    json: bool,
}

/// `cost --json`: the bill's fields as they always were, plus what the GPUs did.
#[derive(Serialize)]
struct CostOutput<'a> {
    #[serde(flatten)]
    report: &'a CostReport,
    /// GPU-busy hours and the idle time's cost from the monitor's minute history; `null` when
    /// the instance's GPUs were never watched.
    gpu_busy: Option<&'a BusyHours>,
}

pub fn run_cost(db: &Path, args: &CostArgs) -> ExitCode {
    let run = || -> Result<ExitCode, ExitCode> {
        let now = time_or_now("--at", args.at.as_deref())?;
        let (report, busy) = block_on(async {
            let store = open_existing(db, &args.name).await?;
            let result = match ledger::cost(&store, &args.name, now).await {
                Ok(report) => {
                    let busy = history::busy_hours_for(&store, &report).await;
                    Ok((report, busy))
                }
                Err(err) => Err(err),
            };
            store.close().await;
            result
        })?;
        let busy = busy.map_err(|err| output::fail(&err))?;
        let watched = busy.first_minute.is_some().then_some(&busy);
        if args.json {
            return Ok(output::print_json(&CostOutput {
                report: &report,
                gpu_busy: watched,
            }));
        }
        print_report(&report);
        print_busy_hours(watched);
        Ok(ExitCode::SUCCESS)
    };
    run().unwrap_or_else(|code| code)
}

pub fn run_forecast(db: &Path, args: &ForecastArgs) -> ExitCode {
    let run = || -> Result<ExitCode, ExitCode> {
        let now = time_or_now("--at", args.at.as_deref())?;
        let until = parse_time("--until", &args.until)?;
        let forecast = block_on(async {
            let store = open_existing(db, &args.name).await?;
            let result = ledger::forecast(&store, &args.name, now, until).await;
            store.close().await;
            result
        })?;
        if args.json {
            return Ok(output::print_json(&forecast));
        }
        say!(
            "{}: {} {} now, {} {} at {} ({} more)",
            forecast.name,
            forecast.total_now,
            forecast.currency,
            forecast.total_at_until,
            forecast.currency,
            forecast.until.to_rfc3339(),
            forecast.additional
        );
        Ok(ExitCode::SUCCESS)
    };
    run().unwrap_or_else(|code| code)
}

fn print_report(report: &CostReport) {
    let cur = &report.currency;
    let b = &report.breakdown;
    say!(
        "{}: {} {} as of {}",
        report.name,
        report.total,
        cur,
        report.as_of.to_rfc3339()
    );
    say!(
        "  compute {}  no-GPU {}  stopped {}  storage {}  IP {}  traffic {}",
        b.compute,
        b.no_gpu,
        b.stopped,
        b.storage,
        b.ip,
        b.traffic
    );
    say!("  burning {} {cur}/h now", report.burn_rate_per_hour);
    if let Some(budget) = &report.budget {
        say!(
            "  budget {} {cur}: {} % used{}",
            budget.amount,
            budget.percent_used,
            budget
                .threshold_reached
                .map_or(String::new(), |t| format!(" (past {t} %)"))
        );
    }
    if let Some(wipe_at) = report.wipe_at {
        say!("  wiped at {} if it stays stopped", wipe_at.to_rfc3339());
    }
}

fn print_busy_hours(busy: Option<&BusyHours>) {
    let Some(busy) = busy else {
        say!("  GPU-busy hours: none recorded (the GPUs were never watched)");
        return;
    };
    let cur = &busy.currency;
    say!(
        "  GPUs busy {} h of {} h watched ({} of {} GPU-hours working)",
        busy.busy_hours,
        busy.observed_hours,
        busy.gpu_busy_hours,
        busy.gpu_hours
    );
    say!(
        "  idle time cost {} {cur} (every GPU idle), {} {cur} (idle GPUs' share)",
        busy.idle_cost,
        busy.idle_gpu_cost
    );
}
