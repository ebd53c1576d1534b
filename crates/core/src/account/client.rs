//! The one place that picks a provider's file for a call, so sync, power and reconcile never
//! match on the provider themselves.

use std::collections::HashMap;

use chrono::{DateTime, NaiveDate, Utc};

use super::http::{Api, Backoff};
use super::remote::{Charge, Listing, PowerVerb, RemoteInstance};
use super::{autodl, lambda, runpod, vast, AccountError, Endpoints, Provider};
use crate::ssh::Secret;

pub fn api(
    provider: Provider,
    endpoints: &Endpoints,
    key: Secret,
    backoff: Backoff,
) -> Result<Api, AccountError> {
    Api::new(provider, endpoints.base(provider), key, backoff)
}

/// One read-only call that only a valid key gets through.
pub async fn check_key(api: &Api) -> Result<(), AccountError> {
    match api.provider() {
        Provider::Runpod => runpod::check_key(api).await,
        Provider::Vast => vast::check_key(api).await,
        Provider::Lambda => lambda::check_key(api).await,
        Provider::Autodl => autodl::check_key(api).await,
    }
}

/// Every instance on the account. `known` maps the ids already linked to the state the last
/// sync saw: where a provider needs a request per instance for details (AutoDL's snapshot),
/// only new instances and those whose state changed get one.
pub async fn list(
    api: &Api,
    now: DateTime<Utc>,
    known: &HashMap<String, super::RemoteState>,
) -> Result<Listing, AccountError> {
    match api.provider() {
        Provider::Runpod => runpod::list(api, now).await,
        Provider::Vast => vast::list(api, now).await,
        Provider::Lambda => lambda::list(api, now).await,
        Provider::Autodl => {
            let needs = |i: &RemoteInstance| known.get(&i.id) != Some(&i.state);
            autodl::list(api, now, &needs).await
        }
    }
}

/// One instance; `None` when the provider no longer has it.
pub async fn one(
    api: &Api,
    id: &str,
    now: DateTime<Utc>,
) -> Result<Option<RemoteInstance>, AccountError> {
    let found = match api.provider() {
        Provider::Runpod => runpod::one(api, id, now).await?,
        Provider::Vast => vast::one(api, id, now).await?,
        Provider::Lambda => lambda::one(api, id, now).await?,
        Provider::Autodl => autodl::one(api, id, now).await?,
    };
    Ok(found.filter(|i| i.state != super::RemoteState::Gone))
}

/// What a direct look at one id says, for an instance a listing left out.
#[derive(Debug, Clone)]
pub enum Look {
    /// The provider answered about this very id, with its state (possibly `Gone`).
    Found(Box<RemoteInstance>),
    /// The provider says it has no such instance (404, AutoDL's "not found").
    NotFound,
}

/// Look at `id` directly (RunPod `GET /v2/pods/{id}`, Vast.ai `GET /api/v0/instances/{id}/`,
/// Lambda `GET /api/v1/instances/{id}`, AutoDL `…/pro/status`). An answer about another id is
/// no answer about this one.
pub async fn look(api: &Api, id: &str, now: DateTime<Utc>) -> Result<Look, AccountError> {
    let found = match api.provider() {
        Provider::Runpod => runpod::one(api, id, now).await,
        Provider::Vast => vast::one(api, id, now).await,
        Provider::Lambda => lambda::one(api, id, now).await,
        // AutoDL's status look reads a released instance as none.
        Provider::Autodl => autodl::one(api, id, now).await,
    };
    match found {
        Ok(Some(instance)) if instance.id == id => Ok(Look::Found(Box::new(instance))),
        Ok(Some(other)) => Err(AccountError::Malformed {
            provider: api.provider().display(),
            detail: format!("asked about {id}, it answered about {}", other.id),
        }),
        Ok(None) | Err(AccountError::UnknownRemote { .. }) => Ok(Look::NotFound),
        Err(err) => Err(err),
    }
}

pub async fn power(api: &Api, id: &str, verb: PowerVerb) -> Result<(), AccountError> {
    match api.provider() {
        Provider::Runpod => runpod::power(api, id, verb).await,
        Provider::Vast => vast::power(api, id, verb).await,
        Provider::Lambda => lambda::power(api, id, verb).await,
        Provider::Autodl => autodl::power(api, id, verb).await,
    }
}

/// What the provider charged per instance per day, where it keeps such records; `None` where it
/// keeps none per instance (Lambda; AutoDL only has the account's total, see `reconcile`).
pub async fn charges(
    api: &Api,
    ids: &[String],
    from: NaiveDate,
    to: NaiveDate,
) -> Result<Option<Vec<Charge>>, AccountError> {
    match api.provider() {
        Provider::Runpod => {
            let mut all = Vec::new();
            for id in ids {
                all.extend(runpod::charges(api, id, from, to).await?);
            }
            Ok(Some(all))
        }
        Provider::Vast => {
            let mut all = Vec::new();
            for day in from.iter_days().take_while(|d| *d <= to) {
                all.extend(
                    vast::charges_on(api, day)
                        .await?
                        .into_iter()
                        .filter(|c| ids.contains(&c.remote_id)),
                );
            }
            Ok(Some(all))
        }
        Provider::Lambda | Provider::Autodl => Ok(None),
    }
}

/// The account's total spend so far, where the provider says only that ([`Charges::AccountTotal`]:
/// AutoDL's wallet); `None` elsewhere.
///
/// [`Charges::AccountTotal`]: super::providers::Charges::AccountTotal
pub async fn total_spend(api: &Api) -> Result<Option<rust_decimal::Decimal>, AccountError> {
    match api.provider() {
        Provider::Autodl => autodl::balance(api).await.map(Some),
        Provider::Runpod | Provider::Vast | Provider::Lambda => Ok(None),
    }
}
