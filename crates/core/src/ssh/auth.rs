//! Logging in: key files, ssh-agent, password — tried in that order, like OpenSSH.
//!
//! Secrets are held in [`Secret`], whose `Debug` never prints the value, so a password cannot
//! leak into a log line or an error message by accident.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use russh::client::{AuthResult, Handle, Handler};
use russh::keys::agent::client::AgentClient;
use russh::keys::agent::AgentIdentity;
use russh::keys::{PrivateKey, PrivateKeyWithHashAlg};

use super::SshError;

/// A password or passphrase. Never printed, never stored outside the OS keychain.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

/// A secret typed into the UI arrives as a plain JSON string; it is wrapped at once so it can
/// never be printed. There is deliberately no `Serialize`: a secret never goes back out.
impl<'de> serde::Deserialize<'de> for Secret {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Self)
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// A private key file and, when it is encrypted, its passphrase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyFile {
    pub path: PathBuf,
    pub passphrase: Option<Secret>,
}

/// Which ssh-agent to ask.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum AgentChoice {
    /// Do not use an agent.
    #[default]
    None,
    /// The agent named by `SSH_AUTH_SOCK`, when set; on Windows also the Windows OpenSSH agent's
    /// named pipe and then Pageant (see [`windows_agents`]).
    FromEnvironment,
    /// An agent socket at this path.
    Socket(PathBuf),
}

/// How to log in, tried in order: key files, agent, password.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Credentials {
    pub keys: Vec<KeyFile>,
    pub agent: AgentChoice,
    pub password: Option<Secret>,
}

impl Credentials {
    /// What OpenSSH would try: the given key files, else the default `~/.ssh/id_*` files that
    /// exist; the agent from `SSH_AUTH_SOCK`; and `password` if given.
    pub fn like_openssh(identity_files: &[PathBuf], password: Option<Secret>) -> Self {
        let mut paths: Vec<PathBuf> = identity_files.to_vec();
        if paths.is_empty() {
            if let Some(ssh_dir) = super::destination::user_ssh_dir() {
                paths = ["id_ed25519", "id_ecdsa", "id_rsa"]
                    .iter()
                    .map(|name| ssh_dir.join(name))
                    .filter(|path| path.is_file())
                    .collect();
            }
        }
        Self {
            keys: paths
                .into_iter()
                .map(|path| KeyFile {
                    path,
                    passphrase: None,
                })
                .collect(),
            agent: AgentChoice::FromEnvironment,
            password,
        }
    }
}

/// Read a private key, decrypting it with its passphrase when it has one.
pub fn load_private_key(path: &Path, passphrase: Option<&Secret>) -> Result<PrivateKey, SshError> {
    let unusable = |message: String| SshError::KeyUnusable {
        path: path.to_owned(),
        message,
    };
    match russh::keys::load_secret_key(path, None) {
        Ok(key) => Ok(key),
        Err(russh::keys::Error::KeyIsEncrypted) => {
            let Some(passphrase) = passphrase else {
                return Err(SshError::PassphraseNeeded {
                    path: path.to_owned(),
                });
            };
            russh::keys::load_secret_key(path, Some(passphrase.expose())).map_err(|_| {
                SshError::PassphraseWrong {
                    path: path.to_owned(),
                }
            })
        }
        Err(russh::keys::Error::IO(err)) => Err(unusable(err.to_string())),
        Err(err) => Err(unusable(format!("not a private key we can read ({err})"))),
    }
}

/// The key files of [`Credentials`], read (and decrypted) once. A redial reads them before the
/// link is back and shares them among its attempts, so no attempt spends its time on disk reads
/// or a passphrase's key derivation (bcrypt, tenths of a second) after the network returns.
/// Held only while connecting: the decrypted keys are dropped with it.
pub(crate) struct LoadedKeys(Vec<Result<Arc<PrivateKey>, SshError>>);

impl LoadedKeys {
    pub(crate) fn load(credentials: &Credentials) -> Self {
        Self(
            credentials
                .keys
                .iter()
                .map(|key_file| {
                    load_private_key(&key_file.path, key_file.passphrase.as_ref()).map(Arc::new)
                })
                .collect(),
        )
    }
}

