use chrono::{Duration, TimeZone};
use rust_decimal::Decimal;

use super::*;
use crate::billing::{BillingRules, NewInstance};
use crate::clock::{Clock, FixedClock};
use crate::monitor::sample::GpuReading;

fn start() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 9, 0, 0)
        .single()
        .expect("time")
}

fn d(text: &str) -> Decimal {
    text.parse().expect("decimal")
}

/// A sample at the clock's time: GPU 0 at `busy` %, the others at 0 %.
fn sample(clock: &FixedClock, gpus: u32, busy: u32) -> Sample {
    Sample {
        at: clock.now(),
        gpus: (0..gpus)
            .map(|i| {
                let mut g = GpuReading::new(i);
                g.utilization_pct = Some(if i == 0 { busy } else { 0 });
                g.memory_used_mib = Some(1000 + u64::from(i));
                g.memory_total_mib = Some(81920);
                g.power_draw_w = Some(100.0);
                g
            })
            .collect(),
    }
}

#[test]
fn seconds_fold_into_one_row_per_gpu_and_minute() {
    let clock = FixedClock::new(start());
    let mut aggregator = MinuteAggregator::default();
    let mut finished = Vec::new();
    for second in 0..150 {
        // GPU 0 busy (90 %) for the first half of each minute, idle for the second half.
        let busy = if second % 60 < 30 { 90 } else { 0 };
        finished.extend(aggregator.push(&sample(&clock, 8, busy)));
        clock.advance(Duration::seconds(1));
    }
    assert_eq!(finished.len(), 16, "two whole minutes of eight GPUs");
    let first = &finished[0];
    assert_eq!(first.minute, start());
    assert_eq!(first.gpu_index, 0);
    assert_eq!(first.samples, 60);
    assert!((first.utilization_avg - 45.0).abs() < 1e-9);
    assert_eq!(first.utilization_max, 90);
    assert_eq!(finished[1].utilization_avg, 0.0);
    let rest = aggregator.flush();
    assert_eq!(rest.len(), 8, "the minute in progress comes out on flush");
    assert_eq!(rest[0].samples, 30);
    assert_eq!(rest[0].minute, start() + Duration::minutes(2));
}

#[test]
fn an_unknown_utilisation_is_left_out_not_counted_as_idle() {
    let clock = FixedClock::new(start());
    let mut aggregator = MinuteAggregator::default();
    let mut s = sample(&clock, 2, 50);
    s.gpus[1].utilization_pct = None;
    aggregator.push(&s);
    let rows = aggregator.flush();
    assert_eq!(rows.len(), 1, "GPU 1 had no reading: no row");
}

fn minute(at: DateTime<Utc>, gpu: u32, utilization: f64) -> GpuMinute {
    GpuMinute {
        minute: at,
        gpu_index: gpu,
        samples: 60,
        utilization_avg: utilization,
        utilization_max: utilization as u32,
        memory_used_max_mib: 1,
        memory_total_mib: 81920,
        power_avg_w: None,
    }
}

#[test]
fn the_idle_streak_runs_back_to_the_last_busy_minute() {
    let mut rows = Vec::new();
    for m in 0..30 {
        let at = start() + Duration::minutes(m);
        rows.push(minute(at, 0, if m < 10 { 80.0 } else { 1.0 }));
        rows.push(minute(at, 1, 0.0));
    }
    let now = start() + Duration::minutes(30);
    let streak = idle_streak_of(&rows, now).expect("idle since minute 10");
    assert_eq!(streak.since, start() + Duration::minutes(10));
    assert_eq!(streak.minutes, 20);
    assert!(
        idle_streak_of(&rows, now + Duration::minutes(10)).is_none(),
        "history ten minutes old says nothing about now"
    );
    rows.push(minute(start() + Duration::minutes(30), 1, 50.0));
    assert!(
        idle_streak_of(&rows, now).is_none(),
        "GPU 1 working in the latest minute ends the streak"
    );
}

