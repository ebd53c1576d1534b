//! The Windows build of the CLI (`leasehold.exe`, x86_64-pc-windows-gnu) run under Wine next to
//! the Linux build on the same inputs: the same exit codes and the same JSON apart from paths,
//! the OS's own folders (`%APPDATA%`, `%USERPROFILE%\.ssh`), and the SSH engine against a real
//! sshd test host on loopback with a host key check.
//!
//! Ignored in a plain `cargo test`: `tests/windows/run.sh` (`make windows-test`, part of
//! `make test`) cross-builds the exe, prepares a Wine prefix and runs these with `--ignored`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use assert_cmd::cargo::CommandCargoExt;
use leasehold_testkit::{ClientKey, HostKeyKind, SshdOptions, TestHost};
use serde_json::Value;

fn env_path(name: &str) -> PathBuf {
    std::env::var_os(name)
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("{name} is not set; run these through make windows-test"))
}

/// `leasehold.exe ARGS` under Wine, in the prefix the runner prepared.
fn windows() -> Command {
    let mut command = Command::new(env_path("LEASEHOLD_WINE"));
    command
        .arg(env_path("LEASEHOLD_WINDOWS_EXE"))
        .env("WINEPREFIX", env_path("WINEPREFIX"))
        .env("WINEDEBUG", "-all")
        // No Mono or Gecko installer dialogs; a console program needs neither.
        .env("WINEDLLOVERRIDES", "mscoree,mshtml=")
        .env_remove("DISPLAY")
        .env_remove("SSH_AUTH_SOCK");
    command
}

/// The Linux build with a home of its own, so neither side reads the user's files.
fn linux(home: &Path) -> Command {
    let mut command = Command::cargo_bin("leasehold").expect("the Linux binary is built");
    command
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env_remove("SSH_AUTH_SOCK");
    command
}

/// The path a Windows program under Wine uses for a file of this machine (drive Z: is `/`).
fn win_path(path: &Path) -> String {
    format!("Z:{}", path.display()).replace('/', "\\")
}

fn run(command: &mut Command, stdin: Option<&[u8]>) -> Output {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("the program starts");
    let mut input = child.stdin.take().expect("stdin");
    if let Some(bytes) = stdin {
        input.write_all(bytes).expect("write stdin");
    }
    drop(input);
    child.wait_with_output().expect("the program ends")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// One command on both builds. `file` is the input file, passed to each in its own path form
/// wherever an argument is `{file}`.
struct Case {
    args: &'static [&'static str],
    file: Option<PathBuf>,
    stdin: Option<Vec<u8>>,
}

impl Case {
    fn new(args: &'static [&'static str]) -> Self {
        Self {
            args,
            file: None,
            stdin: None,
        }
    }

    fn with_file(mut self, file: PathBuf) -> Self {
        self.file = Some(file);
        self
    }

    fn with_stdin(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(bytes.into());
        self
    }

    fn args_for(&self, path: impl Fn(&Path) -> String) -> Vec<String> {
        self.args
            .iter()
            .map(|arg| match &self.file {
                Some(file) if *arg == "{file}" => path(file),
                _ => (*arg).to_owned(),
            })
            .collect()
    }

    /// Both outputs, with the Windows form of the input path written back as the Linux one.
    fn run_both(&self, home: &Path) -> (Output, Output) {
        let mut on_linux = linux(home);
        on_linux.args(self.args_for(|p| p.display().to_string()));
        let mut on_windows = windows();
        on_windows.args(self.args_for(win_path));
        let linux = run(&mut on_linux, self.stdin.as_deref());
        let mut windows = run(&mut on_windows, self.stdin.as_deref());
        if let Some(file) = &self.file {
            let as_windows = serde_json::to_string(&win_path(file)).expect("json");
            let as_linux = serde_json::to_string(&file.display().to_string()).expect("json");
            windows.stdout = text(&windows.stdout)
                .replace(as_windows.trim_matches('"'), as_linux.trim_matches('"'))
                .into_bytes();
        }
        (linux, windows)
    }
}

