use crate::billing::BillingError;
use crate::store::StoreError;
use crate::target::TargetError;
use crate::Coded;

#[derive(Debug, thiserror::Error)]
pub enum StopError {
    #[error("{name} is {state} in the ledger; only a running instance can be stopped")]
    NotRunning { name: String, state: &'static str },
    #[error("powering {provider} instances off from inside does not stop the billing; stop it through the provider's API (--api) or its console")]
    NoPowerOffCommand { provider: String },
    #[error("{provider} has no stop API Leasehold knows; stop it over SSH")]
    NoApi { provider: String },
    #[error(
        "no {api} id is saved for {name}; give the provider's id of this instance (--provider-id)"
    )]
    NoProviderId { name: String, api: &'static str },
    #[error("{value:?} is not a {api} id (letters, digits, '-' and '_'; Vast.ai ids are numbers)")]
    BadProviderId { api: &'static str, value: String },
    #[error("no {api} API key is saved; save one first (it is kept in the OS keychain)")]
    NoApiKey { api: &'static str },
    #[error("the API key could not be saved in the OS keychain: {0}")]
    Keychain(String),
    #[error("{api} refused the API key (HTTP {status}); check it in the provider's console")]
    BadApiKey { api: &'static str, status: u16 },
    #[error("{api} does not know the instance {id} (HTTP 404)")]
    UnknownProviderId { api: &'static str, id: String },
    #[error("{api} did not stop the instance (HTTP {status}): {detail}")]
    ApiRefused {
        api: &'static str,
        status: u16,
        detail: String,
    },
    #[error("{api} could not be reached: {detail}")]
    ApiUnreachable { api: &'static str, detail: String },
    #[error("the power-off command failed on the instance (exit {exit}): {detail}")]
    PowerOffFailed { exit: u32, detail: String },
    #[error("the instance still answers SSH {seconds} s after the power-off command; it was not recorded as stopped")]
    NotConfirmed { seconds: u64 },
    #[error("the power-off command was sent, but the instance could not be confirmed down ({reason}); it was not recorded as stopped and may still be billing: check the provider's console")]
    CouldNotConfirm { reason: String },
    #[error("{api} took the stop request but still reports the instance as {last:?} after {seconds} s; it was not recorded as stopped")]
    NotConfirmedByApi {
        api: &'static str,
        seconds: u64,
        last: String,
    },
    #[error("{api} answered about instance {other} when asked about {id}; an answer about another instance confirms nothing, so nothing was recorded")]
    OtherInstance {
        api: &'static str,
        id: String,
        other: String,
    },
    #[error("the stop was interrupted before it was confirmed; it was not recorded as stopped, and the instance may be powering off: check the provider's console")]
    Cancelled,
    #[error("Leasehold cannot power {name} off from here; stop it in the provider's console, then record the stop")]
    NeedsConsole { name: String },
    #[error("no SSH target is saved for {name} ({detail}); connect it first, or give --ssh")]
    NoSavedTarget { name: String, detail: String },
    #[error("the instance could not be reached: {0}")]
    Target(#[from] TargetError),
    /// The login that would run the power-off failed; nothing ran.
    #[error(transparent)]
    Connect(crate::ssh::SshError),
    #[error(transparent)]
    Billing(#[from] BillingError),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The instance's provider account powered it (or failed to).
    #[error(transparent)]
    Account(Box<crate::account::AccountError>),
}

impl From<crate::account::AccountError> for StopError {
    fn from(err: crate::account::AccountError) -> Self {
        Self::Account(Box::new(err))
    }
}

impl Coded for StopError {
    fn code(&self) -> &'static str {
        match self {
            Self::NotRunning { .. } => "stop.not_running",
            Self::NoPowerOffCommand { .. } => "stop.no_power_off_command",
            Self::NoApi { .. } => "stop.no_api",
            Self::NoProviderId { .. } => "stop.no_provider_id",
            Self::BadProviderId { .. } => "stop.bad_provider_id",
            Self::NoApiKey { .. } => "stop.no_api_key",
            Self::Keychain(_) => "stop.keychain",
            Self::BadApiKey { .. } => "stop.bad_api_key",
            Self::UnknownProviderId { .. } => "stop.unknown_provider_id",
            Self::ApiRefused { .. } => "stop.api_refused",
            Self::ApiUnreachable { .. } => "stop.api_unreachable",
            Self::PowerOffFailed { .. } => "stop.power_off_failed",
            Self::NotConfirmed { .. } => "stop.not_confirmed",
            Self::NotConfirmedByApi { .. } => "stop.not_confirmed_by_api",
            Self::CouldNotConfirm { .. } => "stop.could_not_confirm",
            Self::NoSavedTarget { .. } => "stop.no_saved_target",
            Self::OtherInstance { .. } => "stop.other_instance",
            Self::Cancelled => "stop.cancelled",
            Self::NeedsConsole { .. } => "stop.needs_console",
            Self::Target(err) => err.code(),
            Self::Connect(err) => err.code(),
            Self::Billing(err) => err.code(),
            Self::Store(err) => err.code(),
            Self::Account(err) => err.code(),
        }
    }

    fn is_bad_input(&self) -> bool {
        match self {
            Self::NotRunning { .. }
            | Self::NoPowerOffCommand { .. }
            | Self::NoApi { .. }
            | Self::NoProviderId { .. }
            | Self::BadProviderId { .. }
            | Self::NoApiKey { .. }
            | Self::NoSavedTarget { .. }
            | Self::NeedsConsole { .. } => true,
            Self::Billing(err) => err.is_bad_input(),
            Self::Connect(err) => err.is_bad_input(),
            Self::Account(err) => err.is_bad_input(),
            _ => false,
        }
    }

    fn field(&self) -> Option<&'static str> {
        match self {
            Self::NoProviderId { .. } | Self::BadProviderId { .. } => Some("provider_id"),
            Self::NoApiKey { .. } | Self::BadApiKey { .. } => Some("api_key"),
            _ => None,
        }
    }

    fn params(&self) -> Vec<(&'static str, String)> {
        match self {
            Self::NotRunning { name, state } => {
                vec![("name", name.clone()), ("state", (*state).to_owned())]
            }
            Self::NoPowerOffCommand { provider } | Self::NoApi { provider } => {
                vec![("provider", provider.clone())]
            }
            Self::NoProviderId { api, .. } | Self::NoApiKey { api } => {
                vec![("api", (*api).to_owned())]
            }
            Self::BadApiKey { api, status } => {
                vec![("api", (*api).to_owned()), ("status", status.to_string())]
            }
            Self::UnknownProviderId { api, id } => {
                vec![("api", (*api).to_owned()), ("id", id.clone())]
            }
            Self::ApiRefused {
                api,
                status,
                detail,
            } => vec![
                ("api", (*api).to_owned()),
                ("status", status.to_string()),
                ("detail", detail.clone()),
            ],
            Self::ApiUnreachable { api, detail } => {
                vec![("api", (*api).to_owned()), ("detail", detail.clone())]
            }
            Self::PowerOffFailed { exit, detail } => {
                vec![("exit", exit.to_string()), ("detail", detail.clone())]
            }
            Self::NotConfirmed { seconds } => vec![("seconds", seconds.to_string())],
            Self::CouldNotConfirm { reason } => vec![("reason", reason.clone())],
            Self::NotConfirmedByApi { api, seconds, last } => vec![
                ("api", (*api).to_owned()),
                ("seconds", seconds.to_string()),
                ("last", last.clone()),
            ],
            Self::NoSavedTarget { name, .. } | Self::NeedsConsole { name } => {
                vec![("name", name.clone())]
            }
            Self::OtherInstance { api, id, other } => vec![
                ("api", (*api).to_owned()),
                ("id", id.clone()),
                ("other", other.clone()),
            ],
            Self::Connect(err) => err.params(),
            Self::Account(err) => err.params(),
            _ => Vec::new(),
        }
    }
}
