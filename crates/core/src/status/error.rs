use crate::billing::BillingError;
use crate::store::StoreError;
use crate::Coded;

/// What deciding or acting on a status refuses or fails at.
#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    #[error("the monitor has not seen how many GPUs {name:?} has in the last 15 minutes; open its dashboard while it runs, then try again")]
    NoGpuCount { name: String },
    #[error("{name:?} already has {gpus} GPUs in its rules; nothing to update")]
    GpuCountMatches { name: String, gpus: u32 },
    #[error(transparent)]
    Billing(#[from] BillingError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for StatusError {
    fn from(err: sqlx::Error) -> Self {
        Self::Store(StoreError::from(err))
    }
}

impl Coded for StatusError {
    fn code(&self) -> &'static str {
        match self {
            Self::NoGpuCount { .. } => "status.no_gpu_count",
            Self::GpuCountMatches { .. } => "status.gpu_count_matches",
            Self::Billing(err) => err.code(),
            Self::Store(err) => err.code(),
        }
    }

    fn is_bad_input(&self) -> bool {
        match self {
            Self::NoGpuCount { .. } | Self::GpuCountMatches { .. } => true,
            Self::Billing(err) => err.is_bad_input(),
            Self::Store(_) => false,
        }
    }

    fn params(&self) -> Vec<(&'static str, String)> {
        match self {
            Self::NoGpuCount { name } => vec![("name", name.clone())],
            Self::GpuCountMatches { name, gpus } => {
                vec![("name", name.clone()), ("gpus", gpus.to_string())]
            }
            _ => Vec::new(),
        }
    }
}
