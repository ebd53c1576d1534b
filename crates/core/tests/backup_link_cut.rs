//! A backup of many small files cut by a link drop resumes once the link is back: files that
//! arrived whole are kept (their hashes match the instance's manifest), the rest come again,
//! and every file ends up matching. Real sshd in a network namespace behind the userspace delay
//! link; needs root (namespaces, TUN) and prints why it is skipped otherwise.

use std::path::Path;
use std::time::Duration;

use chrono::{TimeZone, Utc};
use leasehold_core::backup::{self, ItemKind, RunRequest};
use leasehold_core::ssh::{
    parse_ssh_command, ConnectOptions, Credentials, Destination, KeyFile, KnownHosts, SshTarget,
};
use leasehold_core::store::Store;
use leasehold_core::FixedClock;
use leasehold_testkit::delay_link::{DelayLink, LinkOptions};
use leasehold_testkit::netns;
use leasehold_testkit::{ClientKey, SshdOptions, TestHost};
use sha2::{Digest, Sha256};

/// Slow enough that a cut at 0.7 s lands mid-stream.
const RATE: u64 = 4 * 1024 * 1024;
const FILES: usize = 400;
const FILE_BYTES: usize = 40 * 1024;

fn sha256_of(path: &Path) -> String {
    hex::encode(Sha256::digest(std::fs::read(path).expect("read")))
}

#[tokio::test]
async fn a_packed_backup_cut_by_a_link_drop_resumes_and_every_checksum_matches() {
    if !netns::can_run("a_packed_backup_cut_by_a_link_drop_resumes_and_every_checksum_matches") {
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
    let outputs = host.remote_dir().join("outputs");
    std::fs::create_dir_all(&outputs).expect("mkdir");
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for n in 0..FILES {
        let mut bytes = Vec::with_capacity(FILE_BYTES);
        while bytes.len() < FILE_BYTES {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            bytes.extend_from_slice(&state.to_le_bytes());
        }
        std::fs::write(outputs.join(format!("step-{n:04}.npy")), bytes).expect("write");
    }
    let status = std::process::Command::new("chown")
        .arg("-R")
        .arg(host.user())
        .arg(host.remote_dir())
        .status()
        .expect("chown");
    assert!(status.success());

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
        keepalive: Duration::from_secs(1),
        reconnect_window: Duration::from_secs(30),
        ..ConnectOptions::default()
    };
    let target = SshTarget::connect(destination, credentials, options)
        .await
        .unwrap_or_else(|err| panic!("connect: {err}\n{}", host.log()));
    let store = Store::open_in_memory().await.expect("store");
    let clock = FixedClock::new(
        Utc.with_ymd_and_hms(2026, 3, 1, 8, 0, 0)
            .single()
            .expect("time"),
    );
    let local = scratch.path().join("backup");
    let request = RunRequest {
        remote_paths: vec![outputs.display().to_string()],
        local_dir: local.clone(),
        instance: None,
    };

    let cutter = async {
        tokio::time::sleep(Duration::from_millis(700)).await;
        link.cut(Duration::from_secs(4));
        std::future::pending::<()>().await;
    };
    let first = tokio::select! {
        outcome = backup::run(&store, &target, &request, &|_| {}, &clock) => outcome,
        () = cutter => unreachable!("the cutter never finishes"),
    };
    assert!(
        first.is_err(),
        "16 MB at 4 MB/s cannot finish before a cut at 0.7 s: {first:?}"
    );
    let arrived = std::fs::read_dir(local.join("outputs"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert!(
        arrived > 0 && arrived < FILES,
        "the cut landed mid-stream ({arrived} files)"
    );
    while link.is_cut() {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let record = backup::run(&store, &target, &request, &|_| {}, &clock)
        .await
        .expect("the backup resumes after the link is back");
    let item = &record.items[0];
    assert_eq!(item.kind, ItemKind::PackedFolder);
    assert_eq!(item.files, FILES as u64);
    assert!(
        item.detail.as_deref().is_some_and(|d| !d.starts_with("0 ")),
        "files that arrived whole were kept: {:?}",
        item.detail
    );
    for n in 0..FILES {
        let name = format!("step-{n:04}.npy");
        assert_eq!(
            sha256_of(&local.join("outputs").join(&name)),
            sha256_of(&outputs.join(&name)),
            "{name}"
        );
    }
}
