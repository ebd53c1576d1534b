use std::fmt;

use reqwest::Url;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::WebhookError;
use crate::remind::Reminder;
use crate::ssh::Secret;

/// The services Leasehold can post to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum WebhookKind {
    /// 企业微信 group robot.
    Wecom,
    /// 飞书 custom bot, optionally signed.
    Feishu,
    /// 钉钉 custom robot, optionally signed.
    Dingtalk,
    /// Slack incoming webhook.
    Slack,
    /// Server酱 (ServerChan) SendKey URL.
    Serverchan,
    /// Any endpoint that takes a JSON POST.
    Json,
}

impl WebhookKind {
    pub const ALL: [Self; 6] = [
        Self::Wecom,
        Self::Feishu,
        Self::Dingtalk,
        Self::Slack,
        Self::Serverchan,
        Self::Json,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Wecom => "wecom",
            Self::Feishu => "feishu",
            Self::Dingtalk => "dingtalk",
            Self::Slack => "slack",
            Self::Serverchan => "serverchan",
            Self::Json => "json",
        }
    }

    /// The service's name for messages ("WeCom refused the message").
    pub fn service(self) -> &'static str {
        match self {
            Self::Wecom => "WeCom",
            Self::Feishu => "Feishu",
            Self::Dingtalk => "DingTalk",
            Self::Slack => "Slack",
            Self::Serverchan => "ServerChan",
            Self::Json => "the JSON webhook",
        }
    }

    /// Whether a try can be repeated without a second post: the generic JSON kind sends an
    /// `Idempotency-Key` header (the IETF draft most receivers follow); the chat services'
    /// robot webhooks take no such key.
    pub fn takes_idempotency_key(self) -> bool {
        matches!(self, Self::Json)
    }

    pub fn parse(text: &str) -> Result<Self, WebhookError> {
        Self::ALL
            .into_iter()
            .find(|k| k.as_str() == text.trim().to_ascii_lowercase())
            .ok_or_else(|| WebhookError::UnknownKind {
                value: text.to_owned(),
            })
    }

    /// Whether the service signs with a secret (DingTalk, Feishu).
    pub fn signs(self) -> bool {
        matches!(self, Self::Dingtalk | Self::Feishu)
    }
}

/// Where to post: the kind, the URL and, for the signed services, the secret. Debug output
/// hides the URL's path and query and the secret.
#[derive(Clone)]
pub struct WebhookTarget {
    pub kind: WebhookKind,
    pub url: Url,
    pub secret: Option<Secret>,
}

impl fmt::Debug for WebhookTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebhookTarget")
            .field("kind", &self.kind)
            .field("host", &self.url.host_str())
            .field("secret", &self.secret.as_ref().map(|_| "***"))
            .finish()
    }
}

/// Longest URL accepted; a webhook URL is a host and a token, not a document.
const MAX_URL_CHARS: usize = 2048;

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

impl WebhookTarget {
    /// Check the URL (http or https, a host, no spaces) and pair it with the kind.
    pub fn new(kind: WebhookKind, url: &str, secret: Option<Secret>) -> Result<Self, WebhookError> {
        let url = url.trim();
        if url.is_empty() {
            return Err(WebhookError::InvalidUrl {
                reason: "it is empty",
            });
        }
        if url.chars().count() > MAX_URL_CHARS {
            return Err(WebhookError::InvalidUrl {
                reason: "it is longer than 2048 characters",
            });
        }
        let parsed = Url::parse(url).map_err(|_| WebhookError::InvalidUrl {
            reason: "it is not a URL such as https://host/path",
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(WebhookError::InvalidUrl {
                reason: "only http and https URLs can receive webhooks",
            });
        }
        if parsed.host_str().is_none_or(str::is_empty) {
            return Err(WebhookError::InvalidUrl {
                reason: "it names no host",
            });
        }
        // Plain http would carry the URL's token and the message across the network in clear;
        // it is for a relay on this computer only.
        if parsed.scheme() == "http" && !is_loopback(&parsed) {
            return Err(WebhookError::InvalidUrl {
                reason: "plain http is only for this computer (127.0.0.1, localhost); use https",
            });
        }
        Ok(Self {
            kind,
            url: parsed,
            secret: secret.filter(|s| !s.expose().is_empty()),
        })
    }

    /// `KIND=URL` as the CLI takes it.
    pub fn parse_pair(pair: &str, secret: Option<Secret>) -> Result<Self, WebhookError> {
        let (kind, url) = pair.split_once('=').ok_or(WebhookError::InvalidUrl {
            reason: "write it as KIND=URL, e.g. slack=https://hooks.slack.com/services/…",
        })?;
        Self::new(WebhookKind::parse(kind)?, url, secret)
    }
}

/// What to post: a title, a line or two of text, and for the JSON kind the structured fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct WebhookMessage {
    pub title: String,
    pub text: String,
    /// Extra fields for the generic JSON kind (`instance`, `kind`, `due_at`, …).
    #[ts(type = "Record<string, unknown>")]
    pub fields: serde_json::Map<String, serde_json::Value>,
}

impl WebhookMessage {
    /// The message a reminder sends: the instance, what is due, and the hourly burn.
    pub fn from_reminder(reminder: &Reminder) -> Self {
        let mut fields = serde_json::Map::new();
        fields.insert("instance".into(), reminder.instance.clone().into());
        fields.insert("kind".into(), reminder.kind.as_str().into());
        fields.insert("due_at".into(), reminder.due_at.to_rfc3339().into());
        fields.insert("detail".into(), reminder.detail.clone().into());
        fields.insert(
            "burn_rate_per_hour".into(),
            reminder.burn_rate_per_hour.to_string().into(),
        );
        fields.insert("currency".into(), reminder.currency.clone().into());
        Self {
            title: format!(
                "Leasehold: {} ({})",
                reminder.instance,
                reminder.kind.as_str()
            ),
            text: format!(
                "{}. Burning {} {}/h now.",
                reminder.detail, reminder.burn_rate_per_hour, reminder.currency
            ),
            fields,
        }
    }

    /// What the test button sends.
    pub fn test() -> Self {
        Self {
            title: "Leasehold: test message".into(),
            text: "Reminders from Leasehold (算力租用管家) will arrive here.".into(),
            fields: serde_json::Map::new(),
        }
    }
}
