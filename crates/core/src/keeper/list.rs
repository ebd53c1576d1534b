//! `keeper list` and `keeper policy`: every instance the keeper looks after, with its hunt, its
//! clean-up deadline, its policy and what the keeper will do next; and setting a policy.

use std::collections::HashMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::billing::{ledger, InstanceState, InstanceSummary};
use crate::store::keeper::{self as repo, PolicyRow};
use crate::store::Store;

use super::hunt::HuntReport;
use super::policy::{next_step, Facts, NextStep, Policy};
use super::KeeperError;

/// One instance as `keeper list` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Kept {
    pub instance: String,
    pub state: Option<InstanceState>,
    /// The hunt, when one ran or runs (`state`: hunting, on, given_up, stopped).
    pub hunt: Option<KeptHunt>,
    /// When the provider wipes it (stopped, on a provider with that rule).
    pub wipe_at: Option<DateTime<Utc>>,
    pub policy: Policy,
    /// Whether `policy` is the instance's own or the default.
    pub own_policy: bool,
    pub next: NextStep,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct KeptHunt {
    pub state: String,
    pub deadline: DateTime<Utc>,
    pub next_try_at: DateTime<Utc>,
    #[serde(flatten)]
    pub report: HuntReport,
}

/// What `keeper policy` changes; `Keep` and `None` leave a value as it was.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PolicyChange {
    pub stop_after_idle: Stage,
    pub release_after_stopped: Stage,
    pub auto_release: Option<bool>,
    pub off: Option<bool>,
    pub bid_cap: Option<rust_decimal::Decimal>,
}

/// One stage of the policy: left as it is, set to act after a time, or cleared.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Stage {
    #[default]
    Keep,
    After(Duration),
    Never,
}

impl Stage {
    /// A duration such as 30m or 3d, or `off` / `never` to clear the stage.
    pub fn parse(text: &str) -> Result<Self, KeeperError> {
        match text.trim() {
            "off" | "never" => Ok(Self::Never),
            other => Ok(Self::After(super::rules::parse_duration(other)?)),
        }
    }

    /// What an optional duration means in a form that shows every stage: `None` is cleared.
    pub fn from_form(after: Option<Duration>) -> Self {
        after.map_or(Self::Never, Self::After)
    }

    fn apply(self, seconds: &mut Option<i64>) {
        match self {
            Self::Keep => {}
            Self::After(d) => *seconds = Some(secs(d)),
            Self::Never => *seconds = None,
        }
    }
}

fn policy_of(row: &PolicyRow) -> Policy {
    Policy {
        stop_after_idle_s: row.stop_after_idle_s,
        release_after_stopped_s: row.release_after_stopped_s,
        auto_release: row.auto_release,
        off: row.off,
        bid_cap: row
            .bid_cap
            .as_deref()
            .and_then(|cap| cap.parse::<rust_decimal::Decimal>().ok()),
    }
}

fn secs(d: Duration) -> i64 {
    i64::try_from(d.as_secs()).unwrap_or(i64::MAX)
}

/// The default policy (none set: no stage).
pub async fn default_policy(store: &Store) -> Result<Policy, KeeperError> {
    let mut conn = store.pool().acquire().await?;
    Ok(repo::default_policy(&mut conn)
        .await?
        .and_then(|json| serde_json::from_str(&json).ok())
        .unwrap_or_default())
}

/// Apply `change` to `name`'s policy (`None`: the default policy); `off` turns it off, any
/// other change turns it back on.
pub async fn set_policy(
    store: &Store,
    name: Option<&str>,
    change: PolicyChange,
    now: DateTime<Utc>,
) -> Result<Policy, KeeperError> {
    let Some(name) = name else {
        let mut policy = default_policy(store).await?;
        apply(&mut policy, change);
        let json = serde_json::to_string(&policy)
            .map_err(|err| KeeperError::InvalidInput(err.to_string()))?;
        let mut conn = store.pool().acquire().await?;
        repo::put_default_policy(&mut conn, &json, now).await?;
        return Ok(policy);
    };
    let id = ledger::show(store, name, now).await?.summary.id;
    let mut policy = policy_for(store, id).await?;
    apply(&mut policy, change);
    let mut conn = store.pool().acquire().await?;
    repo::put_policy(
        &mut conn,
        &PolicyRow {
            instance_id: id,
            stop_after_idle_s: policy.stop_after_idle_s,
            release_after_stopped_s: policy.release_after_stopped_s,
            auto_release: policy.auto_release,
            off: policy.off,
            bid_cap: policy.bid_cap.map(|cap| cap.normalize().to_string()),
        },
    )
    .await?;
    Ok(policy)
}

