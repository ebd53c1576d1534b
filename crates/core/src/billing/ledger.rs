//! The ledger API the app and the CLI call: record rentals and their events, ask what they cost.
//!
//! Every function takes the store and an explicit time (`at` for what is recorded, `now` for what
//! is asked), so callers inject the clock and tests never depend on the wall clock. Writes check
//! the whole ledger plus the new event before inserting, inside one transaction: a refused event
//! writes nothing.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use sqlx::SqliteConnection;

use super::engine::{self, Costing};
use super::events::{EventKind, LedgerEvent, Replay};
use super::money::Currency;
use super::new_instance::validate_budget;
pub use super::new_instance::{NewInstance, PowerAction};
use super::presets::ProviderKey;
use super::report::{CostReport, EventView, Forecast, InstanceDetail, InstanceSummary};
use super::rows;
use super::rules::{at_most, limits, non_negative, BillingRules};
use super::BillingError;
use crate::store::ledger::{self as repo, InstanceRow, NewInstanceRow};
use crate::store::Store;

/// One instance as loaded from the store.
struct Loaded {
    row: InstanceRow,
    currency: Currency,
    events: Vec<LedgerEvent>,
    budget: Option<Decimal>,
    planned_hours: Option<Decimal>,
}

async fn load(conn: &mut SqliteConnection, name: &str) -> Result<Loaded, BillingError> {
    let row = repo::find_instance(&mut *conn, name)
        .await?
        .ok_or_else(|| BillingError::UnknownInstance {
            name: name.to_owned(),
        })?;
    load_row(conn, row).await
}

async fn load_row(conn: &mut SqliteConnection, row: InstanceRow) -> Result<Loaded, BillingError> {
    let rules = repo::rules_for(&mut *conn, row.id).await?;
    let event_rows = repo::events_for(&mut *conn, row.id).await?;
    // A merged team log may hold events the state machine refuses (two releases); the bill is
    // computed from the rest, the same way on every laptop, and `team` reports the refused ones.
    let events = super::events::settle(rows::events_from_rows(&rules, &event_rows)?)?.accepted;
    let budget = repo::budget_for(&mut *conn, row.id)
        .await?
        .map(|b| rows::decimal("budget", &b))
        .transpose()?;
    let planned_hours = row
        .planned_hours
        .as_deref()
        .map(|h| rows::decimal("planned_hours", h))
        .transpose()?;
    let currency = Currency::parse(&row.currency).map_err(|_| {
        BillingError::Store(crate::store::StoreError::Corrupt {
            what: "currency",
            value: row.currency.clone(),
        })
    })?;
    Ok(Loaded {
        row,
        currency,
        events,
        budget,
        planned_hours,
    })
}

impl Loaded {
    fn costing(&self, now: DateTime<Utc>) -> Result<Costing, BillingError> {
        engine::compute(&self.events, now)
    }

    fn summary(
        &self,
        costing: &Costing,
        now: DateTime<Utc>,
    ) -> Result<InstanceSummary, BillingError> {
        let report = CostReport::new(&self.row.name, &self.currency, costing, self.budget, now)?;
        let first_rules = self.events.first().and_then(|e| match &e.kind {
            EventKind::Created(rules) => Some(rules.as_ref()),
            _ => None,
        });
        let rules = costing.rules.as_ref().or(first_rules);
        Ok(InstanceSummary {
            id: self.row.id,
            name: self.row.name.clone(),
            provider: self.row.provider.clone(),
            region: self.row.region.clone(),
            gpu_model: self.row.gpu_model.clone(),
            gpu_count: rules.map_or(0, |r| r.gpu_count),
            currency: self.currency.clone(),
            price_per_gpu_hour: super::money::display_rate(
                rules.map_or(Decimal::ZERO, |r| r.price_per_gpu_hour),
            ),
            state: costing.state,
            state_since: costing.state_since,
            created_at: self.row.created_at,
            billing_started_at: costing.billing_started_at,
            released_at: costing.released_at,
            running_seconds: costing.running_seconds,
            total: report.total,
            burn_rate_per_hour: report.burn_rate_per_hour,
            planned_hours: self.planned_hours.map(|h| h.normalize()),
            budget: report.budget,
            wipe_at: costing.wipe_at,
            notes: self.row.notes.clone(),
            as_of: now,
        })
    }
}

/// Record a new rental, created at `at` (the `created` event). Returns its summary at `at`.
#[tracing::instrument(skip_all, err, fields(name = %new.name))]
pub async fn add_instance(
    store: &Store,
    new: &NewInstance,
    at: DateTime<Utc>,
) -> Result<InstanceSummary, BillingError> {
    let mut tx = store.write().await?;
    let summary = add_instance_in(&mut tx, new, at).await?;
    tx.commit().await.map_err(crate::store::StoreError::from)?;
    Ok(summary)
}

