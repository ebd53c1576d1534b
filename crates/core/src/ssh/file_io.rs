//! The pieces both directions of an SFTP copy share: one planned file, what copying it
//! produced, the read/write size, the stall guard and the two error shapes. Kept apart so
//! `transfer` (planning, verifying) and `upload` (sending one file) depend on it, not on each
//! other.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::SshError;

/// Local reads and writes move this much at a time.
pub(crate) const CHUNK: usize = 1024 * 1024;

/// One file of a transfer: where it comes from and goes to, and its size.
pub(crate) struct Planned {
    pub(crate) local: PathBuf,
    pub(crate) remote: String,
    pub(crate) size: u64,
}

/// A file after copying: its local SHA-256 and whether it was resumed.
pub(crate) struct Copied {
    pub(crate) sha256: String,
    pub(crate) resumed: u64,
}

pub(crate) fn sftp_error(path: &str, err: impl std::fmt::Display) -> SshError {
    SshError::Sftp {
        path: path.to_owned(),
        message: err.to_string(),
    }
}

/// Run one read or write of remote data, giving up when nothing moves for `stall` (a dead link
/// can leave TCP retrying for many minutes; the user would rather resume).
pub(crate) async fn within<T>(
    stall: Duration,
    path: &str,
    operation: impl std::future::Future<Output = std::io::Result<T>>,
) -> Result<T, SshError> {
    match tokio::time::timeout(stall, operation).await {
        Ok(result) => result.map_err(|err| sftp_error(path, err)),
        Err(_) => Err(SshError::TransferStalled {
            path: path.to_owned(),
            after: stall,
        }),
    }
}

pub(crate) fn local_error(path: &Path, err: &std::io::Error) -> SshError {
    SshError::LocalIo {
        path: path.to_owned(),
        message: err.to_string(),
    }
}
