//! `leasehold market …`, `leasehold recommend --market` and `leasehold rent` as scripts use
//! them, against the provider stand-ins and a real Secret Service: exact JSON keys, exit codes,
//! the snapshot kept when a refresh fails, and renting (method, path, key and body checked; a
//! refusal or a price above the cap records nothing; a lost answer gives one instance, not two).

use std::path::PathBuf;

use assert_cmd::cargo::cargo_bin_cmd;
use leasehold_testkit::provider_standin::ProviderStandin;
use leasehold_testkit::secret_service::SecretService;
use serde_json::{json, Value};

struct Env {
    dir: tempfile::TempDir,
    db: PathBuf,
    secrets: SecretService,
}

fn env() -> Env {
    let dir = tempfile::tempdir().expect("temp dir");
    Env {
        db: dir.path().join("ledger.sqlite3"),
        dir,
        secrets: SecretService::start(),
    }
}

struct Bases {
    runpod: String,
    vast: String,
    lambda: String,
}

fn leasehold(env: &Env, bases: &Bases, args: &[&str]) -> assert_cmd::assert::Assert {
    cargo_bin_cmd!("leasehold")
        .args(args)
        .arg("--db")
        .arg(&env.db)
        .env("HOME", env.dir.path())
        .env("DBUS_SESSION_BUS_ADDRESS", env.secrets.bus_address())
        .env("LEASEHOLD_RUNPOD_API_URL", &bases.runpod)
        .env("LEASEHOLD_VAST_API_URL", &bases.vast)
        .env("LEASEHOLD_LAMBDA_API_URL", &bases.lambda)
        .env("LEASEHOLD_AUTODL_API_URL", "http://127.0.0.1:9")
        .env("RP_KEY", "rp-key")
        .env("VAST_KEY", "vast-key")
        .env("LAMBDA_KEY", "lambda-key")
        .assert()
}

fn json_of(assert: &assert_cmd::assert::Assert) -> Value {
    serde_json::from_slice(&assert.get_output().stdout).expect("stdout is JSON")
}

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    k.sort_unstable();
    k
}

const OFFER_KEYS: [&str; 12] = [
    "count",
    "currency",
    "fetched_at",
    "gpu",
    "interruptible",
    "offer_id",
    "price_per_gpu_hour",
    "price_per_hour",
    "provider",
    "region",
    "stock",
    "vram_gb",
];

fn vast_market(vast: &ProviderStandin) {
    vast.set_offers(json!({"offers": [
        {"id": "101", "gpu": "RTX 4090", "vram_gb": 24, "price": 0.35, "region": "Texas, US",
         "min_bid": 0.2},
        {"id": "102", "gpu": "RTX 4090", "count": 2, "vram_gb": 24, "price": 0.31,
         "region": "Quebec, CA"},
        {"id": "103", "gpu": "RTX 3090", "vram_gb": 24, "price": 0.15, "region": "Ohio, US"},
        {"id": "104", "gpu": "H100 SXM", "vram_gb": 80, "price": 1.99, "region": "Texas, US"},
    ]}));
}

