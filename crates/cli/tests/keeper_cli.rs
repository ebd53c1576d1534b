//! `leasehold account power NAME on --until-gpu`, `keeper …`, `account bid` and `account
//! price-increase` as scripts use them, against the provider stand-ins and a real Secret
//! Service: the exact JSON and exit codes (0 on, 1 when a limit ran out, 2 bad input).

use std::path::PathBuf;

use assert_cmd::cargo::cargo_bin_cmd;
use leasehold_testkit::provider_standin::ProviderStandin;
use leasehold_testkit::secret_service::SecretService;
use serde_json::{json, Value};

struct Env {
    _dir: tempfile::TempDir,
    db: PathBuf,
    secrets: SecretService,
}

fn env() -> Env {
    let dir = tempfile::tempdir().expect("temp dir");
    Env {
        db: dir.path().join("ledger.sqlite3"),
        _dir: dir,
        secrets: SecretService::start(),
    }
}

fn leasehold(env: &Env, base: &str, args: &[&str]) -> assert_cmd::assert::Assert {
    cargo_bin_cmd!("leasehold")
        .args(args)
        .arg("--db")
        .arg(&env.db)
        .env("DBUS_SESSION_BUS_ADDRESS", env.secrets.bus_address())
        .env("LEASEHOLD_VAST_API_URL", base)
        .env("LEASEHOLD_AUTODL_API_URL", base)
        .env("THE_KEY", "the-key")
        .assert()
}

fn json_of(assert: &assert_cmd::assert::Assert) -> Value {
    serde_json::from_slice(&assert.get_output().stdout).expect("stdout is JSON")
}

fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    keys
}

#[test]
fn the_hunt_exits_0_once_on_1_when_a_limit_ran_out_and_2_on_bad_input() {
    let env = env();
    let standin = ProviderStandin::start("autodl", "the-key");
    let base = standin.base();
    leasehold(
        &env,
        &base,
        &["account", "add", "autodl", "--api-key-env", "THE_KEY"],
    )
    .success();
    standin.set_instances(json!([
        {"id": "adl-1", "name": "lora", "state": "stopped", "price": "2.28", "gpu": "RTX 4090"}
    ]));
    leasehold(&env, &base, &["account", "sync"]).success();

    for bad in [
        vec!["--until-gpu", "--every", "120..10"],
        vec!["--until-gpu", "--for", "2w"],
        vec!["--until-gpu", "--max-spend", "0"],
        vec!["--for", "30m"],
    ] {
        let mut args = vec!["account", "power", "lora", "on", "--json"];
        args.extend(bad.iter().copied());
        leasehold(&env, &base, &args).code(2);
    }
    leasehold(
        &env,
        &base,
        &["account", "power", "lora", "off", "--until-gpu"],
    )
    .code(2);
    assert!(standin
        .requests()
        .iter()
        .all(|r| r["path"] != "/api/v1/dev/instance/pro/power_on"));

    // One hour at ¥2.28 passes ¥1: no try.
    let spend = json_of(
        &leasehold(
            &env,
            &base,
            &[
                "account",
                "power",
                "lora",
                "on",
                "--until-gpu",
                "--max-spend",
                "1",
                "--json",
            ],
        )
        .code(1),
    );
    assert_eq!(
        keys(&spend),
        [
            "gave_up",
            "instance",
            "last_answer",
            "powered_on_at",
            "tries"
        ]
    );
    assert_eq!(
        (
            &spend["instance"],
            &spend["tries"],
            &spend["gave_up"],
            &spend["powered_on_at"]
        ),
        (&json!("lora"), &json!(0), &json!("spend"), &Value::Null)
    );

    standin.script(json!({"no_stock": 1000}));
    let time = json_of(
        &leasehold(
            &env,
            &base,
            &[
                "account",
                "power",
                "lora",
                "on",
                "--until-gpu",
                "--for",
                "2s",
                "--every",
                "1",
                "--json",
            ],
        )
        .code(1),
    );
    assert_eq!(time["gave_up"], "time");
    assert!(time["tries"].as_u64().unwrap() >= 2, "{time}");
    assert!(
        time["last_answer"].as_str().unwrap().contains("暂无库存"),
        "{time}"
    );

    standin.script(json!({"no_stock": 2}));
    let on = json_of(
        &leasehold(
            &env,
            &base,
            &[
                "account",
                "power",
                "lora",
                "on",
                "--until-gpu",
                "--every",
                "1",
                "--for",
                "60s",
                "--json",
            ],
        )
        .success(),
    );
    assert_eq!(
        (&on["tries"], &on["gave_up"]),
        (&json!(3), &Value::Null),
        "{on}"
    );
    assert!(chrono::DateTime::parse_from_rfc3339(on["powered_on_at"].as_str().unwrap()).is_ok());

    let listed = json_of(&leasehold(&env, &base, &["keeper", "list", "--json"]).success());
    let lora = &listed["instances"][0];
    assert_eq!(lora["instance"], "lora");
    assert_eq!(lora["hunt"]["state"], "on");
    assert_eq!(lora["next"]["action"], "nothing");

    let policy = json_of(
        &leasehold(
            &env,
            &base,
            &[
                "keeper",
                "policy",
                "lora",
                "--stop-after-idle",
                "30m",
                "--release-after-stopped",
                "3d",
                "--json",
            ],
        )
        .success(),
    );
    assert_eq!(
        policy,
        json!({"stop_after_idle_s": 1800, "release_after_stopped_s": 259_200,
               "auto_release": false, "off": false, "bid_cap": null})
    );
    leasehold(
        &env,
        &base,
        &["keeper", "policy", "lora", "--stop-after-idle", "soon"],
    )
    .code(2);
    // One stage cleared on its own; the other stays.
    let cleared = json_of(
        &leasehold(
            &env,
            &base,
            &[
                "keeper",
                "policy",
                "lora",
                "--stop-after-idle",
                "off",
                "--json",
            ],
        )
        .success(),
    );
    assert_eq!(cleared["stop_after_idle_s"], Value::Null);
    assert_eq!(cleared["release_after_stopped_s"], 259_200);
    leasehold(&env, &base, &["keeper", "stop", "lora"]).code(2);
    assert_eq!(standin.violations(), Vec::<Value>::new());
}

