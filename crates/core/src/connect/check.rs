//! "Test the connection": connect step by step (TCP, handshake, host key, login, a first
//! command) and turn the two host-key verdicts the user must act on into answers with data —
//! the fingerprint to confirm on first contact, both fingerprints when the key changed — rather
//! than error text, so the wizard can show them in a dialog.

use std::time::Duration;

use serde::Serialize;
use ts_rs::TS;

use super::plan::{ConnectPlan, BOOT_WAIT};
use super::ConnectError;
use crate::ssh::{ConnectOptions, ConnectStep, KnownKey, SshError, SshTarget};
use crate::target::CommandSpec;

/// What a connection test ended in, when it ended in something the user must see or decide.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(tag = "outcome", rename_all = "snake_case")]
#[ts(export)]
pub enum ConnectionCheck {
    /// Logged in and ran a command.
    Connected {
        destination: String,
        remote: RemoteHello,
    },
    /// First contact: nothing is known about this host. Show the fingerprint; connect again
    /// with it as `trusted_fingerprint` once the user confirmed it.
    NeedsTrust {
        host: String,
        port: u16,
        fingerprint: String,
        algorithm: String,
        /// What prints the same fingerprint on the machine itself (its provider's web
        /// terminal), for this key's type.
        print_command: String,
    },
    /// The host presented a different key than the one recorded. Nothing was sent. Hard stop.
    HostKeyChanged {
        host: String,
        port: u16,
        old_fingerprint: String,
        new_fingerprint: String,
        /// The type of the key presented now (`ssh-rsa`, …).
        new_algorithm: String,
        known_hosts: String,
        line: usize,
        /// Every key recorded for the host, the one of the presented type first. A host known
        /// by ed25519 that now offers only RSA shows up here with its ed25519 key.
        recorded: Vec<KnownKey>,
        /// The command that removes the old lines, for when the provider confirms a rebuild.
        forget_command: String,
    },
}

/// Who we are on the instance: proof a shell really ran there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct RemoteHello {
    pub hostname: String,
    /// `uname -srm`, e.g. `Linux 5.15.0-91-generic x86_64`.
    pub system: String,
    pub user: String,
}

/// A successful test keeps its connection so the next step (Verify, a terminal) reuses it.
pub struct CheckOutcome {
    pub check: ConnectionCheck,
    pub target: Option<SshTarget>,
}

/// The first command: three facts, one per line, in a shell every image has.
const HELLO_SCRIPT: &str = "hostname; uname -srm; id -un";

/// Connect as `plan` says, reporting each step to `base.observer`; `base` also holds the
/// known_hosts files and the timeout.
pub async fn check(plan: &ConnectPlan, base: ConnectOptions) -> Result<CheckOutcome, ConnectError> {
    let destination = plan.destination()?;
    let credentials = plan.credentials(&destination)?;
    let observer = base.observer.clone();
    let options = ConnectOptions {
        trusted_fingerprint: plan.trusted_fingerprint.clone(),
        accept_new_host_key: false,
        boot_wait: if plan.keep_trying {
            BOOT_WAIT
        } else {
            base.boot_wait
        },
        ..base
    };
    let label = destination.label();
    let target = match SshTarget::connect(destination, credentials, options).await {
        Ok(target) => target,
        Err(err) => {
            return verdict(err).map(|check| CheckOutcome {
                check,
                target: None,
            })
        }
    };
    observer.started(ConnectStep::FirstCommand);
    let spec = CommandSpec::new(HELLO_SCRIPT).timeout(Duration::from_secs(20));
    let output = match target.exec(&spec).await {
        Ok(output) if output.success() => output,
        Ok(output) => {
            observer.fail_running();
            return Err(SshError::Channel {
                host: label,
                message: format!(
                    "a first command failed (exit {:?}): {}",
                    output.exit_status,
                    output.stderr_text().trim()
                ),
            }
            .into());
        }
        Err(err) => {
            observer.fail_running();
            return Err(err.into());
        }
    };
    observer.done(ConnectStep::FirstCommand);
    Ok(CheckOutcome {
        check: ConnectionCheck::Connected {
            destination: label,
            remote: parse_hello(&output.stdout_text()),
        },
        target: Some(target),
    })
}

