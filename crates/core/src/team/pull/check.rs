//! The checks a pulled row passes before anything is written: the same as local input
//! (`NewInstance`'s, valid billing rules, member names as `team connect` takes them), times in the
//! one UTC form the ledger stores, and each event against the instance it claims. Pure: no
//! database, so every rule is tested on hand-made rows.

use std::collections::HashMap;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;

use crate::billing::rows;
use crate::store::ledger::RulesRow;
use crate::store::team::{PulledInstance, SharedRules};
use crate::team::time::canonical_time;

/// An event of a page (every field optional: a row from a newer or broken client must be
/// reported, not fail the whole page), as `pull::read` takes it from an `e` row.
#[derive(Debug, Clone, Default)]
pub(super) struct PageEvent {
    pub(super) seq: Option<i64>,
    pub(super) uid: Option<String>,
    pub(super) instance_uid: Option<String>,
    pub(super) kind: Option<String>,
    pub(super) at: Option<String>,
    pub(super) recorded_by: Option<String>,
    pub(super) origin_seq: Option<i64>,
    pub(super) traffic_gb: Option<String>,
    pub(super) rules: Option<serde_json::Value>,
}

/// An instance of a page.
#[derive(Debug, Clone, Default)]
pub(super) struct PageInstance {
    pub(super) uid: Option<String>,
    pub(super) name: Option<String>,
    pub(super) provider: Option<String>,
    pub(super) region: Option<String>,
    pub(super) gpu_model: Option<String>,
    pub(super) currency: Option<String>,
    pub(super) notes: Option<String>,
    pub(super) planned_hours: Option<String>,
    pub(super) created_at: Option<String>,
    pub(super) recorded_by: Option<String>,
}

/// A team budget as the server holds it.
#[derive(Debug, Clone, Default)]
pub(super) struct TeamBudgetRow {
    pub(super) currency: Option<String>,
    pub(super) amount: Option<String>,
    pub(super) set_by: Option<String>,
}

/// The team budgets this version can read (`(currency, amount, set_by)`).
pub(super) fn checked_budgets(rows: &[TeamBudgetRow]) -> Vec<(String, String, String)> {
    rows.iter()
        .filter_map(|row| {
            let currency = crate::billing::Currency::parse(row.currency.as_deref()?).ok()?;
            let amount = Decimal::from_str(row.amount.as_deref()?).ok()?;
            crate::billing::new_instance::validate_budget(amount).ok()?;
            Some((
                currency.code().to_owned(),
                amount.normalize().to_string(),
                row.set_by.clone()?,
            ))
        })
        .collect()
}

/// A pulled event checked and ready to write (as `store::team::PulledEvent`).
#[derive(Debug)]
pub(super) struct CheckedEvent {
    pub(super) uid: String,
    pub(super) instance_uid: String,
    pub(super) kind: String,
    pub(super) at: String,
    pub(super) recorded_by: String,
    pub(super) origin_seq: i64,
    pub(super) traffic_gb: Option<String>,
    pub(super) rules_uid: Option<String>,
}

/// A pulled rules version with the instance it belongs to.
#[derive(Debug)]
pub(super) struct CheckedRules {
    pub(super) instance_uid: String,
    pub(super) rules: SharedRules,
}

pub(super) const KINDS: [&str; 7] = [
    "created",
    "started",
    "stopped",
    "no_gpu_started",
    "released",
    "rule_changed",
    "traffic_recorded",
];

pub(super) fn required<'a>(value: &'a Option<String>, what: &str) -> Result<&'a str, String> {
    value.as_deref().ok_or_else(|| format!("{what} is missing"))
}

pub(super) fn check_uuid(id: &str) -> Result<(), String> {
    uuid::Uuid::parse_str(id)
        .map(|_| ())
        .map_err(|_| format!("{id:?} is not a UUID"))
}

/// A member's name as `team connect` would have taken it.
pub(super) fn checked_member<'a>(value: &'a Option<String>, what: &str) -> Result<&'a str, String> {
    let name = required(value, what)?;
    match crate::team::address::check_name("member", name) {
        Ok(checked) if checked == name => Ok(name),
        Ok(_) => Err(format!("{what} {name:?} starts or ends with spaces")),
        Err(err) => Err(format!("{what}: {err}")),
    }
}

