//! `leasehold stop NAME [--ssh "…" | --api] [--json]`: power a recorded instance off now and
//! record `stopped` once that is confirmed (the instance stops answering SSH, or the provider's
//! API says it stopped). Without `--ssh` or `--api` it uses the instance's saved SSH target.

use std::path::{Path, PathBuf};

use std::process::ExitCode;
use std::time::Duration;

use leasehold_core::ssh::Secret;
use leasehold_core::stop::{
    self, ApiEndpoints, SshStop, StopBy, StopError, StopReport, StopVia, StopWait,
};
use leasehold_core::store::Store;

use crate::output;
use crate::ssh::{fail_ssh, runtime};

#[derive(clap::Args)]
pub struct StopArgs {
    /// The recorded instance (see `leasehold instance add`).
    name: String,
    /// The provider's SSH command (default: the instance's saved target).
    #[arg(long = "ssh", value_name = "COMMAND", conflicts_with = "api")]
    ssh: Option<String>,
    /// Stop through the provider's API (RunPod, Vast.ai) instead of SSH.
    #[arg(long)]
    api: bool,
    /// Private key file for SSH (repeatable).
    #[arg(short = 'i', value_name = "KEY")]
    identity: Vec<PathBuf>,
    /// Use only this known_hosts file.
    #[arg(long, value_name = "FILE")]
    known_hosts: Option<PathBuf>,
    /// Trust and record a host key seen for the first time (never a changed one).
    #[arg(long)]
    accept_new_host_key: bool,
    /// Read the login password from this environment variable.
    #[arg(long, value_name = "VAR")]
    password_env: Option<String>,
    /// Run this instead of the provider's power-off command.
    #[arg(long, value_name = "CMD", conflicts_with = "api")]
    power_off: Option<String>,
    /// Seconds to wait for the stop to be confirmed (SSH stops answering, or the API says so).
    #[arg(long, value_name = "SECONDS", default_value_t = 120)]
    wait: u64,
    /// The provider's id of the instance (saved for next time).
    #[arg(long, value_name = "ID", requires = "api")]
    provider_id: Option<String>,
    /// Read the API key from this environment variable (default: the OS keychain).
    #[arg(long, value_name = "VAR", requires = "api")]
    api_key_env: Option<String>,
    #[arg(long)]
    json: bool,
}

fn secret_from_env(flag: &str, var: Option<&str>) -> Result<Option<Secret>, ExitCode> {
    match var {
        None => Ok(None),
        Some(var) => std::env::var(var)
            .map(|v| Some(Secret::new(v)))
            .map_err(|_| {
                output::bad_input(format!(
                    "{flag} {var}: that environment variable is not set"
                ))
            }),
    }
}

pub fn run(db: &Path, args: &StopArgs) -> ExitCode {
    let password = match secret_from_env("--password-env", args.password_env.as_deref()) {
        Ok(password) => password,
        Err(code) => return code,
    };
    let key = match secret_from_env("--api-key-env", args.api_key_env.as_deref()) {
        Ok(key) => key,
        Err(code) => return code,
    };
    runtime().block_on(async {
        let store = match Store::open(db).await {
            Ok(store) => store,
            Err(err) => return output::fail(&err),
        };
        let by = if args.api {
            StopBy::Api {
                provider_id: args.provider_id.as_deref(),
                key,
            }
        } else {
            StopBy::Ssh(SshStop {
                ssh_command: args.ssh.clone(),
                identity_files: args.identity.clone(),
                known_hosts: args.known_hosts.clone(),
                accept_new_host_key: args.accept_new_host_key,
                password,
                connect_timeout: Some(Duration::from_secs(10)),
                link: None,
                command: args.power_off.as_deref(),
            })
        };
        let wait = StopWait {
            limit: Duration::from_secs(args.wait.max(1)),
            ..StopWait::default()
        };
        let ctrl_c = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        let outcome = stop::now(
            &store,
            &args.name,
            by,
            &ApiEndpoints::from_env(),
            wait,
            &crate::ledger::CLOCK,
            ctrl_c,
        )
        .await;
        store.close().await;
        match outcome {
            Ok(report) => print(&report, args.json),
            // A login that failed before anything ran exits as every SSH failure does.
            Err(StopError::Connect(err)) => fail_ssh(&err),
            Err(err) => output::fail(&err),
        }
    })
}

fn print(report: &StopReport, json: bool) -> ExitCode {
    if json {
        return output::print_json(report);
    }
    match report.via {
        StopVia::Ssh => say!(
            "{} stopped: `{}` ran and it stopped answering SSH after {} s; recorded as stopped at {}",
            report.instance,
            report.command.as_deref().unwrap_or(""),
            report.waited_seconds,
            report.stopped_at.to_rfc3339()
        ),
        StopVia::Api => say!(
            "{} stopped through the {} API; recorded as stopped at {}",
            report.instance,
            report.api.map_or("provider", |a| a.as_str()),
            report.stopped_at.to_rfc3339()
        ),
    }
    ExitCode::SUCCESS
}
