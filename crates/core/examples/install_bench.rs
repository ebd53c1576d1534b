//! `install_bench`: following a remote job's log the way the Install page does, against
//! OpenSSH, over the userspace delay link (default 25 ms each way, RTT 50 ms).
//!
//! Run by `tests/bench/install.sh` (`make bench`). Two figures, each with the baseline it is
//! read against, measured in the same run:
//!
//! 1. Streaming: a job prints numbered 100-byte lines at 10 MB/s; `install::follow_recorded`
//!    (the code behind the app's `job_attach` channel, each piece serialised to JSON as the
//!    channel does) against `ssh host 'generator | cat'`. Sustained rate from first to last
//!    byte, and every line checked: count, order, SHA-256 of the whole stream.
//! 2. Re-attach: a job prints a line every 10 ms; while it is followed, the link is cut for a
//!    while and restored. Time from the link restored to the first new byte, against a fresh
//!    handshake over the same link plus two round trips.
//!
//! It asserts nothing: performance is read, not tested. Needs root (namespaces, TUN).
//! Options: `--one-way-ms N` (25), `--seconds N` streaming length (8), `--mbps N` (10),
//! `--cut-seconds N` (8).

use std::collections::BTreeMap;
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use leasehold_core::clock::{Clock, SystemClock};
use leasehold_core::install::{self, JobLog};
use leasehold_core::job::record::{self, NewJob};
use leasehold_core::job::{JobId, JobRoot};
use leasehold_core::ssh::{
    parse_ssh_command, ConnectOptions, ConnectRequest, Credentials, Destination, KeyFile,
    KnownHosts, LinkState, SshTarget,
};
use leasehold_core::store::Store;
use leasehold_testkit::delay_link::DelayLink;
use leasehold_testkit::{ClientKey, SshdOptions, TestHost};
use sha2::{Digest, Sha256};

type BenchResult<T> = Result<T, String>;

const LINE: usize = 100;
/// 10 digits, a space, 88 letters, a newline: every line is [`LINE`] bytes and names itself.
const PAYLOAD: &str =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyzABCDEFGHIJ";

/// Prints `lines` numbered lines at `rate` bytes per second, in 10 ms ticks.
const GENERATOR: &str = r#"import sys, time
rate, total = int(sys.argv[1]), int(sys.argv[2])
pay = sys.argv[3].encode()
per_tick = max(1, rate // 100 // 100)
out = sys.stdout.buffer
start = time.monotonic()
n = 0
while n < total:
    k = min(per_tick, total - n)
    out.write(b"".join(b"%010d %s\n" % (i, pay) for i in range(n, n + k)))
    out.flush()
    n += k
    wait = start + n * 100 / rate - time.monotonic()
    if wait > 0:
        time.sleep(wait)
"#;

struct Args {
    one_way_ms: u64,
    seconds: u64,
    mbps: u64,
    cut_seconds: u64,
}

impl Args {
    fn parse(mut words: impl Iterator<Item = String>) -> Result<Self, String> {
        let mut args = Self {
            one_way_ms: 25,
            seconds: 8,
            mbps: 10,
            cut_seconds: 8,
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
                "--seconds" => args.seconds = number.max(1),
                "--mbps" => args.mbps = number.max(1),
                "--cut-seconds" => args.cut_seconds = number,
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
            eprintln!("install_bench: {message}\nusage: install_bench [--one-way-ms N] [--seconds N] [--mbps N] [--cut-seconds N]");
            std::process::exit(2);
        }
    };
    if !leasehold_testkit::netns::can_run("install_bench") {
        return;
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("install_bench failed: tokio runtime: {err}");
            std::process::exit(1);
        }
    };
    if let Err(err) = runtime.block_on(run(&args)) {
        eprintln!("install_bench failed: {err}");
        std::process::exit(1);
    }
}

struct Bench {
    // Field order is drop order: sshd first, then the link and its namespace, then the files.
    sshd: TestHost,
    link: DelayLink,
    dir: tempfile::TempDir,
    store: Store,
}

impl Bench {
    fn known_hosts(&self) -> std::path::PathBuf {
        self.dir.path().join("known_hosts")
    }

