use rust_decimal_macros::dec;

use super::*;
use crate::catalog::estimate::{Precision, Task};

fn rec(
    params_b: f64,
    task: Task,
    precision: Precision,
    tweak: impl FnOnce(&mut EstimateRequest),
) -> Recommendation {
    let mut estimate = EstimateRequest {
        params_b: Some(params_b),
        task,
        precision,
        ..EstimateRequest::default()
    };
    tweak(&mut estimate);
    recommend(&RecommendRequest {
        estimate,
        hours: None,
        prices: Vec::new(),
    })
    .expect("valid request")
}

fn single<'a>(r: &'a Recommendation, id: &str) -> &'a Candidate {
    r.candidates
        .iter()
        .find(|c| c.gpu_id == id && c.count == 1)
        .unwrap_or_else(|| panic!("{id} is listed as a single card"))
}

#[test]
fn lora_on_7b_fits_a_single_24_gb_card() {
    let r = rec(7.0, Task::Lora, Precision::Bf16, |e| {
        e.batch = 4;
        e.context = 2048;
        e.grad_checkpointing = true;
    });
    let rtx4090 = single(&r, "rtx-4090");
    assert!(
        rtx4090.fits,
        "need {} GiB on {} GiB",
        rtx4090.need_gib, rtx4090.vram_gib
    );
    assert!(rtx4090.headroom_pct >= 5);
    assert!(single(&r, "rtx-3090").fits, "any 24 GB card does");
}

#[test]
fn lora_on_7b_with_default_settings_fits_a_24_gb_card() {
    // `leasehold recommend --params 7 --task lora`: 4096 tokens, batch 1, checkpointing on.
    let r = rec(7.0, Task::Lora, Precision::Fp16, |_| {});
    assert!(single(&r, "rtx-4090").fits);
    assert!(single(&r, "a10").fits, "the 23028 MiB A10 too");
}

#[test]
fn seventy_b_int4_inference_fits_no_24_gb_card_alone_but_a_48_gb_card() {
    let r = rec(70.0, Task::Inference, Precision::Int4, |_| {});
    for c in r
        .candidates
        .iter()
        .filter(|c| c.count == 1 && c.vram_gib <= 24.5)
    {
        assert!(
            !c.fits,
            "{} ({} GiB) must not fit 70B int4 alone",
            c.gpu, c.vram_gib
        );
    }
    assert!(single(&r, "l40s").fits, "a 48 GB L40S fits 70B int4");
    assert!(
        single(&r, "rtx-6000-ada").fits,
        "a 48 GB RTX 6000 Ada fits 70B int4"
    );
    let pair = r
        .candidates
        .iter()
        .find(|c| c.gpu_id == "rtx-4090" && c.count > 1)
        .expect("a multi-4090 option is offered");
    assert_eq!(
        pair.count, 2,
        "two 4090s hold 70B int4 (the seed's 'two 4090s')"
    );
    assert!(pair.fits);
}

#[test]
fn thirteen_b_fp16_inference_does_not_fit_a_single_4090() {
    let r = rec(13.0, Task::Inference, Precision::Fp16, |_| {});
    let rtx4090 = single(&r, "rtx-4090");
    assert!(!rtx4090.fits, "13B fp16 needs {} GiB", rtx4090.need_gib);
    assert!(rtx4090.headroom_pct < 0);
}

#[test]
fn fitting_options_come_first_and_without_prices_smallest_sufficient_card_leads() {
    let r = rec(7.0, Task::Inference, Precision::Fp16, |_| {});
    let first_unfit = r
        .candidates
        .iter()
        .position(|c| !c.fits)
        .unwrap_or(r.candidates.len());
    assert!(
        r.candidates[first_unfit..].iter().all(|c| !c.fits),
        "no fitting option after a non-fitting one"
    );
    let first = &r.candidates[0];
    assert!(first.fits && first.count == 1);
    assert!(
        first.vram_gib < 30.0,
        "a ~20 GiB card leads for 7B fp16, not {}",
        first.gpu
    );
    assert!(
        first.price_per_hour.is_none() && first.plan_cost.is_none(),
        "no prices were entered"
    );
    assert!(r.notes.iter().any(|n| n.code == "recommend.no_prices"));
    assert!(r.notes.iter().any(|n| n.code == "recommend.cheapest_first"));
}

#[test]
fn with_prices_the_cheapest_plan_comes_first_and_costs_are_exact_decimals() {
    let estimate = EstimateRequest {
        params_b: Some(7.0),
        ..EstimateRequest::default()
    };
    let r = recommend(&RecommendRequest {
        estimate,
        hours: Some(dec!(10)),
        prices: vec![
            PriceEntry {
                gpu: "RTX 4090".into(),
                price_per_hour: dec!(2.50),
                currency: "CNY".into(),
                origin: PriceOrigin::Entered,
            },
            PriceEntry {
                gpu: "NVIDIA A100-SXM4-80GB".into(),
                price_per_hour: dec!(6.98),
                currency: "CNY".into(),
                origin: PriceOrigin::Entered,
            },
            PriceEntry {
                gpu: "RTX 3090".into(),
                price_per_hour: dec!(1.35),
                currency: "CNY".into(),
                origin: PriceOrigin::Entered,
            },
        ],
    })
    .expect("valid request");
    let ids: Vec<&str> = r
        .candidates
        .iter()
        .take(3)
        .map(|c| c.gpu_id.as_str())
        .collect();
    assert_eq!(
        ids,
        ["rtx-3090", "rtx-4090", "a100-sxm4-80gb"],
        "cheapest plan first"
    );
    assert_eq!(
        r.candidates[0].plan_cost,
        Some(dec!(13.50)),
        "1.35 × 1 × 10 h"
    );
    assert_eq!(r.candidates[1].plan_cost, Some(dec!(25.00)));
    assert_eq!(r.candidates[0].currency.as_deref(), Some("CNY"));
    assert!(
        r.candidates[3].price_per_hour.is_none(),
        "unpriced cards follow the priced ones"
    );
}

