//! `backup scan` and `backup run`: what on the instance would be lost, and saving it here.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Instant;

use leasehold_core::backup::{self, AtRiskReport, BackupProgress, RunRequest, ScanOptions};
use leasehold_core::store::Store;
use leasehold_core::Clock;

use crate::ledger::CLOCK;
use crate::output;
use crate::ssh::{connect, runtime, SshArgs};

#[derive(clap::Subcommand)]
pub enum BackupCommand {
    /// List what would be lost with the instance: unpushed or uncommitted git work, weights and
    /// checkpoints, files changed since the last backup, environments, and what the provider keeps.
    Scan(ScanArgs),
    /// Copy paths from the instance into a local folder (resume, SHA-256 both sides) and record it.
    Run(RunArgs),
}

#[derive(clap::Args)]
pub struct ScanArgs {
    #[command(flatten)]
    ssh: SshArgs,
    /// A folder to scan (repeatable); default: home, the provider's data disk, the working
    /// folders of GPU processes.
    #[arg(long = "root", value_name = "PATH")]
    roots: Vec<String>,
    /// The recorded instance (its provider's disks, its last backup).
    #[arg(long)]
    instance: Option<String>,
    /// Put this folder first on PATH on the instance (tools outside the login PATH).
    #[arg(long, hide = true)]
    path_prefix: Option<String>,
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    ssh: SshArgs,
    /// Files or folders on the instance (`~/x` is in the login folder).
    #[arg(required = true, value_name = "REMOTE_PATH")]
    remote_paths: Vec<String>,
    /// The local folder the copies go into (each under its own name).
    #[arg(long = "to", value_name = "DIR")]
    to: PathBuf,
    /// Record the backup under this instance (what the release check reads).
    #[arg(long)]
    instance: Option<String>,
    #[arg(long)]
    json: bool,
}

pub fn run(db: &Path, command: &BackupCommand) -> ExitCode {
    match command {
        BackupCommand::Scan(args) => scan(db, args),
        BackupCommand::Run(args) => run_backup(db, args),
    }
}

async fn open(db: &Path, instance: Option<&str>) -> Result<Option<Store>, ExitCode> {
    if instance.is_none() && !db.exists() {
        return Ok(None);
    }
    Store::open(db)
        .await
        .map(Some)
        .map_err(|err| output::fail(&err))
}

fn scan(db: &Path, args: &ScanArgs) -> ExitCode {
    runtime().block_on(async {
        let store = match open(db, args.instance.as_deref()).await {
            Ok(store) => store,
            Err(code) => return code,
        };
        let target = match connect(&args.ssh).await {
            Ok(target) => target,
            Err(code) => return code,
        };
        let options = ScanOptions {
            roots: args.roots.clone(),
            path_prefix: args.path_prefix.clone(),
        };
        // Without a database (and no instance named) there is nothing recorded to read.
        let scanned = match &store {
            Some(store) => {
                backup::scan_recorded(
                    store,
                    &target,
                    args.instance.as_deref(),
                    &options,
                    CLOCK.now(),
                )
                .await
            }
            None => backup::scan(&target, &options, None).await,
        };
        match scanned {
            Ok(report) if args.json => output::print_json(&report),
            Ok(report) => {
                print_scan(&report);
                ExitCode::SUCCESS
            }
            Err(err) => output::fail(&err),
        }
    })
}

fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

fn print_scan(report: &AtRiskReport) {
    say!("scanned: {}", report.roots.join(", "));
    say!("git repositories:");
    for repo in &report.repos {
        say!(
            "  {}  [{}] remote: {}  unpushed: {}  uncommitted: {}  stashes: {}",
            repo.path,
            repo.branch.as_deref().unwrap_or("-"),
            if repo.has_remote { "yes" } else { "no" },
            repo.unpushed_commits,
            repo.uncommitted_files,
            repo.stashes
        );
    }
    say!("weights and checkpoints:");
    for weight in &report.weights {
        say!("  {}  {}", megabytes(weight.bytes), weight.path);
    }
    match &report.changed_since_last_backup {
        Some(changed) => say!(
            "changed since the last backup: {} file(s), {}",
            changed.files,
            megabytes(changed.bytes)
        ),
        None => say!("changed since the last backup: never backed up"),
    }
    for env in &report.environments {
        say!("environment: {} {}", env.kind, env.name);
    }
    for process in &report.gpu_processes {
        say!(
            "GPU process: {} {} in {}",
            process.pid,
            process.name,
            process.cwd.as_deref().unwrap_or("?")
        );
    }
    for note in &report.notes {
        say!("note: {}", note.detail);
    }
}

fn run_backup(db: &Path, args: &RunArgs) -> ExitCode {
    runtime().block_on(async {
        let store = match Store::open(db).await {
            Ok(store) => store,
            Err(err) => return output::fail(&err),
        };
        let target = match connect(&args.ssh).await {
            Ok(target) => target,
            Err(code) => return code,
        };
        let request = RunRequest {
            remote_paths: args.remote_paths.clone(),
            local_dir: args.to.clone(),
            instance: args.instance.clone(),
        };
        let interactive = std::io::stderr().is_terminal();
        let started = Instant::now();
        let last = Mutex::new(None::<Instant>);
        let print = |p: &BackupProgress| {
            let mut last = last
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let due = last.is_none_or(|t| t.elapsed().as_millis() >= 500)
                || p.items_done == p.items_total;
            if !due {
                return;
            }
            *last = Some(Instant::now());
            let rate = p.bytes_done as f64 / started.elapsed().as_secs_f64().max(0.001);
            let eta = if rate > 0.0 && p.bytes_total > p.bytes_done {
                format!("{:.0} s left", (p.bytes_total - p.bytes_done) as f64 / rate)
            } else {
                String::new()
            };
            let line = format!(
                "{}/{} {} of {}  {eta}  {}",
                (p.items_done + 1).min(p.items_total),
                p.items_total,
                megabytes(p.bytes_done),
                megabytes(p.bytes_total),
                p.current
            );
            crate::output::progress_line(&line, interactive);
        };
        let result = backup::run(&store, &target, &request, &print, &CLOCK).await;
        if interactive {
            eprintln!();
        }
        match result {
            Ok(record) if args.json => output::print_json(&record),
            Ok(record) => {
                for item in &record.items {
                    say!(
                        "{}  {} file(s), {}  sha256 {}",
                        item.local_path.as_deref().unwrap_or(&item.remote_path),
                        item.files,
                        megabytes(item.bytes),
                        item.sha256.as_deref().unwrap_or("-")
                    );
                }
                say!(
                    "backup {} recorded ({} in {:.1} s)",
                    record.id,
                    megabytes(record.bytes),
                    started.elapsed().as_secs_f64()
                );
                ExitCode::SUCCESS
            }
            Err(err) => output::fail(&err),
        }
    })
}
