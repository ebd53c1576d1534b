use std::path::PathBuf;

use crate::billing::BillingError;
use crate::ssh::{SshError, UnsafeName};
use crate::store::StoreError;
use crate::target::TargetError;
use crate::Coded;

/// What can go wrong finding what is at risk and saving it.
#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    #[error("no instance named {0:?} is recorded here (see `leasehold instance add`)")]
    UnknownInstance(String),
    #[error("choose at least one path on the instance to back up")]
    NothingChosen,
    #[error("{path:?} is not a path on the instance that can be backed up: {problem}")]
    BadRemotePath { path: String, problem: String },
    #[error("{path} does not exist on the instance")]
    RemoteMissing { path: String },
    #[error("the local folder {} cannot be used: {message}", path.display())]
    LocalFolder { path: PathBuf, message: String },
    #[error(
        "not enough free space in {}: the backup needs {needed} bytes, {available} are free",
        path.display()
    )]
    NotEnoughSpace {
        path: PathBuf,
        needed: u64,
        available: u64,
    },
    #[error("the instance sent an entry named {name:?} inside {folder}, refused ({reason}); nothing was written for it")]
    UnsafeName {
        folder: String,
        name: String,
        reason: UnsafeName,
    },
    #[error("the instance sent {kind} entry {name:?}, which a backup never creates; refused")]
    UnsupportedEntry { name: String, kind: String },
    #[error("{path} changed or arrived damaged: SHA-256 here {local}, on the instance {remote}")]
    ChecksumMismatch {
        path: String,
        local: String,
        remote: String,
    },
    #[error("{path} is in the instance's checksum list but did not arrive")]
    MissingFile { path: String },
    #[error("{path} holds only symbolic links ({links} of them), which a backup does not follow; nothing was saved. Back up the folder the links point to (for a Hugging Face cache, the model folder with its blobs/)")]
    OnlyLinks { path: String, links: u64 },
    #[error("packing {path} on the instance failed: {message}")]
    PackFailed { path: String, message: String },
    #[error("the at-risk scan did not run on the instance: {0}")]
    ScanFailed(String),
    #[error("`git push` is not possible in {path}: {message}")]
    PushFailed { path: String, message: String },
    #[error("the provider of this rental names no file storage to copy to")]
    NoFileStorage,
    #[error("could not write {}: {message}", path.display())]
    LocalIo { path: PathBuf, message: String },
    #[error("the backup was cancelled")]
    Cancelled,
    #[error(transparent)]
    Ssh(#[from] SshError),
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Billing(#[from] BillingError),
}

impl BackupError {
    pub(crate) fn local(path: &std::path::Path, err: &std::io::Error) -> Self {
        Self::LocalIo {
            path: path.to_owned(),
            message: err.to_string(),
        }
    }
}

impl Coded for BackupError {
    fn code(&self) -> &'static str {
        match self {
            Self::UnknownInstance(_) => "backup.unknown_instance",
            Self::NothingChosen => "backup.nothing_chosen",
            Self::BadRemotePath { .. } => "backup.bad_remote_path",
            Self::RemoteMissing { .. } => "backup.remote_missing",
            Self::LocalFolder { .. } => "backup.local_folder",
            Self::NotEnoughSpace { .. } => "backup.not_enough_space",
            Self::UnsafeName { .. } => "backup.unsafe_name",
            Self::UnsupportedEntry { .. } => "backup.unsupported_entry",
            Self::ChecksumMismatch { .. } => "backup.checksum_mismatch",
            Self::MissingFile { .. } => "backup.missing_file",
            Self::PackFailed { .. } => "backup.pack_failed",
            Self::OnlyLinks { .. } => "backup.only_links",
            Self::ScanFailed(_) => "backup.scan_failed",
            Self::PushFailed { .. } => "backup.push_failed",
            Self::NoFileStorage => "backup.no_file_storage",
            Self::LocalIo { .. } => "backup.local_io",
            Self::Cancelled => "backup.cancelled",
            Self::Ssh(err) => err.code(),
            Self::Target(err) => err.code(),
            Self::Store(err) => err.code(),
            Self::Billing(err) => err.code(),
        }
    }

    fn is_bad_input(&self) -> bool {
        match self {
            Self::UnknownInstance(_)
            | Self::NothingChosen
            | Self::BadRemotePath { .. }
            | Self::RemoteMissing { .. }
            | Self::LocalFolder { .. }
            | Self::NotEnoughSpace { .. }
            | Self::NoFileStorage => true,
            Self::Ssh(err) => err.is_bad_input(),
            Self::Billing(err) => err.is_bad_input(),
            _ => false,
        }
    }

    fn params(&self) -> Vec<(&'static str, String)> {
        match self {
            Self::UnknownInstance(name) => vec![("name", name.clone())],
            Self::BadRemotePath { path, .. }
            | Self::RemoteMissing { path }
            | Self::PackFailed { path, .. }
            | Self::PushFailed { path, .. }
            | Self::ChecksumMismatch { path, .. }
            | Self::MissingFile { path } => vec![("path", path.clone())],
            Self::LocalFolder { path, .. } | Self::LocalIo { path, .. } => {
                vec![("path", path.display().to_string())]
            }
            Self::NotEnoughSpace {
                path,
                needed,
                available,
            } => vec![
                ("path", path.display().to_string()),
                ("needed", needed.to_string()),
                ("available", available.to_string()),
            ],
            Self::UnsafeName { name, .. } | Self::UnsupportedEntry { name, .. } => {
                vec![("name", name.clone())]
            }
            Self::OnlyLinks { path, links } => {
                vec![("path", path.clone()), ("links", links.to_string())]
            }
            _ => Vec::new(),
        }
    }
}
