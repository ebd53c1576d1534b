//! The recent past in memory: a bounded ring of samples and process looks, enough for the live
//! findings (ten minutes) and never more, so hours of 8 GPUs × 1 s cost the same memory as one
//! minute.

use std::collections::VecDeque;

use super::findings::{evaluate, FindingContext, LiveFinding, TREND};
use super::sample::{ProcessList, Sample};

/// Most samples kept whatever the interval (ten minutes at 100 ms).
pub const MAX_SAMPLES: usize = 6000;
/// Most process looks kept.
const MAX_LOOKS: usize = 600;

#[derive(Debug, Default)]
pub struct LiveWindow {
    samples: VecDeque<Sample>,
    looks: VecDeque<ProcessList>,
}

impl LiveWindow {
    pub fn push_sample(&mut self, sample: Sample) {
        let from = sample.at - TREND;
        // Only the latest sample's UUIDs are needed (to match processes to GPUs); dropping the
        // older ones keeps ten minutes of eight GPUs small.
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
        while self.looks.front().is_some_and(|l| l.at < from) {
            self.looks.pop_front();
        }
    }

    pub fn push_processes(&mut self, look: ProcessList) {
        self.looks.push_back(look);
        while self.looks.len() > MAX_LOOKS {
            self.looks.pop_front();
        }
    }

    pub fn latest(&self) -> Option<&Sample> {
        self.samples.back()
    }

    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// The findings for what the window holds now.
    pub fn findings(&mut self, context: &FindingContext) -> Vec<LiveFinding> {
        let samples = self.samples.make_contiguous();
        let looks = self.looks.make_contiguous();
        evaluate(samples, looks, context)
    }
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone, Utc};

    use super::*;
    use crate::monitor::sample::GpuReading;

    #[test]
    fn hours_of_samples_keep_only_the_last_ten_minutes() {
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
            601,
            "ten minutes at one sample a second, ends included"
        );
        assert_eq!(
            window.latest().map(|s| s.at),
            Some(start + Duration::seconds(3 * 3600 - 1))
        );
    }
}
