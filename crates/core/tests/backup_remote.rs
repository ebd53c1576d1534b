//! Back up and Release against real sshd test hosts: git repositories in every state, weights,
//! a folder of many small files through the packed stream (and resumed), hostile names from a
//! lying SFTP server and a lying `tar`, and the release check blocking on a GPU process (the
//! fake `nvidia-smi`) and on unpushed commits, with the ledger untouched by a refused release.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use chrono::{DateTime, Duration, TimeZone, Utc};
use leasehold_core::backup::{self, BackupError, ItemKind, RunRequest, ScanOptions};
use leasehold_core::billing::{ledger, BillingRules, NewInstance, PowerAction};
use leasehold_core::release::{self, CheckStatus, ReleaseError, ReleaseRequest};
use leasehold_core::ssh::{
    parse_ssh_command, ConnectOptions, Credentials, Destination, KnownHosts, SshTarget,
};
use leasehold_core::store::Store;
use leasehold_core::{Coded, FixedClock};
use leasehold_testkit::hostile_sftp::{HostileEntry, HostileSftp, HOSTILE_ROOT};
use leasehold_testkit::SshdOptions;
use rust_decimal_macros::dec;
use sha2::{Digest, Sha256};

use common::Setup;

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 8, 0, 0)
        .single()
        .expect("valid time")
}

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

/// Four repositories next to a bare "remote": clean and pushed, two commits ahead, dirty, and
/// one that never had a remote; plus weights and a checkpoint folder.
fn lay_out_work(root: &Path) {
    sh(root, &format!(
        "{GIT} init -q --bare origin.git
         {GIT} clone -q origin.git clean 2>/dev/null && cd clean && echo a > a && {GIT} add a && {GIT} commit -qm a && {GIT} push -q origin HEAD 2>/dev/null && cd ..
         {GIT} clone -q origin.git ahead 2>/dev/null && cd ahead && {GIT} pull -q origin main 2>/dev/null; echo b > b && {GIT} add b && {GIT} commit -qm b && echo c > c && {GIT} add c && {GIT} commit -qm c && cd ..
         {GIT} clone -q origin.git dirty 2>/dev/null && cd dirty && {GIT} pull -q origin main 2>/dev/null; echo changed >> a && echo new > untracked.txt && cd ..
         mkdir noremote && cd noremote && {GIT} init -q && echo x > x && {GIT} add x && {GIT} commit -qm x && cd ..
         mkdir -p models/checkpoint-10 && head -c 1048576 /dev/urandom > models/model.safetensors && head -c 4096 /dev/urandom > models/checkpoint-10/pytorch_model.bin && echo '{{}}' > models/checkpoint-10/config.json"
    ));
}

fn give_all(setup: &Setup, path: &Path) {
    sh(path, &format!("chown -R {} .", setup.host.user()));
}

#[tokio::test]
async fn the_scan_finds_each_repository_state_and_the_weights() {
    let setup = Setup::new();
    let root = setup.host.remote_dir();
    lay_out_work(&root);
    give_all(&setup, &root);
    let target = setup.connect().await;
    let root_text = root.to_string_lossy().into_owned();
    let options = ScanOptions {
        roots: vec![root_text.clone()],
        path_prefix: None,
    };
    let report = backup::scan(&target, &options, None)
        .await
        .expect("the scan runs");
    assert!(report.complete);
    let real_root = std::fs::canonicalize(&root)
        .expect("canonical")
        .to_string_lossy()
        .into_owned();
    let repo = |name: &str| {
        report
            .repos
            .iter()
            .find(|r| r.path == format!("{real_root}/{name}"))
            .unwrap_or_else(|| panic!("{name} not found in {:#?}", report.repos))
    };
    let clean = repo("clean");
    assert!(
        clean.has_remote && clean.unpushed_commits == 0 && clean.uncommitted_files == 0,
        "{clean:?}"
    );
    let ahead = repo("ahead");
    assert_eq!(
        (ahead.has_remote, ahead.unpushed_commits),
        (true, 2),
        "{ahead:?}"
    );
    let dirty = repo("dirty");
    assert_eq!(
        (dirty.uncommitted_files, dirty.untracked_files),
        (2, 1),
        "{dirty:?}"
    );
    let noremote = repo("noremote");
    assert_eq!(
        (noremote.has_remote, noremote.unpushed_commits),
        (false, 1),
        "{noremote:?}"
    );
    assert_eq!(noremote.branch.as_deref(), Some("main"));
    let weights: Vec<(String, u64, bool)> = report
        .weights
        .iter()
        .map(|w| {
            (
                w.path
                    .trim_start_matches(&format!("{real_root}/"))
                    .to_owned(),
                w.bytes,
                w.folder,
            )
        })
        .collect();
    assert_eq!(
        weights[0],
        ("models/model.safetensors".to_owned(), 1_048_576, false),
        "{weights:?}"
    );
    assert!(
        weights
            .iter()
            .any(|(p, bytes, folder)| p == "models/checkpoint-10" && *folder && *bytes >= 4096),
        "the checkpoint folder is listed once, with its size: {weights:?}"
    );
    assert!(
        report.changed_since_last_backup.is_none(),
        "no backup yet: everything is at risk"
    );
    assert!(
        !report.disks.is_empty(),
        "the disk the root is on is reported"
    );
}

