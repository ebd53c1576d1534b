//! `backup_bench`: the at-risk scan and a backup of many small files over an emulated
//! long-distance link, against their baselines, run by `tests/bench/backup.sh` (`make bench`).
//!
//! - Scan: 50 git repositories holding 100 000 files in all. Leasehold (one handshake + the
//!   scan script over SSH) against the same script run on the host itself plus one handshake.
//!   Goal: at most 1.5x.
//! - Backup: 20 000 files of 10 kB (200 MB). Leasehold's `backup::run` (one tar stream, SHA-256
//!   per file) against OpenSSH `sftp -r` (goal: at least 1.5x its throughput) and
//!   `ssh host tar c | tar x` (goal: at least 0.8x).
//!
//! Prints figures and ratios; asserts nothing. Options: `--one-way-ms N` (25), `--repos N` (50),
//! `--files N` (100000, for the scan), `--small N` (20000), `--small-kb N` (10).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use leasehold_core::backup::{self, RunRequest, ScanOptions, ScanScript};
use leasehold_core::ssh::{
    parse_ssh_command, ConnectOptions, Credentials, Destination, KeyFile, KnownHosts, SshTarget,
};
use leasehold_core::store::Store;
use leasehold_core::SystemClock;
use leasehold_testkit::delay_link::DelayLink;
use leasehold_testkit::{ClientKey, SshdOptions, TestHost};

type Result<T> = std::result::Result<T, String>;

struct Args {
    one_way_ms: u64,
    repos: usize,
    files: usize,
    small: usize,
    small_kb: usize,
}

fn parse_args() -> Result<Args> {
    let mut args = Args {
        one_way_ms: 25,
        repos: 50,
        files: 100_000,
        small: 20_000,
        small_kb: 10,
    };
    let mut words = std::env::args().skip(1);
    while let Some(word) = words.next() {
        let value: usize = words
            .next()
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("{word} needs a whole number"))?;
        match word.as_str() {
            "--one-way-ms" => args.one_way_ms = value as u64,
            "--repos" => args.repos = value.max(1),
            "--files" => args.files = value,
            "--small" => args.small = value.max(1),
            "--small-kb" => args.small_kb = value.max(1),
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(args)
}

fn sh(script: &str) -> Result<()> {
    let status = Command::new("bash")
        .arg("-c")
        .arg(script)
        .status()
        .map_err(|e| e.to_string())?;
    status
        .success()
        .then_some(())
        .ok_or_else(|| format!("failed: {script}"))
}

fn main() {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("backup_bench: {message}");
            std::process::exit(2);
        }
    };
    if !leasehold_testkit::netns::can_run("backup_bench") {
        return;
    }
    if let Err(err) = run(&args) {
        eprintln!("backup_bench failed: {err}");
        std::process::exit(1);
    }
}

struct Bench {
    sshd: TestHost,
    link: DelayLink,
    dir: tempfile::TempDir,
    known_hosts: PathBuf,
}

