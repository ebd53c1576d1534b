//! The GPU monitor's sampler against the replaying `nvidia-smi` of `tests/fake-gpu-hosts` on a
//! real sshd test host: the loop mode (one long-lived process), the field fallback of an older
//! driver, a killed stream (restart with a gap), a machine without a driver, and — inside a
//! network namespace behind the delay link — a cut link (gap, then the series continues).

mod common;

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::Setup;
use leasehold_core::diagnose::Lang;
use leasehold_core::monitor::{
    self, FindingContext, GapReason, MonitorError, MonitorEvent, SamplerOptions,
};
use leasehold_core::ssh::{
    parse_ssh_command, ConnectOptions, Credentials, Destination, KeyFile, KnownHosts, SshTarget,
};
use leasehold_core::target::Target;
use leasehold_core::SystemClock;
use leasehold_testkit::delay_link::{DelayLink, LinkOptions};
use leasehold_testkit::{netns, ClientKey, SshdOptions};

fn fake_hosts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fake-gpu-hosts")
}

fn sshd_options() -> SshdOptions {
    SshdOptions {
        extra_path: Some(fake_hosts().join("bin")),
        ..SshdOptions::default()
    }
}

fn sampler(profile: &str, pidfile: Option<&Path>) -> SamplerOptions {
    // A login shell resets PATH from /etc/profile, so the fake tools go first explicitly.
    let mut options = SamplerOptions::new(Duration::from_millis(200))
        .expect("valid interval")
        .path_prefix(fake_hosts().join("bin").to_string_lossy())
        .env(
            "FAKE_GPU_PROFILE",
            fake_hosts()
                .join("profiles")
                .join(profile)
                .to_string_lossy(),
        )
        .expect("valid name");
    if let Some(path) = pidfile {
        options = options
            .env("FAKE_GPU_PIDFILE", path.to_string_lossy())
            .expect("valid name");
    }
    options.processes_every = Duration::from_secs(1);
    options.max_backoff = Duration::from_secs(1);
    options
}

fn context() -> FindingContext {
    FindingContext {
        lang: Lang::En,
        billing: true,
    }
}

