//! The desktop shell: window, state and thin commands. Every decision lives in leasehold-core.

mod accounts_watch;
mod background;
mod board;
mod commands;
mod hunt_runners;
mod jobs_watch;
mod keeper_watch;
mod logging;
mod market_watch;
mod monitor_watch;
mod reminders;
mod state;
mod team_watch;
mod tray;
#[cfg(test)]
mod typed_calls;
mod updates;

use leasehold_core::store;
use state::{AppState, Startup};
use tauri::Manager;

/// Every command the UI may call, in one list: it makes the invoke handler, the names exported
/// to the UI (`ui/src/lib/bindings/commands.ts`) and, read from each command's signature in
/// `commands/<area>.rs`, one typed function per command (`calls.ts`, `typed_calls.rs`), both with
/// `make bindings`. Renaming or dropping a command or an argument fails the UI's type check.
macro_rules! app_commands {
    ($($area:ident :: $name:ident),* $(,)?) => {
        /// The registered commands' names, as the UI passes them to `invoke`.
        pub const COMMAND_NAMES: &[&str] = &[$(stringify!($name)),*];

        /// Each command's file under `src/commands` and name: `typed_calls` reads its signature.
        #[cfg(test)]
        const COMMAND_AREAS: &[(&str, &str)] = &[$((stringify!($area), stringify!($name))),*];

        fn invoke_handler() -> impl Fn(tauri::ipc::Invoke<tauri::Wry>) -> bool + Send + Sync + 'static {
            tauri::generate_handler![$(commands::$area::$name),*]
        }
    };
}

app_commands![
    store::store_status,
    store::store_retry,
    store::store_open_copy,
    store::store_start_fresh,
    store::app_quit,
    app::app_info,
    app::problem_report,
    settings::load_preferences,
    settings::save_preferences,
    settings::load_draft,
    settings::save_draft,
    settings::clear_draft,
    billing::provider_presets,
    billing::currencies,
    billing::validate_rental,
    billing::fee_per_hour,
    billing::add_rental,
    billing::list_rentals,
    billing::rental_detail,
    billing::record_power,
    billing::forecast_rental,
    billing::estimate_cost,
    billing::rent_vs_buy,
    catalog::estimate_vram,
    catalog::recommend_gpus,
    catalog::choose_torch_wheel,
    catalog::gpu_catalog,
    catalog::model_presets,
    catalog::local_gpus,
    ssh::connect_choices,
    ssh::connect_preview,
    ssh::connect_generate_key,
    ssh::connect_test,
    ssh::connect_saved_target,
    ssh::connect_status,
    ssh::connect_disconnect,
    ssh::terminal_open,
    ssh::terminal_write,
    ssh::terminal_resize,
    ssh::terminal_close,
    ssh::forward_open,
    ssh::forward_list,
    ssh::forward_close,
    market::market_for_task,
    market::market_refresh,
    market::market_alerts,
    market::market_alert_add,
    market::market_alert_remove,
    market::market_rent_defaults,
    market::market_rent,
    explain::explain_error,
    explain::explain_plan,
    install::install_recipes,
    install::install_start,
    install::job_list,
    install::job_attach,
    install::job_cancel,
    install::install_status,
    install::job_refresh,
    install::install_check_server,
    verify::verify_run,
    verify::verify_cancel,
    verify::verify_history,
    verify::verify_load,
    catalog::earlier_prices,
    monitor::monitor_start,
    monitor::monitor_stop,
    monitor::monitor_history,
    monitor::monitor_busy_hours,
    remind::remind_board,
    remind::remind_snooze,
    remind::remind_dismiss,
    remind::remind_rules_load,
    remind::remind_rules_save,
    remind::webhook_list,
    remind::webhook_add,
    remind::webhook_remove,
    remind::webhook_test,
    remind::tray_labels,
    remind::autostart_enabled,
    remind::autostart_set,
    watchdog::watchdog_defaults,
    watchdog::watchdog_install,
    watchdog::watchdog_status,
    watchdog::watchdog_remove,
    stop::stop_plan,
    stop::stop_save_api_key,
    stop::stop_now,
    account::account_list,
    account::account_add,
    account::account_remove,
    account::account_sync,
    account::account_link,
    account::account_power,
    account::account_acknowledge,
    account::account_accept,
    account::account_reconcile,
    account::account_apply_rule,
    keeper::keeper_list,
    keeper::keeper_hunt_start,
    keeper::keeper_hunt_stop,
    keeper::keeper_set_policy,
    keeper::keeper_set_bid_cap,
    keeper::keeper_keep_alive_quote,
    keeper::keeper_keep_alive,
    keeper::keeper_vast_look,
    keeper::keeper_bid,
    keeper::keeper_price_increase,
    keeper::keeper_price_increase_look,
    stop::stop_record_by_hand,
    stop::stop_check_again,
    billing::price_check,
    team::team_link,
    team::team_connect,
    team::team_sync,
    team::team_status,
    team::team_conflicts,
    team::team_disconnect,
    backup::backup_scan,
    backup::backup_run,
    backup::backup_cancel,
    backup::backup_git_push,
    backup::backup_to_file_storage,
    backup::backup_history,
    backup::backup_status,
    backup::release_check,
    backup::release_instance,
    backup::release_bill,
    team::team_resolve_conflict,
    team::team_dismiss_conflict,
    team::team_set_budget,
    team::instance_project,
    team::instance_set_project,
    monitor::monitor_language,
    team::team_set_alerts,
    team::team_dismiss_reminder,
    team::team_snooze_reminder,
    team::team_share_verify,
    update::update_about,
    update::update_pending,
    update::update_check_now,
    update::update_skip,
    update::update_install,
    status::instance_status,
    status::instance_statuses,
    status::rentals_totals,
    status::instance_match_gpu_count,
    status::instance_acknowledge_price,
    status::instance_follow_up_dismiss,
];

