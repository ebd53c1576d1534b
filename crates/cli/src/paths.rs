//! `leasehold paths [--json]`: where this computer keeps Leasehold's files and which OpenSSH
//! files it reads, so a user (or a test under Wine) can see the OS's folders were chosen.

use std::path::Path;
use std::process::ExitCode;

use leasehold_core::ssh::KnownHosts;
use serde::Serialize;

use crate::output;

#[derive(Serialize)]
struct Paths {
    db: String,
    data: String,
    logs: String,
    /// The user's OpenSSH client config (read, never written); null without a home folder.
    ssh_config: Option<String>,
    /// Read in this order; new host keys are written to the first (the app's own).
    known_hosts: Vec<String>,
}

fn text(path: &Path) -> String {
    path.display().to_string()
}

pub fn run(db: &Path, json: bool) -> ExitCode {
    let paths = Paths {
        db: text(db),
        data: text(&leasehold_core::paths::data_dir()),
        logs: text(&leasehold_core::paths::log_dir()),
        ssh_config: leasehold_core::ssh::user_config_path().as_deref().map(text),
        known_hosts: KnownHosts::app_default()
            .consulted()
            .iter()
            .map(|path| path.display().to_string())
            .collect(),
    };
    if json {
        return output::print_json(&paths);
    }
    say!("db: {}", paths.db);
    say!("logs: {}", paths.logs);
    say!("data: {}", paths.data);
    if let Some(config) = &paths.ssh_config {
        say!("ssh_config: {config}");
    }
    for file in &paths.known_hosts {
        say!("known_hosts: {file}");
    }
    ExitCode::SUCCESS
}