fn assert_same(case: &Case, home: &Path) {
    let (linux, windows) = case.run_both(home);
    let what = format!(
        "{:?}\nlinux stderr: {}\nwindows stderr: {}",
        case.args,
        text(&linux.stderr),
        text(&windows.stderr)
    );
    assert_eq!(
        windows.status.code(),
        linux.status.code(),
        "exit codes differ: {what}"
    );
    if case.args.contains(&"--json") && linux.status.success() {
        let linux_json: Value = serde_json::from_slice(&linux.stdout).expect("Linux JSON");
        let windows_json: Value = serde_json::from_slice(&windows.stdout)
            .unwrap_or_else(|err| panic!("the Windows build printed no JSON ({err}): {what}"));
        assert_eq!(windows_json, linux_json, "JSON differs: {what}");
    } else {
        assert_eq!(
            text(&windows.stdout),
            text(&linux.stdout),
            "stdout differs: {what}"
        );
    }
    if !linux.status.success() {
        assert!(
            !windows.stderr.is_empty(),
            "a failure must say why on Windows too: {what}"
        );
    }
}

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../core/tests/fixtures")
        .join(path)
}

#[test]
#[ignore = "needs the Windows build and Wine: make windows-test"]
fn the_catalog_and_estimate_commands_answer_as_on_linux() {
    let home = tempfile::tempdir().expect("home");
    for case in [
        Case::new(&[
            "estimate",
            "--params",
            "7",
            "--precision",
            "fp16",
            "--task",
            "inference",
            "--json",
        ]),
        Case::new(&[
            "estimate",
            "--params",
            "70",
            "--precision",
            "int4",
            "--task",
            "qlora",
            "--context",
            "8192",
            "--batch",
            "2",
            "--json",
        ]),
        Case::new(&["estimate", "--params", "-3", "--task", "lora", "--json"]),
        Case::new(&["recommend", "--params", "7", "--task", "lora", "--json"]),
        Case::new(&[
            "torch-wheel",
            "--driver",
            "535.104.05",
            "--gpu",
            "RTX 5090",
            "--json",
        ]),
        Case::new(&["torch-wheel", "--driver", "not-a-version", "--json"]),
        Case::new(&["gpus", "--json"]),
        Case::new(&["presets", "--json"]),
        Case::new(&[
            "ssh-parse",
            "ssh -p 12345 -J jump@bastion root@region-1.autodl.com",
            "--json",
        ]),
        Case::new(&["ssh-parse", "ssh -p notaport root@host", "--json"]),
        Case::new(&[
            "install-script",
            "pytorch",
            "--option",
            "driver=570.124.06",
            "--option",
            "gpu=NVIDIA GeForce RTX 5090",
        ]),
        Case::new(&["install-script", "miniconda"]),
        Case::new(&["install-script", "condaa"]),
    ] {
        assert_same(&case, home.path());
    }
}

#[test]
#[ignore = "needs the Windows build and Wine: make windows-test"]
fn saved_outputs_and_pasted_errors_read_as_on_linux() {
    let home = tempfile::tempdir().expect("home");
    let nvidia = fixture("nvidia-smi");
    let mut saved: Vec<PathBuf> = std::fs::read_dir(&nvidia)
        .expect("nvidia-smi fixtures")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| {
            path.extension()
                .is_some_and(|e| e == "txt" || e == "csv" || e == "xml")
        })
        .collect();
    saved.sort();
    assert!(saved.len() >= 5, "the fixtures are there: {saved:?}");
    for file in saved {
        assert_same(
            &Case::new(&["parse", "nvidia-smi", "{file}", "--json"]).with_file(file),
            home.path(),
        );
    }
    assert_same(
        &Case::new(&["parse", "nvidia-smi", "{file}", "--json"])
            .with_file(home.path().join("missing.txt")),
        home.path(),
    );
    let explain = fixture("explain");
    for name in [
        "oom-new-too-big.txt",
        "driver-mismatch.txt",
        "nccl-shm-docker.txt",
    ] {
        let file = explain.join(name);
        assert_same(
            &Case::new(&["explain", "{file}", "--json"]).with_file(file.clone()),
            home.path(),
        );
        // Pasted from a Windows clipboard the same text has CRLF line ends; Linux reads it too.
        let pasted = std::fs::read_to_string(&file)
            .expect("fixture")
            .replace('\n', "\r\n");
        assert_same(
            &Case::new(&["explain", "-", "--lang", "zh-CN", "--json"]).with_stdin(pasted),
            home.path(),
        );
    }
}

