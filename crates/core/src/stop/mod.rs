//! "Stop now": power a rental off for real, from the instance page, a reminder or the tray, and
//! record `stopped` in the ledger only once the stop is confirmed.
//!
//! Two routes. Over SSH, the provider's power-off command runs on the instance (AutoDL's
//! `/usr/bin/shutdown`, `runpodctl stop pod` on RunPod, `shutdown -h now` on a VM; see
//! [`crate::billing::PowerOff`]); it is confirmed when the instance stops answering SSH within a
//! bounded wait. Through the provider's API ([`api`]: RunPod, Vast.ai), it is confirmed when the
//! API says so. A command that fails, an instance that keeps answering or an API that refuses
//! records nothing: the ledger must never say "stopped" while the meter runs.

pub mod api;
mod by_hand;
mod error;

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::billing::{ledger, InstanceState, PowerAction, ProviderKey, StopApi};
use crate::clock::Clock;
use crate::ssh::{ConnectRequest, Secret, SshError};
use crate::store::Store;
use crate::target::{CommandSpec, Target, TargetError};

pub use api::{check_provider_id, forget_api_key, save_api_key, stored_api_key, ApiEndpoints};
pub use by_hand::{
    check_recorded_stop, look_for, record_by_hand, HandCheck, HandStop, Look, LOOK_AGAIN_AFTER,
};
pub use error::StopError;

/// How long to wait for the instance to stop answering, and how often to ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StopWait {
    pub limit: Duration,
    pub every: Duration,
    /// How long the power-off command itself may run before the stop counts as unconfirmed.
    pub command_limit: Duration,
}

impl Default for StopWait {
    fn default() -> Self {
        Self {
            limit: Duration::from_secs(120),
            every: Duration::from_secs(3),
            command_limit: Duration::from_secs(20),
        }
    }
}

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

/// How the stop went through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum StopVia {
    Ssh,
    Api,
}

/// A confirmed stop, recorded in the ledger at `stopped_at`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct StopReport {
    pub instance: String,
    pub via: StopVia,
    /// The command run on the instance (SSH route).
    pub command: Option<String>,
    /// The provider API that stopped it (API route).
    pub api: Option<StopApi>,
    /// Seconds from the power-off until it was confirmed.
    #[ts(type = "number")]
    pub waited_seconds: u64,
    pub stopped_at: DateTime<Utc>,
}

/// How "Stop now" would go for an instance, before the user confirms.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct StopPlan {
    pub instance: String,
    pub provider: Option<ProviderKey>,
    /// The preset's power-off command; `null` when powering off from inside does not stop the
    /// billing.
    pub command: Option<String>,
    pub api: Option<StopApi>,
    /// The provider's id of the instance, when saved (the API needs it).
    pub provider_id: Option<String>,
    /// An API key for `api` is in the keychain.
    pub api_key_saved: bool,
    /// How Stop goes for this instance, decided by [`choose_route`].
    pub route: StopRoute,
    /// An SSH target is saved for the instance (the SSH route and the SSH look need one).
    pub ssh_target_saved: bool,
    /// The provider's console, where the user stops it when Leasehold cannot.
    pub console_url: Option<String>,
    /// How a stop recorded by hand is checked afterwards; `null`: it cannot be (no saved SSH
    /// target, no API set up), and the dialog says so.
    pub check_by: Option<StopVia>,
    /// The provider account the instance is linked to, when it can power it off now: the API
    /// route then goes through it (no id or key to type).
    pub account: Option<crate::account::AccountRef>,
}

/// Which way Stop goes, most trusted first. The route the dialog leads with; the others stay
/// open to the user where they can work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum StopRoute {
    /// The provider's API powers it off and confirms it: the id and a key are saved.
    Api,
    /// The preset's power-off command over the saved SSH target, confirmed by silence.
    Ssh,
    /// The provider has a stop API, and it is the only way from here; the id or the key is
    /// missing (the dialog asks for them).
    ApiNeedsSetup,
    /// Nothing Leasehold can run stops the billing (no command that does, no API, or no way
    /// to reach the machine): the user stops it in the provider's console, then records it.
    Console,
}

/// What the plan knows, for [`choose_route`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteFacts {
    /// A power-off command that stops the billing exists for this provider.
    pub command: bool,
    /// The provider has a stop API.
    pub api: bool,
    /// The API's id and key are both saved.
    pub api_ready: bool,
    pub ssh_target_saved: bool,
}

/// The route Stop leads with. Pure: the one place that decides, so a new route (a linked
/// provider account) is added here and every caller follows.
pub fn choose_route(facts: RouteFacts) -> StopRoute {
    if facts.api && facts.api_ready {
        StopRoute::Api
    } else if facts.command && facts.ssh_target_saved {
        StopRoute::Ssh
    } else if facts.api {
        StopRoute::ApiNeedsSetup
    } else {
        StopRoute::Console
    }
}

