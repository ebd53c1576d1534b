//! Where to connect once everything is known: the pasted command merged with `~/.ssh/config`
//! (read with the `ssh2-config` crate, which already implements OpenSSH's Host matching and
//! first-value-wins rules, so we do not hand-roll them).
//!
//! As in OpenSSH, what the command says wins over the config file.

use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use ssh2_config::{ParseRule, SshConfig};
use ts_rs::TS;

use super::parse::{JumpHost, SshCommand};
use super::SshError;

/// A fully resolved SSH endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    /// The name as the user wrote it (alias or address); used in messages.
    pub alias: String,
    /// The address actually dialled, also the name looked up in known_hosts.
    pub host: String,
    pub port: u16,
    pub user: String,
    pub identity_files: Vec<PathBuf>,
    /// Hops to cross first, outermost first; each is itself resolved through the config.
    pub jump: Vec<Destination>,
    pub keepalive: Option<Duration>,
    pub connect_timeout: Option<Duration>,
}

impl Destination {
    /// `user@host:port`, for messages and [`crate::target::Target::describe`].
    pub fn label(&self) -> String {
        if self.host.contains(':') {
            format!("{}@[{}]:{}", self.user, self.host, self.port)
        } else {
            format!("{}@{}:{}", self.user, self.host, self.port)
        }
    }

    /// Merge a parsed command with the config file (if any).
    pub fn resolve(command: &SshCommand, config: Option<&SshConfig>) -> Result<Self, SshError> {
        let params = config.map(|c| c.query(&command.host));
        let from_config = params.as_ref();
        let mut identity_files: Vec<PathBuf> = command
            .identity_files
            .iter()
            .map(|p| expand_tilde(p))
            .collect();
        if let Some(files) = from_config.and_then(|p| p.identity_file.as_ref()) {
            identity_files.extend(files.iter().map(|p| expand_tilde(&p.to_string_lossy())));
        }
        let jump_specs: Vec<String> = if command.jump.is_empty() {
            from_config
                .and_then(|p| p.proxy_jump.clone())
                .unwrap_or_default()
                .into_iter()
                .filter(|hop| !hop.eq_ignore_ascii_case("none"))
                .collect()
        } else {
            command.jump.clone()
        };
        let mut jump = Vec::with_capacity(jump_specs.len());
        for spec in &jump_specs {
            let hop = JumpHost::parse(spec)?;
            let hop_command = SshCommand {
                host: hop.host,
                port: hop.port,
                user: hop.user,
                ..SshCommand::default()
            };
            let mut resolved = Self::resolve(&hop_command, config)?;
            // A hop's own ProxyJump would loop back through the same list; OpenSSH chains them
            // through the list we are building instead.
            resolved.jump.clear();
            jump.push(resolved);
        }
        Ok(Self {
            alias: command.host.clone(),
            host: command
                .host_name
                .clone()
                .or_else(|| from_config.and_then(|p| p.host_name.clone()))
                .unwrap_or_else(|| command.host.clone()),
            port: command
                .port
                .or_else(|| from_config.and_then(|p| p.port))
                .unwrap_or(22),
            user: command
                .user
                .clone()
                .or_else(|| from_config.and_then(|p| p.user.clone()))
                .unwrap_or_else(local_user_name),
            identity_files,
            jump,
            keepalive: command
                .server_alive_interval
                .map(Duration::from_secs)
                .or_else(|| from_config.and_then(|p| p.server_alive_interval))
                .filter(|d| !d.is_zero()),
            connect_timeout: command
                .connect_timeout
                .map(Duration::from_secs)
                .or_else(|| from_config.and_then(|p| p.connect_timeout)),
        })
    }
}

/// The user's OpenSSH folder: `~/.ssh`, which on Windows is `%USERPROFILE%\.ssh` (where the
/// Windows OpenSSH client keeps its config, known_hosts and keys too).
pub fn user_ssh_dir() -> Option<PathBuf> {
    home_dir().map(|home| home.join(".ssh"))
}

