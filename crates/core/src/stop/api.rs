//! The provider route: power on, off or release through the provider's documented API, by the
//! clients of `crate::account` (RunPod REST v2 `POST /v2/pods/{id}/action`, Vast.ai
//! `PUT /api/v0/instances/{id}/`, Lambda terminate, AutoDL Pro power calls), confirmed by the
//! one loop of [`super::confirm`].
//!
//! Which id and key: the provider account the instance is linked to when it can do the verb
//! now; else (Stop only) the id saved for the instance and the provider's key in the keychain.
//! Every provider key is kept under one name, `provider-key:PROVIDER:LABEL` (Stop's key of a
//! provider is its `default` account's); the `api-key:PROVIDER` entries older versions wrote are
//! moved there on first use. The key is never logged or put in an error.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use crate::account::http::Api;
use crate::account::{
    client, remote, AccountError, AccountRef, Backoff, Endpoints, PowerVerb, Provider,
    DEFAULT_LABEL,
};
use crate::clock::Clock;
use crate::ssh::{forget_secret, store_secret, stored_secret, Secret};
use crate::store::Store;

use super::confirm::{self, Unconfirmed, Verdict};
use super::instance::Resolved;
use super::{StopError, StopWait};

/// Where each provider's API lives: the provider accounts' endpoints.
pub type ApiEndpoints = Endpoints;

/// The keychain entry of `provider`'s key as Stop reads it: its `default` account's.
fn key_entry(provider: Provider) -> String {
    AccountRef {
        provider,
        label: DEFAULT_LABEL.to_owned(),
    }
    .keychain_entry()
}

/// The entry older versions kept Stop's key of a provider under.
fn old_key_entry(provider: Provider) -> String {
    format!("api-key:{}", provider.as_str())
}

/// Move an `api-key:PROVIDER` entry to `provider-key:PROVIDER:default`, once: afterwards the old
/// entry is gone. Where the new entry already holds a key (an account added since), that key
/// stays and the old one is dropped. A keychain that refuses the write keeps the old entry.
fn move_old_key(provider: Provider) {
    let old = old_key_entry(provider);
    let Some(key) = stored_secret(&old) else {
        return;
    };
    let new = key_entry(provider);
    if stored_secret(&new).is_none() {
        if let Err(err) = store_secret(&new, &key) {
            tracing::warn!(%err, "the old API key entry could not be moved; kept where it was");
            return;
        }
    }
    if let Err(err) = forget_secret(&old) {
        tracing::warn!(%err, "the old API key entry could not be removed");
    }
}

/// `provider`'s key in the keychain (moving an old entry first).
pub fn stored_api_key(provider: Provider) -> Option<Secret> {
    move_old_key(provider);
    stored_secret(&key_entry(provider))
}

/// Keep `provider`'s key in the keychain, under its `default` account's name.
pub fn save_api_key(provider: Provider, key: &Secret) -> Result<(), StopError> {
    if key.expose().trim().is_empty() {
        return Err(StopError::NoApiKey {
            api: provider.as_str(),
        });
    }
    store_secret(&key_entry(provider), key).map_err(|err| StopError::Keychain(err.to_string()))
}

pub fn forget_api_key(provider: Provider) -> Result<(), StopError> {
    forget_secret(&key_entry(provider)).map_err(|err| StopError::Keychain(err.to_string()))
}

/// The provider's id of an instance, checked so it is safe in a URL path: the accounts' one id
/// check, and digits only for Vast.ai (its ids are numbers).
pub fn check_provider_id(provider: Provider, id: &str) -> Result<String, StopError> {
    remote::checked_id(id)
        .filter(|id| !provider.row().numeric_ids || id.chars().all(|c| c.is_ascii_digit()))
        .ok_or_else(|| StopError::BadProviderId {
            api: provider.as_str(),
            value: id.trim().chars().take(80).collect(),
        })
}

/// Which provider, id and key a power request goes through.
pub struct ProviderRoute {
    pub provider: Provider,
    pub id: String,
    key: Secret,
    /// The account it goes through, when it is the linked one.
    pub account: Option<AccountRef>,
}

impl ProviderRoute {
    /// Through the account `resolved` is linked to; `NotLinked`, `ActionUnsupported` or the
    /// account's `NoKey` otherwise.
    pub fn linked(resolved: &Resolved, verb: PowerVerb) -> Result<Self, StopError> {
        let link = resolved
            .link
            .as_ref()
            .ok_or_else(|| AccountError::NotLinked {
                name: resolved.name.clone(),
            })?;
        let provider = link.account().provider;
        if !provider.verbs().contains(&verb) {
            return Err(AccountError::ActionUnsupported {
                provider: provider.display(),
                action: verb.as_str(),
                hint: ": Lambda instances cannot be stopped, only terminated (released)",
            }
            .into());
        }
        Ok(Self {
            provider,
            id: link.link.remote_id.clone(),
            key: link.key()?,
            account: Some(link.account().clone()),
        })
    }

