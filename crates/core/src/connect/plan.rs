//! What the Connect wizard gathered — the provider's command and how to log in — turned into a
//! destination, credentials and connect options. Secrets typed in the wizard are used for this
//! attempt; otherwise the OS keychain is asked.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::ssh::{
    expand_tilde, load_user_config, parse_ssh_command, passphrase_account, password_account,
    stored_secret, AgentChoice, Credentials, Destination, KeyFile, Secret, SshError,
};

/// How to log in. Stored with the instance; the secret that goes with it is not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "method", rename_all = "snake_case")]
#[ts(export)]
pub enum AuthChoice {
    /// A private key file (`~` allowed); an encrypted one needs its passphrase.
    Key {
        path: String,
    },
    /// Whatever keys the running ssh-agent (or Pageant on Windows) holds.
    Agent,
    Password,
}

impl AuthChoice {
    pub fn method(&self) -> &'static str {
        match self {
            Self::Key { .. } => "key",
            Self::Agent => "agent",
            Self::Password => "password",
        }
    }
}

/// One attempt from the wizard.
#[derive(Debug, Clone, Deserialize, TS)]
#[ts(export)]
pub struct ConnectPlan {
    /// The provider's `ssh …` command, or `ssh ALIAS` for a `~/.ssh/config` host.
    pub ssh_command: String,
    pub auth: AuthChoice,
    /// The password (for `password`) or the key's passphrase (for an encrypted key). Used now and
    /// saved to the OS keychain with the target; never stored in the database, never sent back.
    #[ts(type = "string | null")]
    pub secret: Option<Secret>,
    /// The SHA256 fingerprint the user confirmed for a host seen for the first time.
    pub trusted_fingerprint: Option<String>,
}

/// Where a command points once `~/.ssh/config` is applied, for the wizard to show before
/// connecting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct DestinationSummary {
    /// The name as written (an address or a config alias).
    pub alias: String,
    pub host: String,
    pub port: u16,
    pub user: String,
    pub identity_files: Vec<String>,
    /// Jump hosts crossed first, as `user@host:port`.
    pub jump: Vec<String>,
    /// Options in the command that do not change where or as whom we connect.
    pub ignored: Vec<String>,
}

impl ConnectPlan {
    /// The destination, with `~/.ssh/config` applied as OpenSSH would.
    pub fn destination(&self) -> Result<Destination, SshError> {
        resolve(&self.ssh_command)
    }

    /// Exactly the login the user chose, so a failure says which method was refused (the key,
    /// the agent, the password) instead of "everything failed".
    pub fn credentials(&self, destination: &Destination) -> Result<Credentials, SshError> {
        Ok(match &self.auth {
            AuthChoice::Key { path } => {
                let path: PathBuf = expand_tilde(path.trim());
                let passphrase = self
                    .secret
                    .clone()
                    .or_else(|| stored_secret(&passphrase_account(&path)));
                Credentials {
                    keys: vec![KeyFile { path, passphrase }],
                    ..Credentials::default()
                }
            }
            AuthChoice::Agent => {
                if !agent_available() {
                    return Err(SshError::Agent {
                        message:
                            "no ssh-agent is running for this session (SSH_AUTH_SOCK is not set)"
                                .to_owned(),
                    });
                }
                Credentials {
                    agent: AgentChoice::FromEnvironment,
                    ..Credentials::default()
                }
            }
            AuthChoice::Password => Credentials {
                password: self
                    .secret
                    .clone()
                    .or_else(|| stored_secret(&password_account(destination))),
                ..Credentials::default()
            },
        })
    }
}

/// Parse a command and apply the user's `~/.ssh/config`.
pub fn resolve(ssh_command: &str) -> Result<Destination, SshError> {
    let command = parse_ssh_command(ssh_command)?;
    let config = load_user_config()?;
    Destination::resolve(&command, config.as_ref())
}

/// What the wizard shows under the pasted command as the user types.
pub fn preview(ssh_command: &str) -> Result<DestinationSummary, SshError> {
    let command = parse_ssh_command(ssh_command)?;
    let config = load_user_config()?;
    let destination = Destination::resolve(&command, config.as_ref())?;
    Ok(DestinationSummary {
        alias: destination.alias.clone(),
        host: destination.host.clone(),
        port: destination.port,
        user: destination.user.clone(),
        identity_files: destination
            .identity_files
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        jump: destination.jump.iter().map(Destination::label).collect(),
        ignored: command.ignored,
    })
}

/// Whether an agent can be asked at all on this computer.
pub fn agent_available() -> bool {
    if cfg!(windows) {
        // Pageant or the OpenSSH agent service; whether it holds keys shows when logging in.
        true
    } else {
        std::env::var_os("SSH_AUTH_SOCK").is_some_and(|v| !v.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(auth: AuthChoice, secret: Option<&str>) -> ConnectPlan {
        ConnectPlan {
            ssh_command: "ssh -p 2222 root@gpu.example".to_owned(),
            auth,
            secret: secret.map(Secret::new),
            trusted_fingerprint: None,
        }
    }

    #[test]
    fn a_key_choice_tries_only_that_key_with_the_typed_passphrase() {
        let plan = plan(
            AuthChoice::Key {
                path: "/keys/id_test".to_owned(),
            },
            Some("pass phrase"),
        );
        let destination = plan.destination().expect("resolves");
        let credentials = plan.credentials(&destination).expect("credentials");
        assert_eq!(credentials.keys.len(), 1, "only the chosen key is tried");
        assert_eq!(credentials.keys[0].path, PathBuf::from("/keys/id_test"));
        assert_eq!(
            credentials.keys[0].passphrase.as_ref().map(Secret::expose),
            Some("pass phrase")
        );
        assert_eq!(
            credentials.agent,
            AgentChoice::None,
            "no agent unless chosen"
        );
        assert!(credentials.password.is_none(), "no password unless chosen");
    }

    #[test]
    fn a_password_choice_sends_only_the_password() {
        let plan = plan(AuthChoice::Password, Some("hunter2"));
        let destination = plan.destination().expect("resolves");
        let credentials = plan.credentials(&destination).expect("credentials");
        assert!(
            credentials.keys.is_empty(),
            "no default keys behind the user's back"
        );
        assert_eq!(
            credentials.password.as_ref().map(Secret::expose),
            Some("hunter2")
        );
    }

    #[test]
    fn a_plan_from_the_ui_never_prints_its_secret() {
        let plan: ConnectPlan = serde_json::from_str(
            r#"{"ssh_command":"ssh root@h","auth":{"method":"password"},"secret":"hunter2","trusted_fingerprint":null}"#,
        )
        .expect("the UI's JSON shape parses");
        assert!(
            !format!("{plan:?}").contains("hunter2"),
            "Debug must redact"
        );
        assert_eq!(plan.auth, AuthChoice::Password);
    }

    #[test]
    fn preview_names_the_wrong_part_of_a_bad_command() {
        let err = preview("ssh -p notaport root@h").expect_err("a bad port is refused");
        assert_eq!(crate::Coded::code(&err), "ssh.bad_command");
        let summary = preview("ssh -p 12345 root@region-1.autodl.com -o Compression=yes")
            .expect("a provider's command parses");
        assert_eq!(
            (summary.host.as_str(), summary.port, summary.user.as_str()),
            ("region-1.autodl.com", 12345, "root")
        );
    }
}
