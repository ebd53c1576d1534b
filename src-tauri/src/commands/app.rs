//! What the UI asks about the app itself (version, where its data lives).

use serde::Serialize;
use ts_rs::TS;

use crate::state::AppState;

/// Shown on the Settings page so a user can find the database and the logs.
#[derive(Debug, Serialize, TS)]
#[ts(export)]
pub struct AppInfo {
    pub version: String,
    pub db_path: String,
    pub log_dir: String,
}

#[tauri::command]
#[tracing::instrument(skip_all)]
pub fn app_info(state: tauri::State<'_, AppState>) -> AppInfo {
    AppInfo {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        db_path: state.db_path.display().to_string(),
        log_dir: state.log_dir.display().to_string(),
    }
}

/// Settings → "Copy a problem report": redacted by core, shown to the user, copied only by them.
#[tauri::command]
#[tracing::instrument(skip_all)]
pub fn problem_report(state: tauri::State<'_, AppState>) -> leasehold_core::report::ProblemReport {
    leasehold_core::report::problem_report(
        &state.log_dir,
        leasehold_core::update::CURRENT_VERSION,
        state.now(),
    )
}