/// The user's `~/.ssh/config`, whether or not it exists.
pub fn user_config_path() -> Option<PathBuf> {
    user_ssh_dir().map(|dir| dir.join("config"))
}

/// The user's `~/.ssh/config`, or `None` when there is none.
pub fn load_user_config() -> Result<Option<SshConfig>, SshError> {
    let Some(path) = user_config_path() else {
        return Ok(None);
    };
    load_config_file(&path)
}

/// Parse one OpenSSH client config file; unknown keywords are tolerated as OpenSSH does with
/// `IgnoreUnknown`, because real configs are full of options we do not need.
pub fn load_config_file(path: &Path) -> Result<Option<SshConfig>, SshError> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => {
            return Err(SshError::ConfigFile {
                path: path.to_owned(),
                message: err.to_string(),
            })
        }
    };
    let mut reader = BufReader::new(file);
    let mut config = SshConfig::default();
    if let Some(home) = home_dir() {
        config = config.home_dir(home);
    }
    config
        .parse(
            &mut reader,
            ParseRule::ALLOW_UNKNOWN_FIELDS | ParseRule::ALLOW_UNSUPPORTED_FIELDS,
        )
        .map(Some)
        .map_err(|err| SshError::ConfigFile {
            path: path.to_owned(),
            message: err.to_string(),
        })
}

/// A `Host` entry the Connect wizard can offer (wildcard patterns are not hosts).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct ConfigHost {
    pub alias: String,
    pub host_name: String,
    pub port: u16,
    pub user: Option<String>,
}

/// Every concrete host alias in the config, resolved.
pub fn config_hosts(config: &SshConfig) -> Vec<ConfigHost> {
    let mut hosts = Vec::new();
    for host in config.get_hosts() {
        for clause in &host.pattern {
            let alias = &clause.pattern;
            if clause.negated || alias.contains(['*', '?', '!']) {
                continue;
            }
            if hosts.iter().any(|h: &ConfigHost| &h.alias == alias) {
                continue;
            }
            let params = config.query(alias);
            hosts.push(ConfigHost {
                alias: alias.clone(),
                host_name: params.host_name.unwrap_or_else(|| alias.clone()),
                port: params.port.unwrap_or(22),
                user: params.user,
            });
        }
    }
    hosts
}

/// The user's home: `$HOME`, or `%USERPROFILE%` (the profile folder) on Windows.
pub(crate) fn home_dir() -> Option<PathBuf> {
    directories::BaseDirs::new().map(|dirs| dirs.home_dir().to_path_buf())
}

/// `~/x` → `$HOME/x` (and `~\x` on Windows, as people type it there); other paths unchanged.
pub fn expand_tilde(path: &str) -> PathBuf {
    expand_tilde_with(path, home_dir().as_deref(), cfg!(windows))
}

/// [`expand_tilde`] with the home and the platform given, so both rules are tested anywhere.
fn expand_tilde_with(path: &str, home: Option<&Path>, windows: bool) -> PathBuf {
    let Some(home) = home else {
        return PathBuf::from(path);
    };
    if path == "~" {
        return home.to_owned();
    }
    let rest = path
        .strip_prefix("~/")
        .or_else(|| path.strip_prefix("~\\").filter(|_| windows));
    match rest {
        // Joined part by part, so a Windows path gets `\` throughout, not `C:\Users\me\.ssh/id`.
        Some(rest) => rest
            .split(|c| c == '/' || (windows && c == '\\'))
            .filter(|part| !part.is_empty())
            .fold(home.to_owned(), |path, part| path.join(part)),
        None => PathBuf::from(path),
    }
}

/// The login name used when neither the command nor the config names one (OpenSSH uses the
/// local user too); rented instances almost always want `root`, which is the last resort.
fn local_user_name() -> String {
    ["USER", "USERNAME", "LOGNAME"]
        .iter()
        .find_map(|var| std::env::var(var).ok().filter(|v| !v.is_empty()))
        .unwrap_or_else(|| "root".to_owned())
}

