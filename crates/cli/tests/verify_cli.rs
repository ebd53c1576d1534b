//! The exact CLI contracts of `parse nvidia-smi` and `verify`, run as a user would.

use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;
use leasehold_testkit::{ClientKey, TestHost};
use serde_json::{json, Value};

fn leasehold(home: &Path) -> Command {
    let mut command = Command::cargo_bin("leasehold").expect("binary built");
    command
        .env("HOME", home)
        .env("XDG_DATA_HOME", home)
        .env_remove("SSH_AUTH_SOCK");
    command
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../core/tests/fixtures/nvidia-smi")
        .join(name)
}

fn parse_json(file: &Path) -> Value {
    let home = tempfile::tempdir().expect("tempdir");
    let out = leasehold(home.path())
        .args(["parse", "nvidia-smi"])
        .arg(file)
        .arg("--json")
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "exit 0 for {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

#[test]
fn parse_prints_the_documented_shape_with_values_from_the_capture() {
    let got = parse_json(&fixture(
        "nvidia_gpu_exporter-l40s-linux-595.80.table-load.txt",
    ));
    assert_eq!(
        got,
        json!({
            "status": "ok",
            "driver_version": "595.80",
            "cuda_version": "13.2",
            "gpus": [{"index": 0, "name": "NVIDIA L40S", "memory_total_mib": 46068, "memory_used_mib": 1235,
                      "utilization_pct": 9, "temperature_c": 54, "power_draw_w": 110.0, "power_limit_w": 350.0,
                      "state": "ok"}],
            "processes": [
                {"gpu_index": 0, "pid": 20037, "name": "ffmpeg", "used_memory_mib": 538},
                {"gpu_index": 0, "pid": 20038, "name": "ffmpeg", "used_memory_mib": 681}
            ]
        })
    );
}

#[test]
fn parse_reads_csv_and_xml_and_marks_failed_gpus() {
    let csv = parse_json(&fixture(
        "issue-mindminer627-rtx2080ti-442.19-unknown-error.csv",
    ));
    assert_eq!(
        csv["gpus"][0]["state"], "error",
        "[Unknown Error] in a field"
    );
    assert_eq!(csv["gpus"][0]["power_draw_w"], json!(228.82));
    assert_eq!(
        csv["gpus"][0]["memory_total_mib"],
        Value::Null,
        "not queried → null"
    );
    let xml = parse_json(&fixture("telegraf-tesla-t4-515.105.01.xml"));
    assert_eq!(
        (xml["driver_version"].as_str(), xml["cuda_version"].as_str()),
        (Some("515.105.01"), Some("11.7"))
    );
    assert_eq!(
        xml["processes"][1],
        json!({"gpu_index": 0, "pid": 5762, "name": "python", "used_memory_mib": 1005})
    );
    let err = parse_json(&fixture(
        "issue-azhpc-diagnostics77-v100-pcie-ERR-power-unknown-driver.txt",
    ));
    assert_eq!(
        (
            err["gpus"][0]["state"].as_str(),
            err["gpus"][0]["power_draw_w"].clone()
        ),
        (Some("error"), Value::Null)
    );
}

#[test]
fn each_error_text_gives_its_status() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases = [
        ("bash: nvidia-smi: command not found\n", "not_installed"),
        ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n", "driver_not_loaded"),
        ("No devices were found\n", "no_devices"),
        ("Failed to initialize NVML: Driver/library version mismatch\n", "driver_mismatch"),
        ("something else entirely\n", "unrecognized"),
    ];
    for (i, (text, status)) in cases.iter().enumerate() {
        let file = dir.path().join(format!("case{i}.txt"));
        std::fs::write(&file, text).expect("write");
        let got = parse_json(&file);
        assert_eq!(got["status"], *status, "{text:?}");
        assert_eq!(
            (got["gpus"].clone(), got["driver_version"].clone()),
            (json!([]), Value::Null)
        );
    }
}

