//! Each provider's documented catalog read into [`Offer`]s, pure. A catalog is untrusted input:
//! a row that does not read is skipped with a warning, never the end of the catalog; names are
//! cleaned like the account listings (`account::remote`); prices are read from their text and
//! refused when absurd; a repeated offer id keeps its first row; and no catalog yields more
//! than [`MAX_OFFERS_PER_PROVIDER`] offers (the cheapest), however many rows it sends.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde_json::Value;

use super::offer::{Offer, PriceSource, Stock};
use crate::account::remote::{self, checked_id, clean_text};
use crate::account::Provider;

/// Rows read from one answer; the rest are ignored (and said so).
pub const MAX_ROWS_READ: usize = 20_000;
/// Offers kept per provider.
pub const MAX_OFFERS_PER_PROVIDER: usize = 5_000;
/// Warnings kept per refresh (one per skipped row would be 100 000 lines).
const MAX_WARNINGS: usize = 20;
/// The highest price per GPU-hour believed: the most expensive card rents for a fraction.
const MAX_PRICE_PER_GPU_HOUR: i64 = 100;
/// RunPod's counts of one GPU type offered as separate offers.
const COUNTS: [u32; 4] = [1, 2, 4, 8];

/// What one catalog answer gave.
#[derive(Debug, Clone, Default)]
pub struct Parsed {
    pub offers: Vec<Offer>,
    pub warnings: Vec<String>,
    /// Rows that did not become an offer.
    pub skipped: usize,
    /// The catalog's name of each (provider name, memory) seen, looked up once.
    names: HashMap<(String, u32), Option<String>>,
}

impl Parsed {
    fn gpu_name(&mut self, raw: &str, vram_gb: u32) -> Option<String> {
        self.names
            .entry((raw.to_owned(), vram_gb))
            .or_insert_with(|| gpu_name(raw, vram_gb))
            .clone()
    }

    fn skip(&mut self, why: String) {
        self.skipped += 1;
        if self.warnings.len() < MAX_WARNINGS {
            self.warnings.push(why);
        }
    }

    /// Duplicates dropped (first row wins), then the cheapest [`MAX_OFFERS_PER_PROVIDER`].
    fn finish(mut self) -> Self {
        let mut seen = HashSet::new();
        let before = self.offers.len();
        self.offers.retain(|o| seen.insert(o.offer_id.clone()));
        let duplicates = before - self.offers.len();
        if duplicates > 0 {
            self.skip(format!(
                "{duplicates} rows repeated an offer id; the first was kept"
            ));
            self.skipped += duplicates - 1;
        }
        if self.offers.len() > MAX_OFFERS_PER_PROVIDER {
            self.offers.sort_by_key(|offer| offer.price_per_gpu_hour);
            let cut = self.offers.len() - MAX_OFFERS_PER_PROVIDER;
            self.offers.truncate(MAX_OFFERS_PER_PROVIDER);
            self.skip(format!(
                "{cut} offers beyond the {MAX_OFFERS_PER_PROVIDER} cheapest were left out"
            ));
            self.skipped += cut - 1;
        }
        self
    }
}

fn rows<'a>(body: &'a Value, key: &str, parsed: &mut Parsed) -> Option<&'a [Value]> {
    let list = body.get(key)?.as_array()?;
    if list.len() > MAX_ROWS_READ {
        parsed.skip(format!(
            "{} rows sent; only the first {MAX_ROWS_READ} were read",
            list.len()
        ));
        parsed.skipped += list.len() - MAX_ROWS_READ - 1;
    }
    Some(&list[..list.len().min(MAX_ROWS_READ)])
}

/// A believable price per GPU-hour: more than zero, at most [`MAX_PRICE_PER_GPU_HOUR`].
fn per_gpu(price_per_hour: Decimal, count: u32) -> Option<Decimal> {
    let per = (price_per_hour / Decimal::from(count.max(1)))
        .round_dp(6)
        .normalize();
    (per > Decimal::ZERO && per <= Decimal::from(MAX_PRICE_PER_GPU_HOUR)).then_some(per)
}

fn region(value: Option<&Value>) -> Option<String> {
    value
        .and_then(Value::as_str)
        .map(|r| clean_text(r, 40))
        .filter(|r| !r.is_empty())
}

