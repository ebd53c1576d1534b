//! Connecting and trusting: every login method, trust on first use, the hard stop on a changed
//! host key, and the messages for wrong credentials and unreachable hosts — against real sshd.

mod common;

use std::path::Path;
use std::time::Duration;

use common::Setup;
use leasehold_core::ssh::{
    AgentChoice, ConnectOptions, Credentials, KeyFile, Secret, SshError, SshTarget,
};
use leasehold_core::target::{CommandSpec, Target};
use leasehold_core::Coded;
use leasehold_testkit::{ClientKey, HostKeyKind, SshdOptions, KEY_PASSPHRASE};

async fn whoami(target: &SshTarget) -> String {
    let out = target
        .run(&CommandSpec::new("id -un"))
        .await
        .expect("id runs");
    out.stdout_text().trim().to_owned()
}

#[tokio::test]
async fn every_key_type_logs_in() {
    let setup = Setup::new();
    for key in [ClientKey::Ed25519, ClientKey::Ecdsa, ClientKey::Rsa] {
        let target = setup
            .connect_with(Credentials {
                keys: vec![KeyFile {
                    path: setup.host.key(key),
                    passphrase: None,
                }],
                ..Credentials::default()
            })
            .await
            .unwrap_or_else(|err| panic!("{key:?} key must log in: {err}"));
        assert_eq!(whoami(&target).await, setup.host.user(), "{key:?}");
    }
}

#[tokio::test]
async fn encrypted_key_needs_its_passphrase() {
    let setup = Setup::new();
    let path = setup.host.key(ClientKey::Ed25519Encrypted);
    let without = setup
        .connect_with(Credentials {
            keys: vec![KeyFile {
                path: path.clone(),
                passphrase: None,
            }],
            ..Credentials::default()
        })
        .await
        .expect_err("an encrypted key without passphrase cannot log in");
    assert_eq!(without.code(), "ssh.passphrase_needed", "{without}");

    let wrong = setup
        .connect_with(Credentials {
            keys: vec![KeyFile {
                path: path.clone(),
                passphrase: Some(Secret::new("not it")),
            }],
            ..Credentials::default()
        })
        .await
        .expect_err("a wrong passphrase cannot log in");
    assert_eq!(wrong.code(), "ssh.passphrase_wrong", "{wrong}");

    let target = setup
        .connect_with(Credentials {
            keys: vec![KeyFile {
                path,
                passphrase: Some(Secret::new(KEY_PASSPHRASE)),
            }],
            ..Credentials::default()
        })
        .await
        .expect("the right passphrase logs in");
    assert_eq!(whoami(&target).await, setup.host.user());
}

#[tokio::test]
async fn password_logs_in_and_a_wrong_one_asks_for_new_credentials() {
    let setup = Setup::new();
    let target = setup
        .connect_with(Credentials {
            password: Some(Secret::new(setup.host.password())),
            ..Credentials::default()
        })
        .await
        .expect("the right password logs in");
    assert_eq!(whoami(&target).await, setup.host.user());

    let err = setup
        .connect_with(Credentials {
            password: Some(Secret::new("wrong-password")),
            ..Credentials::default()
        })
        .await
        .expect_err("a wrong password must fail");
    assert_eq!(err.code(), "ssh.auth_failed");
    let message = err.to_string();
    assert!(
        message.contains("password") && message.contains(setup.host.user()),
        "the message must say what was tried and as whom: {message}"
    );
    assert!(
        !message.contains("wrong-password"),
        "the password must never appear in a message"
    );
}

#[tokio::test]
async fn unknown_user_is_reported_as_a_rejected_login() {
    let setup = Setup::new();
    let mut destination = setup.destination();
    destination.user = "no-such-user-lh".to_owned();
    let err = SshTarget::connect(
        destination,
        Credentials {
            password: Some(Secret::new("x")),
            ..setup.key_credentials()
        },
        setup.options(true),
    )
    .await
    .expect_err("an unknown user cannot log in");
    assert_eq!(err.code(), "ssh.auth_failed");
    assert!(
        err.to_string().contains("no-such-user-lh"),
        "the message names the user so a typo is visible: {err}"
    );
}

#[tokio::test]
async fn agent_keys_log_in() {
    let setup = Setup::new();
    let socket = setup.scratch.path().join("agent.sock");
    let agent = std::process::Command::new("ssh-agent")
        .arg("-D")
        .arg("-a")
        .arg(&socket)
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("start ssh-agent");
    let _agent = KillOnDrop(agent);
    wait_for(&socket);
    let added = std::process::Command::new("ssh-add")
        .arg(setup.host.key(ClientKey::Ecdsa))
        .env("SSH_AUTH_SOCK", &socket)
        .output()
        .expect("run ssh-add");
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    let target = setup
        .connect_with(Credentials {
            agent: AgentChoice::Socket(socket),
            ..Credentials::default()
        })
        .await
        .expect("the agent's key logs in");
    assert_eq!(whoami(&target).await, setup.host.user());
}

