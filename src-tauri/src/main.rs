// A windowed program on Windows in every profile, so no console window opens behind the app
// (the installer may package a debug build; diagnostics go to the log file, not a console).
#![windows_subsystem = "windows"]

fn main() {
    leasehold_app::run();
}