#[test]
fn parse_of_a_missing_file_is_bad_input() {
    let home = tempfile::tempdir().expect("tempdir");
    let out = leasehold(home.path())
        .args([
            "parse",
            "nvidia-smi",
            "/nonexistent/nvidia-smi.txt",
            "--json",
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "nothing on stdout");
}

fn assert_report_shape(report: &Value) {
    let keys: Vec<&String> = report.as_object().expect("object").keys().collect();
    assert_eq!(keys, ["facts", "findings"], "exactly facts and findings");
    for finding in report["findings"].as_array().expect("findings array") {
        let mut keys: Vec<&String> = finding
            .as_object()
            .expect("finding object")
            .keys()
            .collect();
        keys.sort();
        assert_eq!(
            keys,
            ["code", "detail", "evidence", "fix", "severity", "title"],
            "{finding}"
        );
        assert!(["error", "warning", "info"].contains(&finding["severity"].as_str().unwrap_or("")));
    }
}

#[test]
fn verify_local_on_a_machine_without_gpu_reports_clear_findings() {
    let home = tempfile::tempdir().expect("tempdir");
    let out = leasehold(home.path())
        .args([
            "verify", "--local", "--json", "--skip", "network", "--lang", "en", "--db",
        ])
        .arg(home.path().join("db.sqlite"))
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "a report exits 0: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_report_shape(&report);
    let status = report["facts"]["gpu"]["nvidia_smi"]["status"]
        .as_str()
        .unwrap_or("");
    let codes: Vec<&str> = report["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["code"].as_str())
        .collect();
    if status != "ok" {
        assert!(
            codes.iter().any(|c| c.starts_with("driver.")),
            "no GPU driver here must be explained: {codes:?}"
        );
    }
    assert!(
        report["facts"]["probes"]
            .as_array()
            .is_some_and(|p| !p.is_empty()),
        "per-probe outcomes are listed"
    );
    let text = leasehold(home.path())
        .args([
            "verify", "--local", "--skip", "network", "--lang", "zh-CN", "--db",
        ])
        .arg(home.path().join("db.sqlite"))
        .output()
        .expect("runs");
    assert_eq!(text.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(
        stdout.contains("与上次检查相比"),
        "the second run compares with the first: {stdout}"
    );
}

#[test]
fn verify_refuses_bad_input_with_exit_2() {
    let home = tempfile::tempdir().expect("tempdir");
    for args in [
        vec!["verify", "--json"],
        vec!["verify", "--local", "--lang", "fr"],
        vec!["verify", "--local", "--skip", "everything"],
        vec!["verify", "--ssh", "scp file host:", "--json"],
    ] {
        let out = leasehold(home.path()).args(&args).output().expect("runs");
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stdout.is_empty(), "{args:?} writes nothing on stdout");
    }
}

#[test]
fn verify_exits_1_when_the_instance_cannot_be_reached() {
    let home = tempfile::tempdir().expect("tempdir");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let out = leasehold(home.path())
        .args(["verify", "--json", "--ssh"])
        .arg(format!("ssh -p {port} root@127.0.0.1"))
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn verify_over_ssh_prints_the_report_of_the_test_host() {
    let host = TestHost::start();
    let home = tempfile::tempdir().expect("tempdir");
    let out = leasehold(home.path())
        .args([
            "verify",
            "--json",
            "--no-store",
            "--skip",
            "network",
            "--ssh",
        ])
        .arg(host.ssh_command())
        .arg("-i")
        .arg(host.key(ClientKey::Ed25519))
        .arg("--known-hosts")
        .arg(home.path().join("known_hosts"))
        .arg("--accept-new-host-key")
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_report_shape(&report);
    let target = report["facts"]["target"].as_str().unwrap_or("");
    assert!(
        target.contains("127.0.0.1"),
        "the facts name the SSH target: {target}"
    );
    assert!(
        report["facts"]["system"]["kernel"].is_string(),
        "the system probe ran over SSH"
    );
}

#[test]
fn escape_bytes_in_a_gpu_name_never_reach_the_terminal() {
    let home = tempfile::tempdir().expect("tempdir");
    let capture = std::fs::read_to_string(fixture("issue-zabbix17-rtx3080-unknown-driver-NA.csv"))
        .expect("fixture");
    // A hostile instance's nvidia-smi: OSC 0 retitles the window, ESC[2J clears the screen.
    let hostile = capture.replace(
        "NVIDIA GeForce RTX 3080",
        "NVIDIA \u{1b}]0;owned\u{7}\u{1b}[2JRTX 3080\u{9b}",
    );
    let file = home.path().join("hostile.csv");
    std::fs::write(&file, hostile).expect("write");
    let out = leasehold(home.path())
        .args(["parse", "nvidia-smi"])
        .arg(&file)
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        !out.stdout.iter().any(|b| *b == 0x1b || *b == 0x07) && !text.contains('\u{9b}'),
        "no escape or bell byte is printed: {text:?}"
    );
    assert!(
        text.contains("NVIDIA RTX 3080"),
        "the name stays readable: {text}"
    );
}
