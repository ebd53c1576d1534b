//! Stopping an instance through its provider's documented API:
//! - RunPod: `POST {base}/pods/{podId}/stop`, `Authorization: Bearer KEY`
//!   (https://docs.runpod.io/api-reference/pods/POST/pods/podId/stop); a 2xx answer means the
//!   request was taken. `GET {base}/pods/{podId}` then tells the pod's `desiredStatus`
//!   (`RUNNING`, `EXITED`, `TERMINATED`).
//! - Vast.ai: `PUT {base}/api/v0/instances/{id}/` with `{"state": "stopped"}`, `Authorization:
//!   Bearer KEY` (https://docs.vast.ai/api-reference/instances/manage-instance); the answer
//!   `{"success": true}` means the request was taken. `GET {base}/api/v0/instances/{id}/` then
//!   tells the container's `actual_status` (`stopped`: no GPU charges any more).
//!
//! An accepted request is not a stopped meter, so [`super::over_api`] asks [`power_state`] until
//! the provider says the instance is down.
//!
//! The base URLs are parameters so tests talk to a local stand-in; the key comes from the OS
//! keychain (or the CLI's `--api-key-env`) and is never logged or put in an error.

use std::time::Duration;

use crate::billing::StopApi;
use crate::ssh::{forget_secret, store_secret, stored_secret, Secret};

use super::StopError;

/// Where each provider's API lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiEndpoints {
    /// RunPod's REST API, up to and including `/v1`.
    pub runpod: String,
    /// Vast.ai's console, without `/api/v0`.
    pub vast: String,
}

impl Default for ApiEndpoints {
    fn default() -> Self {
        Self {
            runpod: "https://rest.runpod.io/v1".to_owned(),
            vast: "https://console.vast.ai".to_owned(),
        }
    }
}

impl ApiEndpoints {
    /// The defaults, or `LEASEHOLD_RUNPOD_API_URL` / `LEASEHOLD_VAST_API_URL` where set (a
    /// proxy, or a test's stand-in).
    pub fn from_env() -> Self {
        let defaults = Self::default();
        let read = |var: &str, default: String| {
            std::env::var(var)
                .ok()
                .filter(|v| !v.trim().is_empty())
                .unwrap_or(default)
        };
        Self {
            runpod: read("LEASEHOLD_RUNPOD_API_URL", defaults.runpod),
            vast: read("LEASEHOLD_VAST_API_URL", defaults.vast),
        }
    }
}

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

const API_TIMEOUT: Duration = Duration::from_secs(30);

/// What the provider says of the instance's power.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PowerState {
    /// No GPU is billed any more (RunPod `EXITED`/`TERMINATED`, Vast.ai `stopped`).
    Stopped,
    /// Anything else, with the provider's own word for it (empty when it gave none).
    NotYet(String),
}

/// The provider's word for the pod's power, from the JSON it answered.
pub fn read_power_state(api: StopApi, answer: &serde_json::Value) -> PowerState {
    let word = match api {
        // The REST API's field; the newer API calls it `status`.
        StopApi::Runpod => answer.get("desiredStatus").or_else(|| answer.get("status")),
        // `show instance` wraps the instance in `instances`.
        StopApi::Vast => answer
            .get("instances")
            .unwrap_or(answer)
            .get("actual_status"),
    }
    .and_then(serde_json::Value::as_str)
    .unwrap_or("")
    .trim()
    .to_owned();
    let stopped = match api {
        StopApi::Runpod => matches!(word.to_ascii_uppercase().as_str(), "EXITED" | "TERMINATED"),
        StopApi::Vast => word.eq_ignore_ascii_case("stopped"),
    };
    if stopped {
        PowerState::Stopped
    } else {
        PowerState::NotYet(word.chars().take(40).collect())
    }
}

fn client(api: StopApi) -> Result<reqwest::Client, StopError> {
    reqwest::Client::builder()
        .timeout(API_TIMEOUT)
        .build()
        .map_err(|err| StopError::ApiUnreachable {
            api: api.as_str(),
            detail: err.to_string(),
        })
}

