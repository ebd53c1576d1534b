//! The line over the Rentals list: what every rental together costs an hour right now, what it
//! may cost when a stop or a release is in doubt, and what this calendar month has cost so far —
//! per currency, never added across currencies (a yuan and a dollar rental are two lines).
//!
//! "Costing now" sums each instance's status (the one [`super::decide`] made), so the line can
//! never disagree with the cards under it. "This month" is each rental's bill now less its bill
//! at the start of the month in the user's time zone: the ledger's engine recomputes both from
//! the events, so a rule change or a late-recorded stop moves the month's figure the same way it
//! moves the bill.

use std::collections::BTreeMap;

use chrono::{DateTime, Datelike, TimeZone, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{ListedInstance, StatusError};
use crate::billing::{ledger, Currency, InstanceSummary};
use crate::store::Store;

/// One currency's figures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct CurrencyTotals {
    pub currency: Currency,
    /// Summed `cost_per_hour` of every status in this currency.
    #[ts(type = "string")]
    pub costing_now_per_hour: Decimal,
    /// Summed `may_cost_per_hour`: above `costing_now_per_hour` when some stop or release is in
    /// doubt.
    #[ts(type = "string")]
    pub may_cost_per_hour: Decimal,
    /// Rentals in this currency that cost, or may cost, money now.
    pub billing: u32,
    /// What rentals in this currency have cost since `month_start`.
    #[ts(type = "string")]
    pub this_month: Decimal,
}

/// The Rentals page's totals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Totals {
    /// Midnight on the first of this month, in the user's time zone.
    pub month_start: DateTime<Utc>,
    /// By currency code; only currencies with a rental this month or one billing now.
    pub currencies: Vec<CurrencyTotals>,
}

/// Midnight at the start of `now`'s month in `zone`. A zone whose midnight does not exist that
/// day (a daylight-saving jump) takes the first moment that does.
pub fn month_start<Tz: TimeZone>(now: DateTime<Utc>, zone: &Tz) -> DateTime<Utc> {
    let local = now.with_timezone(zone).date_naive();
    let first = local.with_day(1).unwrap_or(local);
    (0..24)
        .find_map(|hour| {
            first
                .and_hms_opt(hour, 0, 0)
                .and_then(|naive| zone.from_local_datetime(&naive).earliest())
        })
        .map_or(now, |start| start.with_timezone(&Utc))
}

/// The totals from the listing now and the ledger's summaries at `month_start`. Pure.
pub fn totals(
    now: &[ListedInstance],
    at_month_start: &[InstanceSummary],
    month_start: DateTime<Utc>,
) -> Totals {
    let before: BTreeMap<i64, Decimal> = at_month_start.iter().map(|s| (s.id, s.total)).collect();
    let mut by_code: BTreeMap<String, CurrencyTotals> = BTreeMap::new();
    for listed in now {
        let status = &listed.status;
        let month =
            listed.summary.total - before.get(&listed.summary.id).copied().unwrap_or_default();
        let month = month.max(Decimal::ZERO);
        let billing = status.may_be_billing();
        if !billing && month.is_zero() {
            continue;
        }
        let entry = by_code
            .entry(status.currency.code().to_owned())
            .or_insert_with(|| CurrencyTotals {
                currency: status.currency.clone(),
                costing_now_per_hour: Decimal::ZERO,
                may_cost_per_hour: Decimal::ZERO,
                billing: 0,
                this_month: Decimal::ZERO,
            });
        entry.costing_now_per_hour += status.cost_per_hour;
        entry.may_cost_per_hour += status.may_cost_per_hour.max(status.cost_per_hour);
        entry.billing += u32::from(billing);
        entry.this_month += month;
    }
    Totals {
        month_start,
        currencies: by_code.into_values().collect(),
    }
}

/// [`totals`] for every rental in the store at `now`, the month taken in `zone`.
pub async fn load<Tz: TimeZone>(
    store: &Store,
    now: DateTime<Utc>,
    zone: &Tz,
) -> Result<Totals, StatusError> {
    let start = month_start(now, zone);
    let listing = super::listing(store, now).await?;
    let at_start = ledger::list(store, start).await?;
    Ok(totals(&listing.instances, &at_start, start))
}

