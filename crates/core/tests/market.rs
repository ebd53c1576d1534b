//! The market against the provider stand-ins (the documented catalog shapes of RunPod REST v2,
//! Vast.ai and Lambda; every request checked): a refresh of every provider, the snapshot kept
//! when a refresh fails (with its back-off), slow answers side by side, a catalog of 20 000
//! rows, and the ranking of a fixed market for a fixed task against a hand-computed result.

use std::time::{Duration, Instant};

use chrono::{DateTime, TimeZone, Utc};
use leasehold_core::account::{self, AccountRef, Endpoints, Provider};
use leasehold_core::catalog::{find_gpu, recommend, EstimateRequest, RecommendRequest, Task};
use leasehold_core::market::rank::{self, RankedOffer};
use leasehold_core::market::{self, Offer, OfferFilter, PriceSource, Stock};
use leasehold_core::ssh::Secret;
use leasehold_core::store::Store;
use leasehold_testkit::provider_standin::ProviderStandin;
use rust_decimal::Decimal;
use rust_decimal_macros::dec;
use serde_json::{json, Value};

fn at(h: u32, m: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 4, h, m, 0).unwrap()
}

struct Stands {
    runpod: ProviderStandin,
    vast: ProviderStandin,
    lambda: ProviderStandin,
}

impl Stands {
    fn start() -> Self {
        Self {
            runpod: ProviderStandin::start("runpod", "rp-key"),
            vast: ProviderStandin::start("vast", "vast-key"),
            lambda: ProviderStandin::start("lambda", "lambda-key"),
        }
    }

    fn endpoints(&self) -> Endpoints {
        Endpoints::default()
            .with(Provider::Runpod, &self.runpod.base())
            .with(Provider::Vast, &self.vast.base())
            .with(Provider::Lambda, &self.lambda.base())
            .with(Provider::Autodl, "http://127.0.0.1:9")
    }
}

async fn link(store: &Store, provider: Provider, var: &str, key: &str, endpoints: &Endpoints) {
    std::env::set_var(var, key);
    account::add(
        store,
        &AccountRef {
            provider,
            label: "default".into(),
        },
        &Secret::new(key),
        Some(var),
        endpoints,
        at(6, 0),
    )
    .await
    .expect("account added");
}

fn market_offers() -> (Value, Value, Value) {
    let runpod = json!({"offers": [
        {"id": "a", "gpu": "NVIDIA GeForce RTX 4090", "vram_gb": 24, "price": 0.69,
         "region": "US-KS-2", "stock": "HIGH", "count": 2},
        {"id": "b", "gpu": "NVIDIA H100 80GB HBM3", "vram_gb": 80, "price": 2.99,
         "region": "EU-RO-1", "stock": "NONE", "cloud": "COMMUNITY"},
    ]});
    let vast = json!({"offers": [
        {"id": "101", "gpu": "RTX 4090", "vram_gb": 24, "price": 0.35, "region": "Texas, US",
         "min_bid": 0.2},
        {"id": "102", "gpu": "RTX 4090", "count": 2, "vram_gb": 24, "price": 0.31,
         "region": "Quebec, CA"},
    ]});
    let lambda = json!({"offers": [
        {"id": "gpu_1x_a100", "gpu": "A100", "vram_gb": 40, "price": 1.29,
         "region": "us-east-1", "stock": "HIGH"},
        {"id": "gpu_1x_h100_pcie", "gpu": "H100 PCIe", "vram_gb": 80, "price": 2.49,
         "region": "us-west-1", "stock": "NONE"},
    ]});
    (runpod, vast, lambda)
}

fn set_offers(standin: &ProviderStandin, offers: &Value) {
    standin.set_offers(offers.clone());
}

