//! `monitor_memory_bench`: the app side of the GPU monitor over an hour, simulated at speed.
//!
//! Run by `tests/bench/monitor.sh`. Eight GPUs sampled every second (one GPU busy, its memory
//! creeping up, a process list every five seconds) go through what the app does with a live
//! stream: `monitor::consume` (window, findings), each event encoded as JSON as the Tauri channel
//! does, and the minute downsampling written to a SQLite file. It prints the process's PSS after
//! one simulated minute and after one simulated hour, and their ratio. Asserts nothing.

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

fn pss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/smaps_rollup")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("Pss:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
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

/// One simulated hour; returns the PSS after the first minute, after ten minutes (when the
/// findings window is full) and at the end.
async fn simulate(store: &Store, seconds: i64) -> (u64, u64, u64) {
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
        while let Some(minutes) = minutes_rx.recv().await {
            history::record(store, "bench", &minutes)
                .await
                .expect("recorded");
        }
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
    let ((), (after_minute, after_ten), ()) = tokio::join!(producer, consumer, writer);
    (after_minute, after_ten, pss_kib())
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
        let (after_minute, after_ten, after_hour) = simulate(&store, 3600).await;
        println!("app-side PSS after 1 simulated minute: {after_minute} KiB");
        println!("app-side PSS after 10 simulated minutes (window full): {after_ten} KiB");
        println!("app-side PSS after 1 simulated hour:   {after_hour} KiB");
        if after_ten > 0 {
            println!(
                "ratio hour/ten minutes: {:.3} (flat once the bounded window is full)",
                after_hour as f64 / after_ten as f64
            );
        }
        if after_minute > 0 {
            println!(
                "ratio hour/minute: {:.3} (goal <= 1.10)",
                after_hour as f64 / after_minute as f64
            );
        }
    });
}
