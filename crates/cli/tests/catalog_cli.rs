//! The Choose GPU commands as scripts use them: exact JSON shapes, exit codes, bad input.

use assert_cmd::Command;
use serde_json::Value;

fn leasehold() -> Command {
    Command::cargo_bin("leasehold").expect("the leasehold binary is built")
}

fn json(args: &[&str]) -> Value {
    let output = leasehold().args(args).output().expect("runs");
    assert!(
        output.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("stdout is JSON")
}

fn assert_bad_input(args: &[&str]) {
    let output = leasehold().args(args).output().expect("runs");
    assert_eq!(output.status.code(), Some(2), "{args:?} must exit 2");
    assert!(
        output.stdout.is_empty(),
        "{args:?} must write nothing to stdout"
    );
    assert!(!output.stderr.is_empty(), "{args:?} must say what is wrong");
}

fn single<'a>(recommendation: &'a Value, gpu_id: &str) -> &'a Value {
    recommendation["candidates"]
        .as_array()
        .expect("candidates array")
        .iter()
        .find(|c| c["gpu_id"] == gpu_id && c["count"] == 1)
        .unwrap_or_else(|| panic!("{gpu_id} listed as a single card"))
}

#[test]
fn estimate_prints_total_parts_and_notes() {
    let v = json(&[
        "estimate",
        "--params",
        "7",
        "--precision",
        "fp16",
        "--task",
        "inference",
        "--json",
    ]);
    let total = v["total_gib"].as_f64().expect("total_gib is a number");
    assert!(
        (13.9..=16.8).contains(&total),
        "7B fp16 at 4096 tokens is 15–18 GB: {total} GiB"
    );
    for part in [
        "weights_gib",
        "kv_cache_gib",
        "activations_gib",
        "gradients_gib",
        "optimizer_gib",
        "overhead_gib",
    ] {
        assert!(v["parts"][part].is_number(), "parts.{part} missing");
    }
    assert!(v["notes"].as_array().is_some_and(|n| !n.is_empty()));
    assert!(v["formulas"]["weights"]
        .as_str()
        .is_some_and(|f| f.contains("× 2 bytes")));
}

#[test]
fn estimate_accepts_presets_and_training_options() {
    let v = json(&[
        "estimate",
        "--model",
        "qwen2.5-7b",
        "--task",
        "lora",
        "--context",
        "2048",
        "--batch",
        "2",
        "--optimizer",
        "adamw8bit",
        "--grad-checkpointing",
        "--lora-rank",
        "8",
        "--json",
    ]);
    assert!(v["parts"]["optimizer_gib"]
        .as_f64()
        .is_some_and(|g| g > 0.0));
    assert_eq!(v["model"], "Qwen2.5-7B");
    let without = json(&[
        "estimate",
        "--model",
        "qwen2.5-7b",
        "--task",
        "lora",
        "--no-grad-checkpointing",
        "--json",
    ]);
    let with = json(&[
        "estimate",
        "--model",
        "qwen2.5-7b",
        "--task",
        "lora",
        "--grad-checkpointing",
        "--json",
    ]);
    assert!(
        with["total_gib"].as_f64() < without["total_gib"].as_f64(),
        "checkpointing lowers the estimate"
    );
}

#[test]
fn estimate_rejects_bad_input_with_exit_2() {
    assert_bad_input(&["estimate", "--params", "0", "--task", "inference", "--json"]);
    assert_bad_input(&[
        "estimate",
        "--params",
        "abc",
        "--task",
        "inference",
        "--json",
    ]);
    assert_bad_input(&["estimate", "--params", "7", "--task", "train", "--json"]);
    assert_bad_input(&[
        "estimate",
        "--params",
        "7",
        "--task",
        "inference",
        "--precision",
        "fp8",
        "--json",
    ]);
    assert_bad_input(&["estimate", "--task", "inference", "--json"]);
    assert_bad_input(&[
        "estimate",
        "--params",
        "7",
        "--task",
        "inference",
        "--context",
        "0",
        "--json",
    ]);
    assert_bad_input(&[
        "estimate",
        "--model",
        "gpt-9",
        "--task",
        "inference",
        "--json",
    ]);
    assert_bad_input(&[
        "estimate",
        "--params",
        "7",
        "--task",
        "full",
        "--precision",
        "int4",
        "--json",
    ]);
    assert_bad_input(&["estimate", "--params", "7", "--json"]);
}