/// A GPU memory size in GB between 1 and 512.
fn vram(gb: Option<u64>) -> Option<u32> {
    gb.filter(|g| (1..=512).contains(g)).map(|g| g as u32)
}

/// The catalog's name, asking with the memory so an A100 40 GB and 80 GB stay apart.
fn gpu_name(raw: &str, vram_gb: u32) -> Option<String> {
    let cleaned = clean_text(raw, 60);
    if cleaned.is_empty() {
        return None;
    }
    Some(
        crate::catalog::find_gpu_with_memory(&cleaned, Some(u64::from(vram_gb) * 1024))
            .map(|spec| spec.name.clone())
            .unwrap_or(cleaned),
    )
}

/// A RunPod GPU type id as it travels back in `POST /v2/pods`: letters, digits, spaces and
/// `-_.()`, at most 60 characters ("NVIDIA GeForce RTX 4090").
pub fn runpod_gpu_id(raw: &str) -> Option<String> {
    let id = raw.trim();
    (!id.is_empty()
        && id.len() <= 60
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | '-' | '_' | '.' | '(' | ')')))
    .then(|| id.to_owned())
}

/// RunPod REST v2 `GET /v2/catalog/gpus?include=AVAILABILITY&product=POD` → `{"gpus": [{id,
/// name, memory (GB), secure, community, price: {secure, community} (USD per GPU-hour),
/// maxCount: {secure, community}, availability, dataCenters: [{id, name, availability}]}]}`.
/// One offer per cloud the type is offered on (its flag true), count (1, 2, 4, 8 up to
/// `maxCount`) and data centre (the type's own availability when none is listed).
pub fn runpod(body: &Value, now: DateTime<Utc>) -> Parsed {
    let mut parsed = Parsed::default();
    let Some(list) = rows(body, "gpus", &mut parsed) else {
        parsed.skip("RunPod: no \"gpus\" list".into());
        return parsed;
    };
    for gpu in list {
        let Some(id) = gpu
            .get("id")
            .and_then(Value::as_str)
            .and_then(runpod_gpu_id)
        else {
            parsed.skip("RunPod: a GPU type without a usable id".into());
            continue;
        };
        let Some(vram_gb) = vram(gpu.get("memory").and_then(Value::as_u64)) else {
            parsed.skip(format!("RunPod {id}: no believable memory size"));
            continue;
        };
        let Some(name) = parsed.gpu_name(
            gpu.get("name").and_then(Value::as_str).unwrap_or(&id),
            vram_gb,
        ) else {
            continue;
        };
        let overall = Stock::from_runpod(
            gpu.get("availability")
                .and_then(Value::as_str)
                .unwrap_or(""),
        );
        let centres: Vec<(String, Stock)> = gpu
            .get("dataCenters")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .take(64)
                    .filter_map(|dc| {
                        let id = dc.get("id").and_then(Value::as_str).and_then(checked_id)?;
                        let stock = Stock::from_runpod(
                            dc.get("availability").and_then(Value::as_str).unwrap_or(""),
                        );
                        Some((id, stock))
                    })
                    .collect()
            })
            .unwrap_or_default();
        for cloud in ["secure", "community"] {
            // The catalog lists placeholder prices for clouds a type is not offered on.
            if gpu.get(cloud).and_then(Value::as_bool) == Some(false) {
                continue;
            }
            let raw_price = gpu.get("price").and_then(|p| p.get(cloud));
            let Some(price) = remote::price(raw_price) else {
                if raw_price.is_some_and(|v| !v.is_null()) {
                    parsed.skip(format!("RunPod {id}: an unbelievable {cloud} price"));
                }
                continue;
            };
            let Some(per) = per_gpu(price, 1) else {
                parsed.skip(format!("RunPod {id}: an unbelievable price {price}"));
                continue;
            };
            let max_count = gpu
                .get("maxCount")
                .and_then(|m| m.get(cloud))
                .and_then(Value::as_u64)
                .unwrap_or(1)
                .min(64) as u32;
            let places: Vec<(Option<&str>, Stock)> = if centres.is_empty() {
                vec![(None, overall)]
            } else {
                centres
                    .iter()
                    .map(|(id, s)| (Some(id.as_str()), *s))
                    .collect()
            };
            for count in COUNTS.into_iter().filter(|c| *c <= max_count.max(1)) {
                for (place, stock) in &places {
                    let cloud_word = cloud.to_ascii_uppercase();
                    let offer_id = match place {
                        Some(dc) => format!("{cloud_word}:{id}:{count}:{dc}"),
                        None => format!("{cloud_word}:{id}:{count}"),
                    };
                    parsed.offers.push(Offer {
                        provider: Provider::Runpod,
                        offer_id,
                        gpu: name.clone(),
                        count,
                        vram_gb,
                        price_per_hour: (per * Decimal::from(count)).normalize(),
                        price_per_gpu_hour: per,
                        currency: "USD".into(),
                        storage_per_gb_month: None,
                        region: place.map(str::to_owned),
                        stock: *stock,
                        interruptible: false,
                        min_bid: None,
                        reliability: None,
                        fetched_at: now,
                        source: PriceSource::Catalog,
                    });
                }
            }
        }
    }
    parsed.finish()
}