#[cfg(test)]
mod tests {
    use chrono::FixedOffset;

    use super::*;

    use rust_decimal_macros::dec;

    use crate::billing::{BillingRules, NewInstance, PowerAction};

    async fn rental(store: &Store, name: &str, currency: &str, price: Decimal, at: DateTime<Utc>) {
        let new = NewInstance {
            name: name.into(),
            provider: "runpod".into(),
            region: None,
            gpu_model: "RTX 4090".into(),
            currency: currency.into(),
            notes: None,
            planned_hours: None,
            budget: None,
            rules: BillingRules::simple(price, 1),
        };
        ledger::add_instance(store, &new, at)
            .await
            .expect("recorded");
        ledger::record(store, name, PowerAction::Start, at)
            .await
            .expect("started");
    }

    // Three rentals at noon on Dec 1 (UTC): one on since the evening before, one started this
    // morning in dollars, one released in November. The month counts only December's hours, each
    // currency on its own line, and the November rental not at all.
    #[tokio::test]
    async fn this_month_counts_only_the_months_hours_per_currency() {
        let store = Store::open_in_memory().await.expect("store");
        let nov = |d, h| Utc.with_ymd_and_hms(2026, 11, d, h, 0, 0).unwrap();
        let now = Utc.with_ymd_and_hms(2026, 12, 1, 12, 0, 0).unwrap();
        rental(&store, "overnight", "CNY", dec!(2.00), nov(30, 20)).await;
        rental(
            &store,
            "morning",
            "USD",
            dec!(1.00),
            now - chrono::Duration::hours(2),
        )
        .await;
        rental(&store, "november", "CNY", dec!(3.00), nov(10, 8)).await;
        ledger::record(&store, "november", PowerAction::Release, nov(11, 8))
            .await
            .expect("released");

        let totals = load(&store, now, &Utc).await.expect("totals");
        assert_eq!(
            totals.month_start,
            Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap()
        );
        let line = |code: &str| {
            totals
                .currencies
                .iter()
                .find(|c| c.currency.code() == code)
                .unwrap_or_else(|| panic!("{code}: {totals:?}"))
                .clone()
        };
        assert_eq!(totals.currencies.len(), 2, "{totals:?}");
        let cny = line("CNY");
        assert_eq!(
            cny.this_month,
            dec!(24),
            "12 h × 2.00 since midnight, not the 4 h before"
        );
        assert_eq!(cny.costing_now_per_hour, dec!(2));
        assert_eq!(cny.billing, 1, "the released rental costs nothing now");
        let usd = line("USD");
        assert_eq!(usd.this_month, dec!(2));
        assert_eq!(usd.costing_now_per_hour, dec!(1));

        // In Beijing it is already 20:00 on Dec 1 and the month began at 16:00 UTC on Nov 30.
        let beijing = FixedOffset::east_opt(8 * 3600).unwrap();
        let local = load(&store, now, &beijing).await.expect("totals");
        let cny = local
            .currencies
            .iter()
            .find(|c| c.currency.code() == "CNY")
            .expect("CNY");
        assert_eq!(
            cny.this_month,
            dec!(32),
            "all 16 h of the overnight rental fall in December there"
        );
    }

    #[test]
    fn the_month_starts_at_local_midnight() {
        let beijing = FixedOffset::east_opt(8 * 3600).unwrap();
        // 20:00 UTC on Nov 30 is already Dec 1 in Beijing.
        let now = Utc.with_ymd_and_hms(2026, 11, 30, 20, 0, 0).unwrap();
        assert_eq!(
            month_start(now, &beijing),
            Utc.with_ymd_and_hms(2026, 11, 30, 16, 0, 0).unwrap()
        );
        assert_eq!(
            month_start(now, &Utc),
            Utc.with_ymd_and_hms(2026, 11, 1, 0, 0, 0).unwrap()
        );
    }
}
