use crate::target::TargetError;
use crate::Coded;

#[derive(Debug, thiserror::Error)]
pub enum WatchdogError {
    #[error(
        "--{field}: {value:?} is not a duration in whole seconds; write it like 90s, 30m or 8h"
    )]
    BadDuration { field: &'static str, value: String },
    #[error("--gpu-below: {0:?} is not a percentage from 0 to 100")]
    BadThreshold(String),
    #[error(
        "--signals: {0:?} is not one of gpu, cpu, io, net, ssh (comma-separated, at least one)"
    )]
    BadSignal(String),
    #[error("--{field}: {reason}")]
    BadSetting { field: &'static str, reason: String },
    #[error("--state-dir: {0:?} must be ~/… or an absolute path of letters, digits, '.', '_', '-' and '/', without '..'")]
    BadStateDir(String),
    #[error("`setsid` is missing on the instance, so the watchdog cannot outlive the connection")]
    NoSetsid,
    #[error("the watchdog did not start on the instance: {0}")]
    NotStarted(String),
    #[error("the instance answered something that is not a watchdog status: {0}")]
    Unreadable(String),
    #[error("the instance could not be reached: {0}")]
    Target(#[from] TargetError),
    /// Keeping the look (`status_kept`).
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}

impl Coded for WatchdogError {
    fn code(&self) -> &'static str {
        match self {
            Self::BadDuration { .. } => "watchdog.bad_duration",
            Self::BadThreshold(_) => "watchdog.bad_threshold",
            Self::BadSignal(_) => "watchdog.bad_signal",
            Self::BadSetting { .. } => "watchdog.bad_setting",
            Self::BadStateDir(_) => "watchdog.bad_state_dir",
            Self::NoSetsid => "watchdog.no_setsid",
            Self::NotStarted(_) => "watchdog.not_started",
            Self::Unreadable(_) => "watchdog.unreadable",
            Self::Target(err) => err.code(),
            Self::Store(err) => err.code(),
        }
    }

    fn is_bad_input(&self) -> bool {
        matches!(
            self,
            Self::BadDuration { .. }
                | Self::BadThreshold(_)
                | Self::BadSignal(_)
                | Self::BadSetting { .. }
                | Self::BadStateDir(_)
        )
    }

    fn field(&self) -> Option<&'static str> {
        match self {
            Self::BadDuration { field, .. } | Self::BadSetting { field, .. } => Some(field),
            Self::BadThreshold(_) => Some("gpu_below"),
            Self::BadSignal(_) => Some("signals"),
            Self::BadStateDir(_) => Some("state_dir"),
            _ => None,
        }
    }

    fn params(&self) -> Vec<(&'static str, String)> {
        match self {
            Self::BadDuration { value, .. } => vec![("value", value.clone())],
            Self::BadThreshold(value) | Self::BadSignal(value) | Self::BadStateDir(value) => {
                vec![("value", value.clone())]
            }
            Self::BadSetting { reason, .. } => vec![("reason", reason.clone())],
            Self::NotStarted(detail) | Self::Unreadable(detail) => {
                vec![("detail", detail.clone())]
            }
            _ => Vec::new(),
        }
    }
}