/// How a stop recorded by hand can be checked: the API when set up, else a fresh SSH login.
pub fn check_route(facts: RouteFacts) -> Option<StopVia> {
    if facts.api && facts.api_ready {
        Some(StopVia::Api)
    } else if facts.ssh_target_saved {
        Some(StopVia::Ssh)
    } else {
        None
    }
}

/// The ledger's provider of `name`, refusing an instance that is not running.
async fn running_provider(
    store: &Store,
    name: &str,
    now: DateTime<Utc>,
) -> Result<Option<ProviderKey>, StopError> {
    let detail = ledger::show(store, name, now).await?;
    match detail.summary.state {
        Some(InstanceState::Created | InstanceState::Running | InstanceState::NoGpu) => {}
        state => {
            return Err(StopError::NotRunning {
                name: name.to_owned(),
                state: state.map_or("unknown", InstanceState::as_str),
            })
        }
    }
    Ok(ProviderKey::parse(&detail.summary.provider).ok())
}

/// What "Stop now" would do for `name`.
pub async fn plan(store: &Store, name: &str, now: DateTime<Utc>) -> Result<StopPlan, StopError> {
    let detail = ledger::show(store, name, now).await?;
    let provider = ProviderKey::parse(&detail.summary.provider).ok();
    let power_off = provider.map(ProviderKey::power_off);
    let api = power_off.as_ref().and_then(|p| p.api);
    let command = match &power_off {
        Some(p) => p.command.clone(),
        None => Some(crate::billing::GENERIC_POWER_OFF.to_owned()),
    };
    let provider_id = provider_id(store, name).await?;
    let api_key_saved = api.is_some_and(|a| stored_api_key(a).is_some());
    let ssh_target_saved = saved_request(store, name).await.is_ok();
    let account = crate::account::power::ready_for(store, name, crate::account::PowerVerb::Off)
        .await?
        .map(|link| link.account);
    let facts = RouteFacts {
        command: command.is_some(),
        api: api.is_some() || account.is_some(),
        api_ready: account.is_some() || (provider_id.is_some() && api_key_saved),
        ssh_target_saved,
    };
    Ok(StopPlan {
        instance: name.to_owned(),
        provider,
        command,
        api,
        provider_id,
        api_key_saved,
        route: choose_route(facts),
        ssh_target_saved,
        console_url: provider.and_then(|p| crate::backup::storage_of(p).console_url),
        check_by: check_route(facts),
        account,
    })
}

/// How the instance's saved SSH target is reached again (the keychain supplies any secret).
pub async fn saved_request(store: &Store, name: &str) -> Result<ConnectRequest, StopError> {
    let mut conn = store
        .pool()
        .acquire()
        .await
        .map_err(crate::store::StoreError::from)?;
    let saved = crate::connect::load_target(&mut conn, name)
        .await
        .map_err(|err| StopError::NoSavedTarget {
            name: name.to_owned(),
            detail: err.to_string(),
        })?
        .ok_or_else(|| StopError::NoSavedTarget {
            name: name.to_owned(),
            detail: "nothing saved".to_owned(),
        })?;
    Ok(ConnectRequest {
        ssh_command: saved.ssh_command.clone(),
        identity_files: match &saved.auth {
            crate::connect::AuthChoice::Key { path } => vec![std::path::PathBuf::from(path)],
            _ => Vec::new(),
        },
        ..ConnectRequest::default()
    })
}

/// The provider's id saved for `name`.
pub async fn provider_id(store: &Store, name: &str) -> Result<Option<String>, StopError> {
    let mut conn = store
        .pool()
        .acquire()
        .await
        .map_err(crate::store::StoreError::from)?;
    let Some(row) = crate::store::ledger::find_instance(&mut conn, name).await? else {
        return Err(StopError::Billing(
            crate::billing::BillingError::UnknownInstance {
                name: name.to_owned(),
            },
        ));
    };
    Ok(crate::store::provider_ids::find(&mut conn, row.id).await?)
}

/// Save the provider's id of `name` (checked for the provider's API).
pub async fn save_provider_id(
    store: &Store,
    name: &str,
    api: StopApi,
    id: &str,
    now: DateTime<Utc>,
) -> Result<String, StopError> {
    let id = check_provider_id(api, id)?;
    let mut conn = store
        .pool()
        .acquire()
        .await
        .map_err(crate::store::StoreError::from)?;
    let Some(row) = crate::store::ledger::find_instance(&mut conn, name).await? else {
        return Err(StopError::Billing(
            crate::billing::BillingError::UnknownInstance {
                name: name.to_owned(),
            },
        ));
    };
    crate::store::provider_ids::upsert(&mut conn, row.id, &id, now).await?;
    Ok(id)
}

