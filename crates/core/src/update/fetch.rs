//! Asking the update servers: each endpoint in turn until one gives a `latest.json` that reads,
//! then the download, bounded and checked against its signature before anything is handed on.
//! reqwest honours the proxy settings (`HTTPS_PROXY`, `NO_PROXY`, and the OS's on Windows).

use std::time::Duration;

use semver::Version;
use url::Url;

use super::endpoints::{checked_url, Endpoints};
use super::manifest::{parse_manifest, Artifact, Release, MAX_MANIFEST_BYTES};
use super::{signature, EndpointFailure, UpdateError};
use crate::redact::redact_urls;

/// The largest download accepted (an installer is tens of MiB).
pub const MAX_DOWNLOAD_BYTES: u64 = 400 * 1024 * 1024;
const CHECK_TIMEOUT: Duration = Duration::from_secs(20);
const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(30 * 60);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_REDIRECTS: usize = 5;

/// A `latest.json` that read, where it came from, and its JSON as served (the app hands it to the
/// plugin's installer).
#[derive(Debug, Clone)]
pub struct Fetched {
    pub release: Release,
    pub endpoint: Url,
    pub json: serde_json::Value,
}

fn client(timeout: Duration) -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(CONNECT_TIMEOUT)
        .user_agent(concat!("Leasehold/", env!("CARGO_PKG_VERSION")))
        // Release pages redirect to their storage; never to plain http elsewhere.
        .redirect(reqwest::redirect::Policy::custom(|attempt| {
            if attempt.previous().len() >= MAX_REDIRECTS {
                attempt.error("too many redirects")
            } else if checked_url(attempt.url().as_str()).is_err() {
                attempt.error("redirected to an address that is not https")
            } else {
                attempt.follow()
            }
        }))
        .build()
        .map_err(|err| err.to_string())
}

/// reqwest's error with its causes (a refused connection says so), without the URL's secrets.
fn describe(err: reqwest::Error) -> String {
    let err = err.without_url();
    let mut text = err.to_string();
    let mut source = std::error::Error::source(&err);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    redact_urls(&text).into_owned()
}

/// Reads `response`'s body, refusing it past `limit` bytes; `progress` gets the bytes so far.
async fn read_capped(
    mut response: reqwest::Response,
    limit: u64,
    mut progress: impl FnMut(u64, Option<u64>),
) -> Result<Vec<u8>, String> {
    let total = response.content_length();
    if total.is_some_and(|total| total > limit) {
        return Err(format!("larger than {limit} bytes"));
    }
    let mut body = Vec::with_capacity(usize::try_from(total.unwrap_or(0).min(limit)).unwrap_or(0));
    while let Some(chunk) = response.chunk().await.map_err(describe)? {
        if body.len() as u64 + chunk.len() as u64 > limit {
            return Err(format!("larger than {limit} bytes"));
        }
        body.extend_from_slice(&chunk);
        progress(body.len() as u64, total);
    }
    Ok(body)
}

async fn fetch_one(client: &reqwest::Client, url: &Url) -> Result<Fetched, String> {
    let response = client
        .get(url.clone())
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(describe)?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("HTTP {}", status.as_u16()));
    }
    let body = read_capped(response, MAX_MANIFEST_BYTES as u64, |_, _| {}).await?;
    let release = parse_manifest(&body).map_err(|err| err.to_string())?;
    let json = serde_json::from_slice(&body).map_err(|err| err.to_string())?;
    Ok(Fetched {
        release,
        endpoint: url.clone(),
        json,
    })
}

/// The first usable `latest.json` from `endpoints`, in order; when none gives one, every
/// endpoint's failure.
#[tracing::instrument(skip_all, err)]
pub async fn fetch_latest(endpoints: &Endpoints) -> Result<Fetched, UpdateError> {
    let client = client(CHECK_TIMEOUT).map_err(|reason| UpdateError::Unreachable {
        failures: vec![EndpointFailure {
            url: "-".to_owned(),
            reason,
        }],
    })?;
    let mut failures = Vec::new();
    for url in endpoints.urls() {
        match fetch_one(&client, url).await {
            Ok(fetched) => return Ok(fetched),
            Err(reason) => {
                let url = redact_urls(url.as_str()).into_owned();
                tracing::info!(%url, %reason, "update endpoint gave no answer");
                failures.push(EndpointFailure { url, reason });
            }
        }
    }
    Err(UpdateError::Unreachable { failures })
}

/// Downloads `artifact` and checks it against its signature with `public_key`, for version
/// `announced`; the bytes are returned only when the signature holds.
#[tracing::instrument(skip_all, fields(url = %redact_urls(artifact.url.as_str())), err)]
pub async fn download_verified(
    artifact: &Artifact,
    announced: &Version,
    public_key: Option<&str>,
    progress: impl FnMut(u64, Option<u64>),
) -> Result<Vec<u8>, UpdateError> {
    // Refused before a byte is fetched: without a key nothing could be checked.
    let Some(public_key) = public_key else {
        return Err(UpdateError::NoPublicKey);
    };
    let download = |detail: String| UpdateError::Download { detail };
    let client = client(DOWNLOAD_TIMEOUT).map_err(download)?;
    let response = client
        .get(artifact.url.clone())
        .header(reqwest::header::ACCEPT, "application/octet-stream")
        .send()
        .await
        .map_err(|err| download(describe(err)))?;
    let status = response.status();
    if !status.is_success() {
        return Err(download(format!("HTTP {}", status.as_u16())));
    }
    let bytes = read_capped(response, MAX_DOWNLOAD_BYTES, progress)
        .await
        .map_err(|detail| {
            if detail.starts_with("larger than") {
                UpdateError::TooLarge {
                    limit: MAX_DOWNLOAD_BYTES,
                }
            } else {
                download(detail)
            }
        })?;
    signature::verify(&bytes, &artifact.signature, public_key, announced)?;
    Ok(bytes)
}
