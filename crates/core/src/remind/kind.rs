use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::RemindError;

/// What a reminder is about. The names are the CLI's and the UI's (`remind.kind.<name>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum ReminderKind {
    /// Every GPU below the idle threshold for the idle time while the instance bills.
    GpuIdle,
    /// Running longer than the planned hours.
    OverPlanned,
    #[serde(rename = "budget_50")]
    Budget50,
    #[serde(rename = "budget_80")]
    Budget80,
    #[serde(rename = "budget_100")]
    Budget100,
    /// The planned hours run out within the lead time.
    ReleaseDue,
    /// A stopped instance is close to the day the provider wipes it.
    WipeDeadline,
    /// A release is near and nothing was backed up since the instance last started.
    BackupMissing,
    /// The ledger says stopped (recorded by hand), but the machine still answered afterwards:
    /// the provider may still be billing.
    StopContradicted,
    /// Released in the ledger, but the provider still lists it: it may still bill.
    ReleasedButListed,
    /// A Vast.ai interruptible rental was outbid: stopped, its storage still billing.
    Outbid,
    /// A Vast.ai host raises the price of this rental unless it is rejected.
    PriceIncrease,
}

impl ReminderKind {
    pub const ALL: [Self; 12] = [
        Self::GpuIdle,
        Self::OverPlanned,
        Self::Budget50,
        Self::Budget80,
        Self::Budget100,
        Self::ReleaseDue,
        Self::WipeDeadline,
        Self::BackupMissing,
        Self::StopContradicted,
        Self::ReleasedButListed,
        Self::Outbid,
        Self::PriceIncrease,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::GpuIdle => "gpu_idle",
            Self::OverPlanned => "over_planned",
            Self::Budget50 => "budget_50",
            Self::Budget80 => "budget_80",
            Self::Budget100 => "budget_100",
            Self::ReleaseDue => "release_due",
            Self::WipeDeadline => "wipe_deadline",
            Self::BackupMissing => "backup_missing",
            Self::StopContradicted => "stop_contradicted",
            Self::ReleasedButListed => "released_but_listed",
            Self::Outbid => "outbid",
            Self::PriceIncrease => "price_increase",
        }
    }

    /// Every kind's serialized name is its `as_str`.
    pub fn parse(text: &str) -> Result<Self, RemindError> {
        Self::ALL
            .into_iter()
            .find(|k| k.as_str() == text)
            .ok_or_else(|| RemindError::UnknownKind {
                value: text.to_owned(),
            })
    }

    /// Reminders of one family say the same thing more or less urgently; while catching up only
    /// the most urgent one of a family is sent. `None`: a family of its own.
    pub(crate) fn family(self) -> Option<(&'static str, u8)> {
        match self {
            Self::Budget50 => Some(("budget", 1)),
            Self::Budget80 => Some(("budget", 2)),
            Self::Budget100 => Some(("budget", 3)),
            Self::ReleaseDue => Some(("planned", 1)),
            Self::OverPlanned => Some(("planned", 2)),
            _ => None,
        }
    }
}

/// One reminder that is due: what, for which instance, since when, and what it costs to ignore.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Reminder {
    pub instance: String,
    #[ts(type = "number")]
    pub instance_id: i64,
    pub kind: ReminderKind,
    /// When the condition began to hold (a threshold crossed, the lead time reached).
    pub due_at: DateTime<Utc>,
    /// Tells one occurrence from the next of the same kind (the budget amount, the planned
    /// hours, the wipe date, the start of the idle stretch).
    pub occurrence: String,
    /// One English sentence, for the CLI, webhooks and logs.
    pub detail: String,
    /// The values the localized text names (`percent`, `hours`, `minutes`, `wipe_at`, …).
    pub params: BTreeMap<String, String>,
    pub currency: String,
    /// What one more hour costs now, the reason to act.
    #[ts(type = "string")]
    pub burn_rate_per_hour: Decimal,
    /// What waiting costs: time to an empty budget, urgency, each snooze's price.
    #[serde(default)]
    pub stakes: super::stakes::Stakes,
}
