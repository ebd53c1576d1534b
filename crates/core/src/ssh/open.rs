//! One entry point for "connect to what the user pasted", shared by the CLI and the app: parse
//! the command, merge `~/.ssh/config`, gather credentials (given ones first, then the OS
//! keychain), and connect.

use std::path::PathBuf;
use std::time::Duration;

use super::auth::{Credentials, Secret};
use super::connect::ConnectOptions;
use super::destination::{load_user_config, Destination};
use super::known_hosts::KnownHosts;
use super::parse::parse_ssh_command;
use super::secrets::{password_account, stored_secret, with_stored_passphrases};
use super::target::SshTarget;
use super::SshError;

/// What the user gave us to connect with.
#[derive(Debug, Clone, Default)]
pub struct ConnectRequest {
    /// The pasted `ssh …` command (or a `~/.ssh/config` alias such as `ssh gpu`).
    pub ssh_command: String,
    /// Extra key files (`-i`), tried before those in the command and config.
    pub identity_files: Vec<PathBuf>,
    /// Use only this known_hosts file instead of the app's own plus `~/.ssh/known_hosts`.
    pub known_hosts: Option<PathBuf>,
    pub accept_new_host_key: bool,
    pub password: Option<Secret>,
    /// Per-attempt connect timeout; `None` means the default (10 s) or the command's own.
    pub connect_timeout: Option<Duration>,
    /// Keep retrying while the instance boots (sshd not yet listening).
    pub boot_wait: Duration,
}

impl ConnectRequest {
    /// The destination this request points at, with `~/.ssh/config` applied.
    pub fn destination(&self) -> Result<Destination, SshError> {
        let command = parse_ssh_command(&self.ssh_command)?;
        let config = load_user_config()?;
        Destination::resolve(&command, config.as_ref())
    }

    /// Connect (host key checked, logged in) — nothing runs yet.
    pub async fn connect(&self) -> Result<SshTarget, SshError> {
        let destination = self.destination()?;
        let mut identity_files = self.identity_files.clone();
        identity_files.extend(destination.identity_files.iter().cloned());
        let password = self
            .password
            .clone()
            .or_else(|| stored_secret(&password_account(&destination)));
        let mut credentials = Credentials::like_openssh(&identity_files, password);
        credentials.keys = with_stored_passphrases(credentials.keys);
        let mut options = ConnectOptions {
            accept_new_host_key: self.accept_new_host_key,
            boot_wait: self.boot_wait,
            ..ConnectOptions::default()
        };
        if let Some(path) = &self.known_hosts {
            options.known_hosts = KnownHosts::only(path.clone());
        }
        if let Some(timeout) = self.connect_timeout {
            options.connect_timeout = timeout;
        }
        SshTarget::connect(destination, credentials, options).await
    }
}
