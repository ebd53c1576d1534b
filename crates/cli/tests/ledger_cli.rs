//! The ledger commands as scripts use them: exact JSON, exit codes, and bad input that writes
//! nothing (checked by reading the database file afterwards).

use std::path::{Path, PathBuf};

use assert_cmd::cargo::cargo_bin_cmd;
use predicates::str::contains;
use serde_json::Value;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection};

struct Db {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

fn fresh_db() -> Db {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("ledger.sqlite3");
    Db { _dir: dir, path }
}

fn leasehold(db: &Path, args: &[&str]) -> assert_cmd::assert::Assert {
    cargo_bin_cmd!("leasehold")
        .args(args)
        .arg("--db")
        .arg(db)
        .assert()
}

fn json(assert: &assert_cmd::assert::Assert) -> Value {
    serde_json::from_slice(&assert.get_output().stdout).expect("stdout is JSON")
}

/// Rows in (instances, ledger_events, billing_rules, budgets), read straight from the file.
fn row_counts(db: &Path) -> (i64, i64, i64, i64) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let mut conn = SqliteConnectOptions::new()
            .filename(db)
            .read_only(true)
            .connect()
            .await
            .expect("open the database read-only");
        let row: (i64, i64, i64, i64) = sqlx::query_as(
            "SELECT (SELECT count(*) FROM instances), (SELECT count(*) FROM ledger_events),
                    (SELECT count(*) FROM billing_rules), (SELECT count(*) FROM budgets)",
        )
        .fetch_one(&mut conn)
        .await
        .expect("count rows");
        conn.close().await.expect("close");
        row
    })
}

const T0: &str = "2025-03-01T00:00:00Z";

fn add_4090(db: &Path) {
    leasehold(
        db,
        &[
            "instance",
            "add",
            "box",
            "--gpu",
            "RTX 4090",
            "--count",
            "1",
            "--price",
            "2.50",
            "--currency",
            "CNY",
            "--at",
            T0,
        ],
    )
    .success();
}

#[test]
fn ten_running_hours_cost_25_with_breakdown_and_intervals() {
    let db = fresh_db();
    add_4090(&db.path);
    leasehold(&db.path, &["instance", "start", "box", "--at", T0]).success();
    leasehold(
        &db.path,
        &["instance", "stop", "box", "--at", "2025-03-01T10:00:00Z"],
    )
    .success();
    let out = leasehold(
        &db.path,
        &["cost", "box", "--at", "2025-03-02T00:00:00Z", "--json"],
    )
    .success();
    let report = json(&out);
    assert_eq!(report["total"], "25.00");
    assert_eq!(report["currency"], "CNY");
    assert_eq!(report["breakdown"]["compute"], "25.00");
    assert_eq!(report["breakdown"]["stopped"], "0.00");
    let intervals = report["intervals"].as_array().expect("intervals");
    assert_eq!(intervals.len(), 2);
    assert_eq!(intervals[0]["state"], "running");
    assert_eq!(intervals[0]["start"], "2025-03-01T00:00:00Z");
    assert_eq!(intervals[0]["cost"], "25.00");
}

#[test]
fn db_flag_works_before_the_subcommand_and_count_multiplies_the_price() {
    let db = fresh_db();
    let path = db.path.to_str().expect("utf-8 path");
    cargo_bin_cmd!("leasehold")
        .args([
            "--db", path, "instance", "add", "quad", "--gpu", "A100", "--count", "4",
        ])
        .args([
            "--price",
            "3",
            "--currency",
            "usd",
            "--billing-starts",
            "running",
        ])
        .args(["--stopped-billing", "storage:0.5", "--at", T0])
        .assert()
        .success();
    cargo_bin_cmd!("leasehold")
        .args([
            "--db",
            path,
            "instance",
            "start",
            "quad",
            "--at",
            "2025-03-01T01:00:00Z",
        ])
        .assert()
        .success();
    cargo_bin_cmd!("leasehold")
        .args([
            "--db",
            path,
            "instance",
            "stop",
            "quad",
            "--at",
            "2025-03-01T03:00:00Z",
        ])
        .assert()
        .success();
    let out = leasehold(
        &db.path,
        &["cost", "quad", "--at", "2025-03-01T05:00:00Z", "--json"],
    )
    .success();
    let report = json(&out);
    assert_eq!(report["currency"], "USD");
    assert_eq!(
        report["breakdown"]["compute"], "24.00",
        "4 × 3 × 2 h, from power-on"
    );
    assert_eq!(report["breakdown"]["storage"], "1.00", "2 h stopped × 0.5");
    assert_eq!(report["total"], "25.00");
}

