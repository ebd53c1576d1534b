//! `monitor_memory_bench`: the app side of the GPU monitor over an hour, simulated at speed.
//!
//! Run by `tests/bench/monitor.sh`. Eight GPUs sampled every second (one GPU busy, its memory
//! creeping up, a process list every five seconds) go through what the app does with a live
//! stream: `monitor::consume` (window, findings), each event encoded as JSON as the Tauri channel
//! does, and the minute downsampling written to a SQLite file. It prints the process's PSS after
//! one simulated minute (both before and after that minute's history is written: the first write
//! sets up the store's connection and statements once), after ten minutes and after one hour,
//! and the ratios. Asserts nothing. PSS counts a share of the shared libraries, so other
//! processes starting and ending on the machine move it by a few per cent between runs.

use std::ops::ControlFlow;

use chrono::{Duration, TimeZone, Utc};
use leasehold_core::billing::{ledger, BillingRules, NewInstance};
use leasehold_core::diagnose::Lang;
use leasehold_core::monitor::history::{self, MinuteAggregator};
use leasehold_core::monitor::{
    self, ComputeProcess, FindingContext, GpuReading, MonitorEvent, ProcessList, Sample,
    ThrottleReason,
};
use leasehold_core::store::Store;

const GPUS: u32 = 8;

/// The sum of the `/proc/self/smaps_rollup` lines starting with any of `fields`, in KiB.
fn rollup_kib(fields: &[&str]) -> u64 {
    std::fs::read_to_string("/proc/self/smaps_rollup")
        .map(|text| {
            text.lines()
                .filter(|l| fields.iter().any(|f| l.starts_with(f)))
                .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                .sum()
        })
        .unwrap_or(0)
}

fn pss_kib() -> u64 {
    rollup_kib(&["Pss:"])
}

/// This process's own pages (no share of the libraries other processes map): the growth
/// without the noise other processes add to PSS.
fn private_kib() -> u64 {
    rollup_kib(&["Private_Clean:", "Private_Dirty:"])
}

fn sample(second: i64) -> Sample {
    let at = Utc
        .with_ymd_and_hms(2026, 3, 1, 0, 0, 0)
        .single()
        .expect("time")
        + Duration::seconds(second);
    Sample {
        at,
        gpus: (0..GPUS)
            .map(|index| {
                let mut gpu = GpuReading::new(index);
                let busy = index == 0;
                gpu.uuid = Some(format!("GPU-{index:08}-0000-0000-0000-000000000000"));
                gpu.utilization_pct = Some(if busy { 90 + (second % 10) as u32 } else { 0 });
                gpu.memory_used_mib = Some(if busy {
                    20_000 + (second as u64 % 3600) * 10
                } else {
                    4
                });
                gpu.memory_total_mib = Some(81_920);
                gpu.temperature_c = Some(if busy { 70 } else { 31 });
                gpu.power_draw_w = Some(if busy { 390.5 } else { 61.2 });
                gpu.power_limit_w = Some(500.0);
                gpu.sm_clock_mhz = Some(if busy { 1410 } else { 210 });
                gpu.throttle = if busy {
                    vec![ThrottleReason::PowerCap]
                } else {
                    Vec::new()
                };
                gpu
            })
            .collect(),
    }
}

fn look(sample: &Sample) -> ProcessList {
    ProcessList {
        at: sample.at,
        processes: vec![ComputeProcess {
            gpu_index: None,
            gpu_uuid: "GPU-00000000-0000-0000-0000-000000000000".into(),
            pid: 4242,
            name: "python train.py".into(),
            used_memory_mib: Some(20_000),
        }],
    }
}

/// PSS (KiB) at the moments the bench reports.
struct Pss {
    /// After 60 samples, before the first minute of history is written.
    after_minute: u64,
    /// Once the first minute is in SQLite (one simulated minute, every part of the path run once:
    /// the store's connections, statements and writer are set up).
    after_first_write: u64,
    /// After ten minutes (the memory-trend summaries full).
    after_ten: u64,
    after_hour: u64,
    /// The process's private pages at the same two moments.
    private_after_first_write: u64,
    private_after_hour: u64,
}

