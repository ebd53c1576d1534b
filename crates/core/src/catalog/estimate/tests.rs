use super::*;
use crate::Coded;

/// GB (10^9 bytes) per GiB (2^30 bytes): the seeds quote GB, the estimator answers in GiB.
const GB_PER_GIB: f64 = 1.073_741_824;

fn request(params_b: f64, task: Task, precision: Precision) -> EstimateRequest {
    EstimateRequest {
        params_b: Some(params_b),
        task,
        precision,
        ..EstimateRequest::default()
    }
}

fn gb(gib: f64) -> f64 {
    gib * GB_PER_GIB
}

fn total_gb(req: &EstimateRequest) -> f64 {
    gb(estimate(req).expect("valid request").total_gib)
}

/// Usable memory of the catalog's RTX 4090 and L40S (nvidia-smi memory.total).
fn usable_gib(name: &str) -> f64 {
    crate::catalog::find_gpu(name)
        .and_then(|g| g.usable_gib())
        .expect("card is in the catalog with its memory")
}

fn fits(need_gib: f64, card_gib: f64) -> bool {
    (card_gib - need_gib) / card_gib * 100.0 >= crate::catalog::recommend::MIN_HEADROOM_PCT
}

// --- the seeds' rules of thumb -------------------------------------------------------------------

#[test]
fn seven_b_at_fp16_is_about_14_gb_of_weights() {
    let e = estimate(&request(7.0, Task::Inference, Precision::Fp16)).expect("valid");
    let weights = gb(e.parts.weights_gib);
    assert!(
        (13.5..=14.5).contains(&weights),
        "7B × 2 bytes ≈ 14 GB, got {weights:.2} GB"
    );
}

#[test]
fn seven_b_fp16_inference_at_4096_tokens_needs_15_to_18_gb() {
    let total = total_gb(&request(7.0, Task::Inference, Precision::Fp16));
    assert!(
        (15.0..=18.0).contains(&total),
        "seed: 15–18 GB at 4096 context, got {total:.2} GB"
    );
}

#[test]
fn thirteen_b_fp16_inference_needs_about_28_gb() {
    let total = total_gb(&request(13.0, Task::Inference, Precision::Fp16));
    assert!(
        (25.2..=30.8).contains(&total),
        "seed: ≈ 28 GB (±10 %), got {total:.2} GB"
    );
}

#[test]
fn seventy_b_fits_a_48_gb_card_only_at_int4() {
    let l40s = usable_gib("NVIDIA L40S");
    for (precision, should_fit) in [
        (Precision::Int4, true),
        (Precision::Int8, false),
        (Precision::Fp16, false),
    ] {
        let need = estimate(&request(70.0, Task::Inference, precision))
            .expect("valid")
            .total_gib;
        assert_eq!(
            fits(need, l40s),
            should_fit,
            "70B at {precision}: {need:.1} GiB on a {l40s:.1} GiB card"
        );
    }
}

#[test]
fn full_fine_tuning_7b_needs_weights_gradients_and_adamw_states_over_40_gb() {
    let e = estimate(&request(7.0, Task::Full, Precision::Bf16)).expect("valid");
    let states = gb(e.parts.weights_gib + e.parts.gradients_gib + e.parts.optimizer_gib);
    assert!(
        states > 40.0,
        "weights + gradients + AdamW states = {states:.1} GB"
    );
    assert!(e.parts.gradients_gib > 0.0 && e.parts.optimizer_gib > e.parts.gradients_gib);
    assert!(gb(e.total_gib) > 40.0);
}

#[test]
fn lora_on_7b_fits_a_24_gb_card_at_batch_2_to_4_with_checkpointing() {
    let card = usable_gib("NVIDIA GeForce RTX 4090");
    for batch in [2, 4] {
        let req = EstimateRequest {
            batch,
            context: 2048,
            grad_checkpointing: true,
            ..request(7.0, Task::Lora, Precision::Bf16)
        };
        let need = estimate(&req).expect("valid").total_gib;
        assert!(
            fits(need, card),
            "LoRA 7B batch {batch}: {need:.1} GiB on a {card:.1} GiB card"
        );
    }
}

#[test]
fn q4_k_m_7b_needs_about_6_gb() {
    for context in [2048, 4096] {
        let req = EstimateRequest {
            context,
            ..request(7.0, Task::Inference, Precision::Q4KM)
        };
        let total = total_gb(&req);
        assert!(
            (5.0..=7.0).contains(&total),
            "q4_k_m 7B at {context}: {total:.2} GB, seed says ≈ 6 GB"
        );
    }
}

// --- hand-computed presets -----------------------------------------------------------------------

