use chrono::{DateTime, Duration, TimeZone, Utc};

use super::*;
use crate::diagnose::Severity;
use crate::monitor::sample::{ComputeProcess, GpuReading, ThrottleReason};

fn start() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 9, 0, 0)
        .single()
        .expect("valid time")
}

fn gpu(index: u32, utilization: u32, used_mib: u64) -> GpuReading {
    let mut gpu = GpuReading::new(index);
    gpu.uuid = Some(format!("GPU-{index}"));
    gpu.utilization_pct = Some(utilization);
    gpu.memory_used_mib = Some(used_mib);
    gpu.memory_total_mib = Some(81920);
    gpu.temperature_c = Some(40);
    gpu.power_draw_w = Some(80.0);
    gpu.power_limit_w = Some(400.0);
    gpu
}

/// `seconds` one-second samples of `gpus` GPUs, utilisation and memory from the closures.
fn window(
    seconds: i64,
    gpus: u32,
    utilization: impl Fn(u32, i64) -> u32,
    memory: impl Fn(u32, i64) -> u64,
) -> Vec<Sample> {
    (0..seconds)
        .map(|t| Sample {
            at: start() + Duration::seconds(t),
            gpus: (0..gpus)
                .map(|i| gpu(i, utilization(i, t), memory(i, t)))
                .collect(),
        })
        .collect()
}

fn context(billing: bool) -> FindingContext {
    FindingContext {
        lang: Lang::En,
        billing,
    }
}

fn codes(findings: &[LiveFinding]) -> Vec<&str> {
    findings.iter().map(|f| f.finding.code.as_str()).collect()
}

