//! The Leasehold side: the SSH engine as the product uses it (`SshTarget`), one connection.

use std::path::Path;
use std::time::{Duration, Instant};

use leasehold_core::ssh::{
    parse_ssh_command, ConnectOptions, Credentials, Destination, KeyFile, KnownHosts, SshTarget,
    TransferOptions, TransferProgress,
};
use leasehold_core::target::{CommandSpec, Target};

use crate::battery::Probe;
use crate::host::{BenchHost, BenchResult};
use crate::openssh::BatteryRun;

/// Connects the way the app does after the user confirmed the host key (it is in known_hosts).
pub async fn connect(host: &BenchHost) -> BenchResult<SshTarget> {
    let command = parse_ssh_command(&host.sshd.ssh_command()).map_err(|e| e.to_string())?;
    let destination = Destination::resolve(&command, None).map_err(|e| e.to_string())?;
    let credentials = Credentials {
        keys: vec![KeyFile {
            path: host.client_key(),
            passphrase: None,
        }],
        ..Credentials::default()
    };
    let options = ConnectOptions {
        known_hosts: KnownHosts::only(host.known_hosts.clone()),
        accept_new_host_key: false,
        ..ConnectOptions::default()
    };
    SshTarget::connect(destination, credentials, options)
        .await
        .map_err(|e| format!("Leasehold could not connect: {e}"))
}

/// Connect, then every probe at once on that one connection (the engine runs what exceeds its
/// free channels side by side in one channel). Returns the run and how long connecting took.
pub async fn battery(host: &BenchHost, battery: &[Probe]) -> BenchResult<(BatteryRun, Duration)> {
    let started = Instant::now();
    let target = connect(host).await?;
    let handshake = started.elapsed();
    let specs: Vec<CommandSpec> = battery
        .iter()
        .map(|p| CommandSpec::new(p.command))
        .collect();
    let outputs = target.run_many(&specs).await;
    let elapsed = started.elapsed();
    target.disconnect().await;
    let mut exit_codes = Vec::with_capacity(outputs.len());
    for (probe, output) in battery.iter().zip(outputs) {
        let output = output.map_err(|e| format!("Leasehold could not run {}: {e}", probe.label))?;
        exit_codes.push(output.exit_status.and_then(|s| i32::try_from(s).ok()));
    }
    Ok((
        BatteryRun {
            elapsed,
            exit_codes,
        },
        handshake,
    ))
}

/// The bench checks every copy itself afterwards, as it does for OpenSSH's, so the engine's own
/// SHA-256 verification (an extra remote `sha256sum`) stays out of the timing.
const PLAIN_COPY: TransferOptions = TransferOptions {
    resume: false,
    verify: false,
    stall_timeout: Duration::from_secs(30),
};

fn no_progress(_: &TransferProgress) {}

/// Connect and download one file; the time includes the connection, as `sftp`'s does.
pub async fn download(host: &BenchHost, remote: &Path, local: &Path) -> BenchResult<Duration> {
    let started = Instant::now();
    let target = connect(host).await?;
    target
        .download(&remote.to_string_lossy(), local, PLAIN_COPY, &no_progress)
        .await
        .map_err(|e| format!("Leasehold download: {e}"))?;
    let elapsed = started.elapsed();
    target.disconnect().await;
    Ok(elapsed)
}

/// Connect and upload one file; the time includes the connection, as `sftp`'s does.
pub async fn upload(host: &BenchHost, local: &Path, remote: &Path) -> BenchResult<Duration> {
    let started = Instant::now();
    let target = connect(host).await?;
    target
        .upload(local, &remote.to_string_lossy(), PLAIN_COPY, &no_progress)
        .await
        .map_err(|e| format!("Leasehold upload: {e}"))?;
    let elapsed = started.elapsed();
    target.disconnect().await;
    Ok(elapsed)
}
