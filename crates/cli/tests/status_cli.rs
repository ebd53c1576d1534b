//! `leasehold instance status NAME --json` and the state in `instance list --json`: the one
//! status of an instance as scripts read it (exact keys, amounts as decimal strings), decided
//! from the ledger and what the other sources recorded (a stop check, the monitor's minutes, a
//! provider link, a watchdog look).

use std::path::Path;

use assert_cmd::cargo::cargo_bin_cmd;
use chrono::{DateTime, Duration, Utc};
use leasehold_core::monitor::history::{self, GpuMinute};
use leasehold_core::store::{accounts, stop_checks, watchdog_looks, Store};
use serde_json::Value;

const T0: &str = "2025-03-01T00:00:00Z";

fn t(minutes: i64) -> DateTime<Utc> {
    T0.parse::<DateTime<Utc>>().expect("time") + Duration::minutes(minutes)
}

fn at(minutes: i64) -> String {
    t(minutes).to_rfc3339()
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

fn add_running(db: &Path, name: &str, provider: &str, currency: &str, price: &str) {
    leasehold(
        db,
        &[
            "instance",
            "add",
            name,
            "--gpu",
            "RTX 4090",
            "--count",
            "1",
            "--price",
            price,
            "--currency",
            currency,
            "--provider",
            provider,
            "--at",
            T0,
        ],
    )
    .success();
    leasehold(db, &["instance", "start", name, "--at", &at(10)]).success();
}

fn status(db: &Path, name: &str, minutes: i64) -> Value {
    json(
        &leasehold(
            db,
            &["instance", "status", name, "--json", "--at", &at(minutes)],
        )
        .success(),
    )
}

/// Run `work` against the database file, as another part of Leasehold would have written it.
fn with_store<F>(db: &Path, work: impl FnOnce(Store) -> F)
where
    F: std::future::Future<Output = ()>,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let store = Store::open(db).await.expect("open the database");
        work(store.clone()).await;
        store.close().await;
    });
}

async fn instance_id(store: &Store, name: &str) -> i64 {
    let mut conn = store.pool().acquire().await.expect("conn");
    leasehold_core::store::ledger::find_instance(&mut conn, name)
        .await
        .expect("query")
        .expect("instance")
        .id
}

#[test]
fn status_json_has_exactly_the_contracts_keys_and_decimal_strings() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("ledger.sqlite3");
    add_running(&db, "box", "custom", "CNY", "2.5");
    let value = status(&db, "box", 60);
    let mut keys: Vec<&str> = value
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "actions",
            "cost_per_hour",
            "currency",
            "facts",
            "instance",
            "may_cost_per_hour",
            "since",
            "state",
            "warnings"
        ]
    );
    assert_eq!(value["instance"], "box");
    assert_eq!(value["state"], "running");
    assert_eq!(
        value["since"], "2025-03-01T00:10:00Z",
        "RFC 3339, from the start"
    );
    assert_eq!(value["currency"], "CNY");
    assert_eq!(value["cost_per_hour"], "2.50");
    assert_eq!(value["may_cost_per_hour"], "2.50");
    assert_eq!(
        value["actions"],
        serde_json::json!(["stop", "record_stop", "release"])
    );
    assert_eq!(value["warnings"], serde_json::json!([]));
    let fact = &value["facts"][0];
    assert_eq!(fact["source"], "ledger");
    assert_eq!(fact["at"], "2025-03-01T00:10:00Z");
    assert!(fact["says"].is_string());
}

#[test]
fn a_contradicted_stop_is_stop_unconfirmed_in_status_and_list_and_may_still_cost() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("ledger.sqlite3");
    add_running(&db, "lora", "custom", "CNY", "2.5");
    leasehold(&db, &["instance", "stop", "lora", "--at", &at(60)]).success();
    with_store(&db, |store| async move {
        let id = instance_id(&store, "lora").await;
        let mut conn = store.pool().acquire().await.expect("conn");
        stop_checks::upsert(
            &mut conn,
            &stop_checks::StopCheckRow {
                instance_id: id,
                checked_at: t(61),
                answered: true,
                via: "ssh".into(),
            },
        )
        .await
        .expect("stop check kept");
    });
    let value = status(&db, "lora", 90);
    assert_eq!(value["state"], "stop_unconfirmed");
    assert_eq!(
        value["cost_per_hour"], "0.00",
        "the ledger bills nothing while stopped"
    );
    assert_eq!(
        value["may_cost_per_hour"], "2.50",
        "but the machine answered"
    );
    assert_eq!(value["actions"][0], "check_again");
    assert_eq!(value["warnings"][0]["code"], "status.stop_unconfirmed");
    assert!(value["warnings"][0]["message"].is_string());
    let list = json(&leasehold(&db, &["instance", "list", "--json", "--at", &at(90)]).success());
    assert_eq!(list[0]["name"], "lora");
    assert_eq!(
        list[0]["state"], "stop_unconfirmed",
        "the list carries the same state"
    );
    assert_eq!(list[0]["total"], "2.50", "the summary's own keys stay");
}

