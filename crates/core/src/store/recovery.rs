//! When the database cannot be opened: what went wrong, in terms a person can act on, and the ways
//! out that never destroy the old file.
//!
//! Why it exists: a desktop app whose database is damaged, written by a newer version, on a full
//! disk or locked by another program must not just exit. [`classify`] turns the failure into an
//! [`OpenFailure`] (a problem kind with a stable code, the file's path and the actions that make
//! sense for it); [`open_read_only_copy`] and [`start_fresh`] are those actions. Classification is
//! pure (an error in, a verdict out); the actions touch only files next to the database or in the
//! folder the caller names.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::migrate::MigrateError;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use ts_rs::TS;

use super::{Store, StoreError};
use crate::Coded;

/// What kind of trouble the database file is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum OpenProblem {
    /// Not a database, or a damaged one (garbage bytes, a torn page, an interrupted upgrade).
    Corrupt,
    /// Written by a newer (or different) version of Leasehold: its schema has migrations this
    /// version does not know.
    NewerVersion,
    /// The disk (or the user's quota) is full: SQLite could not write.
    DiskFull,
    /// Another program holds a lock on the file.
    Locked,
    /// Anything else (permissions, a missing folder, an unexpected error).
    Other,
}

/// A way out the recovery screen offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum RecoveryAction {
    /// Open the database again (after freeing space or closing the other program).
    Retry,
    /// Copy the file and open the copy read-only: look, export, nothing written.
    OpenCopy,
    /// Rename the file aside (kept, with a timestamp) and start with an empty database.
    StartFresh,
    /// Leave the app.
    Quit,
}

/// Why the database could not be opened, for the recovery screen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct OpenFailure {
    pub problem: OpenProblem,
    /// Stable code (`store.file_corrupt`, `store.newer_version`, `store.disk_full`,
    /// `store.locked`, `store.cannot_open`) the UI shows text for.
    pub code: String,
    /// The database file.
    pub path: String,
    /// The underlying error, as SQLite or the OS said it (English, for the details and the log).
    pub detail: String,
    /// What makes sense to offer, most useful first.
    pub actions: Vec<RecoveryAction>,
}

impl OpenProblem {
    pub fn code(self) -> &'static str {
        match self {
            Self::Corrupt => "store.file_corrupt",
            Self::NewerVersion => "store.newer_version",
            Self::DiskFull => "store.disk_full",
            Self::Locked => "store.locked",
            Self::Other => "store.cannot_open",
        }
    }

    /// The actions worth offering. Starting fresh does not help a full disk (the new file needs
    /// space too) or a lock (the other program keeps the old file), so it is not offered there.
    pub fn actions(self) -> Vec<RecoveryAction> {
        use RecoveryAction::{OpenCopy, Quit, Retry, StartFresh};
        match self {
            Self::Corrupt | Self::NewerVersion => vec![OpenCopy, StartFresh, Quit],
            Self::DiskFull | Self::Locked => vec![Retry, OpenCopy, Quit],
            Self::Other => vec![Retry, OpenCopy, StartFresh, Quit],
        }
    }
}

// SQLite primary result codes (https://www.sqlite.org/rescode.html).
const SQLITE_BUSY: i64 = 5;
const SQLITE_LOCKED: i64 = 6;
const SQLITE_CORRUPT: i64 = 11;
const SQLITE_FULL: i64 = 13;
const SQLITE_NOTADB: i64 = 26;

/// The problem behind a sqlx error: SQLite's result code when there is one, the OS error when
/// the file itself failed.
fn sqlx_problem(err: &sqlx::Error) -> OpenProblem {
    match err {
        sqlx::Error::Database(db) => {
            // sqlx gives SQLite's extended code as text; the low byte is the primary code.
            let code = db
                .code()
                .and_then(|c| c.parse::<i64>().ok())
                .map(|c| c & 0xff);
            match code {
                Some(SQLITE_CORRUPT | SQLITE_NOTADB) => OpenProblem::Corrupt,
                Some(SQLITE_FULL) => OpenProblem::DiskFull,
                Some(SQLITE_BUSY | SQLITE_LOCKED) => OpenProblem::Locked,
                _ => OpenProblem::Other,
            }
        }
        sqlx::Error::Io(io) => io_problem(io),
        sqlx::Error::PoolTimedOut => OpenProblem::Locked,
        _ => OpenProblem::Other,
    }
}

