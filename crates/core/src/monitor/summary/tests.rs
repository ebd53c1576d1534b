use chrono::{DateTime, Duration, TimeZone, Utc};

use super::*;
use crate::diagnose::Lang;
use crate::monitor::findings::{evaluate, FindingContext, LiveFinding, TREND};
use crate::monitor::sample::{ComputeProcess, GpuReading, ProcessList, Sample};
use crate::monitor::window::LiveWindow;

fn start() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 9, 0, 0)
        .single()
        .expect("valid time")
}

/// The textbook least squares over raw points (what the rule computed before summaries).
fn raw_slope_and_correlation(points: &[(f64, f64)]) -> (f64, f64) {
    let n = points.len() as f64;
    let mean_t = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_m = points.iter().map(|p| p.1).sum::<f64>() / n;
    let (mut stt, mut smm, mut stm) = (0.0, 0.0, 0.0);
    for (t, m) in points {
        stt += (t - mean_t).powi(2);
        smm += (m - mean_m).powi(2);
        stm += (t - mean_t) * (m - mean_m);
    }
    (stm / stt, stm / (stt.sqrt() * smm.sqrt()))
}

/// A deterministic wobble in [-500, 500) MiB (a linear congruential generator).
fn noise(seed: &mut u64) -> f64 {
    *seed = seed
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    ((*seed >> 33) % 1000) as f64 - 500.0
}

fn reading(index: u32, utilization: u32, used: Option<u64>) -> GpuReading {
    let mut gpu = GpuReading::new(index);
    gpu.uuid = Some(format!("GPU-{index}"));
    gpu.utilization_pct = Some(utilization);
    gpu.memory_used_mib = used;
    gpu.memory_total_mib = Some(81_920);
    gpu
}

#[test]
fn summaries_give_the_least_squares_of_the_raw_points_they_cover() {
    let mut seed = 7;
    let mut trend = MemoryTrend::default();
    let mut raw = Vec::new();
    // Forty minutes at 700 ms with a noisy climb and some missing readings.
    for step in 0..(40 * 60 * 10 / 7) {
        let at = start() + Duration::milliseconds(700 * step);
        let used =
            (step % 17 != 0).then(|| (20_000.0 + 3.0 * step as f64 + noise(&mut seed)) as u64);
        trend.push(&Sample {
            at,
            gpus: vec![reading(0, 90, used)],
        });
        if let Some(used) = used {
            raw.push((at, used as f64));
        }
    }
    let gpu = trend.gpus().next().expect("GPU 0 has readings");
    let kept: Vec<(f64, f64)> = raw
        .iter()
        .filter(|(at, _)| *at >= gpu.first.0)
        .map(|(at, m)| ((*at - start()).num_milliseconds() as f64 / 1000.0, *m))
        .collect();
    let last = raw.last().expect("readings");
    assert!(
        last.0 - gpu.first.0 >= TREND && last.0 - gpu.first.0 <= TREND + BUCKET,
        "the summaries cover ten minutes and at most one bucket more, not {}",
        last.0 - gpu.first.0
    );
    assert_eq!(
        gpu.moments.count(),
        kept.len() as u64,
        "every covered point counted once"
    );
    assert_eq!(gpu.last, *last, "the last point is the last reading");
    let (slope, correlation) = gpu.moments.slope_and_correlation().expect("varies");
    let (raw_slope, raw_correlation) = raw_slope_and_correlation(&kept);
    assert!(
        (slope - raw_slope).abs() <= 1e-9 * raw_slope.abs(),
        "slope {slope} from summaries, {raw_slope} from the raw points"
    );
    assert!(
        (correlation - raw_correlation).abs() <= 1e-9,
        "correlation {correlation} from summaries, {raw_correlation} from the raw points"
    );
}

#[test]
fn constant_memory_has_no_trend() {
    let mut trend = MemoryTrend::default();
    for second in 0..300 {
        trend.push(&Sample {
            at: start() + Duration::seconds(second),
            gpus: vec![reading(0, 90, Some(30_000))],
        });
    }
    let gpu = trend.gpus().next().expect("GPU 0");
    assert_eq!(
        gpu.moments.slope_and_correlation(),
        None,
        "flat memory is no line"
    );
}

