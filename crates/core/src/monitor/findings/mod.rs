//! Live findings: pure rules over a window of samples, in Verify's shape (code, severity, title,
//! detail, fix steps with commands, evidence) plus the GPUs each one is about.
//!
//! Rules only read the window they are given, so each is tested with hand-made samples. Codes are
//! stable (`gpu.idle_peers`, `gpu.idle_while_billing`, `gpu.memory_near_full`, `gpu.throttled`,
//! `gpu.memory_leak_trend`, `gpu.process_died`); the UI and `leasehold monitor --json` match them.

mod idle;
mod memory;
mod process;
mod throttle;

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::sample::{ProcessList, Sample};
use super::summary::{MemoryTrend, SeenProcesses};
use crate::diagnose::{Finding, Lang};

/// A finding about some of the GPUs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct LiveFinding {
    #[serde(flatten)]
    pub finding: Finding,
    /// The GPUs it is about, by index.
    pub gpus: Vec<u32>,
}

/// What the rules need besides the samples.
#[derive(Debug, Clone, Copy)]
pub struct FindingContext {
    pub lang: Lang,
    /// Whether the machine is being paid for (a rented instance: yes; this computer: no).
    pub billing: bool,
}

/// Average utilisation at or above this is a GPU at work.
pub const BUSY_PCT: f64 = 30.0;
/// Average utilisation below this is an idle GPU (the same 5 % idle guards on AutoDL use).
pub const IDLE_PCT: f64 = 5.0;
/// Samples a verdict on utilisation needs, so one quiet second is not "idle".
pub const MIN_SAMPLES: usize = 3;
/// How far back utilisation and throttling are judged.
pub const RECENT: Duration = Duration::seconds(60);
/// How far back memory growth and vanished processes are judged (the summaries keep as long).
pub use crate::monitor::summary::TREND;

/// The samples of `window` no older than `span` before its last one.
pub(crate) fn recent(window: &[Sample], span: Duration) -> &[Sample] {
    let Some(last) = window.last() else {
        return window;
    };
    let from = last.at - span;
    let start = window.partition_point(|s| s.at < from);
    &window[start..]
}

/// What the rules read: the last minute of samples at full resolution (utilisation, throttling,
/// memory now) and the fixed-size summaries of the last ten minutes (memory trend, processes).
#[derive(Debug, Clone, Copy)]
pub struct Observed<'a> {
    /// Samples oldest first, reaching at least [`RECENT`] back from the last one.
    pub recent: &'a [Sample],
    pub memory: &'a MemoryTrend,
    pub processes: &'a SeenProcesses,
}

/// Every live finding for what was observed, errors first. Pure: same input, same findings.
pub fn evaluate_observed(observed: &Observed<'_>, context: &FindingContext) -> Vec<LiveFinding> {
    let recent = observed.recent;
    let mut findings = Vec::new();
    findings.extend(idle::idle_peers(recent, context));
    findings.extend(idle::idle_while_billing(recent, context));
    findings.extend(memory::near_full(recent, context));
    findings.extend(memory::leak_trend(observed.memory, context));
    findings.extend(throttle::throttled(recent, context));
    findings.extend(process::died(recent.last(), observed.processes, context));
    findings.sort_by_key(|f| f.finding.severity);
    findings
}

/// Every live finding for a window of raw samples and process looks (both oldest first), read
/// the way the live window reads them: the last minute as it is, the rest summarised.
pub fn evaluate(
    window: &[Sample],
    processes: &[ProcessList],
    context: &FindingContext,
) -> Vec<LiveFinding> {
    let mut memory = MemoryTrend::default();
    for sample in window {
        memory.push(sample);
    }
    let mut seen = SeenProcesses::default();
    for look in processes {
        seen.push(look.clone());
    }
    let observed = Observed {
        recent: recent(window, RECENT),
        memory: &memory,
        processes: &seen,
    };
    evaluate_observed(&observed, context)
}

/// Identity of a set of findings: codes and GPUs, so the stream only sends a change.
pub fn fingerprint(findings: &[LiveFinding]) -> Vec<(String, Vec<u32>)> {
    findings
        .iter()
        .map(|f| (f.finding.code.clone(), f.gpus.clone()))
        .collect()
}

/// `GPU 0`, `GPU 1, 2, 3` / `GPU 1、2、3`.
pub(crate) fn gpu_list(lang: Lang, gpus: &[u32]) -> String {
    let joined: Vec<String> = gpus.iter().map(u32::to_string).collect();
    let separator = match lang {
        Lang::ZhCn => "、",
        Lang::En => ", ",
    };
    format!("GPU {}", joined.join(separator))
}

pub(crate) fn clock_time(at: DateTime<Utc>) -> String {
    at.format("%H:%M:%S UTC").to_string()
}

#[cfg(test)]
mod tests;
