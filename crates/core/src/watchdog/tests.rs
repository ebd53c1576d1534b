//! The generated script, run here by bash with one-second intervals: a fake `nvidia-smi`
//! (tests/fake-gpu-hosts) at the utilisation each test sets, counters and sshd session titles in
//! a folder standing in for /proc, and a power-off stand-in that records its call.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::*;
use crate::shell::quote;

struct Rig {
    dir: tempfile::TempDir,
    child: Option<Child>,
}

fn fake_bin() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fake-gpu-hosts/bin")
}

impl Rig {
    fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("lh-watchdog-")
            .tempdir()
            .expect("temp dir");
        let rig = Self { dir, child: None };
        std::fs::create_dir_all(rig.path("profile")).unwrap();
        std::fs::create_dir_all(rig.path("proc/net")).unwrap();
        std::fs::create_dir_all(rig.path("cgroup")).unwrap();
        rig.gpu(&[0, 0]);
        rig.write("proc/stat", "cpu  100 0 50 9000 10 0 0 0 0 0\n");
        rig.write(
            "proc/diskstats",
            "   8       0 sda 100 0 2000 50 80 0 1600 40 0 90 90 0 0 0 0\n",
        );
        rig.net_bytes(1000);
        rig
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn write(&self, rel: &str, text: &str) {
        let tmp = self.path(&format!("{rel}.new"));
        std::fs::write(&tmp, text).unwrap();
        std::fs::rename(tmp, self.path(rel)).unwrap();
    }

    /// Every GPU's utilisation, as the fake nvidia-smi will report it.
    fn gpu(&self, utils: &[u32]) {
        let mut csv = String::from("index, utilization.gpu [%]\n");
        for (i, util) in utils.iter().enumerate() {
            csv.push_str(&format!("{i}, {util} %\n"));
        }
        let _ = std::fs::remove_file(self.path("profile/error.txt"));
        self.write("profile/query-gpu.csv", &csv);
    }

    /// nvidia-smi fails the way it does when the driver is gone.
    fn gpu_fails(&self) {
        self.write(
            "profile/error.txt",
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n",
        );
    }

    fn net_bytes(&self, bytes: u64) {
        self.write(
            "proc/net/dev",
            &format!(
                "Inter-|   Receive |  Transmit\n face |bytes packets|bytes packets\n    lo: 999999 1 0 0 0 0 0 0 999999 1 0 0 0 0 0 0\n  eth0: {bytes} 10 0 0 0 0 0 0 {bytes} 10 0 0 0 0 0 0\n"
            ),
        );
    }

    /// A process titled the way sshd titles an interactive login.
    fn open_ssh_session(&self) {
        std::fs::create_dir_all(self.path("proc/4242")).unwrap();
        self.write("proc/4242/cmdline", "sshd: root@pts/0\0\0");
    }

    fn close_ssh_session(&self) {
        std::fs::remove_dir_all(self.path("proc/4242")).unwrap();
    }

    fn calls_path(&self) -> PathBuf {
        self.path("calls")
    }

    fn options(&self) -> WatchdogOptions {
        WatchdogOptions {
            idle_seconds: 3,
            interval_seconds: 1,
            grace_seconds: 0,
            ttl_seconds: None,
            gpu_below: 5,
            signals: Signal::ALL.to_vec(),
            power_off: format!(
                "echo off >> {}",
                quote(&self.calls_path().display().to_string())
            ),
            pre_stop: None,
            state_dir: self.path("state").display().to_string(),
        }
    }

