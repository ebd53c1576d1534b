//! The printed table: times side by side and the ratios the SSH issue sets as goals.

use std::time::Duration;

pub struct BatteryFigures {
    pub commands: usize,
    pub rtt: Duration,
    pub sequential: Duration,
    pub control_master: Duration,
    pub slowest: (&'static str, Duration),
    pub leasehold: Option<LeaseholdBattery>,
}

pub struct LeaseholdBattery {
    pub total: Duration,
    pub handshake: Duration,
}

pub struct TransferFigures {
    pub megabytes: u64,
    pub openssh_down: Duration,
    pub openssh_up: Duration,
    pub leasehold: Option<(Duration, Duration)>,
}

/// Leasehold's battery time as a fraction of ControlMaster's; the goal is at most this.
const GOAL_VS_CONTROL_MASTER: f64 = 0.3;
/// Leasehold's SFTP throughput as a multiple of OpenSSH's; the goal is at least this.
const GOAL_VS_SFTP: f64 = 1.2;

pub fn print_battery(figures: &BatteryFigures) {
    let rtt = figures.rtt;
    println!(
        "\n== Verify battery: {} commands, RTT {} ==",
        figures.commands,
        ms(rtt)
    );
    println!("{:<44} {:>10}", "", "time");
    println!(
        "{:<44} {:>10}",
        format!("OpenSSH: {} sequential `ssh` runs", figures.commands),
        secs(figures.sequential)
    );
    println!(
        "{:<44} {:>10}",
        "OpenSSH: ControlMaster, setup included",
        secs(figures.control_master)
    );
    let Some(leasehold) = &figures.leasehold else {
        println!(
            "{:<44} {:>10}",
            "Leasehold: one connection", "n/a (SSH engine not on main yet)"
        );
        return;
    };
    println!(
        "{:<44} {:>10}",
        "Leasehold: one connection, commands side by side",
        secs(leasehold.total)
    );
    let vs_master = ratio(leasehold.total, figures.control_master);
    println!(
        "ratio Leasehold / ControlMaster = {vs_master:.3}×  (goal ≤ {GOAL_VS_CONTROL_MASTER:.2}×: {})",
        verdict(vs_master <= GOAL_VS_CONTROL_MASTER)
    );
    println!(
        "ratio sequential ssh / Leasehold = {:.1}× faster",
        ratio(figures.sequential, leasehold.total)
    );
    let bound = leasehold.handshake + 3 * rtt + figures.slowest.1;
    println!(
        "bound: handshake {} + 3 RTT {} + slowest command ({}) {} = {}  → Leasehold {} ({})",
        secs(leasehold.handshake),
        secs(3 * rtt),
        figures.slowest.0,
        secs(figures.slowest.1),
        secs(bound),
        secs(leasehold.total),
        verdict(leasehold.total <= bound)
    );
}

pub fn print_transfers(figures: &TransferFigures) {
    let mb = figures.megabytes;
    println!("\n== SFTP {mb} MB, connection included ==");
    println!(
        "{:<12} {:>16} {:>16} {:>22}",
        "", "OpenSSH sftp", "Leasehold", "ratio (goal ≥ 1.20×)"
    );
    let rows = [
        (
            "download",
            figures.openssh_down,
            figures.leasehold.map(|l| l.0),
        ),
        ("upload", figures.openssh_up, figures.leasehold.map(|l| l.1)),
    ];
    for (direction, openssh, leasehold) in rows {
        let openssh_rate = rate(mb, openssh);
        match leasehold {
            Some(ours) => {
                let our_rate = rate(mb, ours);
                let speedup = our_rate / openssh_rate;
                println!(
                    "{direction:<12} {:>16} {:>16} {:>22}",
                    format!("{openssh_rate:.1} MB/s"),
                    format!("{our_rate:.1} MB/s"),
                    format!("{speedup:.2}× ({})", verdict(speedup >= GOAL_VS_SFTP))
                );
            }
            None => println!(
                "{direction:<12} {:>16} {:>16} {:>22}",
                format!("{openssh_rate:.1} MB/s"),
                "n/a",
                "-"
            ),
        }
    }
}

fn ratio(numerator: Duration, denominator: Duration) -> f64 {
    numerator.as_secs_f64() / denominator.as_secs_f64().max(f64::EPSILON)
}

fn rate(megabytes: u64, took: Duration) -> f64 {
    megabytes as f64 / took.as_secs_f64().max(f64::EPSILON)
}

fn verdict(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "NOT met"
    }
}

pub fn secs(duration: Duration) -> String {
    format!("{:.2} s", duration.as_secs_f64())
}

pub fn ms(duration: Duration) -> String {
    format!("{} ms", duration.as_millis())
}
