//! One truth per instance: its status, decided once here, read by every screen, reminder, the
//! tray and the CLI, never recomputed by them.
//!
//! Why it exists: Leasehold hears about an instance from many sources that can disagree — the
//! ledger (what the user or a sync recorded), the provider's listings and direct looks, the look
//! after a stop recorded by hand (does it still answer?), the monitor (how many GPUs, how busy),
//! the watchdog, the backups. Screens that each read one of them contradicted each other
//! ("Stopped · costing ¥0.00/h" beside "it still answers"). Here one pure function,
//! [`decide`], weighs them all into one [`InstanceStatus`]: the state, since when, what it costs
//! per hour now and what it may cost (when the provider may bill what the ledger does not), the
//! actions that make sense now in order of priority, warnings with stable codes and parameters
//! (the UI words them in either language), and each fact with its source and time.
//!
//! - [`decide`] (pure, in `decide.rs`): everything known about one instance → its status.
//! - [`load`]: reads what [`decide`] needs from the store ([`for_instance`], [`all`],
//!   [`listing`]: `instance list` with the status's state).
//! - [`match_gpu_count`]: the one-click answer to `status.gpu_count_differs`, a rule change.
//! - [`totals`]: the Rentals page's line: costing now and this month, per currency, summed from
//!   the statuses.

mod decide;
mod error;
mod gpu_count;
mod load;
#[cfg(test)]
mod store_tests;
#[cfg(test)]
mod tests;
pub mod totals;

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::billing::{Currency, InstanceSummary};

pub use decide::{decide, GpuLook, Known};
pub use error::StatusError;
pub use gpu_count::match_gpu_count;
pub use load::{
    acknowledge_price, all, dismiss_follow_up, for_instance, listing, ListedInstance, Listing,
};

/// Where an instance stands, all sources weighed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum StatusState {
    /// Recorded, never recorded as powered on: is it on?
    Created,
    Running,
    /// Powered on without GPU (AutoDL's 无卡模式).
    RunningNoGpu,
    Stopped,
    /// Recorded as stopped, but a look since found it answering, or the provider still runs it.
    StopUnconfirmed,
    /// A Vast.ai interruptible rental a higher bid took the GPU from: stopped, its storage still
    /// billing, back only when the bid is raised (or the higher bids end).
    Outbid,
    /// The provider's listing no longer shows it, and nothing said it was released.
    MissingAtProvider,
    Released,
    /// Released in the ledger, yet the provider still lists it: it may still bill.
    ReleasedButListed,
}

impl StatusState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Created => "created",
            Self::Running => "running",
            Self::RunningNoGpu => "running_no_gpu",
            Self::Stopped => "stopped",
            Self::StopUnconfirmed => "stop_unconfirmed",
            Self::Outbid => "outbid",
            Self::MissingAtProvider => "missing_at_provider",
            Self::Released => "released",
            Self::ReleasedButListed => "released_but_listed",
        }
    }

    /// Every state, in the order a reader meets them.
    pub const ALL: [Self; 9] = [
        Self::Created,
        Self::Running,
        Self::RunningNoGpu,
        Self::Stopped,
        Self::StopUnconfirmed,
        Self::Outbid,
        Self::MissingAtProvider,
        Self::Released,
        Self::ReleasedButListed,
    ];
}

/// Something the user can do now. The list in [`InstanceStatus::actions`] is ordered by priority:
/// the first is the one the screen fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum StatusAction {
    /// Power it on at the provider (its API through the linked account, else its console).
    PowerOn,
    /// Stop now: power it off for real, recorded once confirmed.
    Stop,
    /// Record a power-on that already happened.
    RecordStart,
    /// Record a power-on without GPU.
    RecordNoGpu,
    /// Record a stop made in the provider's console.
    RecordStop,
    /// Look again whether a machine recorded as stopped still answers.
    CheckAgain,
    /// Raise the bid of an outbid interruptible rental (the Keeper card, up to the cap).
    RaiseBid,
    /// The release checklist.
    Release,
}

/// Where a fact came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum FactSource {
    Ledger,
    Provider,
    Ssh,
    Monitor,
    Watchdog,
    Backup,
}

