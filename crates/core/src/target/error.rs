//! How running a command on a target can fail.
//!
//! A failure of the transport underneath (SSH today) travels as a boxed [`TransportError`], so
//! it keeps its own code (`ssh.host_key_changed`, `ssh.auth_failed`, …) and the UI can still say
//! exactly what went wrong, while this module knows nothing of the transports built on it.

use std::time::Duration;

/// A transport's own error, carried through [`TargetError::Transport`].
pub trait TransportError: crate::Coded + Send + Sync + 'static {
    /// True when nothing ran because the connection itself failed (unreachable, host key,
    /// login), as opposed to one command or transfer failing on a working link.
    fn is_connection_failure(&self) -> bool;
}

#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("the command did not finish within {0:?}")]
    Timeout(Duration),
    #[error("could not start the command: {0}")]
    Spawn(String),
    #[error("the connection to the instance failed: {0}")]
    Connection(String),
    /// The transport failed; it keeps its own code.
    #[error("{0}")]
    Transport(Box<dyn TransportError>),
}

impl TargetError {
    /// True when the link (not the command) failed: the caller should stop using this target.
    pub fn is_connection_failure(&self) -> bool {
        match self {
            Self::Connection(_) => true,
            Self::Transport(err) => err.is_connection_failure(),
            Self::Timeout(_) | Self::Spawn(_) => false,
        }
    }
}

impl crate::Coded for TargetError {
    fn code(&self) -> &'static str {
        match self {
            Self::Timeout(_) => "target.timeout",
            Self::Spawn(_) => "target.spawn_failed",
            Self::Connection(_) => "target.connection_failed",
            Self::Transport(err) => crate::Coded::code(err.as_ref()),
        }
    }

    fn is_bad_input(&self) -> bool {
        match self {
            Self::Transport(err) => crate::Coded::is_bad_input(err.as_ref()),
            Self::Timeout(_) | Self::Spawn(_) | Self::Connection(_) => false,
        }
    }
}
