//! Pure parsers for the sampler's streams: a `--query-gpu` CSV line into a [`GpuReading`], lines
//! into whole samples, and `--query-compute-apps` lines into process lists.
//!
//! The instance is untrusted and drivers vary: `[N/A]`, `[Not Supported]`, `[Unknown Error]`,
//! `ERR!`, units left on (`81559 MiB`), a line cut short, a banner or an error text mixed into
//! the stream. None of it may crash or become a made-up number: an unreadable value is `None`,
//! an unreadable line is skipped.

use std::collections::HashMap;

use super::fields::{Field, QueryFields};
use super::sample::{ComputeProcess, GpuReading, ThrottleReason};

/// The most GPUs one sample may hold (the largest machines rented have 8 or 16); more lines in
/// one burst than this are a hostile or broken stream, not GPUs.
pub const MAX_GPUS: usize = 64;

/// A value, or `None` for the placeholders nvidia-smi prints when it has none.
fn value(raw: &str) -> Option<&str> {
    let raw = raw.trim();
    if raw.is_empty() || raw.starts_with('[') || raw.eq_ignore_ascii_case("N/A") || raw == "ERR!" {
        return None;
    }
    // `81559 MiB` when `nounits` was not given: the number is the first word.
    raw.split_whitespace().next()
}

fn number(raw: &str) -> Option<f64> {
    value(raw)?
        .parse::<f64>()
        .ok()
        .filter(|n| n.is_finite() && *n >= 0.0)
}

fn whole<T: TryFrom<u64>>(raw: &str) -> Option<T> {
    let n = number(raw)?;
    if n > u64::MAX as f64 {
        return None;
    }
    T::try_from(n.round() as u64).ok()
}

fn mask(raw: &str) -> Option<u64> {
    let raw = value(raw)?;
    match raw.strip_prefix("0x").or_else(|| raw.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => raw.parse().ok(),
    }
}

/// One `--query-gpu` line read with `fields`; `None` when it is not a GPU line (wrong number of
/// columns, no index).
pub fn parse_gpu_line(fields: &QueryFields, line: &str) -> Option<(GpuReading, Option<usize>)> {
    let columns: Vec<&str> = line.split(',').collect();
    if columns.len() != fields.0.len() {
        return None;
    }
    let index_at = fields.0.iter().position(|f| *f == Field::Index)?;
    let index = whole::<u32>(columns[index_at])?;
    let mut gpu = GpuReading::new(index);
    let mut count = None;
    for (field, raw) in fields.0.iter().zip(&columns) {
        match field {
            Field::Count => count = whole::<usize>(raw).filter(|n| (1..=MAX_GPUS).contains(n)),
            Field::Uuid => {
                gpu.uuid = value(raw).filter(|u| u.len() <= 128).map(str::to_owned);
            }
            Field::Utilization => gpu.utilization_pct = whole::<u32>(raw).filter(|p| *p <= 100),
            Field::MemoryUsed => gpu.memory_used_mib = whole(raw),
            Field::MemoryTotal => gpu.memory_total_mib = whole(raw),
            Field::Temperature => gpu.temperature_c = whole(raw),
            Field::PowerDraw => gpu.power_draw_w = number(raw),
            Field::PowerLimit => gpu.power_limit_w = number(raw),
            Field::SmClock => gpu.sm_clock_mhz = whole(raw),
            Field::ClocksEventReasons | Field::ClocksThrottleReasons => {
                gpu.throttle = mask(raw).map(ThrottleReason::from_mask).unwrap_or_default();
            }
            Field::Index | Field::Other => {}
        }
    }
    Some((gpu, count))
}

/// Gathers the per-GPU lines of a loop into whole samples. nvidia-smi prints every GPU's line
/// each tick; a sample is complete when the `count` column's number of GPUs has arrived, or —
/// without a count — when a GPU index comes round again.
#[derive(Debug, Default)]
pub struct SampleAssembler {
    pending: Vec<GpuReading>,
    expected: Option<usize>,
}

