//! The events the sampler hands on: samples, process lists, gaps and changed findings. Apart
//! from `sample` because findings are judged from samples, and an event carries both.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::findings::LiveFinding;
use super::sample::{GapReason, ProcessList, Sample};

/// What the sampler hands on, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[ts(export)]
pub enum MonitorEvent {
    Sample(Sample),
    Processes(ProcessList),
    /// No samples from `since` (the last good one) until the series continues; charts draw a
    /// break here, never a made-up value.
    Gap {
        at: DateTime<Utc>,
        since: Option<DateTime<Utc>>,
        reason: GapReason,
    },
    /// The live findings changed (sent when the set of codes and GPUs changes).
    Findings {
        at: DateTime<Utc>,
        findings: Vec<LiveFinding>,
    },
}
