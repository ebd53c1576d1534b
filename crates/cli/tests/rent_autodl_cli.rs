//! `leasehold rent autodl SPEC …` against the AutoDL Pro stand-in and a real Secret Service:
//! the documented create body (spec, count, disk, image and its CUDA, name, the key in the
//! start command), the price read from the new instance's snapshot and held to the cap after
//! the create (above it: powered off, then released, nothing recorded, exit 1), AutoDL's
//! refusals told apart (no stock, no real-name verification), and a lost answer giving one
//! instance, not two.

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
    std::fs::create_dir_all(dir.path().join(".ssh")).unwrap();
    std::fs::write(
        dir.path().join(".ssh/id_ed25519.pub"),
        "ssh-ed25519 AAAAautodl me@laptop\n",
    )
    .unwrap();
    Env {
        db: dir.path().join("ledger.sqlite3"),
        dir,
        secrets: SecretService::start(),
    }
}

fn leasehold(env: &Env, base: &str, args: &[&str]) -> assert_cmd::assert::Assert {
    cargo_bin_cmd!("leasehold")
        .args(args)
        .arg("--db")
        .arg(&env.db)
        .env("HOME", env.dir.path())
        .env("DBUS_SESSION_BUS_ADDRESS", env.secrets.bus_address())
        .env("LEASEHOLD_AUTODL_API_URL", base)
        .env("THE_KEY", "the-key")
        .assert()
}

fn json_of(assert: &assert_cmd::assert::Assert) -> Value {
    serde_json::from_slice(&assert.get_output().stdout).expect("stdout is JSON")
}

fn stderr_of(assert: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&assert.get_output().stderr).into_owned()
}

fn asked(standin: &ProviderStandin, path: &str) -> Vec<Value> {
    standin
        .requests()
        .into_iter()
        .filter(|r| r["path"] == format!("/api/v1/dev/instance/pro/{path}"))
        .collect()
}

fn names(env: &Env, base: &str) -> Vec<String> {
    let listed = json_of(&leasehold(env, base, &["instance", "list", "--json"]).success());
    listed
        .as_array()
        .or_else(|| listed["instances"].as_array())
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|i| i["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn rent(env: &Env, base: &str, spec: &str, name: &str, cap: &str) -> assert_cmd::assert::Assert {
    leasehold(
        env,
        base,
        &[
            "rent",
            "autodl",
            spec,
            "--name",
            name,
            "--max-price-per-hour",
            cap,
            "--json",
        ],
    )
}

fn linked(standin: &ProviderStandin) -> (Env, String) {
    let env = env();
    let base = standin.base();
    leasehold(
        &env,
        &base,
        &["account", "add", "autodl", "--api-key-env", "THE_KEY"],
    )
    .success();
    standin.set_offers(json!({"offers": [
        {"id": "v-48g", "gpu": "RTX 4090", "price": 2.28, "region": "西北B区"},
        {"id": "h800", "gpu": "H800", "price": 18.5, "region": "北京A区"},
        {"id": "5090-p", "gpu": "RTX 5090", "price": 3.1, "stock": "NONE"},
    ]}));
    (env, base)
}

#[test]
fn a_spec_under_the_cap_is_created_with_the_documented_body_and_recorded() {
    let standin = ProviderStandin::start("autodl", "the-key");
    let (env, base) = linked(&standin);

    let rented = json_of(&rent(&env, &base, "v-48g:2:westDC2", "lora-48g", "5").success());
    let mut keys: Vec<&str> = rented
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
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
        (
            rented["provider"].as_str(),
            rented["price_per_hour"].as_str(),
            rented["currency"].as_str()
        ),
        (Some("autodl"), Some("4.56"), Some("CNY")),
        "two GPUs at 2.28 each, as the snapshot priced it"
    );
    assert!(
        rented["ssh"].as_str().unwrap_or("").starts_with("ssh -p"),
        "{rented}"
    );

    let create = asked(&standin, "create").pop().expect("one create");
    assert_eq!(create["key"], "ok", "AutoDL's bare token");
    let body = &create["body"];
    assert_eq!(body["gpu_spec_uuid"], "v-48g");
    assert_eq!(body["req_gpu_amount"], 2);
    assert_eq!(body["expand_system_disk_by_gb"], 0);
    assert_eq!(body["image_uuid"], "base-image-l2t43iu6uk");
    assert_eq!(body["cuda_v_from"], 118);
    assert_eq!(body["data_center_list"], json!(["westDC2"]));
    assert_eq!(body["instance_name"], "lora-48g");
    let start = body["start_command"].as_str().unwrap();
    assert!(
        start.contains("'ssh-ed25519 AAAAautodl me@laptop'")
            && start.contains(">> ~/.ssh/authorized_keys"),
        "{start}"
    );
    assert!(
        asked(&standin, "power_on").is_empty(),
        "a created instance starts on its own"
    );
    assert_eq!(standin.violations(), Vec::<Value>::new());
    assert_eq!(names(&env, &base), ["lora-48g"]);

    let status =
        json_of(&leasehold(&env, &base, &["instance", "status", "lora-48g", "--json"]).success());
    assert_eq!(
        status["state"], "running",
        "AutoDL starts what it creates: the power-on is recorded with it ({status})"
    );
    assert_eq!(status["currency"], "CNY");

    // The next sync finds the same instance (linked by its uuid), not a second one.
    leasehold(&env, &base, &["account", "sync", "--json"]).success();
    assert_eq!(names(&env, &base), ["lora-48g"]);
}

