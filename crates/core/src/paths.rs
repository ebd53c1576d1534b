//! Where Leasehold keeps its files on each OS (app-data folder), so no caller hard-codes a path.

use std::path::PathBuf;

use directories::ProjectDirs;

fn project_dirs() -> Option<ProjectDirs> {
    ProjectDirs::from("app", "Leasehold", "Leasehold")
}

/// The per-user data folder: `~/.local/share/leasehold` on Linux, `%APPDATA%\Leasehold\…` on
/// Windows, `~/Library/Application Support/app.Leasehold.Leasehold` on macOS. Falls back to
/// the current folder only when the OS reports no home at all.
pub fn data_dir() -> PathBuf {
    project_dirs()
        .map(|dirs| dirs.data_dir().to_path_buf())
        .unwrap_or_else(|| PathBuf::from(".leasehold"))
}

/// The default database file inside [`data_dir`].
pub fn default_db_path() -> PathBuf {
    data_dir().join("leasehold.sqlite3")
}

/// Rotating log files go here; never secrets.
pub fn log_dir() -> PathBuf {
    data_dir().join("logs")
}
