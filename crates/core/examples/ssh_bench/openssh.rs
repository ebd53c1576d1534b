//! The baselines: what a user or a shell script does today with OpenSSH's own clients.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::battery::Probe;
use crate::host::{io, BenchHost, BenchResult};

/// Exit codes of the battery's commands, in battery order, and how long the whole run took.
pub struct BatteryRun {
    pub elapsed: Duration,
    pub exit_codes: Vec<Option<i32>>,
}

/// One `ssh host command` per probe, one after the other: a new connection each time.
pub fn sequential(host: &BenchHost, battery: &[Probe]) -> BenchResult<BatteryRun> {
    let started = Instant::now();
    let mut exit_codes = Vec::new();
    for probe in battery {
        let output = ssh(host, &[], probe.command)?;
        exit_codes.push(output.status.code());
    }
    Ok(BatteryRun {
        elapsed: started.elapsed(),
        exit_codes,
    })
}

/// A ControlMaster connection set up first (timed), then every probe through it. One after the
/// other, as scripts do: the master multiplexes at most `MaxSessions` (10) sessions at once.
pub fn control_master(host: &BenchHost, battery: &[Probe]) -> BenchResult<BatteryRun> {
    let socket = host.root().join("control.sock");
    let control = ["-o".to_owned(), format!("ControlPath={}", socket.display())];
    let started = Instant::now();
    let master = Command::new("ssh")
        .args(host.openssh_options())
        .args(&control)
        .args([
            "-o",
            "ControlMaster=yes",
            "-o",
            "ControlPersist=yes",
            "-f",
            "-N",
        ])
        .arg(host.destination())
        .stdin(Stdio::null())
        .output()
        .map_err(io("ssh -M"))?;
    if !master.status.success() {
        return Err(format!(
            "the ControlMaster did not start: {}",
            String::from_utf8_lossy(&master.stderr)
        ));
    }
    let mut exit_codes = Vec::new();
    for probe in battery {
        let output = ssh(host, &control, probe.command)?;
        exit_codes.push(output.status.code());
    }
    let elapsed = started.elapsed();
    let _ = Command::new("ssh")
        .args(host.openssh_options())
        .args(&control)
        .args(["-O", "exit"])
        .arg(host.destination())
        .stderr(Stdio::null())
        .status();
    Ok(BatteryRun {
        elapsed,
        exit_codes,
    })
}

fn ssh(host: &BenchHost, extra: &[String], command: &str) -> BenchResult<Output> {
    let output = Command::new("ssh")
        .args(host.openssh_options())
        .args(extra)
        .arg(host.destination())
        .arg(command)
        .stdin(Stdio::null())
        .output()
        .map_err(io("ssh"))?;
    if output.status.code() == Some(255) {
        return Err(format!(
            "ssh could not run `{command}`: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(output)
}

/// How long the slowest probe takes on the host itself, started the way sshd starts it: the
/// login user's bash with `SSH_CLIENT` set, so it reads `~/.bashrc` as it does for every exec
/// channel.
pub fn slowest_command_on_host(
    host: &BenchHost,
    battery: &[Probe],
) -> BenchResult<(&'static str, Duration)> {
    let user = host.sshd.user();
    let path = format!(
        "PATH={}:/usr/local/bin:/usr/bin:/bin",
        host.fake_bin.display()
    );
    let client = format!(
        "SSH_CLIENT={} 50000 {}",
        host.link.host_addr(),
        host.sshd.port()
    );
    let mut slowest = ("", Duration::ZERO);
    for probe in battery {
        let started = Instant::now();
        host.link
            .namespace()
            .std_command("runuser")
            .args([
                "-u",
                user,
                "--",
                "env",
                "-i",
                &format!("HOME=/home/{user}"),
                &path,
                &client,
            ])
            .args(["bash", "-c", probe.command])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(io("run a probe on the host"))?;
        let took = started.elapsed();
        if took > slowest.1 {
            slowest = (probe.label, took);
        }
    }
    Ok(slowest)
}

/// `sftp -b` with one `get` or `put`; the connection is included in the time, as it is for ours.
pub fn sftp_batch(host: &BenchHost, batch_line: &str) -> BenchResult<Duration> {
    let batch = host.root().join("sftp.batch");
    std::fs::write(&batch, format!("{batch_line}\n")).map_err(io("sftp batch"))?;
    let started = Instant::now();
    let output = Command::new("sftp")
        .args(host.openssh_options())
        .arg("-q")
        .arg("-b")
        .arg(&batch)
        .arg(host.destination())
        .stdin(Stdio::null())
        .output()
        .map_err(io("sftp"))?;
    let elapsed = started.elapsed();
    if output.status.success() {
        Ok(elapsed)
    } else {
        Err(format!(
            "sftp `{batch_line}` failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

/// A path as one sftp batch word (the temp paths we use never contain a double quote).
pub fn sftp_word(path: &Path) -> String {
    format!("\"{}\"", path.display())
}
