//! Jobs on this computer (`LocalTarget`, the same shell text as on an instance), in a private
//! job root per test. The SSH side is covered by `tests/job_remote.rs` against real sshd.

use std::time::Duration;

use super::script::RemoteStatus;
use super::*;
use crate::target::LocalTarget;

struct Jobs {
    dir: tempfile::TempDir,
    root: JobRoot,
}

impl Jobs {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = JobRoot::Folder(dir.path().join("jobs dir 'q'").display().to_string());
        Self { dir, root }
    }

    fn folder(&self, id: &JobId) -> std::path::PathBuf {
        self.dir.path().join("jobs dir 'q'").join(id.as_str())
    }

    /// Attach to `id` from byte `from` until it ends: its end, the bytes delivered and the
    /// offset reached.
    async fn attach_from(&self, id: &JobId, from: u64) -> (JobStatus, Vec<u8>, u64) {
        let mut offset = from;
        let mut got = Vec::new();
        let end = attach(
            &LocalTarget,
            &self.root,
            id,
            &mut offset,
            &mut |chunk: &[u8]| got.extend_from_slice(chunk),
            AttachOptions::default(),
        )
        .await
        .expect("attach");
        (end, got, offset)
    }
}

fn id(text: &str) -> JobId {
    JobId::parse(text).expect("valid id")
}

async fn wait_over(jobs: &Jobs, id: &JobId) -> JobStatus {
    for _ in 0..200 {
        let now = status(&LocalTarget, &jobs.root, id).await.expect("status");
        if now.state.is_over() {
            return now;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("job {id} did not end within 10 s");
}

fn pid_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let after = stat.rsplit_once(") ")?.1.to_owned();
            Some(!after.starts_with('Z'))
        })
        .unwrap_or(false)
}

#[test]
fn ids_are_checked_before_they_reach_a_path() {
    for bad in ["", "../x", "a/b", "-rf", "a b", "x;y", &"a".repeat(65), "ü"] {
        assert!(
            JobId::parse(bad).is_err(),
            "{bad:?} must be refused as a job id"
        );
    }
    let fresh = JobId::generate(crate::clock::Clock::now(&crate::clock::SystemClock));
    assert!(
        JobId::parse(fresh.as_str()).is_ok(),
        "generated ids are valid"
    );
    assert_ne!(
        fresh,
        JobId::generate(crate::clock::Clock::now(&crate::clock::SystemClock)),
        "two ids in one second differ"
    );
}

#[test]
fn states_follow_the_documented_order() {
    let base = RemoteStatus {
        folder: true,
        same_boot: true,
        alive: true,
        ..RemoteStatus::default()
    };
    let cases = [
        (base.clone(), JobState::Running, None),
        (
            RemoteStatus {
                alive: false,
                exit: Some(0),
                ..base.clone()
            },
            JobState::Succeeded,
            Some(0),
        ),
        (
            RemoteStatus {
                alive: false,
                exit: Some(7),
                ..base.clone()
            },
            JobState::Failed,
            Some(7),
        ),
        (
            RemoteStatus {
                cancelled: true,
                ..base.clone()
            },
            JobState::Cancelled,
            None,
        ),
        (
            RemoteStatus {
                alive: false,
                ..base.clone()
            },
            JobState::Lost,
            None,
        ),
        (
            RemoteStatus {
                same_boot: false,
                ..base.clone()
            },
            JobState::Lost,
            None,
        ),
        (RemoteStatus::default(), JobState::Lost, None),
        (
            RemoteStatus {
                exit: Some(0),
                same_boot: false,
                alive: false,
                ..base
            },
            JobState::Succeeded,
            Some(0),
        ),
    ];
    for (remote, state, code) in cases {
        assert_eq!(state_of(&remote), (state, code), "state for {remote:?}");
    }
}

