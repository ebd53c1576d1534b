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

/// The years a time typed on the command line may fall in: wide for any rental, narrow enough
/// that no date arithmetic on it (a week back, a forecast ahead, a month of days) overflows.
const FIRST_YEAR: i32 = 2000;
const LAST_YEAR: i32 = 2200;

/// Whether `at` is within the years the CLI accepts ([`FIRST_YEAR`]–[`LAST_YEAR`]).
pub fn in_range(at: DateTime<Utc>) -> bool {
    use chrono::Datelike;
    (FIRST_YEAR..=LAST_YEAR).contains(&at.year())
}

pub fn parse_time(flag: &str, text: &str) -> Result<DateTime<Utc>, ExitCode> {
    let at = DateTime::parse_from_rfc3339(text.trim())
        .map(|t| t.with_timezone(&Utc))
        .map_err(|err| {
            output::bad_input(format!(
                "{flag} {text:?} is not an RFC 3339 time such as 2025-03-01T09:30:00+08:00 ({err})"
            ))
        })?;
    if !in_range(at) {
        return Err(output::bad_input(format!(
            "{flag} {text:?} is out of range: use a time between the years {FIRST_YEAR} and {LAST_YEAR}"
        )));
    }
    Ok(at)
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever is typed after a time flag: refused (exit 2), or a time whose arithmetic a
        /// command may do (ten years either way) cannot overflow. Never a panic.
        #[test]
        fn a_typed_time_is_refused_or_safe(
            year in -300_000i32..300_000,
            month in 0u32..14,
            day in 0u32..33,
            hour in 0u32..25,
            offset in -30i32..30,
        ) {
            let text = format!("{year:+07}-{month:02}-{day:02}T{hour:02}:00:00{offset:+03}:00");
            for typed in [text.clone(), text.trim_start_matches('+').to_owned()] {
                if let Ok(at) = parse_time("--at", &typed) {
                    prop_assert!(in_range(at));
                    prop_assert!(at.checked_add_signed(chrono::Duration::days(3650)).is_some());
                    prop_assert!(at.checked_sub_signed(chrono::Duration::days(3650)).is_some());
                }
            }
        }

        #[test]
        fn any_text_after_a_time_flag_never_panics(text in "\\PC{0,40}") {
            let _ = parse_time("--until", &text);
        }
    }

    #[test]
    fn far_times_are_refused() {
        assert!(parse_time("--at", "9999-12-31T23:59:59Z").is_err());
        assert!(parse_time("--at", "1970-01-01T00:00:00Z").is_err());
        assert!(parse_time("--at", "2026-12-01T08:00:00+08:00").is_ok());
    }
}
