//! `verify_bench`: how long the Verify battery takes on a distant instance.
//!
//! Run by `tests/bench/verify.sh` (`make bench`). The test harness's sshd runs in a network
//! namespace behind the delay link (default 25 ms each way: RTT 50 ms) with the fake GPU host
//! (`tests/fake-gpu-hosts`, healthy RTX 4090) on its PATH; the network probe measures an HTTP
//! server on the far end of the same link. It prints the SSH handshake, the full battery and its
//! slowest probe, next to the same battery on this computer as the baseline. Asserts nothing.
//!
//! Options: `--one-way-ms N` (25), `--repeat N` (3, the median is kept).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use leasehold_core::probe::network::{Endpoint, EndpointKind};
use leasehold_core::probe::{run_battery, BatteryOptions, Facts, NoProgress};
use leasehold_core::ssh::{
    parse_ssh_command, ConnectOptions, Credentials, Destination, KeyFile, KnownHosts, SshTarget,
};
use leasehold_core::target::LocalTarget;
use leasehold_core::{Clock, SystemClock};
use leasehold_testkit::delay_link::DelayLink;
use leasehold_testkit::{ClientKey, SshdOptions, TestHost};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

type Result<T> = std::result::Result<T, String>;

fn main() {
    let mut one_way_ms = 25u64;
    let mut repeat = 3usize;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().and_then(|v| v.parse::<u64>().ok());
        match (flag.as_str(), value) {
            ("--one-way-ms", Some(v)) => one_way_ms = v,
            ("--repeat", Some(v)) => repeat = usize::try_from(v.max(1)).unwrap_or(1),
            _ => {
                eprintln!("usage: verify_bench [--one-way-ms N] [--repeat N]");
                std::process::exit(2);
            }
        }
    }
    if !leasehold_testkit::netns::can_run("verify_bench") {
        return;
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("verify_bench: tokio runtime: {err}");
            std::process::exit(1);
        }
    };
    if let Err(err) = runtime.block_on(run(Duration::from_millis(one_way_ms), repeat)) {
        eprintln!("verify_bench failed: {err}");
        std::process::exit(1);
    }
}

fn fake_hosts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fake-gpu-hosts")
}

fn options(root: &Path, index_url: &str) -> Result<BatteryOptions> {
    let mut options = BatteryOptions::default()
        .path_prefix(root.join("bin").to_string_lossy())
        .env("PYTHONPATH", root.join("python").to_string_lossy())
        .and_then(|o| {
            o.env(
                "FAKE_GPU_PROFILE",
                root.join("profiles/healthy-4090").to_string_lossy(),
            )
        })
        .map_err(|e| e.to_string())?;
    options.endpoints = vec![Endpoint::new("index", EndpointKind::Pypi, index_url)];
    Ok(options)
}

/// An HTTP server answering 200 at `address`, standing in for a package index.
async fn index_server(address: std::net::IpAddr) -> Result<String> {
    let listener = tokio::net::TcpListener::bind((address, 0))
        .await
        .map_err(|e| format!("bind index: {e}"))?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buffer = [0u8; 1024];
                let _ = stream.read(&mut buffer).await;
                let _ = stream
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    .await;
            });
        }
    });
    Ok(format!("http://{local}/simple/pip/"))
}

struct Run {
    handshake: Duration,
    battery: Duration,
    facts: Facts,
}

async fn remote_run(sshd: &TestHost, known_hosts: &Path, options: &BatteryOptions) -> Result<Run> {
    let started = Instant::now();
    let command = parse_ssh_command(&sshd.ssh_command()).map_err(|e| e.to_string())?;
    let destination = Destination::resolve(&command, None).map_err(|e| e.to_string())?;
    let credentials = Credentials {
        keys: vec![KeyFile {
            path: sshd.key(ClientKey::Ed25519),
            passphrase: None,
        }],
        ..Credentials::default()
    };
    let connect = ConnectOptions {
        known_hosts: KnownHosts::only(known_hosts),
        ..ConnectOptions::default()
    };
    let target = SshTarget::connect(destination, credentials, connect)
        .await
        .map_err(|e| e.to_string())?;
    let handshake = started.elapsed();
    let facts = run_battery(&target, options, &NoProgress, SystemClock.now())
        .await
        .map_err(|e| e.to_string())?;
    let battery = started.elapsed() - handshake;
    target.disconnect().await;
    Ok(Run {
        handshake,
        battery,
        facts,
    })
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values.get(values.len() / 2).copied().unwrap_or_default()
}

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1000.0)
}

fn slowest(facts: &Facts) -> String {
    facts
        .probes
        .iter()
        .max_by_key(|p| p.duration_ms)
        .map_or_else(String::new, |p| {
            format!("{} {} ms", p.probe.as_str(), p.duration_ms)
        })
}

async fn run(one_way: Duration, repeat: usize) -> Result<()> {
    let link = DelayLink::start(one_way).map_err(|e| format!("delay link: {e}"))?;
    let sshd = TestHost::start_with(SshdOptions {
        listen: link.ns_addr().into(),
        netns: Some(link.namespace().name().to_owned()),
        ..SshdOptions::default()
    });
    let remote_root = sshd.remote_dir().join("fake-gpu-hosts");
    let copied = std::process::Command::new("cp")
        .arg("-r")
        .arg(fake_hosts())
        .arg(&remote_root)
        .status();
    if !copied.is_ok_and(|s| s.success()) {
        return Err("could not copy the fake GPU host".into());
    }
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
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
    let remote_index = index_server(link.host_addr().into()).await?;
    let local_index = index_server([127, 0, 0, 1].into()).await?;
    let remote_options = options(&remote_root, &remote_index)?;
    let local_options = options(&fake_hosts(), &local_index)?;

    println!(
        "Verify battery: sshd in namespace {} behind the delay link, RTT {}",
        link.namespace().name(),
        ms(2 * one_way)
    );
    let mut handshakes = Vec::new();
    let mut remote = Vec::new();
    let mut local = Vec::new();
    let mut last = None;
    for _ in 0..repeat {
        let run = remote_run(&sshd, &known_hosts, &remote_options).await?;
        handshakes.push(run.handshake);
        remote.push(run.battery);
        println!(
            "  over SSH: handshake {}, battery {}, slowest probe {}",
            ms(run.handshake),
            ms(run.battery),
            slowest(&run.facts)
        );
        last = Some(run.facts);
        let started = Instant::now();
        let facts = run_battery(&LocalTarget, &local_options, &NoProgress, SystemClock.now())
            .await
            .map_err(|e| e.to_string())?;
        local.push(started.elapsed());
        println!(
            "  this computer: battery {}, slowest probe {}",
            ms(started.elapsed()),
            slowest(&facts)
        );
    }
    let (handshake, battery, baseline) = (median(handshakes), median(remote), median(local));
    println!("\nmedian of {repeat}:");
    println!("  SSH handshake            {}", ms(handshake));
    println!(
        "  battery over SSH         {}  ({:.1} RTTs; {:.2}× this computer)",
        ms(battery),
        battery.as_secs_f64() / (2 * one_way).as_secs_f64(),
        battery.as_secs_f64() / baseline.as_secs_f64().max(1e-9)
    );
    println!("  handshake + battery      {}", ms(handshake + battery));
    println!("  battery on this computer {}", ms(baseline));
    if let Some(facts) = last {
        let probes: Vec<String> = facts
            .probes
            .iter()
            .map(|p| format!("{} {} ms", p.probe.as_str(), p.duration_ms))
            .collect();
        println!("  probes (last SSH run): {}", probes.join(", "));
    }
    Ok(())
}