#[test]
fn recommend_fits_7b_lora_on_a_single_24_gb_card() {
    let v = json(&["recommend", "--params", "7", "--task", "lora", "--json"]);
    let rtx4090 = single(&v, "rtx-4090");
    assert_eq!(rtx4090["fits"], true, "{rtx4090}");
    assert_eq!(rtx4090["gpu"], "NVIDIA GeForce RTX 4090");
    assert!(rtx4090["vram_gib"]
        .as_f64()
        .is_some_and(|g| (23.5..=24.5).contains(&g)));
    assert!(rtx4090["headroom_pct"].as_i64().is_some_and(|h| h > 0));
    assert!(rtx4090["price_per_hour"].is_null() && rtx4090["plan_cost"].is_null());
}

#[test]
fn recommend_70b_int4_needs_more_than_one_24_gb_card_but_fits_48_gb() {
    let v = json(&[
        "recommend",
        "--params",
        "70",
        "--precision",
        "int4",
        "--task",
        "inference",
        "--json",
    ]);
    for c in v["candidates"].as_array().expect("candidates") {
        if c["count"] == 1 && c["vram_gib"].as_f64().is_some_and(|g| g <= 24.5) {
            assert_eq!(c["fits"], false, "{c}");
        }
    }
    assert_eq!(single(&v, "l40s")["fits"], true);
}

#[test]
fn recommend_13b_fp16_inference_does_not_fit_one_4090() {
    let v = json(&[
        "recommend",
        "--params",
        "13",
        "--precision",
        "fp16",
        "--task",
        "inference",
        "--json",
    ]);
    assert_eq!(single(&v, "rtx-4090")["fits"], false);
}

#[test]
fn recommend_with_entered_prices_ranks_by_plan_cost_in_decimal_strings() {
    let v = json(&[
        "recommend",
        "--params",
        "7",
        "--task",
        "inference",
        "--hours",
        "10",
        "--price",
        "RTX 4090=2.50",
        "--price",
        "NVIDIA A100-SXM4-80GB=6.98",
        "--currency",
        "CNY",
        "--json",
    ]);
    let first = &v["candidates"][0];
    assert_eq!(first["gpu_id"], "rtx-4090");
    assert_eq!(first["price_per_hour"], "2.50");
    assert_eq!(first["plan_cost"], "25.00");
    assert_eq!(first["currency"], "CNY");
}

#[test]
fn recommend_rejects_malformed_prices_and_unknown_gpus() {
    assert_bad_input(&[
        "recommend",
        "--params",
        "7",
        "--task",
        "lora",
        "--price",
        "RTX 4090",
        "--json",
    ]);
    assert_bad_input(&[
        "recommend",
        "--params",
        "7",
        "--task",
        "lora",
        "--price",
        "Voodoo=1",
        "--json",
    ]);
    assert_bad_input(&[
        "recommend",
        "--params",
        "7",
        "--task",
        "lora",
        "--hours",
        "0",
        "--json",
    ]);
}

#[test]
fn torch_wheel_for_a_5090_on_driver_570_is_cu128() {
    let v = json(&[
        "torch-wheel",
        "--driver",
        "570.124.06",
        "--gpu",
        "NVIDIA GeForce RTX 5090",
        "--json",
    ]);
    assert_eq!(v["cuda_tag"], "cu128");
    assert_eq!(v["index_url"], "https://download.pytorch.org/whl/cu128");
    assert!(v["torch_versions"]
        .as_str()
        .is_some_and(|t| t.starts_with("2.7")));
    assert!(v["reason"].is_string());
}

