//! SFTP against a real sftp-server: files and folders both ways with SHA-256 proof, resuming a
//! partial copy, and a 200 MB round trip (throughput printed, never asserted).

mod common;

use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use common::Setup;
use leasehold_core::ssh::{TransferOptions, TransferProgress};
use leasehold_core::Coded;
use sha2::{Digest, Sha256};

/// Deterministic, incompressible-looking bytes (xorshift), so corruption cannot hide.
fn write_pattern(path: &Path, size: usize, seed: u64) {
    let mut state = seed | 1;
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    let mut block = vec![0u8; 1 << 20];
    let mut left = size;
    while left > 0 {
        for chunk in block.chunks_mut(8) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            chunk.copy_from_slice(&state.to_le_bytes()[..chunk.len()]);
        }
        let n = left.min(block.len());
        file.write_all(&block[..n]).expect("write");
        left -= n;
    }
    file.flush().expect("flush");
}

fn sha256_of(path: &Path) -> String {
    hex::encode(Sha256::digest(std::fs::read(path).expect("read")))
}

fn no_progress(_: &TransferProgress) {}

#[tokio::test]
async fn a_file_goes_up_and_down_byte_identical_with_progress() {
    let setup = Setup::new();
    let target = setup.connect().await;
    let source = setup.scratch.path().join("weights.bin");
    write_pattern(&source, 3 * 1024 * 1024 + 17, 7);
    let remote = setup.host.remote_dir().join("weights.bin");
    let updates = Mutex::new(Vec::new());
    let record = |p: &TransferProgress| updates.lock().expect("lock").push(p.clone());
    let report = target
        .upload(
            &source,
            &remote.to_string_lossy(),
            TransferOptions::default(),
            &record,
        )
        .await
        .expect("upload");
    assert!(report.verified && report.files == 1);
    assert_eq!(
        sha256_of(&remote),
        sha256_of(&source),
        "the remote copy is identical"
    );
    let updates = updates.into_inner().expect("lock");
    let last = updates.last().expect("progress was reported");
    assert_eq!(
        (last.bytes_done, last.bytes_total, last.files_done),
        (report.bytes, report.bytes, 1),
        "the final report shows everything done"
    );

    let back = setup.scratch.path().join("back.bin");
    target
        .download(
            &remote.to_string_lossy(),
            &back,
            TransferOptions::default(),
            &no_progress,
        )
        .await
        .expect("download");
    assert_eq!(sha256_of(&back), sha256_of(&source));
}

#[tokio::test]
async fn a_folder_tree_round_trips() {
    let setup = Setup::new();
    let target = setup.connect().await;
    let tree = setup.scratch.path().join("project");
    std::fs::create_dir_all(tree.join("src/deep")).expect("mkdir");
    std::fs::create_dir_all(tree.join("empty")).expect("mkdir");
    write_pattern(&tree.join("src/deep/a.bin"), 100_000, 1);
    std::fs::write(tree.join("README 说明.md"), "hello\n").expect("write");
    std::fs::write(tree.join("src/empty-file"), "").expect("write");
    let remote = setup.host.remote_dir().join("project");
    let report = target
        .upload(
            &tree,
            &remote.to_string_lossy(),
            TransferOptions::default(),
            &no_progress,
        )
        .await
        .expect("upload folder");
    assert_eq!(report.files, 3);
    assert!(
        remote.join("empty").is_dir(),
        "empty folders are created too"
    );

    let back = setup.scratch.path().join("project-back");
    target
        .download(
            &remote.to_string_lossy(),
            &back,
            TransferOptions::default(),
            &no_progress,
        )
        .await
        .expect("download folder");
    for file in ["src/deep/a.bin", "README 说明.md", "src/empty-file"] {
        assert_eq!(
            sha256_of(&back.join(file)),
            sha256_of(&tree.join(file)),
            "{file}"
        );
    }
    assert!(back.join("empty").is_dir());
}

#[tokio::test]
async fn a_partial_download_resumes_where_it_stopped() {
    let setup = Setup::new();
    let target = setup.connect().await;
    let remote = setup.host.remote_dir().join("big.bin");
    write_pattern(&remote, 4 * 1024 * 1024, 3);
    let local = setup.scratch.path().join("big.bin");
    // As if the link was cut after 1.5 MB.
    let full = std::fs::read(&remote).expect("read");
    std::fs::write(&local, &full[..1_500_000]).expect("partial");
    let report = target
        .download(
            &remote.to_string_lossy(),
            &local,
            TransferOptions::default(),
            &no_progress,
        )
        .await
        .expect("resumed download");
    assert_eq!(
        report.resumed_bytes, 1_500_000,
        "the partial part is not fetched again"
    );
    assert_eq!(sha256_of(&local), sha256_of(&remote));
}

