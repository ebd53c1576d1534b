use chrono::TimeZone;
use serde_json::json;

use super::*;

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 4, 12, 0, 0).unwrap()
}

fn d(s: &str) -> Decimal {
    s.parse().unwrap()
}

#[test]
fn runpod_catalog_becomes_offers_per_cloud_count_and_data_centre() {
    let body = json!({"gpus": [{
        "id": "NVIDIA RTX A5000", "name": "RTX A5000", "memory": 24,
        "secure": true, "community": true,
        "price": {"secure": 0.27, "community": "0.16"},
        "maxCount": {"secure": 2, "community": 1},
        "availability": "HIGH",
        "dataCenters": [{"id": "EU-RO-1", "availability": "HIGH"},
                        {"id": "US-KS-2", "availability": "LOW"}]
    }]});
    let parsed = runpod(&body, now());
    let ids: Vec<&str> = parsed.offers.iter().map(|o| o.offer_id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "SECURE:NVIDIA RTX A5000:1:EU-RO-1",
            "SECURE:NVIDIA RTX A5000:1:US-KS-2",
            "SECURE:NVIDIA RTX A5000:2:EU-RO-1",
            "SECURE:NVIDIA RTX A5000:2:US-KS-2",
            "COMMUNITY:NVIDIA RTX A5000:1:EU-RO-1",
            "COMMUNITY:NVIDIA RTX A5000:1:US-KS-2",
        ]
    );
    let two = &parsed.offers[2];
    assert_eq!(two.price_per_hour, d("0.54"));
    assert_eq!(two.price_per_gpu_hour, d("0.27"));
    assert_eq!(two.stock, Stock::High);
    assert_eq!(parsed.offers[1].stock, Stock::Low);
    assert_eq!(parsed.offers[4].price_per_gpu_hour, d("0.16"));
    assert_eq!(two.vram_gb, 24);
}

#[test]
fn runpod_cloud_not_offered_and_hostile_ids_are_skipped() {
    let body = json!({"gpus": [
        {"id": "NVIDIA GeForce RTX 4090", "memory": 24, "secure": false, "community": true,
         "price": {"secure": 0.01, "community": 0.34}, "availability": "NONE"},
        {"id": "../../v2/pods", "memory": 24, "price": {"secure": 1}},
        {"id": "NVIDIA H100 80GB HBM3", "memory": 80, "price": {"secure": 1e9}},
        {"id": "NVIDIA H100 80GB HBM3", "memory": 99999, "price": {"secure": 2.99}},
    ]});
    let parsed = runpod(&body, now());
    assert_eq!(parsed.offers.len(), 1, "{:?}", parsed.offers);
    let o = &parsed.offers[0];
    assert_eq!(o.offer_id, "COMMUNITY:NVIDIA GeForce RTX 4090:1");
    assert_eq!(o.gpu, "NVIDIA GeForce RTX 4090");
    assert_eq!(o.stock, Stock::None);
    assert_eq!(parsed.skipped, 3);
}

#[test]
fn vast_offers_with_bids_and_hostile_rows() {
    let body = json!({"offers": [
        {"id": 101, "gpu_name": "RTX 4090", "num_gpus": 2, "gpu_ram": 24564, "dph_total": 0.7,
         "min_bid": 0.3, "storage_cost": 0.15, "reliability2": 0.99, "geolocation": "Texas, US"},
        {"id": 102, "gpu_name": "RTX\u{202E} 4090\n", "num_gpus": 1, "gpu_ram": 24564,
         "dph_total": "0.35", "geolocation": "\u{1b}]0;x\u{7}Ohio"},
        {"id": 101, "gpu_name": "RTX 4090", "num_gpus": 1, "gpu_ram": 24564, "dph_total": 0.01},
        {"id": "1; DROP", "gpu_name": "RTX 4090", "num_gpus": 1, "gpu_ram": 24564, "dph_total": 0.3},
        {"id": 103, "gpu_name": "RTX 4090", "num_gpus": 1, "gpu_ram": 24564, "dph_total": -1},
        {"id": 104, "gpu_name": "RTX 4090", "num_gpus": 1, "gpu_ram": 24564, "dph_total": 9000},
        {"id": 105, "gpu_name": "RTX 4090", "num_gpus": 1000, "gpu_ram": 24564, "dph_total": 1},
        {"id": 106, "gpu_name": "RTX 4090", "num_gpus": 1, "gpu_ram": 24564, "dph_total": 0},
    ]});
    let parsed = vast(&body, now());
    let ids: Vec<&str> = parsed.offers.iter().map(|o| o.offer_id.as_str()).collect();
    assert_eq!(ids, ["101-bid", "101", "102"]);
    let bid = &parsed.offers[0];
    assert!(bid.interruptible);
    assert_eq!(bid.price_per_hour, d("0.3"));
    assert_eq!(bid.price_per_gpu_hour, d("0.15"));
    assert_eq!(parsed.offers[1].price_per_gpu_hour, d("0.35"));
    assert_eq!(parsed.offers[1].storage_per_gb_month, Some(d("0.15")));
    assert_eq!(parsed.offers[1].reliability, Some(d("0.99")));
    assert_eq!(
        parsed.offers[2].gpu, "NVIDIA GeForce RTX 4090",
        "cleaned then named"
    );
    assert_eq!(parsed.offers[2].region.as_deref(), Some("]0;x Ohio"));
    assert_eq!(parsed.skipped, 6, "{:?}", parsed.warnings);
}

