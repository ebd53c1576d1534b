//! GPU utilisation samples, as the monitor takes them over SSH every minute while the app runs,
//! and the one question reminders ask of them: since when has every GPU been idle?

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Utilisation of every GPU of one instance at one moment, in percent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct GpuSample {
    pub at: DateTime<Utc>,
    pub utilisation: Vec<u32>,
}

/// Samples further apart than this do not make one stretch: the app was closed or the laptop
/// slept, and nobody knows what the GPUs did in between. Three missed one-minute samples.
pub const MAX_SAMPLE_GAP: Duration = Duration::minutes(3);

/// When the current stretch of "every GPU below `below` percent" began, judged at `now`; `None`
/// when the newest sample (at or before `now`, not before `since`) is busy, stale or missing.
/// A sample that lists no GPU proves nothing and ends a stretch.
pub fn idle_since(
    samples: &[GpuSample],
    below: u32,
    since: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    let mut seen: Vec<&GpuSample> = samples
        .iter()
        .filter(|s| s.at >= since && s.at <= now)
        .collect();
    seen.sort_by_key(|s| s.at);
    let idle =
        |s: &GpuSample| !s.utilisation.is_empty() && s.utilisation.iter().all(|u| *u < below);
    let newest = seen.last()?;
    if now - newest.at > MAX_SAMPLE_GAP || !idle(newest) {
        return None;
    }
    let mut start = newest.at;
    for pair in seen.windows(2).rev() {
        let (earlier, later) = (pair[0], pair[1]);
        if later.at - earlier.at > MAX_SAMPLE_GAP || !idle(earlier) {
            break;
        }
        start = earlier.at;
    }
    Some(start)
}
