//! Back up against a real sshd test host whose files are set up to hurt us: another user's
//! repository with a planted `core.fsmonitor`, same-named items, thousands of chosen paths,
//! symlinked files in a folder.

mod common;

use std::path::Path;
use std::process::Command;

use chrono::{TimeZone, Utc};
use leasehold_core::backup::{self, BackupError, RunRequest, ScanOptions};
use leasehold_core::store::Store;
use leasehold_core::FixedClock;
use sha2::{Digest, Sha256};

use common::Setup;

fn sh(dir: &Path, script: &str) {
    let out = Command::new("bash")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "{script}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

const GIT: &str = "git -c user.name=t -c user.email=t@example.com -c init.defaultBranch=main";

#[tokio::test]
async fn another_users_repository_is_listed_not_entered_and_its_fsmonitor_never_runs() {
    let setup = Setup::new();
    let root = setup.host.remote_dir();
    sh(
        &root,
        &format!("mkdir mine && cd mine && {GIT} init -q && echo x > x && {GIT} add x && {GIT} commit -qm x"),
    );
    sh(&root, &format!("chown -R {} .", setup.host.user()));
    // Written as root after the handover, so it belongs to root, not to the login user.
    let marker = root.join("fsmonitor-ran");
    sh(
        &root,
        &format!(
            "mkdir theirs && cd theirs && {GIT} init -q && echo y > y && {GIT} add y && {GIT} commit -qm y \
             && git config core.fsmonitor 'touch {marker}; false' \
             && git config core.pager 'touch {marker}' && chmod -R a+rX .",
            marker = marker.display()
        ),
    );
    let target = setup.connect().await;
    let options = ScanOptions {
        roots: vec![root.to_string_lossy().into_owned()],
        path_prefix: None,
    };
    let report = backup::scan(&target, &options, None)
        .await
        .expect("the scan runs");
    assert!(
        !marker.exists(),
        "git ran a command planted in another user's .git/config as the scanning user"
    );
    assert!(report.complete, "{report:?}");
    let real_root = std::fs::canonicalize(&root)
        .expect("canonical")
        .to_string_lossy()
        .into_owned();
    assert!(
        report
            .repos
            .iter()
            .any(|r| r.path == format!("{real_root}/mine")),
        "the user's own repository is still scanned: {:?}",
        report.repos
    );
    assert!(
        report.repos.iter().all(|r| !r.path.ends_with("/theirs")),
        "the other user's repository is not reported as scanned: {:?}",
        report.repos
    );
    let note = report
        .notes
        .iter()
        .find(|n| n.code == "scan.repo_not_owned")
        .unwrap_or_else(|| panic!("the skipped repository is said: {:?}", report.notes));
    assert_eq!(note.path.as_deref(), Some(&*format!("{real_root}/theirs")));
    assert_eq!(note.owner.as_deref(), Some("root"));
    assert!(
        note.detail.contains("not scanned: owned by root"),
        "{}",
        note.detail
    );
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

#[tokio::test]
async fn two_items_of_the_same_name_are_both_kept_with_matching_hashes() {
    let setup = Setup::new();
    let root = setup.host.remote_dir();
    for (run, content) in [("run1", "first"), ("run2", "second")] {
        let folder = root.join(run).join("checkpoint-500");
        std::fs::create_dir_all(&folder).expect("mkdir");
        std::fs::write(folder.join("weights.bin"), content.repeat(1000)).expect("write");
        std::fs::write(root.join(run).join("model.bin"), content).expect("write");
    }
    sh(&root, &format!("chown -R {} .", setup.host.user()));
    let target = setup.connect().await;
    let store = Store::open_in_memory().await.expect("store");
    let local = setup.scratch.path().join("backup");
    let remote = |p: &str| root.join(p).to_string_lossy().into_owned();
    let request = RunRequest {
        remote_paths: vec![
            remote("run1/checkpoint-500"),
            remote("run2/checkpoint-500"),
            remote("run1/model.bin"),
            remote("run2/model.bin"),
        ],
        local_dir: local.clone(),
        instance: None,
    };
    let clock = FixedClock::new(Utc.with_ymd_and_hms(2026, 3, 1, 8, 0, 0).unwrap());
    let record = backup::run(&store, &target, &request, &|_| {}, &clock)
        .await
        .expect("the backup runs");
    let locals: Vec<&str> = record
        .items
        .iter()
        .map(|i| i.local_path.as_deref().expect("a local path"))
        .collect();
    let distinct: std::collections::HashSet<_> = locals.iter().collect();
    assert_eq!(distinct.len(), 4, "each item has its own place: {locals:?}");
    for (item, content) in record
        .items
        .iter()
        .zip(["first", "second", "first", "second"])
    {
        let path = Path::new(item.local_path.as_deref().expect("local"));
        let on_disk = if path.is_dir() {
            std::fs::read(path.join("weights.bin")).expect("the folder's file")
        } else {
            std::fs::read(path).expect("the file")
        };
        let expected = if path.is_dir() {
            content.repeat(1000)
        } else {
            content.to_owned()
        };
        assert_eq!(
            on_disk,
            expected.as_bytes(),
            "{} holds what {} held",
            path.display(),
            item.remote_path
        );
        if !path.is_dir() {
            assert_eq!(
                item.sha256.as_deref(),
                Some(sha256_hex(&on_disk).as_str()),
                "the recorded hash is what is on disk"
            );
        }
    }
    assert!(
        record.items[1]
            .detail
            .as_deref()
            .is_some_and(|d| d.contains("checkpoint-500-2")),
        "the report says where the second one went: {:?}",
        record.items[1].detail
    );
}

#[tokio::test]
async fn two_thousand_chosen_paths_are_all_planned_with_their_sizes() {
    let setup = Setup::new();
    let root = setup.host.remote_dir();
    let folder = root.join("many");
    std::fs::create_dir_all(&folder).expect("mkdir");
    // Long names, as real checkpoints have: together far beyond one 128 KiB argument.
    let paths: Vec<String> = (0..2000)
        .map(|n| {
            let path = folder.join(format!("{n:04}-{}.safetensors", "x".repeat(80)));
            std::fs::write(&path, vec![b'w'; 1024]).expect("write");
            path.to_string_lossy().into_owned()
        })
        .collect();
    assert!(paths.iter().map(|p| p.len() + 3).sum::<usize>() > 128 * 1024);
    sh(&root, &format!("chown -R {} .", setup.host.user()));
    let target = setup.connect().await;
    let planned = backup::plan(&target, &paths).await.expect("plans");
    assert_eq!(planned.len(), 2000);
    assert!(
        planned.iter().all(|p| !p.folder && p.bytes == 1024),
        "every path was measured on the instance, none planned as 0 bytes: {:?}",
        planned.iter().find(|p| p.bytes != 1024)
    );
    assert_eq!(planned.iter().map(|p| p.bytes).sum::<u64>(), 2000 * 1024);
}

#[tokio::test]
async fn a_folder_of_links_is_not_recorded_as_saved_and_skipped_links_are_said() {
    let setup = Setup::new();
    let root = setup.host.remote_dir();
    // A Hugging Face cache: snapshots/<rev>/ holds links into blobs/.
    sh(
        &root,
        "mkdir -p model/blobs model/snapshots/rev1 mixed \
         && printf weights > model/blobs/aaa && printf config > model/blobs/bbb \
         && ln -s ../../blobs/aaa model/snapshots/rev1/model.safetensors \
         && ln -s ../../blobs/bbb model/snapshots/rev1/config.json \
         && printf data > mixed/real.txt && ln -s real.txt mixed/alias.txt",
    );
    sh(&root, &format!("chown -R {} .", setup.host.user()));
    let target = setup.connect().await;
    let store = Store::open_in_memory().await.expect("store");
    let clock = FixedClock::new(Utc.with_ymd_and_hms(2026, 3, 1, 8, 0, 0).unwrap());
    let run = |path: &str, to: &str| RunRequest {
        remote_paths: vec![root.join(path).to_string_lossy().into_owned()],
        local_dir: setup.scratch.path().join(to),
        instance: None,
    };
    let err = backup::run(
        &store,
        &target,
        &run("model/snapshots", "a"),
        &|_| {},
        &clock,
    )
    .await
    .expect_err("a folder of links saved nothing");
    assert!(
        matches!(err, BackupError::OnlyLinks { links: 2, .. }),
        "{err:?}"
    );
    let record = backup::run(&store, &target, &run("mixed", "b"), &|_| {}, &clock)
        .await
        .expect("the real file is saved");
    assert_eq!(record.items[0].files, 1);
    let detail = record.items[0].detail.as_deref().unwrap_or_default();
    assert!(
        detail.contains("1 symbolic links") && detail.contains("alias.txt"),
        "the skipped link is reported: {detail:?}"
    );
}