/// Stop `name` the way its plan leads ([`choose_route`]), unattended: the opt-in "power off
/// at 100 % of the budget" uses it. The API route, else the preset's command over a fresh SSH
/// login to the saved target; a plan that needs the user (`api_needs_setup`, `console`) is
/// refused with the reason, and nothing is recorded.
pub async fn by_plan(
    store: &Store,
    name: &str,
    endpoints: &ApiEndpoints,
    wait: StopWait,
    clock: &dyn Clock,
) -> Result<StopReport, StopError> {
    let plan = plan(store, name, clock.now()).await?;
    match plan.route {
        StopRoute::Api => over_api(store, name, endpoints, None, None, wait, clock).await,
        StopRoute::Ssh => {
            let request = saved_request(store, name).await?;
            let target = request
                .connect()
                .await
                .map_err(|err| StopError::NoSavedTarget {
                    name: name.to_owned(),
                    detail: err.to_string(),
                })?;
            let answers = answers_for(request);
            let result = over_ssh(store, name, &target, &answers, None, wait, clock).await;
            target.disconnect().await;
            result
        }
        StopRoute::ApiNeedsSetup => Err(match plan.api {
            Some(api) if plan.provider_id.is_none() => StopError::NoProviderId {
                name: name.to_owned(),
                api: api.as_str(),
            },
            Some(api) => StopError::NoApiKey { api: api.as_str() },
            None => StopError::NoApi {
                provider: "this provider".to_owned(),
            },
        }),
        StopRoute::Console => Err(StopError::NeedsConsole {
            name: name.to_owned(),
        }),
    }
}

/// Time the confirmation waits before the first look: a power-off takes a moment to bite.
const FIRST_LOOK_AFTER: Duration = Duration::from_millis(500);

/// Run the power-off command on the instance, wait until it stops answering SSH, then record
/// `stopped`. `command` overrides the provider's.
#[allow(clippy::too_many_arguments)]
#[tracing::instrument(skip(store, target, answers, clock), err, fields(target = %target.describe()))]
pub async fn over_ssh(
    store: &Store,
    name: &str,
    target: &dyn Target,
    answers: Answers<'_>,
    command: Option<&str>,
    wait: StopWait,
    clock: &dyn Clock,
) -> Result<StopReport, StopError> {
    let provider = running_provider(store, name, clock.now()).await?;
    let command = match command.map(str::trim).filter(|c| !c.is_empty()) {
        Some(command) => command.to_owned(),
        None => match provider {
            Some(p) => p.power_off().command.ok_or(StopError::NoPowerOffCommand {
                provider: p.preset().display_name,
            })?,
            None => crate::billing::GENERIC_POWER_OFF.to_owned(),
        },
    };
    let started = Instant::now();
    run_power_off(target, &command, wait.command_limit).await?;
    tokio::time::sleep(FIRST_LOOK_AFTER).await;
    confirm_down(answers, wait, started).await?;
    let stopped_at = clock.now();
    ledger::record(store, name, PowerAction::Stop, stopped_at).await?;
    Ok(StopReport {
        instance: name.to_owned(),
        via: StopVia::Ssh,
        command: Some(command),
        api: None,
        waited_seconds: started.elapsed().as_secs(),
        stopped_at,
    })
}

/// How "Stop now" reaches `name` over SSH: the pasted command when one is given, else the
/// instance's saved target.
pub async fn request_for(
    store: &Store,
    name: &str,
    ssh_command: Option<&str>,
) -> Result<ConnectRequest, StopError> {
    match ssh_command {
        Some(command) => Ok(ConnectRequest {
            ssh_command: command.to_owned(),
            ..ConnectRequest::default()
        }),
        None => saved_request(store, name).await,
    }
}

