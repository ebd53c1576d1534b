use chrono::TimeZone;

use super::*;
use crate::account::Provider;
use crate::market::{PriceSource, Stock};

fn at(h: u32, m: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 4, h, m, 0).unwrap()
}

fn offer(gpu: &str, vram: u32, per: &str, stock: Stock, region: &str) -> Offer {
    let per: Decimal = per.parse().unwrap();
    Offer {
        provider: Provider::Vast,
        offer_id: format!("{gpu}-{per}-{region}").replace([' ', '.'], "_"),
        gpu: gpu.into(),
        count: 1,
        vram_gb: vram,
        price_per_hour: per,
        price_per_gpu_hour: per,
        currency: "USD".into(),
        storage_per_gb_month: None,
        region: Some(region.into()),
        stock,
        interruptible: false,
        min_bid: None,
        reliability: None,
        fetched_at: at(12, 0),
        source: PriceSource::Catalog,
    }
}

fn alert(id: i64, gpu: &str, rule: AlertRule, fired: Option<DateTime<Utc>>) -> Alert {
    Alert {
        id,
        gpu: gpu.into(),
        rule,
        created_at: at(8, 0),
        last_fired_at: fired,
    }
}

#[test]
fn alerts_hold_on_the_right_offers_at_most_once_an_hour() {
    let offers = [
        offer(
            "NVIDIA GeForce RTX 4090",
            24,
            "0.40",
            Stock::High,
            "Texas, US",
        ),
        offer(
            "NVIDIA GeForce RTX 4090",
            24,
            "0.33",
            Stock::None,
            "Ohio, US",
        ),
        offer(
            "NVIDIA GeForce RTX 4090",
            24,
            "0.34",
            Stock::Low,
            "Quebec, CA",
        ),
        offer(
            "NVIDIA H100 80GB HBM3",
            80,
            "2.10",
            Stock::High,
            "Texas, US",
        ),
    ];
    let below = |id, price: &str, fired| {
        alert(
            id,
            "RTX 4090",
            AlertRule::Below {
                below: price.parse().unwrap(),
                currency: "USD".into(),
            },
            fired,
        )
    };
    let stock = |id, gpu, region: Option<&str>| {
        alert(
            id,
            gpu,
            AlertRule::InStock {
                region: region.map(str::to_owned),
            },
            None,
        )
    };
    let alerts = [
        below(1, "0.35", None),
        below(2, "0.30", None),
        below(3, "0.35", Some(at(11, 30))),
        below(4, "0.35", Some(at(10, 59))),
        stock(5, "H100", Some("texas")),
        stock(6, "H100", Some("Ohio")),
        stock(7, "A100", None),
    ];
    let hits = hits(&alerts, &offers, at(12, 0));
    let got: Vec<(i64, &str)> = hits
        .iter()
        .map(|h| {
            (
                h.alert.id,
                h.offer.price_per_gpu_hour.to_string().leak() as &str,
            )
        })
        .collect();
    assert_eq!(
        got,
        [(1, "0.34"), (4, "0.34"), (5, "2.10")],
        "the out-of-stock 0.33 never counts; #3 fired 30 minutes ago"
    );
    assert!(hits[0].message().text.contains("Quebec, CA"));
}
