//! The whole verify path (battery → facts → findings) against fake GPU hosts: a replaying
//! `nvidia-smi` and a fake `torch` from `tests/fake-gpu-hosts`, first on this computer with
//! PATH/PYTHONPATH injected, then on a real sshd test host.
//!
//! No test reaches the internet: the network probe measures a loopback HTTP server instead.

mod common;

use std::path::{Path, PathBuf};
use std::time::Instant;

use leasehold_core::diagnose::{DiagnoseContext, Lang};
use leasehold_core::probe::network::{Endpoint, EndpointKind};
use leasehold_core::probe::nvidia_smi::NvidiaSmiStatus;
use leasehold_core::probe::{BatteryOptions, NoProgress, ProbeEvent, ProbeId, ProbeOutcome};
use leasehold_core::target::{LocalTarget, Target};
use leasehold_core::verify::{self, VerifyReport};
use leasehold_core::{Clock, SystemClock};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn fake_hosts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fake-gpu-hosts")
}

/// An HTTP server on loopback that answers every request with 200, standing in for PyPI.
async fn loopback_index() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let address = listener.local_addr().expect("local address");
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buffer = [0u8; 1024];
                let _ = stream.read(&mut buffer).await;
                let _ = stream
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    .await;
            });
        }
    });
    format!("http://{address}/simple/pip/")
}

/// Battery options that put the fake tools first and measure only the loopback index.
fn options(root: &Path, profile: &str, index_url: &str, skip: &[ProbeId]) -> BatteryOptions {
    let mut options = BatteryOptions::default()
        .path_prefix(root.join("bin").to_string_lossy())
        .env("PYTHONPATH", root.join("python").to_string_lossy())
        .and_then(|o| {
            o.env(
                "FAKE_GPU_PROFILE",
                root.join("profiles").join(profile).to_string_lossy(),
            )
        })
        .expect("valid variable names");
    options.endpoints = vec![Endpoint::new("pypi", EndpointKind::Pypi, index_url)];
    options.skip = skip.to_vec();
    options
}

/// The probes that do not depend on the fake GPU (and are slow on CI images) are left out.
const GPU_ONLY: &[ProbeId] = &[
    ProbeId::Python,
    ProbeId::Conda,
    ProbeId::Docker,
    ProbeId::Ollama,
];

async fn run(
    target: &dyn Target,
    options: &BatteryOptions,
    expected_gpus: Option<u32>,
) -> VerifyReport {
    let context = DiagnoseContext {
        lang: Lang::En,
        expected_gpu_count: expected_gpus,
        machine: None,
    };
    verify::verify(target, options, &context, &NoProgress, SystemClock.now())
        .await
        .expect("the battery runs")
}

fn codes(report: &VerifyReport) -> Vec<&str> {
    report.findings.iter().map(|f| f.code.as_str()).collect()
}

/// Codes about the GPU stack only (CPU, disk and docker findings depend on the machine).
fn gpu_codes(report: &VerifyReport) -> Vec<&str> {
    let mut found: Vec<&str> = codes(report)
        .into_iter()
        .filter(|c| c.starts_with("driver.") || c.starts_with("gpu.") || c.starts_with("torch."))
        .collect();
    found.sort_unstable();
    found
}

/// (profile, the GPU-stack findings it must produce, exactly)
const EXPECTED: &[(&str, &[&str])] = &[
    ("healthy-4090", &[]),
    (
        "no-driver",
        &["driver.not_installed", "torch.cuda_unavailable"],
    ),
    (
        "no-devices",
        &["driver.no_devices", "torch.cuda_unavailable"],
    ),
    (
        "mismatch",
        &["driver.version_mismatch", "torch.cuda_unavailable"],
    ),
    ("err", &["gpu.error_state"]),
    ("cpu-torch", &["torch.cpu_build"]),
    ("rtx5090-cu124", &["torch.arch_unsupported"]),
    ("zombie", &["gpu.busy"]),
];

#[tokio::test]
async fn every_fake_host_profile_gives_its_findings_on_this_computer() {
    let root = fake_hosts();
    let index = loopback_index().await;
    let runs = EXPECTED.iter().map(|(profile, _)| {
        let options = options(&root, profile, &index, GPU_ONLY);
        async move { run(&LocalTarget, &options, None).await }
    });
    let reports = futures::future::join_all(runs).await;
    for ((profile, expected), report) in EXPECTED.iter().zip(&reports) {
        assert_eq!(
            gpu_codes(report),
            *expected,
            "profile {profile}: {:#?}",
            report.findings
        );
    }
}

