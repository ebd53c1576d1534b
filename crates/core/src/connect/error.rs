use crate::ssh::SshError;
use crate::store::StoreError;
use crate::Coded;

/// What can go wrong connecting a rental. SSH and store failures keep their own codes
/// (`ssh.auth_failed`, `store.query`) so the UI explains them the same way everywhere.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error(transparent)]
    Ssh(#[from] SshError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("there is no rental named `{0}`")]
    UnknownInstance(String),
    #[error("`{0}` has no saved SSH connection yet: open Connect and test the connection first")]
    NoTarget(String),
    #[error("the terminal {0} is already closed")]
    UnknownTerminal(u64),
    #[error("the saved connection of `{instance}` cannot be read ({what}); connect it again")]
    CorruptTarget {
        instance: String,
        what: &'static str,
    },
}

impl Coded for ConnectError {
    fn code(&self) -> &'static str {
        match self {
            Self::Ssh(err) => err.code(),
            Self::Store(err) => err.code(),
            Self::UnknownInstance(_) => "connect.unknown_instance",
            Self::NoTarget(_) => "connect.no_target",
            Self::UnknownTerminal(_) => "connect.unknown_terminal",
            Self::CorruptTarget { .. } => "connect.corrupt_target",
        }
    }

    fn is_bad_input(&self) -> bool {
        match self {
            Self::Ssh(err) => err.is_bad_input(),
            Self::UnknownInstance(_) | Self::NoTarget(_) => true,
            Self::Store(_) | Self::UnknownTerminal(_) | Self::CorruptTarget { .. } => false,
        }
    }
}

impl From<sqlx::Error> for ConnectError {
    fn from(err: sqlx::Error) -> Self {
        Self::Store(StoreError::Query(err))
    }
}
