//! Estimates before renting, the split-run comparison, rent versus buy, and the presets.

use leasehold_core::billing::{
    estimate, presets, rent_vs_buy, EstimateInput, Granularity, ProviderKey, RentVsBuyInput,
};
use leasehold_core::Coded;

use crate::common::d;

#[test]
fn estimate_is_price_times_hours_plus_storage_plus_traffic() {
    let mut input = EstimateInput::simple("CNY", d("2.5"), 2, d("10"));
    input.storage_per_hour = d("0.1");
    input.traffic_gb = d("20");
    input.traffic_per_gb = d("0.5");
    let result = estimate(&input).expect("valid estimate");
    assert_eq!(result.compute.to_string(), "50.00", "2 GPUs × 2.5 × 10 h");
    assert_eq!(result.storage.to_string(), "1.00");
    assert_eq!(result.traffic.to_string(), "10.00");
    assert_eq!(result.total.to_string(), "61.00");
    assert_eq!(result.currency.code(), "CNY");
    assert!(result.split.is_none(), "one run: nothing to compare");
}

#[test]
fn estimate_rounds_up_to_the_providers_unit() {
    let mut input = EstimateInput::simple("USD", d("1"), 1, d("1.25"));
    input.granularity = Granularity::Hour;
    assert_eq!(estimate(&input).expect("valid").total.to_string(), "2.00");
}

#[test]
fn the_seeds_split_job_is_priced_under_each_stopped_rule_side_by_side() {
    let mut input = EstimateInput::simple("CNY", d("2.5"), 1, d("10"));
    input.runs = 2;
    input.stop_hours_between = d("20");
    input.stopped_storage_rate = Some(d("0.1"));
    input.stopped_rate = Some(d("1"));
    let result = estimate(&input).expect("valid estimate");
    let split = result.split.expect("two runs are compared");
    assert_eq!(split.continuous_total.to_string(), "25.00");
    assert_eq!(split.hours_per_run.to_string(), "5");
    let rows: Vec<(String, String, String)> = split
        .options
        .iter()
        .map(|o| {
            (
                o.rule.clone(),
                o.total.to_string(),
                o.times_continuous.normalize().to_string(),
            )
        })
        .collect();
    let expected = [
        ("none", "25.00", "1"),
        ("storage", "27.00", "1.08"),
        ("rate", "45.00", "1.8"),
        ("full_price", "75.00", "3"),
    ];
    for ((rule, total, times), (er, et, ex)) in rows.iter().zip(expected) {
        assert_eq!((rule.as_str(), total.as_str()), (er, et), "{rule}");
        assert_eq!(times, ex, "{rule}: times one uninterrupted run");
    }
    assert_eq!(rows.len(), expected.len());
}

#[test]
fn estimates_refuse_bad_input() {
    let cases = [
        (
            EstimateInput::simple("CNY", d("0"), 1, d("10")),
            "billing.invalid_price",
        ),
        (
            EstimateInput::simple("CNY", d("-1"), 1, d("10")),
            "billing.invalid_price",
        ),
        (
            EstimateInput::simple("XYZ", d("1"), 1, d("10")),
            "billing.unknown_currency",
        ),
        (
            EstimateInput::simple("CNY", d("1"), 1, d("0")),
            "billing.invalid_input",
        ),
        (
            EstimateInput::simple("CNY", d("1"), 0, d("1")),
            "billing.invalid_input",
        ),
    ];
    for (input, code) in cases {
        let err = estimate(&input).expect_err(code);
        assert_eq!(err.code(), code, "{err}");
    }
}

fn rvb(card: &str, watts: &str, kwh: &str, rent: &str, hours: &str, months: u32) -> RentVsBuyInput {
    RentVsBuyInput {
        currency: "CNY".into(),
        card_price: d(card),
        power_watts: d(watts),
        electricity_per_kwh: d(kwh),
        rent_per_hour: d(rent),
        hours_per_day: d(hours),
        months,
    }
}

#[test]
fn rent_versus_buy_finds_the_break_even_month() {
    // Rent 2.0/h × 8 h × 30 d = 480/month; power 0.5 kW × 240 h × 1.0 = 120/month;
    // the 14 000 card is paid back by 360/month savings after 38.9 → month 39.
    let result = rent_vs_buy(&rvb("14000", "500", "1", "2", "8", 24)).expect("valid");
    assert_eq!(result.rent_per_month.to_string(), "480.00");
    assert_eq!(result.power_per_month.to_string(), "120.00");
    assert_eq!(result.break_even_month, Some(39));
    assert!(!result.pays_off_within_months, "24 months is too short");
    assert_eq!(result.cheaper, "rent");
    assert_eq!(result.by_month.len(), 24);
    let long = rent_vs_buy(&rvb("14000", "500", "1", "2", "8", 48)).expect("valid");
    assert!(long.pays_off_within_months);
    assert_eq!(long.cheaper, "buy");
}

