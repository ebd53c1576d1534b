//! Talking to a rented instance over SSH: where to connect (a pasted `ssh …` command or a
//! `~/.ssh/config` host), whom to trust (known_hosts, trust on first use, hard stop on a changed
//! key), how to log in (key, agent, password), and what to do once in: many commands at once on
//! one connection, streaming output, a PTY, port forwards and SFTP transfers.
//!
//! The instance is untrusted: names it sends become local paths only through `safe_name`,
//! downloads stop at the size it announced, collected output is capped, and jump hosts log in
//! with their own credentials (`jump`), never the destination's.
//!
//! Built on russh (pure Rust, async, no OpenSSH binary needed on Windows laptops).
//!
//! In the files: `known_hosts` counts a key of another type as a change. A matching `@revoked` line
//! anywhere wins. A host known only through `@cert-authority` lines is refused
//! (`ssh.host_key_by_certificate`) instead of being trusted on first use. A download's tree is
//! listed by our own READDIR loop (`listing`: at most 200 000 entries, each reply bounded by the
//! stall timeout, symbolic links counted and reported, never followed). After a drop `redial` races
//! staggered TCP connects; through jump hosts it races whole attempts.

mod auth;
mod connect;
mod copy;
mod destination;
mod error;
mod exec;
mod fanout;
mod file_io;
mod forward;
mod forward_table;
mod jump;
mod keygen;
mod known_hosts;
mod listing;
mod open;
mod parse;
mod pty;
mod quick_ack;
mod redial;
mod safe_name;
mod secrets;
mod sftp;
mod steps;
mod target;
mod transfer;
mod upload;

pub use auth::{load_private_key, AgentChoice, Credentials, KeyFile, Secret};
pub use connect::ConnectOptions;
pub use copy::CopyPath;
pub use destination::{
    config_hosts, expand_tilde, load_config_file, load_user_config, user_config_path, user_ssh_dir,
    ConfigHost, Destination,
};
pub use error::{KnownKey, SshError};
pub use exec::{remote_command_line, ExitReport};
pub use forward::ForwardPreset;
pub use forward_table::ForwardInfo;
pub use keygen::{default_key_path, generate_ed25519, GeneratedKey};
pub use known_hosts::{fingerprint, HostKeyVerdict, KnownHosts, RecordedKey};
pub use listing::MAX_LINKS_NAMED;
pub use open::ConnectRequest;
pub use parse::{parse_ssh_command, JumpHost, SshCommand, SshCommandSummary};
pub use pty::{PtyEvent, PtyReader, PtySession, PtyWriter};
pub use safe_name::{check_entry_name, local_child, UnsafeName};
pub use secrets::{
    forget_secret, passphrase_account, password_account, store_secret, stored_secret,
};
pub use sftp::{ProgressSink, TransferOptions, TransferProgress, TransferReport};
pub use steps::{ConnectStep, StepEvent, StepObserver, StepStatus};
pub use target::{LinkState, SshTarget, MAX_CHANNELS};