/// Log in on an established transport: key files, agent, password, in that order. The key files
/// come from `loaded` when they were read beforehand, else each is read when its turn comes (a
/// key after the one that works is never decrypted). Returns once the server accepted a method.
pub(crate) async fn authenticate<H: Handler>(
    handle: &mut Handle<H>,
    host: &str,
    user: &str,
    credentials: &Credentials,
    loaded: Option<&LoadedKeys>,
) -> Result<(), SshError> {
    let mut tried: Vec<String> = Vec::new();
    let mut key_problem: Option<SshError> = None;
    let dropped = |err: &dyn std::fmt::Display| SshError::Disconnected {
        host: host.to_owned(),
        message: format!("during login: {err}"),
    };

    for (index, key_file) in credentials.keys.iter().enumerate() {
        let key = match loaded.and_then(|loaded| loaded.0.get(index)) {
            Some(key) => key.clone(),
            None => load_private_key(&key_file.path, key_file.passphrase.as_ref()).map(Arc::new),
        };
        let key = match key {
            Ok(key) => key,
            Err(err) => {
                tracing::debug!(path = %key_file.path.display(), code = crate::Coded::code(&err), "key skipped");
                key_problem.get_or_insert(err);
                continue;
            }
        };
        let hash = if key.algorithm().is_rsa() {
            handle
                .best_supported_rsa_hash()
                .await
                .map_err(|e| dropped(&e))?
                .flatten()
        } else {
            None
        };
        let result = handle
            .authenticate_publickey(user, PrivateKeyWithHashAlg::new(key, hash))
            .await
            .map_err(|e| dropped(&e))?;
        if result.success() {
            return Ok(());
        }
        tried.push(format!("key {}", key_file.path.display()));
    }

    if let Some(mut agent) = connect_agent(&credentials.agent).await? {
        let identities = agent
            .request_identities()
            .await
            .map_err(|err| SshError::Agent {
                message: err.to_string(),
            })?;
        let hash = handle
            .best_supported_rsa_hash()
            .await
            .map_err(|e| dropped(&e))?
            .flatten();
        for identity in identities {
            let AgentIdentity::PublicKey { key, .. } = identity else {
                continue;
            };
            let hash = key.algorithm().is_rsa().then_some(hash).flatten();
            match handle
                .authenticate_publickey_with(user, key, hash, &mut agent)
                .await
            {
                Ok(AuthResult::Success) => return Ok(()),
                Ok(_) => {}
                Err(err) => tracing::debug!(%err, "agent could not sign"),
            }
        }
        tried.push("ssh-agent".to_owned());
    }

    if let Some(password) = &credentials.password {
        let result = handle
            .authenticate_password(user, password.expose())
            .await
            .map_err(|e| dropped(&e))?;
        if result.success() {
            return Ok(());
        }
        tried.push("password".to_owned());
    }

    if tried.is_empty() {
        return Err(key_problem.unwrap_or(SshError::NoCredentials));
    }
    Err(SshError::AuthFailed {
        host: host.to_owned(),
        user: user.to_owned(),
        tried: tried.join(", "),
    })
}

/// The Windows OpenSSH agent service's pipe (`ssh-agent` in Services, which `ssh-add` feeds).
pub const WINDOWS_OPENSSH_AGENT_PIPE: &str = r"\\.\pipe\openssh-ssh-agent";

/// An agent a Windows laptop may run.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(not(windows), allow(dead_code))]
enum WindowsAgent {
    Pipe(std::ffi::OsString),
    Pageant,
}