#[test]
fn list_and_show_report_state_and_timeline() {
    let db = fresh_db();
    add_4090(&db.path);
    leasehold(
        &db.path,
        &["instance", "release", "box", "--at", "2025-03-01T02:00:00Z"],
    )
    .success();
    let list = json(
        &leasehold(
            &db.path,
            &["instance", "list", "--json", "--at", "2025-03-05T00:00:00Z"],
        )
        .success(),
    );
    assert_eq!(list[0]["name"], "box");
    assert_eq!(list[0]["state"], "released");
    assert_eq!(list[0]["total"], "5.00");
    let show = json(&leasehold(&db.path, &["instance", "show", "box", "--json"]).success());
    let kinds: Vec<&str> = show["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter_map(|e| e["kind"].as_str())
        .collect();
    assert_eq!(kinds, ["created", "released"]);
    assert_eq!(show["rules"]["price_per_gpu_hour"], "2.50");
}

#[test]
fn no_gpu_mode_traffic_and_rule_changes_from_the_cli() {
    let db = fresh_db();
    leasehold(
        &db.path,
        &[
            "instance",
            "add",
            "adl",
            "--gpu",
            "RTX 4090",
            "--price",
            "2",
            "--currency",
            "CNY",
            "--provider",
            "autodl",
            "--no-gpu-rate",
            "0.1",
            "--traffic-price",
            "0.5",
            "--at",
            T0,
        ],
    )
    .success();
    leasehold(&db.path, &["instance", "start", "adl", "--at", T0]).success();
    leasehold(
        &db.path,
        &["instance", "stop", "adl", "--at", "2025-03-01T01:00:00Z"],
    )
    .success();
    let stopped = json(
        &leasehold(
            &db.path,
            &["cost", "adl", "--json", "--at", "2025-03-01T01:00:00Z"],
        )
        .success(),
    );
    assert_eq!(
        stopped["wipe_at"], "2025-03-16T01:00:00Z",
        "AutoDL wipes after 15 days stopped"
    );
    leasehold(
        &db.path,
        &["instance", "no-gpu", "adl", "--at", "2025-03-01T02:00:00Z"],
    )
    .success();
    leasehold(
        &db.path,
        &[
            "instance",
            "traffic",
            "adl",
            "--gb",
            "4",
            "--at",
            "2025-03-01T03:00:00Z",
        ],
    )
    .success();
    leasehold(
        &db.path,
        &[
            "instance",
            "rules",
            "adl",
            "--no-gpu-rate",
            "0.2",
            "--at",
            "2025-03-01T12:00:00Z",
        ],
    )
    .success();
    let report = json(
        &leasehold(
            &db.path,
            &["cost", "adl", "--json", "--at", "2025-03-01T22:00:00Z"],
        )
        .success(),
    );
    assert_eq!(report["breakdown"]["compute"], "2.00");
    assert_eq!(
        report["breakdown"]["no_gpu"], "3.00",
        "10 h × 0.1 then 10 h × 0.2"
    );
    assert_eq!(report["breakdown"]["traffic"], "2.00");
    assert_eq!(report["total"], "7.00");
}

#[test]
fn estimate_cost_prices_the_split_job_side_by_side() {
    let out = cargo_bin_cmd!("leasehold")
        .args([
            "estimate-cost",
            "--price",
            "2.5",
            "--hours",
            "10",
            "--currency",
            "CNY",
        ])
        .args([
            "--runs",
            "2",
            "--stop-hours",
            "20",
            "--stopped-storage-rate",
            "0.1",
            "--json",
        ])
        .assert()
        .success();
    let estimate = json(&out);
    assert_eq!(estimate["total"], "25.00");
    let totals: Vec<(&str, &str)> = estimate["split"]["options"]
        .as_array()
        .expect("options")
        .iter()
        .filter_map(|o| Some((o["rule"].as_str()?, o["total"].as_str()?)))
        .collect();
    assert_eq!(
        totals,
        [
            ("none", "25.00"),
            ("storage", "27.00"),
            ("full_price", "75.00")
        ]
    );
}

#[test]
fn rent_vs_buy_reports_the_break_even_month() {
    let out = cargo_bin_cmd!("leasehold")
        .args([
            "rent-vs-buy",
            "--card-price",
            "14000",
            "--power-watts",
            "500",
        ])
        .args([
            "--electricity-price",
            "1",
            "--rent-price",
            "2",
            "--hours-per-day",
            "8",
        ])
        .args(["--months", "48", "--currency", "CNY", "--json"])
        .assert()
        .success();
    let result = json(&out);
    assert_eq!(result["break_even_month"], 39);
    assert_eq!(result["cheaper"], "buy");
    assert_eq!(result["currency"], "CNY");
}

/// Each bad input: exit 2, a message naming the problem, and not one row written.
#[test]
fn bad_input_exits_2_with_a_clear_message_and_writes_nothing() {
    let db = fresh_db();
    add_4090(&db.path);
    leasehold(
        &db.path,
        &["instance", "start", "box", "--at", "2025-03-01T05:00:00Z"],
    )
    .success();
    let before = row_counts(&db.path);
    let add = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut args = vec![
            "instance",
            "add",
            "other",
            "--gpu",
            "RTX 4090",
            "--currency",
            "CNY",
        ];
        args.extend_from_slice(extra);
        args
    };
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (add(&["--price", "0"]), "greater than zero"),
        (add(&["--price", "-2.5"]), "greater than zero"),
        (add(&["--price", "abc"]), "not a decimal number"),
        (
            vec![
                "instance",
                "add",
                "other",
                "--gpu",
                "x",
                "--price",
                "1",
                "--currency",
                "CYN",
            ],
            "unknown currency",
        ),
        (
            vec![
                "instance",
                "add",
                "box",
                "--gpu",
                "x",
                "--price",
                "1",
                "--currency",
                "CNY",
            ],
            "already exists",
        ),
        (
            add(&["--price", "1", "--stopped-billing", "sometimes"]),
            "stopped_billing",
        ),
        (add(&["--price", "1", "--at", "yesterday"]), "RFC 3339"),
        (
            vec!["instance", "stop", "box", "--at", "2025-03-01T04:00:00Z"],
            "before the last recorded event",
        ),
        (
            vec!["instance", "release", "box", "--at", "2025-02-28T00:00:00Z"],
            "before the instance was created",
        ),
        (vec!["instance", "release", "ghost"], "no instance named"),
        (
            vec!["instance", "start", "box", "--at", "2025-03-01T06:00:00Z"],
            "already running",
        ),
        (
            vec!["instance", "no-gpu", "box", "--at", "2025-03-01T06:00:00Z"],
            "no-GPU",
        ),
        (vec!["cost", "ghost", "--json"], "no instance named"),
    ];
    for (args, message) in cases {
        leasehold(&db.path, &args)
            .code(2)
            .stderr(contains(message))
            .stdout("");
        assert_eq!(row_counts(&db.path), before, "{args:?} must write nothing");
    }
}

