//! Reminders: the instance nobody remembered is the most expensive mistake in GPU rental.
//!
//! Why a module of its own: every other module answers when asked; this one speaks up. Each
//! trigger ([`triggers`]) is a pure function of an instance's ledger, the user's [`ReminderRules`],
//! recent GPU samples, the last backup and `now`, and says what is due and since when. The
//! [`schedule`] turns "what is due" into "what to say now": it keeps in SQLite what fired, when,
//! and what was snoozed or dismissed, so each occurrence fires once, a restart neither loses nor
//! repeats one, a snooze outlives the app, and a laptop that slept through several thresholds
//! catches up with one reminder per family, not a burst. Sending (desktop, tray, webhooks) is the
//! callers' job; [`crate::webhook`] does the webhooks.

mod error;
mod kind;
pub mod observe;
pub mod rules;
pub mod samples;
pub mod schedule;
pub mod stakes;
pub mod team;
pub mod triggers;

#[cfg(test)]
mod team_tests;
#[cfg(test)]
mod tests;

pub use error::RemindError;
pub use kind::{Reminder, ReminderKind};
pub use rules::{QuietHours, ReminderRules};
pub use samples::GpuSample;
pub use schedule::{Snooze, Tick};
pub use stakes::{SnoozeCost, Stakes, Urgency};
pub use triggers::{due_for, due_now, InstanceInputs, Observations, StopCheck};

use chrono::{DateTime, Utc};

use crate::billing::ledger::histories;
use crate::store::Store;

/// The saved rules and every reminder that holds at `now` across the ledger: what the app's
/// scheduler ticks on and what `leasehold remind due` prints.
pub async fn due_in_store(
    store: &Store,
    observations: &Observations,
    now: DateTime<Utc>,
) -> Result<(ReminderRules, Vec<Reminder>), RemindError> {
    let rules = {
        let mut conn = store.pool().acquire().await?;
        rules::load(&mut conn).await?
    };
    let all = histories(store).await?;
    let due = due_now(&all, observations, &rules, now)?;
    Ok((rules, due))
}

/// Like [`due_in_store`], with what the other modules recorded in the same store: the GPU
/// minutes the monitor wrote (for `gpu_idle`) and the backups recorded (for `backup_missing`). What the app's scheduler and `remind due` use.
pub async fn due_observed(
    store: &Store,
    now: DateTime<Utc>,
) -> Result<(ReminderRules, Vec<Reminder>), RemindError> {
    let rules = {
        let mut conn = store.pool().acquire().await?;
        rules::load(&mut conn).await?
    };
    let all = histories(store).await?;
    let observations = observe::gather(store, &all, &rules, now).await?;
    let due = due_now(&all, &observations, &rules, now)?;
    Ok((rules, due))
}