#[test]
fn multi_gpu_training_over_pcie_warns_about_communication() {
    let r = rec(7.0, Task::Full, Precision::Bf16, |e| {
        e.context = 1024;
        e.grad_checkpointing = true;
    });
    let multi_4090 = r
        .candidates
        .iter()
        .find(|c| c.gpu_id == "rtx-4090" && c.count > 1)
        .expect("some multi-4090 option fits a 7B full fine-tune");
    assert!(multi_4090
        .notes
        .iter()
        .any(|n| n.code == "recommend.pcie_multi_gpu"));
    let multi_a100 = r
        .candidates
        .iter()
        .find(|c| c.gpu_id == "a100-sxm4-80gb" && c.count > 1);
    if let Some(a100) = multi_a100 {
        assert!(
            !a100
                .notes
                .iter()
                .any(|n| n.code == "recommend.pcie_multi_gpu"),
            "A100 SXM has NVLink"
        );
    }
}

#[test]
fn blackwell_cards_carry_the_wheel_warning_and_every_card_the_cpu_ram_advice() {
    let r = rec(7.0, Task::Inference, Precision::Fp16, |_| {});
    let rtx5090 = single(&r, "rtx-5090");
    assert!(rtx5090
        .notes
        .iter()
        .any(|n| n.code == "recommend.blackwell_wheels"));
    assert!(r
        .candidates
        .iter()
        .all(|c| c.notes.iter().any(|n| n.code == "recommend.cpu_ram")));
    assert!(!single(&r, "rtx-4090")
        .notes
        .iter()
        .any(|n| n.code == "recommend.blackwell_wheels"));
}

#[test]
fn a_24_gb_card_that_fits_only_with_checkpointing_says_so() {
    let r = rec(7.0, Task::Lora, Precision::Bf16, |e| {
        e.context = 2048;
        e.batch = 4;
        e.grad_checkpointing = false;
    });
    let rtx4090 = single(&r, "rtx-4090");
    assert!(!rtx4090.fits);
    assert!(rtx4090
        .notes
        .iter()
        .any(|n| n.code == "recommend.fits_with_checkpointing"));
}

#[test]
fn prices_for_unknown_gpus_or_mixed_currencies_are_bad_input() {
    let base = EstimateRequest {
        params_b: Some(7.0),
        ..EstimateRequest::default()
    };
    let unknown = recommend(&RecommendRequest {
        estimate: base.clone(),
        hours: None,
        prices: vec![PriceEntry {
            gpu: "Voodoo 5".into(),
            price_per_hour: dec!(1),
            currency: "CNY".into(),
            origin: PriceOrigin::Entered,
        }],
    });
    assert!(matches!(unknown, Err(CatalogError::UnknownGpu(_))));
    let mixed = recommend(&RecommendRequest {
        estimate: base.clone(),
        hours: None,
        prices: vec![
            PriceEntry {
                gpu: "RTX 4090".into(),
                price_per_hour: dec!(2.5),
                currency: "CNY".into(),
                origin: PriceOrigin::Entered,
            },
            PriceEntry {
                gpu: "RTX 3090".into(),
                price_per_hour: dec!(0.3),
                currency: "USD".into(),
                origin: PriceOrigin::Entered,
            },
        ],
    });
    assert!(matches!(mixed, Err(CatalogError::InvalidInput(_))));
    let no_hours = recommend(&RecommendRequest {
        estimate: base,
        hours: Some(dec!(0)),
        prices: vec![],
    });
    assert!(matches!(no_hours, Err(CatalogError::InvalidInput(_))));
}

fn price(gpu: &str, amount: Decimal, currency: &str, origin: PriceOrigin) -> PriceEntry {
    PriceEntry {
        gpu: gpu.into(),
        price_per_hour: amount,
        currency: currency.into(),
        origin,
    }
}

#[test]
fn entered_prices_win_over_earlier_rentals_and_other_currencies_are_dropped() {
    let entered = vec![price("RTX 4090", dec!(2.20), "CNY", PriceOrigin::Entered)];
    let history = vec![
        price(
            "NVIDIA GeForce RTX 4090",
            dec!(1.98),
            "CNY",
            PriceOrigin::EarlierRental,
        ),
        price("A100 80GB", dec!(6.50), "CNY", PriceOrigin::EarlierRental),
        price("H100", dec!(2.99), "USD", PriceOrigin::EarlierRental),
    ];
    let merged = merge_prices(entered, history);
    let summary: Vec<(&str, Decimal)> = merged
        .iter()
        .map(|p| (p.gpu.as_str(), p.price_per_hour))
        .collect();
    assert_eq!(
        summary,
        [("RTX 4090", dec!(2.20)), ("A100 80GB", dec!(6.50))]
    );
}

#[test]
fn without_entered_prices_history_uses_the_newest_rental_s_currency() {
    let history = vec![
        price("H100", dec!(2.99), "USD", PriceOrigin::EarlierRental),
        price("RTX 4090", dec!(1.98), "CNY", PriceOrigin::EarlierRental),
    ];
    let merged = merge_prices(Vec::new(), history);
    assert_eq!(merged.len(), 1);
    assert_eq!(merged[0].currency, "CNY");
}