    /// Connects the way the app does once the host key is known (its default options).
    async fn connect(&self) -> BenchResult<SshTarget> {
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
            known_hosts: KnownHosts::only(self.known_hosts()),
            accept_new_host_key: false,
            ..ConnectOptions::default()
        };
        SshTarget::connect(destination, credentials, options)
            .await
            .map_err(|e| format!("Leasehold could not connect: {e}"))
    }

    fn openssh(&self, remote: &str) -> Command {
        let mut command = Command::new("ssh");
        command
            .args(["-F", "/dev/null", "-i"])
            .arg(self.sshd.key(ClientKey::Ed25519))
            .args(["-o", &format!("Port={}", self.sshd.port())])
            .args([
                "-o",
                "IdentitiesOnly=yes",
                "-o",
                "BatchMode=yes",
                "-o",
                "LogLevel=ERROR",
            ])
            .args([
                "-o",
                &format!("UserKnownHostsFile={}", self.known_hosts().display()),
            ])
            .args(["-o", "StrictHostKeyChecking=yes"])
            .arg(format!("{}@{}", self.sshd.user(), self.link.ns_addr()))
            .arg(remote)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        command
    }

    /// Start `script` as a recorded job (as the Install page's Run does) and return its id.
    async fn start_job(&self, target: &SshTarget, tag: &str, script: &str) -> BenchResult<String> {
        let now = SystemClock.now();
        let id =
            JobId::parse(&format!("{}-{tag}", JobId::generate(now))).map_err(|e| e.to_string())?;
        let request = ConnectRequest {
            ssh_command: self.sshd.ssh_command(),
            ..ConnectRequest::default()
        };
        let options = BTreeMap::new();
        let label = target.destination().label();
        let job = NewJob {
            id: &id,
            instance: None,
            target: &label,
            request: &request,
            name: Some(tag),
            recipe: None,
            options: &options,
            script,
            now,
        };
        record::start_recorded(&self.store, target, &JobRoot::Home, &job)
            .await
            .map_err(|e| format!("job start: {e}"))?;
        Ok(id.to_string())
    }
}

async fn start(one_way: Duration) -> BenchResult<Bench> {
    let link = DelayLink::start(one_way).map_err(|e| format!("delay link: {e}"))?;
    let dir = tempfile::Builder::new()
        .prefix("leasehold-install-bench-")
        .tempdir()
        .map_err(|e| format!("temp dir: {e}"))?;
    let sshd = TestHost::start_with(SshdOptions {
        listen: link.ns_addr().into(),
        netns: Some(link.namespace().name().to_owned()),
        ..SshdOptions::default()
    });
    std::fs::write(
        dir.path().join("known_hosts"),
        format!(
            "[{}]:{} {}",
            link.ns_addr(),
            sshd.port(),
            sshd.host_public_key()
        ),
    )
    .map_err(|e| format!("known_hosts: {e}"))?;
    let store = Store::open(&dir.path().join("bench.sqlite3"))
        .await
        .map_err(|e| format!("store: {e}"))?;
    Ok(Bench {
        sshd,
        link,
        dir,
        store,
    })
}

async fn run(args: &Args) -> BenchResult<()> {
    let one_way = Duration::from_millis(args.one_way_ms);
    let bench = start(one_way).await?;
    let rtt = 2 * one_way;
    println!(
        "Install benchmark: sshd in namespace {} behind the delay link, RTT {} ms",
        bench.link.namespace().name(),
        rtt.as_millis()
    );
    streaming(&bench, args).await?;
    reattach(&bench, args, rtt).await?;
    let stats = bench.link.stats();
    println!(
        "\nlink: {} packets forwarded, {} dropped in the link's queue (nonzero: the machine starved the link, distrust the figures)",
        stats.forwarded, stats.dropped_queue_full
    );
    Ok(())
}

/// What a stream delivered: bytes, lines in order, the hash, first and last byte times.
#[derive(Default)]
struct Received {
    bytes: u64,
    lines: u64,
    out_of_order: u64,
    partial: Vec<u8>,
    hash: Sha256,
    first: Option<Instant>,
    last: Option<Instant>,
}

impl Received {
    fn take(&mut self, chunk: &[u8]) {
        let now = Instant::now();
        self.first.get_or_insert(now);
        self.last = Some(now);
        self.bytes += chunk.len() as u64;
        self.hash.update(chunk);
        self.partial.extend_from_slice(chunk);
        let mut start = 0;
        while let Some(end) = self.partial[start..].iter().position(|b| *b == b'\n') {
            let line = &self.partial[start..start + end];
            let number = std::str::from_utf8(line.get(..10).unwrap_or_default())
                .ok()
                .and_then(|n| n.parse::<u64>().ok());
            if number != Some(self.lines) {
                self.out_of_order += 1;
            }
            self.lines += 1;
            start += end + 1;
        }
        self.partial.drain(..start);
    }

    fn span(&self) -> Duration {
        match (self.first, self.last) {
            (Some(a), Some(b)) => b - a,
            _ => Duration::ZERO,
        }
    }
}

