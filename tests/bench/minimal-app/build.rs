fn main() {
    // The floor binary embeds floor/dist through its own config, which tauri-build does not watch.
    println!("cargo:rerun-if-changed=floor/tauri.conf.json");
    println!("cargo:rerun-if-changed=floor/dist");
    tauri_build::build();
}