/// [`add_instance`] inside the caller's transaction (a provider sync records many changes at
/// once, all or nothing); the caller commits.
pub(crate) async fn add_instance_in(
    tx: &mut SqliteConnection,
    new: &NewInstance,
    at: DateTime<Utc>,
) -> Result<InstanceSummary, BillingError> {
    let currency = new.validate()?;
    let provider = ProviderKey::parse(&new.provider)?;
    if repo::find_instance(&mut *tx, &new.name).await?.is_some() {
        return Err(BillingError::DuplicateName {
            name: new.name.clone(),
        });
    }
    let planned_hours = new.planned_hours.map(|h| h.normalize().to_string());
    let id = repo::insert_instance(
        &mut *tx,
        &NewInstanceRow {
            name: &new.name,
            provider: provider.as_str(),
            region: new.region.as_deref().filter(|r| !r.trim().is_empty()),
            gpu_model: new.gpu_model.trim(),
            currency: currency.code(),
            notes: new.notes.as_deref().filter(|n| !n.trim().is_empty()),
            planned_hours,
            created_at: at,
        },
    )
    .await?;
    let rules_id = repo::insert_rules(&mut *tx, id, &rows::rules_to_row(&new.rules, at)).await?;
    let created = LedgerEvent::new(at, EventKind::Created(Box::new(new.rules.clone())));
    repo::insert_event(&mut *tx, id, &rows::event_to_row(&created, Some(rules_id))).await?;
    if let Some(budget) = new.budget {
        repo::set_budget(&mut *tx, id, Some(&budget.normalize().to_string())).await?;
    }
    let loaded = load(&mut *tx, &new.name).await?;
    // Cost it before committing: a rental whose bill cannot be computed is not recorded.
    loaded.summary(&loaded.costing(at)?, at)
}

/// Check `event` against the stored ledger and append it; nothing is written when it is refused.
async fn append(
    store: &Store,
    name: &str,
    event: LedgerEvent,
) -> Result<InstanceSummary, BillingError> {
    let mut tx = store.write().await?;
    let summary = append_in(&mut tx, name, event).await?;
    tx.commit().await.map_err(crate::store::StoreError::from)?;
    Ok(summary)
}

/// [`append`] inside the caller's transaction; the caller commits.
pub(crate) async fn append_in(
    tx: &mut SqliteConnection,
    name: &str,
    event: LedgerEvent,
) -> Result<InstanceSummary, BillingError> {
    let mut loaded = load(&mut *tx, name).await?;
    {
        let mut replay = Replay::of(&loaded.events)?;
        replay.apply(&event)?;
    }
    let rules_id = match &event.kind {
        EventKind::RuleChanged(rules) => Some(
            repo::insert_rules(
                &mut *tx,
                loaded.row.id,
                &rows::rules_to_row(rules, event.at),
            )
            .await?,
        ),
        _ => None,
    };
    repo::insert_event(
        &mut *tx,
        loaded.row.id,
        &rows::event_to_row(&event, rules_id),
    )
    .await?;
    let at = event.at;
    loaded.events.push(event);
    // Cost it before committing: an event whose bill cannot be computed is not recorded.
    loaded.summary(&loaded.costing(at)?, at)
}

/// Record a start, stop, no-GPU power-on or release at `at`. Returns the summary at `at`.
#[tracing::instrument(skip(store), err)]
pub async fn record(
    store: &Store,
    name: &str,
    action: PowerAction,
    at: DateTime<Utc>,
) -> Result<InstanceSummary, BillingError> {
    append(store, name, LedgerEvent::new(at, action.event())).await
}

/// New billing rules from `at` on (price change, reconfiguration, a fee added).
#[tracing::instrument(skip(store, rules), err)]
pub async fn change_rules(
    store: &Store,
    name: &str,
    rules: &BillingRules,
    at: DateTime<Utc>,
) -> Result<InstanceSummary, BillingError> {
    rules.validate()?;
    append(
        store,
        name,
        LedgerEvent::new(at, EventKind::RuleChanged(Box::new(rules.clone()))),
    )
    .await
}

/// Traffic read off the provider's console, charged at the rules' price per GB.
#[tracing::instrument(skip(store), err)]
pub async fn record_traffic(
    store: &Store,
    name: &str,
    gb: Decimal,
    at: DateTime<Utc>,
) -> Result<InstanceSummary, BillingError> {
    non_negative("traffic_gb", gb)?;
    at_most("traffic_gb", gb, limits::MAX_TRAFFIC_GB)?;
    append(
        store,
        name,
        LedgerEvent::new(at, EventKind::TrafficRecorded(gb)),
    )
    .await
}