#[tokio::test]
async fn first_contact_shows_the_fingerprint_unless_accepted() {
    let setup = Setup::new();
    let err = SshTarget::connect(
        setup.destination(),
        setup.key_credentials(),
        setup.options(false),
    )
    .await
    .expect_err("an unknown host must not be trusted silently");
    match &err {
        SshError::HostKeyUnknown { fingerprint, .. } => {
            let expected = ssh_keygen_fingerprint(&setup.host.host_public_key());
            assert_eq!(
                fingerprint, &expected,
                "the fingerprint must match what ssh-keygen -l shows"
            );
        }
        other => panic!("expected ssh.host_key_unknown, got {other:?}"),
    }
    assert!(
        !setup.known_hosts_path().exists(),
        "nothing may be recorded without consent"
    );
    // Accepting records it; the next strict connection is trusted.
    drop(setup.connect().await);
    SshTarget::connect(
        setup.destination(),
        setup.key_credentials(),
        setup.options(false),
    )
    .await
    .expect("a recorded host is trusted");
}

#[tokio::test]
async fn a_changed_host_key_stops_before_any_command_runs() {
    let setup = Setup::new();
    drop(setup.connect().await); // trust on first use
    setup.host.rotate_host_key();
    let marker = setup.host.remote_dir().join("must-not-exist");
    let err = async {
        let target = SshTarget::connect(
            setup.destination(),
            setup.key_credentials(),
            setup.options(true),
        )
        .await?;
        // Only reached if the connection was (wrongly) accepted.
        let script = format!(
            "touch {}",
            leasehold_core::shell::quote(&marker.to_string_lossy())
        );
        target.exec(&CommandSpec::new(script)).await.map(|_| target)
    }
    .await
    .expect_err("a changed key must be refused even with accept-new");
    match &err {
        SshError::HostKeyChanged {
            new_fingerprint,
            recorded,
            ..
        } => {
            let (old_fingerprint, line) = (&recorded[0].fingerprint, &recorded[0].line);
            assert_ne!(old_fingerprint, new_fingerprint);
            assert_eq!(
                new_fingerprint,
                &ssh_keygen_fingerprint(&setup.host.host_public_key())
            );
            assert_eq!(*line, 1, "the offending known_hosts line is named");
        }
        other => panic!("expected ssh.host_key_changed, got {other:?}"),
    }
    assert_eq!(err.code(), "ssh.host_key_changed");
    assert!(
        !marker.exists(),
        "no command may reach a host whose key changed"
    );
}

#[tokio::test]
async fn a_host_that_now_offers_only_another_key_type_is_a_changed_key() {
    for kind in [HostKeyKind::Ecdsa, HostKeyKind::Rsa] {
        let mut setup = Setup::new();
        drop(setup.connect().await); // known by its ed25519 key
        let known_before = std::fs::read_to_string(setup.known_hosts_path()).expect("recorded");
        let old = ssh_keygen_fingerprint(&setup.host.host_public_key());
        setup.host.rotate_host_key_to(kind);
        let err = SshTarget::connect(
            setup.destination(),
            setup.key_credentials(),
            setup.options(true),
        )
        .await
        .expect_err("another key type is a change, even with accept-new");
        match &err {
            SshError::HostKeyChanged {
                new_fingerprint,
                new_algorithm,
                recorded,
                ..
            } => {
                assert_eq!(
                    new_fingerprint,
                    &ssh_keygen_fingerprint(&setup.host.host_public_key_of(kind)),
                    "{kind:?}"
                );
                let expected_type = match kind {
                    HostKeyKind::Rsa => "ssh-rsa",
                    _ => "ecdsa-sha2-nistp256",
                };
                assert_eq!(new_algorithm, expected_type);
                assert_eq!(recorded.len(), 1);
                assert_eq!(recorded[0].algorithm, "ssh-ed25519");
                assert_eq!(recorded[0].fingerprint, old);
            }
            other => panic!("{kind:?}: expected ssh.host_key_changed, got {other:?}"),
        }
        assert_eq!(
            std::fs::read_to_string(setup.known_hosts_path()).expect("still there"),
            known_before,
            "{kind:?}: accept-new must not learn a key of another type"
        );
    }
}

#[tokio::test]
async fn a_host_with_several_key_types_is_asked_for_the_one_we_know() {
    let setup = Setup::with(SshdOptions {
        host_keys: vec![HostKeyKind::Ed25519, HostKeyKind::Rsa],
        ..SshdOptions::default()
    });
    // Known by its RSA key only (say, from a terminal with an old OpenSSH).
    let rsa = setup.host.host_public_key_of(HostKeyKind::Rsa);
    let mut words = rsa.split_whitespace();
    let line = format!(
        "[{}]:{} {} {}\n",
        setup.host.host(),
        setup.host.port(),
        words.next().expect("type"),
        words.next().expect("key")
    );
    std::fs::write(setup.known_hosts_path(), &line).expect("write known_hosts");
    let target = SshTarget::connect(
        setup.destination(),
        setup.key_credentials(),
        setup.options(false),
    )
    .await
    .expect("the known RSA key is negotiated and trusted, not the unknown ed25519 one");
    assert_eq!(whoami(&target).await, setup.host.user());
    assert_eq!(
        std::fs::read_to_string(setup.known_hosts_path()).expect("file"),
        line,
        "nothing new was learned"
    );
}

