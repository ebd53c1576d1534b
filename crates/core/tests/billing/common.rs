//! Builders shared by the ledger tests: a fixed origin, times in hours from it, rules.

use chrono::{DateTime, Duration, TimeZone, Utc};
use leasehold_core::billing::engine::{self, Costing};
use leasehold_core::billing::{BillingRules, EventKind, LedgerEvent};
use rust_decimal::Decimal;

pub fn origin() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 1, 8, 0, 0)
        .single()
        .expect("valid date")
}

/// `origin + hours`.
pub fn h(hours: i64) -> DateTime<Utc> {
    origin() + Duration::hours(hours)
}

/// `origin + seconds`.
pub fn s(seconds: i64) -> DateTime<Utc> {
    origin() + Duration::seconds(seconds)
}

pub fn d(text: &str) -> Decimal {
    text.parse().expect("decimal literal in a test")
}

pub fn rules(price: &str) -> BillingRules {
    BillingRules::simple(d(price), 1)
}

pub fn created(at: DateTime<Utc>, rules: &BillingRules) -> LedgerEvent {
    LedgerEvent::new(at, EventKind::Created(Box::new(rules.clone())))
}

pub fn ev(at: DateTime<Utc>, kind: EventKind) -> LedgerEvent {
    LedgerEvent::new(at, kind)
}

pub fn cost_at(events: &[LedgerEvent], now: DateTime<Utc>) -> Costing {
    engine::compute(events, now).expect("a valid ledger")
}

pub fn total_at(events: &[LedgerEvent], now: DateTime<Utc>) -> Decimal {
    cost_at(events, now).total().expect("the total fits")
}