/// Set (or with `None` remove) the instance's budget. Returns the summary at `now`.
#[tracing::instrument(skip(store), err)]
pub async fn set_budget(
    store: &Store,
    name: &str,
    budget: Option<Decimal>,
    now: DateTime<Utc>,
) -> Result<InstanceSummary, BillingError> {
    if let Some(budget) = budget {
        validate_budget(budget)?;
    }
    let mut tx = store.write().await?;
    let mut loaded = load(&mut tx, name).await?;
    let text = budget.map(|b| b.normalize().to_string());
    repo::set_budget(&mut tx, loaded.row.id, text.as_deref()).await?;
    loaded.budget = budget;
    let summary = loaded.summary(&loaded.costing(now)?, now)?;
    tx.commit().await.map_err(crate::store::StoreError::from)?;
    Ok(summary)
}

/// Every instance that can be billed, oldest first, as of `now`. One whose ledger this version
/// cannot bill (see [`Listing::broken`]) is left out, so it never takes the others down.
#[tracing::instrument(skip(store), err)]
pub async fn list(store: &Store, now: DateTime<Utc>) -> Result<Vec<InstanceSummary>, BillingError> {
    Ok(list_all(store, now).await?.instances)
}

/// An instance whose stored ledger this version cannot bill (a value it refuses, an amount out
/// of range), with the error and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[ts(export)]
pub struct BrokenInstance {
    pub name: String,
    pub code: String,
    pub message: String,
}

/// Every instance as of `now`: those billed, and those that cannot be, each with its reason.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    pub instances: Vec<InstanceSummary>,
    pub broken: Vec<BrokenInstance>,
}

/// [`list`], with the instances it leaves out.
pub async fn list_all(store: &Store, now: DateTime<Utc>) -> Result<Listing, BillingError> {
    let mut conn = store
        .pool()
        .acquire()
        .await
        .map_err(crate::store::StoreError::from)?;
    let mut listing = Listing::default();
    for row in repo::list_instances(&mut conn).await? {
        let name = row.name.clone();
        let summary = match load_row(&mut conn, row).await {
            Ok(loaded) => loaded
                .costing(now)
                .and_then(|costing| loaded.summary(&costing, now)),
            Err(err) => Err(err),
        };
        match summary {
            Ok(summary) => listing.instances.push(summary),
            Err(err) if !is_instance_fault(&err) => return Err(err),
            Err(err) => {
                tracing::warn!(instance = %name, %err, "instance left out: its ledger cannot be billed");
                listing.broken.push(broken(&name, &err));
            }
        }
    }
    Ok(listing)
}

/// Whether `err` comes from one instance's stored values (that instance is left out) rather than
/// from the database itself (a lock, a closed pool: every instance fails alike).
pub(crate) fn is_instance_fault(err: &BillingError) -> bool {
    use crate::store::StoreError;
    match err {
        BillingError::Store(StoreError::Corrupt { .. }) => true,
        BillingError::Store(StoreError::Query(
            sqlx::Error::ColumnDecode { .. } | sqlx::Error::Decode(_),
        )) => true,
        BillingError::Store(_) => false,
        _ => true,
    }
}

/// What the user is told about an instance this version cannot bill.
pub(crate) fn broken(name: &str, err: &BillingError) -> BrokenInstance {
    use crate::Coded;
    BrokenInstance {
        name: name.to_owned(),
        code: err.code().to_owned(),
        message: format!(
            "{name:?} cannot be billed: {err}. The other instances are not affected. If a \
             teammate's event brought this value, withdraw that event on the Team page (or ask \
             them to); otherwise record the rental again under a new name."
        ),
    }
}

async fn load_named(store: &Store, name: &str) -> Result<Loaded, BillingError> {
    let mut conn = store
        .pool()
        .acquire()
        .await
        .map_err(crate::store::StoreError::from)?;
    load(&mut conn, name).await
}

/// The bill of one instance as of `now`.
#[tracing::instrument(skip(store), err)]
pub async fn cost(
    store: &Store,
    name: &str,
    now: DateTime<Utc>,
) -> Result<CostReport, BillingError> {
    let loaded = load_named(store, name).await?;
    let costing = loaded.costing(now)?;
    CostReport::new(
        &loaded.row.name,
        &loaded.currency,
        &costing,
        loaded.budget,
        now,
    )
}

