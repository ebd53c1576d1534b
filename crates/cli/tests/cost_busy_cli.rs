//! `leasehold cost` with the monitor's minute history: the bill says how many hours the GPUs
//! worked and what the idle time cost, as fields added beside the bill's own (scripts reading
//! the old fields see them unchanged).

use std::path::Path;

use assert_cmd::cargo::cargo_bin_cmd;
use chrono::{DateTime, Duration, Utc};
use leasehold_core::monitor::history::{self, GpuMinute};
use leasehold_core::store::Store;
use serde_json::Value;

const T0: &str = "2025-03-01T00:00:00Z";

fn leasehold(db: &Path, args: &[&str]) -> assert_cmd::assert::Assert {
    cargo_bin_cmd!("leasehold")
        .args(args)
        .arg("--db")
        .arg(db)
        .assert()
}

fn add_two_gpu_box(db: &Path, name: &str) {
    leasehold(
        db,
        &[
            "instance",
            "add",
            name,
            "--gpu",
            "A100",
            "--count",
            "2",
            "--price",
            "3.00",
            "--currency",
            "CNY",
            "--at",
            T0,
        ],
    )
    .success();
    leasehold(db, &["instance", "start", name, "--at", T0]).success();
}

/// An hour of minutes: GPU 0 works for the first half hour, GPU 1 never does.
fn record_an_hour(db: &Path, name: &str) {
    let start: DateTime<Utc> = T0.parse().expect("time");
    let minutes: Vec<GpuMinute> = (0..60)
        .flat_map(|m| {
            (0..2u32).map(move |gpu| GpuMinute {
                minute: start + Duration::minutes(m),
                gpu_index: gpu,
                samples: 60,
                utilization_avg: if gpu == 0 && m < 30 { 92.0 } else { 0.0 },
                utilization_max: if gpu == 0 && m < 30 { 99 } else { 0 },
                memory_used_max_mib: 1000,
                memory_total_mib: 81_920,
                power_avg_w: Some(100.0),
            })
        })
        .collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let store = Store::open(db).await.expect("open the database");
        history::record(&store, name, &minutes)
            .await
            .expect("minutes recorded");
        store.close().await;
    });
}

#[test]
fn cost_says_how_long_the_gpus_worked_and_what_the_idle_time_cost() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("ledger.sqlite3");
    add_two_gpu_box(&db, "duo");
    record_an_hour(&db, "duo");
    let at = ["--at", "2025-03-01T01:00:00Z"];

    let out = leasehold(&db, &[&["cost", "duo", "--json"][..], &at].concat()).success();
    let report: Value = serde_json::from_slice(&out.get_output().stdout).expect("JSON");
    assert_eq!(
        report["total"], "6.00",
        "the bill's own fields are unchanged"
    );
    assert_eq!(report["breakdown"]["compute"], "6.00");
    assert!(report["intervals"].is_array());
    let busy = &report["gpu_busy"];
    assert_eq!(busy["observed_hours"], "1.00");
    assert_eq!(
        busy["busy_hours"], "0.50",
        "some GPU worked in the first half hour"
    );
    assert_eq!(busy["idle_hours"], "0.50");
    assert_eq!(busy["gpu_hours"], "2.00");
    assert_eq!(busy["gpu_busy_hours"], "0.50");
    assert_eq!(
        busy["idle_cost"], "3.00",
        "the half hour with both GPUs idle cost half of 6.00"
    );
    assert_eq!(
        busy["idle_gpu_cost"], "4.50",
        "GPU 1's half of the first half hour (1.50) and all of the second (3.00)"
    );
    assert_eq!(busy["currency"], "CNY");

    let text = leasehold(&db, &[&["cost", "duo"][..], &at].concat()).success();
    let text = String::from_utf8_lossy(&text.get_output().stdout).into_owned();
    assert!(
        text.contains("GPUs busy 0.50 h of 1.00 h watched"),
        "{text}"
    );
    assert!(text.contains("idle time cost 3.00 CNY"), "{text}");
}

#[test]
fn cost_of_an_instance_never_watched_has_no_busy_hours() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("ledger.sqlite3");
    add_two_gpu_box(&db, "quiet");
    let out = leasehold(
        &db,
        &["cost", "quiet", "--json", "--at", "2025-03-01T01:00:00Z"],
    )
    .success();
    let report: Value = serde_json::from_slice(&out.get_output().stdout).expect("JSON");
    assert_eq!(report["total"], "6.00");
    assert_eq!(
        report["gpu_busy"],
        Value::Null,
        "no samples: nothing is called busy or idle"
    );
    let text = leasehold(&db, &["cost", "quiet", "--at", "2025-03-01T01:00:00Z"]).success();
    assert!(String::from_utf8_lossy(&text.get_output().stdout).contains("never watched"));
}
