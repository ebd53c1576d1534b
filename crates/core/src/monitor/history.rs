//! The minute history: samples downsampled to one row per GPU and minute in SQLite
//! (`gpu_minutes`), and what is read back from it — the utilisation since a moment, the current
//! idle streak (the reminders' `gpu_idle` trigger) and the GPU-busy hours with what the idle
//! time cost (the bill).
//!
//! The arithmetic is pure ([`MinuteAggregator`], [`idle_streak_of`], [`busy_hours_of`]) and
//! tested with fixed times; the store functions only load and save.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, DurationRound, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::findings::IDLE_PCT;
use super::sample::Sample;
use super::MonitorError;
use crate::billing::{ledger, CostReport, Currency};
use crate::store::gpu_minutes::{self, GpuMinuteRow};
use crate::store::{ledger as ledger_rows, Store};

/// One GPU over one minute.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct GpuMinute {
    pub minute: DateTime<Utc>,
    pub gpu_index: u32,
    pub samples: u32,
    pub utilization_avg: f64,
    pub utilization_max: u32,
    #[ts(type = "number")]
    pub memory_used_max_mib: u64,
    #[ts(type = "number")]
    pub memory_total_mib: u64,
    pub power_avg_w: Option<f64>,
}

impl GpuMinute {
    /// Did this GPU work in this minute.
    pub fn busy(&self) -> bool {
        self.utilization_avg >= IDLE_PCT
    }
}

#[derive(Debug, Default, Clone)]
struct Sums {
    samples: u32,
    utilization: f64,
    utilization_max: u32,
    memory_used_max: u64,
    memory_total: u64,
    power: f64,
    power_samples: u32,
}

/// Folds samples into finished minutes. A GPU without a utilisation reading in a sample is left
/// out of that sample (unknown is not idle).
#[derive(Debug, Default)]
pub struct MinuteAggregator {
    minute: Option<DateTime<Utc>>,
    gpus: BTreeMap<u32, Sums>,
}

fn minute_of(at: DateTime<Utc>) -> DateTime<Utc> {
    at.duration_trunc(Duration::minutes(1)).unwrap_or(at)
}

impl MinuteAggregator {
    /// Add a sample; returns the previous minute's rows when this sample starts a new minute.
    pub fn push(&mut self, sample: &Sample) -> Vec<GpuMinute> {
        let minute = minute_of(sample.at);
        let finished = match self.minute {
            Some(current) if current != minute => self.flush(),
            _ => Vec::new(),
        };
        self.minute = Some(minute);
        for gpu in &sample.gpus {
            let Some(utilization) = gpu.utilization_pct else {
                continue;
            };
            let sums = self.gpus.entry(gpu.index).or_default();
            sums.samples += 1;
            sums.utilization += f64::from(utilization);
            sums.utilization_max = sums.utilization_max.max(utilization);
            sums.memory_used_max = sums.memory_used_max.max(gpu.memory_used_mib.unwrap_or(0));
            sums.memory_total = sums.memory_total.max(gpu.memory_total_mib.unwrap_or(0));
            if let Some(power) = gpu.power_draw_w {
                sums.power += power;
                sums.power_samples += 1;
            }
        }
        finished
    }

    /// The minute in progress, as it stands (when sampling stops).
    pub fn flush(&mut self) -> Vec<GpuMinute> {
        let Some(minute) = self.minute else {
            return Vec::new();
        };
        std::mem::take(&mut self.gpus)
            .into_iter()
            .filter(|(_, s)| s.samples > 0)
            .map(|(gpu_index, s)| GpuMinute {
                minute,
                gpu_index,
                samples: s.samples,
                utilization_avg: s.utilization / f64::from(s.samples),
                utilization_max: s.utilization_max,
                memory_used_max_mib: s.memory_used_max,
                memory_total_mib: s.memory_total,
                power_avg_w: (s.power_samples > 0).then(|| s.power / f64::from(s.power_samples)),
            })
            .collect()
    }
}

async fn instance_id(store: &Store, instance: &str) -> Result<i64, MonitorError> {
    let mut conn = store
        .pool()
        .acquire()
        .await
        .map_err(crate::store::StoreError::from)?;
    ledger_rows::find_instance(&mut conn, instance)
        .await?
        .map(|row| row.id)
        .ok_or_else(|| MonitorError::UnknownInstance(instance.to_owned()))
}

