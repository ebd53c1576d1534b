//! `leasehold team …`: share this laptop's ledger with a team through PostgreSQL.
//!
//! The password comes from `--password-env VAR` once (then the OS keychain keeps it), or, like
//! any PostgreSQL client, from `PGPASSWORD` / `~/.pgpass`. Any failure to reach or log in to the
//! server exits 1 with the local ledger untouched.

use std::future::Future;
use std::path::Path;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use leasehold_core::ssh::Secret;
use leasehold_core::store::Store;
use leasehold_core::team::{self, ConnectRequest, TeamError, TeamLink};
use leasehold_core::Clock;

use crate::ledger::CLOCK;
use crate::output;

#[derive(Subcommand)]
pub enum TeamCommand {
    /// Link this database to a team's PostgreSQL database (creating the team when new).
    Connect(ConnectArgs),
    /// Push what this laptop recorded, pull what the others did, list the conflicts.
    Sync {
        #[arg(long)]
        json: bool,
    },
    /// Members, running instances with their burn rate, month-to-date spend, budgets.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// Set the team's monthly budget in one currency (warnings at 50, 80 and 100 %).
    Budget {
        /// The amount per month.
        amount: String,
        #[arg(long)]
        currency: String,
    },
    /// Who is told about any member's instance left running (idle GPUs while it bills), and
    /// after how many idle minutes. The instance's own member is always told. Without options:
    /// show the current setting.
    Alerts {
        /// Members to tell, comma-separated (an empty value: only each instance's own member).
        #[arg(long, value_name = "NAME[,NAME…]", value_delimiter = ',')]
        to: Option<Vec<String>>,
        /// Idle minutes before an instance counts as left running (5–1440; default 30).
        #[arg(long, value_name = "N")]
        after_minutes: Option<u32>,
        #[arg(long)]
        json: bool,
    },
    /// Share this laptop's last Verify result of each instance with the team (on), or stop (off;
    /// the default). Only when each check ran and its error/warning counts and finding names go.
    ShareVerify {
        #[arg(value_parser = ["on", "off"])]
        choice: String,
    },
    /// The conflicts in this laptop's working copy now (no sync): events the billing rules
    /// refuse in the merged ledger, shared names kept under another name, unreadable rows.
    Conflicts {
        #[arg(long)]
        json: bool,
    },
    /// Settle a refused event's conflict: keep EVENT_UID or the event standing in its place
    /// (`--keep` names the one to keep); the other leaves every bill, on every laptop from the
    /// next sync. Prints the conflicts left.
    Resolve {
        /// The refused event (`event_uid` in `team conflicts --json`).
        event_uid: String,
        /// The event to keep: EVENT_UID itself or `standing.event_uid`.
        #[arg(long)]
        keep: String,
        #[arg(long)]
        json: bool,
    },
    /// Dismiss a notice a pull left on this laptop (a shared name kept under another name, a
    /// row this version cannot read) once read: kept, no longer listed. Prints the conflicts left.
    Dismiss {
        /// The notice (`key` in `team conflicts --json`).
        key: String,
        #[arg(long)]
        json: bool,
    },
    /// Unlink this database and forget the kept password; the ledger stays.
    Disconnect {
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args)]
pub struct ConnectArgs {
    /// postgres://USER@HOST:PORT/DATABASE
    #[arg(long)]
    url: String,
    /// Your name in the team.
    #[arg(long)]
    member: String,
    /// The team's name.
    #[arg(long)]
    team: String,
    /// Read the password from this environment variable (then kept in the keychain).
    #[arg(long, value_name = "VAR")]
    password_env: Option<String>,
    /// Trust this CA (PEM) for the server's certificate besides the system's: a lab's own CA.
    #[arg(long, value_name = "PATH")]
    ca_file: Option<std::path::PathBuf>,
    #[arg(long)]
    json: bool,
}

fn run_async<T>(work: impl Future<Output = Result<T, TeamError>>) -> Result<T, ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| {
            eprintln!("error: could not start the async runtime: {err}");
            ExitCode::from(output::EXIT_FAILURE)
        })?;
    runtime.block_on(work).map_err(|err| output::fail(&err))
}

async fn open(path: &Path) -> Result<Store, TeamError> {
    Ok(Store::open(path).await?)
}

/// Open a database that must exist already (syncing a database that was never created would
/// create an empty one, and a mistyped `--db` would leave it behind).
async fn open_linked_db(path: &Path) -> Result<Store, TeamError> {
    if !path.exists() {
        return Err(TeamError::NotConnected);
    }
    open(path).await
}