#[tokio::test]
async fn a_partial_upload_resumes_and_a_wrong_partial_is_redone() {
    let setup = Setup::new();
    let target = setup.connect().await;
    let local = setup.scratch.path().join("data.bin");
    write_pattern(&local, 2 * 1024 * 1024, 5);
    let remote = setup.host.remote_dir().join("data.bin");
    let full = std::fs::read(&local).expect("read");
    std::fs::write(&remote, &full[..700_000]).expect("partial");
    setup.host.give_to_user(&remote);
    let report = target
        .upload(
            &local,
            &remote.to_string_lossy(),
            TransferOptions::default(),
            &no_progress,
        )
        .await
        .expect("resumed upload");
    assert_eq!(report.resumed_bytes, 700_000);
    assert_eq!(sha256_of(&remote), sha256_of(&local));

    // A leftover that is not a prefix of this file must not survive: the checksum catches it.
    std::fs::write(&remote, vec![0u8; 500_000]).expect("garbage partial");
    setup.host.give_to_user(&remote);
    target
        .upload(
            &local,
            &remote.to_string_lossy(),
            TransferOptions::default(),
            &no_progress,
        )
        .await
        .expect("upload redone from scratch");
    assert_eq!(sha256_of(&remote), sha256_of(&local));
}

/// Files from 128 MiB on go up over two channels, whose writes can land out of order: a partial
/// copy may have a hole near its end, so resuming starts 32 MiB before it and the checksum proves
/// the result.
#[tokio::test]
async fn a_large_partial_upload_with_a_hole_near_its_end_resumes_safely() {
    const MIB: usize = 1024 * 1024;
    let setup = Setup::new();
    let target = setup.connect().await;
    let local = setup.scratch.path().join("checkpoint.bin");
    write_pattern(&local, 136 * MIB, 9);
    let remote = setup.host.remote_dir().join("checkpoint.bin");
    let mut partial = std::fs::read(&local).expect("read");
    partial.truncate(100 * MIB);
    // One lane's last slices never arrived while the other's did.
    partial[90 * MIB..91 * MIB].fill(0);
    std::fs::write(&remote, &partial).expect("partial");
    drop(partial);
    setup.host.give_to_user(&remote);
    let report = target
        .upload(
            &local,
            &remote.to_string_lossy(),
            TransferOptions::default(),
            &no_progress,
        )
        .await
        .expect("resumed upload");
    assert_eq!(
        report.resumed_bytes,
        (100 - 32) * MIB as u64,
        "resumes before the last 32 MiB"
    );
    assert_eq!(sha256_of(&remote), sha256_of(&local));
}

#[tokio::test]
async fn a_missing_remote_file_is_an_sftp_error_naming_it() {
    let setup = Setup::new();
    let target = setup.connect().await;
    let err = target
        .download(
            "/nonexistent/lh-file",
            &setup.scratch.path().join("x"),
            TransferOptions::default(),
            &no_progress,
        )
        .await
        .expect_err("must fail");
    assert_eq!(err.code(), "ssh.sftp");
    assert!(err.to_string().contains("/nonexistent/lh-file"), "{err}");
}

#[tokio::test]
async fn two_hundred_megabytes_up_and_down_with_checksums() {
    let setup = Setup::new();
    let target = setup.connect().await;
    let size = 200 * 1024 * 1024;
    let source = setup.scratch.path().join("200m.bin");
    write_pattern(&source, size, 11);
    let remote = setup.host.remote_dir().join("200m.bin");
    let up = target
        .upload(
            &source,
            &remote.to_string_lossy(),
            TransferOptions::default(),
            &no_progress,
        )
        .await
        .expect("upload 200 MB");
    let back = setup.scratch.path().join("200m.back");
    let down = target
        .download(
            &remote.to_string_lossy(),
            &back,
            TransferOptions::default(),
            &no_progress,
        )
        .await
        .expect("download 200 MB");
    assert!(
        up.verified && down.verified,
        "both directions are checksum-verified"
    );
    assert_eq!(std::fs::metadata(&back).expect("meta").len(), size as u64);
    eprintln!(
        "sftp 200 MB on loopback: up {:.1} MB/s, down {:.1} MB/s (including SHA-256 on both sides)",
        up.throughput_bytes_per_second() / 1e6,
        down.throughput_bytes_per_second() / 1e6
    );
}
