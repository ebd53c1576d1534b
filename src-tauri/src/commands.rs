//! Tauri commands: each a few lines that call leasehold-core.

pub mod catalog;

use serde::Serialize;

#[derive(Serialize)]
pub struct AppInfo {
    version: &'static str,
    data_dir: String,
}

#[tauri::command]
pub fn app_info() -> AppInfo {
    AppInfo {
        version: env!("CARGO_PKG_VERSION"),
        data_dir: leasehold_core::paths::data_dir().display().to_string(),
    }
}