fn expected_hash(lines: u64) -> String {
    let mut hash = Sha256::new();
    for i in 0..lines {
        hash.update(format!("{i:010} {PAYLOAD}\n").as_bytes());
    }
    hex::encode(hash.finalize())
}

fn generator_command(rate: u64, lines: u64) -> String {
    format!(
        "python3 -c {} {rate} {lines} {PAYLOAD}",
        leasehold_core::shell::quote(GENERATOR)
    )
}

fn mb_per_s(bytes: u64, span: Duration) -> f64 {
    bytes as f64 / 1e6 / span.as_secs_f64().max(1e-9)
}

async fn streaming(bench: &Bench, args: &Args) -> BenchResult<()> {
    let rate = args.mbps * 1_000_000;
    let lines = rate * args.seconds / LINE as u64;
    let expected = expected_hash(lines);
    let generator = generator_command(rate, lines);

    // Baseline: OpenSSH carrying the generator's output live.
    let mut baseline = Received::default();
    let mut child = bench
        .openssh(&format!("{generator} | cat"))
        .spawn()
        .map_err(|e| format!("ssh: {e}"))?;
    let mut stdout = child.stdout.take().ok_or("ssh without stdout")?;
    let mut buffer = vec![0u8; 256 * 1024];
    loop {
        let n = stdout
            .read(&mut buffer)
            .map_err(|e| format!("ssh read: {e}"))?;
        if n == 0 {
            break;
        }
        baseline.take(&buffer[..n]);
    }
    let _ = child.wait();

    // Leasehold: the job runs detached; the Install page's follow code streams its log.
    let target = bench.connect().await?;
    let id = bench.start_job(&target, "stream", &generator).await?;
    let ours = Arc::new(Mutex::new(Received::default()));
    let mut pieces = 0u64;
    let mut json_bytes = 0u64;
    let status = {
        let ours = ours.clone();
        let mut sink = |log: JobLog| {
            // What the Tauri channel does with each piece.
            json_bytes += serde_json::to_string(&log)
                .map(|s| s.len() as u64)
                .unwrap_or(0);
            pieces += 1;
            if let Ok(mut ours) = ours.lock() {
                ours.take(log.text.as_bytes());
            }
        };
        install::follow_recorded(&bench.store, &target, &id, 0, &mut sink, &SystemClock)
            .await
            .map_err(|e| format!("follow: {e}"))?
    };
    let ours = std::mem::take(&mut *ours.lock().map_err(|_| "poisoned")?);
    let ours_hash = hex::encode(ours.hash.clone().finalize());
    let base_hash = hex::encode(baseline.hash.clone().finalize());

    let base_rate = mb_per_s(baseline.bytes, baseline.span());
    let our_rate = mb_per_s(ours.bytes, ours.span());
    println!(
        "\nLog streaming, {} MB/s for {} s ({lines} lines of {LINE} bytes):",
        args.mbps, args.seconds
    );
    println!(
        "  ssh host 'generator | cat' (OpenSSH)      {base_rate:6.2} MB/s  {:>9} lines  out of order {}  sha256 {}",
        baseline.lines,
        baseline.out_of_order,
        if base_hash == expected { "ok" } else { "MISMATCH" }
    );
    println!(
        "  Leasehold job + follow (UI channel path)  {our_rate:6.2} MB/s  {:>9} lines  out of order {}  sha256 {}  ({pieces} pieces, {:.1} MB of JSON, job {})",
        ours.lines,
        ours.out_of_order,
        if ours_hash == expected { "ok" } else { "MISMATCH" },
        json_bytes as f64 / 1e6,
        status.state.as_str()
    );
    println!(
        "  ratio Leasehold / ssh: {:.2}x (goal >= 0.90x, no dropped lines: {})",
        our_rate / base_rate.max(1e-9),
        if ours.lines == lines && ours.out_of_order == 0 && ours_hash == expected {
            "none dropped"
        } else {
            "LINES LOST OR REPEATED"
        }
    );
    target.disconnect().await;
    Ok(())
}