fn fill_small_files(dir: &Path, count: usize) {
    for n in 0..count {
        let sub = dir.join(format!("part-{}", n % 10));
        std::fs::create_dir_all(&sub).expect("mkdir");
        std::fs::write(
            sub.join(format!("sample-{n}.json")),
            format!("{{\"n\": {n}, \"pad\": \"{}\"}}", "x".repeat(n % 300)),
        )
        .expect("write");
    }
}

fn sha256_file(path: &Path) -> String {
    hex::encode(Sha256::digest(std::fs::read(path).expect("read")))
}

fn same_tree(a: &Path, b: &Path) -> usize {
    let mut count = 0;
    for entry in std::fs::read_dir(a).expect("list") {
        let entry = entry.expect("entry");
        let other = b.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            count += same_tree(&entry.path(), &other);
        } else {
            assert_eq!(
                sha256_file(&entry.path()),
                sha256_file(&other),
                "{}",
                other.display()
            );
            count += 1;
        }
    }
    count
}

#[tokio::test]
async fn many_small_files_come_through_one_stream_verified_and_resume() {
    let setup = Setup::new();
    let root = setup.host.remote_dir();
    let outputs = root.join("outputs");
    fill_small_files(&outputs, 3000);
    std::fs::write(root.join("weights.bin"), vec![7u8; 3 * 1024 * 1024]).expect("weights");
    give_all(&setup, &root);
    let target = setup.connect().await;
    let store = Store::open_in_memory().await.expect("store");
    let local = setup.scratch.path().join("backup");
    let request = RunRequest {
        remote_paths: vec![
            outputs.to_string_lossy().into_owned(),
            root.join("weights.bin").to_string_lossy().into_owned(),
        ],
        local_dir: local.clone(),
        instance: None,
    };
    let clock = FixedClock::new(t0());
    let seen = std::sync::Mutex::new(0u64);
    let progress = |p: &backup::BackupProgress| *seen.lock().expect("lock") = p.bytes_done;
    let record = backup::run(&store, &target, &request, &progress, &clock)
        .await
        .expect("the backup runs");
    assert_eq!(
        record.items[0].kind,
        ItemKind::PackedFolder,
        "3000 small files go through one stream"
    );
    assert_eq!(record.items[0].files, 3000);
    assert_eq!(record.items[1].kind, ItemKind::File);
    assert_eq!(
        record.items[1].sha256.as_deref(),
        Some(sha256_file(&root.join("weights.bin")).as_str())
    );
    assert_eq!(
        same_tree(&outputs, &local.join("outputs")),
        3000,
        "every file arrived intact"
    );
    assert!(*seen.lock().expect("lock") > 0, "progress was reported");

    // A damaged and a missing file: the second run resumes, re-fetching only those two.
    std::fs::write(local.join("outputs/part-3/sample-3.json"), b"damaged").expect("damage");
    std::fs::remove_file(local.join("outputs/part-4/sample-4.json")).expect("remove");
    let again = backup::run(&store, &target, &request, &progress, &clock)
        .await
        .expect("resumes");
    assert_eq!(again.items[0].files, 3000);
    assert!(
        again.items[0]
            .detail
            .as_deref()
            .is_some_and(|d| d.starts_with("2998 files")),
        "{:?}",
        again.items[0].detail
    );
    assert_eq!(same_tree(&outputs, &local.join("outputs")), 3000);
    assert_eq!(
        again.items[0].sha256, record.items[0].sha256,
        "the same manifest both times"
    );
    assert_eq!(
        backup::record::history(&store, "none")
            .await
            .map(|h| h.len())
            .unwrap_or(0),
        0
    );
}