/// Ask the provider whether instance `id` is powered off.
pub async fn power_state(
    endpoints: &ApiEndpoints,
    api: StopApi,
    id: &str,
    key: &Secret,
) -> Result<PowerState, StopError> {
    let id = check_provider_id(api, id)?;
    let name = api.as_str();
    let url = match api {
        StopApi::Runpod => format!("{}/pods/{id}", endpoints.runpod.trim_end_matches('/')),
        StopApi::Vast => format!(
            "{}/api/v0/instances/{id}/",
            endpoints.vast.trim_end_matches('/')
        ),
    };
    let response = client(api)?
        .get(url)
        .bearer_auth(key.expose())
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|err| StopError::ApiUnreachable {
            api: name,
            detail: err.without_url().to_string(),
        })?;
    let status = response.status().as_u16();
    match status {
        200..=299 => {
            let answer: serde_json::Value =
                response
                    .json()
                    .await
                    .map_err(|err| StopError::ApiUnreachable {
                        api: name,
                        detail: err.without_url().to_string(),
                    })?;
            Ok(read_power_state(api, &answer))
        }
        401 | 403 => Err(StopError::BadApiKey { api: name, status }),
        404 => Err(StopError::UnknownProviderId { api: name, id }),
        _ => Err(StopError::ApiUnreachable {
            api: name,
            detail: format!("HTTP {status}"),
        }),
    }
}

/// Ask the provider to stop instance `id`; `Ok` only when it says it did.
pub async fn stop(
    endpoints: &ApiEndpoints,
    api: StopApi,
    id: &str,
    key: &Secret,
) -> Result<(), StopError> {
    let id = check_provider_id(api, id)?;
    let name = api.as_str();
    let client = client(api)?;
    let request = match api {
        StopApi::Runpod => client.post(format!(
            "{}/pods/{id}/stop",
            endpoints.runpod.trim_end_matches('/')
        )),
        StopApi::Vast => client
            .put(format!(
                "{}/api/v0/instances/{id}/",
                endpoints.vast.trim_end_matches('/')
            ))
            .json(&serde_json::json!({ "state": "stopped" })),
    };
    let response = request
        .bearer_auth(key.expose())
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|err| StopError::ApiUnreachable {
            api: name,
            // reqwest's text names the URL, never the Authorization header.
            detail: err.without_url().to_string(),
        })?;
    let status = response.status().as_u16();
    let body: String = response
        .text()
        .await
        .unwrap_or_default()
        .chars()
        .take(300)
        .collect();
    match status {
        200..=299 => match api {
            StopApi::Runpod => Ok(()),
            StopApi::Vast => {
                let said_yes = serde_json::from_str::<serde_json::Value>(&body)
                    .ok()
                    .and_then(|v| v.get("success").and_then(serde_json::Value::as_bool))
                    == Some(true);
                if said_yes {
                    Ok(())
                } else {
                    Err(StopError::ApiRefused {
                        api: name,
                        status,
                        detail: body,
                    })
                }
            }
        },
        401 | 403 => Err(StopError::BadApiKey { api: name, status }),
        404 => Err(StopError::UnknownProviderId { api: name, id }),
        _ => Err(StopError::ApiRefused {
            api: name,
            status,
            detail: body,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_providers_word_for_powered_off() {
        let runpod = |v| read_power_state(StopApi::Runpod, &v);
        assert_eq!(
            runpod(json!({"desiredStatus": "EXITED"})),
            PowerState::Stopped
        );
        assert_eq!(
            runpod(json!({"desiredStatus": "TERMINATED"})),
            PowerState::Stopped
        );
        assert_eq!(runpod(json!({"status": "EXITED"})), PowerState::Stopped);
        assert_eq!(
            runpod(json!({"desiredStatus": "RUNNING"})),
            PowerState::NotYet("RUNNING".into())
        );
        let vast = |v| read_power_state(StopApi::Vast, &v);
        assert_eq!(
            vast(json!({"instances": {"actual_status": "stopped"}})),
            PowerState::Stopped
        );
        assert_eq!(
            vast(json!({"instances": {"actual_status": "running", "intended_status": "stopped"}})),
            PowerState::NotYet("running".into()),
            "asked to stop is not stopped"
        );
        assert_eq!(
            vast(json!({"actual_status": null})),
            PowerState::NotYet(String::new())
        );
        assert_eq!(vast(json!([1, 2])), PowerState::NotYet(String::new()));
    }
}
