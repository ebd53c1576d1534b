//! `ssh_bench`: Leasehold's SSH engine against OpenSSH over an emulated long-distance link.
//!
//! Run by `tests/bench/ssh.sh` (`make bench`). It starts sshd in a namespace behind the delay link
//! (default 25 ms each way, RTT 50 ms), runs the Verify battery and SFTP transfers with each client
//! and prints the times side by side with the ratios the SSH issue sets as goals. It asserts
//! nothing: performance is read, not tested.

mod battery;
mod host;
mod openssh;
mod report;

use std::fs;
use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

use clap::Parser;
use sha2::{Digest, Sha256};

use battery::BATTERY;
use host::{io, BenchHost, BenchResult};
use report::{BatteryFigures, TransferFigures};

#[derive(Debug, Parser)]
#[command(about = "Leasehold's SSH engine against OpenSSH over a delay link")]
struct Args {
    /// Delay added in each direction (the round trip is twice this).
    #[arg(long, default_value_t = 25)]
    one_way_ms: u64,
    /// Runs of the battery per client; the median is reported.
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    /// Size of the SFTP test file in MB (10^6 bytes); 0 skips the transfers.
    #[arg(long, default_value_t = 200)]
    sftp_mb: u64,
}

fn main() {
    let args = Args::parse();
    if !leasehold_testkit::netns::can_run("ssh_bench") {
        return;
    }
    if let Err(err) = run(&args) {
        eprintln!("ssh_bench failed: {err}");
        std::process::exit(1);
    }
}

fn run(args: &Args) -> BenchResult<()> {
    let one_way = Duration::from_millis(args.one_way_ms);
    let host = BenchHost::start(one_way)?;
    println!(
        "SSH benchmark: sshd in namespace {} at {}, delay link {} each way",
        host.link.namespace().name(),
        host.addr(),
        report::ms(one_way)
    );
    battery_figures(&host, args.repeat.max(1))?;
    if args.sftp_mb > 0 {
        transfer_figures(&host, args.sftp_mb)?;
    }
    let stats = host.link.stats();
    println!(
        "\nlink: {} packets forwarded, {} dropped (queue full)",
        stats.forwarded, stats.dropped_queue_full
    );
    Ok(())
}

fn battery_figures(host: &BenchHost, repeat: usize) -> BenchResult<()> {
    let mut sequential = Vec::new();
    let mut control_master = Vec::new();
    for _ in 0..repeat {
        let plain = openssh::sequential(host, BATTERY)?;
        sequential.push(plain.elapsed);
        let multiplexed = openssh::control_master(host, BATTERY)?;
        control_master.push(multiplexed.elapsed);
        same_exit_codes("ControlMaster", &plain.exit_codes, &multiplexed.exit_codes)?;
    }
    let figures = BatteryFigures {
        commands: BATTERY.len(),
        rtt: 2 * host.link.one_way_delay(),
        sequential: median(sequential),
        control_master: median(control_master),
        slowest: openssh::slowest_command_on_host(host, BATTERY)?,
        leasehold: None,
    };
    report::print_battery(&figures);
    Ok(())
}

fn transfer_figures(host: &BenchHost, megabytes: u64) -> BenchResult<()> {
    let remote = host.root().join("remote");
    let local = host.root().join("local");
    fs::create_dir_all(&remote).map_err(io("remote dir"))?;
    fs::create_dir_all(&local).map_err(io("local dir"))?;
    let source = remote.join("source.bin");
    let expected = write_random_file(&source, megabytes * 1_000_000)?;

    let downloaded = local.join("openssh-down.bin");
    let openssh_down = openssh::sftp_batch(
        host,
        &format!(
            "get {} {}",
            openssh::sftp_word(&source),
            openssh::sftp_word(&downloaded)
        ),
    )?;
    check_same(&downloaded, &expected, "OpenSSH download")?;
    let uploaded = remote.join("openssh-up.bin");
    let openssh_up = openssh::sftp_batch(
        host,
        &format!(
            "put {} {}",
            openssh::sftp_word(&downloaded),
            openssh::sftp_word(&uploaded)
        ),
    )?;
    check_same(&uploaded, &expected, "OpenSSH upload")?;
    fs::remove_file(&uploaded).map_err(io("clean up"))?;

    report::print_transfers(&TransferFigures {
        megabytes,
        openssh_down,
        openssh_up,
        leasehold: None,
    });
    Ok(())
}

/// Every client must have run the same commands with the same outcome, or the times mean nothing.
fn same_exit_codes(
    client: &str,
    reference: &[Option<i32>],
    other: &[Option<i32>],
) -> BenchResult<()> {
    if reference == other {
        Ok(())
    } else {
        Err(format!(
            "{client} got exit codes {other:?}, sequential ssh got {reference:?}"
        ))
    }
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

/// Incompressible data, so no client gains from compression; returns its SHA-256.
fn write_random_file(path: &Path, bytes: u64) -> BenchResult<String> {
    let mut random = fs::File::open("/dev/urandom").map_err(io("/dev/urandom"))?;
    let mut file = std::io::BufWriter::new(fs::File::create(path).map_err(io("test file"))?);
    let mut hasher = Sha256::new();
    let mut chunk = vec![0u8; 1 << 20];
    let mut left = bytes;
    while left > 0 {
        let take = usize::try_from(left.min(chunk.len() as u64)).unwrap_or(chunk.len());
        random
            .read_exact(&mut chunk[..take])
            .map_err(io("/dev/urandom"))?;
        file.write_all(&chunk[..take]).map_err(io("test file"))?;
        hasher.update(&chunk[..take]);
        left -= take as u64;
    }
    file.flush().map_err(io("test file"))?;
    Ok(hex::encode(hasher.finalize()))
}

fn check_same(path: &Path, expected: &str, what: &str) -> BenchResult<()> {
    let mut file = fs::File::open(path).map_err(io("transferred file"))?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher).map_err(io("transferred file"))?;
    let actual = hex::encode(hasher.finalize());
    if actual == expected {
        Ok(())
    } else {
        Err(format!(
            "{what}: checksum {actual} differs from the source's {expected}"
        ))
    }
}