#[tokio::test]
async fn healthy_host_facts_come_from_the_fake_tools() {
    let root = fake_hosts();
    let index = loopback_index().await;
    let started = Instant::now();
    let report = run(
        &LocalTarget,
        &options(&root, "healthy-4090", &index, &[]),
        Some(1),
    )
    .await;
    eprintln!("full battery on LocalTarget: {:?}", started.elapsed());
    let gpu = report.facts.gpu.as_ref().expect("GPU facts");
    assert_eq!(gpu.nvidia_smi.status, NvidiaSmiStatus::Ok);
    assert_eq!(gpu.nvidia_smi.gpus.len(), 1);
    assert_eq!(
        gpu.nvidia_smi.gpus[0].name.as_deref(),
        Some("NVIDIA GeForce RTX 4090")
    );
    assert_eq!(
        gpu.nvidia_smi.gpus[0].compute_cap.as_deref(),
        Some("8.9"),
        "from the query CSV"
    );
    assert_eq!(
        gpu.nvidia_smi.cuda_version.as_deref(),
        Some("12.4"),
        "from the plain table"
    );
    let torch = report.facts.torch.as_ref().expect("torch facts");
    assert_eq!(torch.version.as_deref(), Some("2.5.1+cu124"));
    assert_eq!(
        torch.kernel.as_ref().map(|k| k.ok),
        Some(true),
        "the launch ran through the fake"
    );
    let network = report.facts.network.as_ref().expect("network facts");
    assert!(
        network.endpoints[0].reachable,
        "the loopback index answers: {:?}",
        network.endpoints[0]
    );
    assert!(
        report
            .facts
            .probes
            .iter()
            .all(|p| p.outcome != ProbeOutcome::Failed && p.outcome != ProbeOutcome::TimedOut),
        "no probe fails on a healthy host: {:?}",
        report.facts.probes
    );
    assert!(!codes(&report).contains(&"gpu.count_mismatch"));
}

#[tokio::test]
async fn an_old_driver_rejecting_a_query_field_falls_back_and_eight_gpus_are_counted() {
    let root = fake_hosts();
    let index = loopback_index().await;
    let options = options(&root, "a100-x8", &index, GPU_ONLY);
    let report = run(&LocalTarget, &options, Some(8)).await;
    let gpus = &report
        .facts
        .gpu
        .as_ref()
        .expect("GPU facts")
        .nvidia_smi
        .gpus;
    assert_eq!(gpus.len(), 8, "the minimal query still lists every GPU");
    assert_eq!(gpus[7].bus_id.as_deref(), Some("00000000:DB:00.0"));
    assert_eq!(
        gpus[0].compute_cap, None,
        "the field the driver rejected stays unknown"
    );
    assert!(!codes(&report).contains(&"gpu.count_mismatch"));
    let short = run(&LocalTarget, &options, Some(10)).await;
    assert!(
        codes(&short).contains(&"gpu.count_mismatch"),
        "8 visible of 10 rented"
    );
}

#[tokio::test]
async fn the_stress_test_measures_the_fake_matmul_and_runs_after_the_other_probes() {
    let root = fake_hosts();
    let index = loopback_index().await;
    let mut options = options(&root, "healthy-4090", &index, GPU_ONLY);
    options.stress = true;
    options.stress_seconds = 0.3;
    let order = std::sync::Mutex::new(Vec::new());
    let sink = |event: ProbeEvent| {
        if let ProbeEvent::Started { probe } = event {
            order.lock().expect("lock").push(probe);
        }
    };
    let context = DiagnoseContext::new(Lang::En);
    let report = verify::verify(&LocalTarget, &options, &context, &sink, SystemClock.now())
        .await
        .expect("runs");
    let started = order.lock().expect("lock").clone();
    assert_eq!(
        started.last(),
        Some(&ProbeId::Stress),
        "stress starts last: {started:?}"
    );
    let stress = report.facts.stress.as_ref().expect("stress facts");
    let run = &stress.devices[0].runs[0];
    let median = run.median().expect("batches were timed");
    assert!(
        median > 50.0 && median < 200.0,
        "the fake GPU does 150 TFLOPS, measured {median}"
    );
    assert!(!codes(&report).contains(&"gpu.stress_failed"));
}