fn files_below(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            found.push(entry.path().display().to_string());
            found.extend(files_below(&entry.path()));
        }
    }
    found
}

#[tokio::test]
async fn a_lying_sftp_server_cannot_write_outside_the_chosen_folder() {
    let server = HostileSftp::start(vec![
        HostileEntry::file("../../escape.txt", 5),
        HostileEntry::file("ok.txt", 5),
    ])
    .await;
    let scratch = tempfile::tempdir().expect("scratch");
    let command = parse_ssh_command(&server.ssh_command()).expect("parses");
    let destination = Destination::resolve(&command, None).expect("resolves");
    let options = ConnectOptions {
        known_hosts: KnownHosts::only(scratch.path().join("known_hosts")),
        accept_new_host_key: true,
        ..ConnectOptions::default()
    };
    let credentials = Credentials {
        password: Some(leasehold_core::ssh::Secret::new("x")),
        ..Credentials::default()
    };
    let target = SshTarget::connect(destination, credentials, options)
        .await
        .expect("any login works");
    let store = Store::open_in_memory().await.expect("store");
    let local = scratch.path().join("out").join("deep");
    let request = RunRequest {
        remote_paths: vec![HOSTILE_ROOT.to_owned()],
        local_dir: local.clone(),
        instance: None,
    };
    let err = backup::run(&store, &target, &request, &|_| {}, &FixedClock::new(t0()))
        .await
        .expect_err("refused");
    assert_eq!(err.code(), "ssh.unsafe_remote_name", "{err}");
    let written: Vec<String> = files_below(scratch.path())
        .into_iter()
        .filter(|p| !p.ends_with("known_hosts"))
        .collect();
    assert!(
        written.iter().all(|p| !p.contains("escape")),
        "nothing escaped: {written:?}"
    );
    assert!(
        written.iter().all(|p| !p.ends_with(".txt")),
        "nothing was written at all: {written:?}"
    );
}

/// A `tar` on the instance that answers with an archive naming `../escape.txt`.
fn lying_tar(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let mut builder = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Regular);
    header.set_size(5);
    header.set_mode(0o644);
    let name = b"../escape.txt";
    header.as_old_mut().name[..name.len()].copy_from_slice(name);
    header.set_cksum();
    builder.append(&header, &b"hello"[..]).expect("append");
    std::fs::write(bin.join("evil.tar"), builder.into_inner().expect("finish")).expect("write tar");
    let script = format!("#!/bin/sh\ncat {}\n", bin.join("evil.tar").display());
    std::fs::write(bin.join("tar"), script).expect("write script");
    std::fs::set_permissions(bin.join("tar"), std::fs::Permissions::from_mode(0o755))
        .expect("chmod");
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    bin
}

#[tokio::test]
async fn a_lying_tar_stream_is_refused_and_nothing_lands_outside() {
    let tools = tempfile::tempdir().expect("tools");
    let bin = lying_tar(tools.path());
    let setup = Setup::with(SshdOptions {
        extra_path: Some(bin),
        ..SshdOptions::default()
    });
    let outputs = setup.host.remote_dir().join("outputs");
    fill_small_files(&outputs, 50);
    give_all(&setup, &setup.host.remote_dir());
    let target = setup.connect().await;
    let store = Store::open_in_memory().await.expect("store");
    let local = setup.scratch.path().join("dl");
    let request = RunRequest {
        remote_paths: vec![outputs.to_string_lossy().into_owned()],
        local_dir: local.clone(),
        instance: None,
    };
    let err = backup::run(&store, &target, &request, &|_| {}, &FixedClock::new(t0()))
        .await
        .expect_err("refused");
    assert!(matches!(err, BackupError::UnsafeName { .. }), "{err}");
    assert!(
        !setup.scratch.path().join("escape.txt").exists() && !local.join("escape.txt").exists()
    );
    assert!(
        files_below(&local).iter().all(|p| !p.ends_with(".txt")),
        "{:?}",
        files_below(&local)
    );
}

