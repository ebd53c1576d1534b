//! Posting a prepared request, with bounded retries: a 5xx, a 429 or a refused connection is
//! tried again after a growing pause; any other answer is final. A timed-out POST may have
//! arrived, so it is tried again only where the service takes an idempotency key (the generic
//! JSON kind, with the same `Idempotency-Key` on every try); elsewhere it would post twice.
//! Redirects are never followed (the URL's token would travel on in `Referer` and to another
//! host), and only the first [`MAX_ANSWER_BYTES`] of an answer are read.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serialize;
use ts_rs::TS;

use super::request::prepare;
use super::{WebhookError, WebhookKind, WebhookMessage, WebhookTarget};

/// How hard to try.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retry {
    /// Tries in all, the first included.
    pub attempts: u32,
    /// Pause after the first failure; doubled after each next one, up to `max_delay`.
    pub first_delay: Duration,
    pub max_delay: Duration,
    /// Limit on one try, answer included.
    pub timeout: Duration,
}

impl Default for Retry {
    fn default() -> Self {
        Self {
            attempts: 4,
            first_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(4),
            timeout: Duration::from_secs(10),
        }
    }
}

/// A message the service accepted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct Delivery {
    pub kind: WebhookKind,
    /// Tries it took.
    pub attempts: u32,
    pub status: u16,
}

/// Most bytes of a service's answer read: the refusal codes are in the first few hundred.
pub const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// The start of the answer's body, never more than [`MAX_ANSWER_BYTES`].
async fn answer_text(mut response: reqwest::Response) -> String {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        let room = MAX_ANSWER_BYTES - body.len();
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() == MAX_ANSWER_BYTES {
            break;
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

/// The key one message carries on every try, from what is sent: the same message at the same
/// moment is the same delivery.
fn idempotency_key(prepared: &super::request::Prepared) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    hasher.update(prepared.url.as_str().as_bytes());
    hasher.update(prepared.body.to_string().as_bytes());
    hex::encode(&hasher.finalize()[..16])
}

/// The service's own refusal inside a 200 answer (DingTalk and WeCom `errcode`, Feishu and
/// ServerChan `code`), shortened and with any URL credentials cut out.
fn refusal_in_body(kind: WebhookKind, text: &str) -> Option<String> {
    if matches!(kind, WebhookKind::Slack | WebhookKind::Json) {
        return None;
    }
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let code = value
        .get("errcode")
        .or_else(|| value.get("code"))
        .and_then(serde_json::Value::as_i64)?;
    if code == 0 {
        return None;
    }
    let message = ["errmsg", "msg", "message"]
        .iter()
        .find_map(|key| value.get(*key).and_then(serde_json::Value::as_str))
        .unwrap_or("");
    Some(format!("; code {code}: {}", shortened(message)))
}

fn shortened(text: &str) -> String {
    let clean = crate::redact::redact_urls(text.trim());
    clean.chars().take(200).collect()
}

/// What went wrong, without the URL reqwest would otherwise put in its text.
fn reason(err: &reqwest::Error) -> String {
    if err.is_timeout() {
        "the request timed out".into()
    } else if err.is_connect() {
        "the connection was refused or could not be made".into()
    } else {
        "the request failed before an answer came".into()
    }
}

/// Send `message` to `target`, retrying as `retry` says. `now` goes into the signed services'
/// signatures.
#[tracing::instrument(skip_all, err(Display), fields(kind = target.kind.as_str(), host = target.url.host_str().unwrap_or("")))]
pub async fn send(
    client: &reqwest::Client,
    target: &WebhookTarget,
    message: &WebhookMessage,
    now: DateTime<Utc>,
    retry: Retry,
) -> Result<Delivery, WebhookError> {
    let prepared = prepare(target, message, now);
    let service = target.kind.service();
    let attempts = retry.attempts.max(1);
    let mut delay = retry.first_delay;
    let mut last = String::new();
    let key = target
        .kind
        .takes_idempotency_key()
        .then(|| idempotency_key(&prepared));
    for attempt in 1..=attempts {
        let mut request = client
            .post(prepared.url.clone())
            .timeout(retry.timeout)
            .json(&prepared.body);
        if let Some(key) = &key {
            request = request.header("Idempotency-Key", key);
        }
        let answer = request.send().await;
        match answer {
            Ok(response) => {
                let status = response.status();
                if status.is_success() {
                    let text = answer_text(response).await;
                    if let Some(detail) = refusal_in_body(target.kind, &text) {
                        return Err(WebhookError::Refused {
                            service,
                            status: status.as_u16(),
                            detail,
                        });
                    }
                    return Ok(Delivery {
                        kind: target.kind,
                        attempts: attempt,
                        status: status.as_u16(),
                    });
                }
                if !(status.is_server_error() || status.as_u16() == 429) {
                    let text = answer_text(response).await;
                    let detail = refusal_in_body(target.kind, &text)
                        .unwrap_or_else(|| format!(": {}", shortened(&text)));
                    return Err(WebhookError::Refused {
                        service,
                        status: status.as_u16(),
                        detail: if text.trim().is_empty() {
                            String::new()
                        } else {
                            detail
                        },
                    });
                }
                last = format!("the service answered HTTP {}", status.as_u16());
            }
            Err(err) if err.is_timeout() && !err.is_connect() && key.is_none() => {
                // It may have been posted already; a second try could post it twice.
                return Err(WebhookError::Unreachable {
                    service,
                    attempts: attempt,
                    reason: "the request timed out and was not sent again, since the service \
                             could then post the message twice"
                        .into(),
                });
            }
            Err(err) => last = reason(&err),
        }
        tracing::warn!(attempt, reason = %last, "webhook try failed");
        if attempt < attempts {
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(retry.max_delay);
        }
    }
    Err(WebhookError::Unreachable {
        service,
        attempts,
        reason: last,
    })
}

/// The HTTP client webhooks are sent with (rustls, the platform's roots), following no
/// redirect: a 3xx is the service's final answer.
pub fn client() -> Result<reqwest::Client, WebhookError> {
    reqwest::Client::builder()
        .user_agent(concat!("Leasehold/", env!("CARGO_PKG_VERSION")))
        .redirect(reqwest::redirect::Policy::none())
        .referer(false)
        .build()
        .map_err(|err| WebhookError::Client {
            reason: reason(&err),
        })
}
