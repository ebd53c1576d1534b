use crate::store::StoreError;
use crate::Coded;

/// What sending to a webhook refuses or fails at. No variant carries the URL or the secret:
/// both are credentials, and this text reaches logs and the screen.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    #[error(
        "{value:?} is not a webhook kind: use wecom, feishu, dingtalk, slack, serverchan or json"
    )]
    UnknownKind { value: String },
    #[error("the webhook URL is not usable: {reason}")]
    InvalidUrl { reason: &'static str },
    #[error("the webhook label is empty or longer than 80 characters")]
    InvalidLabel,
    #[error("{service} refused the message (HTTP {status}{detail})")]
    Refused {
        service: &'static str,
        status: u16,
        detail: String,
    },
    #[error("{service} could not be reached after {attempts} tries: {reason}")]
    Unreachable {
        service: &'static str,
        attempts: u32,
        reason: String,
    },
    #[error("no webhook with id {id}")]
    UnknownWebhook { id: i64 },
    #[error("the webhook's URL is missing from the OS keychain; add the webhook again")]
    MissingUrl,
    #[error("the OS keychain is unavailable: {message}")]
    Keychain { message: String },
    #[error("could not start the HTTP client: {reason}")]
    Client { reason: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for WebhookError {
    fn from(err: sqlx::Error) -> Self {
        Self::Store(StoreError::from(err))
    }
}

impl Coded for WebhookError {
    fn code(&self) -> &'static str {
        match self {
            Self::UnknownKind { .. } => "webhook.unknown_kind",
            Self::InvalidUrl { .. } => "webhook.invalid_url",
            Self::InvalidLabel => "webhook.invalid_label",
            Self::Refused { .. } => "webhook.refused",
            Self::Unreachable { .. } => "webhook.unreachable",
            Self::UnknownWebhook { .. } => "webhook.unknown_webhook",
            Self::MissingUrl => "webhook.missing_url",
            Self::Keychain { .. } => "webhook.keychain",
            Self::Client { .. } => "webhook.client",
            Self::Store(err) => err.code(),
        }
    }

    fn is_bad_input(&self) -> bool {
        matches!(
            self,
            Self::UnknownKind { .. }
                | Self::InvalidUrl { .. }
                | Self::InvalidLabel
                | Self::UnknownWebhook { .. }
        )
    }

    fn field(&self) -> Option<&'static str> {
        match self {
            Self::UnknownKind { .. } => Some("kind"),
            Self::InvalidUrl { .. } => Some("url"),
            Self::InvalidLabel => Some("label"),
            _ => None,
        }
    }

    fn params(&self) -> Vec<(&'static str, String)> {
        match self {
            Self::UnknownKind { value } => vec![("value", value.clone())],
            Self::Refused {
                service, status, ..
            } => vec![
                ("service", (*service).to_owned()),
                ("status", status.to_string()),
            ],
            Self::Unreachable {
                service, attempts, ..
            } => vec![
                ("service", (*service).to_owned()),
                ("attempts", attempts.to_string()),
            ],
            _ => Vec::new(),
        }
    }
}
