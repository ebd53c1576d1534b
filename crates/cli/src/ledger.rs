//! What the ledger commands (`instance`, `cost`, `forecast`, `presets`) share: the clock, the
//! store, and reading decimals and times from the command line.

use std::future::Future;
use std::path::Path;
use std::process::ExitCode;

use chrono::{DateTime, Utc};
use leasehold_core::billing::{presets, rules::parse_decimal, BillingError, MachineKind};
use leasehold_core::store::Store;
use leasehold_core::{Clock, SystemClock};
use rust_decimal::Decimal;

use crate::output;

/// The CLI's clock: every command that needs "now" reads it here (or takes `--at`).
pub const CLOCK: SystemClock = SystemClock;

/// `--at TIME` (RFC 3339), or [`CLOCK`] when absent.
pub fn time_or_now(flag: &str, text: Option<&str>) -> Result<DateTime<Utc>, ExitCode> {
    match text {
        None => Ok(CLOCK.now()),
        Some(text) => parse_time(flag, text),
    }
}

pub fn parse_time(flag: &str, text: &str) -> Result<DateTime<Utc>, ExitCode> {
    DateTime::parse_from_rfc3339(text.trim())
        .map(|t| t.with_timezone(&Utc))
        .map_err(|err| {
            output::bad_input(format!(
                "{flag} {text:?} is not an RFC 3339 time such as 2025-03-01T09:30:00+08:00 ({err})"
            ))
        })
}

pub fn decimal(field: &'static str, text: &str) -> Result<Decimal, ExitCode> {
    parse_decimal(field, text).map_err(|err| output::fail(&err))
}

pub fn optional_decimal(
    field: &'static str,
    text: Option<&str>,
) -> Result<Option<Decimal>, ExitCode> {
    text.map(|t| decimal(field, t)).transpose()
}

/// Run one async ledger call on a small runtime, reporting its error with the exit-code contract.
pub fn block_on<T, F>(work: F) -> Result<T, ExitCode>
where
    F: Future<Output = Result<T, BillingError>>,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| {
            eprintln!("error: could not start the async runtime: {err}");
            ExitCode::from(output::EXIT_FAILURE)
        })?;
    runtime.block_on(work).map_err(|err| output::fail(&err))
}

/// [`block_on`] for a call whose error is another module's (`status`, …).
pub fn block_on_coded<T, E, F>(work: F) -> Result<T, ExitCode>
where
    E: leasehold_core::Coded,
    F: Future<Output = Result<T, E>>,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| {
            eprintln!("error: could not start the async runtime: {err}");
            ExitCode::from(output::EXIT_FAILURE)
        })?;
    runtime.block_on(work).map_err(|err| output::fail(&err))
}

/// Open (creating when missing) the database for a command that writes.
pub async fn open_for_write(path: &Path) -> Result<Store, BillingError> {
    Ok(Store::open(path).await?)
}

/// Open the database for a command that needs an existing instance. A missing file means no
/// instance exists yet; it is not created, so a mistyped `--db` leaves nothing behind.
pub async fn open_existing(path: &Path, name: &str) -> Result<Store, BillingError> {
    if !path.exists() {
        return Err(BillingError::UnknownInstance {
            name: name.to_owned(),
        });
    }
    Ok(Store::open(path).await?)
}

/// `leasehold presets`: what each provider preset pre-fills.
pub fn run_presets(json: bool) -> ExitCode {
    let all = presets();
    if json {
        return output::print_json(&all);
    }
    for p in &all {
        say!(
            "{:<9} {:<8} billing from {:<8} stopped: {:<8} per {:<6} wipe after: {:<8} no-GPU mode: {:<3} machine: {}",
            p.key.as_str(),
            p.display_name,
            p.billing_starts.as_str(),
            p.stopped_billing_kind,
            p.granularity.as_str(),
            p.wipe_after_stopped_days
                .map_or("never".to_owned(), |d| format!("{d} days")),
            if p.no_gpu_mode { "yes" } else { "no" },
            match p.machine {
                Some(MachineKind::Container) => "container",
                Some(MachineKind::VirtualMachine) => "virtual machine",
                None => "either",
            },
        );
    }
    ExitCode::SUCCESS
}
