use crate::billing::BillingError;
use crate::connect::ConnectError;
use crate::store::StoreError;
use crate::Coded;

/// What can go wrong with a provider account. No variant ever carries the API key: provider
/// texts are cut short and stripped of control characters before they land here.
#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    #[error("{0:?} is not a provider Leasehold can sync; use runpod, vast, lambda or autodl")]
    UnknownProvider(String),
    #[error("{0:?} is not a usable account label (1–40 letters, digits, '-', '_' or '.')")]
    BadLabel(String),
    #[error("the environment variable {0} is not set or is empty")]
    NoKeyInEnv(String),
    #[error("{provider} already has an account labelled {label:?}; remove it first or choose another label")]
    DuplicateAccount {
        provider: &'static str,
        label: String,
    },
    #[error("no {provider} account labelled {label:?}; add it first with `leasehold account add`")]
    UnknownAccount { provider: String, label: String },
    #[error("no API key for the {provider} account {label:?} is in the keychain (or in ${env}); add the account again")]
    NoKey {
        provider: &'static str,
        label: String,
        env: String,
    },
    #[error("{provider} refused the API key: {detail}")]
    KeyRefused {
        provider: &'static str,
        detail: String,
    },
    #[error("{provider} could not be reached: {detail}")]
    Unreachable {
        provider: &'static str,
        detail: String,
    },
    #[error("{provider} answered HTTP {status}: {detail}")]
    Refused {
        provider: &'static str,
        status: u16,
        detail: String,
    },
    #[error("{provider} kept answering 429 (too many requests) after {attempts} tries; try again in a minute")]
    RateLimited {
        provider: &'static str,
        attempts: u32,
    },
    #[error("{provider} sent an answer Leasehold cannot read ({detail})")]
    Malformed {
        provider: &'static str,
        detail: String,
    },
    #[error("{provider} does not know the instance {id}")]
    UnknownRemote { provider: &'static str, id: String },
    #[error("{provider} will not {action} this instance now: {detail}")]
    ActionNotAllowed {
        provider: &'static str,
        action: &'static str,
        detail: String,
    },
    #[error("{provider} cannot {action} instances through its API{hint}")]
    ActionUnsupported {
        provider: &'static str,
        action: &'static str,
        hint: &'static str,
    },
    #[error("{name} is not linked to a provider account; link it or sync the account first")]
    NotLinked { name: String },
    #[error("{provider} took the request but still reports the instance as {last:?} after {seconds} s; nothing was recorded")]
    NotConfirmed {
        provider: &'static str,
        seconds: u64,
        last: String,
    },
    #[error("{0:?} is not a date (use YYYY-MM-DD)")]
    BadDate(String),
    #[error("the range ends before it starts ({from} to {to})")]
    BadRange { from: String, to: String },
    #[error("{var} is refused as a provider's base URL ({why}); fix or unset it — Leasehold never falls back to the real API")]
    BadEndpoint { var: String, why: String },
    #[error("{name} has no held price change to accept")]
    NothingHeld { name: String },
    #[error("the key could not be kept in the OS keychain: {0}")]
    Keychain(String),
    #[error("the release checklist blocks releasing {name}: {blocked}; resolve it on the Release page (or `leasehold release`) first")]
    ReleaseBlocked { name: String, blocked: String },
    #[error(transparent)]
    Billing(#[from] BillingError),
    #[error(transparent)]
    Connect(#[from] ConnectError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Coded for AccountError {
    fn code(&self) -> &'static str {
        match self {
            Self::UnknownProvider(_) => "account.unknown_provider",
            Self::BadLabel(_) => "account.bad_label",
            Self::NoKeyInEnv(_) => "account.no_key_in_env",
            Self::DuplicateAccount { .. } => "account.duplicate",
            Self::UnknownAccount { .. } => "account.unknown_account",
            Self::NoKey { .. } => "account.no_key",
            Self::KeyRefused { .. } => "account.key_refused",
            Self::Unreachable { .. } => "account.unreachable",
            Self::Refused { .. } => "account.refused",
            Self::RateLimited { .. } => "account.rate_limited",
            Self::Malformed { .. } => "account.malformed",
            Self::UnknownRemote { .. } => "account.unknown_remote",
            Self::ActionNotAllowed { .. } => "account.action_not_allowed",
            Self::ActionUnsupported { .. } => "account.action_unsupported",
            Self::NotLinked { .. } => "account.not_linked",
            Self::NotConfirmed { .. } => "account.not_confirmed",
            Self::BadDate(_) => "account.bad_date",
            Self::BadRange { .. } => "account.bad_range",
            Self::Keychain(_) => "account.keychain",
            Self::BadEndpoint { .. } => "account.bad_endpoint",
            Self::NothingHeld { .. } => "account.nothing_held",
            Self::ReleaseBlocked { .. } => "account.release_blocked",
            Self::Billing(err) => err.code(),
            Self::Connect(err) => err.code(),
            Self::Store(err) => err.code(),
        }
    }

    fn params(&self) -> Vec<(&'static str, String)> {
        match self {
            Self::UnknownProvider(v)
            | Self::BadLabel(v)
            | Self::NoKeyInEnv(v)
            | Self::BadDate(v) => {
                vec![("value", v.clone())]
            }
            Self::Keychain(detail) => vec![("detail", detail.clone())],
            Self::BadEndpoint { var, why } => vec![("var", var.clone()), ("why", why.clone())],
            Self::NothingHeld { name } => vec![("name", name.clone())],
            Self::DuplicateAccount { provider, label } => {
                vec![
                    ("provider", (*provider).to_owned()),
                    ("label", label.clone()),
                ]
            }
            Self::UnknownAccount { provider, label } => {
                vec![("provider", provider.clone()), ("label", label.clone())]
            }
            Self::NoKey {
                provider, label, ..
            } => {
                vec![
                    ("provider", (*provider).to_owned()),
                    ("label", label.clone()),
                ]
            }
            Self::KeyRefused { provider, detail }
            | Self::Unreachable { provider, detail }
            | Self::Malformed { provider, detail } => {
                vec![
                    ("provider", (*provider).to_owned()),
                    ("detail", detail.clone()),
                ]
            }
            Self::Refused {
                provider,
                status,
                detail,
            } => vec![
                ("provider", (*provider).to_owned()),
                ("status", status.to_string()),
                ("detail", detail.clone()),
            ],
            Self::RateLimited { provider, .. } => vec![("provider", (*provider).to_owned())],
            Self::UnknownRemote { provider, id } => {
                vec![("provider", (*provider).to_owned()), ("id", id.clone())]
            }
            Self::ActionNotAllowed {
                provider, detail, ..
            } => vec![
                ("provider", (*provider).to_owned()),
                ("detail", detail.clone()),
            ],
            Self::ActionUnsupported { provider, .. } => vec![("provider", (*provider).to_owned())],
            Self::NotLinked { name } => vec![("name", name.clone())],
            Self::NotConfirmed {
                provider,
                seconds,
                last,
            } => vec![
                ("provider", (*provider).to_owned()),
                ("seconds", seconds.to_string()),
                ("last", last.clone()),
            ],
            Self::BadRange { from, to } => vec![("from", from.clone()), ("to", to.clone())],
            Self::ReleaseBlocked { name, blocked } => {
                vec![("name", name.clone()), ("blocked", blocked.clone())]
            }
            Self::Billing(err) => err.params(),
            Self::Connect(err) => err.params(),
            Self::Store(err) => err.params(),
        }
    }

    fn is_bad_input(&self) -> bool {
        match self {
            Self::UnknownProvider(_)
            | Self::BadLabel(_)
            | Self::NoKeyInEnv(_)
            | Self::DuplicateAccount { .. }
            | Self::UnknownAccount { .. }
            | Self::KeyRefused { .. }
            | Self::NotLinked { .. }
            | Self::BadDate(_)
            | Self::BadRange { .. }
            | Self::BadEndpoint { .. }
            | Self::NothingHeld { .. }
            | Self::ActionUnsupported { .. } => true,
            Self::Billing(err) => err.is_bad_input(),
            Self::Connect(err) => err.is_bad_input(),
            _ => false,
        }
    }
}
