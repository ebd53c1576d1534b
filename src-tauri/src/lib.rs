//! The desktop shell: window, state and thin commands. Every decision lives in leasehold-core.

mod commands;

pub fn run() {
    tauri::Builder::default()
        .invoke_handler(tauri::generate_handler![commands::app_info])
        .run(tauri::generate_context!())
        .unwrap_or_else(|err| {
            eprintln!("Leasehold could not start: {err}");
            std::process::exit(1);
        });
}
