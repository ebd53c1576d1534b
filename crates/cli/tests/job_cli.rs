//! The exact CLI contracts of `job …`, `install`, `install-script` and `export-setup`, run as a
//! user would, against a real sshd test host.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

use assert_cmd::cargo::CommandCargoExt;
use leasehold_testkit::{ClientKey, TestHost};
use sha2::{Digest, Sha256};

struct Host {
    host: TestHost,
    dir: tempfile::TempDir,
}

impl Host {
    fn new() -> Self {
        Self {
            host: TestHost::start(),
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    fn leasehold(&self) -> Command {
        let mut command = Command::cargo_bin("leasehold").expect("binary built");
        let home = self.dir.path().join("home");
        command
            .env("HOME", &home)
            .env("XDG_DATA_HOME", &home)
            .env_remove("SSH_AUTH_SOCK")
            .arg("--db")
            .arg(self.dir.path().join("lh.db"));
        command
    }

    /// `leasehold SUB… --ssh … -i KEY --known-hosts F --accept-new-host-key`
    fn with_ssh(&self, sub: &[&str]) -> Command {
        let mut command = self.leasehold();
        command
            .args(sub)
            .arg("--ssh")
            .arg(self.host.ssh_command())
            .arg("-i")
            .arg(self.host.key(ClientKey::Ed25519))
            .arg("--known-hosts")
            .arg(self.dir.path().join("known_hosts"))
            .arg("--accept-new-host-key");
        command
    }

    fn start(&self, script: &str) -> String {
        let out = self
            .with_ssh(&["job", "start"])
            .arg("--json")
            .arg("--")
            .arg(script)
            .output()
            .expect("runs");
        assert!(out.status.success(), "job start: {}", text(&out.stderr));
        let value: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        assert_eq!(value["state"], "running", "{value}");
        assert_eq!(
            value.as_object().map(|o| o.len()),
            Some(2),
            "exactly id and state: {value}"
        );
        value["id"].as_str().expect("id").to_owned()
    }

    fn status(&self, id: &str) -> serde_json::Value {
        let out = self
            .leasehold()
            .args(["job", "status", id, "--json"])
            .output()
            .expect("runs");
        assert!(out.status.success(), "job status: {}", text(&out.stderr));
        serde_json::from_slice(&out.stdout).expect("JSON")
    }

    fn wait_over(&self, id: &str) -> serde_json::Value {
        for _ in 0..100 {
            let status = self.status(id);
            if status["state"] != "running" {
                return status;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!("job {id} did not end");
    }

    fn remote_log(&self, id: &str) -> Vec<u8> {
        std::fs::read(format!(
            "/home/{}/.leasehold/jobs/{id}/log",
            self.host.user()
        ))
        .expect("the job's log on the test host")
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn sha(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

#[test]
fn start_status_attach_and_list_follow_the_contract() {
    let host = Host::new();
    let id = host.start("echo hello; echo 'to stderr' >&2; exit 3");
    let status = host.wait_over(&id);
    assert_eq!(
        status,
        serde_json::json!({"id": id, "state": "failed", "exit_code": 3, "log_bytes": 16}),
        "exactly the four keys"
    );
    let out = host
        .leasehold()
        .args(["job", "attach", &id])
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(3),
        "attach exits with the job's code"
    );
    assert_eq!(text(&out.stdout), "hello\nto stderr\n");
    let out = host
        .leasehold()
        .args(["job", "attach", &id, "--from-byte", "6"])
        .output()
        .expect("runs");
    assert_eq!(text(&out.stdout), "to stderr\n", "from byte 6 on");

    let out = host
        .leasehold()
        .args(["job", "list", "--json"])
        .output()
        .expect("runs");
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(list[0]["id"], id.as_str());
    assert_eq!(list[0]["state"], "failed");
}

#[test]
fn unknown_or_malformed_job_ids_and_missing_commands_exit_2() {
    let host = Host::new();
    for args in [
        vec!["job", "status", "j-20990101-000000-abcdef", "--json"],
        vec!["job", "attach", "../../etc"],
        vec!["job", "cancel", "a b"],
        vec!["job", "attach", "x", "--from-byte", "-4"],
    ] {
        let out = host.leasehold().args(&args).output().expect("runs");
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    let out = host.with_ssh(&["job", "start"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(2), "no command after --");
}

#[test]
fn killing_the_attaching_process_then_attaching_again_gets_the_whole_log() {
    let host = Host::new();
    let id = host.start(
        "i=0; while [ $i -lt 150 ]; do head -c 3000 /dev/urandom | base64 -w 0; echo; i=$((i+1)); sleep 0.02; done",
    );
    let mut child = host
        .leasehold()
        .args(["job", "attach", &id])
        .stdout(Stdio::piped())
        .spawn()
        .expect("attach starts");
    let mut first = vec![0u8; 200_000];
    let mut stdout = child.stdout.take().expect("stdout");
    let mut got = 0;
    while got < 100_000 {
        let n = stdout.read(&mut first[got..]).expect("read");
        assert!(n > 0, "attach ended before the job did");
        got += n;
    }
    child.kill().expect("kill the attaching process");
    let _ = child.wait();
    first.truncate(got);

    // The job went on; a new attach from the start gets every byte.
    let out = host
        .leasehold()
        .args(["job", "attach", &id])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let log = host.remote_log(&id);
    assert_eq!(sha(&out.stdout), sha(&log), "the whole log, byte for byte");
    // And continuing where the killed one stopped joins up exactly.
    let out = host
        .leasehold()
        .args(["job", "attach", &id, "--from-byte", &got.to_string()])
        .output()
        .expect("runs");
    let mut joined = first;
    joined.extend_from_slice(&out.stdout);
    assert_eq!(
        sha(&joined),
        sha(&log),
        "no byte lost or repeated at the seam"
    );
}

#[test]
fn cancel_stops_the_job_and_status_says_cancelled() {
    let host = Host::new();
    let id = host.start("sleep 300 & sleep 301");
    std::thread::sleep(Duration::from_millis(300));
    let out = host
        .leasehold()
        .args(["job", "cancel", &id])
        .output()
        .expect("runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("no process of the job is left"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(host.status(&id)["state"], "cancelled");
    let out = host
        .leasehold()
        .args(["job", "attach", &id])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(143), "attach to a cancelled job");
}

#[test]
fn install_script_prints_without_connecting_and_refuses_bad_input_with_2() {
    let host = Host::new();
    let out = host
        .leasehold()
        .args([
            "install-script",
            "pytorch",
            "--option",
            "driver=570.124.06",
            "--option",
            "gpu=NVIDIA GeForce RTX 5090",
        ])
        .output()
        .expect("runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("LH_INDEX=https://download.pytorch.org/whl/cu128\n"));
    for args in [
        vec!["install-script", "condaa"],
        vec!["install-script", "ollama", "--option", "modle=x"],
        vec!["install-script", "ollama", "--option", "num_parallel=many"],
        vec!["install-script", "pytorch"],
    ] {
        let out = host.leasehold().args(&args).output().expect("runs");
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    let out = host
        .leasehold()
        .args(["install-script", "docker", "--option", "container=yes"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("docker.impossible_in_container"));
    // Bad input to `install` is refused before connecting: nothing starts.
    let out = host
        .with_ssh(&["install", "ollama"])
        .args(["--option", "num_parallel=0"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        !host.dir.path().join("lh.db").exists() || {
            let list = host
                .leasehold()
                .args(["job", "list", "--json"])
                .output()
                .expect("runs");
            text(&list.stdout).trim() == "[]"
        }
    );
}

/// The pip recipe against the real package index this machine reaches, twice (the second run
/// skips), then the setup export that replays it.
#[test]
fn a_real_pip_install_runs_skips_the_second_time_and_exports() {
    let host = Host::new();
    let env = format!("lh-test-{}", std::process::id());
    let install = |host: &Host| {
        host.with_ssh(&["install", "pip"])
            .args([
                "--option",
                &format!("env={env}"),
                "--option",
                "packages=six",
                "--json",
            ])
            .output()
            .expect("runs")
    };
    let out = install(&host);
    let report: serde_json::Value = serde_json::from_slice(
        text(&out.stdout)
            .rsplit_once("\n{")
            .map(|(_, json)| format!("{{{json}"))
            .unwrap_or_default()
            .as_bytes(),
    )
    .unwrap_or_else(|err| {
        panic!(
            "JSON at the end ({err}): {}\n{}",
            text(&out.stdout),
            text(&out.stderr)
        )
    });
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(report["state"], "succeeded");
    assert!(
        report["results"]["six"]
            .as_str()
            .is_some_and(|v| !v.is_empty()),
        "{report}"
    );
    assert!(
        text(&out.stdout).contains("Successfully installed six"),
        "pip really ran"
    );

    let out = install(&host);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("::leasehold::skip already installed: six"),
        "the second run skips: {}",
        text(&out.stdout)
    );

    let target = format!("{}@127.0.0.1:{}", host.host.user(), host.host.port());
    let out = host
        .leasehold()
        .args(["export-setup", &target])
        .output()
        .expect("runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let script = text(&out.stdout);
    assert_eq!(
        script.matches("# === ").count(),
        2,
        "both runs replayed: {script}"
    );
    let check = Command::new("bash")
        .arg("-n")
        .arg("-c")
        .arg(&script)
        .output()
        .expect("bash");
    assert!(check.status.success(), "{}", text(&check.stderr));
    let out = host
        .leasehold()
        .args(["export-setup", "no-such-instance"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(format!("/home/{}/.venvs/{env}", host.host.user()));
}