fn look(at: DateTime<Utc>, pids: &[(u32, u32)]) -> ProcessList {
    ProcessList {
        at,
        processes: pids
            .iter()
            .map(|(pid, gpu)| ComputeProcess {
                gpu_index: Some(*gpu),
                gpu_uuid: format!("GPU-{gpu}"),
                pid: *pid,
                name: "python train.py".into(),
                used_memory_mib: Some(30_000),
            })
            .collect(),
    }
}

fn shape(findings: &[LiveFinding]) -> Vec<(String, Vec<u32>, String)> {
    findings
        .iter()
        .map(|f| {
            (
                f.finding.code.clone(),
                f.gpus.clone(),
                f.finding.title.clone(),
            )
        })
        .collect()
}

#[test]
fn three_hours_through_the_window_give_the_findings_of_the_last_ten_minutes_raw() {
    // 8 GPUs for three hours: GPU 0 busy with memory climbing for the last 20 minutes, GPU 1
    // busy, the others idle; PID 77 on GPU 2 vanished four minutes before the end.
    let seconds = 3 * 3600;
    let climb_from = seconds - 20 * 60;
    let samples: Vec<Sample> = (0..seconds)
        .map(|t| Sample {
            at: start() + Duration::seconds(t),
            gpus: (0..8)
                .map(|i| {
                    let busy = i < 2;
                    let used = if i == 0 && t >= climb_from {
                        20_000 + 40 * (t - climb_from) as u64
                    } else {
                        20_000
                    };
                    reading(i, if busy { 95 } else { 0 }, Some(used))
                })
                .collect(),
        })
        .collect();
    let looks: Vec<ProcessList> = (0..seconds)
        .step_by(5)
        .map(|t| {
            let mut pids = vec![(11, 0), (12, 1)];
            if t < seconds - 4 * 60 {
                pids.push((77, 2));
            }
            look(start() + Duration::seconds(t), &pids)
        })
        .collect();

    let mut window = LiveWindow::default();
    let mut next_look = looks.iter().peekable();
    for sample in &samples {
        while let Some(l) = next_look.next_if(|l| l.at <= sample.at) {
            window.push_processes(l.clone());
        }
        window.push_sample(sample.clone());
    }
    let context = FindingContext {
        lang: Lang::En,
        billing: true,
    };
    let streamed = window.findings(&context);

    let end = samples.last().expect("samples").at;
    let from = end - TREND;
    let raw_samples: Vec<Sample> = samples.iter().filter(|s| s.at >= from).cloned().collect();
    let raw_looks: Vec<ProcessList> = looks.iter().filter(|l| l.at >= from).cloned().collect();
    let raw = evaluate(&raw_samples, &raw_looks, &context);

    let codes: Vec<&str> = streamed.iter().map(|f| f.finding.code.as_str()).collect();
    for code in [
        "gpu.idle_peers",
        "gpu.memory_leak_trend",
        "gpu.process_died",
    ] {
        assert!(codes.contains(&code), "{code} expected among {codes:?}");
    }
    assert_eq!(
        shape(&streamed),
        shape(&raw),
        "three hours through the bounded window say what the last ten minutes of raw samples say"
    );
    assert_eq!(window.len(), 61, "one minute of raw samples");
}

#[test]
fn remembered_processes_are_bounded_and_forgotten_after_ten_minutes() {
    let mut seen = SeenProcesses::default();
    // A new short-lived process every second for an hour, 3 per look.
    for t in 0..3600 {
        let base = 3 * t as u32;
        seen.push(look(
            start() + Duration::seconds(i64::from(t)),
            &[(base, 0), (base + 1, 0), (base + 2, 1)],
        ));
    }
    assert!(
        seen.len() <= 1025,
        "at most 1024 earlier processes and the latest list, not {}",
        seen.len()
    );
    let latest = seen.latest().expect("latest").at;
    assert!(
        seen.earlier().all(|(_, at)| at >= latest - TREND),
        "nothing last seen more than ten minutes ago"
    );
}