async fn reattach(bench: &Bench, args: &Args, rtt: Duration) -> BenchResult<()> {
    // The baseline: a fresh connection's handshake over the same link (median of three).
    let mut handshakes = Vec::new();
    for _ in 0..3 {
        let started = Instant::now();
        let target = bench.connect().await?;
        handshakes.push(started.elapsed());
        target.disconnect().await;
    }
    handshakes.sort();
    let handshake = handshakes[1];

    let target = bench.connect().await?;
    // What one command costs on a live connection (channel open, exec, the remote shell and
    // sshd's session set-up, exit): the part of a re-attach after the handshake.
    let mut execs = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        target
            .exec(&leasehold_core::target::CommandSpec::new("echo x"))
            .await
            .map_err(|e| format!("exec: {e}"))?;
        execs.push(started.elapsed());
    }
    let first_exec = execs[0];
    execs.sort();
    let exec = execs[2];
    let lines = 100 * (args.cut_seconds + 12);
    let script = format!("i=0; while [ $i -lt {lines} ]; do printf '%010d {PAYLOAD}\\n' $i; i=$((i+1)); sleep 0.01; done");
    let id = bench.start_job(&target, "cut", &script).await?;
    // When the follow code gave up on the old connection and when a fresh one was up.
    let link_changes: Arc<Mutex<Vec<(Instant, LinkState)>>> = Arc::default();
    let watcher = {
        let mut states = target.link_state();
        let link_changes = link_changes.clone();
        tokio::spawn(async move {
            while states.changed().await.is_ok() {
                let state = *states.borrow_and_update();
                if let Ok(mut changes) = link_changes.lock() {
                    changes.push((Instant::now(), state));
                }
            }
        })
    };
    let arrivals: Arc<Mutex<Vec<(Instant, usize)>>> = Arc::default();
    let received = Arc::new(Mutex::new(Received::default()));
    let follow = {
        let arrivals = arrivals.clone();
        let received = received.clone();
        async {
            let mut sink = move |log: JobLog| {
                if let Ok(mut a) = arrivals.lock() {
                    a.push((Instant::now(), log.text.len()));
                }
                if let Ok(mut r) = received.lock() {
                    r.take(log.text.as_bytes());
                }
            };
            install::follow_recorded(&bench.store, &target, &id, 0, &mut sink, &SystemClock).await
        }
    };
    let cutter = async {
        tokio::time::sleep(Duration::from_secs(3)).await;
        bench.link.cut_until_restored();
        tokio::time::sleep(Duration::from_secs(args.cut_seconds)).await;
        bench.link.restore();
        Instant::now()
    };
    let cut_at = Instant::now() + Duration::from_secs(3);
    let (status, restored) = tokio::join!(follow, cutter);
    watcher.abort();
    let status = status.map_err(|e| format!("follow across the cut: {e}"))?;
    let first_after = arrivals
        .lock()
        .map_err(|_| "poisoned")?
        .iter()
        .find(|(at, _)| *at > restored)
        .map(|(at, _)| *at - restored);
    let received = std::mem::take(&mut *received.lock().map_err(|_| "poisoned")?);
    let goal = handshake + 2 * rtt;
    println!(
        "\nRe-attach after a {} s cut (job printing a line every 10 ms):",
        args.cut_seconds
    );
    println!(
        "  baseline: handshake {} ms + 2 RTT {} ms = {} ms",
        handshake.as_millis(),
        (2 * rtt).as_millis(),
        goal.as_millis()
    );
    println!(
        "  one command on a live connection (channel, exec, remote shell): {} ms (median of 5; the first on a fresh connection {} ms)",
        exec.as_millis(),
        first_exec.as_millis()
    );
    match first_after {
        Some(latency) => println!(
            "  link restored -> first new byte: {} ms; ratio {:.2}x the baseline (goal <= 1.00x)",
            latency.as_millis(),
            latency.as_secs_f64() / goal.as_secs_f64()
        ),
        None => println!("  no byte arrived after the link was restored"),
    }
    let changes = link_changes.lock().map_err(|_| "poisoned")?.clone();
    let ms = |from: Instant, to: Instant| {
        if to >= from {
            format!("{} ms", (to - from).as_millis())
        } else {
            format!("-{} ms", (from - to).as_millis())
        }
    };
    let redialled = changes
        .iter()
        .find(|(_, state)| matches!(state, LinkState::Reconnecting { .. }));
    let reconnected = changes
        .iter()
        .find(|(at, state)| *at > restored && *state == LinkState::Connected);
    match (redialled, reconnected) {
        (Some((gave_up, _)), Some((up, _))) => {
            println!(
                "  old connection given up {} after the cut; fresh connection up {} after the link was restored",
                ms(cut_at, *gave_up),
                ms(restored, *up)
            );
            if let Some(latency) = first_after {
                println!(
                    "  fresh connection up -> first new byte: {} (one channel, one exec; compare the first command on a fresh connection above)",
                    ms(*up, restored + latency)
                );
            }
        }
        _ => println!("  no fresh connection: the old one carried on after the cut"),
    }
    println!(
        "  whole log after the cut: {} of {lines} lines, out of order {}, job {}",
        received.lines,
        received.out_of_order,
        status.state.as_str()
    );
    target.disconnect().await;
    Ok(())
}