#[test]
fn buying_never_pays_off_when_power_costs_as_much_as_renting() {
    let result = rent_vs_buy(&rvb("1000", "1000", "2", "2", "24", 12)).expect("valid");
    assert_eq!(result.break_even_month, None);
    assert_eq!(result.cheaper, "rent");
}

#[test]
fn rent_versus_buy_refuses_bad_input() {
    for (input, code) in [
        (rvb("0", "500", "1", "2", "8", 12), "billing.invalid_price"),
        (
            rvb("100", "500", "1", "-2", "8", 12),
            "billing.invalid_price",
        ),
        (
            rvb("100", "-5", "1", "2", "8", 12),
            "billing.negative_amount",
        ),
        (
            rvb("100", "500", "1", "2", "25", 12),
            "billing.invalid_input",
        ),
        (rvb("100", "500", "1", "2", "8", 0), "billing.invalid_input"),
    ] {
        let err = rent_vs_buy(&input).expect_err(code);
        assert_eq!(err.code(), code, "{err}");
    }
}

#[test]
fn presets_fill_rule_fields_and_autodl_wipes_after_15_days() {
    let all = presets();
    assert_eq!(
        all.len(),
        13,
        "并行计算云, AutoDL, 恒源云, 酷虎云, RunPod, Vast.ai, Lambda, the five big clouds, custom"
    );
    let autodl = ProviderKey::Autodl.preset();
    assert_eq!(autodl.wipe_after_stopped_days, Some(15));
    assert!(autodl.no_gpu_mode, "AutoDL has 无卡模式");
    for (typed, key) in [
        ("AutoDL", ProviderKey::Autodl),
        ("恒源云", ProviderKey::Hengyuan),
        ("vast.ai", ProviderKey::Vast),
    ] {
        assert_eq!(ProviderKey::parse(typed).ok(), Some(key), "{typed}");
    }
    assert_eq!(
        ProviderKey::parse("digitalocean")
            .map_err(|e| e.code())
            .err(),
        Some("billing.unknown_provider")
    );
}

/// Issue #13, item 14: the seed's first choice and the big clouds' GPU VMs have presets; VMs say
/// so (Docker can run there) and name the public page their billing facts come from.
#[test]
fn the_seeds_platforms_and_the_big_clouds_have_presets() {
    use leasehold_core::billing::{BillingStart, MachineKind};
    for (typed, key) in [
        ("并行计算云", ProviderKey::Bingxing),
        ("阿里云", ProviderKey::Aliyun),
        ("腾讯云", ProviderKey::Tencent),
        ("华为云", ProviderKey::Huawei),
        ("AWS", ProviderKey::Aws),
        ("Google Cloud", ProviderKey::Gcp),
    ] {
        assert_eq!(ProviderKey::parse(typed).ok(), Some(key), "{typed}");
        assert_eq!(
            ProviderKey::parse(key.as_str()).ok(),
            Some(key),
            "the key itself"
        );
    }
    for key in [
        ProviderKey::Aliyun,
        ProviderKey::Tencent,
        ProviderKey::Huawei,
        ProviderKey::Aws,
        ProviderKey::Gcp,
    ] {
        let preset = key.preset();
        assert_eq!(preset.machine, Some(MachineKind::VirtualMachine), "{key:?}");
        assert_eq!(
            preset.billing_starts,
            BillingStart::Created,
            "{key:?}: a cloud VM bills from creation until released"
        );
        assert!(
            preset
                .source
                .as_deref()
                .is_some_and(|s| s.starts_with("https://")),
            "{key:?}: the billing facts name their public source"
        );
    }
    assert_eq!(
        ProviderKey::Aliyun.preset().stopped_billing_kind,
        "rate",
        "a plain stop keeps billing an Alibaba Cloud pay-as-you-go instance"
    );
    for key in [ProviderKey::Autodl, ProviderKey::Runpod, ProviderKey::Vast] {
        assert_eq!(
            key.preset().machine,
            Some(MachineKind::Container),
            "{key:?}"
        );
    }
    let bingxing = ProviderKey::Bingxing.preset();
    assert_eq!(bingxing.display_name, "并行计算云");
    assert_eq!(bingxing.machine, None, "not known: the probe decides");
    assert_eq!(bingxing.source, None, "our best reading, marked as such");
}
