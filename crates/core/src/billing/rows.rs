//! Between store rows (decimals as text) and ledger values. A row this version cannot read is a
//! `store.corrupt` failure, never a panic.

use std::collections::HashMap;
use std::str::FromStr;

use rust_decimal::Decimal;

use super::events::{EventKind, LedgerEvent};
use super::rules::{BillingRules, BillingStart, Granularity, StoppedBilling};
use super::BillingError;
use crate::store::ledger::{EventRow, RulesRow};
use crate::store::StoreError;

fn corrupt(what: &'static str, value: &str) -> BillingError {
    BillingError::Store(StoreError::Corrupt {
        what,
        value: value.to_owned(),
    })
}

pub(crate) fn decimal(what: &'static str, text: &str) -> Result<Decimal, BillingError> {
    Decimal::from_str(text).map_err(|_| corrupt(what, text))
}

fn optional_decimal(
    what: &'static str,
    text: Option<&str>,
) -> Result<Option<Decimal>, BillingError> {
    text.map(|t| decimal(what, t)).transpose()
}

pub(crate) fn rules_to_row(
    rules: &BillingRules,
    effective_from: chrono::DateTime<chrono::Utc>,
) -> RulesRow {
    RulesRow {
        id: 0,
        instance_id: 0,
        effective_from,
        price_per_gpu_hour: rules.price_per_gpu_hour.to_string(),
        gpu_count: i64::from(rules.gpu_count),
        billing_starts: rules.billing_starts.as_str().to_owned(),
        stopped_billing: rules.stopped_billing.kind().to_owned(),
        stopped_rate: rules.stopped_billing.rate().map(|r| r.to_string()),
        no_gpu_rate: rules.no_gpu_rate.map(|r| r.to_string()),
        data_disk_per_hour: rules.data_disk_per_hour.to_string(),
        snapshot_per_hour: rules.snapshot_per_hour.to_string(),
        public_ip_per_hour: rules.public_ip_per_hour.to_string(),
        traffic_per_gb: rules.traffic_per_gb.to_string(),
        granularity: rules.granularity.as_str().to_owned(),
        wipe_after_stopped_days: rules.wipe_after_stopped_days.map(i64::from),
    }
}

pub(crate) fn rules_from_row(row: &RulesRow) -> Result<BillingRules, BillingError> {
    let stopped_rate = optional_decimal("stopped_rate", row.stopped_rate.as_deref())?;
    let stopped_billing = match (row.stopped_billing.as_str(), stopped_rate) {
        ("none", _) => StoppedBilling::None,
        ("storage", Some(rate)) => StoppedBilling::Storage { rate },
        ("rate", Some(rate)) => StoppedBilling::Rate { rate },
        (other, _) => return Err(corrupt("stopped_billing", other)),
    };
    Ok(BillingRules {
        price_per_gpu_hour: decimal("price_per_gpu_hour", &row.price_per_gpu_hour)?,
        gpu_count: u32::try_from(row.gpu_count)
            .map_err(|_| corrupt("gpu_count", &row.gpu_count.to_string()))?,
        billing_starts: BillingStart::from_str(&row.billing_starts)
            .map_err(|_| corrupt("billing_starts", &row.billing_starts))?,
        stopped_billing,
        no_gpu_rate: optional_decimal("no_gpu_rate", row.no_gpu_rate.as_deref())?,
        data_disk_per_hour: decimal("data_disk_per_hour", &row.data_disk_per_hour)?,
        snapshot_per_hour: decimal("snapshot_per_hour", &row.snapshot_per_hour)?,
        public_ip_per_hour: decimal("public_ip_per_hour", &row.public_ip_per_hour)?,
        traffic_per_gb: decimal("traffic_per_gb", &row.traffic_per_gb)?,
        granularity: Granularity::from_str(&row.granularity)
            .map_err(|_| corrupt("granularity", &row.granularity))?,
        wipe_after_stopped_days: row
            .wipe_after_stopped_days
            .map(|d| {
                u32::try_from(d).map_err(|_| corrupt("wipe_after_stopped_days", &d.to_string()))
            })
            .transpose()?,
    })
}

/// Rebuild the ledger from its rows, joining each `created`/`rule_changed` to its rules.
pub(crate) fn events_from_rows<'a>(
    rules: &[RulesRow],
    events: impl IntoIterator<Item = &'a EventRow>,
) -> Result<Vec<LedgerEvent>, BillingError> {
    let mut by_id = HashMap::with_capacity(rules.len());
    for row in rules {
        by_id.insert(row.id, rules_from_row(row)?);
    }
    let rules_of = |row: &EventRow| -> Result<Box<BillingRules>, BillingError> {
        row.rules_id
            .and_then(|id| by_id.get(&id))
            .map(|r| Box::new(r.clone()))
            .ok_or_else(|| corrupt("rules_id", &format!("{:?}", row.rules_id)))
    };
    events
        .into_iter()
        .map(|row| {
            let kind = match row.kind.as_str() {
                "created" => EventKind::Created(rules_of(row)?),
                "rule_changed" => EventKind::RuleChanged(rules_of(row)?),
                "started" => EventKind::Started,
                "stopped" => EventKind::Stopped,
                "no_gpu_started" => EventKind::NoGpuStarted,
                "released" => EventKind::Released,
                "traffic_recorded" => EventKind::TrafficRecorded(decimal(
                    "traffic_gb",
                    row.traffic_gb.as_deref().unwrap_or_default(),
                )?),
                other => return Err(corrupt("event kind", other)),
            };
            Ok(LedgerEvent::new(row.at, kind))
        })
        .collect()
}

/// The row for a new event; `rules_id` is filled in for `created`/`rule_changed` by the caller.
pub(crate) fn event_to_row(event: &LedgerEvent, rules_id: Option<i64>) -> EventRow {
    EventRow {
        id: 0,
        instance_id: 0,
        kind: event.kind.name().to_owned(),
        at: event.at,
        rules_id,
        traffic_gb: match &event.kind {
            EventKind::TrafficRecorded(gb) => Some(gb.to_string()),
            _ => None,
        },
    }
}