#[cfg(test)]
mod tests {
    use super::super::parse::parse_ssh_command;
    use super::*;

    fn config(text: &str) -> SshConfig {
        SshConfig::default()
            .parse(
                &mut text.as_bytes(),
                ParseRule::ALLOW_UNKNOWN_FIELDS | ParseRule::ALLOW_UNSUPPORTED_FIELDS,
            )
            .expect("test config parses")
    }

    #[test]
    fn a_tilde_path_lands_in_the_home_folder_part_by_part() {
        let home = Path::new("/home/me");
        for (path, windows) in [
            ("~/.ssh/id_ed25519", false),
            ("~/.ssh/id_ed25519", true),
            ("~\\.ssh\\id_ed25519", true),
            ("~/.ssh\\id_ed25519", true),
        ] {
            assert_eq!(
                expand_tilde_with(path, Some(home), windows),
                home.join(".ssh").join("id_ed25519"),
                "{path:?} (windows: {windows})"
            );
        }
        assert_eq!(expand_tilde_with("~", Some(home), false), home);
    }

    #[test]
    fn paths_without_a_leading_tilde_are_left_alone() {
        let home = Some(Path::new("/home/me"));
        for path in ["/etc/key", "key", "C:\\keys\\id", "~other/key", "a/~/b"] {
            assert_eq!(
                expand_tilde_with(path, home, true),
                PathBuf::from(path),
                "{path:?}"
            );
        }
        assert_eq!(
            expand_tilde_with("~\\id", home, false),
            PathBuf::from("~\\id"),
            "a backslash is an ordinary character in a Linux file name"
        );
        assert_eq!(
            expand_tilde_with("~/id", None, false),
            PathBuf::from("~/id")
        );
    }

    const CONFIG: &str = "\
Host gpu
    HostName region-9.autodl.com
    Port 40022
    User root
    IdentityFile /keys/autodl
    ServerAliveInterval 30
    ProxyJump bastion

Host bastion
    HostName 203.0.113.7
    User ops
    Port 2222

Host *.lab
    User student
";

    #[test]
    fn config_fills_what_the_command_leaves_out() {
        let cfg = config(CONFIG);
        let command = parse_ssh_command("ssh gpu").expect("parses");
        let dest = Destination::resolve(&command, Some(&cfg)).expect("resolves");
        assert_eq!(dest.host, "region-9.autodl.com");
        assert_eq!(dest.port, 40022);
        assert_eq!(dest.user, "root");
        assert_eq!(dest.identity_files, vec![PathBuf::from("/keys/autodl")]);
        assert_eq!(dest.keepalive, Some(Duration::from_secs(30)));
        assert_eq!(dest.jump.len(), 1, "ProxyJump from the config applies");
        assert_eq!(
            (
                dest.jump[0].host.as_str(),
                dest.jump[0].port,
                dest.jump[0].user.as_str()
            ),
            ("203.0.113.7", 2222, "ops"),
            "the hop is itself resolved through the config"
        );
    }

    #[test]
    fn the_command_wins_over_the_config() {
        let cfg = config(CONFIG);
        let command = parse_ssh_command("ssh -p 1 admin@gpu").expect("parses");
        let dest = Destination::resolve(&command, Some(&cfg)).expect("resolves");
        assert_eq!((dest.port, dest.user.as_str()), (1, "admin"));
    }

    #[test]
    fn wildcard_blocks_apply_but_are_not_listed_as_hosts() {
        let cfg = config(CONFIG);
        let command = parse_ssh_command("ssh node1.lab").expect("parses");
        let dest = Destination::resolve(&command, Some(&cfg)).expect("resolves");
        assert_eq!(dest.user, "student");
        let aliases: Vec<String> = config_hosts(&cfg).into_iter().map(|h| h.alias).collect();
        assert_eq!(aliases, vec!["gpu".to_owned(), "bastion".to_owned()]);
    }

    #[test]
    fn missing_config_file_is_not_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(load_config_file(&dir.path().join("nope"))
            .expect("absent file is fine")
            .is_none());
    }
}
