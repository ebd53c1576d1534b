//! The sampler on a [`Target`]: one long-lived `nvidia-smi --query-gpu … -lms N` process on one
//! exec channel for the GPUs, and a second (`--query-compute-apps … -l N`) for the processes.
//! Nothing is started per sample, which is what keeps the instance's side cheap (see
//! `tests/bench/monitor.sh`).
//!
//! A stream that ends (the process was killed, the link dropped) or goes silent (a hung driver,
//! a frozen link) is started again, with a gap marked in the series; the samples after it are
//! real ones, never a value carried over. Only a machine that never produced a sample — no
//! `nvidia-smi`, a broken driver — is an error.

use std::time::Duration;

use tokio::sync::mpsc::UnboundedSender;
use tokio::time::Instant;

use super::error::MonitorError;
use super::event::MonitorEvent;
use super::fields::{processes_command, QueryFields};
use super::options::SamplerOptions;
use super::parse::{ProcessAssembler, SampleAssembler};
use super::sample::{GapReason, ProcessList, Sample};
use crate::clock::Clock;
use crate::target::{CommandSpec, LineSplitter, OutputStream, Target, TargetError};

/// A stream runs until it is stopped; this only bounds a channel the instance never closes.
const STREAM_TIMEOUT: Duration = Duration::from_secs(60 * 60 * 24 * 30);
/// How long the process stream may stay quiet before its current look is complete.
const LOOK_QUIET: Duration = Duration::from_millis(600);
/// Text other than samples kept from a stream, to say why it failed.
const KEEP_TEXT: usize = 4096;

/// What a stream run saw, line by line.
enum Seen<'a> {
    Line(&'a str),
    /// Nothing arrived for a while (the caller decides whether that is a stall).
    Quiet,
}

enum StreamEnd {
    Closed(Result<Option<u32>, TargetError>),
    /// The caller gave up on it (a stall).
    Abandoned,
}