    /// Stop's route: the linked account when it can power the instance off now and the caller
    /// brought no id or key of its own; else the provider's stop API with `given_id` (checked,
    /// then saved for next time) or the saved id, and `given_key` or the keychain's.
    pub async fn for_stop(
        store: &Store,
        resolved: &Resolved,
        given_id: Option<&str>,
        given_key: Option<Secret>,
        now: DateTime<Utc>,
    ) -> Result<Self, StopError> {
        if given_id.is_none()
            && given_key.is_none()
            && resolved.link_ready_for(PowerVerb::Off).is_some()
        {
            return Self::linked(resolved, PowerVerb::Off);
        }
        let provider = resolved.stop_api().ok_or_else(|| StopError::NoApi {
            provider: resolved
                .provider
                .map_or_else(|| "this provider".to_owned(), |p| p.preset().display_name),
        })?;
        let id = match given_id {
            Some(id) => {
                super::keep_provider_id(store, resolved.instance_id, provider, id, now).await?
            }
            None => resolved
                .provider_id
                .clone()
                .ok_or_else(|| StopError::NoProviderId {
                    name: resolved.name.clone(),
                    api: provider.as_str(),
                })?,
        };
        let key = given_key
            .or_else(|| stored_api_key(provider))
            .ok_or(StopError::NoApiKey {
                api: provider.as_str(),
            })?;
        Ok(Self {
            provider,
            id,
            key,
            account: None,
        })
    }

    /// A look's route (after a hand-recorded stop): as Stop's, but `None` where none is set up.
    pub fn for_look(resolved: &Resolved) -> Option<Self> {
        if resolved.link_ready_for(PowerVerb::Off).is_some() {
            return Self::linked(resolved, PowerVerb::Off).ok();
        }
        let provider = resolved.stop_api()?;
        Some(Self {
            provider,
            id: resolved.provider_id.clone()?,
            key: stored_api_key(provider)?,
            account: None,
        })
    }

    fn client(&self, endpoints: &Endpoints, backoff: Backoff) -> Result<Api, AccountError> {
        client::api(self.provider, endpoints, self.key.clone(), backoff)
    }

    /// Ask the provider to `verb` the instance, then ask again until it confirms about the same
    /// id ([`confirm::until_confirmed`]), from `started`.
    pub async fn power(
        &self,
        endpoints: &Endpoints,
        verb: PowerVerb,
        backoff: Backoff,
        wait: StopWait,
        started: Instant,
        clock: &dyn Clock,
    ) -> Result<(), Unconfirmed> {
        let api = self
            .client(endpoints, backoff)
            .map_err(Unconfirmed::Failed)?;
        client::power(&api, &self.id, verb)
            .await
            .map_err(Unconfirmed::Failed)?;
        let (api, id) = (&api, self.id.as_str());
        confirm::until_confirmed(
            move || client::one(api, id, clock.now()),
            id,
            verb,
            wait,
            started,
        )
        .await
    }

    /// Whether the provider still runs the instance now (anything but stopped or gone); an
    /// answer about another instance proves nothing and is an error.
    pub async fn still_runs(
        &self,
        endpoints: &Endpoints,
        now: DateTime<Utc>,
    ) -> Result<bool, StopError> {
        let api = self
            .client(endpoints, once())
            .map_err(|err| self.stop_error(err))?;
        let look = client::one(&api, &self.id, now)
            .await
            .map_err(|err| self.stop_error(err))?;
        match confirm::verdict(PowerVerb::Off, &self.id, look.as_ref()) {
            Verdict::Confirmed => Ok(false),
            Verdict::NotYet(_) => Ok(true),
            Verdict::OtherInstance(other) => Err(StopError::OtherInstance {
                api: self.provider.as_str(),
                id: self.id.clone(),
                other,
            }),
        }
    }

    /// A provider's refusal in Stop's words.
    pub fn stop_error(&self, err: AccountError) -> StopError {
        let api = self.provider.as_str();
        match err {
            AccountError::KeyRefused { .. } => StopError::BadApiKey { api, status: 401 },
            AccountError::UnknownRemote { .. } => StopError::UnknownProviderId {
                api,
                id: self.id.clone(),
            },
            AccountError::Refused { status, detail, .. } => StopError::ApiRefused {
                api,
                status,
                detail,
            },
            AccountError::ActionNotAllowed { detail, .. } => StopError::ApiRefused {
                api,
                status: 409,
                detail,
            },
            other => StopError::ApiUnreachable {
                api,
                detail: other.to_string(),
            },
        }
    }

    /// A stop that was not confirmed, in Stop's words.
    pub fn unconfirmed_stop(&self, outcome: Unconfirmed) -> StopError {
        match outcome {
            Unconfirmed::StillSays { seconds, last } => StopError::NotConfirmedByApi {
                api: self.provider.as_str(),
                seconds,
                last,
            },
            Unconfirmed::OtherInstance { other, .. } => StopError::OtherInstance {
                api: self.provider.as_str(),
                id: self.id.clone(),
                other,
            },
            Unconfirmed::Failed(err) => self.stop_error(err),
        }
    }

    /// A power change that was not confirmed, in the accounts' words.
    pub fn unconfirmed_power(&self, outcome: Unconfirmed) -> StopError {
        match outcome {
            Unconfirmed::StillSays { seconds, last } => AccountError::NotConfirmed {
                provider: self.provider.display(),
                seconds,
                last,
            }
            .into(),
            Unconfirmed::OtherInstance { other, .. } => StopError::OtherInstance {
                api: self.provider.as_str(),
                id: self.id.clone(),
                other,
            },
            Unconfirmed::Failed(err) => err.into(),
        }
    }
}

/// One try per look: the confirmation loop itself asks again.
fn once() -> Backoff {
    Backoff {
        first: Duration::from_secs(1),
        attempts: 1,
    }
}