fn io_problem(err: &std::io::Error) -> OpenProblem {
    if err.kind() == std::io::ErrorKind::StorageFull {
        OpenProblem::DiskFull
    } else {
        OpenProblem::Other
    }
}

impl StoreError {
    /// What this failure means for whoever opened the database.
    pub fn open_problem(&self) -> OpenProblem {
        match self {
            Self::CreateFolder { source, .. } | Self::Copy { source, .. } => io_problem(source),
            Self::Open { source, .. } | Self::Query(source) => sqlx_problem(source),
            Self::Damaged { .. } => OpenProblem::Corrupt,
            Self::Migrate(err) => match err {
                MigrateError::VersionMissing(_) | MigrateError::VersionMismatch(_) => {
                    OpenProblem::NewerVersion
                }
                MigrateError::Dirty(_) => OpenProblem::Corrupt,
                MigrateError::Execute(source) | MigrateError::ExecuteMigration(source, _) => {
                    sqlx_problem(source)
                }
                _ => OpenProblem::Other,
            },
            Self::Corrupt { .. } => OpenProblem::Corrupt,
            Self::Rename { source, .. } => io_problem(source),
        }
    }
}

/// The recovery screen's view of a failure to open `path`.
pub fn classify(path: &Path, err: &StoreError) -> OpenFailure {
    let problem = err.open_problem();
    OpenFailure {
        problem,
        code: problem.code().to_owned(),
        path: path.display().to_string(),
        detail: format!("{err} ({})", err.code()),
        actions: problem.actions(),
    }
}

/// Open the database at `path`, or say why not in recovery terms.
pub async fn open_or_explain(path: &Path) -> Result<Store, OpenFailure> {
    Store::open(path).await.map_err(|err| {
        tracing::error!(%err, path = %path.display(), "could not open the database");
        classify(path, &err)
    })
}

/// `leasehold.sqlite3` at 2026-12-01 14:05:09 → `leasehold-<tag>-20261201-140509.sqlite3`, with
/// `-2`, `-3` … added until the name is free.
fn timestamped_sibling(path: &Path, tag: &str, now: DateTime<Utc>, into: &Path) -> PathBuf {
    let stem = path
        .file_stem()
        .map_or_else(|| "leasehold".into(), |s| s.to_string_lossy().into_owned());
    let extension = path
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    let stamp = now.format("%Y%m%d-%H%M%S");
    (1..)
        .map(|n| {
            let suffix = if n == 1 {
                String::new()
            } else {
                format!("-{n}")
            };
            into.join(format!("{stem}-{tag}-{stamp}{suffix}{extension}"))
        })
        .find(|candidate| !candidate.exists() && !side_file(candidate, "-wal").exists())
        .unwrap_or_else(|| into.join(format!("{stem}-{tag}{extension}")))
}

