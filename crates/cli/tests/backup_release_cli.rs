//! The exact CLI contracts of `backup scan`, `backup run`, `release-check` and `release`, run as
//! a user would against a real sshd test host: the JSON shapes, and that a refused release
//! exits 2 with the ledger and the database untouched.

use std::path::Path;
use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;
use leasehold_testkit::{ClientKey, TestHost};
use serde_json::Value;

fn leasehold() -> Command {
    let mut command = Command::cargo_bin("leasehold").expect("binary built");
    command.env("HOME", std::env::temp_dir().join("lh-cli-test-home"));
    command.env(
        "XDG_DATA_HOME",
        std::env::temp_dir().join("lh-cli-test-home"),
    );
    command.env_remove("SSH_AUTH_SOCK");
    command
}

struct Fixture {
    host: TestHost,
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        let fixture = Self {
            host: TestHost::start(),
            dir: tempfile::tempdir().expect("tempdir"),
        };
        let root = fixture.host.remote_dir();
        let script = format!(
            "set -e; cd {root}
             G='git -c user.name=t -c user.email=t@example.com -c init.defaultBranch=main'
             mkdir work && cd work && $G init -q && echo a > a && $G add a && $G commit -qm a && echo dirty >> a && cd ..
             head -c 65536 /dev/urandom > model.safetensors
             chown -R {user} .",
            root = root.display(),
            user = fixture.host.user()
        );
        let status = Command::new("bash")
            .arg("-c")
            .arg(script)
            .status()
            .expect("bash");
        assert!(status.success(), "test tree created");
        fixture
    }

    fn db(&self) -> String {
        self.dir
            .path()
            .join("leasehold.sqlite3")
            .display()
            .to_string()
    }

    fn ssh_flags(&self, command: &mut Command) {
        command
            .arg("--ssh")
            .arg(self.host.ssh_command())
            .arg("-i")
            .arg(self.host.key(ClientKey::Ed25519))
            .arg("--known-hosts")
            .arg(self.dir.path().join("known_hosts"))
            .arg("--accept-new-host-key")
            .arg("--db")
            .arg(self.db());
    }

    fn root(&self) -> String {
        self.host.remote_dir().display().to_string()
    }
}

fn json(output: &std::process::Output) -> Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("JSON on stdout")
}

fn add_instance(db: &str, name: &str) {
    let status = leasehold()
        .args([
            "instance",
            "add",
            name,
            "--gpu",
            "RTX 4090",
            "--count",
            "1",
            "--price",
            "2.5",
            "--currency",
            "CNY",
            "--at",
            "2026-03-01T08:00:00Z",
            "--db",
            db,
        ])
        .status()
        .expect("runs");
    assert!(status.success());
}

fn ledger_rows(db: &str) -> Value {
    let output = leasehold()
        .args([
            "instance",
            "show",
            "box",
            "--json",
            "--at",
            "2026-03-01T12:00:00Z",
            "--db",
            db,
        ])
        .output()
        .expect("runs");
    json(&output)["events"].clone()
}

#[test]
fn backup_scan_prints_the_contract_json() {
    let fixture = Fixture::new();
    let mut command = leasehold();
    command.args(["backup", "scan"]);
    fixture.ssh_flags(&mut command);
    command.args(["--root", &fixture.root(), "--json"]);
    let report = json(&command.output().expect("runs"));
    let repo = &report["repos"][0];
    for key in [
        "path",
        "branch",
        "has_remote",
        "unpushed_commits",
        "uncommitted_files",
    ] {
        assert!(repo.get(key).is_some(), "repos[].{key} in {repo}");
    }
    assert_eq!(repo["has_remote"], Value::Bool(false));
    assert_eq!(repo["unpushed_commits"], 1);
    assert_eq!(repo["uncommitted_files"], 1);
    assert_eq!(report["weights"][0]["bytes"], 65536);
    assert!(report["weights"][0]["path"]
        .as_str()
        .is_some_and(|p| p.ends_with("model.safetensors")));
    assert_eq!(
        report["changed_since_last_backup"],
        Value::Null,
        "no instance, no backup: null"
    );
    assert!(report["environments"].is_array() && report["notes"].is_array());
}