impl SampleAssembler {
    /// Feed one line; returns a finished sample's GPUs when this line completes (or starts) one.
    pub fn push(&mut self, fields: &QueryFields, line: &str) -> Option<Vec<GpuReading>> {
        let (gpu, count) = parse_gpu_line(fields, line)?;
        if count.is_some() {
            self.expected = count;
        }
        let mut finished = None;
        if self.pending.iter().any(|g| g.index == gpu.index) || self.pending.len() >= MAX_GPUS {
            finished = Some(std::mem::take(&mut self.pending));
        }
        self.pending.push(gpu);
        if finished.is_none() && self.expected.is_some_and(|n| self.pending.len() >= n) {
            finished = Some(std::mem::take(&mut self.pending));
        }
        finished.map(|mut gpus| {
            gpus.sort_by_key(|g| g.index);
            gpus
        })
    }

    /// Whatever has arrived, as a (possibly partial) sample; used when the stream ends.
    pub fn take(&mut self) -> Option<Vec<GpuReading>> {
        (!self.pending.is_empty()).then(|| {
            let mut gpus = std::mem::take(&mut self.pending);
            gpus.sort_by_key(|g| g.index);
            gpus
        })
    }
}

/// One `timestamp, gpu_uuid, pid, process_name, used_gpu_memory` line: the look's timestamp
/// (as printed) and the process.
pub fn parse_process_line(line: &str) -> Option<(String, ComputeProcess)> {
    let columns: Vec<&str> = line.split(',').map(str::trim).collect();
    // A process name may itself hold commas: the first three and the last column are fixed.
    if columns.len() < 5 {
        return None;
    }
    let stamp = columns[0];
    if stamp.is_empty() || !stamp.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let uuid = value(columns[1])?;
    let pid = whole::<u32>(columns[2])?;
    let last = columns.len() - 1;
    let name = columns[3..last].join(",");
    Some((
        stamp.to_owned(),
        ComputeProcess {
            gpu_index: None,
            gpu_uuid: uuid.chars().take(128).collect(),
            pid,
            name: name.chars().take(256).collect(),
            used_memory_mib: whole(columns[last]),
        },
    ))
}

/// Gathers process lines into looks: rows of one look share a timestamp.
#[derive(Debug, Default)]
pub struct ProcessAssembler {
    stamp: Option<String>,
    pending: Vec<ComputeProcess>,
}

/// Most processes kept from one look.
const MAX_PROCESSES: usize = 1024;

impl ProcessAssembler {
    /// Feed one line; returns the previous look when this line starts a new one.
    pub fn push(&mut self, line: &str) -> Option<Vec<ComputeProcess>> {
        let (stamp, process) = parse_process_line(line)?;
        let finished = match &self.stamp {
            Some(current) if *current != stamp => Some(std::mem::take(&mut self.pending)),
            _ => None,
        };
        self.stamp = Some(stamp);
        if self.pending.len() < MAX_PROCESSES {
            self.pending.push(process);
        }
        finished
    }

    /// The look in progress, finished (the stream went quiet after it).
    pub fn take(&mut self) -> Option<Vec<ComputeProcess>> {
        self.stamp = None;
        (!self.pending.is_empty()).then(|| std::mem::take(&mut self.pending))
    }
}

/// Give each process its GPU's index, from the UUIDs of the latest sample.
pub fn attach_gpu_indexes(processes: &mut [ComputeProcess], gpus: &[GpuReading]) {
    let by_uuid: HashMap<&str, u32> = gpus
        .iter()
        .filter_map(|g| g.uuid.as_deref().map(|u| (u, g.index)))
        .collect();
    for process in processes {
        process.gpu_index = by_uuid.get(process.gpu_uuid.as_str()).copied();
    }
}

#[cfg(test)]
mod tests;