    fn command(&self, options: &WatchdogOptions, mode: &str) -> Command {
        options.validate().expect("test options are valid");
        let script_path = self.path("watchdog.sh");
        std::fs::write(&script_path, script(options)).unwrap();
        let mut command = Command::new("bash");
        command
            .arg(&script_path)
            .arg(mode)
            .env(
                "PATH",
                format!("{}:/usr/local/bin:/usr/bin:/bin", fake_bin().display()),
            )
            .env("FAKE_GPU_PROFILE", self.path("profile"))
            .env("LEASEHOLD_WATCHDOG_PROC", self.path("proc"))
            .env("LEASEHOLD_WATCHDOG_CGROUP", self.path("cgroup"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        command
    }

    fn run(&mut self, options: &WatchdogOptions) {
        self.child = Some(self.command(options, "run").spawn().expect("bash runs"));
    }

    fn calls(&self) -> String {
        std::fs::read_to_string(self.calls_path()).unwrap_or_default()
    }

    /// Wait for the power-off stand-in's call, up to `limit`.
    /// True once the stand-in was called and the script has logged how the call ended (the call
    /// lands in `calls` a moment before the script writes its verdict).
    fn wait_for_power_off(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            let outcome_logged = !self.decisions("powered_off").is_empty()
                || !self.decisions("power_off_failed").is_empty();
            if self.calls().contains("off") && outcome_logged {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    }

    /// Wait until the log holds `count` lines saying `what`.
    fn wait_for_decisions(&self, what: &str, count: usize, limit: Duration) {
        let deadline = Instant::now() + limit;
        while self.decisions(what).len() < count {
            assert!(
                Instant::now() < deadline,
                "no {count} `{what}` decisions in time; log:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.path("state/log")).unwrap_or_default()
    }

    fn decisions(&self, what: &str) -> Vec<LogLine> {
        self.log()
            .lines()
            .filter_map(|l| {
                let mut parts = l.splitn(3, ' ');
                Some(LogLine {
                    at: parts.next()?.to_owned(),
                    what: parts.next()?.to_owned(),
                    detail: parts.next().unwrap_or("").to_owned(),
                })
            })
            .filter(|d| d.what == what)
            .collect()
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            let _ = child.wait();
        }
    }
}

fn seconds(stamp: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(stamp)
        .unwrap_or_else(|err| panic!("{stamp:?} is an RFC 3339 time: {err}"))
        .timestamp()
}

const PATIENCE: Duration = Duration::from_secs(30);

#[test]
fn an_idle_instance_is_powered_off_within_idle_plus_one_interval() {
    let mut rig = Rig::new();
    let options = rig.options();
    rig.run(&options);
    assert!(
        rig.wait_for_power_off(PATIENCE),
        "an idle instance must be powered off; log:\n{}",
        rig.log()
    );
    let start = &rig.decisions("start")[0];
    let off = &rig.decisions("power_off")[0];
    // Stamps are whole seconds: one more for rounding at each end.
    let took = seconds(&off.at) - seconds(&start.at);
    let bound = (options.idle_seconds + options.interval_seconds + 2) as i64;
    assert!(
        took <= bound,
        "powered off {took}s after start, later than idle + one interval; log:\n{}",
        rig.log()
    );
    // The first quiet sample already counts its own window: idleness began a sample earlier.
    let first_idle = &rig.decisions("idle")[0];
    assert!(
        first_idle.detail.starts_with("1s of 3s"),
        "the first quiet sample covers one interval: {first_idle:?}"
    );
    assert_eq!(rig.calls(), "off\n", "the power-off command runs once");
    assert!(rig.log().contains("powered_off"), "{}", rig.log());
}

#[test]
fn a_busy_gpu_keeps_the_instance_on_until_it_goes_quiet() {
    let mut rig = Rig::new();
    rig.gpu(&[0, 90]);
    rig.run(&rig.options());
    rig.wait_for_decisions("busy", 6, PATIENCE);
    assert_eq!(rig.calls(), "", "never power off while one GPU is at 90 %");
    assert!(
        rig.decisions("busy")
            .iter()
            .skip(1)
            .all(|d| d.detail.starts_with("gpu (gpu=90%")),
        "the busy GPU is named: {}",
        rig.log()
    );
    rig.gpu(&[0, 0]);
    assert!(
        rig.wait_for_power_off(PATIENCE),
        "once both GPUs are at 0 % it powers off; log:\n{}",
        rig.log()
    );
}

#[test]
fn nothing_is_decided_during_the_grace_period() {
    let mut rig = Rig::new();
    let options = WatchdogOptions {
        grace_seconds: 4,
        idle_seconds: 1,
        ..rig.options()
    };
    rig.run(&options);
    assert!(rig.wait_for_power_off(PATIENCE), "{}", rig.log());
    let start = seconds(&rig.decisions("start")[0].at);
    let off = seconds(&rig.decisions("power_off")[0].at);
    assert!(
        off - start >= 4,
        "powered off {}s after start, inside the 4 s grace; log:\n{}",
        off - start,
        rig.log()
    );
    assert!(
        rig.decisions("grace").len() >= 3,
        "each sample in grace says so: {}",
        rig.log()
    );
}

#[test]
fn an_open_interactive_ssh_session_keeps_the_instance_on() {
    let mut rig = Rig::new();
    rig.open_ssh_session();
    rig.run(&rig.options());
    rig.wait_for_decisions("busy", 6, PATIENCE);
    assert_eq!(
        rig.calls(),
        "",
        "never power off under someone's open terminal"
    );
    assert!(
        rig.log().contains("busy ssh (") || rig.log().contains(",ssh ("),
        "{}",
        rig.log()
    );
    rig.close_ssh_session();
    assert!(rig.wait_for_power_off(PATIENCE), "{}", rig.log());
}

#[test]
fn a_signal_that_cannot_be_read_counts_as_busy() {
    let mut failing = Rig::new();
    failing.gpu_fails();
    failing.run(&failing.options());
    let mut mig = Rig::new();
    // MIG-enabled GPUs report no utilisation.
    mig.write(
        "profile/query-gpu.csv",
        "index, utilization.gpu [%]\n0, [N/A]\n",
    );
    mig.run(&mig.options());
    let mut no_counters = Rig::new();
    std::fs::remove_file(no_counters.path("proc/stat")).unwrap();
    no_counters.run(&no_counters.options());
    for (rig, what) in [
        (&failing, "gpu=unreadable"),
        (&mig, "gpu=unreadable"),
        (&no_counters, "cpu=unreadable"),
    ] {
        rig.wait_for_decisions("busy", 6, PATIENCE);
        assert_eq!(rig.calls(), "", "an unreadable signal must never power off");
        assert!(
            rig.log().contains(what),
            "{what} expected in:\n{}",
            rig.log()
        );
    }
    failing.gpu(&[0]);
    assert!(
        failing.wait_for_power_off(PATIENCE),
        "readable again and quiet: it powers off; log:\n{}",
        failing.log()
    );
}

#[test]
fn network_traffic_counts_as_busy() {
    let mut rig = Rig::new();
    rig.run(&WatchdogOptions {
        signals: vec![Signal::Net],
        ..rig.options()
    });
    let mut bytes = 1000u64;
    let deadline = Instant::now() + Duration::from_secs(6);
    while Instant::now() < deadline {
        bytes += 1 << 20;
        rig.net_bytes(bytes);
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(rig.calls(), "", "megabytes a second on eth0 is not idle");
    assert!(rig.log().contains("busy net (net="), "{}", rig.log());
    assert!(
        rig.wait_for_power_off(PATIENCE),
        "quiet network: off; {}",
        rig.log()
    );
}

#[test]
fn the_ttl_powers_off_a_busy_instance() {
    let mut rig = Rig::new();
    rig.gpu(&[100]);
    rig.run(&WatchdogOptions {
        ttl_seconds: Some(3),
        idle_seconds: 60,
        ..rig.options()
    });
    assert!(rig.wait_for_power_off(PATIENCE), "{}", rig.log());
    assert_eq!(rig.decisions("ttl").len(), 1, "{}", rig.log());
    assert!(
        rig.decisions("idle").is_empty(),
        "it was never idle: {}",
        rig.log()
    );
}

#[test]
fn the_pre_stop_hook_runs_before_the_power_off() {
    let mut rig = Rig::new();
    let calls = quote(&rig.calls_path().display().to_string()).into_owned();
    rig.run(&WatchdogOptions {
        pre_stop: Some(format!("echo pre >> {calls}; echo hook-output")),
        idle_seconds: 1,
        ..rig.options()
    });
    assert!(rig.wait_for_power_off(PATIENCE), "{}", rig.log());
    assert_eq!(
        rig.calls(),
        "pre\noff\n",
        "the hook first, then the power-off"
    );
    let log = rig.log();
    let order: Vec<&str> = ["pre_stop ", "hook-output", "pre_stop_done", "power_off "]
        .iter()
        .map(|w| &log[log.find(w).unwrap_or_else(|| panic!("{w} in {log}"))..])
        .collect();
    assert!(
        order.windows(2).all(|w| w[0].len() > w[1].len()),
        "hook, its output and then the power-off, in that order:\n{log}"
    );
}

#[test]
fn start_keeps_one_copy_and_stop_ends_it() {
    let rig = Rig::new();
    let options = WatchdogOptions {
        idle_seconds: 3600,
        ..rig.options()
    };
    let first = rig.command(&options, "start").output().unwrap();
    let second = rig.command(&options, "start").output().unwrap();
    let pid = String::from_utf8_lossy(&first.stdout).trim().to_owned();
    assert!(
        pid.parse::<u32>().is_ok(),
        "start prints the pid: {first:?}"
    );
    assert_eq!(
        pid,
        String::from_utf8_lossy(&second.stdout).trim(),
        "a second start finds the running copy"
    );
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    assert!(
        cmdline.starts_with(b"leasehold-watchdog\0"),
        "the process is named for status and stop"
    );
    let stop = rig.command(&options, "stop").status().unwrap();
    assert!(stop.success());
    // Gone, or a zombie left for an init that does not reap (as in some containers).
    let running = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| Some(!stat.rsplit_once(") ")?.1.starts_with('Z')))
        .unwrap_or(false);
    assert!(!running, "stop ends the watchdog");
    assert!(
        rig.log().contains("stopped ended by request"),
        "{}",
        rig.log()
    );
    assert_eq!(
        rig.decisions("start").len(),
        1,
        "one copy ran: {}",
        rig.log()
    );
}

#[test]
fn the_log_is_trimmed_to_its_newest_half() {
    let mut rig = Rig::new();
    std::fs::create_dir_all(rig.path("state")).unwrap();
    let old_line = "2026-01-01T00:00:00Z busy old decision padding padding padding\n";
    let old = old_line.repeat(300 * 1024 / old_line.len());
    std::fs::write(rig.path("state/log"), &old).unwrap();
    rig.run(&WatchdogOptions {
        idle_seconds: 3600,
        ..rig.options()
    });
    rig.wait_for_decisions("start", 1, PATIENCE);
    let log = rig.log();
    assert!(
        log.len() <= script::LOG_MAX_BYTES as usize,
        "bounded: {} bytes",
        log.len()
    );
    assert!(
        log.starts_with("2026-01-01T00:00:00Z busy old"),
        "cut at a line start"
    );
}

#[test]
fn hostile_settings_reach_the_script_as_literal_text() {
    let rig = Rig::new();
    let marker = rig.path("pwned");
    let options = WatchdogOptions {
        power_off: format!("echo '$(touch {})' `id`", marker.display()),
        pre_stop: Some("'; rm -rf ~ #".into()),
        ..rig.options()
    };
    let text = script(&options);
    let out = Command::new("bash")
        .arg("-n")
        .arg("-c")
        .arg(&text)
        .output()
        .unwrap();
    assert!(out.status.success(), "the script parses: {out:?}");
    // Source only the settings: each value must come back exactly as given.
    let settings = text.split("# ---- what follows").next().unwrap();
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "{settings}\nprintf '%s\\n' \"$power_off\" \"$pre_stop\""
        ))
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{}\n{}\n", options.power_off, options.pre_stop.unwrap())
    );
    assert!(!marker.exists(), "nothing in a setting ran");
}

#[test]
fn a_deleted_folder_ends_the_watchdog() {
    let mut rig = Rig::new();
    rig.run(&WatchdogOptions {
        idle_seconds: 3600,
        ..rig.options()
    });
    rig.wait_for_decisions("busy", 1, PATIENCE);
    std::fs::remove_dir_all(rig.path("state")).unwrap();
    let mut child = rig.child.take().expect("running");
    let deadline = Instant::now() + PATIENCE;
    while child.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "it must end once its folder is gone"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
