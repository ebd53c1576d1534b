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
    let hits = hits(&alerts, &offers, &[], at(12, 0));
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

#[test]
fn cheaper_than_mine_holds_only_ten_percent_under_a_billing_rental_in_any_currency() {
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
            "0.30",
            Stock::None,
            "Ohio, US",
        ),
        offer(
            "NVIDIA H100 80GB HBM3",
            80,
            "1.50",
            Stock::High,
            "Texas, US",
        ),
    ];
    let gpu = |name: &str| crate::catalog::find_gpu(name).unwrap().name.clone();
    let paying = |instance: &str, gpu: String, per: &str, currency: &str| Paying {
        instance: instance.into(),
        gpu,
        price_per_gpu_hour: per.parse().unwrap(),
        currency: currency.into(),
    };
    let mine = [
        // 0.40 is 9 % under 0.44: not enough to move for.
        paying("close", gpu("RTX 4090"), "0.44", "USD"),
        paying("dear", gpu("RTX 4090"), "0.60", "USD"),
    ];
    let cheaper = |id, name: &str| alert(id, &gpu(name), AlertRule::CheaperThanMine, None);
    let got = hits(
        &[cheaper(1, "RTX 4090"), cheaper(2, "H100")],
        &offers,
        &mine,
        at(12, 0),
    );
    assert_eq!(got.len(), 1, "no H100 is rented, so nothing undercuts one");
    let hit = &got[0];
    assert_eq!(
        (
            hit.offer.price_per_gpu_hour.to_string(),
            hit.mine.as_ref().map(|m| m.instance.as_str())
        ),
        ("0.40".to_owned(), Some("dear")),
        "the in-stock 0.40 against the dearest rental; the sold-out 0.30 never counts"
    );
    assert!(
        hit.message().text.contains("you pay for dear"),
        "{}",
        hit.message().text
    );

    // Only the rental 9 % above: nothing.
    assert!(hits(&[cheaper(1, "RTX 4090")], &offers, &mine[..1], at(12, 0)).is_empty());

    // A rental paid in yuan is compared at the dated rate.
    let rate = crate::billing::exchange::rate("USD", "CNY")
        .expect("a USD→CNY rate")
        .rate;
    let yuan = (rate * Decimal::from(2)).round_dp(2).to_string();
    let in_yuan = [paying("autodl-4090", gpu("RTX 4090"), &yuan, "CNY")];
    let got = hits(&[cheaper(1, "RTX 4090")], &offers, &in_yuan, at(12, 0));
    assert_eq!(got.len(), 1, "$0.40 is far under the ¥ price of $2");
    assert_eq!(got[0].mine.as_ref().unwrap().currency, "CNY");

    // Fired within the hour: quiet.
    let fired = alert(
        1,
        &gpu("RTX 4090"),
        AlertRule::CheaperThanMine,
        Some(at(11, 30)),
    );
    assert!(hits(&[fired], &offers, &mine, at(12, 0)).is_empty());
}