/// Host-key refusals become answers; every other failure stays an error with its code.
fn verdict(err: SshError) -> Result<ConnectionCheck, ConnectError> {
    match err {
        SshError::HostKeyUnknown {
            host,
            port,
            fingerprint,
            algorithm,
        } => Ok(ConnectionCheck::NeedsTrust {
            host,
            port,
            fingerprint,
            print_command: fingerprint_command(&algorithm),
            algorithm,
        }),
        SshError::HostKeyChanged {
            host,
            port,
            new_fingerprint,
            new_algorithm,
            recorded,
        } => {
            let name = if port == 22 {
                host.clone()
            } else {
                format!("[{host}]:{port}")
            };
            let Some(first) = recorded.first().cloned() else {
                return Err(SshError::HostKeyChanged {
                    host,
                    port,
                    new_fingerprint,
                    new_algorithm,
                    recorded,
                }
                .into());
            };
            // One `ssh-keygen -R` per file that holds a line for the host.
            let mut files: Vec<String> = Vec::new();
            for key in &recorded {
                if !files.contains(&key.known_hosts) {
                    files.push(key.known_hosts.clone());
                }
            }
            let forget_command = files
                .iter()
                .map(|file| crate::shell::join(["ssh-keygen", "-R", name.as_str(), "-f", file]))
                .collect::<Vec<_>>()
                .join(" && ");
            Ok(ConnectionCheck::HostKeyChanged {
                host,
                port,
                old_fingerprint: first.fingerprint,
                new_fingerprint,
                new_algorithm,
                known_hosts: first.known_hosts,
                line: first.line,
                recorded,
                forget_command,
            })
        }
        other => Err(other.into()),
    }
}

/// The command that prints a host key's fingerprint on the host, for the key's SSH type
/// (`ssh-ed25519`, `ecdsa-sha2-nistp256`, `ssh-rsa`/`rsa-sha2-512`); OpenSSH keeps each type in
/// its own file. An unknown type gets every host key's.
pub fn fingerprint_command(algorithm: &str) -> String {
    let kind = if algorithm.contains("ed25519") {
        "ed25519"
    } else if algorithm.starts_with("ecdsa") {
        "ecdsa"
    } else if algorithm.contains("rsa") {
        "rsa"
    } else {
        return "for key in /etc/ssh/ssh_host_*_key.pub; do ssh-keygen -lf \"$key\"; done"
            .to_owned();
    };
    format!("ssh-keygen -lf /etc/ssh/ssh_host_{kind}_key.pub")
}

