//! The SSH route, the one the app, the CLI and the budget power-off all take: the provider's
//! power-off command runs on the instance (AutoDL's `/usr/bin/shutdown`, `runpodctl stop pod`
//! on RunPod, `shutdown -h now` on a VM; see [`super::PowerOff`]), confirmed when two fresh SSH
//! logins in a row find nothing there within a bounded wait.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;

use crate::billing::{ledger, PowerAction};
use crate::clock::Clock;
use crate::ssh::{ConnectRequest, Secret, SshError};
use crate::store::Store;
use crate::target::{CommandSpec, Target, TargetError};

use super::instance::Resolved;
use super::{StopError, StopReport, StopVia, StopWait};

/// What one fresh login attempt said about the instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoginLook {
    /// It logged us in: still up.
    Answers,
    /// Nothing there: the connection was refused, the address unreachable, or the handshake
    /// timed out. Only this is what a powered-off machine looks like.
    Silent,
    /// Something answered but the login failed for a reason of its own (a wrong password, no
    /// credentials, a changed host key): that says nothing about the power.
    Unsure { reason: String, lasting: bool },
}

impl LoginLook {
    fn of_failed_login(err: &SshError) -> Self {
        match err {
            SshError::Refused { .. }
            | SshError::Unreachable { .. }
            | SshError::ConnectTimeout { .. } => Self::Silent,
            // A handshake cut or a session dropped can be sshd going down mid-look: not silence,
            // but worth looking again.
            SshError::Handshake { .. }
            | SshError::Disconnected { .. }
            | SshError::Channel { .. }
            | SshError::UnknownHost { .. } => Self::Unsure {
                reason: err.to_string(),
                lasting: false,
            },
            _ => Self::Unsure {
                reason: err.to_string(),
                lasting: true,
            },
        }
    }
}

/// What a fresh SSH login says right now (a new connection each time, so an open link that has
/// not noticed the power-off yet cannot fake an answer).
pub type Answers<'a> = &'a (dyn Fn() -> BoxFuture<'static, LoginLook> + Send + Sync);

/// A probe for [`Answers`] from how the instance is reached: connect with a short timeout and
/// run `true`.
pub fn answers_for(
    request: ConnectRequest,
) -> impl Fn() -> BoxFuture<'static, LoginLook> + Send + Sync {
    move || {
        let request = ConnectRequest {
            connect_timeout: Some(Duration::from_secs(5)),
            ..request.clone()
        };
        Box::pin(async move {
            let target = match request.connect().await {
                Ok(target) => target,
                Err(err) => return LoginLook::of_failed_login(&err),
            };
            // Logged in is up, whatever `true` then does on a machine that may be going down.
            let _ = target
                .run(&CommandSpec::new("true").timeout(Duration::from_secs(5)))
                .await;
            target.disconnect().await;
            LoginLook::Answers
        })
    }
}

/// How the SSH route reaches the instance.
#[derive(Default)]
pub struct SshStop<'a> {
    /// The pasted `ssh …` command; `None`: the instance's saved target.
    pub ssh_command: Option<String>,
    /// Added to the login: key files, a known_hosts file, a password.
    pub identity_files: Vec<PathBuf>,
    pub known_hosts: Option<PathBuf>,
    /// Trust and record a host key seen for the first time for the power-off's login (never for
    /// the confirming logins).
    pub accept_new_host_key: bool,
    pub password: Option<Secret>,
    pub connect_timeout: Option<Duration>,
    /// An open link to run the power-off over (the app's live connection); `None`: log in.
    pub link: Option<&'a dyn Target>,
    /// Run this instead of the provider's power-off command.
    pub command: Option<&'a str>,
}

impl SshStop<'_> {
    fn request(&self, resolved: &Resolved) -> Result<ConnectRequest, StopError> {
        let mut request = match &self.ssh_command {
            Some(command) => ConnectRequest {
                ssh_command: command.clone(),
                ..ConnectRequest::default()
            },
            None => resolved.saved_request()?,
        };
        request
            .identity_files
            .extend(self.identity_files.iter().cloned());
        if self.known_hosts.is_some() {
            request.known_hosts.clone_from(&self.known_hosts);
        }
        request.accept_new_host_key = self.accept_new_host_key;
        if self.password.is_some() {
            request.password.clone_from(&self.password);
        }
        if self.connect_timeout.is_some() {
            request.connect_timeout = self.connect_timeout;
        }
        Ok(request)
    }
}

