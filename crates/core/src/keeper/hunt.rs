//! The hunt: ask the provider to power a stopped instance on, again and again with a growing
//! wait, until it is on, the time limit passes, the spending limit would be passed, or the
//! provider refuses for a reason waiting will not fix. Every try goes through `stop::power`,
//! so the ledger records the power-on only once the provider confirms it. The hunt's state is
//! a row (`store::keeper`), read again before each try: stopping it is writing that row, and a
//! restarted app or CLI picks it up where it was.

use std::future::Future;
use std::pin::Pin;
use std::str::FromStr;
use std::time::Duration;

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::account::{Backoff, Endpoints, PowerVerb};
use crate::billing::{ledger, InstanceState, InstanceSummary};
use crate::clock::Clock;
use crate::stop::{self, StopWait};
use crate::store::keeper::{self as repo, HuntRow};
use crate::store::Store;

use super::rules::{self, Answer, GaveUp};
use super::KeeperError;

/// Waits between tries; injected so tests move a fixed clock instead of sleeping.
pub trait Sleeper: Send + Sync {
    fn sleep(&self, wait: Duration) -> Pin<Box<dyn Future<Output = ()> + Send + '_>>;
}

/// Real waiting.
#[derive(Debug, Clone, Copy, Default)]
pub struct TokioSleeper;

impl Sleeper for TokioSleeper {
    fn sleep(&self, wait: Duration) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(tokio::time::sleep(wait))
    }
}

/// A hunt's limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HuntLimits {
    /// How long to keep trying.
    pub for_at_most: Duration,
    pub every_min: Duration,
    pub every_max: Duration,
    /// See [`rules::passes_spend`]; in the instance's currency.
    pub max_spend: Option<Decimal>,
}

impl Default for HuntLimits {
    /// The community's tried defaults (AutodlPilot): 10 s growing to 120 s, for 120 minutes.
    fn default() -> Self {
        Self {
            for_at_most: Duration::from_secs(120 * 60),
            every_min: Duration::from_secs(10),
            every_max: Duration::from_secs(120),
            max_spend: None,
        }
    }
}

/// Where a hunt stands; the CLI's `--json` shape of `account power NAME on --until-gpu`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct HuntReport {
    pub instance: String,
    pub tries: u32,
    pub powered_on_at: Option<DateTime<Utc>>,
    pub gave_up: Option<GaveUp>,
    /// The provider's last answer (or why the hunt ended), cleaned and cut.
    pub last_answer: String,
}

impl HuntReport {
    pub fn from_row(instance: &str, row: &HuntRow) -> Self {
        Self {
            instance: instance.to_owned(),
            tries: u32::try_from(row.tries).unwrap_or(u32::MAX),
            powered_on_at: row.powered_on_at,
            gave_up: row.gave_up.as_deref().and_then(GaveUp::parse),
            last_answer: row.last_answer.clone(),
        }
    }
}

/// What a hunt's tries need besides the store.
pub struct HuntDeps<'a> {
    pub endpoints: &'a Endpoints,
    pub backoff: Backoff,
    pub wait: StopWait,
    pub clock: &'a dyn Clock,
    pub sleeper: &'a dyn Sleeper,
}

fn secs(d: Duration) -> i64 {
    i64::try_from(d.as_secs()).unwrap_or(i64::MAX)
}

fn chrono_of(d: Duration) -> chrono::Duration {
    chrono::Duration::seconds(secs(d))
}

/// Start a hunt for `name`, or pick up the one under way (its own limits stand). Only a
/// stopped instance is hunted for.
pub async fn start(
    store: &Store,
    name: &str,
    limits: HuntLimits,
    now: DateTime<Utc>,
) -> Result<HuntRow, KeeperError> {
    if limits.every_min.is_zero() || limits.every_max < limits.every_min {
        return Err(KeeperError::InvalidInput(
            "the interval between tries must be at least a second, and MAX at least MIN".into(),
        ));
    }
    if limits.max_spend.is_some_and(|m| m <= Decimal::ZERO) {
        return Err(KeeperError::InvalidInput(
            "--max-spend must be more than zero".into(),
        ));
    }
    let summary = ledger::show(store, name, now).await?.summary;
    let mut conn = store.pool().acquire().await?;
    if let Some(row) = repo::hunt(&mut conn, summary.id).await? {
        if row.state == "hunting" {
            return Ok(row);
        }
    }
    if summary.state != Some(InstanceState::Stopped) {
        return Err(KeeperError::NotStopped {
            name: name.to_owned(),
            state: summary
                .state
                .map_or("not yet created", InstanceState::as_str),
        });
    }
    let row = HuntRow {
        instance_id: summary.id,
        started_at: now,
        deadline: now + chrono_of(limits.for_at_most),
        every_min_s: secs(limits.every_min),
        every_max_s: secs(limits.every_max),
        max_spend: limits.max_spend.map(|m| m.normalize().to_string()),
        spent_at_start: summary.total.to_string(),
        tries: 0,
        next_try_at: now,
        last_answer: String::new(),
        state: "hunting".into(),
        gave_up: None,
        powered_on_at: None,
        told_at: None,
    };
    repo::put_hunt(&mut conn, &row).await?;
    Ok(row)
}

