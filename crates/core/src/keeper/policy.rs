//! The two-stage policy for the forgotten: idle for N minutes → stop; stopped for N days → a
//! reminder to release, or, only where the user opted in and the last release check found
//! every at-risk path backed up, release through the checklist. [`next_step`] is pure: the
//! policy, what is known of the instance, and `now` in; what the keeper does next, and when,
//! out. The provider's own clean-up deadline (AutoDL: 15 days stopped) comes in as a fact: it
//! is offered to the user ("keep it alive" or "back it up and let it go"), never acted on.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::billing::InstanceState;

/// One instance's policy (or the default one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Policy {
    /// Stop after the GPUs were idle this many seconds; `None`: never.
    #[ts(type = "number | null")]
    pub stop_after_idle_s: Option<i64>,
    /// Release (or remind to) after stopped this many seconds; `None`: never.
    #[ts(type = "number | null")]
    pub release_after_stopped_s: Option<i64>,
    /// Release by itself, where the last backup covers every at-risk path.
    pub auto_release: bool,
    /// Turned off for this instance (even where a default exists).
    pub off: bool,
    /// The highest bid `account bid` may place (Vast.ai, per GPU-hour); `None`: no cap.
    #[ts(type = "string | null")]
    pub bid_cap: Option<rust_decimal::Decimal>,
}

/// What is known of the instance when deciding.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Facts {
    pub state: Option<InstanceState>,
    pub state_since: Option<DateTime<Utc>>,
    /// The first minute of the GPUs' current idle stretch while running.
    pub idle_since: Option<DateTime<Utc>>,
    /// When the provider wipes it, if it is stopped and the provider has such a rule.
    pub wipe_at: Option<DateTime<Utc>>,
    /// The last release check found nothing at risk left un-backed-up (and nothing else
    /// blocking).
    pub backup_covers: bool,
    /// A power-on hunt is under way.
    pub hunting: bool,
}

/// What the keeper does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum Action {
    Nothing,
    /// Keep asking the provider to power it on.
    Hunt,
    /// Power it off (the idle stage).
    Stop,
    /// Remind the user to release it (the stopped stage, not opted in or not covered).
    RemindRelease,
    /// Release it through the checklist (opted in, backup covers everything).
    Release,
    /// The provider's clean-up is near: offer "keep it alive" or "back it up and let it go".
    OfferKeepAlive,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct NextStep {
    pub action: Action,
    /// When it is due (`null`: nothing scheduled, or it waits on something else).
    pub at: Option<DateTime<Utc>>,
    /// Whether `at` has come.
    pub due: bool,
    /// English, for the CLI.
    pub why: String,
}

/// The "keep it alive" offer opens this long before the provider's clean-up: the first of the
/// `wipe_deadline` reminders.
pub const KEEP_ALIVE_LEAD_DAYS: i64 = 3;

fn step(action: Action, at: Option<DateTime<Utc>>, now: DateTime<Utc>, why: String) -> NextStep {
    NextStep {
        action,
        at,
        due: at.is_some_and(|at| at <= now),
        why,
    }
}

/// What the keeper does next for an instance with `policy` and `facts`, at `now`.
pub fn next_step(policy: &Policy, facts: &Facts, now: DateTime<Utc>) -> NextStep {
    let on = !policy.off;
    if facts.hunting {
        return step(
            Action::Hunt,
            Some(now),
            now,
            "powering it on when a GPU frees up".into(),
        );
    }
    match facts.state {
        Some(InstanceState::Running | InstanceState::NoGpu | InstanceState::Created) => {
            let Some(idle_s) = policy.stop_after_idle_s.filter(|_| on) else {
                return step(Action::Nothing, None, now, "no idle limit".into());
            };
            match facts.idle_since {
                Some(since) => step(
                    Action::Stop,
                    Some(since + Duration::seconds(idle_s)),
                    now,
                    format!(
                        "GPUs idle since {}; stops after {} min idle",
                        since.to_rfc3339(),
                        idle_s / 60
                    ),
                ),
                None => step(
                    Action::Nothing,
                    None,
                    now,
                    format!("GPUs busy; stops after {} min idle", idle_s / 60),
                ),
            }
        }
        Some(InstanceState::Stopped) => stopped_step(policy, facts, now),
        Some(InstanceState::Released) | None => step(Action::Nothing, None, now, "released".into()),
    }
}

fn stopped_step(policy: &Policy, facts: &Facts, now: DateTime<Utc>) -> NextStep {
    let release = policy
        .release_after_stopped_s
        .filter(|_| !policy.off)
        .zip(facts.state_since)
        .map(|(after, since)| {
            let at = since + Duration::seconds(after);
            if policy.auto_release && facts.backup_covers {
                step(
                    Action::Release,
                    Some(at),
                    now,
                    "stopped long enough, and the last backup covers every at-risk path".into(),
                )
            } else if policy.auto_release {
                step(
                    Action::RemindRelease,
                    Some(at),
                    now,
                    "auto-release is on, but the last backup does not cover every at-risk path"
                        .into(),
                )
            } else {
                step(
                    Action::RemindRelease,
                    Some(at),
                    now,
                    "stopped long enough; release it if nothing on it is needed".into(),
                )
            }
        });
    let keep = facts.wipe_at.map(|wipe| {
        step(
            Action::OfferKeepAlive,
            Some(wipe - Duration::days(KEEP_ALIVE_LEAD_DAYS)),
            now,
            format!(
                "the provider wipes it at {}; keep it alive or back it up and let it go",
                wipe.to_rfc3339()
            ),
        )
    });
    match (release, keep) {
        (Some(r), Some(k)) => {
            if k.at < r.at {
                k
            } else {
                r
            }
        }
        (Some(one), None) | (None, Some(one)) => one,
        (None, None) => step(
            Action::Nothing,
            None,
            now,
            "stopped; no release policy".into(),
        ),
    }
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
