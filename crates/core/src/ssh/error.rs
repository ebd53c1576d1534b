//! Everything that can go wrong talking to an instance over SSH, each with what to try next.
//!
//! Messages never contain a password or passphrase; the UI matches the code to show the text in
//! the user's language.

use std::path::PathBuf;

use serde::Serialize;
use std::time::Duration;
use ts_rs::TS;

/// A recorded key as the user is shown it when a host key changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct KnownKey {
    /// `ssh-ed25519`, `ecdsa-sha2-nistp256`, `ssh-rsa`, …
    pub algorithm: String,
    /// `SHA256:…`
    pub fingerprint: String,
    pub known_hosts: String,
    pub line: usize,
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum SshError {
    /// The pasted `ssh …` command could not be understood; `part` names the offending word.
    #[error("cannot read the ssh command: {problem} (at `{part}`)")]
    BadCommand { part: String, problem: String },

    #[error("cannot read {path}: {message}")]
    ConfigFile { path: PathBuf, message: String },

    #[error("cannot find the host `{host}`: {message}. Check the address the provider gave you")]
    UnknownHost { host: String, message: String },

    #[error(
        "{host}:{port} refused the connection: nothing is listening there yet. An instance that \
         was just powered on may still be starting sshd, or the provider changed the port"
    )]
    Refused { host: String, port: u16 },

    #[error("cannot reach {host}:{port}: {message}")]
    Unreachable {
        host: String,
        port: u16,
        message: String,
    },

    #[error(
        "{host}:{port} did not complete the SSH handshake within {after:?}: the instance may be \
         off, still booting, or behind a firewall"
    )]
    ConnectTimeout {
        host: String,
        port: u16,
        after: Duration,
    },

    #[error("the SSH handshake with {host}:{port} failed: {message}")]
    Handshake {
        host: String,
        port: u16,
        message: String,
    },

    #[error(
        "{host} is not known yet. Its host key fingerprint is {fingerprint} ({algorithm}). \
         Compare it with the one the provider shows, then trust it (CLI: --accept-new-host-key)"
    )]
    HostKeyUnknown {
        host: String,
        port: u16,
        fingerprint: String,
        algorithm: String,
    },

    #[error(
        "the host key of {host} has CHANGED: it is now {new_fingerprint} ({new_algorithm}) but \
         {}. Nothing was sent. This happens when the provider rebuilt or re-imaged the instance, \
         or gave its address to another machine; it can also mean someone is intercepting the \
         connection. If the provider confirms the instance was rebuilt, remove the old lines and \
         connect again",
        recorded_list(recorded)
    )]
    HostKeyChanged {
        host: String,
        port: u16,
        new_fingerprint: String,
        new_algorithm: String,
        /// Every key recorded for the host, the one of the presented type first (a host may be
        /// known by several types, or only by types it no longer offers). Never empty.
        recorded: Vec<KnownKey>,
    },

    #[error("the host key of {host} ({fingerprint}) is marked @revoked in {}", known_hosts.display())]
    HostKeyRevoked {
        host: String,
        fingerprint: String,
        known_hosts: PathBuf,
    },

    #[error(
        "{host} is trusted in {}:{line} only through a certificate authority (@cert-authority), \
         which Leasehold does not check; its key {fingerprint} was not trusted. Add the host's own \
         key line (from the provider, or ssh-keyscan) to use it here",
        known_hosts.display()
    )]
    HostKeyByCertificate {
        host: String,
        fingerprint: String,
        known_hosts: PathBuf,
        line: usize,
    },

    #[error("cannot record the host key in {}: {message}", path.display())]
    KnownHostsWrite { path: PathBuf, message: String },

    #[error(
        "{host} rejected the login as `{user}` (tried: {tried}). Check the user name and \
         credentials; providers such as AutoDL change the root password and port when an \
         instance is powered on again, so enter the new ones"
    )]
    AuthFailed {
        host: String,
        user: String,
        tried: String,
    },

    #[error("the key {} is protected by a passphrase: enter it to use this key", path.display())]
    PassphraseNeeded { path: PathBuf },

    #[error("the passphrase for {} is wrong", path.display())]
    PassphraseWrong { path: PathBuf },

    #[error("cannot use the key {}: {message}", path.display())]
    KeyUnusable { path: PathBuf, message: String },

    #[error("cannot use ssh-agent: {message}")]
    Agent { message: String },

    #[error("no way to log in was given: add a key file, start ssh-agent, or give a password")]
    NoCredentials,

    #[error("the OS keychain is unavailable: {message}")]
    Keychain { message: String },

    #[error("the connection to {host} dropped: {message}")]
    Disconnected { host: String, message: String },

    #[error("{host} refused to open a channel: {message}")]
    Channel { host: String, message: String },

    #[error("the command did not finish within {0:?}")]
    CommandTimeout(Duration),

    #[error(
        "the commands printed more than {limit} bytes, more than Leasehold keeps in memory; \
         they were stopped"
    )]
    OutputTooLarge { limit: usize },

    #[error(
        "all {channels} channels to {host} stayed busy for {after:?}: other commands or \
         transfers are still running on this connection. Try again when they finish"
    )]
    ChannelsBusy {
        host: String,
        channels: usize,
        after: Duration,
    },

    #[error("file transfer failed on {path}: {message}")]
    Sftp { path: String, message: String },

    #[error(
        "the transfer of {path} stalled: no data moved for {after:?}, the link looks down. \
         Copy again to resume where it stopped"
    )]
    TransferStalled { path: String, after: Duration },

    #[error(
        "the instance sent the entry name {name:?} in {folder}, which would be written outside \
         the folder you chose ({reason}). Nothing was copied"
    )]
    UnsafeRemoteName {
        folder: String,
        name: String,
        reason: super::UnsafeName,
    },

    #[error(
        "{path} grew past the {announced} bytes the instance announced while it was copied; \
         the copy was stopped. Copy it again once it no longer changes"
    )]
    SizeExceeded { path: String, announced: u64 },

    #[error("{}: {message}", path.display())]
    LocalIo { path: PathBuf, message: String },

    #[error(
        "the copy of {path} is corrupt: SHA-256 here {local} but {remote} on the instance. \
         Copy it again"
    )]
    ChecksumMismatch {
        path: String,
        local: String,
        remote: String,
    },

    #[error("cannot listen on local port {port}: {message}")]
    ForwardBind { port: u16, message: String },

    #[error("no port forward with id {0}")]
    UnknownForward(u64),
}

