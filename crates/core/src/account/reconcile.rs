//! Reconcile: for each instance and UTC day, what the ledger says it cost beside what the
//! provider charged (RunPod's billing records, Vast.ai's charges; AutoDL only reports the
//! account's running total, so its rows are per account between syncs; Lambda keeps none), the
//! difference, and where a rule explains it, the rule to change.

use chrono::{DateTime, Duration, NaiveDate, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::providers::Charges;
use super::remote::Charge;
use super::{client, key_of, AccountError, AccountRef, Backoff, Endpoints, Provider};
use crate::billing::{ledger, BillingRules, EventView, StoppedBilling};
use crate::store::accounts as repo;
use crate::store::Store;

/// One day of one instance (or, for AutoDL, of the whole account).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ReconcileRow {
    pub instance: String,
    pub day: NaiveDate,
    #[ts(type = "string")]
    pub ledger: Decimal,
    /// What the provider charged; `null` when it keeps no such record.
    #[ts(type = "string | null")]
    pub provider: Option<Decimal>,
    /// `provider - ledger`; `null` without a provider figure.
    #[ts(type = "string | null")]
    pub difference: Option<Decimal>,
    pub currency: String,
    /// Why they differ, or that they match, in plain words (English; the UI shows its own text
    /// for `reason_code`).
    pub reason: String,
    /// `matches`, `no_charge`, `no_records`, `charged_while_stopped`, `provider_more`,
    /// `ledger_more`.
    pub reason_code: String,
    /// Rules that would make the ledger match, when one rule explains the difference.
    pub suggested_rules: Option<BillingRules>,
}

/// A day as a half-open UTC interval, cut at `now`.
fn day_bounds(day: NaiveDate, now: DateTime<Utc>) -> (DateTime<Utc>, DateTime<Utc>) {
    let start = day.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc();
    let end = start.checked_add_signed(Duration::days(1)).unwrap_or(start);
    (start, end.min(now))
}

/// Seconds the instance spent stopped within `[from, to)`.
pub fn stopped_seconds(events: &[EventView], from: DateTime<Utc>, to: DateTime<Utc>) -> i64 {
    let mut total = 0;
    let mut stopped_since: Option<DateTime<Utc>> = None;
    for event in events {
        match event.kind.as_str() {
            "stopped" => stopped_since = Some(event.at),
            "started" | "no_gpu_started" | "released" => {
                if let Some(since) = stopped_since.take() {
                    total += overlap(since, event.at, from, to);
                }
            }
            _ => {}
        }
    }
    if let Some(since) = stopped_since {
        total += overlap(since, to, from, to);
    }
    total
}

fn overlap(a: DateTime<Utc>, b: DateTime<Utc>, from: DateTime<Utc>, to: DateTime<Utc>) -> i64 {
    (b.min(to) - a.max(from)).num_seconds().max(0)
}

/// The stable code of a reason from [`explain`].
fn code_of(reason: &str) -> &'static str {
    if reason == "matches" {
        "matches"
    } else if reason.contains("has no charge") {
        "no_charge"
    } else if reason.contains("keeps no billing records") {
        "no_records"
    } else if reason.contains("while the instance was stopped") {
        "charged_while_stopped"
    } else if reason.contains("charged more") {
        "provider_more"
    } else {
        "ledger_more"
    }
}

/// Why the ledger and the provider differ, and which rule would close the gap. Pure.
pub fn explain(
    provider_name: &str,
    ledger: Decimal,
    charged: Option<Decimal>,
    rules: &BillingRules,
    stopped_seconds: i64,
) -> (String, Option<BillingRules>) {
    let Some(charged) = charged else {
        return (format!("{provider_name} has no charge for this day"), None);
    };
    let difference = charged - ledger;
    let tolerance = (charged.abs() / Decimal::ONE_HUNDRED).max(Decimal::new(1, 2));
    if difference.abs() <= tolerance {
        return ("matches".to_owned(), None);
    }
    if difference > Decimal::ZERO
        && stopped_seconds > 0
        && rules.stopped_billing == StoppedBilling::None
    {
        let hours = Decimal::from(stopped_seconds) / Decimal::from(3600);
        let rate = (difference / hours).round_dp(4).normalize();
        return (
            format!(
                "{provider_name} charged while the instance was stopped, and the rules say a stopped instance costs nothing: set the stopped rate to storage at {rate} per hour"
            ),
            Some(BillingRules {
                stopped_billing: StoppedBilling::Storage { rate },
                ..rules.clone()
            }),
        );
    }
    if difference > Decimal::ZERO {
        (
            format!("{provider_name} charged more than the ledger counts: check the price and the disk, IP and traffic fees"),
            None,
        )
    } else {
        (
            format!("the ledger counts more than {provider_name} charged: check when billing starts and the price per hour"),
            None,
        )
    }
}