#[test]
#[ignore = "needs the Windows build and Wine: make windows-test"]
fn a_pasted_ssh_command_with_crlf_reads_like_the_plain_one() {
    let plain = run(
        &mut {
            let mut c = windows();
            c.args([
                "ssh-parse",
                "ssh -p 12345 root@region-1.autodl.com",
                "--json",
            ]);
            c
        },
        None,
    );
    let pasted = run(
        &mut {
            let mut c = windows();
            c.args([
                "ssh-parse",
                "ssh -p 12345 \\\r\n  root@region-1.autodl.com\r\n",
                "--json",
            ]);
            c
        },
        None,
    );
    assert!(plain.status.success(), "{}", text(&plain.stderr));
    assert!(pasted.status.success(), "{}", text(&pasted.stderr));
    let plain: Value = serde_json::from_slice(&plain.stdout).expect("json");
    let pasted: Value = serde_json::from_slice(&pasted.stdout).expect("json");
    assert_eq!(pasted, plain, "no CR may reach the host or the user");
}

#[test]
#[ignore = "needs the Windows build and Wine: make windows-test"]
fn a_rental_recorded_on_windows_costs_what_it_costs_on_linux() {
    let home = tempfile::tempdir().expect("home");
    let linux_db = home.path().join("linux.sqlite3");
    let windows_db = home.path().join("windows.sqlite3");
    let steps: [&[&str]; 4] = [
        &[
            "instance",
            "add",
            "box",
            "--gpu",
            "RTX 4090",
            "--count",
            "2",
            "--price",
            "2.5",
            "--currency",
            "CNY",
            "--billing-starts",
            "running",
            "--stopped-billing",
            "storage:0.2",
            "--at",
            "2025-03-01T00:00:00Z",
        ],
        &["instance", "start", "box", "--at", "2025-03-01T01:00:00Z"],
        &["instance", "stop", "box", "--at", "2025-03-01T04:30:00Z"],
        &["cost", "box", "--at", "2025-03-02T00:00:00Z", "--json"],
    ];
    let mut last = None;
    for args in steps {
        let mut on_linux = linux(home.path());
        on_linux.arg("--db").arg(&linux_db).args(args);
        let mut on_windows = windows();
        on_windows.arg("--db").arg(win_path(&windows_db)).args(args);
        let (on_linux, on_windows) = (run(&mut on_linux, None), run(&mut on_windows, None));
        assert!(
            on_linux.status.success(),
            "{args:?}: {}",
            text(&on_linux.stderr)
        );
        assert_eq!(
            on_windows.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&on_windows.stderr)
        );
        last = Some((on_linux, on_windows));
    }
    let (on_linux, on_windows) = last.expect("the cost ran");
    let linux_bill: Value = serde_json::from_slice(&on_linux.stdout).expect("JSON");
    let windows_bill: Value = serde_json::from_slice(&on_windows.stdout).expect("JSON");
    assert_eq!(
        windows_bill, linux_bill,
        "the same ledger gives the same bill"
    );
    assert_eq!(linux_bill["currency"], "CNY");
    // The same kind of database file on both: a copy made on Windows opens on Linux.
    let copied = home.path().join("from-windows.sqlite3");
    std::fs::copy(&windows_db, &copied).expect("copy the Windows database");
    // Its write-ahead log too: the last writer may leave it unmerged, as on Linux.
    let wal = windows_db.with_extension("sqlite3-wal");
    if wal.exists() {
        std::fs::copy(&wal, copied.with_extension("sqlite3-wal")).expect("copy its log");
    }
    let mut reopened = linux(home.path());
    reopened.arg("--db").arg(&copied).args([
        "cost",
        "box",
        "--at",
        "2025-03-02T00:00:00Z",
        "--json",
    ]);
    let reopened = run(&mut reopened, None);
    assert!(reopened.status.success(), "{}", text(&reopened.stderr));
    assert_eq!(
        serde_json::from_slice::<Value>(&reopened.stdout).expect("JSON"),
        linux_bill
    );
}

