//! Used GPU memory over the last ten minutes as ten-second summaries. Each summary keeps the
//! running means and co-moments of (time, memory) (Welford), and summaries combine exactly
//! (Chan et al.), so the least-squares slope and correlation over the kept span equal those of
//! the raw samples, up to rounding.

use std::collections::{BTreeMap, VecDeque};

use chrono::{DateTime, Duration, DurationRound, Utc};

use super::TREND;
use crate::monitor::parse::MAX_GPUS;
use crate::monitor::sample::Sample;

/// One summary per GPU covers this long.
pub const BUCKET: Duration = Duration::seconds(10);
/// Summaries kept per GPU: ten minutes of them, the one in progress and the one the span's start
/// falls into.
const MAX_BUCKETS: usize = 62;

/// Count, means and co-moments of (t, m) pairs: all least squares needs.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Moments {
    n: u64,
    mean_t: f64,
    mean_m: f64,
    /// Sums of squared deviations from the means, and of their products.
    m2_t: f64,
    m2_m: f64,
    c_tm: f64,
}

impl Moments {
    /// Add one point (Welford's update).
    pub fn add(&mut self, t: f64, m: f64) {
        self.n += 1;
        let n = self.n as f64;
        let dt = t - self.mean_t;
        let dm = m - self.mean_m;
        self.mean_t += dt / n;
        self.mean_m += dm / n;
        self.m2_t += dt * (t - self.mean_t);
        self.m2_m += dm * (m - self.mean_m);
        self.c_tm += dt * (m - self.mean_m);
    }

    /// Add the points of `other`, whose times count from `offset` seconds after this one's.
    pub fn merge(&mut self, other: &Self, offset: f64) {
        if other.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = Self {
                mean_t: other.mean_t + offset,
                ..*other
            };
            return;
        }
        let (na, nb) = (self.n as f64, other.n as f64);
        let n = na + nb;
        let dt = other.mean_t + offset - self.mean_t;
        let dm = other.mean_m - self.mean_m;
        let weight = na * nb / n;
        self.mean_t += dt * nb / n;
        self.mean_m += dm * nb / n;
        self.m2_t += other.m2_t + dt * dt * weight;
        self.m2_m += other.m2_m + dm * dm * weight;
        self.c_tm += other.c_tm + dt * dm * weight;
        self.n += other.n;
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    /// Least-squares slope (memory per second) and the correlation of memory with time; `None`
    /// when either does not vary.
    pub fn slope_and_correlation(&self) -> Option<(f64, f64)> {
        if self.m2_t <= 0.0 || self.m2_m <= 0.0 {
            return None;
        }
        Some((
            self.c_tm / self.m2_t,
            self.c_tm / (self.m2_t.sqrt() * self.m2_m.sqrt()),
        ))
    }
}

/// One GPU over one ten-second bucket.
#[derive(Debug, Clone)]
struct Bucket {
    start: DateTime<Utc>,
    /// The last sample that had this GPU (with or without a memory reading).
    last_seen: DateTime<Utc>,
    first: Option<(DateTime<Utc>, f64)>,
    last: Option<(DateTime<Utc>, f64)>,
    total_mib: Option<u64>,
    /// Times in seconds from `start`.
    moments: Moments,
}

impl Bucket {
    fn new(start: DateTime<Utc>, at: DateTime<Utc>) -> Self {
        Self {
            start,
            last_seen: at,
            first: None,
            last: None,
            total_mib: None,
            moments: Moments::default(),
        }
    }
}

fn seconds_between(from: DateTime<Utc>, to: DateTime<Utc>) -> f64 {
    (to - from).num_milliseconds() as f64 / 1000.0
}

/// One GPU's memory over the kept span.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuMemoryTrend {
    pub index: u32,
    /// The first and last memory readings (MiB) and when they were taken.
    pub first: (DateTime<Utc>, f64),
    pub last: (DateTime<Utc>, f64),
    /// The latest total memory reported in the span.
    pub total_mib: Option<u64>,
    pub moments: Moments,
}

/// Used memory of every GPU over about the last ten minutes, in at most [`MAX_BUCKETS`]
/// summaries per GPU.
#[derive(Debug, Default, Clone)]
pub struct MemoryTrend {
    gpus: BTreeMap<u32, VecDeque<Bucket>>,
}

impl MemoryTrend {
    /// Add a sample (samples come oldest first) and forget what is older than ten minutes before it.
    pub fn push(&mut self, sample: &Sample) {
        let at = sample.at;
        let start = at.duration_trunc(BUCKET).unwrap_or(at);
        for gpu in &sample.gpus {
            if self.gpus.len() >= MAX_GPUS && !self.gpus.contains_key(&gpu.index) {
                continue;
            }
            let buckets = self.gpus.entry(gpu.index).or_default();
            // A clock that stepped back joins the newest bucket rather than reordering them.
            if buckets.back().is_none_or(|b| b.start < start) {
                buckets.push_back(Bucket::new(start, at));
            }
            let Some(bucket) = buckets.back_mut() else {
                continue;
            };
            bucket.last_seen = at;
            if gpu.memory_total_mib.is_some() {
                bucket.total_mib = gpu.memory_total_mib;
            }
            if let Some(used) = gpu.memory_used_mib {
                let used = used as f64;
                bucket.moments.add(seconds_between(bucket.start, at), used);
                bucket.first.get_or_insert((at, used));
                bucket.last = Some((at, used));
            }
        }
        self.forget_before(at - TREND);
    }

    /// Drop the buckets whose every sample is older than `from`, and GPUs left with none.
    fn forget_before(&mut self, from: DateTime<Utc>) {
        self.gpus.retain(|_, buckets| {
            while buckets
                .front()
                .is_some_and(|b| b.last_seen < from || buckets.len() > MAX_BUCKETS)
            {
                buckets.pop_front();
            }
            !buckets.is_empty()
        });
    }

    /// Each GPU with at least one memory reading in the span, by index.
    pub fn gpus(&self) -> impl Iterator<Item = GpuMemoryTrend> + '_ {
        self.gpus.iter().filter_map(|(index, buckets)| {
            let origin = buckets.front()?.start;
            let mut moments = Moments::default();
            for bucket in buckets {
                moments.merge(&bucket.moments, seconds_between(origin, bucket.start));
            }
            Some(GpuMemoryTrend {
                index: *index,
                first: buckets.iter().find_map(|b| b.first)?,
                last: buckets.iter().rev().find_map(|b| b.last)?,
                total_mib: buckets.iter().rev().find_map(|b| b.total_mib),
                moments,
            })
        })
    }

    /// Summaries held, all GPUs together.
    pub fn buckets(&self) -> usize {
        self.gpus.values().map(VecDeque::len).sum()
    }
}
