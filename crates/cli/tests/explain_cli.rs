//! The exact CLI contract of `leasehold explain`, run as a user would.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use assert_cmd::cargo::CommandCargoExt;
use serde_json::Value;

fn leasehold(home: &Path) -> Command {
    let mut command = Command::cargo_bin("leasehold").expect("binary built");
    command
        .env("HOME", home)
        .env("XDG_DATA_HOME", home)
        .env("LANG", "C.UTF-8");
    command
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../core/tests/fixtures/explain")
        .join(name)
}

fn run_json(args: &[&str], home: &Path) -> (i32, Value, String) {
    let out = leasehold(home).args(args).output().expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), json, stderr)
}

#[test]
fn a_file_gives_findings_and_the_oom_numbers_in_the_documented_shape() {
    let home = tempfile::tempdir().expect("tempdir");
    let file = fixture("oom-new-other-processes.txt");
    let (code, json, stderr) =
        run_json(&["explain", file.to_str().unwrap(), "--json"], home.path());
    assert_eq!(code, 0, "{stderr}");
    let finding = &json["findings"][0];
    assert_eq!(finding["code"], "oom.cuda");
    assert_eq!(finding["severity"], "error");
    for key in ["title", "detail", "fix", "evidence"] {
        assert!(!finding[key].is_null(), "finding has {key}: {finding}");
    }
    assert!(
        finding["fix"][0]["text"].is_string(),
        "fix steps carry text and command"
    );
    let oom = &json["oom"];
    assert_eq!(oom["format"], "new");
    assert_eq!(oom["cause"], "other_processes");
    assert_eq!(oom["tried_mib"], 130.0, "MiB as numbers");
    assert_eq!(oom["total_mib"], 97239.04, "94.96 GiB × 1024");
    assert_eq!(oom["free_mib"], 59.69);
    assert_eq!(
        oom["other_processes_mib"], 90337.28,
        "(1.78 + 86.44) GiB × 1024"
    );
    for key in ["allocated_mib", "reserved_mib"] {
        assert!(oom[key].is_number(), "{key}: {oom}");
    }
}

#[test]
fn standard_input_and_the_language_flag() {
    let home = tempfile::tempdir().expect("tempdir");
    let mut child = leasehold(home.path())
        .args(["explain", "-", "--lang", "zh-CN", "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(
            std::fs::read(fixture("disk-full-autodl.txt"))
                .unwrap()
                .as_slice(),
        )
        .expect("written");
    let out = child.wait_with_output().expect("finishes");
    assert!(out.status.success());
    let json: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(json["findings"][0]["code"], "disk.full");
    assert!(
        json["findings"][0]["title"]
            .as_str()
            .unwrap()
            .contains("磁盘"),
        "{json}"
    );
    assert!(json["oom"].is_null());
}

#[test]
fn empty_input_unreadable_files_and_unknown_instances_exit_2() {
    let home = tempfile::tempdir().expect("tempdir");
    let empty = home.path().join("empty.log");
    std::fs::write(&empty, " \n\n").unwrap();
    let (code, _, stderr) = run_json(&["explain", empty.to_str().unwrap(), "--json"], home.path());
    assert_eq!(code, 2, "empty input: {stderr}");
    assert!(stderr.contains("explain.empty"), "{stderr}");
    let (code, _, stderr) = run_json(
        &["explain", "/nonexistent/error.log", "--json"],
        home.path(),
    );
    assert_eq!(code, 2, "unreadable file: {stderr}");
    let db = home.path().join("db.sqlite");
    let file = fixture("oom-old-too-big.txt");
    let (code, _, stderr) = run_json(
        &[
            "explain",
            file.to_str().unwrap(),
            "--instance",
            "nope",
            "--db",
            db.to_str().unwrap(),
            "--json",
        ],
        home.path(),
    );
    assert_eq!(code, 2, "unknown instance: {stderr}");
    let (code, _, _) = run_json(
        &["explain", file.to_str().unwrap(), "--lang", "fr", "--json"],
        home.path(),
    );
    assert_eq!(code, 2, "unknown language");
}

#[test]
fn a_recorded_instance_is_accepted_and_text_output_reads_well() {
    let home = tempfile::tempdir().expect("tempdir");
    let db = home.path().join("db.sqlite");
    let added = leasehold(home.path())
        .args([
            "instance",
            "add",
            "box",
            "--gpu",
            "RTX 4090",
            "--count",
            "1",
            "--price",
            "2.5",
            "--currency",
            "CNY",
            "--db",
        ])
        .arg(&db)
        .output()
        .expect("runs");
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    let out = leasehold(home.path())
        .args(["explain"])
        .arg(fixture("oom-old-fragmentation.txt"))
        .args(["--instance", "box", "--db"])
        .arg(&db)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("fragmentation") && text.contains("(oom.cuda)"),
        "{text}"
    );
    assert!(text.contains("$ export PYTORCH_CUDA_ALLOC_CONF="), "{text}");
}
