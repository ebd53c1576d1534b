//! The minimal app with a Svelte page instead of a static one (floor/): the memory any Svelte UI
//! on Tauri holds, so app.sh can say how much of Leasehold's gap is its own.

fn main() {
    tauri::Builder::default()
        .run(tauri::generate_context!("floor/tauri.conf.json"))
        .unwrap_or_else(|err| {
            eprintln!("floor app could not start: {err}");
            std::process::exit(1);
        });
}