/// One simulated hour.
async fn simulate(store: &Store, seconds: i64) -> Pss {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let (minutes_tx, mut minutes_rx) =
        tokio::sync::mpsc::unbounded_channel::<Vec<history::GpuMinute>>();
    let context = FindingContext {
        lang: Lang::En,
        billing: true,
    };
    let producer = async {
        for second in 0..seconds {
            let s = sample(second);
            if second % 5 == 0 {
                let _ = tx.send(MonitorEvent::Processes(look(&s)));
            }
            let _ = tx.send(MonitorEvent::Sample(s));
            // Let the consumer and the writer keep up, as a real 1 s stream would.
            tokio::task::yield_now().await;
        }
        drop(tx);
    };
    let writer = async {
        let mut after_first_write = (0, 0);
        while let Some(minutes) = minutes_rx.recv().await {
            history::record(store, "bench", &minutes)
                .await
                .expect("recorded");
            if after_first_write.0 == 0 {
                after_first_write = (pss_kib(), private_kib());
            }
        }
        after_first_write
    };
    let consumer = async {
        let minutes_tx = minutes_tx;
        let mut aggregator = MinuteAggregator::default();
        let mut samples = 0i64;
        let mut after_minute = 0;
        let mut after_ten = 0;
        let mut sink = |event: MonitorEvent| {
            if let MonitorEvent::Sample(sample) = &event {
                let finished = aggregator.push(sample);
                if !finished.is_empty() {
                    let _ = minutes_tx.send(finished);
                }
                samples += 1;
                if samples == 60 {
                    after_minute = pss_kib();
                }
                if samples == 600 {
                    after_ten = pss_kib();
                }
            }
            // What the Tauri channel does with every event.
            let _ = std::hint::black_box(serde_json::to_string(&event));
            ControlFlow::Continue(())
        };
        monitor::consume(rx, &context, &mut sink).await;
        (after_minute, after_ten)
    };
    let ((), (after_minute, after_ten), after_first_write) =
        tokio::join!(producer, consumer, writer);
    Pss {
        after_minute,
        after_first_write: after_first_write.0,
        after_ten,
        after_hour: pss_kib(),
        private_after_first_write: after_first_write.1,
        private_after_hour: private_kib(),
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = Store::open(&dir.path().join("bench.db"))
            .await
            .expect("store");
        let new = NewInstance {
            name: "bench".into(),
            provider: "custom".into(),
            region: None,
            gpu_model: "A100".into(),
            currency: "CNY".into(),
            notes: None,
            planned_hours: None,
            budget: None,
            rules: BillingRules::simple("2.5".parse().expect("price"), GPUS),
        };
        let start = Utc
            .with_ymd_and_hms(2026, 3, 1, 0, 0, 0)
            .single()
            .expect("time");
        ledger::add_instance(&store, &new, start)
            .await
            .expect("instance");
        let pss = simulate(&store, 3600).await;
        println!(
            "app-side PSS after 1 simulated minute (60 samples, nothing written yet): {} KiB",
            pss.after_minute
        );
        println!(
            "app-side PSS after 1 simulated minute, its history written: {} KiB",
            pss.after_first_write
        );
        println!(
            "app-side PSS after 10 simulated minutes: {} KiB",
            pss.after_ten
        );
        println!(
            "app-side PSS after 1 simulated hour:   {} KiB",
            pss.after_hour
        );
        let ratio = |base: u64| pss.after_hour as f64 / base.max(1) as f64;
        println!(
            "ratio hour/ten minutes: {:.3} (flat once the summaries are full)",
            ratio(pss.after_ten)
        );
        println!(
            "ratio hour/minute (before the first history write): {:.3}",
            ratio(pss.after_minute)
        );
        println!(
            "ratio hour/minute (first minute written): {:.3} (goal <= 1.10)",
            ratio(pss.after_first_write)
        );
        println!(
            "private memory hour/minute (first minute written): {} / {} KiB = {:.3}",
            pss.private_after_hour,
            pss.private_after_first_write,
            pss.private_after_hour as f64 / pss.private_after_first_write.max(1) as f64
        );
    });
}