/// Summary, rules, timeline and bill of one instance as of `now`.
#[tracing::instrument(skip(store), err)]
pub async fn show(
    store: &Store,
    name: &str,
    now: DateTime<Utc>,
) -> Result<InstanceDetail, BillingError> {
    let loaded = load_named(store, name).await?;
    let costing = loaded.costing(now)?;
    let report = CostReport::new(
        &loaded.row.name,
        &loaded.currency,
        &costing,
        loaded.budget,
        now,
    )?;
    let events = loaded
        .events
        .iter()
        .map(|e| EventView {
            kind: e.kind.name().to_owned(),
            at: e.at,
            rules: match &e.kind {
                EventKind::Created(r) | EventKind::RuleChanged(r) => Some(r.as_ref().clone()),
                _ => None,
            },
            traffic_gb: match &e.kind {
                EventKind::TrafficRecorded(gb) => Some(gb.normalize()),
                _ => None,
            },
        })
        .collect();
    let summary = loaded.summary(&costing, now)?;
    let rules = costing
        .rules
        .or_else(|| events_first_rules(&loaded.events))
        .ok_or_else(|| BillingError::NotCreated { kind: "show" })?;
    Ok(InstanceDetail {
        summary,
        rules,
        events,
        report,
    })
}

fn events_first_rules(events: &[LedgerEvent]) -> Option<BillingRules> {
    events.first().and_then(|e| match &e.kind {
        EventKind::Created(rules) => Some(rules.as_ref().clone()),
        _ => None,
    })
}

/// What the instance will have cost at `until` if it stays as it is now.
#[tracing::instrument(skip(store), err)]
pub async fn forecast(
    store: &Store,
    name: &str,
    now: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Result<Forecast, BillingError> {
    if until < now {
        return Err(BillingError::ForecastInPast { until, now });
    }
    let loaded = load_named(store, name).await?;
    let at_now = loaded.costing(now)?;
    let at_until = loaded.costing(until)?;
    let report_until = CostReport::new(
        &loaded.row.name,
        &loaded.currency,
        &at_until,
        loaded.budget,
        until,
    )?;
    let total_now = at_now.total()?;
    let total_at_until = at_until.total()?;
    let additional = total_at_until
        .checked_sub(total_now)
        .ok_or(BillingError::Overflow { what: "forecast" })?;
    Ok(Forecast {
        name: loaded.row.name,
        currency: loaded.currency,
        now,
        until,
        state: at_now.state,
        total_now: super::money::display_amount(total_now),
        total_at_until: super::money::display_amount(total_at_until),
        additional: super::money::display_amount(additional),
        budget_at_until: report_until.budget,
    })
}

/// One instance's whole ledger, for rules that look at how its cost and running time grew
/// (the reminders: when a budget threshold or the planned hours were crossed).
#[derive(Debug, Clone)]
pub struct InstanceHistory {
    pub id: i64,
    pub name: String,
    pub currency: Currency,
    pub events: Vec<LedgerEvent>,
    pub budget: Option<Decimal>,
    pub planned_hours: Option<Decimal>,
}

/// Every instance's ledger, oldest instance first.
#[tracing::instrument(skip(store), err)]
pub async fn histories(store: &Store) -> Result<Vec<InstanceHistory>, BillingError> {
    let mut conn = store
        .pool()
        .acquire()
        .await
        .map_err(crate::store::StoreError::from)?;
    let mut all = Vec::new();
    for row in repo::list_instances(&mut conn).await? {
        let name = row.name.clone();
        // One instance this version cannot bill is left out of the reminders, not all of them
        // (`list_all` shows it with its reason).
        let loaded = match load_row(&mut conn, row).await {
            Ok(loaded) => loaded,
            Err(err) if !is_instance_fault(&err) => return Err(err),
            Err(err) => {
                tracing::warn!(instance = %name, %err, "instance left out of the reminders");
                continue;
            }
        };
        all.push(InstanceHistory {
            id: loaded.row.id,
            name: loaded.row.name,
            currency: loaded.currency,
            events: loaded.events,
            budget: loaded.budget,
            planned_hours: loaded.planned_hours,
        });
    }
    Ok(all)
}

/// One instance's whole ledger, as [`histories`] reads each.
#[tracing::instrument(skip(store), err)]
pub async fn history_of(store: &Store, name: &str) -> Result<InstanceHistory, BillingError> {
    let loaded = load_named(store, name).await?;
    Ok(InstanceHistory {
        id: loaded.row.id,
        name: loaded.row.name,
        currency: loaded.currency,
        events: loaded.events,
        budget: loaded.budget,
        planned_hours: loaded.planned_hours,
    })
}