#[tokio::test]
async fn a_job_runs_detached_and_attach_delivers_its_whole_log_and_exit_code() {
    let jobs = Jobs::new();
    let job = id("j-log");
    let script =
        "for i in $(seq 1 2000); do echo \"line $i of the log\"; done; echo oops >&2; exit 3";
    let started = start(&LocalTarget, &jobs.root, &job, script)
        .await
        .expect("starts");
    assert_eq!(started.state, JobState::Running);
    let (end, got, offset) = jobs.attach_from(&job, 0).await;
    let log = std::fs::read(jobs.folder(&job).join("log")).expect("log file");
    assert_eq!(end.state, JobState::Failed, "exit 3 is a failure");
    assert_eq!(end.exit_code, Some(3), "the job's own exit code");
    assert_eq!(got, log, "attach delivers the log byte for byte");
    assert_eq!(offset, log.len() as u64, "offset = bytes delivered");
    assert!(
        String::from_utf8_lossy(&got).ends_with("line 2000 of the log\noops\n"),
        "stderr is in the log too"
    );
    let mode = std::fs::metadata(jobs.folder(&job).join("pid"))
        .map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o777)
        .expect("pid file");
    assert_eq!(mode, 0o600, "job files are private to the login user");
}

#[tokio::test]
async fn the_same_id_cannot_start_twice() {
    let jobs = Jobs::new();
    let job = id("j-twice");
    start(&LocalTarget, &jobs.root, &job, "true")
        .await
        .expect("first start");
    let err = start(&LocalTarget, &jobs.root, &job, "true")
        .await
        .expect_err("second start refused");
    assert!(matches!(err, JobError::AlreadyExists(_)), "got {err:?}");
}

#[tokio::test]
async fn an_attach_dropped_midway_resumes_at_its_offset_without_loss_or_repeat() {
    let jobs = Jobs::new();
    let job = id("j-resume");
    // About 1.2 MB over ~1.5 s, so the first attach is dropped mid-log.
    let script = "i=0; while [ $i -lt 30 ]; do head -c 40000 /dev/zero | tr '\\0' \"$(printf '%x' $((i % 16)))\"; echo; i=$((i+1)); sleep 0.05; done";
    start(&LocalTarget, &jobs.root, &job, script)
        .await
        .expect("starts");
    let mut offset = 0u64;
    let mut got = Vec::new();
    {
        let mut collect = |chunk: &[u8]| got.extend_from_slice(chunk);
        let first = attach(
            &LocalTarget,
            &jobs.root,
            &job,
            &mut offset,
            &mut collect,
            AttachOptions::default(),
        );
        let _ = tokio::time::timeout(Duration::from_millis(500), first).await;
    }
    let after_drop = offset;
    assert_eq!(
        after_drop,
        got.len() as u64,
        "offset counts what was delivered"
    );
    let end = attach(
        &LocalTarget,
        &jobs.root,
        &job,
        &mut offset,
        &mut |chunk: &[u8]| got.extend_from_slice(chunk),
        AttachOptions::default(),
    )
    .await
    .expect("second attach");
    let log = std::fs::read(jobs.folder(&job).join("log")).expect("log");
    assert_eq!(end.state, JobState::Succeeded);
    assert!(
        after_drop > 0 && after_drop < log.len() as u64,
        "the first attach was cut midway ({after_drop} of {})",
        log.len()
    );
    assert_eq!(got.len(), log.len(), "nothing lost or repeated");
    assert!(got == log, "the joined halves are the log byte for byte");
}

#[tokio::test]
async fn attaching_anywhere_in_a_long_backlog_delivers_exactly_the_rest() {
    // The stream sends the first few KiB of a backlog on their own, then the rest: the seam
    // between the two must neither lose nor repeat a byte, from any starting offset.
    let jobs = Jobs::new();
    let job = id("j-backlog");
    start(
        &LocalTarget,
        &jobs.root,
        &job,
        "head -c 60000 /dev/urandom | base64",
    )
    .await
    .expect("starts");
    assert_eq!(wait_over(&jobs, &job).await.state, JobState::Succeeded);
    let log = std::fs::read(jobs.folder(&job).join("log")).expect("log");
    let len = log.len();
    assert!(len > 3 * 4096, "a backlog of several pieces ({len} bytes)");
    for from in [0, 1, 4095, 4096, 4097, 8193, len / 2, len - 1, len] {
        let (end, got, offset) = jobs.attach_from(&job, from as u64).await;
        assert_eq!(end.state, JobState::Succeeded);
        assert!(
            got == log[from..],
            "from byte {from}: exactly the rest of the log"
        );
        assert_eq!(
            offset, len as u64,
            "from byte {from}: offset ends at the log's end"
        );
    }
}