fn saturating_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// Add finished minutes to `instance`'s history (merged with what another sampler wrote).
pub async fn record(
    store: &Store,
    instance: &str,
    minutes: &[GpuMinute],
) -> Result<(), MonitorError> {
    if minutes.is_empty() {
        return Ok(());
    }
    let id = instance_id(store, instance).await?;
    let mut tx = store.write().await?;
    for m in minutes {
        let row = GpuMinuteRow {
            instance_id: id,
            gpu_index: i64::from(m.gpu_index),
            minute: m.minute,
            samples: i64::from(m.samples),
            utilization_avg: m.utilization_avg,
            utilization_max: i64::from(m.utilization_max),
            memory_used_max_mib: saturating_i64(m.memory_used_max_mib),
            memory_total_mib: saturating_i64(m.memory_total_mib),
            power_avg_w: m.power_avg_w,
        };
        gpu_minutes::merge(&mut tx, &row).await?;
    }
    tx.commit().await.map_err(crate::store::StoreError::from)?;
    Ok(())
}

/// Every GPU minute of `instance` from `since` until `until`, oldest first. For charts of the
/// past and for the reminders.
pub async fn utilisation_since(
    store: &Store,
    instance: &str,
    since: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Result<Vec<GpuMinute>, MonitorError> {
    let id = instance_id(store, instance).await?;
    let mut conn = store
        .pool()
        .acquire()
        .await
        .map_err(crate::store::StoreError::from)?;
    let rows = gpu_minutes::between(&mut conn, id, since, until).await?;
    Ok(rows
        .into_iter()
        .map(|r| GpuMinute {
            minute: r.minute,
            gpu_index: u32::try_from(r.gpu_index).unwrap_or_default(),
            samples: u32::try_from(r.samples).unwrap_or_default(),
            utilization_avg: r.utilization_avg,
            utilization_max: u32::try_from(r.utilization_max).unwrap_or_default(),
            memory_used_max_mib: u64::try_from(r.memory_used_max_mib).unwrap_or_default(),
            memory_total_mib: u64::try_from(r.memory_total_mib).unwrap_or_default(),
            power_avg_w: r.power_avg_w,
        })
        .collect())
}

/// How long every GPU has been idle, up to the latest recorded minute.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct IdleStreak {
    /// The first idle minute of the streak.
    pub since: DateTime<Utc>,
    /// The latest recorded minute (idle too).
    pub until: DateTime<Utc>,
    pub minutes: u32,
}

/// Minutes without any record between two recorded ones still join a streak (the background
/// sampler looks once a minute and may miss one).
const STREAK_HOLE: i64 = 2;
/// The history must reach this close to `now` to say anything about "now".
const FRESH: i64 = 3;

/// The idle streak in `rows` that runs up to the latest minute, if the latest minute is recent
/// and idle. Pure.
pub fn idle_streak_of(rows: &[GpuMinute], now: DateTime<Utc>) -> Option<IdleStreak> {
    let mut minutes: BTreeMap<DateTime<Utc>, bool> = BTreeMap::new();
    for row in rows {
        let busy = minutes.entry(row.minute).or_insert(false);
        *busy |= row.busy();
    }
    let (&latest, &latest_busy) = minutes.iter().next_back()?;
    if latest_busy || now - latest > Duration::minutes(FRESH) {
        return None;
    }
    let mut since = latest;
    for (&minute, &busy) in minutes.iter().rev().skip(1) {
        if busy || since - minute > Duration::minutes(STREAK_HOLE) {
            break;
        }
        since = minute;
    }
    let minutes = u32::try_from((latest - since).num_minutes() + 1).unwrap_or(u32::MAX);
    Some(IdleStreak {
        since,
        until: latest,
        minutes,
    })
}

/// `instance`'s idle streak as of `now`: `None` when a GPU worked in the latest minute or the
/// history has nothing recent. The reminders' `gpu_idle` trigger reads this.
pub async fn idle_streak(
    store: &Store,
    instance: &str,
    now: DateTime<Utc>,
) -> Result<Option<IdleStreak>, MonitorError> {
    let rows = utilisation_since(
        store,
        instance,
        now - Duration::hours(24),
        now + Duration::minutes(1),
    )
    .await?;
    Ok(idle_streak_of(&rows, now))
}

