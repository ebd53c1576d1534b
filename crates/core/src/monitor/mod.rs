//! The live GPU monitor: what every GPU of an instance is doing, second by second, with the
//! findings that cost money (GPUs paid for and idle, memory about to run out, a card slowed by
//! heat) and the minute history behind the bill's GPU-busy hours and the idle reminder.
//!
//! - [`stream`]: one long-lived `nvidia-smi --query-gpu … -lms N` per instance over one SSH
//!   channel (plus one for the compute processes), restarted with a gap marker when it dies;
//!   [`local`]: the same events from NVML on this computer.
//! - [`parse`] and [`fields`]: the pure CSV reading, tested on real captures.
//! - [`window`]: the bounded in-memory past; [`findings`]: pure rules over it.
//! - [`history`]: downsampling to one row per GPU and minute in SQLite, busy hours, idle streaks.
//! - [`live`]: the app's side — a stoppable stream per instance and the low-rate background
//!   sampler that feeds the history while the dashboard is closed.
//!
//! [`history`] also has `utilisation_since`, `idle_streak` (the reminders' `gpu_idle` trigger) and
//! `busy_hours` / `busy_hours_for` (GPU-busy hours and what idle time cost, on the instance page's
//! bill and in `leasehold cost` as `gpu_busy`). [`summary`] keeps the ten minutes that the
//! memory-trend and vanished-process rules need as fixed-size summaries.
//!
//! The path of a sample: lines become samples in `parse::SampleAssembler` (complete when the
//! `count` column's GPUs arrived), then go through [`consume`] (the bounded window; a `findings`
//! event comes before the sample whenever the findings change) to the caller, and into
//! `history::MinuteAggregator`, whose finished minutes are merged into `gpu_minutes`. A stream that
//! ends or stays silent for 3 intervals is started again after a backoff with one `gap` event; a
//! refused field before the first sample only narrows the query. The app stops a stream through
//! `verify::RunningChecks` under `monitor:<instance>`; a language switch goes through
//! `live::StreamLanguages`, and [`consume_in`] sends the findings again at once in the new
//! language.

pub mod background;
mod error;
pub mod event;
pub mod fields;
pub mod findings;
pub mod history;
pub mod live;
pub mod local;
mod options;
pub mod parse;
pub mod sample;
mod stream;
pub mod summary;
pub mod window;

use std::ops::ControlFlow;

use tokio::sync::mpsc::UnboundedReceiver;
use tokio::sync::watch;

use crate::clock::Clock;
use crate::diagnose::Lang;
use crate::target::Target;

pub use error::MonitorError;
pub use event::MonitorEvent;
pub use findings::{FindingContext, LiveFinding};
pub use options::{SamplerOptions, DEFAULT_INTERVAL, MIN_INTERVAL};
pub use sample::{ComputeProcess, GapReason, GpuReading, ProcessList, Sample, ThrottleReason};
pub use window::LiveWindow;

/// Turns the raw events into what a consumer sees: processes matched to GPUs, the window kept,
/// and a `Findings` event (before the sample it was drawn from) whenever the findings change.
pub async fn consume(
    events: UnboundedReceiver<MonitorEvent>,
    context: &FindingContext,
    sink: &mut (dyn FnMut(MonitorEvent) -> ControlFlow<()> + Send),
) {
    // A language nobody can change: the sender is dropped at once.
    let (_, language) = watch::channel(context.lang);
    consume_in(events, context, language, sink).await;
}

/// [`consume`], with the findings re-worded (sent again at once) whenever `language` changes.
pub async fn consume_in(
    mut events: UnboundedReceiver<MonitorEvent>,
    context: &FindingContext,
    mut language: watch::Receiver<Lang>,
    sink: &mut (dyn FnMut(MonitorEvent) -> ControlFlow<()> + Send),
) {
    let mut context = *context;
    let mut language_open = true;
    let mut window = LiveWindow::default();
    let mut shown = Vec::new();
    loop {
        let event = tokio::select! {
            event = events.recv() => match event {
                Some(event) => event,
                None => return,
            },
            changed = language.changed(), if language_open => {
                if changed.is_err() {
                    language_open = false;
                    continue;
                }
                context.lang = *language.borrow_and_update();
                let Some(at) = window.latest().map(|s| s.at) else {
                    continue;
                };
                let findings = window.findings(&context);
                shown = findings::fingerprint(&findings);
                if sink(MonitorEvent::Findings { at, findings }).is_break() {
                    return;
                }
                continue;
            }
        };
        let flow = match event {
            MonitorEvent::Sample(sample) => {
                let at = sample.at;
                window.push_sample(sample.clone());
                let findings = window.findings(&context);
                let fingerprint = findings::fingerprint(&findings);
                if fingerprint != shown {
                    shown = fingerprint;
                    if sink(MonitorEvent::Findings { at, findings }).is_break() {
                        return;
                    }
                }
                sink(MonitorEvent::Sample(sample))
            }
            MonitorEvent::Processes(mut look) => {
                if let Some(latest) = window.latest() {
                    parse::attach_gpu_indexes(&mut look.processes, &latest.gpus);
                }
                window.push_processes(look.clone());
                sink(MonitorEvent::Processes(look))
            }
            other => sink(other),
        };
        if flow.is_break() {
            return;
        }
    }
}

/// Sample `target` until `sink` says stop (or the future is dropped): GPU samples, process
/// looks, gaps and findings, in order. Fails only when the machine never produced a sample.
pub async fn run(
    target: &dyn Target,
    clock: &dyn Clock,
    options: &SamplerOptions,
    context: &FindingContext,
    sink: &mut (dyn FnMut(MonitorEvent) -> ControlFlow<()> + Send),
) -> Result<(), MonitorError> {
    let (_, language) = watch::channel(context.lang);
    run_in(target, clock, options, context, language, sink).await
}

/// [`run`], with the findings re-worded whenever `language` changes (the dashboard follows the
/// app's language while it is open).
pub async fn run_in(
    target: &dyn Target,
    clock: &dyn Clock,
    options: &SamplerOptions,
    context: &FindingContext,
    language: watch::Receiver<Lang>,
    sink: &mut (dyn FnMut(MonitorEvent) -> ControlFlow<()> + Send),
) -> Result<(), MonitorError> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let gpus = stream::gpu_loop(target, clock, options, &tx);
    let processes = stream::process_loop(target, clock, options, &tx);
    let consumer = consume_in(rx, context, language, sink);
    tokio::select! {
        failed = gpus => failed,
        () = processes => Ok(()),
        () = consumer => Ok(()),
    }
}

#[cfg(test)]
mod tests;