#[tokio::test]
async fn over_sshd_the_five_reference_hosts_give_their_findings() {
    let setup = common::Setup::new();
    let remote_root = setup.host.remote_dir().join("fake-gpu-hosts");
    let copied = std::process::Command::new("cp")
        .arg("-r")
        .arg(fake_hosts())
        .arg(&remote_root)
        .status()
        .expect("cp runs");
    assert!(copied.success(), "copy the fake hosts to the test host");
    let target = setup.connect().await;
    let index = loopback_index().await;
    for (profile, expected) in EXPECTED.iter().filter(|(p, _)| {
        [
            "healthy-4090",
            "no-driver",
            "cpu-torch",
            "rtx5090-cu124",
            "zombie",
        ]
        .contains(p)
    }) {
        let options = options(&remote_root, profile, &index, GPU_ONLY);
        let started = Instant::now();
        let report = run(&target, &options, None).await;
        eprintln!("{profile} over sshd: {:?}", started.elapsed());
        assert_eq!(
            gpu_codes(&report),
            *expected,
            "profile {profile} over ssh: {:#?}",
            report.findings
        );
    }
    let zombie = run(
        &target,
        &options(&remote_root, "zombie", &index, GPU_ONLY),
        None,
    )
    .await;
    let busy = zombie
        .findings
        .iter()
        .find(|f| f.code == "gpu.busy")
        .expect("gpu.busy");
    assert!(
        busy.evidence
            .iter()
            .any(|e| e.contains("pid 999999") && e.contains("not visible here")),
        "the holder is not in this PID namespace: {:?}",
        busy.evidence
    );
}

/// The sequence the CLI and the app share: the GPUs the rental promised come from the ledger when
/// the run is kept under an instance, and each run is stored with what changed since the last.
#[tokio::test]
async fn a_run_kept_under_a_rental_checks_the_gpus_it_promised_and_joins_its_history() {
    use leasehold_core::billing::{ledger, BillingRules, NewInstance};
    use leasehold_core::store::Store;
    use leasehold_core::verify::{CheckRequest, Checked};

    let store = Store::open_in_memory().await.expect("in-memory store");
    let at = chrono::DateTime::UNIX_EPOCH;
    let rental = NewInstance {
        name: "eight-4090".into(),
        provider: "custom".into(),
        region: None,
        gpu_model: "RTX 4090".into(),
        currency: "CNY".into(),
        notes: None,
        planned_hours: None,
        budget: None,
        rules: BillingRules::simple("2.5".parse().expect("decimal"), 8),
    };
    ledger::add_instance(&store, &rental, at)
        .await
        .expect("records");
    let index = loopback_index().await;
    let request = CheckRequest {
        options: options(&fake_hosts(), "healthy-4090", &index, GPU_ONLY),
        lang: Lang::En,
        expected_gpus: None,
    };
    let check = || {
        verify::check_and_record(
            &LocalTarget,
            Some(&store),
            Some("eight-4090"),
            &request,
            &NoProgress,
            at,
        )
    };
    let Checked { report, recorded } = check().await.expect("runs");
    assert_eq!(
        gpu_codes(&report),
        ["gpu.count_mismatch"],
        "one GPU visible, eight rented: {:#?}",
        report.findings
    );
    let first = recorded.expect("a store was given").expect("recorded");
    assert_eq!(
        first.changes, None,
        "the first run has nothing to compare with"
    );

    let Checked { recorded, .. } = check().await.expect("runs again");
    let second = recorded.expect("a store was given").expect("recorded");
    assert!(
        second.changes.is_some(),
        "the second run of the same rental is compared with the first"
    );

    let without_store =
        verify::check_and_record(&LocalTarget, None, None, &request, &NoProgress, at)
            .await
            .expect("runs");
    assert!(
        without_store.recorded.is_none(),
        "nothing kept without a store"
    );
    assert_eq!(
        gpu_codes(&without_store.report),
        Vec::<&str>::new(),
        "no rental, no promise to check"
    );
}