pub fn run() {
    let log_dir = leasehold_core::paths::log_dir();
    // Without a log file the app still works; say so on stderr and go on.
    let _log_guard = logging::init(&log_dir)
        .map_err(|err| eprintln!("Leasehold: logging disabled ({err})"))
        .ok();
    let db_path = AppState::db_path_from_env();
    tracing::info!(version = env!("CARGO_PKG_VERSION"), db = %db_path.display(), "starting");

    // The database opens (and migrates) on its own thread while GTK starts and the window is
    // built; `setup` runs after the window exists and before the first command is served. When
    // it cannot be opened, the window shows the recovery screen (commands::store) instead of
    // the app: `AppState` is managed only once a store is open.
    let opening = std::thread::spawn({
        let db_path = db_path.clone();
        move || tauri::async_runtime::block_on(store::recovery::open_or_explain(&db_path))
    });
    let mut builder = tauri::Builder::default();
    // One app per user: a second launch shows the first one's window (the way back to a window
    // closed into the tray). A second profile (`LEASEHOLD_DB`, as the tests use) runs beside it.
    if std::env::var_os(state::DB_ENV).is_none() {
        builder = builder.plugin(tauri_plugin_single_instance::init(|app, _args, _cwd| {
            tray::show_window(app);
        }));
    }
    builder
        .plugin(tauri_plugin_opener::init())
        .plugin(tauri_plugin_notification::init())
        // Installs an update core has downloaded and verified (`commands::update`).
        .plugin(tauri_plugin_updater::Builder::new().build())
        .plugin(tauri_plugin_autostart::init(
            tauri_plugin_autostart::MacosLauncher::LaunchAgent,
            None,
        ))
        .on_window_event(|window, event| {
            // With a tray, closing the window leaves the app watching the bills.
            if let tauri::WindowEvent::CloseRequested { api, .. } = event {
                let keeps_running = window
                    .try_state::<board::ReminderBoard>()
                    .is_some_and(|board| board.has_tray());
                if keeps_running {
                    api.prevent_close();
                    let _ = window.hide();
                }
            }
        })
        .setup(move |app| {
            let opened = opening
                .join()
                .map_err(|_| "the database thread stopped unexpectedly".to_owned())?;
            let startup = Startup::new(db_path, log_dir);
            match opened {
                Ok(store) => {
                    startup.opened(app.handle(), store, None);
                    background::after_open(app.handle());
                }
                Err(failure) => startup.failed(failure),
            }
            app.manage(startup);
            reminders::start(app.handle());
            updates::start(app.handle());
            tray::build(app.handle());
            Ok(())
        })
        .invoke_handler(invoke_handler())
        .run(tauri::generate_context!())
        .unwrap_or_else(|err| {
            tracing::error!(%err, "could not start");
            eprintln!("Leasehold could not start: {err}");
            std::process::exit(1);
        });
}