async fn recorded_instance(store: &Store, name: &str) {
    let new = NewInstance {
        name: name.into(),
        provider: "autodl".into(),
        region: None,
        gpu_model: "RTX 4090".into(),
        currency: "CNY".into(),
        notes: None,
        planned_hours: None,
        budget: None,
        rules: BillingRules::simple(dec!(2.5), 1),
    };
    ledger::add_instance(store, &new, t0())
        .await
        .expect("recorded");
    ledger::record(store, name, PowerAction::Start, t0())
        .await
        .expect("started");
}

/// A directory whose `nvidia-smi` answers like a GPU with a process holding memory.
fn busy_gpu(dir: &Path) -> String {
    let fake = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fake-gpu-hosts");
    let fake = std::fs::canonicalize(fake).expect("fake hosts");
    let script = format!(
        "#!/bin/sh\nFAKE_GPU_PROFILE={} exec {} \"$@\"\n",
        fake.join("profiles/zombie").display(),
        fake.join("bin/nvidia-smi").display()
    );
    std::fs::write(dir.join("nvidia-smi"), script).expect("write");
    std::fs::set_permissions(
        dir.join("nvidia-smi"),
        std::fs::Permissions::from_mode(0o755),
    )
    .expect("chmod");
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    dir.display().to_string()
}

async fn event_count(store: &Store, name: &str) -> usize {
    ledger::show(store, name, t0() + Duration::hours(5))
        .await
        .expect("shown")
        .events
        .len()
}

#[tokio::test]
async fn release_is_blocked_by_a_gpu_process_and_unpushed_commits_until_overridden() {
    let setup = Setup::new();
    let root = setup.host.remote_dir();
    lay_out_work(&root);
    give_all(&setup, &root);
    let tools = tempfile::tempdir().expect("tools");
    let target = setup.connect().await;
    let store = Store::open_in_memory().await.expect("store");
    recorded_instance(&store, "gpu-box").await;
    let options = ScanOptions {
        roots: vec![root.to_string_lossy().into_owned()],
        path_prefix: Some(busy_gpu(tools.path())),
    };
    let now = t0() + Duration::hours(2);
    let outcome = release::check(&store, &target, "gpu-box", &options, now)
        .await
        .expect("checked");
    let status = |code: &str| {
        outcome
            .checks
            .iter()
            .find(|c| c.code == code)
            .map(|c| c.status)
    };
    assert!(outcome.blocked);
    assert_eq!(
        status("gpu.processes_running"),
        Some(CheckStatus::Blocked),
        "{:#?}",
        outcome.checks
    );
    assert_eq!(status("git.unpushed"), Some(CheckStatus::Blocked));
    assert_eq!(status("git.uncommitted"), Some(CheckStatus::Blocked));
    assert_eq!(status("backup.never"), Some(CheckStatus::Blocked));
    assert_eq!(status("jobs.running"), Some(CheckStatus::Ok));
    assert!(outcome
        .console_url
        .as_deref()
        .is_some_and(|u| u.contains("autodl")));

    let before = event_count(&store, "gpu-box").await;
    let at = t0() + Duration::hours(3);
    let request = |confirm: &str, overrides: Vec<(&str, &str)>| ReleaseRequest {
        name: "gpu-box".into(),
        confirm: confirm.into(),
        overrides: overrides
            .into_iter()
            .map(|(c, r)| (c.to_owned(), r.to_owned()))
            .collect(),
        no_check: None,
        fresh: None,
    };
    let refused = release::release(
        &store,
        request("gpu-box", vec![("git.unpushed", "pushed by hand")]),
        at,
        None,
    )
    .await
    .expect_err("still blocked");
    assert!(
        matches!(&refused, ReleaseError::Blocked { codes } if codes.contains(&"gpu.processes_running".to_owned())),
        "{refused}"
    );
    assert!(refused.is_bad_input(), "a refusal is bad input (exit 2)");
    let wrong_name = release::release(&store, request("gpu-bx", vec![]), at, None)
        .await
        .expect_err("mistyped");
    assert_eq!(wrong_name.code(), "release.confirmation_mismatch");
    assert_eq!(
        event_count(&store, "gpu-box").await,
        before,
        "a refused release leaves the ledger as it was"
    );
    assert!(
        release::final_bill(&store, "gpu-box", at, None)
            .await
            .expect("bill")
            .overrides
            .is_empty(),
        "and records no override"
    );

    let all = vec![
        ("gpu.processes_running", "the process is a stale zombie"),
        ("git.unpushed", "scratch commits"),
        ("git.uncommitted", "scratch edits"),
        ("backup.never", "nothing worth keeping"),
    ];
    let bill = release::release(&store, request("gpu-box", all), at, Some(dec!(2)))
        .await
        .expect("released");
    assert_eq!(
        event_count(&store, "gpu-box").await,
        before + 1,
        "one released event"
    );
    assert_eq!(bill.report.released_at, Some(at));
    assert_eq!(
        bill.overrides.len(),
        4,
        "every override is kept with its reason"
    );
    assert!(bill
        .overrides
        .iter()
        .any(|o| o.code == "gpu.processes_running" && o.reason == "the process is a stale zombie"));
    assert_eq!(bill.report.total, dec!(7.50), "three hours at 2.50");
    assert_eq!(
        bill.cost_per_busy_hour,
        Some(dec!(3.75)),
        "7.50 over two busy hours"
    );
}

