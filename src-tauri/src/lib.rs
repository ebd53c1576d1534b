//! The desktop shell: window, state and thin commands. Every decision lives in leasehold-core.

mod commands;

pub fn run() {
    tauri::Builder::default()
        .invoke_handler(tauri::generate_handler![
            commands::app_info,
            commands::catalog::estimate_vram,
            commands::catalog::recommend_gpus,
            commands::catalog::choose_torch_wheel,
            commands::catalog::gpu_catalog,
            commands::catalog::model_presets,
            commands::catalog::local_gpus,
        ])
        .run(tauri::generate_context!())
        .unwrap_or_else(|err| {
            eprintln!("Leasehold could not start: {err}");
            std::process::exit(1);
        });
}
