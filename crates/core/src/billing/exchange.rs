//! A fixed, dated table of exchange rates, for second looks only: catching yuan typed where
//! dollars belong, or a 4090 at the price of the card. A bill is never converted: every amount
//! the ledger keeps stays in the currency the provider bills in.
//!
//! The rate is written here, with its date, so every check and every converted figure on screen
//! can name it ("at 7.10 yuan per dollar, December 2026") instead of pretending to be live.

use rust_decimal::Decimal;
use rust_decimal_macros::dec;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The month the table was written; shown beside every converted figure.
pub const RATES_AS_OF: &str = "2026-12";

/// Yuan per US dollar, rounded to two decimals: the order of magnitude a typo check needs, not
/// a price to pay.
const CNY_PER_USD: Decimal = dec!(7.10);

/// A rate from one currency to another and the month it is from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct DatedRate {
    pub from: String,
    pub to: String,
    /// One `from` is this many `to`.
    #[ts(type = "string")]
    pub rate: Decimal,
    pub as_of: String,
}

/// The table's rate from `from` to `to` (currency codes, any case), if it has one.
pub fn rate(from: &str, to: &str) -> Option<DatedRate> {
    let (from, to) = (
        from.trim().to_ascii_uppercase(),
        to.trim().to_ascii_uppercase(),
    );
    let rate = match (from.as_str(), to.as_str()) {
        (a, b) if a == b => Decimal::ONE,
        ("USD", "CNY") => CNY_PER_USD,
        ("CNY", "USD") => (Decimal::ONE / CNY_PER_USD).round_dp(6),
        _ => return None,
    };
    Some(DatedRate {
        from,
        to,
        rate,
        as_of: RATES_AS_OF.to_owned(),
    })
}

/// `amount` in `from` expressed in `to` at the table's rate.
pub fn convert(amount: Decimal, from: &str, to: &str) -> Option<Decimal> {
    rate(from, to).and_then(|r| amount.checked_mul(r.rate))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dollars_and_yuan_convert_both_ways_and_a_currency_to_itself_is_one() {
        assert_eq!(convert(dec!(1599), "USD", "CNY"), Some(dec!(11352.90)));
        assert_eq!(
            convert(dec!(7.10), "cny", "usd").map(|v| v.round_dp(2)),
            Some(dec!(1.00))
        );
        assert_eq!(convert(dec!(3), "EUR", "EUR"), Some(dec!(3)));
        assert_eq!(rate("USD", "CNY").unwrap().as_of, RATES_AS_OF);
    }

    #[test]
    fn a_currency_the_table_does_not_know_converts_to_nothing() {
        assert_eq!(convert(dec!(1), "EUR", "CNY"), None);
        assert_eq!(
            convert(Decimal::MAX, "USD", "CNY"),
            None,
            "overflow is no answer, not a panic"
        );
    }
}