/// Stop `name`'s hunt; a loop running it ends before its next try.
pub async fn stop(store: &Store, name: &str, now: DateTime<Utc>) -> Result<(), KeeperError> {
    let summary = ledger::show(store, name, now).await?.summary;
    let mut conn = store.pool().acquire().await?;
    if repo::stop_hunt(&mut conn, summary.id).await? {
        Ok(())
    } else {
        Err(KeeperError::NoHunt {
            name: name.to_owned(),
        })
    }
}

/// What the instance bills an hour while running, GPUs and fees.
fn hourly_when_running(summary: &InstanceSummary, rules: &crate::billing::BillingRules) -> Decimal {
    summary.price_per_gpu_hour * Decimal::from(summary.gpu_count)
        + rules.data_disk_per_hour
        + rules.snapshot_per_hour
        + rules.public_ip_per_hour
}

/// Run `name`'s hunt (started with [`start`]) until it ends; the report says how.
pub async fn run(
    store: &Store,
    name: &str,
    deps: &HuntDeps<'_>,
) -> Result<HuntReport, KeeperError> {
    let instance_id = ledger::show(store, name, deps.clock.now())
        .await?
        .summary
        .id;
    loop {
        let mut conn = store.pool().acquire().await?;
        let mut row =
            repo::hunt(&mut conn, instance_id)
                .await?
                .ok_or_else(|| KeeperError::NoHunt {
                    name: name.to_owned(),
                })?;
        drop(conn);
        if row.state != "hunting" {
            return Ok(HuntReport::from_row(name, &row));
        }
        let now = deps.clock.now();
        if now >= row.deadline {
            return end(store, name, row, GaveUp::Time, None).await;
        }
        if now < row.next_try_at {
            // Never past the deadline: the hunt ends then, not at the next try after it.
            let wait = (row.next_try_at.min(row.deadline) - now)
                .to_std()
                .unwrap_or_default();
            deps.sleeper.sleep(wait).await;
            continue;
        }
        let detail = ledger::show(store, name, now).await?;
        let spent =
            detail.summary.total - Decimal::from_str(&row.spent_at_start).unwrap_or_default();
        let limit = row
            .max_spend
            .as_deref()
            .and_then(|m| Decimal::from_str(m).ok());
        let hourly = hourly_when_running(&detail.summary, &detail.rules);
        if rules::passes_spend(limit, spent, hourly) {
            let why = format!(
                "one hour on at {hourly} {}/h after {spent} spent would pass the limit of {}",
                detail.summary.currency,
                limit.unwrap_or_default()
            );
            return end(store, name, row, GaveUp::Spend, Some(why)).await;
        }
        row.tries += 1;
        let tried = stop::power(
            store,
            name,
            PowerVerb::On,
            deps.endpoints,
            deps.backoff,
            deps.wait,
            deps.clock,
        )
        .await;
        match tried {
            Ok(report) => {
                row.state = "on".into();
                row.powered_on_at = Some(report.recorded_at.unwrap_or_else(|| deps.clock.now()));
                row.last_answer = format!("powered on, confirmed by {}", report.provider.display());
                save(store, &row).await?;
                let mut conn = store.pool().acquire().await?;
                let at = row.powered_on_at.unwrap_or_else(|| deps.clock.now());
                crate::store::follow_ups::put(&mut conn, row.instance_id, "hunt", at).await?;
                return Ok(HuntReport::from_row(name, &row));
            }
            Err(err) => match rules::classify(&err) {
                Answer::Refused(why) => {
                    return end(store, name, row, GaveUp::Refused, Some(why)).await
                }
                Answer::NoStock(why) | Answer::Transient(why) => {
                    let tries = u32::try_from(row.tries).unwrap_or(u32::MAX);
                    let wait = rules::interval(
                        tries,
                        Duration::from_secs(row.every_min_s.unsigned_abs()),
                        Duration::from_secs(row.every_max_s.unsigned_abs()),
                    );
                    row.last_answer = why;
                    row.next_try_at = deps.clock.now() + chrono_of(wait);
                    tracing::info!(
                        instance = name,
                        tries = row.tries,
                        "no GPU yet; trying again"
                    );
                    save_if_hunting(store, &row).await?;
                }
            },
        }
    }
}

async fn save(store: &Store, row: &HuntRow) -> Result<(), KeeperError> {
    let mut conn = store.pool().acquire().await?;
    repo::put_hunt(&mut conn, row).await?;
    Ok(())
}

/// Keep a try's outcome unless the hunt was stopped meanwhile (the stop stands).
async fn save_if_hunting(store: &Store, row: &HuntRow) -> Result<(), KeeperError> {
    let mut tx = store.write().await?;
    let current = repo::hunt(&mut tx, row.instance_id).await?;
    if current.is_some_and(|c| c.state == "hunting") {
        repo::put_hunt(&mut tx, row).await?;
    }
    tx.commit().await?;
    Ok(())
}

async fn end(
    store: &Store,
    name: &str,
    mut row: HuntRow,
    why: GaveUp,
    answer: Option<String>,
) -> Result<HuntReport, KeeperError> {
    row.state = "given_up".into();
    row.gave_up = Some(why.as_str().to_owned());
    if let Some(answer) = answer {
        row.last_answer = answer;
    }
    save_if_hunting(store, &row).await?;
    Ok(HuntReport::from_row(name, &row))
}