fn print_link(link: &TeamLink, json: bool) -> ExitCode {
    if json {
        return output::print_json(link);
    }
    say!(
        "connected to team {} as {} ({})",
        link.team,
        link.member,
        link.url
    );
    if !link.password_in_keychain {
        say!("the password is not in the keychain: later syncs read PGPASSWORD or ~/.pgpass");
    }
    warn_about_tls(link.tls_warning.as_deref());
    ExitCode::SUCCESS
}

/// A link whose URL asked for less than verified TLS is named on stderr at every use.
fn warn_about_tls(code: Option<&str>) {
    match code {
        Some("team.tls_off") => eprintln!(
            "warning: the connection to the team database is not encrypted (sslmode=disable); \
             this is allowed only for a server on this computer"
        ),
        Some(_) => eprintln!(
            "warning: the team database's certificate is not checked (sslmode=require, prefer \
             or allow): someone on the network could pose as the server; remove sslmode from \
             the URL (and give the lab's CA with --ca-file)"
        ),
        None => {}
    }
}

pub fn run(db: &Path, command: &TeamCommand) -> ExitCode {
    let outcome = match command {
        TeamCommand::Connect(args) => connect(db, args),
        TeamCommand::Sync { json } => sync(db, *json),
        TeamCommand::Status { json } => status(db, *json),
        TeamCommand::Budget { amount, currency } => budget(db, amount, currency),
        TeamCommand::Alerts {
            to,
            after_minutes,
            json,
        } => alerts(db, to.as_deref(), *after_minutes, *json),
        TeamCommand::ShareVerify { choice } => share_verify(db, choice == "on"),
        TeamCommand::Conflicts { json } => conflicts(db, Settle::Nothing, *json),
        TeamCommand::Resolve {
            event_uid,
            keep,
            json,
        } => conflicts(db, Settle::Keep { event_uid, keep }, *json),
        TeamCommand::Dismiss { key, json } => conflicts(db, Settle::Dismiss { key }, *json),
        TeamCommand::Disconnect { json } => disconnect(db, *json),
    };
    outcome.unwrap_or_else(|code| code)
}

fn connect(db: &Path, args: &ConnectArgs) -> Result<ExitCode, ExitCode> {
    let password = match &args.password_env {
        None => None,
        Some(var) => match std::env::var(var) {
            Ok(value) => Some(Secret::new(value)),
            Err(_) => {
                return Err(output::fail(&TeamError::PasswordEnvMissing {
                    var: var.clone(),
                }));
            }
        },
    };
    let url = match &args.ca_file {
        Some(path) => {
            team::address::with_ca_file(&args.url, path).map_err(|err| output::fail(&err))?
        }
        None => args.url.clone(),
    };
    let request = ConnectRequest {
        url,
        member: args.member.clone(),
        team: args.team.clone(),
        password,
    };
    let link = run_async(async {
        let store = open(db).await?;
        let linked = team::connect(&store, request, CLOCK.now()).await;
        store.close().await;
        linked
    })?;
    Ok(print_link(&link, args.json))
}

fn sync(db: &Path, json: bool) -> Result<ExitCode, ExitCode> {
    let report = run_async(async {
        let store = open_linked_db(db).await?;
        let report = team::sync(&store, CLOCK.now()).await;
        store.close().await;
        report
    })?;
    if json {
        return Ok(output::print_json(&report));
    }
    say!("pushed {} events, pulled {}", report.pushed, report.pulled);
    for conflict in &report.conflicts {
        say!("conflict: {}", conflict.message);
    }
    Ok(ExitCode::SUCCESS)
}

fn status(db: &Path, json: bool) -> Result<ExitCode, ExitCode> {
    let status = run_async(async {
        let store = open_linked_db(db).await?;
        let status = team::status(&store, CLOCK.now()).await;
        store.close().await;
        status
    })?;
    warn_about_tls(
        team::ServerAddress::parse(&status.url)
            .ok()
            .and_then(|(address, _)| address.tls_warning()),
    );
    if json {
        return Ok(output::print_json(&status));
    }
    say!(
        "team {} — you are {}{}",
        status.team,
        status.member,
        if status.online {
            ""
        } else {
            " (offline: as of the last sync)"
        }
    );
    for member in &status.members {
        say!("  {:<16} running {}", member.name, member.running);
    }
    for instance in &status.running {
        say!(
            "  running: {} ({}, {}) {} {}/h",
            instance.name,
            instance.member,
            instance.gpu_model,
            instance.currency,
            instance.burn_rate_per_hour
        );
    }
    for line in &status.month_to_date.total {
        say!("  month to date: {} {}", line.amount, line.currency);
    }
    for alert in &status.left_running {
        say!(
            "  left running: {} ({}) idle {} min, {} {}/h",
            alert.instance,
            alert.member,
            alert.idle_minutes,
            alert.currency,
            alert.burn_rate_per_hour
        );
    }
    for conflict in &status.conflicts {
        say!("  conflict: {}", conflict.message);
    }
    Ok(ExitCode::SUCCESS)
}