#[tokio::test]
async fn a_release_without_any_check_needs_a_recorded_reason() {
    let store = Store::open_in_memory().await.expect("store");
    recorded_instance(&store, "offline").await;
    let at = t0() + Duration::hours(1);
    let request = |no_check: Option<&str>| ReleaseRequest {
        name: "offline".into(),
        confirm: "offline".into(),
        overrides: vec![],
        no_check: no_check.map(str::to_owned),
        fresh: None,
    };
    let err = release::release(&store, request(None), at, None)
        .await
        .expect_err("never checked");
    assert_eq!(err.code(), "release.never_checked");
    let err = release::release(&store, request(Some("  ")), at, None)
        .await
        .expect_err("empty reason");
    assert_eq!(err.code(), "release.empty_reason");
    assert_eq!(
        event_count(&store, "offline").await,
        2,
        "created and started only"
    );
    let bill = release::release(
        &store,
        request(Some("the instance no longer boots")),
        at,
        None,
    )
    .await
    .expect("released");
    assert_eq!(bill.overrides[0].code, "release.no_check");
    assert_eq!(bill.busy_hours, None, "not measured");
}

/// The jobs check reads each job recorded as running from the instance first: one that ended
/// since the app last looked no longer blocks, one still running does.
#[tokio::test]
async fn the_jobs_check_reads_recorded_jobs_afresh_from_the_instance() {
    use leasehold_core::job::record::{self, NewJob};
    use leasehold_core::job::{self, JobId, JobRoot};

    let setup = Setup::new();
    let root = setup.host.remote_dir();
    let target = setup.connect().await;
    let store = Store::open_in_memory().await.expect("store");
    recorded_instance(&store, "gpu-box").await;
    let request = leasehold_core::ssh::ConnectRequest {
        ssh_command: setup.host.ssh_command(),
        ..Default::default()
    };
    let options = std::collections::BTreeMap::new();
    let mut ids = Vec::new();
    for (tag, script) in [("ended", "echo trained"), ("training", "sleep 60")] {
        // Unique per run: the test user's home (and its job folders) outlives a test.
        let fresh = JobId::generate(leasehold_core::clock::Clock::now(
            &leasehold_core::clock::SystemClock,
        ));
        let id = JobId::parse(&format!("{fresh}-{tag}")).expect("id");
        let job = NewJob {
            id: &id,
            instance: Some("gpu-box"),
            target: "test",
            request: &request,
            name: Some(tag),
            recipe: None,
            options: &options,
            script,
            now: t0(),
        };
        record::start_recorded(&store, &target, &JobRoot::Home, &job)
            .await
            .expect("started");
        ids.push(id);
    }
    // Wait until the short job has ended on the instance; the database still says running.
    for _ in 0..100 {
        let status = job::status(&target, &JobRoot::Home, &ids[0])
            .await
            .expect("status");
        if status.state.is_over() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let options = ScanOptions {
        roots: vec![root.to_string_lossy().into_owned()],
        path_prefix: None,
    };
    let outcome = release::check(
        &store,
        &target,
        "gpu-box",
        &options,
        t0() + Duration::hours(1),
    )
    .await
    .expect("checked");
    let jobs = outcome
        .checks
        .iter()
        .find(|c| c.code == "jobs.running")
        .expect("jobs check");
    assert_eq!(jobs.status, CheckStatus::Blocked);
    assert_eq!(jobs.items, vec![format!("{} (training)", ids[1])]);
    job::cancel(
        &target,
        &JobRoot::Home,
        &ids[1],
        std::time::Duration::from_secs(1),
    )
    .await
    .expect("cancelled");
}

/// "Changed since the last backup" compares the instance's file times with a backup start taken
/// on this computer's clock: with this computer an hour behind the instance, a file written
/// before the backup still counts as saved and one written after it as changed.
#[tokio::test]
async fn changes_since_a_backup_are_judged_on_the_instances_clock() {
    let setup = Setup::new();
    let root = setup.host.remote_dir();
    let work = root.join("work");
    std::fs::create_dir_all(&work).expect("mkdir");
    let instance_now = leasehold_core::clock::Clock::now(&leasehold_core::clock::SystemClock);
    let laptop_now = instance_now - Duration::hours(1);
    let before_backup = std::fs::File::create(work.join("saved.txt")).expect("file");
    before_backup
        .set_modified((instance_now - Duration::minutes(20)).into())
        .expect("mtime");
    std::fs::write(work.join("after.txt"), "written after the backup").expect("file");
    give_all(&setup, &root);
    let target = setup.connect().await;
    let store = Store::open_in_memory().await.expect("store");
    recorded_instance(&store, "gpu-box").await;
    let started = laptop_now - Duration::minutes(10);
    backup::record::save(
        &store,
        Some("gpu-box"),
        "test",
        Path::new("/saved"),
        started,
        started + Duration::minutes(1),
        vec![backup::BackupItem {
            kind: ItemKind::Folder,
            remote_path: work.display().to_string(),
            local_path: Some("/saved/work".into()),
            files: 1,
            bytes: 1,
            sha256: None,
            detail: None,
        }],
    )
    .await
    .expect("backup recorded");

    let context = backup::InstanceContext::load(&store, "gpu-box", laptop_now)
        .await
        .expect("context");
    let options = ScanOptions {
        roots: vec![work.display().to_string()],
        path_prefix: None,
    };
    let report = backup::scan(&target, &options, Some(&context))
        .await
        .expect("scanned");
    let changed = report.changed_since_last_backup.expect("backed up before");
    assert_eq!(changed.files, 1, "only after.txt changed: {changed:?}");
}

/// A copy into the provider's file storage lands in its own dated folder there, is recorded
/// with its size, and a hostile file name is only ever data to it.
#[tokio::test]
async fn a_copy_into_file_storage_lands_there_and_is_recorded() {
    let setup = Setup::new();
    let root = setup.host.remote_dir();
    let work = root.join("run $(touch pwned) 'one'");
    std::fs::create_dir_all(&work).expect("mkdir");
    std::fs::write(work.join("weights.bin"), vec![7u8; 4096]).expect("file");
    let storage_dir = root.join("autodl-fs");
    std::fs::create_dir_all(&storage_dir).expect("mkdir");
    give_all(&setup, &root);
    let target = setup.connect().await;
    let store = Store::open_in_memory().await.expect("store");
    recorded_instance(&store, "gpu-box").await;
    let storage = backup::ProviderStorage {
        data_disk: None,
        file_storage: Some(storage_dir.display().to_string()),
        image_keeps_data_disk: None,
        console_url: None,
    };
    let clock = FixedClock::new(t0() + Duration::hours(1));
    let record = backup::copy_to_file_storage(
        &store,
        &target,
        Some("gpu-box"),
        &storage,
        &work.display().to_string(),
        &clock,
    )
    .await
    .expect("copied");
    let copy = storage_dir
        .join("leasehold-backup/20260301T090000Z")
        .join(work.file_name().expect("name"))
        .join("weights.bin");
    assert_eq!(std::fs::read(&copy).expect("copy exists"), vec![7u8; 4096]);
    assert!(!root.join("pwned").exists() && !Path::new("pwned").exists());
    assert_eq!(record.items[0].kind, ItemKind::FileStorage);
    assert!(record.items[0].bytes >= 4096, "{:?}", record.items[0]);
    let history = backup::record::history(&store, "gpu-box")
        .await
        .expect("history");
    assert_eq!(history.len(), 1, "the copy is recorded");
}
