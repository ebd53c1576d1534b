//! A rented instance is untrusted input: an SFTP server that lists names meant to escape the
//! download folder, serves more than it announced, lists a folder that never ends or stops
//! answering, must not get its way.

use std::path::Path;
use std::time::Duration;

use leasehold_core::ssh::{
    parse_ssh_command, ConnectOptions, Credentials, Destination, KnownHosts, Secret, SshError,
    SshTarget, TransferOptions, TransferProgress,
};
use leasehold_core::Coded;
use leasehold_testkit::hostile_sftp::{HostileEntry, HostileSftp, Readdir, HOSTILE_ROOT};

fn no_progress(_: &TransferProgress) {}

async fn connect(server: &HostileSftp, scratch: &Path) -> SshTarget {
    let command = parse_ssh_command(&server.ssh_command()).expect("command parses");
    let destination = Destination::resolve(&command, None).expect("resolves");
    let options = ConnectOptions {
        known_hosts: KnownHosts::only(scratch.join("known_hosts")),
        accept_new_host_key: true,
        connect_timeout: Duration::from_secs(10),
        ..ConnectOptions::default()
    };
    let credentials = Credentials {
        password: Some(Secret::new("anything")),
        ..Credentials::default()
    };
    SshTarget::connect(destination, credentials, options)
        .await
        .expect("the hostile server accepts any login")
}

fn unverified() -> TransferOptions {
    // The hostile server runs no shell, so no sha256sum on its side.
    TransferOptions {
        verify: false,
        ..TransferOptions::default()
    }
}

/// Every file below `dir`, relative to it.
fn files_below(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(folder) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                found.push(
                    path.strip_prefix(dir)
                        .unwrap_or(&path)
                        .display()
                        .to_string(),
                );
            }
        }
    }
    found.sort();
    found
}

#[tokio::test]
async fn a_folder_download_refuses_names_that_leave_the_chosen_folder() {
    let scratch = tempfile::tempdir().expect("scratch");
    // Where an escaping name would land: next to the download folder, and at an absolute path.
    let outside = scratch.path().join("outside");
    std::fs::create_dir(&outside).expect("outside folder");
    let absolute = outside.join("absolute.txt");
    let hostile_names = [
        "../outside/escaped.txt".to_owned(),
        "../escaped.txt".to_owned(),
        absolute.display().to_string(),
        "sub\\..\\..\\backslash.txt".to_owned(),
        "C:evil.txt".to_owned(),
        "nul\0byte.txt".to_owned(),
    ];
    for hostile in hostile_names {
        let server = HostileSftp::start(vec![
            HostileEntry::file("a-good-file.txt", 5),
            HostileEntry::file(&hostile, 5),
        ])
        .await;
        let target = connect(&server, scratch.path()).await;
        let download = scratch.path().join("run");
        let err = target
            .download(HOSTILE_ROOT, &download, unverified(), &no_progress)
            .await
            .map(|report| format!("{hostile:?} was copied: {report:?}"))
            .expect_err("a name that leaves the folder must stop the download");
        assert_eq!(err.code(), "ssh.unsafe_remote_name", "{hostile:?}: {err}");
        assert!(
            matches!(&err, SshError::UnsafeRemoteName { name, .. } if *name == hostile),
            "the error names the entry: {err:?}"
        );
        let everything = files_below(scratch.path());
        assert!(
            everything.iter().all(|f| f == "known_hosts"),
            "{hostile:?}: nothing may be written, inside the folder or outside: {everything:?}"
        );
    }
}

#[tokio::test]
async fn ordinary_names_from_the_same_server_download_fine() {
    let scratch = tempfile::tempdir().expect("scratch");
    let server = HostileSftp::start(vec![
        HostileEntry::file("model.safetensors", 1000),
        HostileEntry::file("...", 3),
        HostileEntry::file("..hidden", 4),
    ])
    .await;
    let target = connect(&server, scratch.path()).await;
    let download = scratch.path().join("run");
    let report = target
        .download(HOSTILE_ROOT, &download, unverified(), &no_progress)
        .await
        .expect("plain names are copied");
    assert_eq!(report.files, 3);
    assert_eq!(
        files_below(&download),
        vec!["...", "..hidden", "model.safetensors"]
    );
}

#[tokio::test]
async fn a_file_that_grows_past_its_announced_size_is_stopped() {
    let scratch = tempfile::tempdir().expect("scratch");
    let announced = 10;
    let server = HostileSftp::start(vec![HostileEntry {
        served: 8 * 1024 * 1024,
        ..HostileEntry::file("endless.log", announced)
    }])
    .await;
    let target = connect(&server, scratch.path()).await;
    let download = scratch.path().join("run");
    let err = target
        .download(HOSTILE_ROOT, &download, unverified(), &no_progress)
        .await
        .expect_err("more bytes than announced must stop the copy");
    assert_eq!(err.code(), "ssh.size_exceeded", "{err}");
    let written = std::fs::metadata(download.join("endless.log")).map_or(0, |m| m.len());
    assert!(
        written <= announced,
        "at most the announced size reaches the disk, got {written} bytes"
    );
}

#[tokio::test]
async fn a_listing_that_never_ends_is_cut_off_at_the_cap() {
    let server = HostileSftp::start_with(Vec::new(), Readdir::Endless).await;
    let scratch = tempfile::tempdir().expect("scratch");
    let target = connect(&server, scratch.path()).await;
    let local = scratch.path().join("out");
    // A hang guard only: before the cap, russh-sftp read until EOF, which never comes.
    let outcome = tokio::time::timeout(
        Duration::from_secs(120),
        target.download(HOSTILE_ROOT, &local, unverified(), &no_progress),
    )
    .await
    .expect("the listing is given up on instead of read forever");
    let err = outcome.expect_err("an endless folder cannot be planned");
    assert!(
        matches!(&err, SshError::Sftp { message, .. } if message.contains("entries")),
        "{err:?}"
    );
    assert!(files_below(&local).is_empty(), "nothing was written");
}

#[tokio::test]
async fn a_listing_that_stops_answering_ends_at_the_stall_timeout() {
    let server = HostileSftp::start_with(Vec::new(), Readdir::Stalls).await;
    let scratch = tempfile::tempdir().expect("scratch");
    let target = connect(&server, scratch.path()).await;
    let options = TransferOptions {
        stall_timeout: Duration::from_secs(1),
        ..unverified()
    };
    let outcome = tokio::time::timeout(
        Duration::from_secs(50),
        target.download(
            HOSTILE_ROOT,
            &scratch.path().join("out"),
            options,
            &no_progress,
        ),
    )
    .await
    .expect("a silent server does not hold the download for minutes");
    let err = outcome.expect_err("nothing was listed");
    assert!(matches!(err, SshError::TransferStalled { .. }), "{err:?}");
}