fn alerts(
    db: &Path,
    to: Option<&[String]>,
    after_minutes: Option<u32>,
    json: bool,
) -> Result<ExitCode, ExitCode> {
    let settings = run_async(async {
        let store = open_linked_db(db).await?;
        let result = if to.is_none() && after_minutes.is_none() {
            team::alerts::settings(&store).await
        } else {
            let current = team::alerts::settings(&store).await?;
            let recipients = to.map_or(current.recipients, <[String]>::to_vec);
            team::alerts::set(
                &store,
                &recipients,
                after_minutes.unwrap_or(current.after_minutes),
            )
            .await
        };
        store.close().await;
        result
    })?;
    if json {
        return Ok(output::print_json(&settings));
    }
    let told = if settings.recipients.is_empty() {
        "each instance's own member only".to_owned()
    } else {
        format!(
            "each instance's own member and {}",
            settings.recipients.join(", ")
        )
    };
    say!(
        "left-running alerts after {} idle minutes go to {told}",
        settings.after_minutes
    );
    Ok(ExitCode::SUCCESS)
}

fn budget(db: &Path, amount: &str, currency: &str) -> Result<ExitCode, ExitCode> {
    let amount = crate::ledger::decimal("budget", amount)?;
    run_async(async {
        let store = open_linked_db(db).await?;
        let done = team::set_budget(&store, currency, amount).await;
        store.close().await;
        done
    })?;
    say!(
        "team budget set: {} {currency} per month",
        amount.normalize()
    );
    Ok(ExitCode::SUCCESS)
}

fn share_verify(db: &Path, share: bool) -> Result<ExitCode, ExitCode> {
    run_async(async {
        let store = open_linked_db(db).await?;
        let done = team::verify::set_sharing(&store, share, CLOCK.now()).await;
        store.close().await;
        done
    })?;
    if share {
        say!("your last Verify results are shared with the team from the next sync");
    } else {
        say!("your Verify results are no longer shared");
    }
    Ok(ExitCode::SUCCESS)
}

/// What `conflicts` settles before listing.
#[derive(Clone, Copy)]
enum Settle<'a> {
    Nothing,
    /// A refused event's conflict: the event to keep.
    Keep {
        event_uid: &'a str,
        keep: &'a str,
    },
    /// A stored notice, read.
    Dismiss {
        key: &'a str,
    },
}

/// List the conflicts, after settling one when asked.
fn conflicts(db: &Path, settle: Settle<'_>, json: bool) -> Result<ExitCode, ExitCode> {
    let left = run_async(async {
        let store = open_linked_db(db).await?;
        let left = match settle {
            Settle::Keep { event_uid, keep } => {
                team::conflicts::resolve(&store, event_uid, keep, CLOCK.now()).await
            }
            Settle::Dismiss { key } => team::conflicts::dismiss(&store, key, CLOCK.now()).await,
            Settle::Nothing => team::conflicts::conflicts(&store).await,
        };
        store.close().await;
        left
    })?;
    if json {
        return Ok(output::print_json(
            &serde_json::json!({ "conflicts": left }),
        ));
    }
    if left.is_empty() {
        say!("no conflicts");
    }
    for conflict in &left {
        say!("{}", conflict.message);
        if let (Some(event), Some(standing)) = (&conflict.event_uid, &conflict.standing) {
            say!(
                "  keep this one: leasehold team resolve {event} --keep {event}\n  keep {}'s {} instead: leasehold team resolve {event} --keep {}",
                standing.member,
                standing.event_kind,
                standing.event_uid
            );
        }
        if let Some(key) = &conflict.key {
            say!("  once read: leasehold team dismiss {key}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn disconnect(db: &Path, json: bool) -> Result<ExitCode, ExitCode> {
    let link = run_async(async {
        let store = open_linked_db(db).await?;
        let link = team::disconnect(&store).await;
        store.close().await;
        link
    })?;
    if json {
        return Ok(output::print_json(
            &serde_json::json!({ "disconnected": link }),
        ));
    }
    match link {
        Some(link) => say!(
            "disconnected from team {}; the ledger stays here",
            link.team
        ),
        None => say!("this database was not linked to a team"),
    }
    Ok(ExitCode::SUCCESS)
}
