use crate::backup::BackupError;
use crate::billing::BillingError;
use crate::job::JobError;
use crate::store::StoreError;
use crate::Coded;

/// Why a release check did not run, or a release was refused.
#[derive(Debug, thiserror::Error)]
pub enum ReleaseError {
    #[error("no instance named {0:?} is recorded here (see `leasehold instance add`)")]
    UnknownInstance(String),
    #[error("the confirmation {typed:?} does not match the instance name {name:?}; type the name exactly")]
    ConfirmationMismatch { name: String, typed: String },
    #[error("no release check was ever run on {0}; run `leasehold release-check` (or give --ssh), or release with --no-check REASON")]
    NeverChecked(String),
    #[error("the release is blocked by {}: resolve them or override each with a reason (--override CODE=REASON)", codes.join(", "))]
    Blocked { codes: Vec<String> },
    #[error("an override or a no-check reason needs a reason; {code} has none")]
    EmptyReason { code: String },
    #[error("{0:?} is not CODE=REASON")]
    BadOverride(String),
    #[error(transparent)]
    Backup(#[from] BackupError),
    #[error(transparent)]
    Billing(#[from] BillingError),
    #[error(transparent)]
    Job(#[from] JobError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the check's record is unreadable ({0})")]
    Corrupt(String),
}

impl Coded for ReleaseError {
    fn code(&self) -> &'static str {
        match self {
            Self::UnknownInstance(_) => "release.unknown_instance",
            Self::ConfirmationMismatch { .. } => "release.confirmation_mismatch",
            Self::NeverChecked(_) => "release.never_checked",
            Self::Blocked { .. } => "release.blocked",
            Self::EmptyReason { .. } => "release.empty_reason",
            Self::BadOverride(_) => "release.bad_override",
            Self::Backup(err) => err.code(),
            Self::Billing(err) => err.code(),
            Self::Job(err) => err.code(),
            Self::Store(err) => err.code(),
            Self::Corrupt(_) => "release.corrupt",
        }
    }

    fn is_bad_input(&self) -> bool {
        match self {
            Self::UnknownInstance(_)
            | Self::ConfirmationMismatch { .. }
            | Self::NeverChecked(_)
            | Self::Blocked { .. }
            | Self::EmptyReason { .. }
            | Self::BadOverride(_) => true,
            Self::Backup(err) => err.is_bad_input(),
            Self::Billing(err) => err.is_bad_input(),
            Self::Job(err) => err.is_bad_input(),
            _ => false,
        }
    }

    fn params(&self) -> Vec<(&'static str, String)> {
        match self {
            Self::UnknownInstance(name) | Self::NeverChecked(name) => vec![("name", name.clone())],
            Self::ConfirmationMismatch { name, .. } => vec![("name", name.clone())],
            Self::Blocked { codes } => vec![("codes", codes.join(", "))],
            Self::EmptyReason { code } => vec![("code", code.clone())],
            Self::BadOverride(text) => vec![("text", text.clone())],
            Self::Backup(err) => err.params(),
            Self::Billing(err) => err.params(),
            _ => Vec::new(),
        }
    }
}
