//! `release-check` and `release`: the checklist that blocks a careless release, and the release
//! itself with its final bill. A refused release exits 2 and records nothing.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use leasehold_core::backup::ScanOptions;
use leasehold_core::release::{self, CheckOutcome, CheckStatus, FinalBill, ReleaseRequest};
use leasehold_core::ssh::{ConnectRequest, Secret};
use leasehold_core::store::Store;
use leasehold_core::usecase::{self, backup::Reach, Handles};
use leasehold_core::Clock;

use crate::ledger::{time_or_now, CLOCK};
use crate::output;
use crate::ssh::{fail_ssh, runtime, SshArgs};

#[derive(clap::Args)]
pub struct ReleaseCheckArgs {
    /// The recorded instance.
    name: String,
    #[command(flatten)]
    ssh: SshArgs,
    /// A folder to scan (repeatable); default: home, the data disk, GPU processes' folders.
    #[arg(long = "root", value_name = "PATH")]
    roots: Vec<String>,
    /// Put this folder first on PATH on the instance (tools outside the login PATH).
    #[arg(long, hide = true)]
    path_prefix: Option<String>,
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
pub struct ReleaseArgs {
    /// The recorded instance.
    name: String,
    /// The instance name typed again, to confirm.
    #[arg(long, value_name = "NAME")]
    confirm: String,
    /// Release despite a blocked check, for this reason (repeatable): CODE=REASON.
    #[arg(long = "override", value_name = "CODE=REASON")]
    overrides: Vec<String>,
    /// Run a fresh check over SSH instead of going by the latest recorded one.
    #[arg(long = "ssh", value_name = "COMMAND")]
    ssh: Option<String>,
    #[arg(short = 'i', value_name = "KEY")]
    identity: Vec<PathBuf>,
    #[arg(long, value_name = "FILE")]
    known_hosts: Option<PathBuf>,
    #[arg(long)]
    accept_new_host_key: bool,
    #[arg(long, value_name = "VAR")]
    password_env: Option<String>,
    #[arg(long, value_name = "SECONDS", default_value_t = 10)]
    connect_timeout: u64,
    #[arg(long = "root", value_name = "PATH")]
    roots: Vec<String>,
    #[arg(long, hide = true)]
    path_prefix: Option<String>,
    /// Release although no check was ever run, for this reason (recorded).
    #[arg(long, value_name = "REASON")]
    no_check: Option<String>,
    /// When it was released in the provider's console (default: now).
    #[arg(long)]
    at: Option<String>,
    #[arg(long)]
    json: bool,
}

async fn open_existing(db: &Path) -> Result<Store, ExitCode> {
    if !db.exists() {
        return Err(output::bad_input(format!(
            "no database at {}; record the instance first",
            db.display()
        )));
    }
    Store::open(db).await.map_err(|err| output::fail(&err))
}

fn status_word(status: CheckStatus) -> &'static str {
    match status {
        CheckStatus::Ok => "ok",
        CheckStatus::Warn => "warn",
        CheckStatus::Blocked => "BLOCKED",
        CheckStatus::NotChecked => "not checked",
        CheckStatus::NotApplicable => "n/a",
    }
}

fn print_checks(outcome: &CheckOutcome) {
    for check in &outcome.checks {
        say!(
            "{:8} {:24} {}",
            status_word(check.status),
            check.code,
            check.detail
        );
    }
    say!(
        "{}",
        if outcome.blocked {
            "release is blocked"
        } else {
            "nothing blocks the release"
        }
    );
}

/// `leasehold release-check NAME --ssh "…" [--root PATH]… [--json]`
/// (`usecase::backup::release_check`): an instance `--ssh` cannot reach still gets its checklist,
/// what only a look could tell blocked, as in the app.
pub fn check(db: &Path, args: &ReleaseCheckArgs) -> ExitCode {
    runtime().block_on(async {
        let store = match open_existing(db).await {
            Ok(store) => store,
            Err(code) => return code,
        };
        let request = match args.ssh.request() {
            Ok(request) => request,
            Err(code) => return code,
        };
        let options = ScanOptions {
            roots: args.roots.clone(),
            path_prefix: args.path_prefix.clone(),
        };
        let handles = Handles::default();
        let context = handles.context(&store, &CLOCK);
        let reach = Reach::Dial(&request);
        match usecase::backup::release_check(&context, &args.name, &options, reach).await {
            Ok(outcome) if args.json => output::print_json(&serde_json::json!({
                "blocked": outcome.blocked,
                "checks": outcome.checks,
                "id": outcome.id,
                "at": outcome.at,
            })),
            Ok(outcome) => {
                print_checks(&outcome);
                ExitCode::SUCCESS
            }
            Err(err) => output::fail(&err),
        }
    })
}