#[tokio::test]
async fn cancel_ends_the_whole_process_group_and_leaves_nothing() {
    let jobs = Jobs::new();
    let job = id("j-cancel");
    let script = "sleep 300 & echo \"child $!\"; sh -c 'sleep 301 & echo \"grandchild $!\"; wait' & sleep 302";
    start(&LocalTarget, &jobs.root, &job, script)
        .await
        .expect("starts");
    let log_path = jobs.folder(&job).join("log");
    let mut pids = Vec::new();
    for _ in 0..100 {
        let log = std::fs::read_to_string(&log_path).unwrap_or_default();
        pids = log
            .lines()
            .filter_map(|l| l.split_whitespace().last()?.parse::<u32>().ok())
            .collect();
        if pids.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(pids.len(), 2, "the job printed its children's pids");
    let wrapper: u32 = std::fs::read_to_string(jobs.folder(&job).join("pid"))
        .expect("pid")
        .trim()
        .parse()
        .expect("number");
    assert!(pid_alive(wrapper) && pids.iter().all(|p| pid_alive(*p)));
    let report = cancel(&LocalTarget, &jobs.root, &job, Duration::from_secs(3))
        .await
        .expect("cancel");
    assert_eq!(report.status.state, JobState::Cancelled);
    assert!(
        report.left_behind.is_empty(),
        "left: {:?}",
        report.left_behind
    );
    assert!(!report.already_over);
    tokio::time::sleep(Duration::from_millis(100)).await;
    for pid in pids.iter().chain([&wrapper]) {
        assert!(!pid_alive(*pid), "process {pid} of the job must be gone");
    }
    let again = status(&LocalTarget, &jobs.root, &job)
        .await
        .expect("status");
    assert_eq!(
        again.state,
        JobState::Cancelled,
        "cancelled stays cancelled"
    );
}

#[tokio::test]
async fn cancelling_a_finished_job_kills_nothing_and_keeps_its_code() {
    let jobs = Jobs::new();
    let job = id("j-done");
    start(&LocalTarget, &jobs.root, &job, "echo hi")
        .await
        .expect("starts");
    wait_over(&jobs, &job).await;
    let report = cancel(&LocalTarget, &jobs.root, &job, Duration::from_secs(1))
        .await
        .expect("cancel");
    assert!(report.already_over);
    assert_eq!(report.status.state, JobState::Succeeded);
}

#[tokio::test]
async fn a_vanished_folder_or_a_dead_wrapper_is_lost_and_attach_does_not_hang() {
    let jobs = Jobs::new();
    let job = id("j-gone");
    start(&LocalTarget, &jobs.root, &job, "sleep 30")
        .await
        .expect("starts");
    let wrapper = std::fs::read_to_string(jobs.folder(&job).join("pid")).expect("pid");
    // The instance restarted: the wrapper died without writing an exit code.
    std::process::Command::new("kill")
        .args(["-KILL", wrapper.trim()])
        .status()
        .expect("kill");
    tokio::time::sleep(Duration::from_millis(100)).await;
    let now = status(&LocalTarget, &jobs.root, &job)
        .await
        .expect("status");
    assert_eq!(now.state, JobState::Lost, "no wrapper and no exit code");
    let _ = cancel(&LocalTarget, &jobs.root, &job, Duration::from_secs(1)).await;

    let job = id("j-vanished");
    start(&LocalTarget, &jobs.root, &job, "sleep 0.3")
        .await
        .expect("starts");
    wait_over(&jobs, &job).await;
    std::fs::remove_dir_all(jobs.folder(&job)).expect("remove");
    let mut offset = 0;
    let end = tokio::time::timeout(
        Duration::from_secs(10),
        attach(
            &LocalTarget,
            &jobs.root,
            &job,
            &mut offset,
            &mut |_: &[u8]| {},
            AttachOptions::default(),
        ),
    )
    .await
    .expect("attach must not hang on a vanished job")
    .expect("attach");
    assert_eq!(end.state, JobState::Lost);
}

#[test]
fn a_character_cut_by_a_chunk_boundary_arrives_whole() {
    let text = "进度 50% ✓";
    let bytes = text.as_bytes();
    let mut chunks = Utf8Chunks::default();
    let mut out = String::new();
    for piece in bytes.chunks(1) {
        out.push_str(&chunks.push(piece));
    }
    assert_eq!(out, text, "no replacement characters from split bytes");
}