/// A name this laptop can store (the ledger refuses a blank one).
pub(super) fn checked_name(name: &Option<String>) -> Result<&str, String> {
    let name = required(name, "instance name")?;
    if name.trim().is_empty() {
        return Err("instance name is blank".into());
    }
    Ok(name)
}

/// An instance as it will be written here (name not yet made free), once it passes the checks
/// a rental recorded here passes (`NewInstance::validate`'s).
pub(super) fn check_instance(row: &PageInstance) -> Result<PulledInstance, String> {
    let uid = required(&row.uid, "instance")?;
    check_uuid(uid)?;
    let created_at = canonical_time(required(&row.created_at, "creation time")?)?;
    let name = checked_name(&row.name)?;
    let planned_hours = row
        .planned_hours
        .as_deref()
        .map(|h| Decimal::from_str(h).map_err(|_| format!("planned hours {h:?} is not a number")))
        .transpose()?;
    let gpu_model = required(&row.gpu_model, "GPU model")?;
    let (currency, provider) = crate::billing::new_instance::validate_described(
        name,
        required(&row.provider, "provider")?,
        gpu_model,
        required(&row.currency, "currency")?,
        planned_hours,
    )
    .map_err(|err| err.to_string())?;
    let text = |value: &Option<String>| value.clone().filter(|v| !v.trim().is_empty());
    Ok(PulledInstance {
        uid: uid.to_owned(),
        local_name: name.to_owned(),
        provider: provider.as_str(),
        region: text(&row.region),
        gpu_model: gpu_model.trim().to_owned(),
        currency: currency.code().to_owned(),
        notes: text(&row.notes),
        planned_hours: planned_hours.map(|h| h.normalize().to_string()),
        created_at,
        recorded_by: checked_member(&row.recorded_by, "instance member")?.to_owned(),
    })
}

/// A page's instances by uid, checked: as they will be written here, or why they cannot be.
pub(super) type CheckedInstances = HashMap<String, Result<PulledInstance, String>>;

/// A row this version cannot read, and why.
pub(super) type Refused = (PageEvent, String);

/// The event of `row`, or the row and why this version cannot take it.
pub(super) fn check_event(
    row: PageEvent,
    instances: &CheckedInstances,
) -> Result<(CheckedEvent, Option<SharedRules>), Box<Refused>> {
    let (rules, at) = match check_fields(&row, instances) {
        Ok(checked) => checked,
        Err(reason) => return Err(Box::new((row, reason))),
    };
    match row {
        PageEvent {
            uid: Some(uid),
            instance_uid: Some(instance_uid),
            kind: Some(kind),
            at: Some(_),
            recorded_by: Some(recorded_by),
            origin_seq,
            traffic_gb,
            ..
        } => Ok((
            CheckedEvent {
                uid,
                instance_uid,
                kind,
                at,
                recorded_by,
                origin_seq: origin_seq.unwrap_or_default(),
                traffic_gb,
                rules_uid: rules.as_ref().map(|r| r.uid.clone()),
            },
            rules,
        )),
        row => Err(Box::new((row, "the event is incomplete".into()))),
    }
}