/// An environment variable as Windows programs in this prefix see it (`cmd /c echo %NAME%`).
fn windows_variable(name: &str) -> String {
    let mut command = Command::new(env_path("LEASEHOLD_WINE"));
    command
        .args(["cmd", "/c", "echo", &format!("%{name}%")])
        .env("WINEPREFIX", env_path("WINEPREFIX"))
        .env("WINEDEBUG", "-all")
        .env("WINEDLLOVERRIDES", "mscoree,mshtml=");
    let value = text(&run(&mut command, None).stdout).trim().to_owned();
    assert!(
        !value.is_empty() && !value.contains('%'),
        "cmd expanded %{name}%: {value:?}"
    );
    value
}

/// `%APPDATA%` and `%USERPROFILE%` as Windows programs in this prefix see them.
fn windows_folders() -> (String, String) {
    (windows_variable("APPDATA"), windows_variable("USERPROFILE"))
}

#[test]
#[ignore = "needs the Windows build and Wine: make windows-test"]
fn files_live_in_appdata_and_openssh_files_in_the_profile() {
    let (appdata, profile) = windows_folders();
    let out = run(
        &mut {
            let mut c = windows();
            c.args(["paths", "--json"]);
            c
        },
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let paths: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let data = format!("{appdata}\\Leasehold");
    assert_eq!(paths["data"], data.as_str(), "{paths}");
    assert_eq!(paths["db"], format!("{data}\\leasehold.sqlite3").as_str());
    assert_eq!(
        paths["logs"],
        format!("{data}\\logs").as_str(),
        "logs beside the data"
    );
    assert_eq!(
        paths["ssh_config"],
        format!("{profile}\\.ssh\\config").as_str()
    );
    assert_eq!(
        paths["known_hosts"],
        serde_json::json!([
            format!("{data}\\known_hosts"),
            format!("{profile}\\.ssh\\known_hosts")
        ])
    );
}

/// A test sshd and a known_hosts file that already holds its key (no trust on first use).
struct Instance {
    host: TestHost,
    dir: tempfile::TempDir,
}

impl Instance {
    fn start() -> Self {
        let host = TestHost::start_with(SshdOptions {
            host_keys: vec![HostKeyKind::Ed25519],
            ..SshdOptions::default()
        });
        let dir = tempfile::tempdir().expect("dir");
        let known = format!(
            "[{}]:{} {}\n",
            host.host(),
            host.port(),
            host.host_public_key().trim()
        );
        std::fs::write(dir.path().join("known_hosts"), known).expect("known_hosts");
        Self { host, dir }
    }

    /// `leasehold.exe SUB --ssh … -i KEY --known-hosts FILE`, every path in Windows form.
    fn windows(&self, sub: &str) -> Command {
        let mut command = windows();
        command
            .arg(sub)
            .arg("--ssh")
            .arg(self.host.ssh_command())
            .arg("-i")
            .arg(win_path(&self.host.key(ClientKey::Ed25519)))
            .arg("--known-hosts")
            .arg(win_path(&self.dir.path().join("known_hosts")));
        command
    }
}

#[test]
#[ignore = "needs the Windows build and Wine: make windows-test"]
fn exec_on_windows_runs_on_the_instance_with_its_exit_code_and_crlf_removed() {
    let instance = Instance::start();
    let mut command = instance.windows("exec");
    // Pasted from Windows: without CRLF → LF the words would end in CR (`exit 7\r` fails).
    command.args([
        "--",
        "echo err >&2\r\nprintf 'out:%s\\n' \"$(whoami)\"\r\nexit 7\r\n",
    ]);
    let out = run(&mut command, None);
    assert_eq!(
        out.status.code(),
        Some(7),
        "the remote exit code: {}",
        text(&out.stderr)
    );
    assert_eq!(text(&out.stdout), format!("out:{}\n", instance.host.user()));
    assert!(text(&out.stderr).contains("err"), "{}", text(&out.stderr));
}

#[test]
#[ignore = "needs the Windows build and Wine: make windows-test"]
fn exec_on_windows_refuses_a_changed_host_key_and_runs_nothing() {
    let instance = Instance::start();
    instance.host.rotate_host_key();
    let marker = instance.host.remote_dir().join("ran");
    let mut command = instance.windows("exec");
    command.arg("--").arg(format!("touch {}", marker.display()));
    let out = run(&mut command, None);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(255), "{stderr}");
    assert!(stderr.contains("ssh.host_key_changed"), "{stderr}");
    assert!(!marker.exists(), "nothing ran on a host with a changed key");
}