#[cfg(test)]
mod command_names {
    use std::path::{Path, PathBuf};

    use super::typed_calls::camel;
    use super::COMMAND_NAMES;

    fn ui_sources(dir: &Path, found: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir)
            .expect("ui/src is readable")
            .flatten()
        {
            let path = entry.path();
            if path.is_dir() {
                ui_sources(&path, found);
            } else if path
                .extension()
                .is_some_and(|ext| ext == "ts" || ext == "svelte")
            {
                found.push(path);
            }
        }
    }

    /// The TypeScript list of command names the UI's `call` accepts; regenerated with the other
    /// bindings, checked by `make bindings-check`.
    #[test]
    fn export_bindings_command_names() {
        let dir = std::env::var("TS_RS_EXPORT_DIR").expect("set in .cargo/config.toml");
        let mut text = String::from(
            "// Generated from the commands registered in src-tauri/src/lib.rs (`make bindings`). Do not edit.\n\n\
             export const COMMANDS = [\n",
        );
        for name in COMMAND_NAMES {
            text.push_str(&format!("  '{name}',\n"));
        }
        text.push_str("] as const\n\nexport type Command = (typeof COMMANDS)[number]\n");
        std::fs::create_dir_all(&dir).expect("bindings folder");
        std::fs::write(Path::new(&dir).join("commands.ts"), text).expect("writes commands.ts");
    }

    /// The UI reaches a command only through its generated function (`ui/src/lib/bindings/calls.ts`,
    /// `make bindings`): that file calls exactly the registered names, nothing else in `ui/src`
    /// passes a command name to `call` or `invoke`, and the screens do use the generated functions
    /// (at least 30 of them, so a pattern that stopped matching cannot pass).
    #[test]
    fn every_command_the_ui_calls_is_registered() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/src");
        let calls_ts = std::fs::read_to_string(root.join("lib/bindings/calls.ts"))
            .expect("ui/src/lib/bindings/calls.ts: run `make bindings`");
        let by_name =
            regex::Regex::new(r#"\b(?:call|invoke)\s*(?:<[^(]*?>)?\(\s*['"]([A-Za-z0-9_]+)['"]"#)
                .expect("valid pattern");
        let generated: Vec<&str> = by_name
            .captures_iter(&calls_ts)
            .map(|found| found.get(1).expect("a name").as_str())
            .collect();
        assert_eq!(
            generated, COMMAND_NAMES,
            "calls.ts is stale: run `make bindings`"
        );

        let mut files = Vec::new();
        ui_sources(&root, &mut files);
        let sources: Vec<(PathBuf, String)> = files
            .into_iter()
            .filter(|f| !f.to_string_lossy().contains("/bindings/"))
            .map(|f| {
                let text = std::fs::read_to_string(&f).expect("readable");
                (f, text)
            })
            .collect();
        let by_hand: Vec<_> = sources
            .iter()
            .flat_map(|(file, text)| {
                by_name
                    .captures_iter(text)
                    .map(move |found| (found[1].to_owned(), file.clone()))
            })
            .collect();
        assert!(
            by_hand.is_empty(),
            "the UI calls commands by name, past their generated functions (import them from \
             lib/backend instead): {by_hand:?}"
        );

        let used: Vec<&str> = COMMAND_NAMES
            .iter()
            .copied()
            .filter(|name| {
                let function =
                    regex::Regex::new(&format!(r"\b{}\s*\(", camel(name))).expect("valid pattern");
                sources.iter().any(|(_, text)| function.is_match(text))
            })
            .collect();
        assert!(
            used.len() >= 30,
            "the UI's calls of the generated functions were found for only {} commands: the \
             pattern no longer matches ui/src",
            used.len()
        );
    }
}