#[test]
fn qwen2_5_7b_fp16_inference_matches_the_hand_computation() {
    // Qwen2.5-7B: 28 layers, hidden 3584, 4 KV heads × 128, MLP 18944, vocab 152064.
    // params  = 7,615,616,512
    // weights = 7,615,616,512 × 2 B                          = 15,231,233,024 B = 14.185 GiB
    // kv      = 2 × 28 × 512 × 4096 tokens × 1 × 2 B         =    234,881,024 B =  0.219 GiB
    // act     = 4096 × (4·3584 + 2·18944) × 2 B + 152064 × 4 =    428,427,264 B =  0.399 GiB
    // overhead = 0.5 GiB + 4 % × (15,894,541,312 B = 14.803 GiB) = 1.092 GiB
    // total   = 14.803 + 1.092                                                 = 15.895 GiB
    let gib = |bytes: f64| bytes / 1_073_741_824.0;
    let allocated = 15_231_233_024.0 + 234_881_024.0 + 428_427_264.0;
    let expected_total = gib(allocated) + 0.5 + 0.04 * gib(allocated);
    let req = EstimateRequest {
        model: Some("qwen2.5-7b".to_owned()),
        ..EstimateRequest::default()
    };
    let e = estimate(&req).expect("valid");
    assert!(
        (e.parts.weights_gib - 14.185).abs() < 0.01,
        "weights {}",
        e.parts.weights_gib
    );
    assert!(
        (e.parts.kv_cache_gib - 0.219).abs() < 0.01,
        "kv {}",
        e.parts.kv_cache_gib
    );
    assert!(
        (e.parts.activations_gib - 0.399).abs() < 0.01,
        "act {}",
        e.parts.activations_gib
    );
    assert!(
        (e.total_gib - expected_total).abs() < 0.01,
        "total {} vs {expected_total}",
        e.total_gib
    );
    assert_eq!(e.parts.gradients_gib, 0.0);
    assert_eq!(e.parts.optimizer_gib, 0.0);
}

#[test]
fn llama_3_1_8b_lora_matches_the_hand_computation() {
    // Llama-3.1-8B: 32 layers, hidden 4096, 8 KV heads × 128 (kv 1024), MLP 14336, vocab 128256.
    // params = 8,030,261,248; LoRA r=16 on q,k,v,o,gate,up,down:
    //   16 × 32 × (2·4096 + 2·(4096+1024) + 2·4096 + 2·(4096+14336) + (14336+4096)) = 41,943,040
    // weights = 8,030,261,248 × 2 + 41,943,040 × 4 = 16,228,294,656 B
    // batch 2 × 2048 tokens = 4096 tokens, checkpointing:
    //   layer inputs 32 × 4096 × 4096 × 2 B             = 1,073,741,824 B
    //   one layer recomputed 4096 × (14·4096 + 4·1024 + 8·14336) = 721,420,288 B
    //   logits 4096 × 128256 × 6 B                      = 3,152,019,456 B
    // gradients 41,943,040 × 4 = 167,772,160 B; AdamW 41,943,040 × 8 = 335,544,320 B
    let gib = |bytes: f64| bytes / 1_073_741_824.0;
    let activations = 1_073_741_824.0 + 721_420_288.0 + 3_152_019_456.0;
    let allocated = 16_228_294_656.0 + activations + 167_772_160.0 + 335_544_320.0;
    let expected_total = gib(allocated) * 1.04 + 0.5;
    let req = EstimateRequest {
        model: Some("llama3.1-8b".to_owned()),
        task: Task::Lora,
        context: 2048,
        batch: 2,
        grad_checkpointing: true,
        ..EstimateRequest::default()
    };
    let e = estimate(&req).expect("valid");
    assert!(
        (e.parts.weights_gib - gib(16_228_294_656.0)).abs() < 0.01,
        "weights {}",
        e.parts.weights_gib
    );
    assert!(
        (e.parts.activations_gib - gib(activations)).abs() < 0.01,
        "act {}",
        e.parts.activations_gib
    );
    assert!((e.parts.gradients_gib - gib(167_772_160.0)).abs() < 0.01);
    assert!((e.parts.optimizer_gib - gib(335_544_320.0)).abs() < 0.01);
    assert_eq!(e.parts.kv_cache_gib, 0.0, "training keeps no KV cache");
    assert!(
        (e.total_gib - expected_total).abs() < 0.01,
        "total {} vs {expected_total}",
        e.total_gib
    );
}

// --- behaviour ----------------------------------------------------------------------------------