#[test]
fn torch_wheel_for_a_5090_on_driver_535_is_null_with_a_reason() {
    let v = json(&[
        "torch-wheel",
        "--driver",
        "535.104.05",
        "--gpu",
        "NVIDIA GeForce RTX 5090",
        "--compute-cap",
        "12.0",
        "--json",
    ]);
    assert!(v["cuda_tag"].is_null());
    let reason = v["reason"].as_str().expect("reason");
    assert!(
        reason.contains("Upgrade the driver") && reason.contains("re-create"),
        "{reason}"
    );
}

#[test]
fn torch_wheel_rejects_bad_versions_with_exit_2() {
    assert_bad_input(&[
        "torch-wheel",
        "--driver",
        "new",
        "--gpu",
        "RTX 4090",
        "--json",
    ]);
    assert_bad_input(&[
        "torch-wheel",
        "--driver",
        "570.124.06",
        "--compute-cap",
        "x.y",
        "--json",
    ]);
    assert_bad_input(&["torch-wheel", "--gpu", "RTX 4090", "--json"]);
}

#[test]
fn gpus_lists_the_catalog_with_sources() {
    let v = json(&["gpus", "--json"]);
    let gpus = v["gpus"].as_array().expect("gpus array");
    assert!(gpus.len() >= 20);
    let sources = v["sources"].as_object().expect("sources map");
    for gpu in gpus {
        if let Some(cc) = gpu["compute_capability"].as_object() {
            let key = cc["source"].as_str().expect("each number has a source");
            assert!(sources.contains_key(key), "{key} resolves");
        }
    }
}

#[test]
fn local_gpu_reports_calmly_and_exits_0() {
    let v = json(&["local-gpu", "--json"]);
    let available = v["available"].as_bool().expect("available is a bool");
    if !available {
        assert!(
            v["reason"].as_str().is_some_and(|r| r.contains("NVIDIA")),
            "{v}"
        );
    }
    let with_task = json(&[
        "local-gpu",
        "--params",
        "7",
        "--precision",
        "q4_k_m",
        "--json",
    ]);
    assert_eq!(with_task["available"], available);
}

#[test]
fn recommend_uses_prices_paid_for_earlier_rentals_in_the_database() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("leasehold.db");
    let db = db.to_str().expect("utf-8 path");
    leasehold()
        .args([
            "instance",
            "add",
            "lab-4090",
            "--gpu",
            "RTX 4090",
            "--count",
            "1",
            "--price",
            "1.98",
            "--currency",
            "CNY",
        ])
        .args(["--db", db])
        .assert()
        .success();
    let v = json(&[
        "recommend",
        "--params",
        "7",
        "--task",
        "inference",
        "--hours",
        "5",
        "--db",
        db,
        "--json",
    ]);
    let rtx4090 = single(&v, "rtx-4090");
    assert_eq!(rtx4090["price_per_hour"], "1.98");
    assert_eq!(rtx4090["plan_cost"], "9.90");
    assert_eq!(rtx4090["price_origin"], "earlier_rental");
    assert_eq!(
        v["candidates"][0]["gpu_id"], "rtx-4090",
        "the only priced card leads"
    );
    // A price typed in now wins over history.
    let v = json(&[
        "recommend",
        "--params",
        "7",
        "--task",
        "inference",
        "--price",
        "RTX 4090=2.20",
        "--db",
        db,
        "--json",
    ]);
    assert_eq!(single(&v, "rtx-4090")["price_per_hour"], "2.20");
    assert_eq!(single(&v, "rtx-4090")["price_origin"], "entered");
}

#[test]
fn recommend_without_a_database_file_creates_none() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("absent.db");
    json(&[
        "recommend",
        "--params",
        "7",
        "--task",
        "inference",
        "--db",
        db.to_str().expect("utf-8"),
        "--json",
    ]);
    assert!(
        !db.exists(),
        "recommend only reads history; it must not create a database"
    );
}
