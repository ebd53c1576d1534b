//! One way to call a provider: the key in the provider's header, a timeout, a capped body, and
//! back-off on 429 and passing failures (Vast.ai answers 429 without `Retry-After`, so the wait
//! is ours: doubling from `Backoff::first`). Errors name the provider and its own words, never
//! the key or the URL's query.

use std::time::Duration;

use reqwest::{Method, StatusCode};

use super::providers::KeyHeader;
use super::{AccountError, Provider};
use crate::ssh::Secret;

/// How long to wait between tries, and how many tries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub first: Duration,
    pub attempts: u32,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            first: Duration::from_secs(1),
            attempts: 4,
        }
    }
}

/// The largest answer read from a provider (a listing of a few hundred instances is far less).
const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;
const TIMEOUT: Duration = Duration::from_secs(30);

/// A provider's API at one base URL with one key.
pub struct Api {
    client: reqwest::Client,
    base: String,
    provider: Provider,
    key: Secret,
    backoff: Backoff,
}

/// A provider's answer: the status and the JSON body (`Null` for an empty one).
pub struct Answer {
    pub status: u16,
    pub body: serde_json::Value,
}

impl Api {
    pub fn new(
        provider: Provider,
        base: &str,
        key: Secret,
        backoff: Backoff,
    ) -> Result<Self, AccountError> {
        let client = reqwest::Client::builder()
            .timeout(TIMEOUT)
            // The key travels in a header; a redirect must not carry it elsewhere.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|err| AccountError::Unreachable {
                provider: provider.display(),
                detail: err.to_string(),
            })?;
        // A refused `LEASEHOLD_<PROVIDER>_API_URL` never falls back to the real API.
        if let Some(var) = base.strip_prefix(super::REFUSED_BASE) {
            return Err(AccountError::BadEndpoint {
                var: var.to_owned(),
                why: "refused".to_owned(),
            });
        }
        Ok(Self {
            client,
            base: base.trim_end_matches('/').to_owned(),
            provider,
            key,
            backoff,
        })
    }

    pub fn provider(&self) -> Provider {
        self.provider
    }

    fn url(&self, path: &str, query: &[(&str, String)]) -> Result<url::Url, AccountError> {
        let mut url = url::Url::parse(&format!("{}{path}", self.base)).map_err(|err| {
            AccountError::Unreachable {
                provider: self.provider.display(),
                detail: err.to_string(),
            }
        })?;
        if !query.is_empty() {
            url.query_pairs_mut()
                .extend_pairs(query.iter().map(|(k, v)| (*k, v.as_str())));
        }
        Ok(url)
    }

    /// Send one request, trying again after 429, 5xx and network failures; any other answer
    /// (2xx or 4xx) is returned for the caller to read.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<&serde_json::Value>,
    ) -> Result<Answer, AccountError> {
        let name = self.provider.display();
        let mut wait = self.backoff.first;
        let mut last_error = None;
        for attempt in 1..=self.backoff.attempts.max(1) {
            let mut request = self
                .client
                .request(method.clone(), self.url(path, query)?)
                .header(reqwest::header::ACCEPT, "application/json");
            request = match self.provider.row().key_header {
                // An empty key is a keyless call (Vast.ai's offer search): no header at all.
                _ if self.key.expose().is_empty() => request,
                KeyHeader::Bare => {
                    request.header(reqwest::header::AUTHORIZATION, self.key.expose())
                }
                KeyHeader::Bearer => request.bearer_auth(self.key.expose()),
            };
            if let Some(body) = body {
                request = request.json(body);
            }
            let outcome: Result<(), AccountError> = match request.send().await {
                Ok(response) => {
                    let status = response.status();
                    if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
                        Err(if status == StatusCode::TOO_MANY_REQUESTS {
                            AccountError::RateLimited {
                                provider: name,
                                attempts: attempt,
                            }
                        } else {
                            AccountError::Refused {
                                provider: name,
                                status: status.as_u16(),
                                detail: status.canonical_reason().unwrap_or("").to_owned(),
                            }
                        })
                    } else {
                        return read(name, status.as_u16(), response, self.key.expose()).await;
                    }
                }
                Err(err) => Err(AccountError::Unreachable {
                    provider: name,
                    detail: network_words(err, "the request"),
                }),
            };
            last_error = outcome.err();
            if attempt < self.backoff.attempts {
                tracing::info!(
                    provider = name,
                    attempt,
                    "provider busy or unreachable; waiting"
                );
                tokio::time::sleep(wait).await;
                wait = wait.saturating_mul(2).min(Duration::from_secs(30));
            }
        }
        Err(last_error.unwrap_or(AccountError::Unreachable {
            provider: name,
            detail: "no answer".to_owned(),
        }))
    }
}