#[tokio::test]
async fn a_jump_host_never_receives_the_destinations_password() {
    let hop = Setup::new();
    let dest = Setup::new();
    // Both test hosts accept the same user and password, so a hop offered the destination's
    // password would take it: its log shows what it was offered.
    let mut hop_destination = hop.destination();
    // The hop's own key, as `IdentityFile` under its `Host` block in ~/.ssh/config would give.
    hop_destination.identity_files = vec![hop.host.key(ClientKey::Ecdsa)];
    let mut destination = dest.destination();
    destination.jump = vec![hop_destination];
    let target = SshTarget::connect(
        destination,
        Credentials {
            password: Some(Secret::new(dest.host.password())),
            ..Credentials::default()
        },
        dest.options(true),
    )
    .await
    .unwrap_or_else(|err| panic!("connects through the hop: {err}\n{}", hop.host.log()));
    assert_eq!(whoami(&target).await, dest.host.user());
    let hop_log = hop.host.log();
    assert!(
        hop_log.contains("Accepted publickey"),
        "the hop logs in with its own key: {hop_log}"
    );
    assert!(
        !hop_log.contains("password for"),
        "no password may be offered to the hop: {hop_log}"
    );
    assert!(
        dest.host.log().contains("Accepted password"),
        "the destination gets its password: {}",
        dest.host.log()
    );
}

#[tokio::test]
async fn a_jump_host_without_credentials_of_its_own_is_refused_by_name() {
    let hop = Setup::new();
    let dest = Setup::new();
    let mut hop_destination = hop.destination();
    // A key the hop does not trust: the hop has no usable credentials of its own.
    let stranger = hop.scratch.path().join("stranger");
    let made = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&stranger)
        .status()
        .expect("ssh-keygen");
    assert!(made.success());
    hop_destination.identity_files = vec![stranger];
    let mut destination = dest.destination();
    destination.jump = vec![hop_destination];
    let err = SshTarget::connect(
        destination,
        Credentials {
            keys: vec![KeyFile {
                path: dest.host.key(ClientKey::Ed25519),
                passphrase: None,
            }],
            password: Some(Secret::new(dest.host.password())),
            ..Credentials::default()
        },
        dest.options(true),
    )
    .await
    .expect_err("the hop accepts none of its own credentials");
    assert_eq!(err.code(), "ssh.auth_failed", "{err}");
    let hop_log = hop.host.log();
    assert!(
        !hop_log.contains("password for") && !hop_log.contains("Accepted"),
        "neither the destination's password nor its key may reach the hop: {hop_log}"
    );
}

#[tokio::test]
async fn a_refused_port_fails_fast_with_a_clear_code() {
    let setup = Setup::new();
    let mut destination = setup.destination();
    destination.port = closed_port();
    let err = SshTarget::connect(destination, setup.key_credentials(), setup.options(true))
        .await
        .expect_err("nothing listens there");
    assert_eq!(err.code(), "ssh.refused", "{err}");
    assert!(err.is_connection_failure());
}

#[tokio::test]
async fn a_silent_server_times_out_within_the_connect_timeout() {
    let setup = Setup::new();
    // Accepts TCP but never speaks SSH: the handshake must not hang forever.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let mut destination = setup.destination();
    destination.port = silent.local_addr().expect("addr").port();
    let options = ConnectOptions {
        connect_timeout: Duration::from_millis(500),
        ..setup.options(true)
    };
    let err = SshTarget::connect(destination, setup.key_credentials(), options)
        .await
        .expect_err("a silent server must time out");
    assert_eq!(err.code(), "ssh.connect_timeout", "{err}");
}

#[tokio::test]
async fn connecting_waits_for_sshd_that_is_still_booting() {
    let mut setup = Setup::new();
    setup.host.stop();
    let destination = setup.destination();
    let credentials = setup.key_credentials();
    let options = ConnectOptions {
        boot_wait: Duration::from_secs(20),
        ..setup.options(true)
    };
    let connecting =
        tokio::spawn(async move { SshTarget::connect(destination, credentials, options).await });
    tokio::time::sleep(Duration::from_millis(600)).await;
    setup.host.restart();
    let target = connecting
        .await
        .expect("task")
        .expect("the retry must reach sshd once it listens");
    assert_eq!(whoami(&target).await, setup.host.user());
}

fn ssh_keygen_fingerprint(public_key_line: &str) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("k.pub");
    std::fs::write(&path, public_key_line).expect("write key");
    let out = std::process::Command::new("ssh-keygen")
        .arg("-lf")
        .arg(&path)
        .output()
        .expect("ssh-keygen -l");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .nth(1)
        .expect("fingerprint field")
        .to_owned()
}

fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

fn wait_for(path: &Path) {
    for _ in 0..200 {
        if path.exists() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("{} never appeared", path.display());
}

struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