/// The ledger's cost of `name` within `[from, to)`.
async fn ledger_between(
    store: &Store,
    name: &str,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Result<Decimal, AccountError> {
    let end = ledger::cost(store, name, to).await?.total;
    let start = match ledger::cost(store, name, from).await {
        Ok(report) => report.total,
        // Before the instance existed it cost nothing.
        Err(crate::billing::BillingError::BeforeCreation { .. }) => Decimal::ZERO,
        Err(err) => return Err(err.into()),
    };
    Ok(end - start)
}

/// The longest range a reconcile looks at, in days.
pub const MAX_DAYS: u32 = 62;

/// "The last `days` days" up to `to`, inclusive: `to` and the `days - 1` before it (1 to
/// [`MAX_DAYS`]). The app's reconcile card and the CLI's default range both read it here.
pub fn last_days(to: NaiveDate, days: u32) -> (NaiveDate, NaiveDate) {
    let back = i64::from(days.clamp(1, MAX_DAYS)) - 1;
    (to - Duration::days(back), to)
}

/// Reconcile `name` (or every linked instance) over `[from, to]` (inclusive days).
pub async fn reconcile(
    store: &Store,
    name: Option<&str>,
    from: NaiveDate,
    to: NaiveDate,
    endpoints: &Endpoints,
    backoff: Backoff,
    now: DateTime<Utc>,
) -> Result<Vec<ReconcileRow>, AccountError> {
    // Days outside the years a rental can have (a typed +262142-12-30) end here, before any
    // arithmetic on them.
    for day in [from, to] {
        if !(2000..=2200).contains(&chrono::Datelike::year(&day)) {
            return Err(AccountError::BadDate(day.to_string()));
        }
    }
    if to < from {
        return Err(AccountError::BadRange {
            from: from.to_string(),
            to: to.to_string(),
        });
    }
    let (accounts, links) = {
        let mut conn = store
            .pool()
            .acquire()
            .await
            .map_err(crate::store::StoreError::from)?;
        (
            repo::list_accounts(&mut conn).await?,
            repo::all_links(&mut conn).await?,
        )
    };
    if let Some(name) = name {
        if !links.iter().any(|l| l.name == name) {
            return Err(AccountError::NotLinked {
                name: name.to_owned(),
            });
        }
    }
    let mut rows = Vec::new();
    for account_row in &accounts {
        let Ok(provider) = Provider::parse(&account_row.provider) else {
            continue;
        };
        let mine: Vec<_> = links
            .iter()
            .filter(|l| l.account_id == account_row.id)
            .filter(|l| name.is_none_or(|n| n == l.name))
            .collect();
        if mine.is_empty() {
            continue;
        }
        let account = AccountRef {
            provider,
            label: account_row.label.clone(),
        };
        if provider.row().charges == Charges::AccountTotal {
            rows.extend(autodl_rows(store, &account, account_row.id, &mine, from, to, now).await?);
            continue;
        }
        let charges: Option<Vec<Charge>> = if provider.row().charges == Charges::None {
            None
        } else {
            let key = key_of(&account, account_row.key_env.as_deref())?;
            let api = client::api(provider, endpoints, key, backoff)?;
            let ids: Vec<String> = mine.iter().map(|l| l.remote_id.clone()).collect();
            client::charges(&api, &ids, from, to).await?
        };
        for link in mine {
            let detail = ledger::show(store, &link.name, now).await?;
            let created = detail.summary.created_at.date_naive();
            for day in from.iter_days().take_while(|d| *d <= to) {
                let (start, end) = day_bounds(day, now);
                if day < created || start >= now {
                    continue;
                }
                let ledger_cost = ledger_between(store, &link.name, start, end).await?;
                let charged = charges.as_ref().map(|all| {
                    all.iter()
                        .filter(|c| c.remote_id == link.remote_id && c.day == day)
                        .map(|c| c.amount)
                        .sum::<Decimal>()
                });
                let (reason, suggested_rules) = if charges.is_none() {
                    (
                        format!(
                            "{} keeps no billing records to compare with",
                            provider.display()
                        ),
                        None,
                    )
                } else {
                    explain(
                        provider.display(),
                        ledger_cost,
                        charged,
                        &detail.rules,
                        stopped_seconds(&detail.events, start, end),
                    )
                };
                rows.push(ReconcileRow {
                    instance: link.name.clone(),
                    day,
                    ledger: ledger_cost.round_dp(4).normalize(),
                    provider: charged.map(|c| c.round_dp(4).normalize()),
                    difference: charged.map(|c| (c - ledger_cost).round_dp(4).normalize()),
                    currency: detail.summary.currency.code().to_owned(),
                    reason_code: code_of(&reason).to_owned(),
                    reason,
                    suggested_rules,
                });
            }
        }
    }
    Ok(rows)
}

/// AutoDL: the change of the account's total spend between syncs, beside the ledger's cost of
/// all its linked instances over the same stretch, one row per day with two syncs or more.
async fn autodl_rows(
    store: &Store,
    account: &AccountRef,
    account_id: i64,
    links: &[&repo::LinkRow],
    from: NaiveDate,
    to: NaiveDate,
    now: DateTime<Utc>,
) -> Result<Vec<ReconcileRow>, AccountError> {
    let spend = {
        let mut conn = store
            .pool()
            .acquire()
            .await
            .map_err(crate::store::StoreError::from)?;
        repo::spend_of(&mut conn, account_id).await?
    };
    let mut rows = Vec::new();
    for day in from.iter_days().take_while(|d| *d <= to) {
        let (start, end) = day_bounds(day, now);
        let before = spend.iter().rfind(|s| s.at <= start);
        let inside: Vec<_> = spend
            .iter()
            .filter(|s| s.at > start && s.at < end)
            .collect();
        let (Some(first), Some(last)) = (before.or(inside.first().copied()), inside.last()) else {
            continue;
        };
        if first.at >= last.at {
            continue;
        }
        let (Ok(a), Ok(b)) = (
            first.total.parse::<Decimal>(),
            last.total.parse::<Decimal>(),
        ) else {
            continue;
        };
        let charged = b - a;
        let mut ledger_cost = Decimal::ZERO;
        for link in links {
            ledger_cost += ledger_between(store, &link.name, first.at, last.at).await?;
        }
        let rules = BillingRules::simple(Decimal::ONE, 1);
        let (reason, _) = explain("AutoDL", ledger_cost, Some(charged), &rules, 0);
        rows.push(ReconcileRow {
            instance: format!("AutoDL account {} (all Pro instances)", account.label),
            day,
            ledger: ledger_cost.round_dp(4).normalize(),
            provider: Some(charged.round_dp(4).normalize()),
            difference: Some((charged - ledger_cost).round_dp(4).normalize()),
            currency: "CNY".to_owned(),
            reason_code: code_of(&reason).to_owned(),
            reason: format!(
                "{reason} (between the syncs at {} and {})",
                first.at.format("%H:%M"),
                last.at.format("%H:%M")
            ),
            suggested_rules: None,
        });
    }
    Ok(rows)
}

/// Apply a suggested rule to `name` from `at` on.
pub async fn apply(
    store: &Store,
    name: &str,
    rules: &BillingRules,
    at: DateTime<Utc>,
) -> Result<(), AccountError> {
    ledger::change_rules(store, name, rules, at).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use rust_decimal_macros::dec;

    fn at(h: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 1, h, 0, 0).unwrap()
    }

    #[test]
    fn the_last_seven_days_are_seven() {
        let to = NaiveDate::from_ymd_opt(2026, 12, 5).unwrap();
        let (from, end) = last_days(to, 7);
        assert_eq!((from.to_string(), end), ("2026-11-29".to_owned(), to));
        assert_eq!(from.iter_days().take_while(|d| *d <= end).count(), 7);
        assert_eq!(last_days(to, 0).0, to, "at least the day itself");
        assert_eq!(last_days(to, 1000), last_days(to, MAX_DAYS));
    }

    fn event(kind: &str, h: u32) -> EventView {
        EventView {
            kind: kind.to_owned(),
            at: at(h),
            rules: None,
            traffic_gb: None,
        }
    }

    #[test]
    fn stopped_time_within_a_day() {
        let events = vec![
            event("created", 0),
            event("started", 1),
            event("stopped", 10),
            event("started", 14),
            event("stopped", 20),
        ];
        assert_eq!(stopped_seconds(&events, at(0), at(23)), (4 + 3) * 3600);
        assert_eq!(stopped_seconds(&events, at(12), at(13)), 3600);
    }

    #[test]
    fn a_charge_while_stopped_suggests_a_storage_rate() {
        let rules = BillingRules::simple(dec!(0.44), 1);
        let (reason, suggestion) =
            explain("RunPod", dec!(4.40), Some(dec!(4.60)), &rules, 10 * 3600);
        assert!(reason.contains("stopped"), "{reason}");
        assert_eq!(
            suggestion.unwrap().stopped_billing,
            StoppedBilling::Storage { rate: dec!(0.02) }
        );
        let (reason, suggestion) = explain("RunPod", dec!(4.40), Some(dec!(4.41)), &rules, 0);
        assert_eq!(reason, "matches");
        assert!(suggestion.is_none());
        let (reason, _) = explain("RunPod", dec!(5), Some(dec!(4)), &rules, 0);
        assert!(reason.contains("ledger counts more"), "{reason}");
    }
}