/// What went wrong on the wire, in plain words: a timeout says so, a TLS failure says TLS and
/// the innermost reason (reqwest's own text is only "error sending request"), never the URL.
pub fn network_words(err: reqwest::Error, during: &str) -> String {
    let err = err.without_url();
    let mut chain = Vec::new();
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(&err);
    while let Some(cause) = source {
        chain.push(cause.to_string());
        source = cause.source();
    }
    let innermost = chain.last().cloned().unwrap_or_else(|| err.to_string());
    let all = chain.join(" ").to_ascii_lowercase();
    if err.is_timeout() || all.contains("timed out") || all.contains("deadline") {
        format!(
            "timeout: no complete answer to {during} within {} s",
            TIMEOUT.as_secs()
        )
    } else if [
        // rustls's own words for a failed handshake (it never says "TLS" itself).
        "certificate",
        "tls",
        "handshake",
        "ssl",
        "corrupt message",
        "alert received",
        "invalidcontenttype",
        "unknownissuer",
        "notvalidforname",
    ]
    .iter()
    .any(|word| all.contains(word))
    {
        format!("TLS failed: {innermost}")
    } else if err.is_connect() {
        format!("could not connect: {innermost}")
    } else {
        format!("{err}: {innermost}")
    }
}

async fn read(
    provider: &'static str,
    status: u16,
    mut response: reqwest::Response,
    key: &str,
) -> Result<Answer, AccountError> {
    let mut bytes = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if bytes.len() + chunk.len() > MAX_BODY_BYTES {
                    return Err(AccountError::Malformed {
                        provider,
                        detail: format!("answer larger than {} MiB", MAX_BODY_BYTES >> 20),
                    });
                }
                bytes.extend_from_slice(&chunk);
            }
            Ok(None) => break,
            Err(err) => {
                return Err(AccountError::Unreachable {
                    provider,
                    detail: network_words(err, "the answer's body"),
                })
            }
        }
    }
    // Nothing the provider says is kept or shown before the key is cut out of it (a 401 may
    // quote the Authorization header back).
    let text = crate::redact::redact_secrets(&String::from_utf8_lossy(&bytes), Some(key));
    let body = if text.trim().is_empty() {
        serde_json::Value::Null
    } else {
        match serde_json::from_str(&text) {
            Ok(body) => body,
            // An error page in HTML is still an error with a status to report.
            Err(_) if !(200..300).contains(&status) => {
                serde_json::Value::String(super::remote::clean_text(&text, 200))
            }
            Err(err) => {
                return Err(AccountError::Malformed {
                    provider,
                    detail: format!("not JSON: {err}"),
                })
            }
        }
    };
    Ok(Answer { status, body })
}

/// The provider's own words in an error body: RFC 9457 `detail`/`title` (RunPod v2), `msg` /
/// `error` (Vast.ai, AutoDL), `error.message` (Lambda), or a plain string.
pub fn provider_words(body: &serde_json::Value) -> String {
    let pick = |v: &serde_json::Value| -> Option<String> {
        for key in ["detail", "msg", "message", "title", "error"] {
            match v.get(key) {
                Some(serde_json::Value::String(s)) if !s.trim().is_empty() => {
                    return Some(s.clone())
                }
                Some(inner @ serde_json::Value::Object(_)) => {
                    if let Some(s) = inner.get("message").and_then(|m| m.as_str()) {
                        return Some(s.to_owned());
                    }
                }
                _ => {}
            }
        }
        None
    };
    let words = match body {
        serde_json::Value::String(s) => s.clone(),
        other => pick(other).unwrap_or_default(),
    };
    super::remote::clean_text(&words, 200)
}

impl Answer {
    /// Whether the provider accepted the request (2xx).
    pub fn accepted(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// This answer when the provider accepted the request, else what its refusal means
    /// ([`refusal`]): the one status check every client and the market make.
    pub fn or_refusal(
        self,
        provider: &'static str,
        id: Option<&str>,
    ) -> Result<Self, AccountError> {
        if self.accepted() {
            Ok(self)
        } else {
            Err(refusal(provider, &self, id))
        }
    }
}

/// The common reading of a non-2xx answer.
pub fn refusal(provider: &'static str, answer: &Answer, id: Option<&str>) -> AccountError {
    let detail = provider_words(&answer.body);
    match answer.status {
        401 | 403 => AccountError::KeyRefused {
            provider,
            detail: if detail.is_empty() {
                format!("HTTP {}", answer.status)
            } else {
                detail
            },
        },
        404 if id.is_some() => AccountError::UnknownRemote {
            provider,
            id: id.unwrap_or_default().to_owned(),
        },
        status => AccountError::Refused {
            provider,
            status,
            detail,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_providers_error_words() {
        assert_eq!(
            provider_words(
                &json!({"title": "Unauthorized", "status": 401, "detail": "invalid api key"})
            ),
            "invalid api key"
        );
        assert_eq!(
            provider_words(
                &json!({"success": false, "error": "auth_error", "msg": "Invalid user key"})
            ),
            "Invalid user key"
        );
        assert_eq!(
            provider_words(
                &json!({"error": {"code": "global/invalid-api-key", "message": "API key was invalid"}})
            ),
            "API key was invalid"
        );
        assert_eq!(
            provider_words(&json!({"code": "AuthFailed", "msg": "token 无效"})),
            "token 无效"
        );
        assert_eq!(provider_words(&json!(null)), "");
    }
}