impl Bench {
    fn openssh(&self) -> Vec<String> {
        [
            "-F",
            "/dev/null",
            "-i",
            &self.sshd.key(ClientKey::Ed25519).display().to_string(),
            "-o",
            &format!("Port={}", self.sshd.port()),
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            &format!("UserKnownHostsFile={}", self.known_hosts.display()),
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            "BatchMode=yes",
            "-o",
            "LogLevel=ERROR",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect()
    }

    fn destination(&self) -> String {
        format!("{}@{}", self.sshd.user(), self.link.ns_addr())
    }

    async fn connect(&self) -> Result<SshTarget> {
        let command = parse_ssh_command(&self.sshd.ssh_command()).map_err(|e| e.to_string())?;
        let destination = Destination::resolve(&command, None).map_err(|e| e.to_string())?;
        let credentials = Credentials {
            keys: vec![KeyFile {
                path: self.sshd.key(ClientKey::Ed25519),
                passphrase: None,
            }],
            ..Credentials::default()
        };
        let options = ConnectOptions {
            known_hosts: KnownHosts::only(self.known_hosts.clone()),
            ..ConnectOptions::default()
        };
        SshTarget::connect(destination, credentials, options)
            .await
            .map_err(|e| e.to_string())
    }
}

fn run(args: &Args) -> Result<()> {
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let link = DelayLink::start(Duration::from_millis(args.one_way_ms))
        .map_err(|e| format!("delay link: {e}"))?;
    let sshd = TestHost::start_with(SshdOptions {
        listen: link.ns_addr().into(),
        netns: Some(link.namespace().name().to_owned()),
        ..SshdOptions::default()
    });
    let dir = tempfile::Builder::new()
        .prefix("leasehold-backup-bench-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
        .map_err(|e| e.to_string())?;
    let known_hosts = dir.path().join("known_hosts");
    std::fs::write(
        &known_hosts,
        format!(
            "[{}]:{} {}",
            link.ns_addr(),
            sshd.port(),
            sshd.host_public_key()
        ),
    )
    .map_err(|e| e.to_string())?;
    let bench = Bench {
        sshd,
        link,
        dir,
        known_hosts,
    };
    println!(
        "Backup benchmark: sshd in namespace {} behind a delay link of {} ms each way (RTT {} ms)",
        bench.link.namespace().name(),
        args.one_way_ms,
        2 * args.one_way_ms
    );
    scan_figures(&runtime, &bench, args)?;
    backup_figures(&runtime, &bench, args)?;
    Ok(())
}

fn scan_figures(runtime: &tokio::runtime::Runtime, bench: &Bench, args: &Args) -> Result<()> {
    let root = bench.sshd.remote_dir().join("scan");
    let per_repo = args.files / args.repos;
    let started = Instant::now();
    sh(&format!(
        r#"set -e; mkdir -p {root}; cd {root}
for r in $(seq 1 {repos}); do
  mkdir -p repo-$r/src; cd repo-$r
  for d in $(seq 1 10); do mkdir -p src/d$d; done
  for f in $(seq 1 {per_repo}); do echo "line $f" > src/d$((f % 10 + 1))/f$f.py; done
  git -c init.defaultBranch=main init -q && git add -A && git -c user.name=b -c user.email=b@x commit -qm init
  echo change >> src/d1/f1.py
  cd ..
done
chown -R {user} {root}"#,
        root = root.display(),
        repos = args.repos,
        user = bench.sshd.user(),
    ))?;
    println!(
        "\nscan: {} repositories, {} files (prepared in {:.0} s)",
        args.repos,
        per_repo * args.repos,
        started.elapsed().as_secs_f64()
    );
    let options = ScanOptions {
        roots: vec![root.display().to_string()],
        path_prefix: None,
    };
    let script = ScanScript {
        roots: options.roots.clone(),
        ..ScanScript::default()
    }
    .render();
    // Warm the host's file cache once so both sides read from memory.
    let _ = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .stdout(Stdio::null())
        .status();

    let local_started = Instant::now();
    let local = Command::new("bash")
        .arg("-lc")
        .arg(&script)
        .output()
        .map_err(|e| e.to_string())?;
    let local_time = local_started.elapsed();
    let local_report = backup::parse_scan(&local.stdout, &backup::StorageLayout::default());

    let (handshake, remote_time, remote_report) = runtime.block_on(async {
        let started = Instant::now();
        let target = bench.connect().await?;
        let handshake = started.elapsed();
        let report = backup::scan(&target, &options, None)
            .await
            .map_err(|e| e.to_string())?;
        Ok::<_, String>((handshake, started.elapsed(), report))
    })?;
    if remote_report.repos.len() != local_report.repos.len()
        || remote_report.repos.len() != args.repos
    {
        return Err(format!(
            "the scans disagree: {} repositories over SSH, {} locally",
            remote_report.repos.len(),
            local_report.repos.len()
        ));
    }
    let baseline = local_time + handshake;
    println!(
        "  script on the host:         {:>8.2} s",
        local_time.as_secs_f64()
    );
    println!(
        "  one handshake:              {:>8.2} s",
        handshake.as_secs_f64()
    );
    println!(
        "  Leasehold (connect + scan): {:>8.2} s",
        remote_time.as_secs_f64()
    );
    println!(
        "  ratio Leasehold / (host + handshake): {:.2}x (goal <= 1.5x)",
        remote_time.as_secs_f64() / baseline.as_secs_f64()
    );
    Ok(())
}

fn timed(what: &str, mut command: Command) -> Result<Duration> {
    let started = Instant::now();
    let status = command.status().map_err(|e| format!("{what}: {e}"))?;
    if !status.success() {
        return Err(format!("{what} failed: {status}"));
    }
    Ok(started.elapsed())
}

fn tree_sum(dir: &Path) -> Result<String> {
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "cd {} && find . -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum",
            leasehold_core::shell::quote(&dir.display().to_string())
        ))
        .output()
        .map_err(|e| e.to_string())?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn backup_figures(runtime: &tokio::runtime::Runtime, bench: &Bench, args: &Args) -> Result<()> {
    let source = bench.sshd.remote_dir().join("outputs");
    sh(&format!(
        "set -e; mkdir -p {dir}; cd {dir}; for d in $(seq 1 20); do mkdir -p part-$d; done
         head -c $(({n} * {kb} * 1024)) /dev/urandom | split -a 6 -b {kb}k - blob-
         i=0; for f in blob-*; do mv $f part-$((i % 20 + 1))/sample-$i.bin; i=$((i + 1)); done
         chown -R {user} {dir}",
        dir = source.display(),
        n = args.small,
        kb = args.small_kb,
        user = bench.sshd.user(),
    ))?;
    let megabytes = (args.small * args.small_kb * 1024) as f64 / 1e6;
    println!(
        "\nbackup: {} files of {} kB ({megabytes:.0} MB)",
        args.small, args.small_kb
    );
    let expected = tree_sum(&source)?;
    let local = bench.dir.path().join("local");

    let sftp_dir = local.join("sftp");
    std::fs::create_dir_all(&sftp_dir).map_err(|e| e.to_string())?;
    let mut sftp = Command::new("sftp");
    sftp.args(bench.openssh())
        .arg("-b")
        .arg("-")
        .arg(bench.destination())
        .stdin(Stdio::piped())
        .stdout(Stdio::null());
    let started = Instant::now();
    let mut child = sftp.spawn().map_err(|e| e.to_string())?;
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().ok_or("sftp stdin")?;
        writeln!(stdin, "get -r {} {}", source.display(), sftp_dir.display())
            .map_err(|e| e.to_string())?;
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    let sftp_time = started.elapsed();
    if !status.success() || tree_sum(&sftp_dir.join("outputs"))? != expected {
        return Err("sftp -r did not copy the folder intact".into());
    }

    let tar_dir = local.join("tar");
    std::fs::create_dir_all(&tar_dir).map_err(|e| e.to_string())?;
    let pipeline = format!(
        "ssh {} {} 'tar -C {} -cf - .' | tar -C {} -xf -",
        bench
            .openssh()
            .iter()
            .map(|w| leasehold_core::shell::quote(w).into_owned())
            .collect::<Vec<_>>()
            .join(" "),
        bench.destination(),
        source.display(),
        tar_dir.display()
    );
    let mut tar = Command::new("bash");
    tar.arg("-c").arg(format!("set -o pipefail; {pipeline}"));
    let tar_time = timed("ssh tar c | tar x", tar)?;
    if tree_sum(&tar_dir)? != expected {
        return Err("ssh tar | tar did not copy the folder intact".into());
    }

    let ours_dir = local.join("leasehold");
    let ours_time = runtime.block_on(async {
        let store = Store::open_in_memory().await.map_err(|e| e.to_string())?;
        let started = Instant::now();
        let target = bench.connect().await?;
        let request = RunRequest {
            remote_paths: vec![source.display().to_string()],
            local_dir: ours_dir.clone(),
            instance: None,
        };
        let record = backup::run(&store, &target, &request, &|_| {}, &SystemClock)
            .await
            .map_err(|e| e.to_string())?;
        if record.items[0].files != args.small as u64 {
            return Err(format!("Leasehold copied {} files", record.items[0].files));
        }
        Ok::<_, String>(started.elapsed())
    })?;
    if tree_sum(&ours_dir.join("outputs"))? != expected {
        return Err("Leasehold did not copy the folder intact".into());
    }
    let mbps = |t: Duration| megabytes / t.as_secs_f64();
    println!(
        "  OpenSSH sftp -r:            {:>8.2} s  {:>7.1} MB/s",
        sftp_time.as_secs_f64(),
        mbps(sftp_time)
    );
    println!(
        "  ssh tar c | tar x:          {:>8.2} s  {:>7.1} MB/s",
        tar_time.as_secs_f64(),
        mbps(tar_time)
    );
    println!(
        "  Leasehold backup (verified):{:>8.2} s  {:>7.1} MB/s",
        ours_time.as_secs_f64(),
        mbps(ours_time)
    );
    println!(
        "  ratio vs sftp -r: {:.2}x (goal >= 1.5x); vs ssh tar | tar: {:.2}x (goal >= 0.8x)",
        sftp_time.as_secs_f64() / ours_time.as_secs_f64(),
        tar_time.as_secs_f64() / ours_time.as_secs_f64()
    );
    Ok(())
}
