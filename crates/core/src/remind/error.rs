use crate::billing::BillingError;
use crate::store::StoreError;
use crate::Coded;

/// What reminders refuse or fail at.
#[derive(Debug, thiserror::Error)]
pub enum RemindError {
    #[error("{field} must be between {min} and {max} (got {value})")]
    OutOfRange {
        field: &'static str,
        value: i64,
        min: i64,
        max: i64,
    },
    #[error("quiet hours need a time of day such as 22:30 (got {value:?})")]
    InvalidTime { value: String },
    #[error("{value:?} is not a kind of reminder")]
    UnknownKind { value: String },
    #[error("no instance named {name:?}")]
    UnknownInstance { name: String },
    #[error("this reminder has not been shown, so it cannot be snoozed or dismissed")]
    NotFired,
    #[error("the saved reminder rules cannot be read: {reason}")]
    CorruptRules { reason: String },
    #[error(transparent)]
    Billing(#[from] BillingError),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Reading the team's working copy for team reminders (`remind::team`).
    #[error(transparent)]
    Team(Box<crate::team::TeamError>),
}

impl From<crate::team::TeamError> for RemindError {
    fn from(err: crate::team::TeamError) -> Self {
        Self::Team(Box::new(err))
    }
}

impl From<sqlx::Error> for RemindError {
    fn from(err: sqlx::Error) -> Self {
        Self::Store(StoreError::from(err))
    }
}

impl Coded for RemindError {
    fn code(&self) -> &'static str {
        match self {
            Self::OutOfRange { .. } => "remind.out_of_range",
            Self::InvalidTime { .. } => "remind.invalid_time",
            Self::UnknownKind { .. } => "remind.unknown_kind",
            Self::UnknownInstance { .. } => "remind.unknown_instance",
            Self::NotFired => "remind.not_fired",
            Self::CorruptRules { .. } => "remind.corrupt_rules",
            Self::Billing(err) => err.code(),
            Self::Store(err) => err.code(),
            Self::Team(err) => err.code(),
        }
    }

    fn is_bad_input(&self) -> bool {
        match self {
            Self::OutOfRange { .. }
            | Self::InvalidTime { .. }
            | Self::UnknownKind { .. }
            | Self::UnknownInstance { .. }
            | Self::NotFired => true,
            Self::Billing(err) => err.is_bad_input(),
            Self::Team(err) => err.is_bad_input(),
            Self::Store(_) | Self::CorruptRules { .. } => false,
        }
    }

    fn field(&self) -> Option<&'static str> {
        match self {
            Self::OutOfRange { field, .. } => Some(field),
            Self::InvalidTime { .. } => Some("quiet_hours"),
            _ => None,
        }
    }

    fn params(&self) -> Vec<(&'static str, String)> {
        match self {
            Self::OutOfRange { min, max, .. } => {
                vec![("min", min.to_string()), ("max", max.to_string())]
            }
            Self::InvalidTime { value } | Self::UnknownKind { value } => {
                vec![("value", value.clone())]
            }
            Self::UnknownInstance { name } => vec![("name", name.clone())],
            _ => Vec::new(),
        }
    }
}