#[test]
fn above_the_cap_it_is_powered_off_then_released_and_nothing_is_recorded() {
    let standin = ProviderStandin::start("autodl", "the-key");
    let (env, base) = linked(&standin);

    let above = rent(&env, &base, "h800", "big", "10");
    let above = above.code(1);
    let said = stderr_of(&above);
    assert!(
        said.contains("18.5") && said.contains("released at once"),
        "{said}"
    );
    assert_eq!(asked(&standin, "create").len(), 1);
    let off = asked(&standin, "power_off");
    let release = asked(&standin, "release");
    assert_eq!((off.len(), release.len()), (1, 1), "off, then release");
    let id = asked(&standin, "create")[0]["body"]["instance_name"].clone();
    assert_eq!(id, "big");
    assert!(names(&env, &base).is_empty(), "nothing recorded");
    assert_eq!(standin.violations(), Vec::<Value>::new());
}

#[test]
fn refusals_are_told_apart_and_record_nothing() {
    let standin = ProviderStandin::start("autodl", "the-key");
    let (env, base) = linked(&standin);

    let no_stock = rent(&env, &base, "5090-p", "fast", "9");
    let said = stderr_of(&no_stock.code(1));
    assert!(said.contains("暂无库存"), "AutoDL's own words: {said}");

    standin.script(json!({"real_name_missing": true}));
    let unverified = rent(&env, &base, "v-48g", "lora", "9");
    let said = stderr_of(&unverified.code(1));
    assert!(said.contains("real-name verification"), "{said}");
    standin.script(json!({"real_name_missing": false}));

    // A GPU count over 4, a spec with a space, a data centre with a semicolon.
    for bad in ["v-48g:9", "v 48g", "v-48g:1:west;DC"] {
        rent(&env, &base, bad, "x", "9").code(2);
    }
    leasehold(
        &env,
        &base,
        &[
            "rent",
            "autodl",
            "v-48g",
            "--name",
            "docker",
            "--max-price-per-hour",
            "9",
            "--image",
            "pytorch/pytorch:2.8.0",
        ],
    )
    .code(2);
    assert_eq!(
        asked(&standin, "create").len(),
        2,
        "bad input sends nothing"
    );
    assert!(names(&env, &base).is_empty());
    assert_eq!(standin.violations(), Vec::<Value>::new());
}

#[test]
fn a_lost_answer_is_found_by_name_one_instance_not_two() {
    let standin = ProviderStandin::start("autodl", "the-key");
    let (env, base) = linked(&standin);
    standin.script(json!({"lose_create": true}));

    let rented = json_of(&rent(&env, &base, "v-48g", "lost-one", "3").success());
    assert_eq!(rented["instance"], "lost-one");
    assert_eq!(asked(&standin, "create").len(), 1, "never sent twice");
    leasehold(&env, &base, &["account", "sync", "--json"]).success();
    assert_eq!(names(&env, &base), ["lost-one"]);
}