/// The search sent to Vast.ai's `POST /api/v0/bundles/`: rentable, verified machines, cheapest
/// first, one request per refresh (Vast.ai allows about 10 a minute per address).
pub fn vast_query(limit: u32) -> Value {
    serde_json::json!({
        "rentable": {"eq": true},
        "rented": {"eq": false},
        "verified": {"eq": true},
        "num_gpus": {"gte": 1},
        "type": "on-demand",
        "order": [["dph_total", "asc"]],
        "limit": limit,
    })
}

/// Vast.ai `POST /api/v0/bundles/` → `{"offers": [{id, gpu_name, num_gpus, gpu_ram (MB),
/// dph_total (whole machine, USD/h), min_bid, storage_cost ($/GB-month), reliability or
/// reliability2, geolocation}]}`. Each machine is an on-demand offer (`ID`) and, where it
/// takes bids, an interruptible one (`ID-bid`) at its minimum bid.
pub fn vast(body: &Value, now: DateTime<Utc>) -> Parsed {
    let mut parsed = Parsed::default();
    let Some(list) = rows(body, "offers", &mut parsed) else {
        parsed.skip("Vast.ai: no \"offers\" list".into());
        return parsed;
    };
    for row in list {
        let id = match row.get("id") {
            Some(Value::Number(n)) => n.as_u64().map(|n| n.to_string()),
            Some(Value::String(s)) => checked_id(s),
            _ => None,
        };
        let Some(id) = id.filter(|i| i.len() <= 20) else {
            parsed.skip("Vast.ai: an offer without a usable id".into());
            continue;
        };
        let Some(count) = remote::gpu_count(row.get("num_gpus")) else {
            parsed.skip(format!("Vast.ai {id}: no believable GPU count"));
            continue;
        };
        let Some(vram_gb) = vram(
            row.get("gpu_ram")
                .and_then(Value::as_f64)
                .filter(|mb| mb.is_finite() && *mb > 0.0)
                .map(|mb| (mb / 1024.0).round() as u64),
        ) else {
            parsed.skip(format!("Vast.ai {id}: no believable GPU memory"));
            continue;
        };
        let Some(gpu) = row
            .get("gpu_name")
            .and_then(Value::as_str)
            .and_then(|n| parsed.gpu_name(n, vram_gb))
        else {
            parsed.skip(format!("Vast.ai {id}: no GPU name"));
            continue;
        };
        let Some(price) = remote::price(row.get("dph_total")) else {
            parsed.skip(format!("Vast.ai {id}: no believable price"));
            continue;
        };
        let Some(per) = per_gpu(price, count) else {
            parsed.skip(format!("Vast.ai {id}: an unbelievable price {price}"));
            continue;
        };
        let reliability = remote::price(row.get("reliability2").or_else(|| row.get("reliability")))
            .filter(|r| *r <= Decimal::ONE);
        let min_bid = remote::price(row.get("min_bid")).filter(|b| !b.is_zero() && *b <= price);
        let base = Offer {
            provider: Provider::Vast,
            offer_id: id.clone(),
            gpu,
            count,
            vram_gb,
            price_per_hour: price,
            price_per_gpu_hour: per,
            currency: "USD".into(),
            storage_per_gb_month: remote::price(row.get("storage_cost"))
                .filter(|s| *s <= Decimal::from(10)),
            region: region(row.get("geolocation")),
            stock: Stock::High,
            interruptible: false,
            min_bid,
            reliability,
            fetched_at: now,
            source: PriceSource::Catalog,
        };
        if let Some(bid) = min_bid.and_then(|b| per_gpu(b, count).map(|per| (b, per))) {
            parsed.offers.push(Offer {
                offer_id: format!("{id}-bid"),
                price_per_hour: bid.0,
                price_per_gpu_hour: bid.1,
                interruptible: true,
                ..base.clone()
            });
        }
        parsed.offers.push(base);
    }
    parsed.finish()
}

