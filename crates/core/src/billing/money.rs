//! Currencies and how money is shown: decimal amounts, never floats.

use std::fmt;

use rust_decimal::{Decimal, RoundingStrategy};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::BillingError;

/// `a + b`, or `billing.amount_overflow` naming what was being added.
pub(crate) fn add(what: &'static str, a: Decimal, b: Decimal) -> Result<Decimal, BillingError> {
    a.checked_add(b).ok_or(BillingError::Overflow { what })
}

/// `a × b`, or `billing.amount_overflow` naming what was being multiplied.
pub(crate) fn mul(what: &'static str, a: Decimal, b: Decimal) -> Result<Decimal, BillingError> {
    a.checked_mul(b).ok_or(BillingError::Overflow { what })
}

/// ISO 4217 codes a GPU renter is likely to be billed in. A short list we can vouch for beats
/// accepting any three letters: a typo such as `CYN` must be caught, not stored.
const KNOWN_CURRENCIES: &[&str] = &[
    "AED", "AUD", "BRL", "CAD", "CHF", "CNY", "CZK", "DKK", "EUR", "GBP", "HKD", "IDR", "ILS",
    "INR", "JPY", "KRW", "MOP", "MXN", "MYR", "NOK", "NZD", "PHP", "PLN", "RUB", "SAR", "SEK",
    "SGD", "THB", "TRY", "TWD", "UAH", "USD", "VND", "ZAR",
];

/// A validated ISO 4217 currency code (upper case).
#[derive(Debug, Clone, PartialEq, Eq, Hash, TS)]
#[ts(type = "string")]
pub struct Currency(String);

impl Serialize for Currency {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Currency {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let code = String::deserialize(deserializer)?;
        Self::parse(&code).map_err(serde::de::Error::custom)
    }
}

impl Currency {
    /// Accepts a known code in any letter case (`cny` → `CNY`).
    pub fn parse(code: &str) -> Result<Self, BillingError> {
        let upper = code.trim().to_ascii_uppercase();
        if KNOWN_CURRENCIES.contains(&upper.as_str()) {
            Ok(Self(upper))
        } else {
            Err(BillingError::UnknownCurrency {
                code: code.to_owned(),
            })
        }
    }

    pub fn code(&self) -> &str {
        &self.0
    }

    /// Every code [`Currency::parse`] accepts, for pickers.
    pub fn known() -> &'static [&'static str] {
        KNOWN_CURRENCIES
    }
}

impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An amount as shown to people and scripts: two decimal places, half away from zero. Full
/// precision stays inside the engine; only what is displayed is rounded.
pub fn display_amount(amount: Decimal) -> Decimal {
    let mut shown = amount.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero);
    shown.rescale(2);
    shown
}

/// A rate as shown: never rounded, at least two decimal places (`2.50`, `0.005`).
pub fn display_rate(rate: Decimal) -> Decimal {
    let mut shown = rate.normalize();
    if shown.scale() < 2 {
        shown.rescale(2);
    }
    shown
}

/// A quantity (hours, GB) as shown: trailing zeros dropped, never rounded.
pub fn display_quantity(quantity: Decimal) -> Decimal {
    quantity.normalize()
}
