//! `leasehold account …` as scripts use it, against the provider stand-ins and a real Secret
//! Service (the key lands in the keychain, never in the database): exact JSON, exit codes, a
//! refused key that saves nothing, and a CLI killed mid-sync that leaves the ledger as one
//! clean sync would.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

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
        .env("LEASEHOLD_RUNPOD_API_URL", base)
        .env("LEASEHOLD_VAST_API_URL", base)
        .env("LEASEHOLD_AUTODL_API_URL", base)
        .env("LEASEHOLD_LAMBDA_API_URL", base)
        .env("RP_KEY", "rp-secret-key")
        .env("WRONG_KEY", "not-the-key")
        .assert()
}

fn json_of(assert: &assert_cmd::assert::Assert) -> Value {
    serde_json::from_slice(&assert.get_output().stdout).expect("stdout is JSON")
}

fn db_text(db: &Path) -> Vec<u8> {
    let mut all = std::fs::read(db).unwrap_or_default();
    for extra in ["-wal", "-shm"] {
        let mut p = db.as_os_str().to_owned();
        p.push(extra);
        all.extend(std::fs::read(PathBuf::from(p)).unwrap_or_default());
    }
    all
}

#[test]
fn add_list_sync_power_reconcile_remove() {
    let env = env();
    let standin = ProviderStandin::start("runpod", "rp-secret-key");
    let base = standin.base();

    let refused = leasehold(
        &env,
        &base,
        &["account", "add", "runpod", "--api-key-env", "WRONG_KEY"],
    );
    let refused = refused.code(2);
    let stderr = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(
        stderr.contains("invalid api key"),
        "the provider's words: {stderr}"
    );
    assert!(!stderr.contains("not-the-key"));
    let listed = json_of(&leasehold(&env, &base, &["account", "list", "--json"]).success());
    assert_eq!(
        listed,
        json!({"accounts": []}),
        "a refused key saves nothing"
    );

    leasehold(
        &env,
        &base,
        &["account", "add", "nimbus", "--api-key-env", "RP_KEY"],
    )
    .code(2);
    leasehold(
        &env,
        &base,
        &["account", "add", "runpod", "--api-key-env", "UNSET_VAR"],
    )
    .code(2);

    let added = json_of(
        &leasehold(
            &env,
            &base,
            &[
                "account",
                "add",
                "runpod",
                "--label",
                "lab",
                "--api-key-env",
                "RP_KEY",
                "--json",
            ],
        )
        .success(),
    );
    assert_eq!(added["key_in_keychain"], true);
    assert!(
        !db_text(&env.db)
            .windows(b"rp-secret-key".len())
            .any(|w| w == b"rp-secret-key"),
        "the key is in the keychain, never in the database"
    );

    standin.set_instances(json!([{"id": "p1", "name": "train", "state": "running",
                                  "price": "0.44", "created": 1_764_547_200}]));
    let synced = json_of(&leasehold(&env, &base, &["account", "sync", "--json"]).success());
    let first = &synced["accounts"][0];
    assert_eq!(first["provider"], "runpod");
    assert_eq!(first["label"], "lab");
    assert_eq!(first["imported"], json!(["train"]));
    assert_eq!(first["events"], json!([]));
    let again =
        json_of(&leasehold(&env, &base, &["account", "sync", "runpod:lab", "--json"]).success());
    assert_eq!(again["accounts"][0]["imported"], json!([]));
    assert_eq!(again["accounts"][0]["unchanged"], 1);

    let listed = json_of(&leasehold(&env, &base, &["account", "list", "--json"]).success());
    let account = &listed["accounts"][0];
    for field in ["provider", "label", "added_at", "last_sync_at"] {
        assert!(account.get(field).is_some(), "{field} in {account}");
    }

    let cost = json_of(&leasehold(&env, &base, &["cost", "train", "--json"]).success());
    assert_eq!(cost["currency"], "USD");

    let stopped = json_of(
        &leasehold(
            &env,
            &base,
            &["account", "power", "train", "off", "--wait", "20", "--json"],
        )
        .success(),
    );
    assert_eq!(stopped["verb"], "off");
    assert!(stopped["recorded_at"].is_string());
    // The same pod through `stop --api` (RunPod v2): already stopped, so the ledger refuses.
    leasehold(&env, &base, &["stop", "train", "--api"]).failure();
    leasehold(&env, &base, &["account", "power", "train", "sideways"]).code(2);

    standin.script(json!({"charges": {"p1": {"2025-12-01": "3.00"}}}));
    let rows = json_of(
        &leasehold(
            &env,
            &base,
            &[
                "account",
                "reconcile",
                "train",
                "--from",
                "2025-12-01",
                "--to",
                "2025-12-01",
                "--json",
            ],
        )
        .success(),
    );
    let row = &rows["rows"][0];
    for field in [
        "instance",
        "day",
        "ledger",
        "provider",
        "difference",
        "currency",
        "reason",
    ] {
        assert!(row.get(field).is_some(), "{field} in {row}");
    }
    assert_eq!(row["provider"], "3");
    leasehold(
        &env,
        &base,
        &["account", "reconcile", "--all", "--from", "12/01/2025"],
    )
    .code(2);
    leasehold(
        &env,
        &base,
        &[
            "account",
            "reconcile",
            "--all",
            "--from",
            "2025-12-02",
            "--to",
            "2025-12-01",
        ],
    )
    .code(2);

    leasehold(&env, &base, &["account", "remove", "runpod:lab", "--json"]).success();
    leasehold(&env, &base, &["account", "remove", "runpod:lab"]).code(2);
    let listed = json_of(&leasehold(&env, &base, &["account", "list", "--json"]).success());
    assert_eq!(listed["accounts"], json!([]));
    assert!(
        standin.violations().is_empty(),
        "{:?}",
        standin.violations()
    );
}

