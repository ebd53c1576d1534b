//! `ssh_bench`: Leasehold's SSH engine against OpenSSH over an emulated long-distance link.
//!
//! Run by `tests/bench/ssh.sh` (`make bench`). It starts the test harness's sshd in a namespace
//! behind the delay link (default 25 ms each way, RTT 50 ms), runs the Verify battery and SFTP
//! transfers with each client and prints the times side by side with the ratios the SSH issue
//! sets as goals. It asserts nothing: performance is read, not tested.
//!
//! Options: `--one-way-ms N` (25), `--repeat N` battery runs per client, median kept (3; 0 skips
//! the battery),
//! `--sftp-mb N` test file size in MB of 10^6 bytes, 0 skips the transfers (200).

mod battery;
mod host;
mod leasehold;
mod openssh;
mod report;
mod transfer;

use std::time::Duration;

use battery::BATTERY;
use host::{BenchHost, BenchResult};
use report::{BatteryFigures, LeaseholdBattery};

struct Args {
    one_way_ms: u64,
    repeat: usize,
    sftp_mb: u64,
}

impl Args {
    fn parse(mut words: impl Iterator<Item = String>) -> Result<Self, String> {
        let mut args = Self {
            one_way_ms: 25,
            repeat: 3,
            sftp_mb: 200,
        };
        while let Some(word) = words.next() {
            let value = words
                .next()
                .ok_or_else(|| format!("{word} needs a number"))?;
            let number: u64 = value
                .parse()
                .map_err(|_| format!("{word} takes a whole number, not {value:?}"))?;
            match word.as_str() {
                "--one-way-ms" => args.one_way_ms = number,
                "--repeat" => args.repeat = usize::try_from(number).unwrap_or(1),
                "--sftp-mb" => args.sftp_mb = number,
                other => return Err(format!("unknown option {other}")),
            }
        }
        Ok(args)
    }
}

fn main() {
    let args = match Args::parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("ssh_bench: {message}\nusage: ssh_bench [--one-way-ms N] [--repeat N] [--sftp-mb N]");
            std::process::exit(2);
        }
    };
    if !leasehold_testkit::netns::can_run("ssh_bench") {
        return;
    }
    if let Err(err) = run(&args) {
        eprintln!("ssh_bench failed: {err}");
        std::process::exit(1);
    }
}

fn run(args: &Args) -> BenchResult<()> {
    let runtime = tokio::runtime::Runtime::new().map_err(host::io("tokio runtime"))?;
    let one_way = Duration::from_millis(args.one_way_ms);
    let host = BenchHost::start(one_way)?;
    println!(
        "SSH benchmark: sshd in namespace {} at {}:{}, delay link {} each way, login {}",
        host.link.namespace().name(),
        host.link.ns_addr(),
        host.sshd.port(),
        report::ms(one_way),
        host.sshd.user()
    );
    if std::env::var_os("SKIP_BATTERY").is_none() {
        battery_figures(&runtime, &host, args.repeat)?;
    }
    if args.sftp_mb > 0 {
        transfer::figures(&runtime, &host, args.sftp_mb)?;
    }
    let stats = host.link.stats();
    let kernel_drops = host
        .link
        .kernel_queue_drops()
        .map_or_else(|err| format!("unknown ({err})"), |n| n.to_string());
    println!(
        "\nlink: {} packets forwarded; dropped: {} in the link's queue, {kernel_drops} in the TUN \
         devices' queues (nonzero: the machine starved the link, distrust the figures)",
        stats.forwarded, stats.dropped_queue_full
    );
    Ok(())
}

fn battery_figures(
    runtime: &tokio::runtime::Runtime,
    host: &BenchHost,
    repeat: usize,
) -> BenchResult<()> {
    let mut sequential = Vec::new();
    let mut control_master = Vec::new();
    let mut ours = Vec::new();
    let mut handshakes = Vec::new();
    // Interleaved, so a noisy moment on the machine hits every client alike.
    for _ in 0..repeat {
        let plain = openssh::sequential(host, BATTERY)?;
        sequential.push(plain.elapsed);
        let multiplexed = openssh::control_master(host, BATTERY)?;
        control_master.push(multiplexed.elapsed);
        same_exit_codes("ControlMaster", &plain.exit_codes, &multiplexed.exit_codes)?;
        let (leasehold, handshake) = runtime.block_on(leasehold::battery(host, BATTERY))?;
        same_exit_codes("Leasehold", &plain.exit_codes, &leasehold.exit_codes)?;
        ours.push(leasehold.elapsed);
        handshakes.push(handshake);
    }
    let figures = BatteryFigures {
        commands: BATTERY.len(),
        rtt: 2 * host.link.one_way_delay(),
        sequential: median(sequential),
        control_master: median(control_master),
        slowest: openssh::slowest_command_on_host(host, BATTERY)?,
        leasehold: Some(LeaseholdBattery {
            total: median(ours),
            handshake: median(handshakes),
        }),
    };
    report::print_battery(&figures);
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
