//! The Stop wing: every way Leasehold powers a rental on, off or releases it, and the record
//! that follows only once the change is confirmed ("Stop now" from the instance page, a
//! reminder or the tray, `leasehold stop`, `account power`, the budget power-off).
//!
//! - [`instance`]: the instance resolved once per request ([`Resolved`]: name, ledger, rules,
//!   provider, saved id, saved SSH target, provider-account link), passed down to every route.
//! - [`ssh`]: the one SSH route (the provider's power-off command, confirmed when fresh logins
//!   find nothing there).
//! - [`api`]: the one provider route (on, off, release through `crate::account`'s clients;
//!   the linked account, else the saved id and the keychain's `provider-key:PROVIDER:default`),
//!   the one id check and the one keychain naming.
//! - [`confirm`]: the one confirmation loop of the provider route, which believes only an
//!   answer about the id it asked about.
//! - [`power`]: `account power` (on, off, release of a linked instance).
//! - [`by_hand`]: "already stopped at the provider — record it", then look.
//! - [`PowerOff`]: how each provider's instance is powered off for real.
//!
//! A command that fails, an instance that keeps answering or an API that refuses records
//! nothing: the ledger must never say "stopped" while the meter runs. Power verbs are
//! `crate::account::PowerVerb` everywhere; the ledger's event is `billing::PowerAction`.

pub mod api;
mod by_hand;
pub mod confirm;
mod error;
pub mod instance;
pub mod power;
mod power_off;
pub mod ssh;

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::account::{AccountRef, Backoff, PowerVerb, Provider};
use crate::billing::{ledger, PowerAction, ProviderKey};
use crate::clock::Clock;
use crate::ssh::Secret;
use crate::store::Store;
use crate::target::Target;

pub use api::{
    check_provider_id, forget_api_key, save_api_key, stored_api_key, ApiEndpoints, ProviderRoute,
};
pub use by_hand::{
    check_again, check_recorded_stop, look_for, record_by_hand, record_by_hand_and_look, HandCheck,
    HandStop, Look, LOOK_AGAIN_AFTER,
};
pub use error::StopError;
pub use instance::{resolves_on_this_thread, Resolved};
pub use power::{power, PowerReport};
pub use power_off::{PowerOff, GENERIC_POWER_OFF};
pub use ssh::{answers_for, Answers, LoginLook, SshStop};

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
    /// The provider whose API stopped it (API route).
    pub api: Option<Provider>,
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
    /// The provider whose stop API works with a saved id and key.
    pub api: Option<Provider>,
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
    pub account: Option<AccountRef>,
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

impl Resolved {
    /// What the plan knows of this instance (the keychain is asked whether a key is saved).
    fn route_facts(&self) -> (RouteFacts, Option<AccountRef>, bool) {
        let power_off = self.provider.map(ProviderKey::power_off);
        let command = power_off.as_ref().is_none_or(|p| p.command.is_some());
        let api = self.stop_api();
        let api_key_saved = api.is_some_and(|a| stored_api_key(a).is_some());
        let account = self
            .link_ready_for(PowerVerb::Off)
            .map(|link| link.account().clone());
        let facts = RouteFacts {
            command,
            api: api.is_some() || account.is_some(),
            api_ready: account.is_some() || (self.provider_id.is_some() && api_key_saved),
            ssh_target_saved: self.saved_target.is_ok(),
        };
        (facts, account, api_key_saved)
    }

    /// How "Stop now" would go.
    pub fn plan(&self) -> StopPlan {
        let (facts, account, api_key_saved) = self.route_facts();
        let command = match self.provider {
            Some(p) => p.power_off().command,
            None => Some(GENERIC_POWER_OFF.to_owned()),
        };
        StopPlan {
            instance: self.name.clone(),
            provider: self.provider,
            command,
            api: self.stop_api(),
            provider_id: self.provider_id.clone(),
            api_key_saved,
            route: choose_route(facts),
            ssh_target_saved: facts.ssh_target_saved,
            console_url: self
                .provider
                .and_then(|p| crate::backup::storage_of(p).console_url),
            check_by: check_route(facts),
            account,
        }
    }
}