#[test]
fn lambda_types_per_region_with_capacity() {
    let body = json!({"data": {
        "gpu_8x_h100_sxm5": {"instance_type": {"name": "gpu_8x_h100_sxm5",
            "description": "8x H100 (80 GB SXM5)", "gpu_description": "H100 (80 GB SXM5)",
            "price_cents_per_hour": 2392, "specs": {"vcpus": 208, "memory_gib": 1800,
            "storage_gib": 24780, "gpus": 8}},
            "regions_with_capacity_available": [{"name": "us-east-1", "description": "Virginia"}]},
        "gpu_1x_a100": {"instance_type": {"name": "gpu_1x_a100",
            "description": "1x A100 (40 GB SXM4)", "gpu_description": "A100 (40 GB SXM4)",
            "price_cents_per_hour": 129, "specs": {"gpus": 1}},
            "regions_with_capacity_available": []}
    }});
    let parsed = lambda(&body, now());
    assert_eq!(parsed.offers.len(), 2);
    let a100 = parsed
        .offers
        .iter()
        .find(|o| o.offer_id == "gpu_1x_a100")
        .unwrap();
    assert_eq!(a100.stock, Stock::None);
    assert_eq!(a100.vram_gb, 40);
    assert_eq!(a100.price_per_hour, d("1.29"));
    let h100 = parsed
        .offers
        .iter()
        .find(|o| o.offer_id == "gpu_8x_h100_sxm5:us-east-1")
        .unwrap();
    assert_eq!(h100.count, 8);
    assert_eq!(h100.price_per_gpu_hour, d("2.99"));
    assert_eq!(h100.region.as_deref(), Some("us-east-1"));
    assert_eq!(h100.stock, Stock::High);
}

#[test]
fn a_hundred_thousand_rows_are_capped_quickly() {
    let rows: Vec<Value> = (0..100_000u64)
        .map(|i| {
            json!({"id": i, "gpu_name": "RTX 4090", "num_gpus": 1, "gpu_ram": 24564,
                   "dph_total": 0.2 + (i % 1000) as f64 / 1000.0})
        })
        .collect();
    let body = json!({ "offers": rows });
    let started = std::time::Instant::now();
    let parsed = vast(&body, now());
    assert_eq!(parsed.offers.len(), MAX_OFFERS_PER_PROVIDER);
    assert_eq!(parsed.offers.len() + parsed.skipped, 100_000);
    assert!(parsed.warnings.len() <= 20);
    // Only the first 20 000 rows are read (20 per price step): the 5 000 cheapest of them.
    assert!(
        parsed
            .offers
            .iter()
            .all(|o| o.price_per_gpu_hour < d("0.45")),
        "cheapest kept"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}

#[test]
fn not_a_catalog_is_an_empty_parse_with_a_warning() {
    for body in [json!(null), json!({"gpus": "x"}), json!([1, 2])] {
        let parsed = runpod(&body, now());
        assert!(parsed.offers.is_empty());
        assert_eq!(parsed.warnings.len(), 1);
    }
}
