//! `leasehold watchdog script|install|status|remove`: the idle/TTL guard on the instance.
//! Settings are checked before anything connects, so bad input installs nothing (exit 2).

use std::process::ExitCode;

use leasehold_core::watchdog::{
    self, InstallReport, RemoveReport, WatchdogOptions, WatchdogRequest, WatchdogStatus,
};

use crate::output;
use crate::ssh::{fail_ssh, runtime, SshArgs};

#[derive(clap::Subcommand)]
pub enum WatchdogCommand {
    /// Print the standalone script (bash + coreutils) without connecting.
    Script {
        #[command(flatten)]
        settings: Box<SettingsArgs>,
    },
    /// Install the watchdog on the instance and start it (replaces a previous one).
    Install(Box<RemoteArgs>),
    /// What the watchdog on the instance is doing, with its latest decisions.
    Status(Box<RemoteArgs>),
    /// Stop the watchdog and remove everything it put on the instance.
    Remove(Box<RemoteArgs>),
}

#[derive(clap::Args)]
pub struct RemoteArgs {
    #[command(flatten)]
    ssh: SshArgs,
    #[command(flatten)]
    settings: SettingsArgs,
    #[arg(long)]
    json: bool,
}

/// The watchdog's settings, exactly as `watchdog script` takes them.
#[derive(clap::Args)]
pub struct SettingsArgs {
    /// Power off after every signal stayed quiet this long (default 30m).
    #[arg(long, value_name = "DURATION")]
    idle: Option<String>,
    /// One sample every (default 60s).
    #[arg(long, value_name = "DURATION")]
    interval: Option<String>,
    /// No idle decision this long after start (default 10m).
    #[arg(long, value_name = "DURATION")]
    grace: Option<String>,
    /// Power off after this long whatever happens (default: never).
    #[arg(long, value_name = "DURATION")]
    ttl: Option<String>,
    /// A GPU at or above this utilisation is busy (default 5).
    #[arg(long, value_name = "PCT")]
    gpu_below: Option<String>,
    /// Which signals to watch (default gpu,cpu,io,net,ssh).
    #[arg(long, value_name = "LIST")]
    signals: Option<String>,
    /// The command that powers the instance off (default "shutdown -h now").
    #[arg(long, value_name = "CMD")]
    power_off: Option<String>,
    /// A command run first (git push, save a checkpoint); the power-off follows either way.
    #[arg(long, value_name = "CMD")]
    pre_stop: Option<String>,
    /// Where the script, its log and state live (default ~/.leasehold/watchdog).
    #[arg(long, value_name = "DIR")]
    state_dir: Option<String>,
}

impl SettingsArgs {
    fn resolve(&self) -> Result<WatchdogOptions, ExitCode> {
        let request = WatchdogRequest {
            idle: self.idle.clone(),
            interval: self.interval.clone(),
            grace: self.grace.clone(),
            ttl: self.ttl.clone(),
            gpu_below: self.gpu_below.clone(),
            signals: self.signals.clone(),
            power_off: self.power_off.clone(),
            pre_stop: self.pre_stop.clone(),
            state_dir: self.state_dir.clone(),
        };
        WatchdogOptions::resolve(&request, WatchdogOptions::default())
            .map_err(|err| output::fail(&err))
    }
}

pub fn run(command: &WatchdogCommand) -> ExitCode {
    match command {
        WatchdogCommand::Script { settings } => match settings.resolve() {
            Ok(options) => {
                say!("{}", watchdog::script(&options).trim_end());
                ExitCode::SUCCESS
            }
            Err(code) => code,
        },
        WatchdogCommand::Install(args) => remote(args, Action::Install),
        WatchdogCommand::Status(args) => remote(args, Action::Status),
        WatchdogCommand::Remove(args) => remote(args, Action::Remove),
    }
}

#[derive(Clone, Copy)]
enum Action {
    Install,
    Status,
    Remove,
}

fn remote(args: &RemoteArgs, action: Action) -> ExitCode {
    let options = match args.settings.resolve() {
        Ok(options) => options,
        Err(code) => return code,
    };
    let request = match args.ssh.request() {
        Ok(request) => request,
        Err(code) => return code,
    };
    runtime().block_on(async {
        let target = match request.connect().await {
            Ok(target) => target,
            Err(err) => return fail_ssh(&err),
        };
        let code = match action {
            Action::Install => match watchdog::install(&target, &options).await {
                Ok(report) => print_install(&report, args.json),
                Err(err) => output::fail(&err),
            },
            Action::Status => match watchdog::status(&target, &options.state_dir).await {
                Ok(status) => print_status(&status, args.json),
                Err(err) => output::fail(&err),
            },
            Action::Remove => match watchdog::remove(&target, &options.state_dir).await {
                Ok(report) => print_remove(&report, args.json),
                Err(err) => output::fail(&err),
            },
        };
        target.disconnect().await;
        code
    })
}

fn print_install(report: &InstallReport, json: bool) -> ExitCode {
    if json {
        return output::print_json(report);
    }
    say!(
        "watchdog running (pid {}) in {}",
        report.pid,
        report.state_dir
    );
    say!(
        "powers off with `{}` after {} s idle (checked every {} s, {} s grace{})",
        report.options.power_off,
        report.options.idle_seconds,
        report.options.interval_seconds,
        report.options.grace_seconds,
        report
            .options
            .ttl_seconds
            .map_or(String::new(), |ttl| format!(
                ", at the latest after {ttl} s"
            ))
    );
    say!("restart: {}", report.boot_note);
    ExitCode::SUCCESS
}

fn print_status(status: &WatchdogStatus, json: bool) -> ExitCode {
    if json {
        return output::print_json(status);
    }
    if !status.installed {
        say!("no watchdog is installed in that folder");
        return ExitCode::SUCCESS;
    }
    say!(
        "{} in {}",
        match status.pid {
            Some(pid) => format!("running (pid {pid})"),
            None => "installed, not running".to_owned(),
        },
        status.state_dir.as_deref().unwrap_or("?")
    );
    say!(
        "restart: {}{}",
        status.boot.explain(),
        if status.boot_in_place || status.boot == watchdog::BootHook::None {
            ""
        } else {
            " (the hook is gone)"
        }
    );
    if let Some(phase) = &status.phase {
        say!(
            "latest: {phase}, idle {} s, busy: {} ({})",
            status.idle_seconds.unwrap_or(0),
            if status.busy.is_empty() {
                "nothing".to_owned()
            } else {
                status.busy.join(", ")
            },
            status.sample.as_deref().unwrap_or("")
        );
    }
    for line in &status.log {
        say!("{} {} {}", line.at, line.what, line.detail);
    }
    ExitCode::SUCCESS
}

fn print_remove(report: &RemoveReport, json: bool) -> ExitCode {
    if json {
        return output::print_json(report);
    }
    say!(
        "{}; restart hooks removed: {}; folder {}",
        if report.was_running {
            "watchdog stopped"
        } else {
            "no watchdog was running"
        },
        if report.hooks_removed.is_empty() {
            "none".to_owned()
        } else {
            report
                .hooks_removed
                .iter()
                .map(|h| h.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        },
        if report.folder_removed {
            "removed"
        } else {
            "kept (other files in it, or it was not there)"
        }
    );
    ExitCode::SUCCESS
}
