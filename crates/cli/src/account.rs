//! `leasehold account add|list|remove|sync|accept|power|bid|price-increase|reconcile`: provider accounts — the
//! provider's own view of every instance it bills, next to the ledger.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use chrono::NaiveDate;
use leasehold_core::account::{
    self, reconcile, AccountError, AccountRef, Backoff, Endpoints, PowerVerb,
};
use leasehold_core::stop::{self, StopWait};
use leasehold_core::store::Store;
use leasehold_core::usecase::{self, account::SyncOutcome, Handles};
use leasehold_core::Clock;
use serde_json::json;

use crate::ledger::CLOCK;
use crate::output;
use crate::ssh::runtime;

#[derive(clap::Subcommand)]
pub enum AccountCommand {
    /// Add a provider account; one read-only call checks the key before it is kept.
    Add {
        /// runpod, vast, lambda or autodl.
        provider: String,
        /// Your name for this account (several per provider).
        #[arg(long, default_value = account::DEFAULT_LABEL)]
        label: String,
        /// The environment variable holding the API key (kept in the OS keychain after).
        #[arg(long, value_name = "VAR")]
        api_key_env: String,
        #[arg(long)]
        json: bool,
    },
    /// List the accounts and their last sync.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Remove an account and its key (its instances stay in the ledger).
    Remove {
        /// PROVIDER[:LABEL]
        account: String,
        #[arg(long)]
        json: bool,
    },
    /// Read every instance the provider bills and bring the ledger in line.
    Sync {
        /// PROVIDER[:LABEL]; every account when absent.
        account: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Apply the price change a sync held back (3× or more), from when it was first seen.
    Accept {
        /// The instance whose held price to apply.
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Power an instance on or off, or release it, through its provider's API.
    Power {
        name: String,
        /// on, off or release.
        action: String,
        /// Seconds to wait for the provider to confirm.
        #[arg(long, value_name = "SECONDS", default_value_t = 180)]
        wait: u64,
        /// (on only) Keep asking until a GPU frees up: exit 0 once on, 1 when the time or
        /// spending limit ran out or the provider refused, 2 on bad input.
        #[arg(long)]
        until_gpu: bool,
        /// How long to keep asking (e.g. 90s, 30m, 2h); default 2h.
        #[arg(long = "for", value_name = "DURATION", requires = "until_gpu")]
        for_at_most: Option<String>,
        /// Seconds between tries, MIN or MIN..MAX growing by half each try; default 10..120.
        #[arg(long, value_name = "MIN[..MAX]", requires = "until_gpu")]
        every: Option<String>,
        /// Try only while what it cost since the hunt began plus one hour on stays within this.
        #[arg(long, value_name = "AMOUNT", requires = "until_gpu")]
        max_spend: Option<rust_decimal::Decimal>,
        #[arg(long)]
        json: bool,
    },
    /// Change the bid of a Vast.ai interruptible instance, per GPU-hour as Vast.ai bids; never
    /// above the cap set with `keeper policy NAME --bid-cap`.
    Bid {
        name: String,
        price_per_hour: rust_decimal::Decimal,
        #[arg(long)]
        json: bool,
    },
    /// Accept or reject the host's pending price increase on a Vast.ai instance.
    PriceIncrease {
        name: String,
        /// accept or reject.
        answer: String,
        #[arg(long)]
        json: bool,
    },
    /// The ledger's cost per day beside what the provider charged.
    Reconcile {
        /// A linked instance.
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        name: Option<String>,
        /// Every linked instance.
        #[arg(long)]
        all: bool,
        /// First day (YYYY-MM-DD, UTC); default: the last 7 days up to --to (the app's range too).
        #[arg(long, value_name = "DATE")]
        from: Option<String>,
        /// Last day (YYYY-MM-DD, UTC); default today.
        #[arg(long, value_name = "DATE")]
        to: Option<String>,
        #[arg(long)]
        json: bool,
    },
}

/// A `--from`/`--to` day, within the years the ledger works in (so no arithmetic on it can
/// overflow).
fn parse_date(text: &str) -> Result<NaiveDate, AccountError> {
    NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d")
        .ok()
        .filter(|d| crate::ledger::in_range(d.and_time(chrono::NaiveTime::MIN).and_utc()))
        .ok_or_else(|| AccountError::BadDate(text.chars().take(40).collect()))
}

/// The provider base URLs, or exit 2 naming a refused `LEASEHOLD_<PROVIDER>_API_URL`.
fn endpoints() -> Result<Endpoints, ExitCode> {
    Endpoints::checked_from_env().map_err(|err| output::fail(&err))
}

pub fn run(db: &Path, command: &AccountCommand) -> ExitCode {
    // Every input check comes before the store is opened: bad input leaves no trace.
    match command {
        AccountCommand::Add {
            provider,
            label,
            api_key_env,
            json,
        } => {
            // `account::add` judges the label for the app and the CLI alike; asking its rule
            // here too only keeps a refused label from leaving a new database behind.
            let account = match account::Provider::parse(provider)
                .and_then(|p| Ok((p, account::check_label(label)?)))
            {
                Ok((provider, label)) => AccountRef { provider, label },
                Err(err) => return output::fail(&err),
            };
            let key = match account::key_from_env(api_key_env) {
                Ok(key) => key,
                Err(err) => return output::fail(&err),
            };
            if let Err(code) = endpoints() {
                return code;
            }
            with_store(db, |store| async move {
                let handles = Handles::default();
                let context = handles.context(&store, &CLOCK);
                match usecase::account::add(&context, &account, &key, Some(api_key_env)).await {
                    Ok(report) if *json => output::print_json(&report),
                    Ok(report) => {
                        say!(
                            "added {} account {:?}; {}",
                            report.account.provider.display(),
                            report.account.label,
                            if report.key_in_keychain {
                                "the key is in the OS keychain".to_owned()
                            } else {
                                format!("no keychain here: the key is read from ${api_key_env} at each sync")
                            }
                        );
                        ExitCode::SUCCESS
                    }
                    Err(err) => output::fail(&err),
                }
            })
        }
        AccountCommand::List { json } => with_store(db, |store| async move {
            match account::list(&store).await {
                Ok(accounts) if *json => output::print_json(&json!({ "accounts": accounts })),
                Ok(accounts) => {
                    if accounts.is_empty() {
                        say!("no provider accounts; add one with `leasehold account add PROVIDER --api-key-env VAR`");
                    }
                    for a in accounts {
                        say!(
                            "{}:{}  {} instances  last sync {}{}",
                            a.provider.as_str(),
                            a.label,
                            a.instances,
                            a.last_sync_at
                                .map_or_else(|| "never".to_owned(), |t| t.to_rfc3339()),
                            a.last_error
                                .map(|e| format!("  (failed: {e})"))
                                .unwrap_or_default()
                        );
                    }
                    ExitCode::SUCCESS
                }
                Err(err) => output::fail(&err),
            }
        }),
        AccountCommand::Remove { account, json } => {
            let account = match AccountRef::parse(account) {
                Ok(account) => account,
                Err(err) => return output::fail(&err),
            };
            with_store(db, |store| async move {
                match account::remove(&store, &account).await {
                    Ok(report) if *json => output::print_json(&json!({
                        "removed": {"provider": account.provider, "label": account.label},
                        "key_forgotten": report.key_forgotten,
                        "keychain_error": report.keychain_error,
                    })),
                    Ok(report) => {
                        say!("removed {}:{}", account.provider.as_str(), account.label);
                        match &report.keychain_error {
                            None => say!("its key is no longer in the OS keychain"),
                            Some(why) => say!(
                                "the OS keychain could not forget its key ({why}); remove it there by hand"
                            ),
                        }
                        ExitCode::SUCCESS
                    }
                    Err(err) => output::fail(&err),
                }
            })
        }
        AccountCommand::Sync { account, json } => {
            let only = match account.as_deref().map(AccountRef::parse).transpose() {
                Ok(only) => only,
                Err(err) => return output::fail(&err),
            };
            if let Err(code) = endpoints() {
                return code;
            }
            with_store(db, |store| async move {
                run_sync(&store, only.as_ref(), *json).await
            })
        }
        AccountCommand::Accept { name, json } => with_store(db, |store| async move {
            match account::held::accept_held_price(&store, name, CLOCK.now()).await {
                Ok(report) if *json => output::print_json(&report),
                Ok(report) => {
                    say!(
                        "{}: now {} {}/h ({} GPUs, was {}), from {}",
                        report.instance,
                        report.to,
                        report.currency,
                        report.gpu_count,
                        report.from,
                        report.applied_at.to_rfc3339()
                    );
                    ExitCode::SUCCESS
                }
                Err(err) => output::fail(&err),
            }
        }),
        AccountCommand::Power {
            name,
            action,
            wait,
            until_gpu,
            for_at_most,
            every,
            max_spend,
            json,
        } => {
            let Some(verb) = PowerVerb::parse(action.trim()) else {
                return output::bad_input(format!(
                    "{action:?} is not a power action; use on, off or release"
                ));
            };
            if *until_gpu {
                if verb != PowerVerb::On {
                    return output::bad_input("--until-gpu goes with on only");
                }
                let args = crate::keeper::HuntArgs {
                    for_at_most: for_at_most.as_deref(),
                    every: every.as_deref(),
                    max_spend: *max_spend,
                    wait: *wait,
                    json: *json,
                };
                return crate::keeper::hunt(db, name, &args);
            }
            let endpoints = match endpoints() {
                Ok(endpoints) => endpoints,
                Err(code) => return code,
            };
            with_store(db, |store| async move {
                let wait = StopWait {
                    limit: Duration::from_secs((*wait).max(1)),
                    every: Duration::from_secs(2),
                    ..StopWait::default()
                };
                match stop::power(
                    &store,
                    name,
                    verb,
                    &endpoints,
                    Backoff::default(),
                    wait,
                    &CLOCK,
                )
                .await
                {
                    Ok(report) if *json => output::print_json(&report),
                    Ok(report) => {
                        say!(
                            "{}: {} confirmed by {} after {} s{}",
                            report.instance,
                            verb_words(verb),
                            report.provider.display(),
                            report.waited_seconds,
                            report.recorded_at.map_or_else(
                                || "; the ledger already said so".to_owned(),
                                |t| format!("; recorded at {}", t.to_rfc3339())
                            )
                        );
                        ExitCode::SUCCESS
                    }
                    Err(err) => output::fail(&err),
                }
            })
        }
        AccountCommand::Bid {
            name,
            price_per_hour,
            json,
        } => crate::keeper::bid(db, name, *price_per_hour, *json),
        AccountCommand::PriceIncrease { name, answer, json } => {
            let accept = match answer.trim() {
                "accept" => true,
                "reject" => false,
                _ => {
                    return output::bad_input(format!(
                        "{answer:?} is not an answer; use accept or reject"
                    ))
                }
            };
            crate::keeper::price_increase(db, name, accept, *json)
        }
        AccountCommand::Reconcile {
            name,
            all: _,
            from,
            to,
            json,
        } => {
            let today = CLOCK.now().date_naive();
            let range = (|| -> Result<(NaiveDate, NaiveDate), AccountError> {
                let to = to.as_deref().map(parse_date).transpose()?.unwrap_or(today);
                let from = from
                    .as_deref()
                    .map(parse_date)
                    .transpose()?
                    .unwrap_or_else(|| reconcile::last_days(to, 7).0);
                if to < from {
                    return Err(AccountError::BadRange {
                        from: from.to_string(),
                        to: to.to_string(),
                    });
                }
                Ok((from, to))
            })();
            let (from, to) = match range {
                Ok(range) => range,
                Err(err) => return output::fail(&err),
            };
            if let Err(code) = endpoints() {
                return code;
            }
            with_store(db, |store| async move {
                let handles = Handles::default();
                let context = handles.context(&store, &CLOCK);
                match usecase::account::reconcile_between(&context, name.as_deref(), from, to).await
                {
                    Ok(rows) if *json => output::print_json(&json!({ "rows": rows })),
                    Ok(rows) => {
                        for r in rows {
                            say!(
                                "{}  {}  ledger {} {}  provider {}  difference {}  {}",
                                r.day,
                                r.instance,
                                r.ledger,
                                r.currency,
                                r.provider.map_or_else(|| "—".to_owned(), |p| p.to_string()),
                                r.difference
                                    .map_or_else(|| "—".to_owned(), |d| d.to_string()),
                                r.reason
                            );
                        }
                        ExitCode::SUCCESS
                    }
                    Err(err) => output::fail(&err),
                }
            })
        }
    }
}

fn verb_words(verb: PowerVerb) -> &'static str {
    match verb {
        PowerVerb::On => "power-on",
        PowerVerb::Off => "power-off",
        PowerVerb::Release => "release",
    }
}

/// The accounts synced, in order; one that failed is said on stderr and listed with its error,
/// and the exit is 1. Asked for one account, its failure is the answer (`usecase::account::sync`).
async fn run_sync(store: &Store, only: Option<&AccountRef>, json: bool) -> ExitCode {
    let handles = Handles::default();
    let context = handles.context(store, &CLOCK);
    let results = match usecase::account::sync(&context, only).await {
        Ok(SyncOutcome(results)) => results,
        Err(err) => return output::fail(&err),
    };
    let mut failed = false;
    let mut accounts = Vec::new();
    for result in results {
        match result {
            Ok(report) => {
                if !json {
                    say!(
                        "{}:{}  imported {}  events {}  unchanged {}",
                        report.provider.as_str(),
                        report.label,
                        report.imported.len(),
                        report.events.len(),
                        report.unchanged
                    );
                    for name in &report.imported {
                        say!("  new: {name}");
                    }
                    for e in &report.events {
                        say!("  {} {} at {}", e.instance, e.kind, e.at.to_rfc3339());
                    }
                    for h in &report.held {
                        say!(
                            "  held: {} {} → {} {}/h; apply it with `leasehold account accept {:?}`",
                            h.instance,
                            h.from,
                            h.to,
                            h.currency,
                            h.instance
                        );
                    }
                    for w in &report.warnings {
                        say!("  warning: {w}");
                    }
                }
                accounts.push(serde_json::to_value(&report).unwrap_or_default());
            }
            Err((account, err)) => {
                failed = true;
                esay!(
                    "error: {}:{}: {err} [{}]",
                    account.provider.as_str(),
                    account.label,
                    leasehold_core::Coded::code(&err)
                );
                accounts.push(json!({
                    "provider": account.provider,
                    "label": account.label,
                    "imported": [],
                    "events": [],
                    "unchanged": 0,
                    "warnings": [],
                    "held": [],
                    "error": leasehold_core::ApiError::from(err),
                }));
            }
        }
    }
    if json {
        output::print_json(&json!({ "accounts": accounts }));
    }
    if failed {
        ExitCode::from(output::EXIT_FAILURE)
    } else {
        ExitCode::SUCCESS
    }
}

fn with_store<F, Fut>(db: &Path, body: F) -> ExitCode
where
    F: FnOnce(Store) -> Fut,
    Fut: std::future::Future<Output = ExitCode>,
{
    runtime().block_on(async {
        let store = match Store::open(db).await {
            Ok(store) => store,
            Err(err) => return output::fail(&err),
        };
        let keep = store.clone();
        let code = body(store).await;
        keep.close().await;
        code
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// `account reconcile --from/--to`: any day typed is refused or safe to step a week
        /// back from (the default `--from`) and a day forward from (a day's end).
        #[test]
        fn a_typed_day_is_refused_or_safe(year in -300_000i32..300_000, month in 0u32..14, day in 0u32..33) {
            for typed in [format!("{year}-{month:02}-{day:02}"), format!("{year:+}-{month:02}-{day:02}")] {
                if let Ok(date) = parse_date(&typed) {
                    prop_assert!(date.checked_sub_signed(chrono::Duration::days(7)).is_some());
                    prop_assert!(date.checked_add_signed(chrono::Duration::days(2)).is_some());
                }
            }
        }
    }

    #[test]
    fn the_day_that_panicked_is_refused() {
        assert!(parse_date("+262142-12-30").is_err());
        assert!(parse_date("2026-12-01").is_ok());
    }
}
