//! "Generate a key for me": a new ed25519 key pair in OpenSSH format, with the public key line
//! ready to paste into the provider's console.

use std::path::{Path, PathBuf};

use russh::keys::ssh_key::private::Ed25519Keypair;
use russh::keys::ssh_key::LineEnding;
use russh::keys::PrivateKey;
use serde::Serialize;
use ts_rs::TS;

use super::SshError;

/// A freshly written key pair.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct GeneratedKey {
    #[ts(type = "string")]
    pub private_key_path: PathBuf,
    /// `ssh-ed25519 AAAA… comment`, for the provider's "add SSH key" box or authorized_keys.
    pub public_key: String,
    pub fingerprint: String,
}

/// Where Leasehold keeps keys it generated.
pub fn default_key_path() -> PathBuf {
    crate::paths::data_dir()
        .join("keys")
        .join("leasehold_ed25519")
}

/// Write a new ed25519 key to `path` (owner-only permissions) and `path.pub`. Refuses to
/// overwrite an existing key: that could lock the user out of a machine.
pub fn generate_ed25519(path: &Path, comment: &str) -> Result<GeneratedKey, SshError> {
    let io_error = |err: &dyn std::fmt::Display| SshError::LocalIo {
        path: path.to_owned(),
        message: err.to_string(),
    };
    if path.exists() {
        return Err(io_error(
            &"a key already exists there; choose another file name",
        ));
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io_error(&e))?;
    }
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(|e| io_error(&e))?;
    let mut key = PrivateKey::from(Ed25519Keypair::from_seed(&seed));
    seed.fill(0);
    key.set_comment(comment);
    key.write_openssh_file(path, LineEnding::LF)
        .map_err(|e| io_error(&e))?;
    let public = key.public_key();
    let public_line = public.to_openssh().map_err(|e| io_error(&e))?;
    let mut pub_path = path.as_os_str().to_owned();
    pub_path.push(".pub");
    std::fs::write(&pub_path, format!("{public_line}\n")).map_err(|e| io_error(&e))?;
    Ok(GeneratedKey {
        private_key_path: path.to_owned(),
        public_key: public_line,
        fingerprint: super::known_hosts::fingerprint(public),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_load_back_and_match_their_public_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("keys").join("id_test");
        let generated = generate_ed25519(&path, "leasehold@laptop").expect("generates");
        assert!(generated.public_key.starts_with("ssh-ed25519 "));
        assert!(generated.public_key.ends_with(" leasehold@laptop"));
        let loaded = super::super::load_private_key(&path, None).expect("loads back");
        assert_eq!(
            loaded.public_key().to_openssh().expect("encodes"),
            generated.public_key
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
            assert_eq!(mode & 0o077, 0, "the private key must be owner-only");
        }
        let again = generate_ed25519(&path, "x").expect_err("never overwrite a key");
        assert_eq!(crate::Coded::code(&again), "ssh.local_io");
    }

    #[test]
    fn two_generated_keys_differ() {
        let dir = tempfile::tempdir().expect("tempdir");
        let a = generate_ed25519(&dir.path().join("a"), "").expect("a");
        let b = generate_ed25519(&dir.path().join("b"), "").expect("b");
        assert_ne!(a.public_key, b.public_key);
    }
}