#[test]
fn gradient_checkpointing_shrinks_activations() {
    let base = EstimateRequest {
        context: 2048,
        batch: 4,
        grad_checkpointing: false,
        ..request(7.0, Task::Lora, Precision::Bf16)
    };
    let without = estimate(&base).expect("valid");
    let with = estimate(&EstimateRequest {
        grad_checkpointing: true,
        ..base
    })
    .expect("valid");
    assert!(with.parts.activations_gib < without.parts.activations_gib / 3.0);
    assert!(
        without
            .notes
            .iter()
            .any(|n| n.code == "estimate.try_checkpointing"),
        "suggests checkpointing when activations dominate"
    );
}

#[test]
fn training_estimates_assume_checkpointing_unless_turned_off() {
    let default = estimate(&request(7.0, Task::Lora, Precision::Bf16)).expect("valid");
    assert!(default
        .notes
        .iter()
        .any(|n| n.code == "estimate.assumes_checkpointing"));
    let off = estimate(&EstimateRequest {
        grad_checkpointing: false,
        ..request(7.0, Task::Lora, Precision::Bf16)
    })
    .expect("valid");
    assert!(
        off.total_gib > default.total_gib + 5.0,
        "{} vs {}",
        off.total_gib,
        default.total_gib
    );
}

#[test]
fn qlora_stores_the_base_in_four_bits() {
    let lora = estimate(&request(7.0, Task::Lora, Precision::Bf16)).expect("valid");
    let qlora = estimate(&request(7.0, Task::Qlora, Precision::Bf16)).expect("valid");
    assert!(
        qlora.parts.weights_gib < lora.parts.weights_gib / 3.0,
        "NF4 base is about a quarter"
    );
}

#[test]
fn kv_cache_grows_linearly_with_context_and_batch() {
    let short = estimate(&request(7.0, Task::Inference, Precision::Fp16)).expect("valid");
    let long = estimate(&EstimateRequest {
        context: 8192,
        batch: 2,
        ..request(7.0, Task::Inference, Precision::Fp16)
    })
    .expect("valid");
    let ratio = long.parts.kv_cache_gib / short.parts.kv_cache_gib;
    assert!(
        (ratio - 4.0).abs() < 0.05,
        "2× context × 2× batch = 4× KV, got {ratio:.2}"
    );
}

#[test]
fn spreading_over_more_gpus_lowers_the_need_per_gpu() {
    let req = request(70.0, Task::Inference, Precision::Fp16);
    let one = estimate_on(&req, 1).expect("valid").total_gib;
    let four = estimate_on(&req, 4).expect("valid").total_gib;
    assert!(
        four < one / 3.0,
        "70B fp16 over 4 GPUs: {four:.1} vs {one:.1} GiB"
    );
}

#[test]
fn every_part_has_a_formula_in_both_languages() {
    let e = estimate(&request(7.0, Task::Full, Precision::Bf16)).expect("valid");
    let f = &e.formulas;
    for text in [
        &f.weights,
        &f.kv_cache,
        &f.activations,
        &f.gradients,
        &f.optimizer,
        &f.overhead,
    ] {
        assert!(
            !text.en.is_empty() && !text.zh.is_empty(),
            "formula missing: {text:?}"
        );
    }
    assert!(f.optimizer.en.contains("AdamW"), "{}", f.optimizer.en);
}

#[test]
fn impossible_inputs_are_rejected_as_bad_input() {
    let cases = [
        request(0.0, Task::Inference, Precision::Fp16),
        request(-7.0, Task::Inference, Precision::Fp16),
        request(f64::NAN, Task::Inference, Precision::Fp16),
        EstimateRequest {
            context: 0,
            ..request(7.0, Task::Inference, Precision::Fp16)
        },
        EstimateRequest {
            batch: 0,
            ..request(7.0, Task::Inference, Precision::Fp16)
        },
        EstimateRequest {
            lora_rank: 0,
            ..request(7.0, Task::Lora, Precision::Fp16)
        },
        request(7.0, Task::Full, Precision::Int4),
        EstimateRequest {
            params_b: None,
            ..EstimateRequest::default()
        },
        EstimateRequest {
            model: Some("no-such-model".to_owned()),
            ..EstimateRequest::default()
        },
    ];
    for case in cases {
        let err = estimate(&case).expect_err("must be refused");
        assert!(err.is_bad_input(), "{case:?} → {err} should be bad input");
    }
}

#[test]
fn task_precision_and_optimizer_parse_from_cli_words() {
    assert_eq!("qlora".parse::<Task>().ok(), Some(Task::Qlora));
    assert_eq!("Q4_K_M".parse::<Precision>().ok(), Some(Precision::Q4KM));
    assert_eq!(
        "adamw8bit".parse::<Optimizer>().ok(),
        Some(Optimizer::Adamw8bit)
    );
    assert!("train".parse::<Task>().is_err());
    assert!("fp8".parse::<Precision>().is_err());
}