#[test]
fn release_before_create_on_a_new_database_creates_no_file() {
    let db = fresh_db();
    leasehold(&db.path, &["instance", "release", "box"])
        .code(2)
        .stderr(contains("no instance named \"box\""));
    assert!(
        !db.path.exists(),
        "a refused command must not create the database"
    );
    leasehold(
        &db.path,
        &[
            "instance",
            "add",
            "box",
            "--gpu",
            "x",
            "--price",
            "0",
            "--currency",
            "CNY",
        ],
    )
    .code(2);
    assert!(
        !db.path.exists(),
        "bad input is refused before the database is opened"
    );
}

#[test]
fn events_after_release_are_refused() {
    let db = fresh_db();
    add_4090(&db.path);
    leasehold(
        &db.path,
        &["instance", "release", "box", "--at", "2025-03-01T01:00:00Z"],
    )
    .success();
    let before = row_counts(&db.path);
    leasehold(
        &db.path,
        &["instance", "start", "box", "--at", "2025-03-01T02:00:00Z"],
    )
    .code(2)
    .stderr(contains("released"));
    assert_eq!(row_counts(&db.path), before);
}

#[test]
fn an_unusable_database_path_is_a_failure_not_bad_input() {
    let dir = tempfile::tempdir().expect("temp dir");
    // A folder where the database file should be.
    leasehold(
        dir.path(),
        &[
            "instance",
            "add",
            "box",
            "--gpu",
            "x",
            "--price",
            "1",
            "--currency",
            "CNY",
        ],
    )
    .code(1)
    .stderr(contains("error:"));
}

