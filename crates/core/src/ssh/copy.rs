//! `copy SRC DST` as scp users expect it: remote paths are written `:path`, and copying into an
//! existing folder puts the source inside it under its own name.

use std::path::PathBuf;

use super::safe_name::local_child;
use super::sftp::{remote_join, remote_path, ProgressSink, TransferOptions, TransferReport};
use super::target::SshTarget;
use super::SshError;

/// One side of a copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CopyPath {
    Local(PathBuf),
    /// A path on the instance; relative paths start in the login user's home.
    Remote(String),
}

impl CopyPath {
    /// `:path` (or `host:path`, as pasted from scp) is remote; anything else is local.
    pub fn parse(text: &str) -> Self {
        if let Some(path) = text.strip_prefix(':') {
            return Self::Remote(if path.is_empty() {
                ".".to_owned()
            } else {
                path.to_owned()
            });
        }
        Self::Local(PathBuf::from(text))
    }
}

fn base_name(path: &str) -> Option<&str> {
    path.trim_end_matches('/')
        .rsplit('/')
        .next()
        .filter(|name| !name.is_empty() && *name != "." && *name != "..")
}

impl SshTarget {
    /// Copy between this computer and the instance, in either direction.
    pub async fn copy(
        &self,
        from: &CopyPath,
        to: &CopyPath,
        options: TransferOptions,
        progress: ProgressSink<'_>,
    ) -> Result<TransferReport, SshError> {
        match (from, to) {
            (CopyPath::Local(local), CopyPath::Remote(remote)) => {
                let mut remote = remote_path(remote);
                if self.remote_is_dir(&remote).await? {
                    let name = local
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .ok_or_else(|| bad_copy("the source has no file name"))?;
                    remote = remote_join(&remote, &name);
                }
                self.upload(local, &remote, options, progress).await
            }
            (CopyPath::Remote(remote), CopyPath::Local(local)) => {
                let remote = remote_path(remote);
                let local = if local.is_dir() {
                    let name = base_name(&remote)
                        .ok_or_else(|| bad_copy("the remote source has no file name"))?;
                    // `aux.txt` or `a:b` would open a device or a data stream on Windows.
                    local_child(local, name).map_err(|reason| SshError::UnsafeRemoteName {
                        folder: local.display().to_string(),
                        name: name.to_owned(),
                        reason,
                    })?
                } else {
                    local.clone()
                };
                self.download(&remote, &local, options, progress).await
            }
            _ => Err(bad_copy(
                "exactly one of SRC and DST must be on the instance, written :path",
            )),
        }
    }

    /// Whether `path` is a folder on the instance (false when it does not exist).
    pub async fn remote_is_dir(&self, path: &str) -> Result<bool, SshError> {
        let sftp = self.sftp().await?;
        Ok(sftp
            .session
            .metadata(remote_path(path))
            .await
            .is_ok_and(|meta| meta.is_dir()))
    }
}

fn bad_copy(problem: &str) -> SshError {
    SshError::BadCommand {
        part: "SRC DST".to_owned(),
        problem: problem.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colon_marks_the_remote_side() {
        assert_eq!(
            CopyPath::parse(":/data/x"),
            CopyPath::Remote("/data/x".into())
        );
        assert_eq!(CopyPath::parse(":"), CopyPath::Remote(".".into()));
        assert_eq!(
            CopyPath::parse("./x"),
            CopyPath::Local(PathBuf::from("./x"))
        );
    }

    #[test]
    fn base_names_ignore_trailing_slashes() {
        assert_eq!(base_name("/data/run-1/"), Some("run-1"));
        assert_eq!(base_name("models"), Some("models"));
        assert_eq!(base_name("/"), None);
    }
}
