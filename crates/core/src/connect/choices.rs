//! What the Connect wizard can offer before anything is typed: the hosts in `~/.ssh/config`,
//! the private keys already on this computer, whether an ssh-agent is running, and the key
//! Leasehold generated earlier (if any).

use std::path::{Path, PathBuf};

use serde::Serialize;
use ts_rs::TS;

use super::plan::agent_available;
use crate::ssh::{
    config_hosts, default_key_path, generate_ed25519, load_private_key, load_user_config,
    ConfigHost, GeneratedKey, SshError,
};

/// A private key file the user may pick.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct KeyCandidate {
    pub path: String,
    /// Protected by a passphrase: the wizard asks for it.
    pub encrypted: bool,
    /// The key Leasehold generated ("generate a key for me").
    pub generated: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct LoginChoices {
    pub config_hosts: Vec<ConfigHost>,
    pub keys: Vec<KeyCandidate>,
    pub agent_available: bool,
    /// The key Leasehold generated earlier, with its public line to paste again.
    pub generated_key: Option<GeneratedKey>,
}

/// Everything the wizard offers; a broken `~/.ssh/config` only empties the host list.
pub fn login_choices() -> LoginChoices {
    let config_hosts = match load_user_config() {
        Ok(Some(config)) => config_hosts(&config),
        Ok(None) => Vec::new(),
        Err(err) => {
            tracing::warn!(%err, "~/.ssh/config unreadable; offering no hosts from it");
            Vec::new()
        }
    };
    let generated_path = default_key_path();
    let mut keys: Vec<KeyCandidate> = Vec::new();
    let mut offer = |path: &Path, generated: bool| {
        if keys.iter().any(|k| Path::new(&k.path) == path) {
            return;
        }
        if let Some(encrypted) = key_is_encrypted(path) {
            keys.push(KeyCandidate {
                path: path.display().to_string(),
                encrypted,
                generated,
            });
        }
    };
    if let Some(ssh_dir) = crate::ssh::user_ssh_dir() {
        for path in private_keys_in(&ssh_dir) {
            offer(&path, false);
        }
    }
    offer(&generated_path, true);
    LoginChoices {
        config_hosts,
        keys,
        agent_available: agent_available(),
        generated_key: read_generated(&generated_path),
    }
}

/// "Generate a key for me": Leasehold's own ed25519 key, created once and reused after, so
/// the public key pasted into the provider's console stays valid.
pub fn generate_key() -> Result<GeneratedKey, SshError> {
    let path = default_key_path();
    if let Some(existing) = read_generated(&path) {
        return Ok(existing);
    }
    let host = hostname_comment();
    generate_ed25519(&path, &format!("leasehold@{host}"))
}

fn hostname_comment() -> String {
    ["HOSTNAME", "COMPUTERNAME"]
        .iter()
        .find_map(|var| std::env::var(var).ok().filter(|v| !v.trim().is_empty()))
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
        })
        .unwrap_or_else(|| "laptop".to_owned())
}

/// The generated key as written earlier, if both halves are there and readable.
fn read_generated(path: &Path) -> Option<GeneratedKey> {
    let key = load_private_key(path, None).ok()?;
    let public = key.public_key();
    Some(GeneratedKey {
        private_key_path: path.to_owned(),
        public_key: public.to_openssh().ok()?,
        fingerprint: crate::ssh::fingerprint(public),
    })
}

/// Files in `dir` that have a `.pub` twin: OpenSSH's naming for a key pair.
fn private_keys_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut keys: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.extension().is_some_and(|ext| ext == "pub") && path.with_extension("").is_file()
        })
        .map(|path| path.with_extension(""))
        .collect();
    // id_* first (what OpenSSH tries), then the rest by name.
    keys.sort_by_key(|path| {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        (!name.starts_with("id_"), name)
    });
    keys
}

/// `Some(true)` for a key that needs a passphrase, `Some(false)` for one that opens as is,
/// `None` for anything that is not a private key we can use.
fn key_is_encrypted(path: &Path) -> Option<bool> {
    match load_private_key(path, None) {
        Ok(_) => Some(false),
        Err(SshError::PassphraseNeeded { .. }) => Some(true),
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_pairs_are_found_by_their_pub_twin_with_id_files_first() {
        let dir = tempfile::tempdir().expect("tempdir");
        for name in ["work_key", "id_ed25519", "known_hosts"] {
            std::fs::write(dir.path().join(name), "x").expect("write");
        }
        std::fs::write(dir.path().join("work_key.pub"), "x").expect("write");
        std::fs::write(dir.path().join("id_ed25519.pub"), "x").expect("write");
        std::fs::write(dir.path().join("orphan.pub"), "x").expect("write");
        let names: Vec<String> = private_keys_in(dir.path())
            .iter()
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        assert_eq!(
            names,
            vec!["id_ed25519".to_owned(), "work_key".to_owned()],
            "known_hosts has no .pub and orphan.pub has no private half"
        );
    }

    #[test]
    fn a_generated_key_is_offered_unencrypted_and_read_back_with_its_public_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("leasehold_ed25519");
        let written = generate_ed25519(&path, "leasehold@test").expect("generate");
        assert_eq!(key_is_encrypted(&path), Some(false));
        let read = read_generated(&path).expect("reads back");
        assert_eq!(read.fingerprint, written.fingerprint);
        assert!(
            written.public_key.starts_with(&read.public_key),
            "the same key: {} vs {}",
            written.public_key,
            read.public_key
        );
        assert_eq!(key_is_encrypted(&dir.path().join("nope")), None);
    }
}
