//! "Is this rented machine usable, and if not, why?" in one call: connect, run the probe
//! battery, diagnose the facts. The CLI's `verify` and the app's Verify page both call
//! [`verify`], so they report the same facts and findings.

use std::path::PathBuf;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::diagnose::{self, DiagnoseContext, Finding};
use crate::probe::{self, BatteryOptions, Facts, ProbeError, ProbeSink};
use crate::ssh::{
    parse_ssh_command, ConnectOptions, Credentials, Destination, KnownHosts, Secret, SshError,
    SshTarget,
};
use crate::target::Target;

/// What `verify` found: the facts and the findings drawn from them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct VerifyReport {
    pub facts: Facts,
    pub findings: Vec<Finding>,
}

#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error(transparent)]
    Ssh(#[from] SshError),
    #[error(transparent)]
    Probe(#[from] ProbeError),
}

impl crate::Coded for VerifyError {
    fn code(&self) -> &'static str {
        match self {
            Self::Ssh(err) => err.code(),
            Self::Probe(err) => err.code(),
        }
    }

    fn is_bad_input(&self) -> bool {
        match self {
            Self::Ssh(err) => err.is_bad_input(),
            Self::Probe(err) => err.is_bad_input(),
        }
    }
}

/// How to reach an instance over SSH, as the user gives it.
#[derive(Debug, Clone, Default)]
pub struct SshLogin {
    /// The provider's command, e.g. `ssh -p 12345 root@region-1.autodl.com`.
    pub command: String,
    pub identity_files: Vec<PathBuf>,
    /// Use only this known_hosts file (tests, CI); the app's own file otherwise.
    pub known_hosts: Option<PathBuf>,
    pub password: Option<Secret>,
    pub accept_new_host_key: bool,
}

/// Open the SSH connection the battery will share.
pub async fn connect(login: &SshLogin) -> Result<SshTarget, VerifyError> {
    let command = parse_ssh_command(&login.command)?;
    let config = crate::ssh::load_user_config().ok().flatten();
    let mut destination = Destination::resolve(&command, config.as_ref())?;
    destination
        .identity_files
        .splice(0..0, login.identity_files.iter().cloned());
    let credentials =
        Credentials::like_openssh(&destination.identity_files, login.password.clone());
    let options = ConnectOptions {
        known_hosts: login
            .known_hosts
            .as_ref()
            .map_or_else(KnownHosts::app_default, KnownHosts::only),
        accept_new_host_key: login.accept_new_host_key,
        connect_timeout: destination
            .connect_timeout
            .unwrap_or(Duration::from_secs(15)),
        ..ConnectOptions::default()
    };
    Ok(SshTarget::connect(destination, credentials, options).await?)
}

/// Run the battery on `target` and diagnose the result.
pub async fn verify(
    target: &dyn Target,
    options: &BatteryOptions,
    context: &DiagnoseContext,
    sink: &dyn ProbeSink,
    now: DateTime<Utc>,
) -> Result<VerifyReport, VerifyError> {
    let facts = probe::run_battery(target, options, sink, now).await?;
    let findings = diagnose::diagnose(&facts, context);
    Ok(VerifyReport { facts, findings })
}