#[tokio::test]
async fn refresh_reads_every_catalog_with_its_documented_request() {
    let stands = Stands::start();
    let endpoints = stands.endpoints();
    let store = Store::open_in_memory().await.unwrap();
    link(&store, Provider::Runpod, "MK_RP", "rp-key", &endpoints).await;
    link(
        &store,
        Provider::Lambda,
        "MK_LAMBDA",
        "lambda-key",
        &endpoints,
    )
    .await;
    let (rp, va, la) = market_offers();
    set_offers(&stands.runpod, &rp);
    set_offers(&stands.vast, &va);
    set_offers(&stands.lambda, &la);

    let report = market::refresh(&store, &endpoints, None, at(12, 0))
        .await
        .unwrap();
    let counts: Vec<(Provider, u64, bool)> = report
        .providers
        .iter()
        .map(|p| (p.provider, p.offers, p.error.is_none()))
        .collect();
    // RunPod: 4090 ×1 and ×2 in one data centre, the H100 once; Vast: two machines, one with a
    // bid form; Lambda: one offer per type.
    assert_eq!(
        counts,
        [
            (Provider::Runpod, 3, true),
            (Provider::Vast, 3, true),
            (Provider::Lambda, 2, true),
            (Provider::Autodl, 0, true),
        ]
    );

    let last = |s: &ProviderStandin| s.requests().last().cloned().unwrap();
    let rp = last(&stands.runpod);
    assert_eq!(
        (rp["method"].as_str(), rp["path"].as_str()),
        (Some("GET"), Some("/v2/catalog/gpus"))
    );
    assert_eq!(
        rp["query"],
        json!({"include": "AVAILABILITY", "product": "POD"})
    );
    assert_eq!(rp["key"], "ok");
    let va = last(&stands.vast);
    assert_eq!(
        (va["method"].as_str(), va["path"].as_str()),
        (Some("POST"), Some("/api/v0/bundles/"))
    );
    assert_eq!(va["key"], "none", "Vast.ai's search is sent without a key");
    assert_eq!(va["body"]["rentable"], json!({"eq": true}));
    assert_eq!(va["content_type"], "application/json");
    let la = last(&stands.lambda);
    assert_eq!(
        (la["method"].as_str(), la["path"].as_str()),
        (Some("GET"), Some("/api/v1/instance-types"))
    );
    assert_eq!(la["key"], "ok");
    for s in [&stands.runpod, &stands.vast, &stands.lambda] {
        assert_eq!(s.violations(), Vec::<Value>::new());
    }

    let cheap = market::list(
        &store,
        &OfferFilter {
            gpu: Some("4090".into()),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let ids: Vec<(&str, Decimal)> = cheap
        .iter()
        .map(|o| (o.offer_id.as_str(), o.price_per_gpu_hour))
        .collect();
    assert_eq!(
        ids,
        [
            ("101-bid", dec!(0.2)),
            ("102", dec!(0.31)),
            ("101", dec!(0.35)),
            ("SECURE:NVIDIA GeForce RTX 4090:1:US-KS-2", dec!(0.69)),
            ("SECURE:NVIDIA GeForce RTX 4090:2:US-KS-2", dec!(0.69)),
        ]
    );
    let on_demand_two = market::list(
        &store,
        &OfferFilter {
            count: Some(2),
            interruptible: Some(false),
            max_price_per_gpu_hour: Some(dec!(0.5)),
            region: Some("quebec".into()),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(on_demand_two.len(), 1);
    assert_eq!(on_demand_two[0].price_per_hour, dec!(0.62));
    let h100 = market::list(
        &store,
        &OfferFilter {
            min_vram_gb: Some(80),
            provider: Some(Provider::Lambda),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(h100.len(), 1);
    assert_eq!(h100[0].stock, Stock::None);
}

#[tokio::test]
async fn a_failed_refresh_keeps_the_last_good_snapshot_and_backs_off() {
    let stands = Stands::start();
    let endpoints = stands.endpoints();
    let store = Store::open_in_memory().await.unwrap();
    let (_, va, _) = market_offers();
    set_offers(&stands.vast, &va);
    market::refresh(&store, &endpoints, Some(Provider::Vast), at(12, 0))
        .await
        .unwrap();

    stands
        .vast
        .script(json!({"fail": [{"status": 429, "times": 1}]}));
    let failed = market::refresh(&store, &endpoints, Some(Provider::Vast), at(12, 15))
        .await
        .unwrap();
    let vast = &failed.providers[0];
    assert!(vast.error.as_deref().unwrap().contains("429"), "{vast:?}");
    assert_eq!((vast.offers, vast.fetched_at), (3, Some(at(12, 0))));
    let kept = market::list(&store, &OfferFilter::default()).await.unwrap();
    assert_eq!(kept.len(), 3, "a failed refresh never empties the table");
    assert!(
        kept.iter().all(|o| o.fetched_at == at(12, 0)),
        "shown with its age"
    );

    // Within the minute after a 429 nothing is asked.
    let asked = stands.vast.requests().len();
    let waiting = market::refresh(
        &store,
        &endpoints,
        Some(Provider::Vast),
        at(12, 15) + chrono::Duration::seconds(30),
    )
    .await
    .unwrap();
    assert!(waiting.providers[0]
        .error
        .as_deref()
        .unwrap()
        .contains("next request"));
    assert_eq!(stands.vast.requests().len(), asked);

    // After it, the next refresh goes and replaces the snapshot.
    set_offers(
        &stands.vast,
        &json!({"offers": [{"id": "7", "gpu": "RTX 3090", "price": 0.18}]}),
    );
    let again = market::refresh(&store, &endpoints, Some(Provider::Vast), at(12, 17))
        .await
        .unwrap();
    assert_eq!(
        (
            again.providers[0].offers,
            again.providers[0].error.as_deref()
        ),
        (1, None)
    );

    // A malformed answer is a failure too: still one offer.
    stands.vast.script(json!({"malformed": 1}));
    let broken = market::refresh(&store, &endpoints, Some(Provider::Vast), at(13, 0))
        .await
        .unwrap();
    assert!(broken.providers[0].error.is_some());
    assert_eq!(
        market::list(&store, &OfferFilter::default())
            .await
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn slow_providers_are_asked_side_by_side() {
    let stands = Stands::start();
    let endpoints = stands.endpoints();
    let store = Store::open_in_memory().await.unwrap();
    link(&store, Provider::Runpod, "MK_RP2", "rp-key", &endpoints).await;
    link(
        &store,
        Provider::Lambda,
        "MK_LAMBDA2",
        "lambda-key",
        &endpoints,
    )
    .await;
    for s in [&stands.runpod, &stands.vast, &stands.lambda] {
        s.script(json!({"delay": 1.0}));
    }
    let started = Instant::now();
    let report = market::refresh(&store, &endpoints, None, at(12, 0))
        .await
        .unwrap();
    assert!(
        report.providers.iter().all(|p| p.error.is_none()),
        "{report:?}"
    );
    assert!(
        started.elapsed() < Duration::from_millis(2500),
        "three 1 s answers took {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_huge_hostile_catalog_is_capped_cleaned_and_quick() {
    let stands = Stands::start();
    let endpoints = stands.endpoints();
    let store = Store::open_in_memory().await.unwrap();
    link(
        &store,
        Provider::Lambda,
        "MK_LAMBDA3",
        "lambda-key",
        &endpoints,
    )
    .await;
    set_offers(
        &stands.lambda,
        &json!({"many": 20000, "offers": [], "raw": [
            {"instance_type": {"name": "gpu_1x_\u{1b}[2J", "gpu_description": "A10 (24 GB PCIe)",
              "price_cents_per_hour": 75, "specs": {"gpus": 1}}},
            {"instance_type": {"name": "gpu_1x_free", "gpu_description": "A10 (24 GB PCIe)",
              "price_cents_per_hour": -5, "specs": {"gpus": 1}}},
            {"instance_type": {"name": "gpu_1x_absurd", "gpu_description": "H100 (80 GB)",
              "price_cents_per_hour": 99999999, "specs": {"gpus": 1}}},
            {"instance_type": {"name": "gpu_1x_evil", "gpu_description": "\u{202E}H100\n(80 GB)",
              "price_cents_per_hour": 199, "specs": {"gpus": 1}},
             "regions_with_capacity_available": [{"name": "../../x"}, {"name": "us-south-1"}]}
        ]}),
    );
    let started = Instant::now();
    let report = market::refresh(&store, &endpoints, Some(Provider::Lambda), at(12, 0))
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    let lambda = &report.providers[0];
    assert_eq!(lambda.offers, market::parse::MAX_OFFERS_PER_PROVIDER as u64);
    assert!(lambda.warnings.len() <= 20);
    let offers = market::list(&store, &OfferFilter::default()).await.unwrap();
    assert!(offers
        .iter()
        .all(|o| !o.gpu.contains('\u{202E}') && !o.gpu.contains('\n')));
    assert!(offers.iter().all(|o| o.price_per_gpu_hour <= dec!(100)));
    assert!(offers.iter().all(|o| !o.offer_id.contains("..")));
    assert!(!offers
        .iter()
        .any(|o| o.offer_id.contains("absurd") || o.offer_id.contains("free")));
}

fn offer(
    provider: Provider,
    id: &str,
    gpu: &str,
    vram: u32,
    count: u32,
    per_hour: Decimal,
    stock: Stock,
) -> Offer {
    Offer {
        provider,
        offer_id: id.into(),
        gpu: gpu.into(),
        count,
        vram_gb: vram,
        price_per_hour: per_hour,
        price_per_gpu_hour: per_hour / Decimal::from(count),
        currency: "USD".into(),
        storage_per_gb_month: None,
        region: None,
        stock,
        interruptible: false,
        min_bid: None,
        reliability: None,
        fetched_at: at(12, 0),
        source: PriceSource::Catalog,
    }
}

/// A fixed market for a fixed task, ranked by hand:
///
/// The plans (TFLOPS fixed here, not read from the data): 1× RTX 4090 at 165 (the first fitting
/// plan, so the task's 10 hours are its), 1× A100 80GB at 312, 1× H100 SXM at 989; 1× RTX 3090
/// does not fit. Disk 50 GB.
///
/// | offer | task hours | cost |
/// | vast 101, 4090, 0.40/h, storage 0.146/GB-month | 10 | 4.00 + 0.146×50×10/730 = 4.00 + 0.10 = 4.10 |
/// | runpod H100, 2.99/h | 10×165/989 = 1.6684 | 2.99×1.6684 = 4.988516 → 4.99 |
/// | lambda A100 80GB, 1.29/h | 10×165/312 = 5.2885 | 1.29×5.2885 = 6.822165 → 6.82 |
/// | runpod 4090, 0.34/h, out of stock | 10 | 3.40, but out of stock: last |
///
/// Not offered: 2× 4090 (no 2-GPU plan), the 3090 (does not fit).
#[test]
fn a_fixed_market_for_a_fixed_task_ranks_as_computed_by_hand() {
    let mut recommendation = recommend(&RecommendRequest {
        estimate: EstimateRequest {
            params_b: Some(7.0),
            task: Task::Inference,
            ..Default::default()
        },
        hours: None,
        prices: Vec::new(),
    })
    .unwrap();
    let plan = |gpu: &str, tflops: f64, fits: bool| {
        let spec = find_gpu(gpu).unwrap();
        let mut c = recommendation.candidates[0].clone();
        c.gpu = spec.name.clone();
        c.gpu_id = spec.id.clone();
        c.count = 1;
        c.fits = fits;
        c.fp16_tensor_tflops = Some(tflops);
        c
    };
    recommendation.candidates = vec![
        plan("RTX 4090", 165.0, true),
        plan("NVIDIA A100-SXM4-80GB", 312.0, true),
        plan("H100 SXM", 989.0, true),
        plan("RTX 3090", 71.0, false),
    ];
    let a100 = find_gpu("NVIDIA A100-SXM4-80GB").unwrap().name.clone();
    let h100 = find_gpu("H100 SXM").unwrap().name.clone();
    let mut vast_4090 = offer(
        Provider::Vast,
        "101",
        "RTX 4090",
        24,
        1,
        dec!(0.40),
        Stock::High,
    );
    vast_4090.storage_per_gb_month = Some(dec!(0.146));
    let offers = vec![
        offer(
            Provider::Runpod,
            "rp-4090",
            "RTX 4090",
            24,
            1,
            dec!(0.34),
            Stock::None,
        ),
        offer(
            Provider::Lambda,
            "gpu_1x_a100_sxm4",
            &a100,
            80,
            1,
            dec!(1.29),
            Stock::High,
        ),
        vast_4090,
        offer(
            Provider::Runpod,
            "rp-h100",
            &h100,
            80,
            1,
            dec!(2.99),
            Stock::Low,
        ),
        offer(
            Provider::Vast,
            "202",
            "RTX 4090",
            24,
            2,
            dec!(0.60),
            Stock::High,
        ),
        offer(
            Provider::Vast,
            "303",
            "RTX 3090",
            24,
            1,
            dec!(0.10),
            Stock::High,
        ),
    ];
    let ranked = rank::for_task(&recommendation, Some(dec!(10)), &offers, 50);
    let got: Vec<(&str, Option<Decimal>, Option<Decimal>)> = ranked
        .iter()
        .map(|r: &RankedOffer| (r.offer.offer_id.as_str(), r.task_hours, r.task_cost))
        .collect();
    assert_eq!(
        got,
        [
            ("101", Some(dec!(10)), Some(dec!(4.10))),
            ("rp-h100", Some(dec!(1.6684)), Some(dec!(4.99))),
            ("gpu_1x_a100_sxm4", Some(dec!(5.2885)), Some(dec!(6.82))),
            ("rp-4090", Some(dec!(10)), Some(dec!(3.40))),
        ]
    );

    let per_plan = rank::per_plan(&recommendation, Some(dec!(10)), &offers, 50);
    let sizes: Vec<usize> = per_plan.iter().map(Vec::len).collect();
    assert_eq!(
        sizes,
        [2, 1, 1, 0],
        "the 3090 does not fit: never an option"
    );
    assert_eq!(per_plan[0][0].offer.offer_id, "101");

    // Without a duration: no task cost, in-stock first then the cheapest hour.
    let no_hours = rank::for_task(&recommendation, None, &offers, 50);
    let ids: Vec<&str> = no_hours.iter().map(|r| r.offer.offer_id.as_str()).collect();
    assert_eq!(ids, ["101", "gpu_1x_a100_sxm4", "rp-h100", "rp-4090"]);
    assert!(no_hours.iter().all(|r| r.task_cost.is_none()));
}

/// Choose GPU's view: the offers that fit, in the user's yuan beside the provider's dollars at
/// the named rate, and each provider's age, error and whether an account would add offers.
#[tokio::test]
async fn choose_gpus_view_converts_at_the_named_rate_and_says_which_accounts_would_add_offers() {
    let stands = Stands::start();
    let endpoints = stands.endpoints();
    let store = Store::open_in_memory().await.unwrap();
    let (_, va, _) = market_offers();
    set_offers(&stands.vast, &va);
    market::refresh(&store, &endpoints, None, at(12, 0))
        .await
        .unwrap();
    let request = RecommendRequest {
        estimate: EstimateRequest {
            params_b: Some(7.0),
            task: Task::Inference,
            ..Default::default()
        },
        hours: Some(dec!(10)),
        prices: Vec::new(),
    };
    let view = market::view::for_request(&store, &request, &Default::default(), "cny")
        .await
        .unwrap();
    assert_eq!(view.currency, "CNY");
    let single = view
        .rows
        .iter()
        .find(|r| r.ranked.offer.offer_id == "101")
        .expect("the 1× 4090 offer fits a 7B inference");
    assert_eq!(single.converted_per_hour, Some(dec!(2.49)), "0.35 × 7.10");
    let rate = single.rate.as_ref().expect("the rate is named");
    assert_eq!((rate.from.as_str(), rate.to.as_str()), ("USD", "CNY"));
    assert!(single.converted_task_cost.is_some());
    let source = |p: Provider| view.sources.iter().find(|s| s.provider == p).unwrap();
    let vast = source(Provider::Vast);
    assert_eq!(
        (vast.fetched_at, vast.needs_account),
        (Some(at(12, 0)), false)
    );
    let runpod = source(Provider::Runpod);
    assert!(runpod.needs_account && !runpod.linked, "{runpod:?}");
    assert!(!source(Provider::Autodl).needs_account);
}
