//! The recent past in memory, bounded by construction: the last minute of samples as they came
//! (the live charts' span and what the utilisation and throttle rules read), and fixed-size
//! summaries of the last ten minutes for the memory-trend and vanished-process rules
//! ([`super::summary`]). Hours of 8 GPUs × 1 s cost the same memory as ten minutes, and the
//! raw part the same as one minute.

use std::collections::VecDeque;

use super::findings::{evaluate_observed, FindingContext, LiveFinding, Observed, RECENT};
use super::sample::{ProcessList, Sample};
use super::summary::{MemoryTrend, SeenProcesses};

/// Most raw samples kept whatever the interval (one minute at 100 ms).
pub const MAX_SAMPLES: usize = 600;

#[derive(Debug, Default)]
pub struct LiveWindow {
    samples: VecDeque<Sample>,
    memory: MemoryTrend,
    processes: SeenProcesses,
}

impl LiveWindow {
    pub fn push_sample(&mut self, sample: Sample) {
        let from = sample.at - RECENT;
        self.memory.push(&sample);
        // Only the latest sample's UUIDs are needed (to match processes to GPUs).
        if let Some(previous) = self.samples.back_mut() {
            for gpu in &mut previous.gpus {
                gpu.uuid = None;
            }
        }
        self.samples.push_back(sample);
        while self.samples.len() > MAX_SAMPLES || self.samples.front().is_some_and(|s| s.at < from)
        {
            self.samples.pop_front();
        }
    }

    pub fn push_processes(&mut self, look: ProcessList) {
        self.processes.push(look);
    }

    pub fn latest(&self) -> Option<&Sample> {
        self.samples.back()
    }

    /// Raw samples held (the last minute).
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// Memory summaries held, all GPUs together.
    pub fn summaries(&self) -> usize {
        self.memory.buckets()
    }

    /// The findings for what the window holds now.
    pub fn findings(&mut self, context: &FindingContext) -> Vec<LiveFinding> {
        let observed = Observed {
            recent: self.samples.make_contiguous(),
            memory: &self.memory,
            processes: &self.processes,
        };
        evaluate_observed(&observed, context)
    }
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone, Utc};

    use super::*;
    use crate::monitor::sample::GpuReading;

    #[test]
    fn hours_of_samples_keep_one_minute_raw_and_ten_minutes_summarised() {
        let start = Utc
            .with_ymd_and_hms(2026, 3, 1, 0, 0, 0)
            .single()
            .expect("time");
        let mut window = LiveWindow::default();
        for second in 0..3 * 3600 {
            window.push_sample(Sample {
                at: start + Duration::seconds(second),
                gpus: (0..8).map(GpuReading::new).collect(),
            });
        }
        assert_eq!(
            window.len(),
            61,
            "one minute at one sample a second, ends included"
        );
        assert!(
            window.summaries() <= 8 * 62,
            "ten-second summaries of ten minutes per GPU, not {}",
            window.summaries()
        );
        assert_eq!(
            window.latest().map(|s| s.at),
            Some(start + Duration::seconds(3 * 3600 - 1))
        );
    }
}