fn apply(policy: &mut Policy, change: PolicyChange) {
    change.stop_after_idle.apply(&mut policy.stop_after_idle_s);
    change
        .release_after_stopped
        .apply(&mut policy.release_after_stopped_s);
    if let Some(auto_release) = change.auto_release {
        policy.auto_release = auto_release;
    }
    // Releasing by itself is part of the second stage: it goes when that stage goes.
    if policy.release_after_stopped_s.is_none() {
        policy.auto_release = false;
    }
    if let Some(cap) = change.bid_cap {
        policy.bid_cap = Some(cap);
    }
    if let Some(off) = change.off {
        policy.off = off;
    }
}

/// The policy that applies to instance `id`: its own, else the default.
pub async fn policy_for(store: &Store, id: i64) -> Result<Policy, KeeperError> {
    match own_policies(store).await?.remove(&id) {
        Some(own) => Ok(own),
        None => default_policy(store).await,
    }
}

async fn own_policies(store: &Store) -> Result<HashMap<i64, Policy>, KeeperError> {
    let mut conn = store.pool().acquire().await?;
    Ok(repo::policies(&mut conn)
        .await?
        .iter()
        .map(|row| (row.instance_id, policy_of(row)))
        .collect())
}

/// Every instance not released, with what the keeper will do next at `now`.
pub async fn list(store: &Store, now: DateTime<Utc>) -> Result<Vec<Kept>, KeeperError> {
    let instances = ledger::list(store, now).await?;
    let own = own_policies(store).await?;
    let default = default_policy(store).await?;
    let hunts: HashMap<i64, _> = {
        let mut conn = store.pool().acquire().await?;
        repo::hunts(&mut conn)
            .await?
            .into_iter()
            .map(|(name, row)| (row.instance_id, (name, row)))
            .collect()
    };
    let mut kept = Vec::new();
    for summary in instances
        .iter()
        .filter(|s| s.state != Some(InstanceState::Released))
    {
        let hunt = hunts.get(&summary.id).map(|(name, row)| KeptHunt {
            state: row.state.clone(),
            deadline: row.deadline,
            next_try_at: row.next_try_at,
            report: HuntReport::from_row(name, row),
        });
        let (policy, own_policy) = match own.get(&summary.id) {
            Some(p) => (*p, true),
            None => (default, false),
        };
        let facts = facts_of(store, summary, hunt.as_ref(), now).await;
        kept.push(Kept {
            instance: summary.name.clone(),
            state: summary.state,
            wipe_at: facts.wipe_at,
            next: next_step(&policy, &facts, now),
            hunt,
            policy,
            own_policy,
        });
    }
    Ok(kept)
}

/// What the decision needs; a fact that cannot be read counts as unknown (no idle stretch, no
/// covering backup), so a bad record never takes the list down and never lets a release by.
async fn facts_of(
    store: &Store,
    summary: &InstanceSummary,
    hunt: Option<&KeptHunt>,
    now: DateTime<Utc>,
) -> Facts {
    let stopped = summary.state == Some(InstanceState::Stopped);
    let idle_since = if stopped {
        None
    } else {
        crate::monitor::history::idle_streak(store, &summary.name, now)
            .await
            .ok()
            .flatten()
            .map(|streak| streak.since)
    };
    let backup_covers = stopped
        && crate::release::latest_check_run_here(store, &summary.name)
            .await
            .ok()
            .flatten()
            .is_some_and(|check| !check.blocked);
    Facts {
        state: summary.state,
        state_since: summary.state_since,
        idle_since,
        wipe_at: summary.wipe_at.filter(|_| stopped),
        backup_covers,
        hunting: hunt.is_some_and(|h| h.state == "hunting"),
    }
}
