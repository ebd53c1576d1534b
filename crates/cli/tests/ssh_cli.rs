//! The exact CLI contracts of `ssh-parse`, `exec`, `copy` and `forward`, run as a user would,
//! against a real sshd test host.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};

use assert_cmd::cargo::CommandCargoExt;
use leasehold_testkit::{ClientKey, TestHost};

fn leasehold() -> Command {
    let mut command = Command::cargo_bin("leasehold").expect("binary built");
    // Keep the app's own known_hosts and the user's ~/.ssh out of the tests.
    command.env("HOME", std::env::temp_dir().join("lh-cli-test-home"));
    command.env(
        "XDG_DATA_HOME",
        std::env::temp_dir().join("lh-cli-test-home"),
    );
    command.env_remove("SSH_AUTH_SOCK");
    command
}

struct Host {
    host: TestHost,
    dir: tempfile::TempDir,
}

impl Host {
    fn new() -> Self {
        Self {
            host: TestHost::start(),
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    fn known_hosts(&self) -> String {
        self.dir.path().join("known_hosts").display().to_string()
    }

    /// `leasehold SUB --ssh … -i KEY --known-hosts F --accept-new-host-key`
    fn command(&self, sub: &str) -> Command {
        let mut command = leasehold();
        command
            .arg(sub)
            .arg("--ssh")
            .arg(self.host.ssh_command())
            .arg("-i")
            .arg(self.host.key(ClientKey::Ed25519))
            .arg("--known-hosts")
            .arg(self.known_hosts())
            .arg("--accept-new-host-key");
        command
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn ssh_parse_prints_the_exact_json_contract() {
    let out = leasehold()
        .args(["ssh-parse", "ssh -p 12345 root@host", "--json"])
        .output()
        .expect("runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        value,
        serde_json::json!({"host": "host", "port": 12345, "user": "root",
            "identity_file": null, "jump": [], "ignored": []})
    );
}

#[test]
fn ssh_parse_rejects_a_malformed_command_with_exit_2_naming_the_part() {
    let out = leasehold()
        .args(["ssh-parse", "ssh -p notaport root@host", "--json"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "nothing is written on bad input");
    assert!(
        text(&out.stderr).contains("-p notaport"),
        "the message names the wrong part: {}",
        text(&out.stderr)
    );
}

#[test]
fn exec_passes_output_through_and_returns_the_remote_exit_code() {
    let host = Host::new();
    let out = host
        .command("exec")
        .args(["--", "echo out; echo err >&2; exit 7"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(7), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "out\n");
    assert_eq!(text(&out.stderr), "err\n");

    // Words are joined by spaces and the remote shell interprets them, like ssh.
    let out = host
        .command("exec")
        .args(["--", "printf", "%s-%s", "a", "b", "&&", "echo", "$((6*7))"])
        .output()
        .expect("runs");
    assert_eq!(text(&out.stdout), "a-b42\n");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn exec_feeds_stdin_to_the_remote_command() {
    let host = Host::new();
    let mut child = host
        .command("exec")
        .args(["--", "tr", "a-z", "A-Z"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"shout\n")
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    assert_eq!(text(&out.stdout), "SHOUT\n");
}

#[test]
fn exec_with_a_password_from_the_environment() {
    let host = Host::new();
    let out = leasehold()
        .arg("exec")
        .arg("--ssh")
        .arg(host.host.ssh_command())
        .arg("--known-hosts")
        .arg(host.known_hosts())
        .arg("--accept-new-host-key")
        .args(["--password-env", "LH_TEST_PW", "--", "id", "-un"])
        .env("LH_TEST_PW", host.host.password())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), host.host.user());
}

#[test]
fn exec_refuses_an_unknown_host_without_consent_and_exits_255() {
    let host = Host::new();
    let marker = host.host.remote_dir().join("ran");
    let out = leasehold()
        .arg("exec")
        .arg("--ssh")
        .arg(host.host.ssh_command())
        .arg("-i")
        .arg(host.host.key(ClientKey::Ed25519))
        .arg("--known-hosts")
        .arg(host.known_hosts())
        .arg("--")
        .arg(format!("touch {}", marker.display()))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(255));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("SHA256:") && stderr.contains("ssh.host_key_unknown"),
        "the fingerprint is shown: {stderr}"
    );
    assert!(!marker.exists(), "nothing ran");
}

#[test]
fn exec_stops_on_a_changed_host_key_with_exit_255_and_runs_nothing() {
    let host = Host::new();
    let first = host
        .command("exec")
        .args(["--", "true"])
        .output()
        .expect("runs");
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    host.host.rotate_host_key();
    let marker = host.host.remote_dir().join("ran");
    let out = host
        .command("exec")
        .arg("--")
        .arg(format!("touch {}", marker.display()))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(255));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("ssh.host_key_changed"), "{stderr}");
    assert!(!marker.exists(), "no command may run after a key change");
}

#[test]
fn exec_reports_a_refused_port_with_255() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let out = leasehold()
        .args([
            "exec",
            "--ssh",
            &format!("ssh -p {port} root@127.0.0.1"),
            "--",
            "true",
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(255));
    assert!(
        text(&out.stderr).contains("ssh.refused"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn copy_uploads_and_downloads_with_progress_on_stderr() {
    let host = Host::new();
    let local = host.dir.path().join("data.bin");
    let content: Vec<u8> = (0..2_000_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&local, &content).expect("write");
    let remote_dir = host.host.remote_dir();
    let out = host
        .command("copy")
        .arg(&local)
        .arg(format!(":{}", remote_dir.display()))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("SHA-256 verified"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        std::fs::read(remote_dir.join("data.bin")).expect("copied into the folder"),
        content
    );

    let back = host.dir.path().join("back.bin");
    let out = host
        .command("copy")
        .arg(format!(":{}", remote_dir.join("data.bin").display()))
        .arg(&back)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("100.0%"), "progress is shown");
    assert_eq!(std::fs::read(&back).expect("downloaded"), content);
}

#[test]
fn copy_needs_exactly_one_remote_side() {
    let out = leasehold()
        .args(["copy", "--ssh", "ssh root@127.0.0.1", "a", "b"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn forward_carries_a_local_port_to_the_instance() {
    let host = Host::new();
    let echo = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let echo_port = echo.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for stream in echo.incoming().flatten() {
            let mut reader = stream.try_clone().expect("clone");
            let mut writer = stream;
            let _ = std::io::copy(&mut reader, &mut writer);
        }
    });
    let local_port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let mut child = host
        .command("forward")
        .arg(format!("{local_port}:{echo_port}"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn forward");
    let mut url = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut url)
        .expect("the URL is printed once listening");
    let result = (|| {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", local_port))?;
        stream.write_all(b"over the tunnel")?;
        let mut reply = [0u8; 15];
        stream.read_exact(&mut reply)?;
        Ok::<_, std::io::Error>(reply)
    })();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(url.trim(), format!("http://127.0.0.1:{local_port}/"));
    assert_eq!(&result.expect("round trip"), b"over the tunnel");
}