/// `db.sqlite3` + `-wal` → `db.sqlite3-wal`: SQLite's names for the files beside a database.
fn side_file(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Copy the database (with its write-ahead log, which may hold the latest writes) into `into`
/// and open the copy read-only, without migrating it. The original is not touched: not even a
/// lock is taken on it. Returns the store and the copy's path.
pub async fn open_read_only_copy(
    path: &Path,
    into: &Path,
    now: DateTime<Utc>,
) -> Result<(Store, PathBuf), StoreError> {
    std::fs::create_dir_all(into).map_err(|source| StoreError::CreateFolder {
        path: into.display().to_string(),
        source,
    })?;
    // Only a regular file is copied: a device (a database path linked to /dev/zero, say) would
    // copy without end.
    let regular = std::fs::metadata(path).map_err(|source| StoreError::Copy {
        from: path.display().to_string(),
        to: into.display().to_string(),
        source,
    })?;
    if !regular.is_file() {
        return Err(StoreError::Copy {
            from: path.display().to_string(),
            to: into.display().to_string(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file"),
        });
    }
    let copy = timestamped_sibling(path, "copy", now, into);
    let copy_file = |from: &Path, to: &Path| {
        std::fs::copy(from, to).map_err(|source| StoreError::Copy {
            from: from.display().to_string(),
            to: to.display().to_string(),
            source,
        })
    };
    copy_file(path, &copy)?;
    let wal = side_file(path, "-wal");
    if wal.exists() {
        copy_file(&wal, &side_file(&copy, "-wal"))?;
    }
    let options = SqliteConnectOptions::new()
        .filename(&copy)
        .read_only(true)
        .foreign_keys(true)
        .busy_timeout(super::BUSY_TIMEOUT);
    let pool = SqlitePoolOptions::new()
        .max_connections(4)
        .connect_with(options)
        .await
        .map_err(|source| StoreError::Open {
            path: copy.display().to_string(),
            source,
        })?;
    // A file that is not a database at all fails only at its first read: find out now.
    sqlx::query_scalar::<_, i64>("SELECT count(*) FROM sqlite_master")
        .fetch_one(&pool)
        .await
        .map_err(|source| StoreError::Open {
            path: copy.display().to_string(),
            source,
        })?;
    Ok((Store { pool }, copy))
}

/// The names of the private folders read-only copies go into, in the OS temporary folder.
const COPY_FOLDER_PREFIX: &str = "leasehold-read-only-";

/// A new private folder for a read-only copy: a fresh random name, created with mode 0700, so
/// on a shared `/tmp` no other user can read the copy (it holds the whole ledger) or plant a
/// file in its place; this user's folders from earlier copies are removed first.
pub fn private_copy_folder() -> Result<PathBuf, StoreError> {
    private_copy_folder_in(&std::env::temp_dir())
}

/// [`private_copy_folder`] inside `temp` instead of the OS temporary folder.
pub fn private_copy_folder_in(temp: &Path) -> Result<PathBuf, StoreError> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(COPY_FOLDER_PREFIX);
    // Made with this mode, not changed after: no moment when another user could open it.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700));
    let folder = builder
        .tempdir_in(temp)
        .map_err(|source| StoreError::CreateFolder {
            path: temp.display().to_string(),
            source,
        })?
        .keep();
    remove_earlier_copies(temp, &folder);
    Ok(folder)
}

/// Earlier copies' folders that belong to this user (another user's, or a link, is left alone).
fn remove_earlier_copies(temp: &Path, keep: &Path) {
    let Ok(ours) = std::fs::symlink_metadata(keep) else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(temp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        // `leasehold-read-only` without a suffix is the shared folder older versions used.
        if !(name.starts_with(COPY_FOLDER_PREFIX) || name == "leasehold-read-only") {
            continue;
        }
        let path = entry.path();
        if path == keep {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() && same_owner(&meta, &ours) {
            if let Err(err) = std::fs::remove_dir_all(&path) {
                tracing::debug!(%err, path = %path.display(), "an earlier read-only copy stays");
            }
        }
    }
}

#[cfg(unix)]
fn same_owner(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.uid() == b.uid()
}

/// Elsewhere the temporary folder is the user's own.
#[cfg(not(unix))]
fn same_owner(_: &std::fs::Metadata, _: &std::fs::Metadata) -> bool {
    true
}

/// [`open_read_only_copy`] into a new [`private_copy_folder`]: the recovery screen's action.
pub async fn open_private_read_only_copy(
    path: &Path,
    now: DateTime<Utc>,
) -> Result<(Store, PathBuf), StoreError> {
    open_read_only_copy(path, &private_copy_folder()?, now).await
}

/// Rename the database (and its `-wal`/`-shm` files) aside with a timestamp, then create and open
/// an empty one at `path`. Returns the new store and where the old file now is.
pub async fn start_fresh(path: &Path, now: DateTime<Utc>) -> Result<(Store, PathBuf), StoreError> {
    let folder = path.parent().unwrap_or_else(|| Path::new("."));
    let kept = timestamped_sibling(path, "broken", now, folder);
    let rename = |from: &Path, to: &Path| {
        std::fs::rename(from, to).map_err(|source| StoreError::Rename {
            from: from.display().to_string(),
            to: to.display().to_string(),
            source,
        })
    };
    // `symlink_metadata`: a dangling link (or a link to a device) is still a file to move aside.
    if path.symlink_metadata().is_ok() {
        rename(path, &kept)?;
    }
    for suffix in ["-wal", "-shm", "-journal"] {
        let side = side_file(path, suffix);
        if side.symlink_metadata().is_ok() {
            rename(&side, &side_file(&kept, suffix))?;
        }
    }
    let store = Store::open(path).await?;
    Ok((store, kept))
}