/// What "Stop now" would do for `name`.
pub async fn plan(store: &Store, name: &str, now: DateTime<Utc>) -> Result<StopPlan, StopError> {
    Ok(Resolved::resolve(store, name, now).await?.plan())
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

/// Save the provider's id of `name` (checked for `provider`'s API).
pub async fn save_provider_id(
    store: &Store,
    name: &str,
    provider: Provider,
    id: &str,
    now: DateTime<Utc>,
) -> Result<String, StopError> {
    let instance_id = {
        let mut conn = store
            .pool()
            .acquire()
            .await
            .map_err(crate::store::StoreError::from)?;
        crate::store::ledger::find_instance(&mut conn, name)
            .await?
            .ok_or_else(|| crate::billing::BillingError::UnknownInstance {
                name: name.to_owned(),
            })?
            .id
    };
    keep_provider_id(store, instance_id, provider, id, now).await
}

/// Check `id` for `provider`'s API and keep it as the provider id of `instance_id`.
async fn keep_provider_id(
    store: &Store,
    instance_id: i64,
    provider: Provider,
    id: &str,
    now: DateTime<Utc>,
) -> Result<String, StopError> {
    let id = check_provider_id(provider, id)?;
    let mut conn = store
        .pool()
        .acquire()
        .await
        .map_err(crate::store::StoreError::from)?;
    crate::store::provider_ids::upsert(&mut conn, instance_id, &id, now).await?;
    Ok(id)
}

/// Which way a "Stop now" request goes.
pub enum StopBy<'a> {
    /// The provider's API: the linked account, else the saved id and the keychain's key;
    /// `provider_id` overrides (and replaces) the saved id, `key` the keychain's.
    Api {
        provider_id: Option<&'a str>,
        key: Option<Secret>,
    },
    /// The power-off command over SSH.
    Ssh(SshStop<'a>),
}

/// "Stop now", as the app's dialog and `leasehold stop` ask for it: `name` resolved once, then
/// the route `by`; `shutdown` (the CLI's Ctrl-C) ends it early with nothing recorded.
pub async fn now(
    store: &Store,
    name: &str,
    by: StopBy<'_>,
    endpoints: &ApiEndpoints,
    wait: StopWait,
    clock: &dyn Clock,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<StopReport, StopError> {
    let resolved = Resolved::resolve(store, name, clock.now()).await?;
    match by {
        StopBy::Ssh(how) => ssh::stop(store, &resolved, how, wait, clock, shutdown).await,
        StopBy::Api { provider_id, key } => {
            tokio::select! {
                outcome = api_stop(store, &resolved, endpoints, provider_id, key, wait, clock) => outcome,
                () = shutdown => Err(StopError::Cancelled),
            }
        }
    }
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
    let resolved = Resolved::resolve(store, name, clock.now()).await?;
    let plan = resolved.plan();
    match plan.route {
        StopRoute::Api => api_stop(store, &resolved, endpoints, None, None, wait, clock).await,
        StopRoute::Ssh => {
            let how = SshStop::default();
            ssh::stop(store, &resolved, how, wait, clock, std::future::pending()).await
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

/// Run the power-off command over `target`, wait until `answers` finds the instance silent,
/// then record `stopped`. `command` overrides the provider's.
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
    let resolved = Resolved::resolve(store, name, clock.now()).await?;
    ssh::over_target(store, &resolved, target, answers, command, wait, clock).await
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
    let resolved = Resolved::resolve(store, name, clock.now()).await?;
    api_stop(store, &resolved, endpoints, provider_id, key, wait, clock).await
}

/// The provider route of Stop: the power-off, the one confirmation loop, then `stopped`.
async fn api_stop(
    store: &Store,
    resolved: &Resolved,
    endpoints: &ApiEndpoints,
    provider_id: Option<&str>,
    key: Option<Secret>,
    wait: StopWait,
    clock: &dyn Clock,
) -> Result<StopReport, StopError> {
    resolved.require_running()?;
    let route = ProviderRoute::for_stop(store, resolved, provider_id, key, clock.now()).await?;
    let started = Instant::now();
    route
        .power(
            endpoints,
            PowerVerb::Off,
            Backoff::default(),
            wait,
            started,
            clock,
        )
        .await
        .map_err(|outcome| route.unconfirmed_stop(outcome))?;
    let stopped_at = clock.now();
    ledger::record(store, &resolved.name, PowerAction::Stop, stopped_at).await?;
    if route.account.is_some() {
        power::seen(store, resolved, PowerVerb::Off, stopped_at).await?;
    }
    Ok(StopReport {
        instance: resolved.name.clone(),
        via: StopVia::Api,
        command: None,
        api: Some(route.provider),
        waited_seconds: started.elapsed().as_secs(),
        stopped_at,
    })
}

#[cfg(test)]
mod tests;