#[test]
fn backup_run_then_release_check_and_the_release_gate() {
    let fixture = Fixture::new();
    let db = fixture.db();
    add_instance(&db, "box");
    let to = fixture.dir.path().join("saved");

    // A release with no check ever run is refused: exit 2, nothing recorded.
    let before = ledger_rows(&db);
    let refused = leasehold()
        .args(["release", "box", "--confirm", "box", "--db", &db])
        .output()
        .expect("runs");
    assert_eq!(
        refused.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    assert_eq!(ledger_rows(&db), before, "the ledger is untouched");

    let mut run = leasehold();
    run.args(["backup", "run"]);
    fixture.ssh_flags(&mut run);
    run.arg(format!("{}/model.safetensors", fixture.root()));
    run.args([
        "--to",
        &to.display().to_string(),
        "--instance",
        "box",
        "--json",
    ]);
    let record = json(&run.output().expect("runs"));
    assert_eq!(record["items"][0]["kind"], "file");
    assert_eq!(
        record["items"][0]["sha256"].as_str().map(str::len),
        Some(64)
    );
    assert!(Path::new(&to).join("model.safetensors").exists());

    let mut check = leasehold();
    check.args(["release-check", "box"]);
    fixture.ssh_flags(&mut check);
    check.args(["--root", &fixture.root(), "--json"]);
    let outcome = json(&check.output().expect("runs"));
    assert_eq!(outcome["blocked"], Value::Bool(true), "{outcome}");
    let status = |code: &str| {
        outcome["checks"]
            .as_array()
            .and_then(|checks| checks.iter().find(|c| c["code"] == code))
            .map(|c| c["status"].as_str().unwrap_or_default().to_owned())
            .unwrap_or_else(|| panic!("{code} missing in {outcome}"))
    };
    assert_eq!(status("git.unpushed"), "blocked");
    assert_eq!(status("git.uncommitted"), "blocked");
    assert_eq!(status("backup.never"), "ok");
    for code in ["gpu.processes_running", "backup.stale", "jobs.running"] {
        status(code);
    }

    for (args, why) in [
        (vec!["--confirm", "bx"], "a mistyped name"),
        (
            vec![
                "--confirm",
                "box",
                "--override",
                "git.unpushed=pushed elsewhere",
            ],
            "git.uncommitted not overridden",
        ),
        (
            vec!["--confirm", "box", "--override", "git.unpushed="],
            "an empty reason",
        ),
    ] {
        let refused = leasehold()
            .args(["release", "box", "--db", &db])
            .args(&args)
            .output()
            .expect("runs");
        assert_eq!(
            refused.status.code(),
            Some(2),
            "{why}: {}",
            String::from_utf8_lossy(&refused.stderr)
        );
        assert_eq!(ledger_rows(&db), before, "{why}: the ledger is untouched");
    }

    let released = leasehold()
        .args([
            "release",
            "box",
            "--confirm",
            "box",
            "--override",
            "git.unpushed=scratch",
            "--override",
            "git.uncommitted=scratch",
            "--at",
            "2026-03-01T11:00:00Z",
            "--json",
            "--db",
            &db,
        ])
        .output()
        .expect("runs");
    let bill = json(&released);
    assert_eq!(bill["report"]["total"], "7.50", "three hours at 2.50");
    assert_eq!(bill["busy_hours"], Value::Null);
    assert_eq!(bill["overrides"].as_array().map(Vec::len), Some(2));
    assert_eq!(bill["backups"].as_array().map(Vec::len), Some(1));
    let events = ledger_rows(&db);
    assert_eq!(
        events.as_array().map(Vec::len),
        Some(2),
        "created and released: {events}"
    );
}