/// The SSH route: refuse what cannot work before anything runs, log in (unless `how` brings an
/// open link), run the power-off, confirm by fresh logins that never record a host key for the
/// first time, record `stopped`. `shutdown` (the CLI's Ctrl-C) ends it early with nothing
/// recorded.
pub async fn stop(
    store: &Store,
    resolved: &Resolved,
    how: SshStop<'_>,
    wait: StopWait,
    clock: &dyn Clock,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<StopReport, StopError> {
    resolved.require_running()?;
    let command = command_for(resolved, how.command)?;
    let request = how.request(resolved)?;
    let connected = match how.link {
        Some(_) => None,
        None => Some(request.connect().await.map_err(StopError::Connect)?),
    };
    let target = how
        .link
        .or(connected.as_ref().map(|c| c as &dyn Target))
        .ok_or_else(|| StopError::NoSavedTarget {
            name: resolved.name.clone(),
            detail: "no connection".to_owned(),
        })?;
    let answers = answers_for(ConnectRequest {
        accept_new_host_key: false,
        ..request
    });
    let outcome = tokio::select! {
        outcome = power_off_and_confirm(store, resolved, target, &answers, command, wait, clock) => outcome,
        () = shutdown => Err(StopError::Cancelled),
    };
    if let Some(connected) = connected {
        connected.disconnect().await;
    }
    outcome
}

/// The command that powers `resolved` off: `given` (trimmed, when not empty), else its
/// provider's; refused where powering off from inside does not stop the billing.
fn command_for(resolved: &Resolved, given: Option<&str>) -> Result<String, StopError> {
    match given.map(str::trim).filter(|c| !c.is_empty()) {
        Some(command) => Ok(command.to_owned()),
        None => match resolved.provider {
            Some(p) => p.power_off().command.ok_or(StopError::NoPowerOffCommand {
                provider: p.preset().display_name,
            }),
            None => Ok(super::GENERIC_POWER_OFF.to_owned()),
        },
    }
}

/// Time the confirmation waits before the first look: a power-off takes a moment to bite.
const FIRST_LOOK_AFTER: Duration = Duration::from_millis(500);

/// Run the power-off command over `target`, wait until `answers` finds the instance silent,
/// then record `stopped`. `command` overrides the provider's.
pub(super) async fn over_target(
    store: &Store,
    resolved: &Resolved,
    target: &dyn Target,
    answers: Answers<'_>,
    command: Option<&str>,
    wait: StopWait,
    clock: &dyn Clock,
) -> Result<StopReport, StopError> {
    resolved.require_running()?;
    let command = command_for(resolved, command)?;
    power_off_and_confirm(store, resolved, target, answers, command, wait, clock).await
}

async fn power_off_and_confirm(
    store: &Store,
    resolved: &Resolved,
    target: &dyn Target,
    answers: Answers<'_>,
    command: String,
    wait: StopWait,
    clock: &dyn Clock,
) -> Result<StopReport, StopError> {
    let started = Instant::now();
    run_power_off(target, &command, wait.command_limit).await?;
    tokio::time::sleep(FIRST_LOOK_AFTER).await;
    confirm_down(answers, wait, started).await?;
    let stopped_at = clock.now();
    ledger::record(store, &resolved.name, PowerAction::Stop, stopped_at).await?;
    Ok(StopReport {
        instance: resolved.name.clone(),
        via: StopVia::Ssh,
        command: Some(command),
        api: None,
        waited_seconds: started.elapsed().as_secs(),
        stopped_at,
    })
}

/// Run the command; a link that drops or a channel that never reports an exit is what a machine
/// going down looks like, so only a reported non-zero exit counts as failure. A command still
/// running at `limit` on a link that is still up has not powered anything off.
async fn run_power_off(
    target: &dyn Target,
    command: &str,
    limit: Duration,
) -> Result<(), StopError> {
    let spec = CommandSpec::new(format!("sh -c {}", crate::shell::quote(command))).timeout(limit);
    match target.run(&spec).await {
        Ok(out) => match out.exit_status {
            Some(0) | None => Ok(()),
            Some(exit) => Err(StopError::PowerOffFailed {
                exit,
                detail: format!("{}{}", out.stderr_text().trim(), out.stdout_text().trim())
                    .chars()
                    .take(300)
                    .collect(),
            }),
        },
        Err(TargetError::Timeout(after)) => Err(StopError::CouldNotConfirm {
            reason: format!(
                "the power-off command was still running after {} s",
                after.as_secs()
            ),
        }),
        Err(TargetError::Spawn(detail)) => Err(StopError::Target(TargetError::Spawn(detail))),
        Err(err) => {
            tracing::info!(%err, "the link went while powering off; confirming");
            Ok(())
        }
    }
}

/// Down once two looks in a row find nothing there; `CouldNotConfirm` at once when a login
/// fails for a reason that will not pass (credentials, host key), `NotConfirmed` past
/// `wait.limit`.
async fn confirm_down(
    answers: Answers<'_>,
    wait: StopWait,
    started: Instant,
) -> Result<(), StopError> {
    let mut silent = 0;
    let mut unsure = None;
    loop {
        match answers().await {
            LoginLook::Silent => {
                silent += 1;
                if silent >= 2 {
                    return Ok(());
                }
            }
            LoginLook::Answers => {
                silent = 0;
                unsure = None;
            }
            LoginLook::Unsure {
                reason,
                lasting: true,
            } => return Err(StopError::CouldNotConfirm { reason }),
            LoginLook::Unsure { reason, .. } => {
                silent = 0;
                unsure = Some(reason);
            }
        }
        if started.elapsed() >= wait.limit {
            return Err(match unsure {
                Some(reason) => StopError::CouldNotConfirm { reason },
                None => StopError::NotConfirmed {
                    seconds: started.elapsed().as_secs(),
                },
            });
        }
        tokio::time::sleep(wait.every).await;
    }
}
