//! The user's reminder rules: thresholds, lead times, quiet hours. Kept as one JSON value
//! (`reminder_rules`), so a new knob needs no migration; a missing knob reads as its default.

use chrono::{DateTime, NaiveTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::SqliteConnection;
use ts_rs::TS;

use super::RemindError;
use crate::store::reminders as repo;

/// What counts as idle, how early to warn, and when to keep quiet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(default)]
#[ts(export)]
pub struct ReminderRules {
    /// A GPU below this utilisation (percent) counts as idle.
    pub gpu_idle_below_percent: u32,
    /// Every GPU idle this long while billing raises `gpu_idle`.
    pub gpu_idle_minutes: u32,
    /// `release_due` this many minutes before the planned hours run out.
    pub release_lead_minutes: u32,
    /// `wipe_deadline` this many days before the provider wipes a stopped instance.
    pub wipe_lead_days: u32,
    /// Local times between which nothing is sent; what comes due then is sent when they end.
    /// A spent budget or a contradicted stop is sent all the same.
    pub quiet_hours: Option<QuietHours>,
    /// A snooze that would cost more than this (in the instance's currency) asks first;
    /// `null`: never asks.
    #[ts(type = "string | null")]
    pub snooze_confirm_above: Option<rust_decimal::Decimal>,
    /// Power an instance off through Stop (API or SSH, confirmed) when it spends its whole
    /// budget. Off unless the user turns it on.
    pub power_off_at_budget: bool,
}

impl Default for ReminderRules {
    fn default() -> Self {
        Self {
            gpu_idle_below_percent: 5,
            gpu_idle_minutes: 30,
            release_lead_minutes: 30,
            wipe_lead_days: 3,
            quiet_hours: None,
            snooze_confirm_above: Some(rust_decimal::Decimal::ONE_HUNDRED),
            power_off_at_budget: false,
        }
    }
}

/// From `start` to `end`, local wall-clock times as `HH:MM`; may run past midnight (23:00–08:00).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct QuietHours {
    pub start: String,
    pub end: String,
}

impl QuietHours {
    fn parse(text: &str) -> Result<NaiveTime, RemindError> {
        NaiveTime::parse_from_str(text.trim(), "%H:%M").map_err(|_| RemindError::InvalidTime {
            value: text.to_owned(),
        })
    }

    /// Whether the local time `at` falls inside (start inclusive, end exclusive).
    pub fn contains(&self, at: NaiveTime) -> Result<bool, RemindError> {
        let (start, end) = (Self::parse(&self.start)?, Self::parse(&self.end)?);
        Ok(if start <= end {
            start <= at && at < end
        } else {
            at >= start || at < end
        })
    }
}

fn in_range(field: &'static str, value: u32, min: u32, max: u32) -> Result<(), RemindError> {
    if (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(RemindError::OutOfRange {
            field,
            value: i64::from(value),
            min: i64::from(min),
            max: i64::from(max),
        })
    }
}

impl ReminderRules {
    pub fn validate(&self) -> Result<(), RemindError> {
        in_range(
            "gpu_idle_below_percent",
            self.gpu_idle_below_percent,
            1,
            100,
        )?;
        in_range("gpu_idle_minutes", self.gpu_idle_minutes, 1, 24 * 60)?;
        in_range(
            "release_lead_minutes",
            self.release_lead_minutes,
            0,
            24 * 60,
        )?;
        in_range("wipe_lead_days", self.wipe_lead_days, 1, 60)?;
        if let Some(limit) = self.snooze_confirm_above {
            if limit < rust_decimal::Decimal::ZERO {
                return Err(RemindError::OutOfRange {
                    field: "snooze_confirm_above",
                    value: -1,
                    min: 0,
                    max: i64::MAX,
                });
            }
        }
        if let Some(quiet) = &self.quiet_hours {
            QuietHours::parse(&quiet.start)?;
            QuietHours::parse(&quiet.end)?;
        }
        Ok(())
    }
}

/// The saved rules, or the defaults when none were saved.
#[tracing::instrument(skip_all, err)]
pub async fn load(conn: &mut SqliteConnection) -> Result<ReminderRules, RemindError> {
    match repo::load_rules(conn).await? {
        None => Ok(ReminderRules::default()),
        Some(text) => serde_json::from_str(&text).map_err(|err| RemindError::CorruptRules {
            reason: err.to_string(),
        }),
    }
}

#[tracing::instrument(skip_all, err)]
pub async fn save(
    conn: &mut SqliteConnection,
    rules: &ReminderRules,
    now: DateTime<Utc>,
) -> Result<(), RemindError> {
    rules.validate()?;
    let text = serde_json::to_string(rules).map_err(|err| RemindError::CorruptRules {
        reason: err.to_string(),
    })?;
    Ok(repo::save_rules(conn, &text, now).await?)
}