/// The event's rules version and its time in the local ledger's form, once every field of `row`
/// reads as a value recorded here would.
pub(super) fn check_fields(
    row: &PageEvent,
    instances: &CheckedInstances,
) -> Result<(Option<SharedRules>, String), String> {
    let uid = required(&row.uid, "uid")?;
    check_uuid(uid)?;
    let instance_uid = required(&row.instance_uid, "instance")?;
    let created_at = match instances.get(instance_uid) {
        Some(Ok(instance)) => &instance.created_at,
        Some(Err(reason)) => return Err(reason.clone()),
        None => return Err("instance is missing".into()),
    };
    let kind = required(&row.kind, "kind")?;
    if !KINDS.contains(&kind) {
        return Err(format!("unknown event kind {kind:?}"));
    }
    let at = canonical_time(required(&row.at, "time")?)?;
    checked_member(&row.recorded_by, "member")?;
    let traffic_gb = row.traffic_gb.as_deref();
    if (kind == "traffic_recorded") != traffic_gb.is_some() {
        return Err("traffic amount does not match the event kind".into());
    }
    if let Some(gb) = traffic_gb {
        let gb = Decimal::from_str(gb).map_err(|_| format!("{gb:?} is not an amount"))?;
        if gb.is_sign_negative() {
            return Err("negative traffic".into());
        }
        if gb > crate::billing::rules::limits::MAX_TRAFFIC_GB {
            return Err(format!(
                "{gb} GB of traffic is more than any rental records"
            ));
        }
    }
    let rules = match &row.rules {
        None | Some(serde_json::Value::Null) => None,
        Some(json) => {
            let mut rules: SharedRules = serde_json::from_value(json.clone())
                .map_err(|err| format!("unreadable rules: {err}"))?;
            check_rules(&mut rules)?;
            Some(rules)
        }
    };
    if matches!(kind, "created" | "rule_changed") != rules.is_some() {
        return Err("rules do not match the event kind".into());
    }
    // Checked against the instance it claims, as `ledger::add_instance` and `change_rules`
    // write them: a creation at the instance's creation time, rules in effect from their event.
    if kind == "created" && at != *created_at {
        return Err(format!(
            "the creation at {at} is not when its instance was created ({created_at})"
        ));
    }
    if rules.as_ref().is_some_and(|r| r.effective_from != at) {
        return Err("its rules take effect at another time than the event".into());
    }
    Ok((rules, at))
}

/// The rules must read back as valid billing rules here, or the bill could not be computed; their
/// time is put in the local ledger's form.
pub(super) fn check_rules(rules: &mut SharedRules) -> Result<(), String> {
    uuid::Uuid::parse_str(&rules.uid).map_err(|_| "rules id is not a UUID".to_owned())?;
    rules.effective_from =
        canonical_time(&rules.effective_from).map_err(|_| "rules time is not a time".to_owned())?;
    let effective_from = DateTime::parse_from_rfc3339(&rules.effective_from)
        .map_err(|_| "rules time is not a time".to_owned())?
        .with_timezone(&Utc);
    let row = RulesRow {
        id: 0,
        instance_id: 0,
        effective_from,
        price_per_gpu_hour: rules.price_per_gpu_hour.clone(),
        gpu_count: rules.gpu_count,
        billing_starts: rules.billing_starts.clone(),
        stopped_billing: rules.stopped_billing.clone(),
        stopped_rate: rules.stopped_rate.clone(),
        no_gpu_rate: rules.no_gpu_rate.clone(),
        data_disk_per_hour: rules.data_disk_per_hour.clone(),
        snapshot_per_hour: rules.snapshot_per_hour.clone(),
        public_ip_per_hour: rules.public_ip_per_hour.clone(),
        traffic_per_gb: rules.traffic_per_gb.clone(),
        granularity: rules.granularity.clone(),
        wipe_after_stopped_days: rules.wipe_after_stopped_days,
    };
    let parsed = rows::rules_from_row(&row).map_err(|err| err.to_string())?;
    parsed.validate().map_err(|err| err.to_string())
}

/// A page's rows checked.
pub(super) struct Checked {
    pub(super) instances: CheckedInstances,
    pub(super) events: Vec<CheckedEvent>,
    pub(super) rules: Vec<CheckedRules>,
    /// Rows this version cannot read, with the reason: listed as conflicts, never written.
    pub(super) unreadable: Vec<Refused>,
}

/// Check the instances a page brought, then every event against the instance it claims (an
/// event of an instance that fails its checks fails with it).
pub(super) fn check_rows(rows: Vec<PageEvent>, instances: &[PageInstance]) -> Checked {
    let instances: CheckedInstances = instances
        .iter()
        .filter_map(|row| Some((row.uid.clone()?, check_instance(row))))
        .collect();
    let mut events = Vec::with_capacity(rows.len());
    let mut rules = Vec::new();
    let mut unreadable = Vec::new();
    for row in rows {
        match check_event(row, &instances) {
            Ok((event, Some(event_rules))) => {
                rules.push(CheckedRules {
                    instance_uid: event.instance_uid.clone(),
                    rules: event_rules,
                });
                events.push(event);
            }
            Ok((event, None)) => events.push(event),
            Err(refused) => unreadable.push(*refused),
        }
    }
    Checked {
        instances,
        events,
        rules,
        unreadable,
    }
}

#[cfg(test)]
#[path = "check_tests.rs"]
mod tests;
