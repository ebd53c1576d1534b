//! The desktop shell: window, state and thin commands. Every decision lives in leasehold-core.

mod cancel;
mod commands;
mod logging;
mod state;

use state::AppState;
use tauri::Manager;

pub fn run() {
    let log_dir = leasehold_core::paths::log_dir();
    // Without a log file the app still works; say so on stderr and go on.
    let _log_guard = logging::init(&log_dir)
        .map_err(|err| eprintln!("Leasehold: logging disabled ({err})"))
        .ok();
    let db_path = AppState::db_path_from_env();
    tracing::info!(version = env!("CARGO_PKG_VERSION"), db = %db_path.display(), "starting");

    // The database opens (and migrates) on its own thread while GTK starts and the window is
    // built; `setup` runs after the window exists and before the first command is served.
    let opening = std::thread::spawn(move || {
        tauri::async_runtime::block_on(AppState::open(db_path.clone(), log_dir)).map_err(|err| {
            tracing::error!(%err, db = %db_path.display(), "could not open the database");
            format!("could not open {}: {err}", db_path.display())
        })
    });
    tauri::Builder::default()
        .plugin(tauri_plugin_opener::init())
        .setup(move |app| {
            let state = opening
                .join()
                .map_err(|_| "the database thread stopped unexpectedly".to_owned())??;
            app.manage(state);
            Ok(())
        })
        .invoke_handler(tauri::generate_handler![
            commands::app::app_info,
            commands::settings::load_preferences,
            commands::settings::save_preferences,
            commands::settings::load_draft,
            commands::settings::save_draft,
            commands::settings::clear_draft,
            commands::billing::provider_presets,
            commands::billing::currencies,
            commands::billing::validate_rental,
            commands::billing::add_rental,
            commands::billing::list_rentals,
            commands::billing::rental_detail,
            commands::billing::record_power,
            commands::billing::forecast_rental,
            commands::billing::estimate_cost,
            commands::billing::rent_vs_buy,
            commands::catalog::estimate_vram,
            commands::catalog::recommend_gpus,
            commands::catalog::choose_torch_wheel,
            commands::catalog::gpu_catalog,
            commands::catalog::model_presets,
            commands::catalog::local_gpus,
            commands::ssh::connect_choices,
            commands::ssh::connect_preview,
            commands::ssh::connect_generate_key,
            commands::ssh::connect_test,
            commands::ssh::connect_saved_target,
            commands::ssh::connect_status,
            commands::ssh::connect_disconnect,
            commands::ssh::terminal_open,
            commands::ssh::terminal_write,
            commands::ssh::terminal_resize,
            commands::ssh::terminal_close,
            commands::ssh::forward_open,
            commands::ssh::forward_list,
            commands::ssh::forward_close,
            commands::verify::verify_run,
            commands::verify::verify_cancel,
            commands::verify::verify_history,
            commands::verify::verify_load,
            commands::explain::explain_error,
            commands::explain::explain_plan,
            commands::catalog::earlier_prices,
        ])
        .run(tauri::generate_context!())
        .unwrap_or_else(|err| {
            tracing::error!(%err, "could not start");
            eprintln!("Leasehold could not start: {err}");
            std::process::exit(1);
        });
}
