//! The connections the app keeps per instance, against a real sshd: a terminal echoes what is
//! typed and reports the shell's exit, a port forward carries bytes to the machine, and closing
//! the instance's connection ends its terminals.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use leasehold_core::connect::{open_forward, ForwardRequest, LiveTargets, TerminalOutput};
use leasehold_core::ssh::{
    parse_ssh_command, ConnectOptions, Credentials, Destination, KeyFile, KnownHosts, SshTarget,
};
use leasehold_testkit::{ClientKey, TestHost};
use tokio::io::AsyncReadExt;

async fn connected(host: &TestHost, scratch: &tempfile::TempDir) -> SshTarget {
    let command = parse_ssh_command(&host.ssh_command()).expect("parses");
    let destination = Destination::resolve(&command, None).expect("resolves");
    let credentials = Credentials {
        keys: vec![KeyFile {
            path: host.key(ClientKey::Ed25519),
            passphrase: None,
        }],
        ..Credentials::default()
    };
    let options = ConnectOptions {
        known_hosts: KnownHosts::only(scratch.path().join("known_hosts")),
        accept_new_host_key: true,
        ..ConnectOptions::default()
    };
    SshTarget::connect(destination, credentials, options)
        .await
        .unwrap_or_else(|err| panic!("connect: {err}\n{}", host.log()))
}

/// What a terminal showed, and its exit status once it ended.
type Shown = (Vec<u8>, Option<Option<u32>>);

/// Collects terminal output; `wait_for` polls it (no fixed sleeps as assertions).
#[derive(Clone, Default)]
struct Screen(Arc<Mutex<Shown>>);

impl Screen {
    fn sink(&self) -> impl Fn(TerminalOutput) + Send + 'static {
        let screen = self.0.clone();
        move |output| {
            let mut screen = screen.lock().expect("lock");
            match output {
                TerminalOutput::Data(bytes) => screen.0.extend_from_slice(&bytes),
                TerminalOutput::Exited(exit) => screen.1 = Some(exit.status),
            }
        }
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().expect("lock").0).into_owned()
    }

    fn exit(&self) -> Option<Option<u32>> {
        self.0.lock().expect("lock").1
    }

    async fn wait_for(&self, what: &str, done: impl Fn(&Self) -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        while !done(self) {
            assert!(
                tokio::time::Instant::now() < deadline,
                "timed out waiting for {what}; screen so far: {:?}",
                self.text()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

#[tokio::test]
async fn a_terminal_echoes_typed_commands_and_reports_the_shells_exit() {
    let host = TestHost::start();
    let scratch = tempfile::tempdir().expect("scratch");
    let live = LiveTargets::default();
    let target = live.insert("gpu-a", connected(&host, &scratch).await).await;
    let screen = Screen::default();
    let id = live
        .terminals
        .open(&target, 100, 30, screen.sink())
        .await
        .expect("a shell opens");
    live.terminals
        .write(id, b"echo typed-$((6*7))\n")
        .await
        .expect("keystrokes reach the shell");
    screen
        .wait_for("the echoed result", |s| s.text().contains("typed-42"))
        .await;
    live.terminals.resize(id, 120, 40).await.expect("resize");
    live.terminals
        .write(id, b"stty size; exit 3\n")
        .await
        .expect("write");
    screen
        .wait_for("the shell to exit", |s| s.exit().is_some())
        .await;
    assert!(
        screen.text().contains("40 120"),
        "the shell sees the new size: {:?}",
        screen.text()
    );
    assert_eq!(
        screen.exit(),
        Some(Some(3)),
        "the exit status reaches the UI"
    );
    let err = live
        .terminals
        .write(id, b"x")
        .await
        .expect_err("an exited terminal is gone");
    assert_eq!(
        leasehold_core::Coded::code(&err),
        "connect.unknown_terminal"
    );
}

#[tokio::test]
async fn disconnecting_an_instance_ends_its_terminals() {
    let host = TestHost::start();
    let scratch = tempfile::tempdir().expect("scratch");
    let live = LiveTargets::default();
    let target = live.insert("gpu-a", connected(&host, &scratch).await).await;
    let screen = Screen::default();
    live.terminals
        .open(&target, 80, 24, screen.sink())
        .await
        .expect("a shell opens");
    drop(target);
    live.disconnect("gpu-a").await;
    screen
        .wait_for("the terminal to report its end", |s| s.exit().is_some())
        .await;
    assert!(
        live.get("gpu-a").await.is_none(),
        "the connection is forgotten"
    );
}

#[tokio::test]
async fn a_custom_forward_reaches_a_port_on_the_machine_and_closes() {
    let host = TestHost::start();
    let scratch = tempfile::tempdir().expect("scratch");
    let live = LiveTargets::default();
    let target = live.insert("gpu-a", connected(&host, &scratch).await).await;
    // The machine's own sshd is a service on it: its banner must come through the forward.
    let info = open_forward(
        &target,
        &ForwardRequest::Custom {
            remote_port: host.port(),
            local_port: None,
        },
    )
    .await
    .expect("forward opens");
    assert_ne!(info.local_port, 0, "a free local port was picked");
    assert_eq!(info.url, format!("http://127.0.0.1:{}/", info.local_port));
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", info.local_port))
        .await
        .expect("the local port listens");
    let mut banner = [0u8; 8];
    tokio::time::timeout(Duration::from_secs(10), stream.read_exact(&mut banner))
        .await
        .expect("banner in time")
        .expect("banner read");
    assert_eq!(
        &banner, b"SSH-2.0-",
        "the bytes come from the machine's port"
    );
    assert_eq!(target.forwards().len(), 1);
    target.close_forward(info.id).expect("closes");
    assert!(
        target.forwards().is_empty(),
        "a closed forward is not listed"
    );
}