/// Pure: the first command's three lines; a missing line reads as empty, never a panic.
pub fn parse_hello(stdout: &str) -> RemoteHello {
    let mut lines = stdout.lines().map(str::trim);
    let mut next = || lines.next().unwrap_or_default().to_owned();
    RemoteHello {
        hostname: next(),
        system: next(),
        user: next(),
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn the_first_commands_lines_become_hostname_system_and_user() {
        let hello = parse_hello("autodl-container-7f3a\nLinux 5.15.0-91-generic x86_64\nroot\n");
        assert_eq!(hello.hostname, "autodl-container-7f3a");
        assert_eq!(hello.system, "Linux 5.15.0-91-generic x86_64");
        assert_eq!(hello.user, "root");
    }

    #[test]
    fn short_output_reads_as_empty_fields_not_a_panic() {
        let hello = parse_hello("only-a-hostname");
        assert_eq!(hello.hostname, "only-a-hostname");
        assert_eq!((hello.system.as_str(), hello.user.as_str()), ("", ""));
        assert_eq!(parse_hello("").hostname, "");
    }

    #[test]
    fn an_unknown_host_is_a_question_with_its_fingerprint() {
        let check = verdict(SshError::HostKeyUnknown {
            host: "10.0.0.1".into(),
            port: 2222,
            fingerprint: "SHA256:abc".into(),
            algorithm: "ssh-ed25519".into(),
        })
        .expect("first contact is not an error");
        assert_eq!(
            check,
            ConnectionCheck::NeedsTrust {
                host: "10.0.0.1".into(),
                port: 2222,
                fingerprint: "SHA256:abc".into(),
                algorithm: "ssh-ed25519".into(),
                print_command: "ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub".into(),
            }
        );
    }

    #[test]
    fn the_fingerprint_is_printed_from_the_file_of_the_keys_type() {
        for (algorithm, file) in [
            ("ssh-ed25519", "/etc/ssh/ssh_host_ed25519_key.pub"),
            ("ecdsa-sha2-nistp256", "/etc/ssh/ssh_host_ecdsa_key.pub"),
            ("rsa-sha2-512", "/etc/ssh/ssh_host_rsa_key.pub"),
            ("ssh-rsa", "/etc/ssh/ssh_host_rsa_key.pub"),
        ] {
            assert_eq!(
                fingerprint_command(algorithm),
                format!("ssh-keygen -lf {file}")
            );
        }
        assert!(fingerprint_command("sk-ssh-unknown@example").contains("ssh_host_*_key.pub"));
        let check = verdict(SshError::HostKeyUnknown {
            host: "gpu.example".into(),
            port: 40022,
            fingerprint: "SHA256:abc".into(),
            algorithm: "ssh-ed25519".into(),
        });
        assert!(matches!(
            check,
            Ok(ConnectionCheck::NeedsTrust { print_command, .. })
                if print_command == "ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub"
        ));
    }

    #[test]
    fn a_changed_key_names_both_fingerprints_and_a_quoted_forget_command() {
        let check = verdict(SshError::HostKeyChanged {
            host: "gpu.example".into(),
            port: 40022,
            new_fingerprint: "SHA256:new".into(),
            new_algorithm: "ssh-ed25519".into(),
            recorded: vec![KnownKey {
                algorithm: "ssh-ed25519".into(),
                fingerprint: "SHA256:old".into(),
                known_hosts: "/home/me/My Files/known_hosts".into(),
                line: 3,
            }],
        })
        .expect("a changed key is an answer with data");
        let ConnectionCheck::HostKeyChanged {
            old_fingerprint,
            new_fingerprint,
            forget_command,
            line,
            ..
        } = check
        else {
            panic!("expected host_key_changed, got {check:?}");
        };
        assert_eq!(
            (old_fingerprint.as_str(), new_fingerprint.as_str()),
            ("SHA256:old", "SHA256:new")
        );
        assert_eq!(line, 3);
        assert_eq!(
            forget_command,
            "ssh-keygen -R '[gpu.example]:40022' -f '/home/me/My Files/known_hosts'",
            "the path with a space and the bracketed name must reach the shell quoted"
        );
    }

    #[test]
    fn a_host_known_in_two_files_gets_a_forget_command_for_each() {
        let known = |file: &str| KnownKey {
            algorithm: "ssh-ed25519".into(),
            fingerprint: "SHA256:old".into(),
            known_hosts: file.into(),
            line: 1,
        };
        let check = verdict(SshError::HostKeyChanged {
            host: "h".into(),
            port: 22,
            new_fingerprint: "SHA256:new".into(),
            new_algorithm: "ssh-rsa".into(),
            recorded: vec![known("/a/known_hosts"), known("/b/known_hosts")],
        })
        .expect("an answer");
        let ConnectionCheck::HostKeyChanged {
            forget_command,
            recorded,
            ..
        } = check
        else {
            panic!("expected host_key_changed");
        };
        assert_eq!(recorded.len(), 2, "every recorded key reaches the dialog");
        assert_eq!(
            forget_command,
            "ssh-keygen -R h -f /a/known_hosts && ssh-keygen -R h -f /b/known_hosts"
        );
    }

    #[test]
    fn other_failures_stay_errors_with_their_codes() {
        let err = verdict(SshError::Refused {
            host: "h".into(),
            port: 22,
        })
        .expect_err("a refused connection is an error");
        assert_eq!(crate::Coded::code(&err), "ssh.refused");
    }
}
