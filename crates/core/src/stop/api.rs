//! Stopping an instance through its provider's documented API, by the same clients provider
//! accounts use (`crate::account`):
//! - RunPod REST v2 (v1 was retired): `POST {base}/v2/pods/{id}/action` with
//!   `{"action": "stop"}`, `Authorization: Bearer KEY`; `GET {base}/v2/pods/{id}` then tells the
//!   pod's `status` (`RUNNING`, `EXITED`, `TERMINATED`).
//! - Vast.ai: `PUT {base}/api/v0/instances/{id}/` with `{"state": "stopped"}`; the answer
//!   `{"success": true}` means the request was taken, and `GET {base}/api/v0/instances/{id}/`
//!   tells the container's `actual_status` (`stopped`: no GPU charges any more).
//!
//! An accepted request is not a stopped meter, so [`super::over_api`] asks [`power_state`] until
//! the provider says the instance is down.
//!
//! The base URLs (scheme, host and port) are parameters so tests talk to a local stand-in; the
//! key comes from the OS keychain (or the CLI's `--api-key-env`) and is never logged or put in an
//! error.

use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::account::http::Api;
use crate::account::{AccountError, Backoff, PowerVerb, Provider, RemoteState};
use crate::billing::StopApi;
use crate::ssh::{forget_secret, store_secret, stored_secret, Secret};

use super::StopError;

/// Where each provider's API lives: the provider accounts' endpoints.
pub type ApiEndpoints = crate::account::Endpoints;

/// The keychain entry of a provider's API key.
fn key_account(api: StopApi) -> String {
    format!("api-key:{}", api.as_str())
}

pub fn stored_api_key(api: StopApi) -> Option<Secret> {
    stored_secret(&key_account(api))
}

pub fn save_api_key(api: StopApi, key: &Secret) -> Result<(), StopError> {
    if key.expose().trim().is_empty() {
        return Err(StopError::NoApiKey { api: api.as_str() });
    }
    store_secret(&key_account(api), key).map_err(|err| StopError::Keychain(err.to_string()))
}

pub fn forget_api_key(api: StopApi) -> Result<(), StopError> {
    forget_secret(&key_account(api)).map_err(|err| StopError::Keychain(err.to_string()))
}

/// The provider's id of an instance, checked so it is safe in a URL path.
pub fn check_provider_id(api: StopApi, id: &str) -> Result<String, StopError> {
    let id = id.trim();
    let ok = !id.is_empty()
        && id.len() <= 64
        && match api {
            StopApi::Vast => id.chars().all(|c| c.is_ascii_digit()),
            StopApi::Runpod => id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
        };
    if ok {
        Ok(id.to_owned())
    } else {
        Err(StopError::BadProviderId {
            api: api.as_str(),
            value: id.chars().take(80).collect(),
        })
    }
}

/// What the provider says of the instance's power.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PowerState {
    /// No GPU is billed any more (RunPod `EXITED`/`TERMINATED`, Vast.ai `stopped`).
    Stopped,
    /// Anything else, with the provider's own word for it (empty when it gave none).
    NotYet(String),
}

fn provider_of(api: StopApi) -> Provider {
    match api {
        StopApi::Runpod => Provider::Runpod,
        StopApi::Vast => Provider::Vast,
    }
}

/// The provider's word for the instance's power, from the JSON it answered.
pub fn read_power_state(
    api: StopApi,
    answer: &serde_json::Value,
    now: DateTime<Utc>,
) -> PowerState {
    let parsed = match api {
        StopApi::Runpod => crate::account::runpod::parse_pod(answer, now),
        // `show instance` wraps the instance in `instances`.
        StopApi::Vast => {
            crate::account::vast::parse_instance(answer.get("instances").unwrap_or(answer), now)
        }
    };
    match parsed {
        Ok(remote) if matches!(remote.state, RemoteState::Stopped | RemoteState::Gone) => {
            PowerState::Stopped
        }
        Ok(remote) => PowerState::NotYet(remote.provider_word),
        Err(_) => PowerState::NotYet(String::new()),
    }
}

fn stop_error(api: StopApi, id: &str, err: AccountError) -> StopError {
    let name = api.as_str();
    match err {
        AccountError::KeyRefused { .. } => StopError::BadApiKey {
            api: name,
            status: 401,
        },
        AccountError::UnknownRemote { .. } => StopError::UnknownProviderId {
            api: name,
            id: id.to_owned(),
        },
        AccountError::Refused { status, detail, .. } => StopError::ApiRefused {
            api: name,
            status,
            detail,
        },
        AccountError::ActionNotAllowed { detail, .. } => StopError::ApiRefused {
            api: name,
            status: 409,
            detail,
        },
        other => StopError::ApiUnreachable {
            api: name,
            detail: other.to_string(),
        },
    }
}

fn client(endpoints: &ApiEndpoints, api: StopApi, key: &Secret) -> Result<Api, StopError> {
    // One try per look: the confirmation loop itself asks again.
    let once = Backoff {
        first: Duration::from_secs(1),
        attempts: 1,
    };
    crate::account::client::api(provider_of(api), endpoints, key.clone(), once)
        .map_err(|err| stop_error(api, "", err))
}

/// Ask the provider whether instance `id` is powered off.
pub async fn power_state(
    endpoints: &ApiEndpoints,
    api: StopApi,
    id: &str,
    key: &Secret,
    now: DateTime<Utc>,
) -> Result<PowerState, StopError> {
    let id = check_provider_id(api, id)?;
    let client = client(endpoints, api, key)?;
    match crate::account::client::one(&client, &id, now).await {
        Ok(Some(remote)) if remote.state == RemoteState::Stopped => Ok(PowerState::Stopped),
        Ok(Some(remote)) => Ok(PowerState::NotYet(remote.provider_word)),
        // Terminated or destroyed: no GPU bills any more.
        Ok(None) => Ok(PowerState::Stopped),
        Err(err) => Err(stop_error(api, &id, err)),
    }
}

/// Ask the provider to stop instance `id`; `Ok` only when it says it took the request.
pub async fn stop(
    endpoints: &ApiEndpoints,
    api: StopApi,
    id: &str,
    key: &Secret,
) -> Result<(), StopError> {
    let id = check_provider_id(api, id)?;
    let client = client(endpoints, api, key)?;
    crate::account::client::power(&client, &id, PowerVerb::Off)
        .await
        .map_err(|err| stop_error(api, &id, err))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use serde_json::json;

    #[test]
    fn each_providers_word_for_powered_off() {
        let now = Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap();
        let runpod = |v| read_power_state(StopApi::Runpod, &v, now);
        assert_eq!(
            runpod(json!({"id": "p1", "status": "EXITED"})),
            PowerState::Stopped
        );
        assert_eq!(
            runpod(json!({"id": "p1", "status": "TERMINATED"})),
            PowerState::Stopped
        );
        assert_eq!(
            runpod(json!({"id": "p1", "status": "RUNNING"})),
            PowerState::NotYet("RUNNING".into())
        );
        let vast = |v| read_power_state(StopApi::Vast, &v, now);
        assert_eq!(
            vast(json!({"instances": {"id": 4, "actual_status": "stopped"}})),
            PowerState::Stopped
        );
        assert_eq!(
            vast(
                json!({"instances": {"id": 4, "actual_status": "running", "intended_status": "stopped"}})
            ),
            PowerState::NotYet("running".into()),
            "asked to stop is not stopped"
        );
        assert_eq!(vast(json!([1, 2])), PowerState::NotYet(String::new()));
    }
}
