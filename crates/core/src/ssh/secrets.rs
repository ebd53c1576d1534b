//! Passwords and key passphrases in the OS keychain (macOS Keychain, Windows Credential
//! Manager, Secret Service on Linux) through the `keyring` crate — never in SQLite or logs.
//!
//! Where no keychain exists (a headless CI machine without Secret Service), reading yields
//! "no stored secret" so the caller asks the user; only storing reports the failure.

use std::path::Path;

use super::auth::{KeyFile, Secret};
use super::destination::Destination;
use super::SshError;

const SERVICE: &str = "app.leasehold";

/// The keychain entry name for a login password: one per user, host and port.
pub fn password_account(destination: &Destination) -> String {
    format!("ssh-password:{}", destination.label())
}

/// The keychain entry name for a key file's passphrase.
pub fn passphrase_account(key_path: &Path) -> String {
    format!("ssh-passphrase:{}", key_path.display())
}

/// The stored secret, or `None` when there is none or no keychain is available.
pub fn stored_secret(account: &str) -> Option<Secret> {
    match keyring::Entry::new(SERVICE, account).and_then(|entry| entry.get_password()) {
        Ok(value) => Some(Secret::new(value)),
        Err(keyring::Error::NoEntry) => None,
        Err(err) => {
            // The error text never contains the secret itself.
            tracing::debug!(%err, "keychain unavailable; treating as no stored secret");
            None
        }
    }
}

/// Key files with the passphrase each was given, or else the one the keychain keeps for it.
pub(crate) fn with_stored_passphrases(keys: Vec<KeyFile>) -> Vec<KeyFile> {
    keys.into_iter()
        .map(|key| KeyFile {
            passphrase: key
                .passphrase
                .or_else(|| stored_secret(&passphrase_account(&key.path))),
            path: key.path,
        })
        .collect()
}

/// Save (or replace) a secret, e.g. after AutoDL changed the root password.
pub fn store_secret(account: &str, secret: &Secret) -> Result<(), SshError> {
    keyring::Entry::new(SERVICE, account)
        .and_then(|entry| entry.set_password(secret.expose()))
        .map_err(|err| SshError::Keychain {
            message: err.to_string(),
        })
}

/// Remove a secret; absent is fine.
pub fn forget_secret(account: &str) -> Result<(), SshError> {
    match keyring::Entry::new(SERVICE, account).and_then(|entry| entry.delete_credential()) {
        Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
        Err(err) => Err(SshError::Keychain {
            message: err.to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_or_unavailable_keychain_reads_as_no_secret() {
        // On CI there is no Secret Service; on a desktop the entry does not exist. Both must be
        // "nothing stored", never a panic or an error that blocks connecting.
        assert_eq!(stored_secret("ssh-password:nobody@nowhere.invalid:1"), None);
    }

    #[test]
    fn account_names_identify_user_host_and_port() {
        let command =
            super::super::parse_ssh_command("ssh -p 2222 root@gpu.example").expect("parses");
        let destination = Destination::resolve(&command, None).expect("resolves");
        assert_eq!(
            password_account(&destination),
            "ssh-password:root@gpu.example:2222"
        );
    }
}
