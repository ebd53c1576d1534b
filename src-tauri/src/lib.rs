//! The desktop shell: window, state and thin commands. Every decision lives in leasehold-core.

mod commands;
mod logging;
mod state;

use state::AppState;

pub fn run() {
    let log_dir = leasehold_core::paths::log_dir();
    // Without a log file the app still works; say so on stderr and go on.
    let _log_guard = logging::init(&log_dir)
        .map_err(|err| eprintln!("Leasehold: logging disabled ({err})"))
        .ok();
    let db_path = AppState::db_path_from_env();
    tracing::info!(version = env!("CARGO_PKG_VERSION"), db = %db_path.display(), "starting");

    let state = match tauri::async_runtime::block_on(AppState::open(db_path.clone(), log_dir)) {
        Ok(state) => state,
        Err(err) => {
            tracing::error!(%err, db = %db_path.display(), "could not open the database");
            eprintln!("Leasehold could not open {}: {err}", db_path.display());
            std::process::exit(1);
        }
    };
    tauri::Builder::default()
        .manage(state)
        .invoke_handler(tauri::generate_handler![
            commands::app::app_info,
            commands::settings::load_preferences,
            commands::settings::save_preferences,
            commands::settings::load_draft,
            commands::settings::save_draft,
            commands::settings::clear_draft,
            commands::catalog::estimate_vram,
            commands::catalog::recommend_gpus,
            commands::catalog::choose_torch_wheel,
            commands::catalog::gpu_catalog,
            commands::catalog::model_presets,
            commands::catalog::local_gpus,
            commands::verify::verify_local,
            commands::verify::verify_ssh,
            commands::verify::verify_history,
            commands::verify::verify_run,
            commands::verify::verify_changes,
            commands::verify::diagnose_facts,
        ])
        .run(tauri::generate_context!())
        .unwrap_or_else(|err| {
            tracing::error!(%err, "could not start");
            eprintln!("Leasehold could not start: {err}");
            std::process::exit(1);
        });
}