/// The agents to try on Windows, in order: the pipe `SSH_AUTH_SOCK` names (set by users who
/// run another agent), the Windows OpenSSH agent, then Pageant (PuTTY's, which many Windows
/// users keep their keys in). Each one that does not answer is skipped.
#[cfg_attr(not(windows), allow(dead_code))]
fn windows_agents(auth_sock: Option<std::ffi::OsString>) -> Vec<WindowsAgent> {
    let mut agents: Vec<WindowsAgent> = auth_sock
        .filter(|sock| !sock.is_empty() && sock != WINDOWS_OPENSSH_AGENT_PIPE)
        .map(WindowsAgent::Pipe)
        .into_iter()
        .collect();
    agents.push(WindowsAgent::Pipe(WINDOWS_OPENSSH_AGENT_PIPE.into()));
    agents.push(WindowsAgent::Pageant);
    agents
}

type DynAgent = AgentClient<Box<dyn russh::keys::agent::client::AgentStream + Send + Unpin>>;

async fn connect_agent(choice: &AgentChoice) -> Result<Option<DynAgent>, SshError> {
    let agent_error = |err: russh::keys::Error| SshError::Agent {
        message: err.to_string(),
    };
    match choice {
        AgentChoice::None => Ok(None),
        AgentChoice::FromEnvironment => {
            #[cfg(unix)]
            {
                if std::env::var_os("SSH_AUTH_SOCK").is_none() {
                    return Ok(None);
                }
                // A stale SSH_AUTH_SOCK is common (agent from an old login); skip it quietly
                // rather than failing a login that a key or password can still complete.
                match AgentClient::connect_env().await {
                    Ok(agent) => Ok(Some(agent.dynamic())),
                    Err(err) => {
                        tracing::debug!(%err, "ssh-agent from SSH_AUTH_SOCK unavailable");
                        Ok(None)
                    }
                }
            }
            #[cfg(windows)]
            {
                for agent in windows_agents(std::env::var_os("SSH_AUTH_SOCK")) {
                    let connected = match &agent {
                        WindowsAgent::Pipe(pipe) => AgentClient::connect_named_pipe(pipe)
                            .await
                            .map(AgentClient::dynamic),
                        WindowsAgent::Pageant => AgentClient::connect_pageant()
                            .await
                            .map(AgentClient::dynamic),
                    };
                    match connected {
                        Ok(client) => return Ok(Some(client)),
                        Err(err) => tracing::debug!(%err, ?agent, "agent unavailable"),
                    }
                }
                Ok(None)
            }
        }
        AgentChoice::Socket(path) => {
            #[cfg(unix)]
            {
                AgentClient::connect_uds(path)
                    .await
                    .map(|agent| Some(agent.dynamic()))
                    .map_err(agent_error)
            }
            #[cfg(windows)]
            {
                AgentClient::connect_named_pipe(path)
                    .await
                    .map(|agent| Some(agent.dynamic()))
                    .map_err(agent_error)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_show_in_debug_output() {
        let creds = Credentials {
            password: Some(Secret::new("hunter2")),
            ..Credentials::default()
        };
        assert!(
            !format!("{creds:?}").contains("hunter2"),
            "Debug must redact passwords"
        );
    }

    #[test]
    fn windows_tries_the_named_agent_then_openssh_then_pageant() {
        let openssh = WindowsAgent::Pipe(WINDOWS_OPENSSH_AGENT_PIPE.into());
        assert_eq!(
            windows_agents(Some(r"\\.\pipe\my-agent".into())),
            vec![
                WindowsAgent::Pipe(r"\\.\pipe\my-agent".into()),
                openssh.clone(),
                WindowsAgent::Pageant
            ]
        );
        for unset in [
            None,
            Some("".into()),
            Some(WINDOWS_OPENSSH_AGENT_PIPE.into()),
        ] {
            assert_eq!(
                windows_agents(unset.clone()),
                vec![openssh.clone(), WindowsAgent::Pageant],
                "{unset:?}: each agent is asked once"
            );
        }
    }

    #[test]
    fn a_missing_key_file_is_reported_with_its_path() {
        let err = load_private_key(Path::new("/nonexistent/id_ed25519"), None)
            .expect_err("missing file must fail");
        assert!(
            matches!(&err, SshError::KeyUnusable { path, .. } if path.ends_with("id_ed25519")),
            "got {err:?}"
        );
    }
}