#[test]
#[ignore = "needs the Windows build and Wine: make windows-test"]
fn copy_on_windows_uploads_and_downloads_into_a_path_longer_than_260() {
    let instance = Instance::start();
    let content: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    let local = instance.dir.path().join("weights.bin");
    std::fs::write(&local, &content).expect("write");
    let remote_dir = instance.host.remote_dir();

    let mut upload = instance.windows("copy");
    upload
        .arg(win_path(&local))
        .arg(format!(":{}", remote_dir.display()))
        .arg("--json");
    let out = run(&mut upload, None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    assert_eq!(report["bytes"], content.len(), "{report}");
    assert_eq!(
        std::fs::read(remote_dir.join("weights.bin")).expect("uploaded"),
        content
    );

    // Windows' old MAX_PATH is 260 characters; a run folder deep in a project passes it.
    let mut deep = instance.dir.path().to_owned();
    while win_path(&deep).len() < 300 {
        deep.push("checkpoints-of-a-long-fine-tuning-run");
    }
    std::fs::create_dir_all(&deep).expect("deep folder");
    let mut download = instance.windows("copy");
    download
        .arg(format!(":{}", remote_dir.join("weights.bin").display()))
        .arg(win_path(&deep))
        .arg("--json");
    let out = run(&mut download, None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read(deep.join("weights.bin")).expect("downloaded into the deep folder"),
        content
    );
}

#[test]
#[ignore = "needs the Windows build and Wine: make windows-test"]
fn copy_on_windows_refuses_a_name_windows_reserves_and_writes_nothing() {
    let instance = Instance::start();
    let remote = instance.host.remote_dir();
    for name in ["aux.txt", "CON", "trailing."] {
        let file = remote.join(name);
        std::fs::write(&file, b"data").expect("remote file");
        instance.host.give_to_user(&file);
    }
    let into = instance.dir.path().join("downloads");
    std::fs::create_dir(&into).expect("folder");
    for name in ["aux.txt", "CON", "trailing."] {
        let mut download = instance.windows("copy");
        download
            .arg(format!(":{}", remote.join(name).display()))
            .arg(win_path(&into));
        let out = run(&mut download, None);
        let stderr = text(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{name}: {stderr}");
        assert!(
            stderr.contains("ssh.unsafe_remote_name"),
            "{name}: {stderr}"
        );
    }
    assert!(
        std::fs::read_dir(&into).expect("list").next().is_none(),
        "nothing was written"
    );
}

#[test]
#[ignore = "needs the Windows build and Wine: make windows-test"]
fn the_team_password_is_kept_in_the_windows_credential_manager() {
    let pg = leasehold_testkit::postgres::TestPostgres::start();
    let home = tempfile::tempdir().expect("home");
    let db = win_path(&home.path().join("ledger.sqlite3"));
    // A team name of its own, so an entry left by an earlier run in this prefix cannot help.
    let member = format!("wine{}", std::process::id());
    let mut connect = windows();
    connect
        .args(["--db", &db, "team", "connect", "--url", &pg.url()])
        .args([
            "--member",
            &member,
            "--team",
            "lab",
            "--password-env",
            "LAB_PW",
        ])
        .env("LAB_PW", leasehold_testkit::postgres::PG_PASSWORD)
        .env_remove("PGPASSWORD");
    let out = run(&mut connect, None);
    let said = text(&out.stdout) + &text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(
        !said.contains("not in the keychain"),
        "the Credential Manager took the password: {said}"
    );
    // No password anywhere but the Credential Manager now (no PGPASSWORD, no pgpass.conf).
    let mut sync = windows();
    sync.args(["--db", &db, "team", "sync", "--json"])
        .env_remove("PGPASSWORD")
        .env_remove("LAB_PW");
    let out = run(&mut sync, None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(report["pushed"], 0, "{report}");
}