#[test]
fn eight_gpus_with_only_gpu_0_busy_is_idle_peers_naming_the_seven_idle_ones() {
    let samples = window(30, 8, |i, _| if i == 0 { 97 } else { 0 }, |_, _| 1000);
    let findings = evaluate(&samples, &[], &context(true));
    let peers = findings
        .iter()
        .find(|f| f.finding.code == "gpu.idle_peers")
        .expect("one busy GPU among eight idle ones is idle_peers");
    assert_eq!(peers.gpus, vec![1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(peers.finding.severity, Severity::Warning);
    assert!(
        peers.finding.fix.iter().any(|s| s
            .command
            .as_deref()
            .is_some_and(|c| c.contains("torchrun --nproc_per_node=8"))),
        "the fix launches one process per GPU: {:?}",
        peers.finding.fix
    );
    assert!(peers.finding.fix.iter().any(|s| s
        .command
        .as_deref()
        .is_some_and(|c| c.contains("CUDA_VISIBLE_DEVICES"))));
    assert!(
        !codes(&findings).contains(&"gpu.idle_while_billing"),
        "one GPU works, so the machine is not idle"
    );
}

#[test]
fn every_gpu_idle_while_billing_is_reported_but_not_on_this_computer() {
    let samples = window(30, 8, |_, _| 0, |_, _| 1);
    let billed = evaluate(&samples, &[], &context(true));
    let idle = billed
        .iter()
        .find(|f| f.finding.code == "gpu.idle_while_billing")
        .expect("all idle while billing");
    assert_eq!(idle.gpus.len(), 8);
    assert!(
        !codes(&billed).contains(&"gpu.idle_peers"),
        "nobody is busy"
    );
    let local = evaluate(&samples, &[], &context(false));
    assert!(
        !codes(&local).contains(&"gpu.idle_while_billing"),
        "this computer costs nothing by the hour"
    );
}

#[test]
fn two_quiet_seconds_are_not_enough_to_call_a_gpu_idle() {
    let samples = window(2, 8, |_, _| 0, |_, _| 1);
    assert!(evaluate(&samples, &[], &context(true)).is_empty());
}

#[test]
fn utilisation_older_than_a_minute_does_not_count() {
    // Busy for five minutes, then everything idle for the last minute and a half.
    let samples = window(390, 2, |_, t| if t < 300 { 90 } else { 0 }, |_, _| 1);
    let findings = evaluate(&samples, &[], &context(true));
    assert!(codes(&findings).contains(&"gpu.idle_while_billing"));
}

#[test]
fn memory_above_95_percent_is_nearly_full() {
    let samples = window(5, 2, |_, _| 90, |i, _| if i == 1 { 79_000 } else { 40_000 });
    let findings = evaluate(&samples, &[], &context(true));
    let full = findings
        .iter()
        .find(|f| f.finding.code == "gpu.memory_near_full")
        .expect("79000 of 81920 MiB is over 95 %");
    assert_eq!(full.gpus, vec![1]);
}

#[test]
fn memory_climbing_steadily_is_a_leak_trend_with_a_time_to_full() {
    // +100 MiB every second for five minutes on GPU 0: 81920 MiB fills in under ten minutes.
    let samples = window(
        300,
        2,
        |_, _| 95,
        |i, t| {
            if i == 0 {
                20_000 + 100 * t as u64
            } else {
                30_000
            }
        },
    );
    let findings = evaluate(&samples, &[], &context(true));
    let leak = findings
        .iter()
        .find(|f| f.finding.code == "gpu.memory_leak_trend")
        .expect("a straight climb towards full is a trend");
    assert_eq!(leak.gpus, vec![0]);
    assert!(
        leak.finding.title.contains("full in about"),
        "{}",
        leak.finding.title
    );
}

#[test]
fn memory_that_rises_and_falls_with_each_step_is_not_a_trend() {
    let samples = window(
        300,
        1,
        |_, _| 95,
        |_, t| if t % 2 == 0 { 20_000 } else { 60_000 },
    );
    let findings = evaluate(&samples, &[], &context(true));
    assert!(!codes(&findings).contains(&"gpu.memory_leak_trend"));
}

#[test]
fn a_card_at_its_thermal_limit_is_a_throttle_warning_and_a_power_cap_only_info() {
    let mut hot = window(10, 2, |_, _| 99, |_, _| 1000);
    for sample in &mut hot {
        sample.gpus[1].throttle = vec![ThrottleReason::HwThermal, ThrottleReason::PowerCap];
        sample.gpus[1].temperature_c = Some(92);
    }
    let findings = evaluate(&hot, &[], &context(true));
    let throttled = findings
        .iter()
        .find(|f| f.finding.code == "gpu.throttled")
        .expect("a persistent thermal limit");
    assert_eq!(throttled.gpus, vec![1]);
    assert_eq!(throttled.finding.severity, Severity::Warning);
    assert!(throttled.finding.evidence[0].contains("hw_thermal"));

    let mut capped = window(10, 1, |_, _| 99, |_, _| 1000);
    for sample in &mut capped {
        sample.gpus[0].throttle = vec![ThrottleReason::PowerCap];
    }
    let findings = evaluate(&capped, &[], &context(true));
    let throttled = findings
        .iter()
        .find(|f| f.finding.code == "gpu.throttled")
        .expect("power cap");
    assert_eq!(throttled.finding.severity, Severity::Info);
}

#[test]
fn a_throttle_in_one_sample_of_ten_is_noise() {
    let mut samples = window(10, 1, |_, _| 99, |_, _| 1000);
    samples[3].gpus[0].throttle = vec![ThrottleReason::HwThermal];
    assert!(!codes(&evaluate(&samples, &[], &context(true))).contains(&"gpu.throttled"));
}

fn look(at: DateTime<Utc>, pids: &[u32]) -> ProcessList {
    ProcessList {
        at,
        processes: pids
            .iter()
            .map(|pid| ComputeProcess {
                gpu_index: Some(0),
                gpu_uuid: "GPU-0".into(),
                pid: *pid,
                name: "python train.py".into(),
                used_memory_mib: Some(30_000),
            })
            .collect(),
    }
}

#[test]
fn a_process_that_vanished_from_a_gpu_now_idle_is_reported_once() {
    let samples = window(
        30,
        2,
        |i, t| if i == 0 && t < 20 { 99 } else { 0 },
        |_, _| 1,
    );
    let looks = vec![
        look(start(), &[4242]),
        look(start() + Duration::seconds(10), &[4242]),
        look(start() + Duration::seconds(25), &[]),
    ];
    let findings = evaluate(&samples, &looks, &context(true));
    let died = findings
        .iter()
        .find(|f| f.finding.code == "gpu.process_died")
        .expect("PID 4242 left GPU 0 idle");
    assert_eq!(died.gpus, vec![0]);
    assert_eq!(
        died.finding.evidence.len(),
        1,
        "{:?}",
        died.finding.evidence
    );
    assert!(died.finding.evidence[0].contains("PID 4242"));

    let still_busy = window(30, 2, |i, _| if i == 0 { 99 } else { 0 }, |_, _| 1);
    assert!(
        !codes(&evaluate(&still_busy, &looks, &context(true))).contains(&"gpu.process_died"),
        "a GPU still at work lost no job that matters"
    );
}

#[test]
fn findings_are_written_in_the_chosen_language() {
    let samples = window(30, 8, |i, _| if i == 0 { 97 } else { 0 }, |_, _| 1000);
    let zh = evaluate(
        &samples,
        &[],
        &FindingContext {
            lang: Lang::ZhCn,
            billing: true,
        },
    );
    assert!(
        zh[0].finding.title.contains("闲着"),
        "{}",
        zh[0].finding.title
    );
    let json = serde_json::to_value(&zh[0]).expect("serializes");
    assert_eq!(
        json["code"], "gpu.idle_peers",
        "the finding's fields are flattened"
    );
    assert!(json["gpus"].is_array());
}