#[test]
fn bids_and_price_increases_on_vast() {
    let env = env();
    let standin = ProviderStandin::start("vast", "the-key");
    let base = standin.base();
    leasehold(
        &env,
        &base,
        &["account", "add", "vast", "--api-key-env", "THE_KEY"],
    )
    .success();
    standin.set_instances(json!([
        {"id": "5001", "name": "spot", "state": "stopped", "price": "0.12", "bid": 0.25,
         "min_bid": 0.31, "outbid": true, "created": 1_764_500_000},
    ]));
    leasehold(&env, &base, &["account", "sync"]).success();
    let looked = json_of(&leasehold(&env, &base, &["keeper", "look-vast", "--json"]).success());
    assert_eq!(
        looked,
        json!({"looked": ["spot"], "outbid": ["spot"], "price_increases": [], "failed": []})
    );
    let status =
        json_of(&leasehold(&env, &base, &["instance", "status", "spot", "--json"]).success());
    assert_eq!(status["state"], "outbid");
    assert_eq!(status["actions"], json!(["raise_bid", "release"]));
    leasehold(
        &env,
        &base,
        &["keeper", "policy", "spot", "--bid-cap", "0.4"],
    )
    .success();
    leasehold(&env, &base, &["account", "bid", "spot", "0.5", "--json"]).code(2);
    let bid =
        json_of(&leasehold(&env, &base, &["account", "bid", "spot", "0.35", "--json"]).success());
    assert_eq!(
        bid,
        json!({"instance": "spot", "price": "0.35", "was_outbid": true})
    );

    standin.script(
        json!({"price_increases": [{"pending_price_increase_id": 7, "contract_id": 5001,
        "old_gpu_costpersec": 0.0001, "old_disk_ram_costpersec": 0.0,
        "new_gpu_costpersec": 0.0002, "new_disk_ram_costpersec": 0.0}]}),
    );
    leasehold(&env, &base, &["account", "price-increase", "spot", "maybe"]).code(2);
    let answered = json_of(
        &leasehold(
            &env,
            &base,
            &["account", "price-increase", "spot", "reject", "--json"],
        )
        .success(),
    );
    assert_eq!(answered["accepted"], false);
    assert_eq!(answered["increase"]["new_per_hour"], "0.72");
    leasehold(
        &env,
        &base,
        &["account", "price-increase", "spot", "accept"],
    )
    .code(2);
    assert_eq!(standin.violations(), Vec::<Value>::new());
}