/// The GB in a Lambda GPU description ("A100 (40 GB SXM4)" → 40).
fn gb_in(description: &str) -> Option<u64> {
    let words: Vec<&str> = description
        .split(|c: char| c.is_whitespace() || c == '(' || c == ')')
        .collect();
    words
        .windows(2)
        .find(|w| w[1].eq_ignore_ascii_case("GB"))
        .and_then(|w| w[0].parse().ok())
}

/// Lambda `GET /api/v1/instance-types` → `{"data": {NAME: {"instance_type": {name,
/// description, gpu_description, price_cents_per_hour, specs: {gpus, …}},
/// "regions_with_capacity_available": [{name, description}]}}}`. One offer per type and region
/// with capacity (stock high); a type with none is one offer without a region, out of stock.
pub fn lambda(body: &Value, now: DateTime<Utc>) -> Parsed {
    let mut parsed = Parsed::default();
    let Some(types) = body.get("data").and_then(Value::as_object) else {
        parsed.skip("Lambda: no \"data\" object".into());
        return parsed;
    };
    for (key, entry) in types.iter().take(MAX_ROWS_READ) {
        let kind = entry.get("instance_type").unwrap_or(&Value::Null);
        let Some(name) = kind
            .get("name")
            .and_then(Value::as_str)
            .or(Some(key.as_str()))
            .and_then(checked_id)
        else {
            parsed.skip("Lambda: an instance type without a usable name".into());
            continue;
        };
        let Some(count) = remote::gpu_count(kind.get("specs").and_then(|s| s.get("gpus"))) else {
            parsed.skip(format!("Lambda {name}: no believable GPU count"));
            continue;
        };
        let description = kind
            .get("gpu_description")
            .and_then(Value::as_str)
            .unwrap_or("");
        let Some(vram_gb) = vram(gb_in(description).or_else(|| {
            crate::catalog::find_gpu(&clean_text(description, 60))
                .and_then(|c| c.memory_gb.as_ref())
                .map(|m| m.value.round() as u64)
        })) else {
            parsed.skip(format!("Lambda {name}: no believable GPU memory"));
            continue;
        };
        let Some(gpu) = parsed.gpu_name(description, vram_gb) else {
            parsed.skip(format!("Lambda {name}: no GPU description"));
            continue;
        };
        let cents = remote::price(kind.get("price_cents_per_hour"));
        let Some(price) = cents.map(|c| (c / Decimal::from(100)).normalize()) else {
            parsed.skip(format!("Lambda {name}: no believable price"));
            continue;
        };
        let Some(per) = per_gpu(price, count) else {
            parsed.skip(format!("Lambda {name}: an unbelievable price {price}"));
            continue;
        };
        let regions: Vec<String> = entry
            .get("regions_with_capacity_available")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .take(64)
                    .filter_map(|r| r.get("name").and_then(Value::as_str).and_then(checked_id))
                    .collect()
            })
            .unwrap_or_default();
        let base = Offer {
            provider: Provider::Lambda,
            offer_id: name.clone(),
            gpu,
            count,
            vram_gb,
            price_per_hour: price,
            price_per_gpu_hour: per,
            currency: "USD".into(),
            storage_per_gb_month: None,
            region: None,
            stock: Stock::None,
            interruptible: false,
            min_bid: None,
            reliability: None,
            fetched_at: now,
            source: PriceSource::Catalog,
        };
        if regions.is_empty() {
            parsed.offers.push(base);
        } else {
            for r in regions {
                parsed.offers.push(Offer {
                    offer_id: format!("{name}:{r}"),
                    region: Some(r),
                    stock: Stock::High,
                    ..base.clone()
                });
            }
        }
    }
    parsed.finish()
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