#[test]
fn refresh_list_and_recommend_with_no_account_linked() {
    let env = env();
    let vast = ProviderStandin::start("vast", "vast-key");
    vast_market(&vast);
    let bases = Bases {
        runpod: "http://127.0.0.1:9".into(),
        vast: vast.base(),
        lambda: "http://127.0.0.1:9".into(),
    };

    let refreshed = json_of(&leasehold(&env, &bases, &["market", "refresh", "--json"]).success());
    let providers = refreshed["providers"].as_array().unwrap();
    assert_eq!(keys(&refreshed), ["providers"]);
    let by = |name: &str| {
        providers
            .iter()
            .find(|p| p["provider"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(keys(&by("vast")), ["fetched_at", "offers", "provider"]);
    assert_eq!(by("vast")["offers"], 5);
    for needs_account in ["runpod", "lambda"] {
        let p = by(needs_account);
        assert_eq!(keys(&p), ["error", "fetched_at", "offers", "provider"]);
        assert!(p["error"].as_str().unwrap().contains("account add"), "{p}");
        assert_eq!(p["fetched_at"], Value::Null);
    }

    let listed = json_of(&leasehold(&env, &bases, &["market", "list", "--json"]).success());
    let offers = listed["offers"].as_array().unwrap();
    assert_eq!(offers.len(), 5);
    assert_eq!(keys(&offers[0]), OFFER_KEYS);
    let order: Vec<&str> = offers
        .iter()
        .map(|o| o["offer_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        order,
        ["103", "101-bid", "102", "101", "104"],
        "cheapest per GPU-hour first"
    );
    assert_eq!(offers[2]["price_per_hour"], "0.62");
    assert_eq!(offers[2]["price_per_gpu_hour"], "0.31");
    assert_eq!(offers[0]["stock"], "high");

    let filtered = json_of(
        &leasehold(
            &env,
            &bases,
            &[
                "market",
                "list",
                "--gpu",
                "4090",
                "--on-demand",
                "--max-price-per-gpu-hour",
                "0.34",
                "--json",
            ],
        )
        .success(),
    );
    let ids: Vec<&str> = filtered["offers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["offer_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["102"]);
    let bids = json_of(
        &leasehold(
            &env,
            &bases,
            &["market", "list", "--interruptible", "--json"],
        )
        .success(),
    );
    assert_eq!(bids["offers"].as_array().unwrap().len(), 1);
    let texas = json_of(
        &leasehold(
            &env,
            &bases,
            &[
                "market",
                "list",
                "--region",
                "texas",
                "--min-vram-gb",
                "80",
                "--json",
            ],
        )
        .success(),
    );
    assert_eq!(texas["offers"][0]["offer_id"], "104");

    leasehold(&env, &bases, &["market", "list", "--count", "0"]).code(2);
    leasehold(
        &env,
        &bases,
        &["market", "list", "--interruptible", "--on-demand"],
    )
    .code(2);
    leasehold(&env, &bases, &["market", "refresh", "nimbus"]).code(2);

    let text = leasehold(&env, &bases, &["market", "list", "--gpu", "3090"]).success();
    let text = String::from_utf8_lossy(&text.get_output().stdout).into_owned();
    assert!(
        text.contains("Vast.ai's catalog") && text.contains("just now"),
        "{text}"
    );

    // recommend --market: each plan gains its fitting offers, with a task cost given hours.
    let plain = json_of(
        &leasehold(
            &env,
            &bases,
            &[
                "recommend",
                "--task",
                "inference",
                "--params",
                "7",
                "--json",
            ],
        )
        .success(),
    );
    assert!(
        plain["candidates"][0].get("offers").is_none(),
        "the existing output is unchanged"
    );
    let rec = json_of(
        &leasehold(
            &env,
            &bases,
            &[
                "recommend",
                "--task",
                "inference",
                "--params",
                "7",
                "--hours",
                "10",
                "--market",
                "--json",
            ],
        )
        .success(),
    );
    let candidates = rec["candidates"].as_array().unwrap();
    let plan_4090 = candidates
        .iter()
        .find(|c| c["gpu_id"] == "rtx-4090" && c["count"] == 1)
        .expect("a 1× 4090 plan");
    let offers = plan_4090["offers"].as_array().unwrap();
    let ids: Vec<&str> = offers
        .iter()
        .map(|o| o["offer_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        ["101-bid", "101"],
        "1× offers only; cheapest task first"
    );
    let mut with_cost: Vec<&str> = OFFER_KEYS.to_vec();
    with_cost.push("task_cost");
    with_cost.sort_unstable();
    assert_eq!(keys(&offers[0]), with_cost);
    assert!(offers[0]["task_cost"].is_string());
    for c in candidates.iter().filter(|c| c["fits"] == false) {
        assert_eq!(
            c["offers"],
            json!([]),
            "a plan that does not fit has no offers"
        );
    }
}

#[test]
fn a_failed_refresh_keeps_the_last_good_offers() {
    let env = env();
    let vast = ProviderStandin::start("vast", "vast-key");
    vast_market(&vast);
    let bases = Bases {
        runpod: "http://127.0.0.1:9".into(),
        vast: vast.base(),
        lambda: "http://127.0.0.1:9".into(),
    };
    let first =
        json_of(&leasehold(&env, &bases, &["market", "refresh", "vast", "--json"]).success());
    let fetched = first["providers"][0]["fetched_at"].clone();
    vast.script(json!({"fail": [{"status": 429, "times": 3}]}));
    let failed =
        json_of(&leasehold(&env, &bases, &["market", "refresh", "vast", "--json"]).success());
    let p = &failed["providers"][0];
    assert_eq!(
        (p["offers"].clone(), p["fetched_at"].clone()),
        (json!(5), fetched.clone())
    );
    assert!(p["error"].as_str().unwrap().contains("429"), "{p}");
    let listed = json_of(&leasehold(&env, &bases, &["market", "list", "--json"]).success());
    assert_eq!(listed["offers"].as_array().unwrap().len(), 5);
    assert_eq!(listed["offers"][0]["fetched_at"], fetched);
}

#[test]
fn alerts_add_list_remove() {
    let env = env();
    let bases = Bases {
        runpod: "http://127.0.0.1:9".into(),
        vast: "http://127.0.0.1:9".into(),
        lambda: "http://127.0.0.1:9".into(),
    };
    let added = json_of(
        &leasehold(
            &env,
            &bases,
            &[
                "market", "alert", "add", "--gpu", "4090", "--below", "0.35", "--json",
            ],
        )
        .success(),
    );
    assert_eq!(added["gpu"], "NVIDIA GeForce RTX 4090");
    assert_eq!(
        added["rule"],
        json!({"kind": "below", "below": "0.35", "currency": "USD"})
    );
    leasehold(
        &env,
        &bases,
        &[
            "market",
            "alert",
            "add",
            "--gpu",
            "H100",
            "--in-stock",
            "--region",
            "Texas",
        ],
    )
    .success();
    leasehold(&env, &bases, &["market", "alert", "add", "--gpu", "H100"]).code(2);
    leasehold(
        &env,
        &bases,
        &[
            "market",
            "alert",
            "add",
            "--gpu",
            "H100",
            "--below",
            "1",
            "--in-stock",
        ],
    )
    .code(2);
    leasehold(
        &env,
        &bases,
        &["market", "alert", "add", "--gpu", "H100", "--below", "-1"],
    )
    .code(2);
    let cheaper = json_of(
        &leasehold(
            &env,
            &bases,
            &[
                "market",
                "alert",
                "add",
                "--gpu",
                "4090",
                "--cheaper-than-mine",
                "--json",
            ],
        )
        .success(),
    );
    assert_eq!(cheaper["rule"], json!({"kind": "cheaper_than_mine"}));
    leasehold(
        &env,
        &bases,
        &[
            "market",
            "alert",
            "add",
            "--gpu",
            "4090",
            "--cheaper-than-mine",
            "--below",
            "1",
        ],
    )
    .code(2);
    let listed =
        json_of(&leasehold(&env, &bases, &["market", "alert", "list", "--json"]).success());
    assert_eq!(listed["alerts"].as_array().unwrap().len(), 3);
    assert_eq!(
        listed["alerts"][1]["rule"],
        json!({"kind": "in_stock", "region": "Texas"})
    );
    let id = added["id"].to_string();
    leasehold(&env, &bases, &["market", "alert", "remove", &id, "--json"]).success();
    leasehold(&env, &bases, &["market", "alert", "remove", &id]).code(2);
    let listed =
        json_of(&leasehold(&env, &bases, &["market", "alert", "list", "--json"]).success());
    assert_eq!(listed["alerts"].as_array().unwrap().len(), 2);
}

fn instances(env: &Env, bases: &Bases) -> Vec<Value> {
    let listed = json_of(&leasehold(env, bases, &["instance", "list", "--json"]).success());
    listed
        .as_array()
        .or_else(|| listed["instances"].as_array())
        .cloned()
        .unwrap_or_default()
}

fn posts(standin: &ProviderStandin, method: &str, path: &str) -> Vec<Value> {
    standin
        .requests()
        .into_iter()
        .filter(|r| r["method"] == method && r["path"] == path)
        .collect()
}

#[test]
fn rent_on_runpod_checks_the_cap_records_once_and_survives_a_lost_answer() {
    let env = env();
    let runpod = ProviderStandin::start("runpod", "rp-key");
    runpod.set_offers(json!({"offers": [
        {"id": "a", "gpu": "NVIDIA GeForce RTX 4090", "vram_gb": 24, "price": 0.69,
         "region": "US-KS-2", "stock": "HIGH"},
    ]}));
    let bases = Bases {
        runpod: runpod.base(),
        vast: "http://127.0.0.1:9".into(),
        lambda: "http://127.0.0.1:9".into(),
    };
    let key_path = env.dir.path().join("id_test.pub");
    std::fs::write(
        &key_path,
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFake me@laptop\n",
    )
    .unwrap();
    let key = key_path.to_str().unwrap();
    let offer = "SECURE:NVIDIA GeForce RTX 4090:1:US-KS-2";

    // No account: bad input, nothing sent.
    leasehold(
        &env,
        &bases,
        &[
            "rent",
            "runpod",
            offer,
            "--name",
            "t1",
            "--max-price-per-hour",
            "1",
        ],
    )
    .code(2);
    leasehold(
        &env,
        &bases,
        &["account", "add", "runpod", "--api-key-env", "RP_KEY"],
    )
    .success();

    // Bad input is refused before anything is asked.
    for bad in [
        vec!["--max-price-per-hour", "0"],
        vec!["--max-price-per-hour", "1", "--disk-gb", "0"],
        vec!["--max-price-per-hour", "1", "--image", "evil; rm -rf /"],
    ] {
        let mut args = vec!["rent", "runpod", offer, "--name", "t1"];
        args.extend(bad);
        leasehold(&env, &bases, &args).code(2);
    }
    // Above the cap: exit 1, nothing created, nothing recorded.
    let above = leasehold(
        &env,
        &bases,
        &[
            "rent",
            "runpod",
            offer,
            "--name",
            "t1",
            "--max-price-per-hour",
            "0.5",
        ],
    )
    .code(1);
    assert!(String::from_utf8_lossy(&above.get_output().stderr).contains("0.69"));
    assert!(posts(&runpod, "POST", "/v2/pods").is_empty());
    // No capacity: exit 1 in the provider's words, nothing recorded.
    runpod.script(json!({"no_capacity": true}));
    let full = leasehold(
        &env,
        &bases,
        &[
            "rent",
            "runpod",
            offer,
            "--name",
            "t1",
            "--max-price-per-hour",
            "1",
            "--ssh-key",
            key,
        ],
    )
    .code(1);
    assert!(String::from_utf8_lossy(&full.get_output().stderr).contains("no longer any instances"));
    runpod.script(json!({"no_capacity": false}));
    assert!(instances(&env, &bases).is_empty());

    let rented = json_of(
        &leasehold(
            &env,
            &bases,
            &[
                "rent",
                "runpod",
                offer,
                "--name",
                "t1",
                "--max-price-per-hour",
                "1",
                "--ssh-key",
                key,
                "--disk-gb",
                "80",
                "--json",
            ],
        )
        .success(),
    );
    assert_eq!(
        keys(&rented),
        [
            "currency",
            "instance",
            "price_per_hour",
            "provider",
            "remote_id",
            "ssh"
        ]
    );
    assert_eq!(
        (rented["instance"].as_str(), rented["provider"].as_str()),
        (Some("t1"), Some("runpod"))
    );
    assert_eq!(
        (
            rented["price_per_hour"].as_str(),
            rented["currency"].as_str()
        ),
        (Some("0.69"), Some("USD"))
    );
    let create = posts(&runpod, "POST", "/v2/pods").pop().unwrap();
    assert_eq!(create["key"], "ok");
    let body = &create["body"];
    assert_eq!(body["name"], "t1");
    assert_eq!(
        body["gpu"],
        json!({"id": "NVIDIA GeForce RTX 4090", "count": 1})
    );
    assert_eq!(
        (body["cloud"].as_str(), body["disk"].as_u64()),
        (Some("SECURE"), Some(80))
    );
    assert_eq!(body["dataCenterIds"], json!(["US-KS-2"]));
    assert_eq!(body["startSsh"], true);
    assert_eq!(
        body["env"]["PUBLIC_KEY"],
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFake me@laptop"
    );
    assert_eq!(runpod.violations(), Vec::<Value>::new());
    let listed = instances(&env, &bases);
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["name"], "t1");
    assert_eq!(listed[0]["provider"], "runpod");

    // A lost answer: the pod is found by its name and recorded once; a sync adds nothing.
    runpod.script(json!({"lose_create": true}));
    let lost = json_of(
        &leasehold(
            &env,
            &bases,
            &[
                "rent",
                "runpod",
                offer,
                "--name",
                "t2",
                "--max-price-per-hour",
                "1",
                "--json",
            ],
        )
        .success(),
    );
    assert_eq!(lost["instance"], "t2");
    assert_eq!(
        posts(&runpod, "POST", "/v2/pods").len(),
        3,
        "one create each: refused, t1, t2"
    );
    leasehold(&env, &bases, &["account", "sync", "--json"]).success();
    let names: Vec<String> = instances(&env, &bases)
        .iter()
        .map(|i| i["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    // The same name again is refused before anything is sent.
    leasehold(
        &env,
        &bases,
        &[
            "rent",
            "runpod",
            offer,
            "--name",
            "t2",
            "--max-price-per-hour",
            "1",
        ],
    )
    .code(2);
    assert_eq!(posts(&runpod, "POST", "/v2/pods").len(), 3);
}

#[test]
fn rent_on_vast_and_lambda_through_their_create_calls() {
    let env = env();
    let vast = ProviderStandin::start("vast", "vast-key");
    let lambda = ProviderStandin::start("lambda", "lambda-key");
    vast_market(&vast);
    lambda.set_offers(json!({"offers": [
        {"id": "gpu_1x_a100", "gpu": "A100", "vram_gb": 40, "price": 1.29, "region": "us-east-1"},
    ]}));
    let bases = Bases {
        runpod: "http://127.0.0.1:9".into(),
        vast: vast.base(),
        lambda: lambda.base(),
    };
    leasehold(
        &env,
        &bases,
        &["account", "add", "vast", "--api-key-env", "VAST_KEY"],
    )
    .success();
    leasehold(
        &env,
        &bases,
        &["account", "add", "lambda", "--api-key-env", "LAMBDA_KEY"],
    )
    .success();
    std::fs::create_dir_all(env.dir.path().join(".ssh")).unwrap();
    std::fs::write(
        env.dir.path().join(".ssh/id_ed25519.pub"),
        "ssh-ed25519 AAAAdefault me@laptop\n",
    )
    .unwrap();

    let rented = json_of(
        &leasehold(
            &env,
            &bases,
            &[
                "rent",
                "vast",
                "101",
                "--name",
                "v1",
                "--max-price-per-hour",
                "0.4",
                "--json",
            ],
        )
        .success(),
    );
    assert_eq!(
        (
            rented["provider"].as_str(),
            rented["price_per_hour"].as_str()
        ),
        (Some("vast"), Some("0.35"))
    );
    let put = posts(&vast, "PUT", "/api/v0/asks/101/").pop().unwrap();
    assert_eq!(put["key"], "ok");
    assert_eq!(put["body"]["client_id"], "me");
    assert_eq!(put["body"]["label"], "v1");
    assert_eq!(
        put["body"]["env"],
        json!({"PUBLIC_KEY": "ssh-ed25519 AAAAdefault me@laptop"})
    );
    assert!(put["body"].get("price").is_none(), "on-demand: no bid");
    // Taken now: the live check says so; exit 1, nothing recorded, nothing sent.
    leasehold(
        &env,
        &bases,
        &[
            "rent",
            "vast",
            "101",
            "--name",
            "v2",
            "--max-price-per-hour",
            "0.4",
        ],
    )
    .code(1);
    assert_eq!(posts(&vast, "PUT", "/api/v0/asks/101/").len(), 1);
    // Another machine, on demand.
    leasehold(
        &env,
        &bases,
        &[
            "rent",
            "vast",
            "103",
            "--name",
            "v3",
            "--max-price-per-hour",
            "0.2",
        ],
    )
    .success();
    assert_eq!(vast.violations(), Vec::<Value>::new());

    lambda.script(json!({"no_capacity": true}));
    leasehold(
        &env,
        &bases,
        &[
            "rent",
            "lambda",
            "gpu_1x_a100:us-east-1",
            "--name",
            "l1",
            "--max-price-per-hour",
            "2",
        ],
    )
    .code(1);
    lambda.script(json!({"no_capacity": false}));
    let rented = json_of(
        &leasehold(
            &env,
            &bases,
            &[
                "rent",
                "lambda",
                "gpu_1x_a100:us-east-1",
                "--name",
                "l1",
                "--max-price-per-hour",
                "2",
                "--json",
            ],
        )
        .success(),
    );
    assert_eq!(rented["price_per_hour"], "1.29");
    let launch = posts(&lambda, "POST", "/api/v1/instance-operations/launch")
        .pop()
        .unwrap();
    assert_eq!(launch["key"], "ok");
    assert_eq!(
        launch["body"],
        json!({"region_name": "us-east-1", "instance_type_name": "gpu_1x_a100",
               "ssh_key_names": ["leasehold-1"], "name": "l1"})
    );
    assert_eq!(
        posts(&lambda, "POST", "/api/v1/ssh-keys").len(),
        1,
        "the key added once"
    );
    assert_eq!(lambda.violations(), Vec::<Value>::new());

    let names: Vec<String> = instances(&env, &bases)
        .iter()
        .map(|i| i["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names.len(), 3, "v1, v3 and l1: {names:?}");
}
