//! A link that dies without the transport noticing: the log stream's heartbeat going silent ends
//! it, the target is told to dial afresh, and the next stream continues at the exact byte. A
//! quiet job is not mistaken for a dead link. On this computer, through a target that can swallow
//! everything a stream sends (what a dead TCP connection looks like to the reader).

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::FutureExt;

use super::*;
use crate::target::{CommandOutput, LocalTarget};

/// `LocalTarget`, except that the first log stream goes dead after `pass_bytes` of stdout: from
/// then on nothing it prints arrives and it never ends. Counts `link_stalled` calls.
struct GoesSilent {
    pass_bytes: usize,
    first_done: AtomicBool,
    stalls: AtomicU32,
    streams: AtomicUsize,
}

impl GoesSilent {
    fn after(pass_bytes: usize) -> Self {
        Self {
            pass_bytes,
            first_done: AtomicBool::new(false),
            stalls: AtomicU32::new(0),
            streams: AtomicUsize::new(0),
        }
    }
}

impl Target for GoesSilent {
    fn run<'a>(
        &'a self,
        spec: &'a CommandSpec,
    ) -> BoxFuture<'a, Result<CommandOutput, TargetError>> {
        LocalTarget.run(spec)
    }

    fn run_streaming<'a>(
        &'a self,
        spec: &'a CommandSpec,
        sink: &'a mut (dyn FnMut(OutputStream, &[u8]) + Send),
    ) -> BoxFuture<'a, Result<Option<u32>, TargetError>> {
        async move {
            self.streams.fetch_add(1, Ordering::SeqCst);
            if self.first_done.swap(true, Ordering::SeqCst) {
                return LocalTarget.run_streaming(spec, sink).await;
            }
            let mut passed = 0usize;
            let limit = self.pass_bytes;
            let mut cut = |stream: OutputStream, chunk: &[u8]| {
                if passed >= limit {
                    return;
                }
                if stream == OutputStream::Stdout {
                    let take = chunk.len().min(limit - passed);
                    passed += take;
                    sink(stream, &chunk[..take]);
                } else {
                    sink(stream, chunk);
                }
            };
            let ended = LocalTarget.run_streaming(spec, &mut cut).await;
            if passed < limit {
                return ended;
            }
            // A dead link: the channel never closes either.
            std::future::pending().await
        }
        .boxed()
    }

    fn describe(&self) -> String {
        "a link that goes silent".to_owned()
    }

    fn link_stalled(&self) -> BoxFuture<'_, ()> {
        self.stalls.fetch_add(1, Ordering::SeqCst);
        async {}.boxed()
    }
}

fn private_root() -> (tempfile::TempDir, JobRoot) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = JobRoot::Folder(dir.path().join("jobs").display().to_string());
    (dir, root)
}

fn quick(silent_after: Duration) -> AttachOptions {
    AttachOptions {
        give_up_after: Duration::from_secs(60),
        retry_every: Duration::from_millis(100),
        silent_after,
    }
}

#[tokio::test]
async fn a_silent_stream_is_abandoned_and_a_fresh_one_continues_at_the_exact_byte() {
    let (dir, root) = private_root();
    let job = JobId::parse("j-silent").expect("valid id");
    let script = "i=0; while [ $i -lt 40 ]; do echo \"line $i $(head -c 300 /dev/zero | tr '\\0' x)\"; i=$((i+1)); sleep 0.05; done";
    start(&LocalTarget, &root, &job, script)
        .await
        .expect("starts");
    let target = GoesSilent::after(1000);
    let mut offset = 0u64;
    let mut got = Vec::new();
    let mut collect = |chunk: &[u8]| got.extend_from_slice(chunk);
    let end = tokio::time::timeout(
        Duration::from_secs(60),
        attach(
            &target,
            &root,
            &job,
            &mut offset,
            &mut collect,
            quick(Duration::from_millis(800)),
        ),
    )
    .await
    .expect("a silent stream must not hang the attach: it is abandoned")
    .expect("attach ends with the job");
    assert_eq!(end.state, JobState::Succeeded);
    assert!(
        target.stalls.load(Ordering::SeqCst) >= 1,
        "the target was told the link went silent, so it dials afresh"
    );
    assert!(
        target.streams.load(Ordering::SeqCst) >= 2,
        "a second stream picked up"
    );
    let log = std::fs::read(dir.path().join("jobs").join("j-silent").join("log")).expect("log");
    assert_eq!(offset, log.len() as u64, "the offset is the whole log");
    assert!(
        got == log,
        "the stream cut after 1000 bytes and the one after it join to the log byte for byte"
    );
}

#[tokio::test]
async fn a_quiet_job_keeps_its_stream_through_the_heartbeat() {
    let (dir, root) = private_root();
    let job = JobId::parse("j-quiet").expect("valid id");
    start(&LocalTarget, &root, &job, "echo start; sleep 3; echo done")
        .await
        .expect("starts");
    // Everything passes: only the heartbeat can keep this stream from looking dead while the
    // job says nothing for 3 s.
    let target = GoesSilent::after(usize::MAX);
    let mut offset = 0u64;
    let mut got = Vec::new();
    let mut collect = |chunk: &[u8]| got.extend_from_slice(chunk);
    let end = attach(
        &target,
        &root,
        &job,
        &mut offset,
        &mut collect,
        quick(Duration::from_millis(1800)),
    )
    .await
    .expect("attach ends with the job");
    assert_eq!(end.state, JobState::Succeeded);
    assert_eq!(
        target.stalls.load(Ordering::SeqCst),
        0,
        "a job that is only quiet is not a dead link"
    );
    assert_eq!(String::from_utf8_lossy(&got), "start\ndone\n");
    drop(dir);
}