fn print_bill(bill: &FinalBill) {
    let currency = &bill.report.currency;
    say!("released: {}", bill.report.name);
    say!("total: {} {currency}", bill.report.total);
    let b = &bill.report.breakdown;
    say!(
        "  compute {}  no-GPU {}  stopped {}  storage {}  IP {}  traffic {}",
        b.compute,
        b.no_gpu,
        b.stopped,
        b.storage,
        b.ip,
        b.traffic
    );
    say!(
        "hours billed: {}  running: {}",
        bill.total_hours,
        bill.running_hours
    );
    match (&bill.busy_hours, &bill.cost_per_busy_hour) {
        (Some(busy), Some(per)) => say!("GPU busy: {busy} h, {per} {currency} per busy hour"),
        _ => say!("GPU busy hours: not measured"),
    }
    if let Some(per) = &bill.cost_per_running_hour {
        say!("{per} {currency} per running hour");
    }
    for backup in &bill.backups {
        say!(
            "backup {}: {} file(s) into {} at {}",
            backup.id,
            backup.files,
            backup.local_dir,
            backup.started_at.to_rfc3339()
        );
    }
    for o in &bill.overrides {
        say!("override {}: {}", o.code, o.reason);
    }
}

/// `leasehold release NAME --confirm NAME [--override CODE=REASON]… [--ssh "…"] [--no-check REASON] [--at TIME] [--json]`
pub fn release(db: &Path, args: &ReleaseArgs) -> ExitCode {
    let at = match time_or_now("--at", args.at.as_deref()) {
        Ok(at) => at,
        Err(code) => return code,
    };
    let mut overrides = Vec::new();
    for text in &args.overrides {
        match release::parse_override(text) {
            Ok(pair) => overrides.push(pair),
            Err(err) => return output::fail(&err),
        }
    }
    runtime().block_on(async {
        let store = match open_existing(db).await {
            Ok(store) => store,
            Err(code) => return code,
        };
        if let Err(err) = release::latest_check(&store, &args.name).await {
            return output::fail(&err);
        }
        let fresh = match &args.ssh {
            None => None,
            Some(command) => {
                let password = match &args.password_env {
                    Some(var) => match std::env::var(var) {
                        Ok(value) => Some(Secret::new(value)),
                        Err(_) => {
                            return output::bad_input(format!(
                                "--password-env {var}: that environment variable is not set"
                            ))
                        }
                    },
                    None => None,
                };
                let request = ConnectRequest {
                    ssh_command: command.clone(),
                    identity_files: args.identity.clone(),
                    known_hosts: args.known_hosts.clone(),
                    accept_new_host_key: args.accept_new_host_key,
                    password,
                    connect_timeout: Some(Duration::from_secs(args.connect_timeout)),
                    boot_wait: Duration::ZERO,
                };
                let target = match request.connect().await {
                    Ok(target) => target,
                    Err(err) => return fail_ssh(&err),
                };
                let options = ScanOptions {
                    roots: args.roots.clone(),
                    path_prefix: args.path_prefix.clone(),
                };
                match release::evaluate(&store, &target, &args.name, &options, CLOCK.now()).await {
                    Ok(outcome) => Some(outcome),
                    Err(err) => return output::fail(&err),
                }
            }
        };
        let request = ReleaseRequest {
            name: args.name.clone(),
            confirm: args.confirm.clone(),
            overrides,
            no_check: args.no_check.clone(),
            fresh,
        };
        // GPU-busy hours come from monitoring once it records them; none are known here yet.
        match release::release(&store, request, at, None).await {
            Ok(bill) if args.json => output::print_json(&bill),
            Ok(bill) => {
                print_bill(&bill);
                ExitCode::SUCCESS
            }
            Err(err) => output::fail(&err),
        }
    })
}