/// Issue #13: a huge `--price` used to be stored, and every later `list`/`cost` panicked while
/// multiplying it. It is refused at the door now, and nothing is written.
#[test]
fn a_huge_price_is_refused_and_later_reports_still_work() {
    let db = fresh_db();
    leasehold(
        &db.path,
        &[
            "instance",
            "add",
            "box",
            "--gpu",
            "RTX 4090",
            "--price",
            "2.5",
            "--currency",
            "CNY",
            "--at",
            T0,
        ],
    )
    .success();
    for (args, field) in [
        (
            vec!["--price", "10000000000000000000000000000"],
            "price_per_gpu_hour",
        ),
        (vec!["--price", "2.5", "--count", "4000000000"], "gpu_count"),
        (
            vec![
                "--price",
                "2.5",
                "--stopped-billing",
                "rate:79228162514264337593543950335",
            ],
            "stopped_billing",
        ),
    ] {
        let mut all = vec![
            "instance",
            "add",
            "huge",
            "--gpu",
            "RTX 4090",
            "--currency",
            "CNY",
            "--at",
            T0,
            "--json",
        ];
        all.extend(args);
        let refused = leasehold(&db.path, &all).code(2);
        let stderr = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
        assert!(
            stderr.contains(field) && stderr.contains("larger than Leasehold accepts"),
            "{field}: a clear refusal, got {stderr}"
        );
    }
    assert_eq!(
        row_counts(&db.path).0,
        1,
        "nothing of the refused rentals was written"
    );
    leasehold(
        &db.path,
        &[
            "instance",
            "traffic",
            "box",
            "--gb",
            "99999999999999999999",
            "--at",
            T0,
        ],
    )
    .code(2)
    .stderr(contains("traffic_gb"));
    leasehold(
        &db.path,
        &["instance", "list", "--json", "--at", "2025-03-02T00:00:00Z"],
    )
    .success();
    let cost = leasehold(
        &db.path,
        &["cost", "box", "--json", "--at", "2025-03-02T00:00:00Z"],
    )
    .success();
    assert_eq!(json(&cost)["total"], "60.00", "24 h × 2.5");
}

#[test]
fn an_existing_instance_gets_shows_and_clears_its_project() {
    let db = fresh_db();
    add_4090(&db.path);
    let shown = leasehold(&db.path, &["instance", "project", "box", "--json"]).success();
    assert_eq!(
        json(&shown),
        serde_json::json!({"instance": "box", "project": null})
    );
    let set = leasehold(
        &db.path,
        &["instance", "project", "box", "视觉 vision", "--json"],
    )
    .success();
    assert_eq!(json(&set)["project"], "视觉 vision");
    leasehold(&db.path, &["instance", "project", "box"])
        .success()
        .stdout(contains("box: project 视觉 vision"));
    let cleared = leasehold(
        &db.path,
        &["instance", "project", "box", "--clear", "--json"],
    )
    .success();
    assert_eq!(json(&cleared)["project"], Value::Null);
    leasehold(&db.path, &["instance", "project", "nope", "x"])
        .failure()
        .stderr(contains("nope"));
    leasehold(&db.path, &["instance", "project", "box", "bad\nname"]).code(2);
    let after = leasehold(&db.path, &["instance", "project", "box", "--json"]).success();
    assert_eq!(
        json(&after)["project"],
        Value::Null,
        "a refused name writes nothing"
    );
}

#[test]
fn fees_quoted_per_day_month_or_gb_are_kept_per_hour() {
    let db = fresh_db();
    // AutoDL's 0.005 元/GB·天 on a 240 GB disk is 1.20 a day; an IP at 36 a month is 0.05 an hour.
    leasehold(
        &db.path,
        &[
            "instance",
            "add",
            "box",
            "--gpu",
            "RTX 4090",
            "--price",
            "2",
            "--currency",
            "CNY",
            "--disk-fee",
            "0.005/gb-day",
            "--disk-size-gb",
            "240",
            "--snapshot-fee",
            "0.07/GB·month",
            "--snapshot-size-gb",
            "100",
            "--ip-fee",
            "36/month",
            "--at",
            T0,
        ],
    )
    .success();
    let shown = json(&leasehold(&db.path, &["instance", "show", "box", "--json"]).success());
    assert_eq!(shown["rules"]["data_disk_per_hour"], "0.05");
    assert_eq!(shown["rules"]["snapshot_per_hour"], "0.00972222");
    assert_eq!(shown["rules"]["public_ip_per_hour"], "0.05");

    // A later rules change takes the same units.
    leasehold(
        &db.path,
        &[
            "instance",
            "rules",
            "box",
            "--disk-fee",
            "2.4/day",
            "--at",
            "2025-03-01T10:00:00Z",
        ],
    )
    .success();
    let shown = json(&leasehold(&db.path, &["instance", "show", "box", "--json"]).success());
    assert_eq!(shown["rules"]["data_disk_per_hour"], "0.1");

    // A per-GB quote without its size, an unknown unit, or an IP per GB is refused and writes nothing.
    let before = row_counts(&db.path);
    for (flags, says) in [
        (&["--disk-fee", "0.005/gb-day"][..], "data_disk_size_gb"),
        (&["--ip-fee", "1/week"][..], "not a fee unit"),
        (&["--ip-fee", "0.1/gb-month"][..], "no size"),
    ] {
        let mut args = vec![
            "instance",
            "add",
            "other",
            "--gpu",
            "RTX 4090",
            "--price",
            "2",
            "--currency",
            "CNY",
        ];
        args.extend_from_slice(flags);
        leasehold(&db.path, &args).code(2).stderr(contains(says));
    }
    assert_eq!(row_counts(&db.path), before);
}
