//! A transfer interrupted by a cut link resumes where it stopped once the link is back, over a
//! real sshd inside a network namespace behind the userspace delay link.
//!
//! Needs root (namespaces, TUN); elsewhere it prints why it is skipped.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use leasehold_core::ssh::{
    parse_ssh_command, ConnectOptions, Credentials, Destination, KeyFile, KnownHosts, SshTarget,
    TransferOptions, TransferProgress,
};
use leasehold_testkit::delay_link::{DelayLink, LinkOptions};
use leasehold_testkit::netns;
use leasehold_testkit::{ClientKey, SshdOptions, TestHost};
use sha2::{Digest, Sha256};

const SIZE: usize = 16 * 1024 * 1024;
/// Slow enough that the cut lands mid-transfer.
const RATE: u64 = 8 * 1024 * 1024;

fn write_pattern(path: &Path, size: usize) {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    for _ in 0..size / 8 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        file.write_all(&state.to_le_bytes()).expect("write");
    }
    file.flush().expect("flush");
}

fn sha256_of(path: &Path) -> String {
    hex::encode(Sha256::digest(std::fs::read(path).expect("read")))
}

fn quiet(_: &TransferProgress) {}

/// Give up on a silent link after 1.5 s (the default is 30 s) so the test stays short.
fn transfer_options() -> TransferOptions {
    TransferOptions {
        stall_timeout: Duration::from_millis(1500),
        ..TransferOptions::default()
    }
}

/// Start a transfer, cut the link 0.7 s in (for 4 s), and return once the transfer has failed.
async fn cut_during<F: std::future::Future<Output = Result<(), String>>>(
    link: &DelayLink,
    transfer: F,
) {
    let cutter = async {
        tokio::time::sleep(Duration::from_millis(700)).await;
        link.cut(Duration::from_secs(4));
        std::future::pending::<()>().await;
    };
    let started = std::time::Instant::now();
    let outcome = tokio::select! {
        outcome = transfer => outcome,
        () = cutter => unreachable!("the cutter never finishes"),
    };
    eprintln!(
        "first attempt ended after {:?}: {outcome:?}",
        started.elapsed()
    );
    assert!(
        outcome
            .as_ref()
            .is_err_and(|err| err.contains("stalled") || err.contains("dropped")),
        "a 16 MB transfer at 8 MB/s must not finish before a cut at 0.7 s"
    );
    while link.is_cut() {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn transfers_cut_by_a_link_drop_resume_and_verify() {
    if !netns::can_run("transfers_cut_by_a_link_drop_resume_and_verify") {
        return;
    }
    let link = DelayLink::start_with(LinkOptions {
        one_way_delay: Duration::from_millis(5),
        rate_bytes_per_sec: Some(RATE),
    })
    .expect("delay link");
    let host = TestHost::start_with(SshdOptions {
        listen: link.ns_addr().into(),
        netns: Some(link.namespace().name().to_owned()),
        ..SshdOptions::default()
    });
    let scratch = tempfile::tempdir().expect("scratch");
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
        // Notice the dead link within seconds instead of waiting for TCP to give up.
        keepalive: Duration::from_secs(1),
        reconnect_window: Duration::from_secs(30),
        ..ConnectOptions::default()
    };
    let target = SshTarget::connect(destination, credentials, options)
        .await
        .unwrap_or_else(|err| panic!("connect through the link: {err}\n{}", host.log()));

    // Download, cut, resume.
    let remote_file = host.remote_dir().join("model.bin");
    write_pattern(&remote_file, SIZE);
    host.give_to_user(&remote_file);
    let remote = remote_file.to_string_lossy().into_owned();
    let local = scratch.path().join("model.bin");
    cut_during(
        &link,
        Box::pin(async {
            target
                .download(&remote, &local, transfer_options(), &quiet)
                .await
                .map(|_| ())
                .map_err(|err| err.to_string())
        }),
    )
    .await;
    let partial = std::fs::metadata(&local).map(|m| m.len()).unwrap_or(0);
    let report = target
        .download(&remote, &local, transfer_options(), &quiet)
        .await
        .expect("the download resumes after the link is back");
    assert_eq!(
        report.resumed_bytes, partial,
        "the bytes received before the cut are kept"
    );
    assert!(partial > 0, "the cut happened mid-transfer");
    assert_eq!(sha256_of(&local), sha256_of(&remote_file), "verified copy");

    // Upload, cut, resume.
    let source = scratch.path().join("dataset.bin");
    write_pattern(&source, SIZE);
    let upload_to = host.remote_dir().join("dataset.bin");
    let upload_path = upload_to.to_string_lossy().into_owned();
    cut_during(
        &link,
        Box::pin(async {
            target
                .upload(&source, &upload_path, transfer_options(), &quiet)
                .await
                .map(|_| ())
                .map_err(|err| err.to_string())
        }),
    )
    .await;
    let report = target
        .upload(&source, &upload_path, transfer_options(), &quiet)
        .await
        .expect("the upload resumes after the link is back");
    assert!(
        report.resumed_bytes > 0,
        "the part already sent is not sent again"
    );
    assert_eq!(sha256_of(&upload_to), sha256_of(&source), "verified copy");
}