/// One thing a source said, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Fact {
    pub source: FactSource,
    /// What it said, in plain English (for the CLI and logs; screens word the state and the
    /// warnings, not these).
    pub says: String,
    pub at: DateTime<Utc>,
}

/// Something the user should know about the instance now: a stable code (`status.…`), the
/// English message, and the values the UI fills into its own words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct StatusWarning {
    pub code: String,
    pub message: String,
    pub params: BTreeMap<String, String>,
}

/// The one status of an instance: `leasehold instance status NAME --json`, the instance page's
/// header, the rentals list's chip and the tray's line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct InstanceStatus {
    pub instance: String,
    pub state: StatusState,
    /// When the state began.
    pub since: DateTime<Utc>,
    pub currency: Currency,
    /// What the ledger bills per hour now (the cost engine's burn rate).
    #[ts(type = "string")]
    pub cost_per_hour: Decimal,
    /// What it may cost per hour if the provider still bills what the ledger does not (a stop
    /// not confirmed, a release the provider never made, a pod that is on after all). Equal to
    /// `cost_per_hour` when nothing is in doubt.
    #[ts(type = "string")]
    pub may_cost_per_hour: Decimal,
    /// What makes sense now, most urgent first.
    pub actions: Vec<StatusAction>,
    pub warnings: Vec<StatusWarning>,
    pub facts: Vec<Fact>,
}

impl InstanceStatus {
    /// It costs, or may cost, money now: what the tray lists and the quit question counts.
    pub fn may_be_billing(&self) -> bool {
        self.cost_per_hour > Decimal::ZERO || self.may_cost_per_hour > Decimal::ZERO
    }

    pub fn has_warning(&self, code: &str) -> bool {
        self.warnings.iter().any(|w| w.code == code)
    }
}

/// Warning codes, stable: the UI has a text for each (`instance_status.warnings.<code>`).
pub mod codes {
    pub const STOP_UNCONFIRMED: &str = "status.stop_unconfirmed";
    pub const MISSING_AT_PROVIDER: &str = "status.missing_at_provider";
    pub const RELEASED_BUT_LISTED: &str = "status.released_but_listed";
    pub const PRICE_HELD: &str = "status.price_held";
    pub const CURRENCY_DIFFERS: &str = "status.currency_differs";
    pub const GPU_COUNT_DIFFERS: &str = "status.gpu_count_differs";
    pub const WATCHDOG_NOT_PROTECTING: &str = "status.watchdog_not_protecting";
    pub const WATCHDOG_NOT_RUNNING: &str = "status.watchdog_not_running";
    pub const IMPORT_NEEDS_LOOK: &str = "status.import_needs_look";
    pub const STORAGE_RATE_UNKNOWN: &str = "status.storage_rate_unknown";
    pub const PRICE_UNUSUAL: &str = "status.price_unusual";
    pub const OUTBID: &str = "status.outbid";
    pub const PRICE_INCREASE_PENDING: &str = "status.price_increase_pending";
    pub const NOT_VERIFIED: &str = "status.not_verified";

    /// Every code, for the UI's text check.
    pub const ALL: [&str; 13] = [
        STOP_UNCONFIRMED,
        MISSING_AT_PROVIDER,
        RELEASED_BUT_LISTED,
        PRICE_HELD,
        CURRENCY_DIFFERS,
        GPU_COUNT_DIFFERS,
        WATCHDOG_NOT_PROTECTING,
        WATCHDOG_NOT_RUNNING,
        IMPORT_NEEDS_LOOK,
        STORAGE_RATE_UNKNOWN,
        OUTBID,
        PRICE_INCREASE_PENDING,
        NOT_VERIFIED,
    ];
}

/// The summary's state word replaced by the status's (`instance list --json`).
pub(crate) fn summary_with_state(
    summary: &InstanceSummary,
    state: StatusState,
) -> serde_json::Value {
    let mut value = serde_json::to_value(summary).unwrap_or(serde_json::Value::Null);
    if let Some(map) = value.as_object_mut() {
        map.insert("state".to_owned(), serde_json::Value::from(state.as_str()));
    }
    value
}
