//! The exact CLI contract of `leasehold monitor`: one JSON object per line per sample with the
//! documented fields, `--count`, bad interval or count → exit 2, `--local` without a driver →
//! exit 1 with a calm message. The `--ssh` case logs into a real sshd as a user whose login
//! profile puts the fake 8-GPU host (`tests/fake-gpu-hosts`, busy-x8) first, as on a rented
//! instance where the login profile sets PATH.

use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;
use leasehold_testkit::{ClientKey, TestHost};
use serde_json::Value;

/// A login user of our own, so its profile cannot change what other tests' logins see.
const USER: &str = "lh-monitor-cli";

fn leasehold(home: &Path) -> Command {
    let mut command = Command::cargo_bin("leasehold").expect("binary built");
    command
        .env("HOME", home)
        .env("XDG_DATA_HOME", home)
        .env("LANG", "en_US.UTF-8")
        .env_remove("SSH_AUTH_SOCK");
    command
}

fn fake_hosts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fake-gpu-hosts")
        .canonicalize()
        .expect("fake hosts folder")
}

fn sh(script: &str) {
    let status = Command::new("flock")
        .args(["/tmp/leasehold-monitor-cli-user.lock", "sh", "-c", script])
        .status()
        .expect("run sh");
    assert!(status.success(), "{script}");
}

/// The user exists with a login profile that finds the fake `nvidia-smi` first.
fn fake_gpu_user() {
    let fake = fake_hosts();
    sh(&format!(
        "id -u {USER} >/dev/null 2>&1 || useradd --create-home --shell /bin/bash {USER}; usermod -p '*' {USER}; \
         home=$(getent passwd {USER} | cut -d: -f6); \
         printf '%s\\n' 'export PATH=\"{bin}:$PATH\"' 'export FAKE_GPU_PROFILE=\"{profile}\"' > \"$home/.bash_profile\"; \
         chown {USER}: \"$home/.bash_profile\"",
        bin = fake.join("bin").display(),
        profile = fake.join("profiles/busy-x8").display(),
    ));
}

#[test]
fn monitor_over_ssh_prints_one_json_line_per_sample_with_the_documented_fields() {
    fake_gpu_user();
    let host = TestHost::start();
    let home = tempfile::tempdir().expect("tempdir");
    let out = leasehold(home.path())
        .args(["monitor", "--ssh"])
        .arg(format!("ssh -p {} {USER}@{}", host.port(), host.host()))
        .arg("-i")
        .arg(host.key(ClientKey::Ed25519))
        .arg("--known-hosts")
        .arg(home.path().join("known_hosts"))
        .args([
            "--accept-new-host-key",
            "--interval",
            "200ms",
            "--count",
            "4",
            "--json",
        ])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "exit 0: {stderr}\n{}", host.log());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is one JSON object"))
        .collect();
    assert_eq!(lines.len(), 4, "--count 4 is four samples:\n{stdout}");
    for line in &lines {
        let mut keys: Vec<&str> = line
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            ["at", "findings", "gpus"],
            "exactly the documented fields"
        );
        chrono::DateTime::parse_from_rfc3339(line["at"].as_str().expect("at")).expect("RFC 3339");
        let gpus = line["gpus"].as_array().expect("gpus");
        assert_eq!(gpus.len(), 8);
        let mut gpu_keys: Vec<&str> = gpus[0]
            .as_object()
            .expect("gpu")
            .keys()
            .map(String::as_str)
            .collect();
        gpu_keys.sort_unstable();
        assert_eq!(
            gpu_keys,
            [
                "index",
                "memory_total_mib",
                "memory_used_mib",
                "power_draw_w",
                "temperature_c",
                "utilization_pct"
            ]
        );
    }
    assert_eq!(lines[0]["gpus"][0]["utilization_pct"], 98);
    assert_eq!(lines[0]["gpus"][0]["memory_used_mib"], 61234);
    assert_eq!(lines[0]["gpus"][0]["memory_total_mib"], 81920);
    assert_eq!(lines[0]["gpus"][0]["temperature_c"], 71);
    assert_eq!(lines[0]["gpus"][0]["power_draw_w"], 389.52);
    // From the third sample on, the window is long enough to judge: GPU 0 busy, seven idle.
    let last = &lines[3]["findings"];
    let peers = last
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["code"] == "gpu.idle_peers")
        .unwrap_or_else(|| panic!("idle_peers in {last}"));
    assert_eq!(peers["severity"], "warning");
    assert_eq!(peers["gpus"], serde_json::json!([1, 2, 3, 4, 5, 6, 7]));
    let mut finding_keys: Vec<&str> = peers
        .as_object()
        .expect("finding")
        .keys()
        .map(String::as_str)
        .collect();
    finding_keys.sort_unstable();
    assert_eq!(finding_keys, ["code", "gpus", "severity"]);
}

#[test]
fn a_bad_interval_or_count_is_exit_2_before_connecting() {
    let home = tempfile::tempdir().expect("tempdir");
    for args in [
        vec!["--interval", "0s"],
        vec!["--interval", "50ms"],
        vec!["--interval", "soon"],
        vec!["--interval", "-1s"],
        vec!["--count", "0"],
        vec!["--count", "-3"],
        vec!["--count", "many"],
    ] {
        let out = leasehold(home.path())
            .args(["monitor", "--ssh", "ssh -p 9 nobody@127.0.0.1", "--json"])
            .args(&args)
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(2), "{args:?} is bad input");
        assert!(out.stdout.is_empty(), "nothing on stdout for {args:?}");
        assert!(
            !out.stderr.is_empty(),
            "a message says what to fix for {args:?}"
        );
    }
}

#[test]
fn local_without_an_nvidia_driver_exits_1_with_a_calm_message() {
    if Path::new("/proc/driver/nvidia").exists() {
        eprintln!("SKIPPED: this computer has an NVIDIA driver");
        return;
    }
    let home = tempfile::tempdir().expect("tempdir");
    let out = leasehold(home.path())
        .args(["monitor", "--local", "--count", "1", "--json"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("No usable NVIDIA driver on this computer"),
        "a calm sentence, not a panic: {stderr}"
    );
    assert!(!stderr.contains("panicked"));
}