/// Run `spec`, passing each output line (both streams) to `on_seen`, and `Quiet` after each
/// `quiet` without a line. `on_seen` returning false abandons the run (dropping the channel).
async fn stream_lines(
    target: &dyn Target,
    spec: &CommandSpec,
    quiet: Duration,
    on_seen: &mut (dyn FnMut(Seen<'_>) -> bool + Send),
) -> StreamEnd {
    let (line_tx, mut line_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let mut splitter = LineSplitter::new(move |_: OutputStream, line: &str| {
        let _ = line_tx.send(line.to_owned());
    });
    let mut sink = |stream: OutputStream, chunk: &[u8]| splitter.push(stream, chunk);
    let run = target.run_streaming(spec, &mut sink);
    tokio::pin!(run);
    loop {
        tokio::select! {
            biased;
            Some(line) = line_rx.recv() => {
                if !on_seen(Seen::Line(&line)) {
                    return StreamEnd::Abandoned;
                }
            }
            result = &mut run => {
                while let Ok(line) = line_rx.try_recv() {
                    on_seen(Seen::Line(&line));
                }
                return StreamEnd::Closed(result);
            }
            () = tokio::time::sleep(quiet) => {
                if !on_seen(Seen::Quiet) {
                    return StreamEnd::Abandoned;
                }
            }
        }
    }
}

fn spec(options: &SamplerOptions, command: &str) -> CommandSpec {
    CommandSpec::new(format!("{}{command}", options.prelude()))
        .login_shell()
        .timeout(STREAM_TIMEOUT)
}

/// The GPU stream, restarted for as long as the caller keeps polling. Returns only the error of
/// a machine that never produced a sample.
pub(super) async fn gpu_loop(
    target: &dyn Target,
    clock: &dyn Clock,
    options: &SamplerOptions,
    events: &UnboundedSender<MonitorEvent>,
) -> Result<(), MonitorError> {
    let mut fields = QueryFields::default();
    let mut ever_sampled = false;
    let mut last_sample_at = None;
    let mut gap_open = false;
    let mut backoff = Duration::from_secs(1);
    let interval_ms = u64::try_from(options.interval.as_millis()).unwrap_or(u64::MAX);
    loop {
        let spec = spec(options, &fields.stream_command(interval_ms));
        let mut assembler = SampleAssembler::default();
        let mut other_text = String::new();
        let mut sampled_this_run = false;
        let mut last_line = Instant::now();
        let mut stalled = false;
        let quiet = (options.interval / 2).max(Duration::from_millis(50));
        let end = stream_lines(target, &spec, quiet, &mut |seen| match seen {
            Seen::Line(line) => {
                last_line = Instant::now();
                if let Some(gpus) = assembler.push(&fields, line) {
                    let at = clock.now();
                    if gap_open {
                        gap_open = false;
                    }
                    sampled_this_run = true;
                    last_sample_at = Some(at);
                    let _ = events.send(MonitorEvent::Sample(Sample { at, gpus }));
                } else if other_text.len() < KEEP_TEXT && !line.trim().is_empty() {
                    other_text.push_str(line);
                    other_text.push('\n');
                }
                true
            }
            Seen::Quiet => {
                // A sample whose GPUs all arrived is handed on without waiting for the next
                // tick when the count column is missing.
                if last_line.elapsed() >= quiet && sampled_this_run {
                    if let Some(gpus) = assembler.take() {
                        let at = clock.now();
                        last_sample_at = Some(at);
                        let _ = events.send(MonitorEvent::Sample(Sample { at, gpus }));
                    }
                }
                stalled = last_line.elapsed() >= options.stall_after();
                !stalled
            }
        })
        .await;
        ever_sampled |= sampled_this_run;
        if !sampled_this_run {
            if let Some(next) = fields.after_refusal(&other_text) {
                tracing::info!(fields = ?next, "nvidia-smi refused a field; asking without it");
                fields = next;
                continue;
            }
            if !ever_sampled {
                return Err(first_start_failure(target, end, &other_text));
            }
        } else {
            backoff = Duration::from_secs(1);
        }
        if !gap_open {
            gap_open = true;
            let reason = match (&end, stalled) {
                (_, true) | (StreamEnd::Abandoned, _) => GapReason::Stalled,
                (StreamEnd::Closed(Ok(_)), _) => GapReason::Ended,
                (StreamEnd::Closed(Err(_)), _) => GapReason::Unreachable,
            };
            let _ = events.send(MonitorEvent::Gap {
                at: clock.now(),
                since: last_sample_at,
                reason,
            });
        }
        if let StreamEnd::Closed(Err(err)) = &end {
            tracing::info!(%err, "GPU stream failed; starting it again");
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(options.max_backoff);
    }
}

/// Why a stream that never produced a sample failed.
fn first_start_failure(target: &dyn Target, end: StreamEnd, text: &str) -> MonitorError {
    let describe = || target.describe();
    match end {
        StreamEnd::Closed(Err(err)) => err.into(),
        StreamEnd::Closed(Ok(status)) => {
            if status == Some(127)
                || text.contains("command not found")
                || (text.contains("not found") && text.contains("nvidia-smi"))
            {
                MonitorError::NoNvidiaSmi { target: describe() }
            } else {
                let message = text
                    .lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty())
                    .unwrap_or("nvidia-smi printed nothing")
                    .chars()
                    .take(300)
                    .collect();
                MonitorError::DriverFailed {
                    target: describe(),
                    message,
                }
            }
        }
        StreamEnd::Abandoned => MonitorError::DriverFailed {
            target: describe(),
            message: "nvidia-smi printed no sample".to_owned(),
        },
    }
}

/// The compute-process stream. Never an error: a driver without `--query-compute-apps` only
/// means no process table; the stream is tried again now and then.
pub(super) async fn process_loop(
    target: &dyn Target,
    clock: &dyn Clock,
    options: &SamplerOptions,
    events: &UnboundedSender<MonitorEvent>,
) {
    let every = options.processes_every;
    let seconds = every.as_secs().max(1);
    let mut backoff = every;
    loop {
        let spec = spec(options, &processes_command(seconds));
        let mut assembler = ProcessAssembler::default();
        let mut last_look = Instant::now();
        let send = |processes| {
            let _ = events.send(MonitorEvent::Processes(ProcessList {
                at: clock.now(),
                processes,
            }));
        };
        let mut sent_any = false;
        let _ = stream_lines(target, &spec, LOOK_QUIET, &mut |seen| {
            match seen {
                Seen::Line(line) => {
                    if let Some(look) = assembler.push(line) {
                        send(look);
                        last_look = Instant::now();
                        sent_any = true;
                    }
                }
                Seen::Quiet => {
                    if let Some(look) = assembler.take() {
                        send(look);
                        last_look = Instant::now();
                        sent_any = true;
                    } else if last_look.elapsed() >= every + Duration::from_secs(1) {
                        // nvidia-smi prints nothing when nothing runs.
                        send(Vec::new());
                        last_look = Instant::now();
                        sent_any = true;
                    }
                }
            }
            true
        })
        .await;
        backoff = if sent_any {
            every
        } else {
            (backoff * 2).min(Duration::from_secs(60))
        };
        tokio::time::sleep(backoff).await;
    }
}
