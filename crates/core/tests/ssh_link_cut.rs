//! The SSH engine over a link that breaks: sshd in a network namespace behind the delay link,
//! which the tests cut. A short cut must cost nothing but time; a cut long enough for the
//! keepalive to give up must end in a reconnect, not an error for the next command.
//!
//! Needs root (namespaces, TUN devices, sshd); elsewhere each test prints why it is skipped.

use std::io::Write;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use leasehold_core::ssh::{
    parse_ssh_command, ConnectOptions, Credentials, Destination, KeyFile, KnownHosts, LinkState,
    SshTarget, TransferOptions, TransferProgress,
};
use leasehold_core::target::{CommandSpec, LineSplitter, OutputStream, Target};
use leasehold_testkit::delay_link::DelayLink;
use leasehold_testkit::netns;
use leasehold_testkit::{ClientKey, SshdOptions, TestHost};

const ONE_WAY: Duration = Duration::from_millis(5);
const KEEPALIVE: Duration = Duration::from_secs(1);

/// sshd behind a delay link, and a scratch folder for the client's known_hosts.
struct DistantHost {
    // Field order is drop order: sshd before the namespace it runs in.
    sshd: TestHost,
    link: DelayLink,
    scratch: tempfile::TempDir,
}

impl DistantHost {
    fn start() -> Self {
        let link = DelayLink::start(ONE_WAY).expect("start the delay link");
        let sshd = TestHost::start_with(SshdOptions {
            listen: link.ns_addr().into(),
            netns: Some(link.namespace().name().to_owned()),
            ..SshdOptions::default()
        });
        Self {
            sshd,
            link,
            scratch: tempfile::tempdir().expect("scratch dir"),
        }
    }

    async fn connect(&self) -> SshTarget {
        let command = parse_ssh_command(&self.sshd.ssh_command()).expect("harness command parses");
        let destination = Destination::resolve(&command, None).expect("resolves");
        let credentials = Credentials {
            keys: vec![KeyFile {
                path: self.sshd.key(ClientKey::Ed25519),
                passphrase: None,
            }],
            ..Credentials::default()
        };
        let options = ConnectOptions {
            known_hosts: KnownHosts::only(self.scratch.path().join("known_hosts")),
            accept_new_host_key: true,
            keepalive: KEEPALIVE,
            ..ConnectOptions::default()
        };
        SshTarget::connect(destination, credentials, options)
            .await
            .unwrap_or_else(|err| panic!("connect through the link: {err}\n{}", self.sshd.log()))
    }

    /// Logins sshd accepted so far: one per SSH connection.
    fn logins(&self) -> usize {
        self.sshd.log().matches("Accepted publickey").count()
    }

    /// TCP connections from this machine to sshd that are still established.
    fn established_connections(&self) -> usize {
        let output = Command::new("ss")
            .args(["-Htn", "state", "established", "dst"])
            .arg(format!("{}:{}", self.link.ns_addr(), self.sshd.port()))
            .output()
            .expect("run ss");
        String::from_utf8_lossy(&output.stdout).lines().count()
    }
}

#[tokio::test]
async fn output_sent_during_a_short_cut_arrives_complete_and_in_order() {
    if !netns::can_run("output_sent_during_a_short_cut_arrives_complete_and_in_order") {
        return;
    }
    let host = DistantHost::start();
    let target = host.connect().await;
    let spec = CommandSpec::new("for i in $(seq 1 20); do echo line-$i; sleep 0.05; done")
        .timeout(Duration::from_secs(30));

    let mut lines = Vec::new();
    let lines_seen = AtomicU64::new(0);
    let run = async {
        let mut splitter = LineSplitter::new(|stream, line: &str| {
            if stream == OutputStream::Stdout {
                lines.push(line.to_owned());
                lines_seen.fetch_add(1, Ordering::Relaxed);
            }
        });
        let mut sink = |stream: OutputStream, chunk: &[u8]| splitter.push(stream, chunk);
        target.run_streaming(&spec, &mut sink).await
    };
    let cut = async {
        // Once the command is printing, break the link for most of the rest of its run.
        while lines_seen.load(Ordering::Relaxed) < 3 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        host.link.cut(Duration::from_millis(700));
    };
    let (status, ()) = tokio::join!(run, cut);

    let status = status.expect("the command survives a 0.7 s cut");
    assert_eq!(status, Some(0), "the command's own exit status");
    let expected: Vec<String> = (1..=20).map(|i| format!("line-{i}")).collect();
    assert_eq!(lines, expected, "every line, in order, despite the cut");
    assert!(
        host.link.stats().dropped_by_cut > 0,
        "the cut really dropped packets of this command: {:?}",
        host.link.stats()
    );
    assert_eq!(host.logins(), 1, "a short cut needs no new connection");
}

