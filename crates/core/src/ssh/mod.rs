//! Talking to a rented instance over SSH: where to connect (a pasted `ssh …` command or a
//! `~/.ssh/config` host), whom to trust (known_hosts, trust on first use, hard stop on a changed
//! key), how to log in (key, agent, password), and what to do once in: many commands at once on
//! one connection, streaming output, a PTY, port forwards and SFTP transfers.
//!
//! Built on russh (pure Rust, async, no OpenSSH binary needed on Windows laptops).

mod auth;
mod connect;
mod destination;
mod error;
mod exec;
mod forward;
mod known_hosts;
mod parse;
mod target;

pub use auth::{load_private_key, AgentChoice, Credentials, KeyFile, Secret};
pub use connect::ConnectOptions;
pub use destination::{
    config_hosts, expand_tilde, load_config_file, load_user_config, ConfigHost, Destination,
};
pub use error::SshError;
pub use exec::{remote_command_line, ExitReport};
pub use forward::{ForwardInfo, ForwardPreset};
pub use known_hosts::{fingerprint, HostKeyVerdict, KnownHosts};
pub use parse::{parse_ssh_command, JumpHost, SshCommand, SshCommandSummary};
pub use target::{LinkState, SshTarget, MAX_CHANNELS};
