//! `leasehold watchdog` and `leasehold stop` as scripts use them: the printed script, exit 2 for
//! bad settings before anything connects, and `stop --api --json` against a local stand-in (the
//! stop request, then the look that confirms it).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;

use assert_cmd::cargo::cargo_bin_cmd;
use predicates::str::contains;
use serde_json::Value;

fn leasehold(args: &[&str]) -> assert_cmd::assert::Assert {
    cargo_bin_cmd!("leasehold").args(args).assert()
}

#[test]
fn watchdog_script_prints_a_bash_script_with_the_defaults() {
    let out = leasehold(&["watchdog", "script"]).success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.starts_with("#!/usr/bin/env bash\n"));
    for line in [
        "idle_s=1800 ",
        "interval_s=60 ",
        "grace_s=600 ",
        "ttl_s=0 ",
        "gpu_below=5 ",
        "signals='gpu cpu io net ssh'",
        "power_off='shutdown -h now'",
        "state_dir=~/.leasehold/watchdog",
    ] {
        assert!(text.contains(line), "{line:?} in the settings");
    }
    let check = std::process::Command::new("bash")
        .args(["-n", "-c", &text])
        .output()
        .unwrap();
    assert!(check.status.success(), "bash parses it: {check:?}");
    assert!(!text.contains("python"), "bash and coreutils only");
}

#[test]
fn watchdog_script_takes_every_setting() {
    let out = leasehold(&[
        "watchdog",
        "script",
        "--idle",
        "90s",
        "--interval",
        "30s",
        "--grace",
        "1h",
        "--ttl",
        "8h",
        "--gpu-below",
        "10",
        "--signals",
        "gpu,ssh",
        "--power-off",
        "/usr/bin/shutdown",
        "--pre-stop",
        "cd ~/work && git push",
        "--state-dir",
        "/root/wd",
    ])
    .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    for line in [
        "idle_s=90 ",
        "interval_s=30 ",
        "grace_s=3600 ",
        "ttl_s=28800 ",
        "gpu_below=10 ",
        "signals='gpu ssh'",
        "power_off=/usr/bin/shutdown",
        "pre_stop='cd ~/work && git push'",
        "state_dir=/root/wd",
    ] {
        assert!(text.contains(line), "{line:?} in:\n{}", &text[..900]);
    }
}

#[test]
fn bad_settings_exit_2_before_connecting() {
    // Port 1 on loopback refuses: had it tried to connect, the exit would be 255.
    for (flag, value, says) in [
        ("--idle", "half an hour", "not a duration"),
        ("--interval", "0s", "interval"),
        ("--ttl", "soon", "not a duration"),
        ("--gpu-below", "150", "percentage"),
        ("--signals", "gpu,disk", "disk"),
        ("--state-dir", "../x", "state-dir"),
    ] {
        for command in ["install", "status", "remove"] {
            leasehold(&[
                "watchdog",
                command,
                "--ssh",
                "ssh -p 1 root@127.0.0.1",
                flag,
                value,
            ])
            .code(2)
            .stderr(contains(says));
        }
        leasehold(&["watchdog", "script", flag, value]).code(2);
    }
}

/// Answer one request per entry of `answers`, in order, and hand back what was asked.
fn requests(
    listener: TcpListener,
    answers: &'static [&'static str],
) -> std::thread::JoinHandle<Vec<String>> {
    std::thread::spawn(move || {
        let mut asked = Vec::new();
        for answer in answers {
            let (mut stream, _) = listener.accept().expect("a request");
            let mut seen = Vec::new();
            let mut chunk = [0u8; 4096];
            loop {
                let n = stream.read(&mut chunk).unwrap_or(0);
                seen.extend_from_slice(&chunk[..n]);
                let text = String::from_utf8_lossy(&seen).into_owned();
                if let Some(end) = text.find("\r\n\r\n") {
                    let length = text
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                        })
                        .unwrap_or(0);
                    if seen.len() >= end + 4 + length {
                        break;
                    }
                }
                if n == 0 {
                    break;
                }
            }
            let reply = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                answer.len()
            );
            stream.write_all(reply.as_bytes()).unwrap();
            asked.push(String::from_utf8_lossy(&seen).into_owned());
        }
        asked
    })
}

fn add_running(db: &Path, provider: &str) {
    cargo_bin_cmd!("leasehold")
        .args([
            "instance", "add", "box", "--gpu", "RTX 4090", "--count", "1", "--price", "2.5",
        ])
        .args(["--currency", "USD", "--provider", provider, "--db"])
        .arg(db)
        .assert()
        .success();
    cargo_bin_cmd!("leasehold")
        .args(["instance", "start", "box", "--db"])
        .arg(db)
        .assert()
        .success();
}

#[test]
fn stop_api_json_calls_vast_and_records_the_stop() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ledger.sqlite3");
    add_running(&db, "vast");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = requests(
        listener,
        &[
            r#"{"success": true}"#,
            r#"{"instances": {"actual_status": "stopped"}}"#,
        ],
    );
    let out = cargo_bin_cmd!("leasehold")
        .args([
            "stop",
            "box",
            "--api",
            "--provider-id",
            "4242",
            "--api-key-env",
            "LH_TEST_VAST_KEY",
            "--json",
            "--db",
        ])
        .arg(&db)
        .env("LH_TEST_VAST_KEY", "vast-cli-key")
        .env("LEASEHOLD_VAST_API_URL", &base)
        .assert()
        .success();
    let asked = server.join().unwrap();
    let request = &asked[0];
    assert!(
        asked[1].starts_with("GET /api/v0/instances/4242/ HTTP/1.1\r\n"),
        "then it asks whether the instance stopped: {asked:?}"
    );
    assert!(
        request.starts_with("PUT /api/v0/instances/4242/ HTTP/1.1\r\n"),
        "{request}"
    );
    assert!(
        request
            .to_ascii_lowercase()
            .contains("authorization: bearer vast-cli-key"),
        "{request}"
    );
    assert!(request.ends_with(r#"{"state":"stopped"}"#), "{request}");
    let report: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(report["via"], "api");
    assert_eq!(report["api"], "vast");
    assert_eq!(report["instance"], "box");
    let cost = cargo_bin_cmd!("leasehold")
        .args(["cost", "box", "--json", "--db"])
        .arg(&db)
        .assert()
        .success();
    assert!(
        String::from_utf8_lossy(&cost.get_output().stdout).contains("\"stopped\""),
        "the ledger says stopped"
    );
}

#[test]
fn stop_without_a_saved_target_or_ssh_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ledger.sqlite3");
    add_running(&db, "custom");
    cargo_bin_cmd!("leasehold")
        .args(["stop", "box", "--db"])
        .arg(&db)
        .assert()
        .code(2)
        .stderr(contains("no SSH target is saved"));
}
