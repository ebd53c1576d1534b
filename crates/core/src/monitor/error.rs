use std::time::Duration;

use crate::billing::BillingError;
use crate::connect::ConnectError;
use crate::ssh::SshError;
use crate::store::StoreError;
use crate::target::TargetError;

/// What can stop the monitor. A dropped link or a killed `nvidia-smi` is not an error: the
/// sampler restarts the stream and marks the gap; these are the cases with nothing to sample.
#[derive(Debug, thiserror::Error)]
pub enum MonitorError {
    #[error("the sampling interval must be at least {min:?} (got {got:?})")]
    IntervalTooShort { min: Duration, got: Duration },
    #[error("nvidia-smi is not installed on {target}: no NVIDIA driver to sample")]
    NoNvidiaSmi { target: String },
    #[error("nvidia-smi on {target} cannot read the GPUs: {message}")]
    DriverFailed { target: String, message: String },
    #[error("this computer has no usable NVIDIA driver ({reason}); nothing to monitor here")]
    NoLocalDriver { reason: String },
    #[error("no instance named {0:?} is recorded; `leasehold instance add` records one")]
    UnknownInstance(String),
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error(transparent)]
    Ssh(#[from] SshError),
    #[error(transparent)]
    Connect(#[from] ConnectError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Billing(#[from] BillingError),
}

impl crate::Coded for MonitorError {
    fn code(&self) -> &'static str {
        match self {
            Self::IntervalTooShort { .. } => "monitor.interval_too_short",
            Self::NoNvidiaSmi { .. } => "monitor.no_nvidia_smi",
            Self::DriverFailed { .. } => "monitor.driver_failed",
            Self::NoLocalDriver { .. } => "monitor.no_local_driver",
            Self::UnknownInstance(_) => "monitor.unknown_instance",
            Self::Target(err) => err.code(),
            Self::Ssh(err) => err.code(),
            Self::Connect(err) => err.code(),
            Self::Store(err) => err.code(),
            Self::Billing(err) => err.code(),
        }
    }

    fn params(&self) -> Vec<(&'static str, String)> {
        match self {
            Self::DriverFailed { message, .. } => vec![("message", message.clone())],
            Self::Ssh(err) => err.params(),
            Self::Connect(err) => err.params(),
            Self::Billing(err) => err.params(),
            _ => Vec::new(),
        }
    }

    fn is_bad_input(&self) -> bool {
        match self {
            Self::IntervalTooShort { .. } | Self::UnknownInstance(_) => true,
            Self::Ssh(err) => err.is_bad_input(),
            Self::Connect(err) => err.is_bad_input(),
            Self::Billing(err) => err.is_bad_input(),
            _ => false,
        }
    }
}