/// Run the sampler until `done` says so (or 60 s pass), returning every event seen.
async fn sample_until(
    target: &dyn Target,
    options: &SamplerOptions,
    mut done: impl FnMut(&[MonitorEvent]) -> bool + Send,
) -> Result<Vec<MonitorEvent>, MonitorError> {
    let mut events = Vec::new();
    let mut sink = |event: MonitorEvent| {
        events.push(event);
        if done(&events) {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    let context = context();
    let run = monitor::run(target, &SystemClock, options, &context, &mut sink);
    tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the sampler reached its goal within a minute")?;
    Ok(events)
}

fn samples(events: &[MonitorEvent]) -> Vec<&monitor::Sample> {
    events
        .iter()
        .filter_map(|e| match e {
            MonitorEvent::Sample(s) => Some(s),
            _ => None,
        })
        .collect()
}

fn read_pid(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|p| p.trim().to_owned())
        .filter(|p| !p.is_empty())
}

#[tokio::test]
async fn eight_gpus_stream_from_one_looping_process_with_findings_and_processes() {
    let setup = Setup::with(sshd_options());
    let target = setup.connect().await;
    let pidfile = setup.host.remote_dir().join("gpu.pid");
    let options = sampler("busy-x8", Some(&pidfile));
    let mut first_pid = None;
    let mut pids_seen = Vec::new();
    let events = sample_until(&target, &options, |events| {
        let count = samples(events).len();
        if let Some(pid) = read_pid(&pidfile) {
            if !pids_seen.contains(&pid) {
                pids_seen.push(pid.clone());
            }
            first_pid.get_or_insert(pid);
        }
        let has_process = events.iter().any(|e| {
            matches!(e, MonitorEvent::Processes(l) if l.processes.iter().any(|p| p.pid == 4242))
        });
        count >= 8 && has_process
    })
    .await
    .expect("samples");
    let all = samples(&events);
    assert!(
        all.iter().all(|s| s.gpus.len() == 8),
        "every sample has all eight GPUs"
    );
    let first = all[0];
    assert_eq!(first.gpus[0].utilization_pct, Some(98));
    assert_eq!(first.gpus[0].memory_used_mib, Some(61234));
    assert_eq!(first.gpus[0].power_limit_w, Some(500.0));
    assert_eq!(
        first.gpus[0].throttle,
        vec![monitor::ThrottleReason::PowerCap]
    );
    assert_eq!(first.gpus[3].utilization_pct, Some(0));
    assert!(
        all.windows(2).all(|w| w[0].at <= w[1].at),
        "samples are in time order"
    );
    assert_eq!(
        pids_seen.len(),
        1,
        "one nvidia-smi process served every sample (loop mode, not a process per sample)"
    );
    let processes = events
        .iter()
        .find_map(|e| match e {
            MonitorEvent::Processes(l) if !l.processes.is_empty() => Some(l),
            _ => None,
        })
        .expect("a process look");
    assert_eq!(processes.processes[0].gpu_index, Some(0), "matched by UUID");
    assert_eq!(processes.processes[0].name, "python train.py");
    let findings = events
        .iter()
        .find_map(|e| match e {
            MonitorEvent::Findings { findings, .. } => Some(findings),
            _ => None,
        })
        .expect("findings once enough samples arrived");
    let peers = findings
        .iter()
        .find(|f| f.finding.code == "gpu.idle_peers")
        .expect("GPU 0 busy, seven idle");
    assert_eq!(peers.gpus, vec![1, 2, 3, 4, 5, 6, 7]);
    assert!(
        !events.iter().any(|e| matches!(e, MonitorEvent::Gap { .. })),
        "nothing broke, so no gap"
    );
}

#[tokio::test]
async fn an_older_driver_without_count_or_clock_reasons_is_sampled_with_fewer_fields() {
    let setup = Setup::with(sshd_options());
    let target = setup.connect().await;
    // a100-x8's CSV has neither `count` nor either name of the clock-reason field: each refusal
    // costs one restart, never an error.
    let events = sample_until(&target, &sampler("a100-x8", None), |events| {
        samples(events).len() >= 3
    })
    .await
    .expect("sampled without the refused fields");
    let all = samples(&events);
    assert_eq!(all[0].gpus.len(), 8);
    assert!(all[0].gpus.iter().all(|g| g.throttle.is_empty()));
    assert_eq!(all[0].gpus[0].power_draw_w, Some(59.0));
    assert!(
        !events.iter().any(|e| matches!(e, MonitorEvent::Gap { .. })),
        "a refused field before the first sample is not a gap"
    );
}

#[tokio::test]
async fn a_killed_stream_restarts_after_a_marked_gap() {
    let setup = Setup::with(sshd_options());
    let target = setup.connect().await;
    let pidfile = setup.host.remote_dir().join("gpu.pid");
    let mut killed: Option<String> = None;
    let events = sample_until(&target, &sampler("busy-x8", Some(&pidfile)), |events| {
        let count = samples(events).len();
        if count >= 3 && killed.is_none() {
            let pid = read_pid(&pidfile).expect("the looping fake wrote its pid");
            let status = std::process::Command::new("kill")
                .args(["-9", &pid])
                .status()
                .expect("run kill");
            assert!(status.success(), "killed the remote nvidia-smi {pid}");
            killed = Some(pid);
        }
        let after_gap = events
            .iter()
            .skip_while(|e| !matches!(e, MonitorEvent::Gap { .. }))
            .filter(|e| matches!(e, MonitorEvent::Sample(_)))
            .count();
        after_gap >= 3
    })
    .await
    .expect("the stream came back");
    let (gap_at, since, reason) = events
        .iter()
        .find_map(|e| match e {
            MonitorEvent::Gap { at, since, reason } => Some((*at, *since, *reason)),
            _ => None,
        })
        .expect("a gap");
    assert_eq!(
        reason,
        GapReason::Ended,
        "the process died, the link did not"
    );
    let before: Vec<_> = samples(&events)
        .into_iter()
        .filter(|s| s.at <= gap_at)
        .collect();
    assert_eq!(
        since,
        before.last().map(|s| s.at),
        "the gap starts at the last real sample"
    );
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, MonitorEvent::Gap { .. }))
            .count(),
        1,
        "one outage, one gap"
    );
    let new_pid = read_pid(&pidfile).expect("the new stream wrote its pid");
    assert_ne!(
        Some(new_pid),
        killed,
        "a new nvidia-smi serves the samples after the gap"
    );
}

