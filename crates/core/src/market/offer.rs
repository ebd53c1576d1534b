//! One offer in one checked shape, whichever provider it came from.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::account::Provider;

/// How much of an offer the provider says is free now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum Stock {
    /// None left (RunPod `NONE`, a Lambda type with no region that has capacity).
    None,
    Low,
    Medium,
    /// Plenty (RunPod `HIGH`); a Vast.ai offer is one machine free to rent now, and a Lambda
    /// region listed with capacity has it now.
    High,
    /// The provider says nothing of stock (AutoDL: your last price only).
    Unknown,
}

impl Stock {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Unknown => "unknown",
        }
    }

    /// RunPod's `NONE`/`LOW`/`MEDIUM`/`HIGH`; anything else is unknown.
    pub fn from_runpod(word: &str) -> Self {
        match word.trim().to_ascii_uppercase().as_str() {
            "NONE" => Self::None,
            "LOW" => Self::Low,
            "MEDIUM" => Self::Medium,
            "HIGH" => Self::High,
            _ => Self::Unknown,
        }
    }

    /// Whether renting it may work now (unknown counts: nothing says it cannot).
    pub fn in_stock(self) -> bool {
        self != Self::None
    }
}

/// Where an offer's price comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum PriceSource {
    /// The provider's own catalog, as fetched at `fetched_at`.
    Catalog,
    /// No price API (AutoDL): what you paid for your last rental of this card.
    YourLastPrice,
}

/// One offer, every value checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Offer {
    pub provider: Provider,
    /// What renting it needs: RunPod `CLOUD:GPU TYPE:COUNT[:DATA CENTRE]`, a Vast.ai ask id
    /// (`ID-bid` for its interruptible form), Lambda `TYPE:REGION`.
    pub offer_id: String,
    /// The GPU as the catalog names it (the cleaned provider name when the catalog lacks it).
    pub gpu: String,
    pub count: u32,
    /// Memory per GPU, GB.
    pub vram_gb: u32,
    /// The whole offer per hour, in `currency`.
    #[ts(type = "string")]
    pub price_per_hour: Decimal,
    #[ts(type = "string")]
    pub price_per_gpu_hour: Decimal,
    pub currency: String,
    /// Disk per GB-month where the provider prices it separately (Vast.ai `storage_cost`).
    #[ts(type = "string | null")]
    pub storage_per_gb_month: Option<Decimal>,
    /// Region or data centre; `None` when the provider does not place it.
    pub region: Option<String>,
    pub stock: Stock,
    /// Interruptible (a bid): the provider may stop it when outbid.
    pub interruptible: bool,
    /// The lowest bid accepted, per hour, for an interruptible offer.
    #[ts(type = "string | null")]
    pub min_bid: Option<Decimal>,
    /// The provider's reliability score, 0–1, where given (Vast.ai).
    #[ts(type = "string | null")]
    pub reliability: Option<Decimal>,
    pub fetched_at: DateTime<Utc>,
    pub source: PriceSource,
}
