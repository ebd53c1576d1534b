//! `leasehold remind due` (what is due at a moment, from the ledger alone) and `leasehold remind
//! test` (one test message to a webhook).

use std::path::Path;
use std::process::ExitCode;

use chrono::{DateTime, Utc};
use leasehold_core::remind::{self, ReminderKind};
use leasehold_core::ssh::Secret;
use leasehold_core::store::Store;
use leasehold_core::webhook::{self, Retry, WebhookMessage, WebhookTarget};
use leasehold_core::Clock;
use serde::Serialize;

use crate::ledger::{time_or_now, CLOCK};
use crate::output;

#[derive(clap::Subcommand)]
pub enum RemindCommand {
    /// What is due at TIME for every instance in the ledger. Stateless: nothing is recorded as
    /// shown, and without GPU samples there is no gpu_idle.
    Due {
        /// The moment to ask about (RFC 3339); default now.
        #[arg(long)]
        at: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Send one test message to a webhook.
    Test {
        /// KIND=URL, KIND one of wecom, feishu, dingtalk, slack, serverchan, json.
        #[arg(long, value_name = "KIND=URL")]
        webhook: String,
        /// The environment variable holding the signing secret (DingTalk, Feishu).
        #[arg(long, value_name = "VAR")]
        secret_env: Option<String>,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Serialize)]
struct DueItem {
    instance: String,
    kind: ReminderKind,
    due_at: DateTime<Utc>,
    detail: String,
}

#[derive(Serialize)]
struct DueList {
    reminders: Vec<DueItem>,
}

#[derive(Serialize)]
struct Sent {
    sent: bool,
    kind: &'static str,
    attempts: u32,
    status: u16,
}

fn runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| {
            eprintln!("error: could not start the async runtime: {err}");
            ExitCode::from(output::EXIT_FAILURE)
        })
}

pub fn run(db: &Path, command: &RemindCommand) -> ExitCode {
    let result = match command {
        RemindCommand::Due { at, json } => due(db, at.as_deref(), *json),
        RemindCommand::Test {
            webhook,
            secret_env,
            json,
        } => test(webhook, secret_env.as_deref(), *json),
    };
    result.unwrap_or_else(|code| code)
}

fn due(db: &Path, at: Option<&str>, json: bool) -> Result<ExitCode, ExitCode> {
    let now = time_or_now("--at", at)?;
    // No database yet means no instance yet: nothing is due, and no file is created.
    let reminders = if db.exists() {
        runtime()?
            .block_on(async {
                let store = Store::open(db).await?;
                let result = remind::due_observed(&store, now).await;
                store.close().await;
                result
            })
            .map_err(|err: remind::RemindError| output::fail(&err))?
            .1
    } else {
        Vec::new()
    };
    let list = DueList {
        reminders: reminders
            .into_iter()
            .map(|r| DueItem {
                instance: r.instance,
                kind: r.kind,
                due_at: r.due_at,
                detail: r.detail,
            })
            .collect(),
    };
    if json {
        return Ok(output::print_json(&list));
    }
    if list.reminders.is_empty() {
        say!("nothing is due at {}", now.to_rfc3339());
    }
    for r in &list.reminders {
        say!(
            "{}  {:<14} since {}  {}",
            r.instance,
            r.kind.as_str(),
            r.due_at.to_rfc3339(),
            r.detail
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn test(pair: &str, secret_env: Option<&str>, json: bool) -> Result<ExitCode, ExitCode> {
    let secret = match secret_env {
        None => None,
        Some(var) => match std::env::var(var) {
            Ok(value) if !value.is_empty() => Some(Secret::new(value)),
            _ => {
                return Err(output::bad_input(format!(
                    "--secret-env {var}: that environment variable is not set or empty"
                )))
            }
        },
    };
    let target = WebhookTarget::parse_pair(pair, secret).map_err(|err| output::fail(&err))?;
    let now = CLOCK.now();
    let delivery = runtime()?
        .block_on(async {
            let client = webhook::client()?;
            webhook::send(
                &client,
                &target,
                &WebhookMessage::test(),
                now,
                Retry::default(),
            )
            .await
        })
        .map_err(|err| output::fail(&err))?;
    if json {
        return Ok(output::print_json(&Sent {
            sent: true,
            kind: delivery.kind.as_str(),
            attempts: delivery.attempts,
            status: delivery.status,
        }));
    }
    say!(
        "sent a test message to {} (HTTP {}, {} tr{})",
        target.kind.service(),
        delivery.status,
        delivery.attempts,
        if delivery.attempts == 1 { "y" } else { "ies" }
    );
    Ok(ExitCode::SUCCESS)
}