#[test]
fn a_missed_minute_does_not_break_a_streak_but_a_long_hole_does() {
    let rows: Vec<GpuMinute> = [0, 1, 3, 4, 10, 11]
        .iter()
        .map(|m| minute(start() + Duration::minutes(*m), 0, 0.0))
        .collect();
    let streak = idle_streak_of(&rows, start() + Duration::minutes(12)).expect("idle");
    assert_eq!(
        streak.since,
        start() + Duration::minutes(10),
        "the 6-minute hole ends it"
    );
    assert_eq!(streak.minutes, 2);
}

async fn rented_eight_gpus(store: &Store) {
    let new = NewInstance {
        name: "a100-x8".into(),
        provider: "custom".into(),
        region: None,
        gpu_model: "A100".into(),
        currency: "CNY".into(),
        notes: None,
        planned_hours: None,
        budget: None,
        // 2.50 per GPU-hour × 8 GPUs = 20 per hour, billed by the minute.
        rules: BillingRules::simple(d("2.50"), 8),
    };
    crate::billing::ledger::add_instance(store, &new, start())
        .await
        .expect("instance");
}

#[tokio::test]
async fn busy_hours_and_idle_cost_come_from_the_recorded_minutes() {
    let store = Store::open_in_memory().await.expect("store");
    rented_eight_gpus(&store).await;
    let clock = FixedClock::new(start());
    let mut aggregator = MinuteAggregator::default();
    // One hour: GPU 0 works the first 30 minutes, then nothing works for 30 minutes.
    for second in 0..3600 {
        let busy = if second < 1800 { 95 } else { 0 };
        let rows = aggregator.push(&sample(&clock, 8, busy));
        record(&store, "a100-x8", &rows).await.expect("recorded");
        clock.advance(Duration::seconds(1));
    }
    record(&store, "a100-x8", &aggregator.flush())
        .await
        .expect("last minute");

    let report = busy_hours(&store, "a100-x8", clock.now())
        .await
        .expect("busy hours");
    assert_eq!(report.observed_hours, d("1.00"));
    assert_eq!(report.busy_hours, d("0.50"));
    assert_eq!(report.idle_hours, d("0.50"));
    assert_eq!(report.gpu_hours, d("8.00"));
    assert_eq!(report.gpu_busy_hours, d("0.50"));
    // Half an hour fully idle at 20/h = 10; plus 7/8 of the busy half hour (8.75): 18.75.
    assert_eq!(report.idle_cost, d("10.00"));
    assert_eq!(report.idle_gpu_cost, d("18.75"));
    assert_eq!(report.currency.code(), "CNY");

    let streak = idle_streak(&store, "a100-x8", clock.now())
        .await
        .expect("read")
        .expect("idle for the last half hour");
    assert_eq!(streak.minutes, 30);

    let since = utilisation_since(
        &store,
        "a100-x8",
        start() + Duration::minutes(59),
        clock.now(),
    )
    .await
    .expect("read");
    assert_eq!(since.len(), 8, "one minute of eight GPUs");
}

#[tokio::test]
async fn two_samplers_writing_one_minute_are_merged_not_overwritten() {
    let store = Store::open_in_memory().await.expect("store");
    rented_eight_gpus(&store).await;
    let first = minute(start(), 0, 90.0);
    let mut second = minute(start(), 0, 30.0);
    second.samples = 20;
    record(&store, "a100-x8", &[first]).await.expect("first");
    record(&store, "a100-x8", &[second]).await.expect("second");
    let rows = utilisation_since(&store, "a100-x8", start(), start() + Duration::minutes(1))
        .await
        .expect("read");
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].samples, 80);
    assert!(
        (rows[0].utilization_avg - 75.0).abs() < 1e-9,
        "(90×60 + 30×20) / 80"
    );
    assert_eq!(rows[0].utilization_max, 90);
}

#[tokio::test]
async fn an_unknown_instance_is_bad_input() {
    let store = Store::open_in_memory().await.expect("store");
    let err = record(&store, "nope", &[minute(start(), 0, 1.0)])
        .await
        .expect_err("no such instance");
    assert_eq!(crate::Coded::code(&err), "monitor.unknown_instance");
}
