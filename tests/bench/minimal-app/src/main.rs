//! A window with a static page and nothing else: the start-up and memory floor of a Tauri app.

fn main() {
    tauri::Builder::default()
        .run(tauri::generate_context!())
        .unwrap_or_else(|err| {
            eprintln!("minimal app could not start: {err}");
            std::process::exit(1);
        });
}
