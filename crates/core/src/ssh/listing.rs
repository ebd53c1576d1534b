//! Listing a remote folder tree for a download, with our own READDIR loop.
//!
//! russh-sftp's `read_dir` reads until the server says EOF and only then hands the entries back,
//! so an instance that never says EOF grows our memory until it is gone, and one that stops
//! answering holds the backup for the request timeout of every call. Here each READDIR reply is
//! counted against a cap for the whole tree as it arrives, and each must come within the
//! transfer's stall timeout.

use std::path::{Path, PathBuf};
use std::time::Duration;

use russh_sftp::client::error::Error as SftpClientError;
use russh_sftp::client::rawsession::RawSftpSession;
use russh_sftp::protocol::{FileAttributes, StatusCode};
use tokio::sync::OwnedSemaphorePermit;

use super::file_io::{sftp_error, Planned};
use super::safe_name::local_child;
use super::sftp::remote_join;
use super::target::SshTarget;
use super::SshError;

/// Deepest folder a download walks into.
const MAX_DEPTH: usize = 256;
/// Most files and folders one SFTP download lists. A folder of more small files goes through
/// the packed stream instead (`backup::packed`); this bounds what a lying listing can cost.
pub(crate) const MAX_ENTRIES: usize = 200_000;
/// Names of skipped links kept for the report (the count is always exact).
pub const MAX_LINKS_NAMED: usize = 20;

/// A remote tree as a download plans it.
pub(crate) struct Listing {
    pub(crate) files: Vec<Planned>,
    pub(crate) dirs: Vec<PathBuf>,
    /// Symbolic links met (SFTP lists them without following): their count and a few names.
    pub(crate) links: u64,
    pub(crate) links_named: Vec<String>,
}

/// An SFTP session without russh-sftp's high-level helpers, for the listing loop.
pub(crate) struct RawSftp {
    session: RawSftpSession,
    _permit: OwnedSemaphorePermit,
}

impl SshTarget {
    pub(crate) async fn raw_sftp(&self) -> Result<RawSftp, SshError> {
        let (channel, permit) = self.session_channel().await?;
        let failed = |message: String| SshError::Sftp {
            path: String::new(),
            message,
        };
        channel
            .request_subsystem(true, "sftp")
            .await
            .map_err(|err| failed(format!("the server has no SFTP subsystem: {err}")))?;
        let session = RawSftpSession::new(channel.into_stream());
        session.set_timeout(60);
        session
            .init()
            .await
            .map_err(|err| failed(format!("cannot start SFTP: {err}")))?;
        Ok(RawSftp {
            session,
            _permit: permit,
        })
    }
}

fn too_many(dir: &str) -> SshError {
    sftp_error(
        dir,
        format!(
            "the folder is deeper than {MAX_DEPTH} levels or holds more than {MAX_ENTRIES} \
             entries; copy a smaller part of it"
        ),
    )
}

async fn within<T>(
    stall: Duration,
    path: &str,
    request: impl std::future::Future<Output = Result<T, SftpClientError>>,
) -> Result<Result<T, SftpClientError>, SshError> {
    tokio::time::timeout(stall, request)
        .await
        .map_err(|_| SshError::TransferStalled {
            path: path.to_owned(),
            after: stall,
        })
}

/// One folder's entries (without `.` and `..`), each reply counted against `budget` as it
/// comes.
async fn list_folder(
    sftp: &RawSftpSession,
    dir: &str,
    stall: Duration,
    budget: &mut usize,
) -> Result<Vec<(String, FileAttributes)>, SshError> {
    let handle = within(stall, dir, sftp.opendir(dir))
        .await?
        .map_err(|err| sftp_error(dir, err))?
        .handle;
    let mut entries = Vec::new();
    let outcome = loop {
        match within(stall, dir, sftp.readdir(handle.as_str())).await {
            Err(stalled) => break Err(stalled),
            Ok(Ok(name)) => {
                if name.files.is_empty() {
                    // A server that answers "nothing more" without EOF would loop forever.
                    break Ok(());
                }
                for file in name.files {
                    if file.filename == "." || file.filename == ".." {
                        continue;
                    }
                    if *budget == 0 {
                        return Err(too_many(dir));
                    }
                    *budget -= 1;
                    entries.push((file.filename, file.attrs));
                }
            }
            Ok(Err(SftpClientError::Status(status))) if status.status_code == StatusCode::Eof => {
                break Ok(())
            }
            Ok(Err(err)) => break Err(sftp_error(dir, err)),
        }
    };
    // Best effort: a server that lied this far may not answer the close either.
    let _ = within(stall, dir, sftp.close(handle)).await;
    outcome.map(|()| entries)
}

/// Plan the download of `remote` into `local`: every name checked before anything is written,
/// links counted and left alone.
pub(crate) async fn plan_download(
    lister: &RawSftp,
    remote: &str,
    local: &Path,
    stall: Duration,
) -> Result<Listing, SshError> {
    let sftp = &lister.session;
    let meta = within(stall, remote, sftp.stat(remote))
        .await?
        .map_err(|err| sftp_error(remote, err))?
        .attrs;
    let mut listing = Listing {
        files: Vec::new(),
        dirs: Vec::new(),
        links: 0,
        links_named: Vec::new(),
    };
    if !meta.file_type().is_dir() {
        listing.files.push(Planned {
            local: local.to_owned(),
            remote: remote.to_owned(),
            size: meta.len(),
        });
        listing.dirs.extend(local.parent().map(Path::to_owned));
        return Ok(listing);
    }
    listing.dirs.push(local.to_owned());
    let mut budget = MAX_ENTRIES;
    let mut stack = vec![(remote.to_owned(), local.to_owned(), 0usize)];
    while let Some((dir, local_dir, depth)) = stack.pop() {
        if depth > MAX_DEPTH {
            return Err(too_many(&dir));
        }
        let mut entries = list_folder(sftp, &dir, stall, &mut budget).await?;
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, meta) in entries {
            // Checked for the whole tree before anything is written.
            let target =
                local_child(&local_dir, &name).map_err(|reason| SshError::UnsafeRemoteName {
                    folder: dir.clone(),
                    name: name.clone(),
                    reason,
                })?;
            let source = remote_join(&dir, &name);
            if meta.file_type().is_dir() {
                listing.dirs.push(target.clone());
                stack.push((source, target, depth + 1));
            } else if meta.file_type().is_file() {
                listing.files.push(Planned {
                    local: target,
                    remote: source,
                    size: meta.len(),
                });
            } else if meta.file_type().is_symlink() {
                listing.links += 1;
                if listing.links_named.len() < MAX_LINKS_NAMED {
                    listing.links_named.push(source);
                }
            }
        }
    }
    Ok(listing)
}
