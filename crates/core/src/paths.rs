//! Where Leasehold keeps its files on each OS (app-data folder), so no caller hard-codes a path.
//! On Windows that is `%APPDATA%\Leasehold`; the rotating logs go in its `logs` folder.

use std::path::PathBuf;

/// The folder Leasehold's own files live in, inside the OS's per-user data folder.
#[cfg(windows)]
fn os_data_dir() -> Option<PathBuf> {
    // `%APPDATA%` (the roaming profile, as Windows apps keep their settings), with one folder of
    // our own rather than `ProjectDirs`' `Leasehold\Leasehold\data`.
    directories::BaseDirs::new().map(|dirs| dirs.data_dir().join("Leasehold"))
}

#[cfg(not(windows))]
fn os_data_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("app", "Leasehold", "Leasehold")
        .map(|dirs| dirs.data_dir().to_path_buf())
}

/// The per-user data folder: `~/.local/share/leasehold` on Linux, `%APPDATA%\Leasehold` on
/// Windows, `~/Library/Application Support/app.Leasehold.Leasehold` on macOS. Falls back to
/// the current folder only when the OS reports no home at all.
pub fn data_dir() -> PathBuf {
    os_data_dir().unwrap_or_else(|| PathBuf::from(".leasehold"))
}

/// The default database file inside [`data_dir`].
pub fn default_db_path() -> PathBuf {
    data_dir().join("leasehold.sqlite3")
}

/// Rotating log files go here, beside the database; never secrets.
pub fn log_dir() -> PathBuf {
    data_dir().join("logs")
}

/// The user's home folder (`$HOME` on Unix, the profile folder on Windows), where `~/.ssh` is.
pub fn home_dir() -> Option<PathBuf> {
    directories::BaseDirs::new().map(|dirs| dirs.home_dir().to_path_buf())
}