/// What the minute history says about an instance's GPUs, and what the idle time cost.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct BusyHours {
    pub instance: String,
    pub currency: Currency,
    /// Hours with any record.
    #[ts(type = "string")]
    pub observed_hours: Decimal,
    /// Hours in which at least one GPU worked.
    #[ts(type = "string")]
    pub busy_hours: Decimal,
    /// Hours in which no GPU worked.
    #[ts(type = "string")]
    pub idle_hours: Decimal,
    /// GPU-hours observed (hours × GPUs) and those in which the GPU worked.
    #[ts(type = "string")]
    pub gpu_hours: Decimal,
    #[ts(type = "string")]
    pub gpu_busy_hours: Decimal,
    /// What the billed minutes with every GPU idle cost.
    #[ts(type = "string")]
    pub idle_cost: Decimal,
    /// What the idle GPUs' share of every billed minute cost (8 GPUs rented, 1 used: 7/8).
    #[ts(type = "string")]
    pub idle_gpu_cost: Decimal,
    pub first_minute: Option<DateTime<Utc>>,
    pub last_minute: Option<DateTime<Utc>>,
}

/// Hours to two places, always written with both (`1.00`, `0.50`), as amounts are.
fn hours(minutes: u64) -> Decimal {
    let mut hours = (Decimal::from(minutes) / Decimal::from(60)).round_dp(2);
    hours.rescale(2);
    hours
}

/// The busy hours of `rows` priced with `report`'s billed intervals (the rate in force at each
/// minute). Pure.
pub fn busy_hours_of(rows: &[GpuMinute], report: &CostReport) -> BusyHours {
    let mut minutes: BTreeMap<DateTime<Utc>, (u64, u64)> = BTreeMap::new();
    for row in rows {
        let entry = minutes.entry(row.minute).or_default();
        entry.0 += 1;
        entry.1 += u64::from(row.busy());
    }
    let (mut busy, mut idle, mut gpu, mut gpu_busy) = (0u64, 0u64, 0u64, 0u64);
    let (mut idle_cost, mut idle_gpu_cost) = (Decimal::ZERO, Decimal::ZERO);
    let sixty = Decimal::from(60);
    for (minute, (total, working)) in &minutes {
        gpu += total;
        gpu_busy += working;
        if *working > 0 {
            busy += 1;
        } else {
            idle += 1;
        }
        let rate = report
            .intervals
            .iter()
            .find(|i| i.billed && i.start <= *minute && *minute < i.end)
            .map(|i| i.rate_per_hour);
        if let Some(rate) = rate {
            let per_minute = rate / sixty;
            if *working == 0 {
                idle_cost += per_minute;
            }
            idle_gpu_cost += per_minute * Decimal::from(total - working) / Decimal::from(*total);
        }
    }
    BusyHours {
        instance: report.name.clone(),
        currency: report.currency.clone(),
        observed_hours: hours(busy + idle),
        busy_hours: hours(busy),
        idle_hours: hours(idle),
        gpu_hours: hours(gpu),
        gpu_busy_hours: hours(gpu_busy),
        idle_cost: crate::billing::money::display_amount(idle_cost),
        idle_gpu_cost: crate::billing::money::display_amount(idle_gpu_cost),
        first_minute: minutes.keys().next().copied(),
        last_minute: minutes.keys().next_back().copied(),
    }
}

/// `instance`'s GPU-busy hours and idle cost from its whole minute history, as of `now`.
pub async fn busy_hours(
    store: &Store,
    instance: &str,
    now: DateTime<Utc>,
) -> Result<BusyHours, MonitorError> {
    let report = ledger::cost(store, instance, now).await?;
    busy_hours_for(store, &report).await
}

/// The GPU-busy hours and idle cost behind a bill already computed (`leasehold cost`): the minute
/// history of `report`'s instance up to its `as_of`, priced with its intervals.
pub async fn busy_hours_for(store: &Store, report: &CostReport) -> Result<BusyHours, MonitorError> {
    let now = report.as_of;
    let since = report
        .intervals
        .first()
        .map_or(now - Duration::days(365), |i| {
            i.start - Duration::minutes(1)
        });
    let rows = utilisation_since(store, &report.name, since, now + Duration::minutes(1)).await?;
    Ok(busy_hours_of(&rows, report))
}

#[cfg(test)]
mod tests;