#[test]
fn list_json_gives_each_instance_the_status_state() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("ledger.sqlite3");
    leasehold(
        &db,
        &[
            "instance",
            "add",
            "fresh",
            "--gpu",
            "A100",
            "--price",
            "3",
            "--currency",
            "CNY",
            "--billing-starts",
            "running",
            "--at",
            T0,
        ],
    )
    .success();
    add_running(&db, "busy", "custom", "CNY", "2.5");
    add_running(&db, "gone", "custom", "CNY", "2.5");
    leasehold(&db, &["instance", "release", "gone", "--at", &at(30)]).success();
    let list = json(&leasehold(&db, &["instance", "list", "--json", "--at", &at(60)]).success());
    let states: Vec<(&str, &str)> = list
        .as_array()
        .expect("a list")
        .iter()
        .map(|i| (i["name"].as_str().unwrap(), i["state"].as_str().unwrap()))
        .collect();
    assert_eq!(
        states,
        [
            ("fresh", "created"),
            ("busy", "running"),
            ("gone", "released")
        ]
    );
}

#[test]
fn eight_gpus_seen_on_a_one_gpu_rental_warn_with_the_new_hourly_price() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("ledger.sqlite3");
    add_running(&db, "big", "custom", "CNY", "2.5");
    // The monitor's minutes from 20 minutes before "now" (t(60)): eight GPUs each minute.
    let minutes: Vec<GpuMinute> = (40..59)
        .flat_map(|m| {
            (0..8u32).map(move |gpu| GpuMinute {
                minute: t(m),
                gpu_index: gpu,
                samples: 60,
                utilization_avg: 90.0,
                utilization_max: 99,
                memory_used_max_mib: 1000,
                memory_total_mib: 24_576,
                power_avg_w: None,
            })
        })
        .collect();
    with_store(&db, |store| async move {
        history::record(&store, "big", &minutes)
            .await
            .expect("minutes recorded");
    });
    let value = status(&db, "big", 60);
    let warning = &value["warnings"][0];
    assert_eq!(warning["code"], "status.gpu_count_differs");
    assert_eq!(warning["params"]["seen"], "8");
    assert_eq!(warning["params"]["price"], "20.00");
    let monitor = value["facts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["source"] == "monitor")
        .expect("a monitor fact");
    assert_eq!(monitor["at"], "2025-03-01T00:58:00Z");
}

#[test]
fn a_released_instance_the_provider_still_lists_is_released_but_listed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("ledger.sqlite3");
    add_running(&db, "pod", "runpod", "USD", "0.69");
    leasehold(&db, &["instance", "release", "pod", "--at", &at(30)]).success();
    with_store(&db, |store| async move {
        let id = instance_id(&store, "pod").await;
        let mut conn = store.pool().acquire().await.expect("conn");
        let account = accounts::insert_account(&mut conn, "runpod", "main", None, t(0))
            .await
            .expect("account");
        accounts::insert_link(
            &mut conn,
            &accounts::NewLink {
                instance_id: id,
                account_id: account,
                remote_id: "pod7x",
                remote_state: "running",
                seen_at: t(50),
                imported: false,
                note: None,
            },
        )
        .await
        .expect("link");
        watchdog_looks::upsert(
            &mut conn,
            &watchdog_looks::WatchdogLookRow {
                instance_id: id,
                looked_at: t(20),
                installed: true,
                running: true,
                phase: Some("watching".into()),
                unreadable: "gpu".into(),
            },
        )
        .await
        .expect("watchdog look");
    });
    let value = status(&db, "pod", 60);
    assert_eq!(value["state"], "released_but_listed");
    assert_eq!(value["since"], "2025-03-01T00:30:00Z");
    assert_eq!(value["cost_per_hour"], "0.00");
    assert_eq!(value["may_cost_per_hour"], "0.69");
    assert_eq!(value["actions"], serde_json::json!([]));
    let codes: Vec<&str> = value["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["code"].as_str())
        .collect();
    assert_eq!(
        codes,
        ["status.released_but_listed"],
        "a released instance has no watchdog to worry about"
    );
    let list = json(&leasehold(&db, &["instance", "list", "--json", "--at", &at(60)]).success());
    assert_eq!(list[0]["state"], "released_but_listed");
}

#[test]
fn status_of_an_unknown_instance_is_bad_input_and_text_names_the_state() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("ledger.sqlite3");
    add_running(&db, "box", "custom", "CNY", "2.5");
    leasehold(&db, &["instance", "status", "nope", "--json"]).code(2);
    let text = leasehold(&db, &["instance", "status", "box", "--at", &at(60)]).success();
    let out = String::from_utf8_lossy(&text.get_output().stdout).into_owned();
    assert!(
        out.starts_with("box: running since 2025-03-01T00:10:00+00:00 · 2.50 CNY/h"),
        "{out}"
    );
    assert!(out.contains("now: stop, record_stop, release"), "{out}");
}