/// The SSH route as both adapters run it: the power-off over `target`, confirmed by fresh
/// logins made from `request` (which never record a host key for the first time), ended early
/// by `shutdown` (the CLI's Ctrl-C) with nothing recorded.
#[allow(clippy::too_many_arguments)]
pub async fn over_ssh_with(
    store: &Store,
    name: &str,
    target: &dyn Target,
    request: ConnectRequest,
    command: Option<&str>,
    wait: StopWait,
    clock: &dyn Clock,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<StopReport, StopError> {
    let answers = answers_for(ConnectRequest {
        accept_new_host_key: false,
        ..request
    });
    tokio::select! {
        outcome = over_ssh(store, name, target, &answers, command, wait, clock) => outcome,
        () = shutdown => Err(StopError::Cancelled),
    }
}

/// Stop `name` through its provider's API, wait until the provider says it is powered off, then
/// record `stopped`. `provider_id` overrides (and replaces) the saved id; `key` overrides the
/// keychain's.
#[tracing::instrument(skip(store, endpoints, key, clock), err)]
pub async fn over_api(
    store: &Store,
    name: &str,
    endpoints: &ApiEndpoints,
    provider_id: Option<&str>,
    key: Option<Secret>,
    wait: StopWait,
    clock: &dyn Clock,
) -> Result<StopReport, StopError> {
    let provider = running_provider(store, name, clock.now()).await?;
    // A linked provider account powers it off, unless the caller brought its own id or key.
    if provider_id.is_none() && key.is_none() {
        let verb = crate::account::PowerVerb::Off;
        if crate::account::power::ready_for(store, name, verb)
            .await?
            .is_some()
        {
            let started = Instant::now();
            let report = crate::account::power::power(
                store,
                name,
                verb,
                endpoints,
                crate::account::Backoff::default(),
                wait,
                clock,
            )
            .await?;
            return Ok(StopReport {
                instance: name.to_owned(),
                via: StopVia::Api,
                command: None,
                api: provider.and_then(|p| p.power_off().api),
                waited_seconds: started.elapsed().as_secs(),
                stopped_at: report.recorded_at.unwrap_or_else(|| clock.now()),
            });
        }
    }
    let api = provider
        .and_then(|p| p.power_off().api)
        .ok_or_else(|| StopError::NoApi {
            provider: provider
                .map_or_else(|| "this provider".to_owned(), |p| p.preset().display_name),
        })?;
    let id = match provider_id {
        Some(id) => save_provider_id(store, name, api, id, clock.now()).await?,
        None => self::provider_id(store, name)
            .await?
            .ok_or_else(|| StopError::NoProviderId {
                name: name.to_owned(),
                api: api.as_str(),
            })?,
    };
    let key = key
        .or_else(|| stored_api_key(api))
        .ok_or(StopError::NoApiKey { api: api.as_str() })?;
    let started = Instant::now();
    api::stop(endpoints, api, &id, &key).await?;
    confirm_stopped_by_api(endpoints, api, &id, &key, wait, started, clock).await?;
    let stopped_at = clock.now();
    ledger::record(store, name, PowerAction::Stop, stopped_at).await?;
    Ok(StopReport {
        instance: name.to_owned(),
        via: StopVia::Api,
        command: None,
        api: Some(api),
        waited_seconds: started.elapsed().as_secs(),
        stopped_at,
    })
}

/// Ask the provider until it says the instance is powered off; a look that fails (the API
/// briefly unreachable) is asked again. `NotConfirmedByApi` past `wait.limit`.
async fn confirm_stopped_by_api(
    endpoints: &ApiEndpoints,
    api: StopApi,
    id: &str,
    key: &Secret,
    wait: StopWait,
    started: Instant,
    clock: &dyn Clock,
) -> Result<(), StopError> {
    loop {
        let last = match api::power_state(endpoints, api, id, key, clock.now()).await {
            Ok(api::PowerState::Stopped) => return Ok(()),
            Ok(api::PowerState::NotYet(word)) => word,
            Err(err @ (StopError::BadApiKey { .. } | StopError::UnknownProviderId { .. })) => {
                return Err(err)
            }
            Err(err) => err.to_string(),
        };
        if started.elapsed() >= wait.limit {
            return Err(StopError::NotConfirmedByApi {
                api: api.as_str(),
                seconds: started.elapsed().as_secs(),
                last,
            });
        }
        tokio::time::sleep(wait.every).await;
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(command: bool, api: bool, api_ready: bool, ssh: bool) -> RouteFacts {
        RouteFacts {
            command,
            api,
            api_ready,
            ssh_target_saved: ssh,
        }
    }

    #[test]
    fn the_api_leads_when_it_is_set_up_then_ssh_then_the_console() {
        // RunPod with id and key: the provider's word beats silence over SSH.
        assert_eq!(choose_route(facts(true, true, true, true)), StopRoute::Api);
        // RunPod without a key: its runpodctl over SSH works.
        assert_eq!(choose_route(facts(true, true, false, true)), StopRoute::Ssh);
        // Vast.ai without a key: only the API stops the contract.
        assert_eq!(
            choose_route(facts(false, true, false, true)),
            StopRoute::ApiNeedsSetup
        );
        // Lambda: neither; the console it is.
        assert_eq!(
            choose_route(facts(false, false, false, true)),
            StopRoute::Console
        );
        // AutoDL never connected: its shutdown cannot be run from here.
        assert_eq!(
            choose_route(facts(true, false, false, false)),
            StopRoute::Console
        );
    }

    #[test]
    fn a_hand_recorded_stop_is_checked_through_the_api_else_ssh_else_not_at_all() {
        assert_eq!(
            check_route(facts(false, true, true, true)),
            Some(StopVia::Api)
        );
        assert_eq!(
            check_route(facts(true, false, false, true)),
            Some(StopVia::Ssh)
        );
        assert_eq!(check_route(facts(true, true, false, false)), None);
    }
}