#[tokio::test]
async fn a_command_after_a_cut_that_outlasts_the_keepalive_reconnects() {
    if !netns::can_run("a_command_after_a_cut_that_outlasts_the_keepalive_reconnects") {
        return;
    }
    let host = DistantHost::start();
    let target = host.connect().await;
    let first = target
        .run(&CommandSpec::new("echo before"))
        .await
        .expect("runs before the cut");
    assert_eq!(first.stdout_text(), "before\n");
    assert_eq!(host.established_connections(), 1, "one connection in use");

    host.link.cut_until_restored();
    // Unanswered keepalives make the engine give the connection up; wait until it has.
    let gave_up_by = Instant::now() + Duration::from_secs(60);
    while host.established_connections() > 0 {
        assert!(
            Instant::now() < gave_up_by,
            "the engine never gave up the dead connection (keepalive every {KEEPALIVE:?})"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    host.link.restore();

    let mut states = target.link_state();
    let after = target
        .run(&CommandSpec::new("echo after"))
        .await
        .expect("the next command reconnects instead of failing");
    assert_eq!(
        after.stdout_text(),
        "after\n",
        "the command ran on the new connection"
    );
    assert_eq!(after.exit_status, Some(0));
    assert_eq!(
        host.logins(),
        2,
        "sshd saw a second login: the engine reconnected"
    );
    assert!(
        states.has_changed().unwrap_or(false),
        "the link state went through reconnecting"
    );
    assert_eq!(
        *states.borrow_and_update(),
        LinkState::Connected,
        "and ends connected"
    );
}

#[tokio::test]
async fn a_download_cut_off_midway_resumes_from_what_arrived() {
    if !netns::can_run("a_download_cut_off_midway_resumes_from_what_arrived") {
        return;
    }
    let host = DistantHost::start();
    let size: usize = 16_000_000;
    let remote_file = host.sshd.remote_dir().join("checkpoint.bin");
    let expected = write_pattern(&remote_file, size);
    let remote = remote_file.to_string_lossy();
    let local = host.scratch.path().join("checkpoint.bin");
    // Slow enough that the cut lands mid-transfer.
    host.link.set_rate(Some(8_000_000));
    let target = host.connect().await;

    let arrived = AtomicU64::new(0);
    let record = |p: &TransferProgress| arrived.store(p.bytes_done, Ordering::Relaxed);
    let no_resume = TransferOptions {
        resume: false,
        verify: true,
    };
    let first = target.download(&remote, &local, no_resume, &record);
    let cut = async {
        while arrived.load(Ordering::Relaxed) < 4_000_000 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        host.link.cut_until_restored();
    };
    let (first, ()) = tokio::join!(first, cut);
    let err = first.expect_err("a download whose link stays cut fails instead of hanging");
    let partial = std::fs::metadata(&local).map(|m| m.len()).unwrap_or(0);
    assert!(
        partial > 0 && partial < size as u64,
        "a partial file is left behind ({partial} of {size} bytes) after: {err}"
    );

    host.link.restore();
    host.link.set_rate(None);
    let report = target
        .download(&remote, &local, TransferOptions::default(), &|_| {})
        .await
        .expect("the download completes once the link is back");
    assert_eq!(
        report.resumed_bytes, partial,
        "the second attempt continues from the partial file instead of starting over"
    );
    assert!(report.verified, "the engine compared SHA-256 on both sides");
    assert_eq!(
        sha256_of(&local),
        expected,
        "the resumed file is byte-identical to the remote one"
    );
    assert_eq!(
        host.logins(),
        2,
        "the second attempt came over a new connection"
    );
}

/// Incompressible-looking bytes (xorshift) written to `path`; returns their SHA-256.
fn write_pattern(path: &std::path::Path, size: usize) -> String {
    use sha2::{Digest, Sha256};
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut bytes = Vec::with_capacity(size);
    while bytes.len() < size {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        bytes.extend_from_slice(&state.to_le_bytes());
    }
    bytes.truncate(size);
    let mut file = std::fs::File::create(path).expect("create the remote file");
    file.write_all(&bytes).expect("write the remote file");
    hex::encode(Sha256::digest(&bytes))
}

fn sha256_of(path: &std::path::Path) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(
        std::fs::read(path).expect("read the download"),
    ))
}