/// The ledger's rows as text, for comparing two databases.
fn ledger_dump(env: &Env, base: &str) -> Value {
    let listed = json_of(&leasehold(env, base, &["instance", "list", "--json"]).success());
    let mut names: Vec<String> = listed
        .as_array()
        .or_else(|| listed["instances"].as_array())
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|i| i["name"].as_str().unwrap_or("").to_owned())
        .collect();
    names.sort();
    Value::from(names)
}

#[test]
fn a_cli_killed_mid_sync_leaves_what_one_clean_sync_leaves() {
    let killed = env();
    let clean = env();
    let standin = ProviderStandin::start("vast", "rp-secret-key");
    let base = standin.base();
    let instances: Vec<Value> = (1..=30)
        .map(|n| json!({"id": 9000 + n, "name": format!("node {n}"), "state": "running", "price": "0.5"}))
        .collect();
    standin.set_instances(Value::Array(instances));
    for env in [&killed, &clean] {
        leasehold(
            env,
            &base,
            &["account", "add", "vast", "--api-key-env", "RP_KEY"],
        )
        .success();
    }
    // Pages of one, each answered after 50 ms: the sync is killed while paging.
    standin.script(json!({"page_size": 1, "delay": 0.05}));
    let mut child = Command::new(assert_cmd::cargo::cargo_bin!("leasehold"))
        .args(["account", "sync", "--db"])
        .arg(&killed.db)
        .env("DBUS_SESSION_BUS_ADDRESS", killed.secrets.bus_address())
        .env("LEASEHOLD_VAST_API_URL", &base)
        .env("RP_KEY", "rp-secret-key")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the CLI starts");
    // Wait until it is paging, then kill it.
    let listing = |n: usize| {
        standin
            .requests()
            .iter()
            .filter(|r| r["path"] == "/api/v1/instances/")
            .count()
            >= n
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !listing(8) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(
        ledger_dump(&killed, &base),
        json!([]),
        "killed mid-listing: nothing written"
    );

    standin.script(json!({"page_size": 25, "delay": 0}));
    leasehold(&killed, &base, &["account", "sync"]).success();
    leasehold(&clean, &base, &["account", "sync"]).success();
    assert_eq!(ledger_dump(&killed, &base), ledger_dump(&clean, &base));
    assert_eq!(ledger_dump(&clean, &base).as_array().unwrap().len(), 30);
}

fn leasehold_with(
    env: &Env,
    base: &str,
    extra: &[(&str, &str)],
    args: &[&str],
) -> assert_cmd::assert::Assert {
    let mut cmd = cargo_bin_cmd!("leasehold");
    cmd.args(args)
        .arg("--db")
        .arg(&env.db)
        .env("DBUS_SESSION_BUS_ADDRESS", env.secrets.bus_address())
        .env("LEASEHOLD_RUNPOD_API_URL", base)
        .env("LEASEHOLD_VAST_API_URL", base)
        .env("LEASEHOLD_AUTODL_API_URL", base)
        .env("LEASEHOLD_LAMBDA_API_URL", base)
        .env("RP_KEY", "rp-secret-key");
    for (k, v) in extra {
        cmd.env(k, v);
    }
    cmd.assert()
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

/// The audit's hostile answers through the CLI: a sync with skipped records exits 0 with
/// warnings, a 1000× price is held and accepted, an echoed key is never stored or printed, a
/// refused base URL and a far date are exit 2, and removing says what the keychain did.
#[test]
fn hostile_answers_keep_the_sync_contract() {
    let env = env();
    let standin = ProviderStandin::start("runpod", "rp-secret-key");
    let base = standin.base();
    leasehold(
        &env,
        &base,
        &["account", "add", "runpod", "--api-key-env", "RP_KEY"],
    )
    .success();
    standin.set_instances(json!([
        {"id": "ok1", "name": "healthy", "state": "running", "price": "0.44", "created": 1_764_547_200},
        {"id": "dup", "name": "twice", "state": "running", "price": "0.5", "created": 1_764_547_200},
    ]));
    standin.script(json!({"duplicate": ["dup"]}));
    let synced = json_of(&leasehold(&env, &base, &["account", "sync", "--json"]).success());
    let first = &synced["accounts"][0];
    for key in [
        "provider",
        "label",
        "imported",
        "events",
        "unchanged",
        "warnings",
        "requests",
        "held",
    ] {
        assert!(first.get(key).is_some(), "{key} in {first}");
    }
    assert_eq!(first["imported"], json!(["healthy"]));
    assert!(
        first["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("dup")),
        "{first}"
    );

    standin.script(json!({"duplicate": []}));
    standin.patch("ok1", json!({"price": "440"}));
    let synced = json_of(&leasehold(&env, &base, &["account", "sync", "--json"]).success());
    assert_eq!(
        synced["accounts"][0]["held"],
        json!([{"instance": "healthy", "from": "0.44", "to": "440", "currency": "USD"}])
    );
    let text = leasehold(&env, &base, &["account", "sync"]).success();
    assert!(
        String::from_utf8_lossy(&text.get_output().stdout).contains("account accept"),
        "the plain sync says how to apply it"
    );
    let accepted =
        json_of(&leasehold(&env, &base, &["account", "accept", "healthy", "--json"]).success());
    assert_eq!(accepted["to"], "440");
    assert!(accepted["applied_at"].is_string());
    leasehold(&env, &base, &["account", "accept", "healthy"]).code(2);
    leasehold(&env, &base, &["account", "accept", "no-such"]).code(2);

    // A 401 that quotes the key: exit 1, and the key is nowhere.
    standin.script(json!({"fail": [{"status": 401, "times": 1, "body": {
        "detail": "rejected rp-secret-key (Authorization: Bearer rp-secret-key)"}}]}));
    let failed = leasehold(&env, &base, &["account", "sync", "--json"]).code(1);
    let out = failed.get_output();
    assert!(!contains(&out.stdout, "rp-secret-key"), "stdout");
    assert!(!contains(&out.stderr, "rp-secret-key"), "stderr");
    let listed = leasehold(&env, &base, &["account", "list", "--json"]).success();
    assert!(!contains(&listed.get_output().stdout, "rp-secret-key"));
    assert!(!contains(&db_text(&env.db), "rp-secret-key"));

    // A refused base URL: exit 2 naming the variable, and no request anywhere.
    for bad in [
        "http://api.example.com",
        "https://api.runpod.io/v1",
        "::garbage::",
    ] {
        let refused = leasehold_with(
            &env,
            &base,
            &[("LEASEHOLD_RUNPOD_API_URL", bad)],
            &["account", "sync"],
        )
        .code(2);
        assert!(
            contains(&refused.get_output().stderr, "LEASEHOLD_RUNPOD_API_URL"),
            "{}",
            String::from_utf8_lossy(&refused.get_output().stderr)
        );
    }

    // Far dates: exit 2, never a panic (101).
    for args in [
        &["account", "reconcile", "--all", "--from", "+262142-12-30"][..],
        &["account", "reconcile", "--all", "--to", "+262142-12-30"][..],
        &[
            "instance",
            "stop",
            "healthy",
            "--at",
            "9999-12-31T23:59:59Z",
        ][..],
        &["forecast", "healthy", "--until", "9999-12-31T23:59:59Z"][..],
        &["cost", "healthy", "--at", "0001-01-01T00:00:00Z"][..],
    ] {
        leasehold(&env, &base, args).code(2);
    }

    let removed = leasehold(&env, &base, &["account", "remove", "runpod"]).success();
    let said = String::from_utf8_lossy(&removed.get_output().stdout).into_owned();
    assert!(said.contains("removed runpod:default"), "{said}");
    assert!(said.contains("keychain"), "{said}");
    assert!(
        standin.violations().is_empty(),
        "{:?}",
        standin.violations()
    );
}