/// `SHA256:… (ssh-ed25519) is recorded in FILE:LINE`, for each recorded key.
fn recorded_list(recorded: &[KnownKey]) -> String {
    let keys: Vec<String> = recorded
        .iter()
        .map(|k| {
            format!(
                "{} ({}) is recorded in {}:{}",
                k.fingerprint, k.algorithm, k.known_hosts, k.line
            )
        })
        .collect();
    keys.join(", ")
}

impl crate::Coded for SshError {
    fn code(&self) -> &'static str {
        match self {
            Self::BadCommand { .. } => "ssh.bad_command",
            Self::ConfigFile { .. } => "ssh.config_file",
            Self::UnknownHost { .. } => "ssh.unknown_host",
            Self::Refused { .. } => "ssh.refused",
            Self::Unreachable { .. } => "ssh.unreachable",
            Self::ConnectTimeout { .. } => "ssh.connect_timeout",
            Self::Handshake { .. } => "ssh.handshake_failed",
            Self::HostKeyUnknown { .. } => "ssh.host_key_unknown",
            Self::HostKeyChanged { .. } => "ssh.host_key_changed",
            Self::HostKeyRevoked { .. } => "ssh.host_key_revoked",
            Self::HostKeyByCertificate { .. } => "ssh.host_key_by_certificate",
            Self::KnownHostsWrite { .. } => "ssh.known_hosts_write",
            Self::AuthFailed { .. } => "ssh.auth_failed",
            Self::PassphraseNeeded { .. } => "ssh.passphrase_needed",
            Self::PassphraseWrong { .. } => "ssh.passphrase_wrong",
            Self::KeyUnusable { .. } => "ssh.key_unusable",
            Self::Agent { .. } => "ssh.agent",
            Self::NoCredentials => "ssh.no_credentials",
            Self::Keychain { .. } => "ssh.keychain",
            Self::Disconnected { .. } => "ssh.disconnected",
            Self::Channel { .. } => "ssh.channel",
            Self::CommandTimeout(_) => "ssh.command_timeout",
            Self::OutputTooLarge { .. } => "ssh.output_too_large",
            Self::ChannelsBusy { .. } => "ssh.channels_busy",
            Self::Sftp { .. } => "ssh.sftp",
            Self::TransferStalled { .. } => "ssh.transfer_stalled",
            Self::UnsafeRemoteName { .. } => "ssh.unsafe_remote_name",
            Self::SizeExceeded { .. } => "ssh.size_exceeded",
            Self::LocalIo { .. } => "ssh.local_io",
            Self::ChecksumMismatch { .. } => "ssh.checksum_mismatch",
            Self::ForwardBind { .. } => "ssh.forward_bind",
            Self::UnknownForward(_) => "ssh.unknown_forward",
        }
    }

    fn is_bad_input(&self) -> bool {
        matches!(
            self,
            Self::BadCommand { .. } | Self::UnknownForward(_) | Self::NoCredentials
        )
    }
}

impl SshError {
    /// True when the connection never got as far as running anything: the host was unreachable,
    /// the handshake or host key check failed, or the login was refused. The CLI exits 255 then,
    /// as OpenSSH does.
    pub fn is_connection_failure(&self) -> bool {
        !matches!(
            self,
            Self::CommandTimeout(_)
                | Self::OutputTooLarge { .. }
                | Self::ChannelsBusy { .. }
                | Self::Sftp { .. }
                | Self::TransferStalled { .. }
                | Self::LocalIo { .. }
                | Self::UnsafeRemoteName { .. }
                | Self::SizeExceeded { .. }
                | Self::ChecksumMismatch { .. }
                | Self::ForwardBind { .. }
                | Self::UnknownForward(_)
                | Self::BadCommand { .. }
        )
    }

    /// True when retrying soon may succeed because the instance is still booting (sshd not yet
    /// listening, or the connection was cut during its start).
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            Self::Refused { .. } | Self::Handshake { .. } | Self::Disconnected { .. }
        )
    }
}

impl crate::target::TransportError for SshError {
    fn is_connection_failure(&self) -> bool {
        SshError::is_connection_failure(self)
    }
}

impl From<SshError> for crate::target::TargetError {
    fn from(err: SshError) -> Self {
        Self::Transport(Box::new(err))
    }
}