#[tokio::test]
async fn a_machine_without_nvidia_smi_or_with_a_broken_driver_is_an_error_not_a_loop() {
    let setup = Setup::with(sshd_options());
    let target = setup.connect().await;
    let err = sample_until(&target, &sampler("no-driver", None), |_| false)
        .await
        .expect_err("nothing to sample");
    assert!(matches!(err, MonitorError::NoNvidiaSmi { .. }), "{err}");
    let err = sample_until(&target, &sampler("mismatch", None), |_| false)
        .await
        .expect_err("driver/library mismatch");
    match err {
        MonitorError::DriverFailed { message, .. } => {
            assert!(message.contains("mismatch"), "{message}");
        }
        other => panic!("expected driver_failed, got {other}"),
    }
}

#[tokio::test]
async fn one_look_for_the_background_sampler_reads_every_gpu() {
    let setup = Setup::with(sshd_options());
    let target = setup.connect().await;
    // The background sampler has no env of its own on a real instance; put the profile in the
    // remote shell's environment through the same prelude the stream uses.
    let sample = monitor::background::look(
        &PrefixedTarget {
            inner: &target,
            prelude: format!(
                "PATH={}:$PATH; FAKE_GPU_PROFILE={}; export PATH FAKE_GPU_PROFILE; ",
                fake_hosts().join("bin").display(),
                fake_hosts().join("profiles/busy-x8").display()
            ),
        },
        chrono::DateTime::UNIX_EPOCH,
    )
    .await
    .expect("one look");
    assert_eq!(sample.gpus.len(), 8);
    assert_eq!(sample.gpus[0].utilization_pct, Some(98));
}

/// A target that runs every command after a fixed prelude (here: the fake's profile variable).
struct PrefixedTarget<'a> {
    inner: &'a SshTarget,
    prelude: String,
}

impl Target for PrefixedTarget<'_> {
    fn run<'a>(
        &'a self,
        spec: &'a leasehold_core::target::CommandSpec,
    ) -> futures::future::BoxFuture<
        'a,
        Result<leasehold_core::target::CommandOutput, leasehold_core::target::TargetError>,
    > {
        Box::pin(async move {
            let mut spec = spec.clone();
            spec.script = format!("{}{}", self.prelude, spec.script);
            self.inner.run(&spec).await
        })
    }

    fn run_streaming<'a>(
        &'a self,
        spec: &'a leasehold_core::target::CommandSpec,
        sink: &'a mut (dyn FnMut(leasehold_core::target::OutputStream, &[u8]) + Send),
    ) -> futures::future::BoxFuture<'a, Result<Option<u32>, leasehold_core::target::TargetError>>
    {
        self.inner.run_streaming(spec, sink)
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }
}

#[tokio::test]
async fn a_cut_link_leaves_a_gap_and_the_series_continues() {
    if !netns::can_run("a_cut_link_leaves_a_gap_and_the_series_continues") {
        return;
    }
    let link = DelayLink::start_with(LinkOptions {
        one_way_delay: Duration::from_millis(5),
        rate_bytes_per_sec: None,
    })
    .expect("delay link");
    let host = leasehold_testkit::TestHost::start_with(SshdOptions {
        listen: link.ns_addr().into(),
        netns: Some(link.namespace().name().to_owned()),
        ..sshd_options()
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
        keepalive: Duration::from_secs(1),
        reconnect_window: Duration::from_secs(30),
        ..ConnectOptions::default()
    };
    let target = SshTarget::connect(destination, credentials, options)
        .await
        .unwrap_or_else(|err| panic!("connect through the link: {err}\n{}", host.log()));
    let mut cut = false;
    let events = sample_until(&target, &sampler("busy-x8", None), |events| {
        if samples(events).len() >= 3 && !cut {
            link.cut(Duration::from_secs(4));
            cut = true;
        }
        events
            .iter()
            .skip_while(|e| !matches!(e, MonitorEvent::Gap { .. }))
            .filter(|e| matches!(e, MonitorEvent::Sample(_)))
            .count()
            >= 3
    })
    .await
    .expect("the series continued after the link came back");
    let gap_at = events
        .iter()
        .find_map(|e| match e {
            MonitorEvent::Gap { at, .. } => Some(*at),
            _ => None,
        })
        .expect("a gap");
    let after: Vec<_> = samples(&events)
        .into_iter()
        .filter(|s| s.at > gap_at)
        .collect();
    assert!(after.len() >= 3);
    assert!(
        (after[0].at - gap_at).num_milliseconds() >= 1000,
        "the next real sample comes after the link is back, with nothing made up in between"
    );
    assert_eq!(after[0].gpus[0].utilization_pct, Some(98));
}
