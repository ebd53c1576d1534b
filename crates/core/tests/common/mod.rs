//! Shared setup for the SSH tests: a connection to a fresh test host with its own known_hosts.

#![allow(dead_code)] // each test binary uses a different subset

use std::path::PathBuf;
use std::time::Duration;

use leasehold_core::ssh::{
    parse_ssh_command, ConnectOptions, Credentials, Destination, KeyFile, KnownHosts, SshError,
    SshTarget,
};
use leasehold_testkit::{ClientKey, SshdOptions, TestHost};

pub struct Setup {
    pub host: TestHost,
    pub scratch: tempfile::TempDir,
}

impl Setup {
    pub fn new() -> Self {
        Self::with(SshdOptions::default())
    }

    pub fn with(options: SshdOptions) -> Self {
        Self {
            host: TestHost::start_with(options),
            scratch: tempfile::tempdir().expect("scratch dir"),
        }
    }

    pub fn known_hosts_path(&self) -> PathBuf {
        self.scratch.path().join("known_hosts")
    }

    pub fn destination(&self) -> Destination {
        let command = parse_ssh_command(&self.host.ssh_command()).expect("harness command parses");
        Destination::resolve(&command, None).expect("resolves without a config file")
    }

    pub fn options(&self, accept_new: bool) -> ConnectOptions {
        ConnectOptions {
            known_hosts: KnownHosts::only(self.known_hosts_path()),
            accept_new_host_key: accept_new,
            connect_timeout: Duration::from_secs(10),
            ..ConnectOptions::default()
        }
    }

    pub fn key_credentials(&self) -> Credentials {
        Credentials {
            keys: vec![KeyFile {
                path: self.host.key(ClientKey::Ed25519),
                passphrase: None,
            }],
            ..Credentials::default()
        }
    }

    pub async fn connect_with(&self, credentials: Credentials) -> Result<SshTarget, SshError> {
        SshTarget::connect(self.destination(), credentials, self.options(true)).await
    }

    /// Connected with the plain ed25519 key, host key accepted on first use.
    pub async fn connect(&self) -> SshTarget {
        self.connect_with(self.key_credentials())
            .await
            .unwrap_or_else(|err| panic!("connect to the test host: {err}\n{}", self.host.log()))
    }
}
