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
//!
//! The triggers: `gpu_idle`, `over_planned`, `budget_50`/`80`/`100`, `release_due`,
//! `wipe_deadline`, `backup_missing`, `stop_contradicted` (a stop recorded by hand that a later
//! look found still answering) and `released_but_listed`. The schedule is the `reminders` table
//! (migration 0110). [`ReminderRules`] holds the thresholds, lead times, quiet hours, the
//! snooze-confirmation threshold and the opt-in power-off at 100 % of the budget.
//!
//! - [`stakes`]: what waiting costs (minutes until the budget runs out, each snooze's price), the
//!   urgency (`notice`, `warning`, `critical` at ≥ 100 % or under 15 min left), which reminders
//!   break through the quiet hours (a spent budget, a contradicted stop, minutes left), and
//!   `one_per_problem` (one card per instance and family, no team echo of this laptop's own idle
//!   alert). Attached to every `Reminder` as `stakes`.
//! - [`team`]: the team budgets' 50/80/100 % (budgets as last synced in `team_budgets`, migration
//!   0170; fired ones in `team_reminders`, 0180) and the left-running alerts (a `gpu_idle` reminder
//!   with `params.scope` = `team`). `team::open`, `dismiss` and `snooze` serve the popup
//!   (`dismissed_at`, 0190; `snoozed_until`, 0230: hidden until then, sent once more by `tick` when
//!   it ends if still due).

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
pub use triggers::{due_for, due_now, InstanceInputs, ListedAfterRelease, Observations, StopCheck};

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

/// One round of the reminder scheduler: what became due, personal and team.
#[derive(Debug, Clone, PartialEq)]
pub struct Round {
    /// New this round, to be told (desktop, webhooks): the personal ones first, then the team's.
    pub fired: Vec<Reminder>,
    /// What the popup shows, personal then team.
    pub open: Vec<Reminder>,
    /// Inside the quiet hours: nothing personal was fired.
    pub quiet: bool,
    /// The rules the round went by (the app's opt-in power-off at 100 % of budget reads them).
    pub rules: ReminderRules,
}

/// The scheduler's round, in the one order both kinds must go: the personal reminders are
/// found and recorded first (their failure ends the round), then the team's budgets and
/// left-running alerts, whose failure only leaves them out of this round (the team server's
/// cache may be missing or old; the user's own reminders must not wait for it).
pub async fn round<Tz: chrono::TimeZone>(
    store: &Store,
    now: DateTime<Utc>,
    zone: &Tz,
) -> Result<Round, RemindError> {
    let (rules, due) = due_observed(store, now).await?;
    let tick = schedule::tick(store, &due, &rules, now, zone).await?;
    let mut fired = tick.fired;
    let mut open = tick.open;
    match team::due_in_store(store, now).await {
        Ok(team_due) => {
            match team::tick(store, &team_due, &rules, now, zone).await {
                Ok(team_fired) => fired.extend(team_fired),
                Err(err) => tracing::warn!(%err, "team reminders not recorded"),
            }
            match team::open(store, &team_due).await {
                Ok(team_open) => open.extend(team_open),
                Err(err) => tracing::warn!(%err, "open team reminders not read"),
            }
        }
        Err(err) => tracing::warn!(%err, "team reminders not checked"),
    }
    // One card per problem, each snooze priced: what the popup shows.
    let mut open = stakes::one_per_problem(open);
    stakes::price_snoozes(&mut open, now, zone, rules.snooze_confirm_above);
    Ok(Round {
        fired,
        open,
        quiet: tick.quiet,
        rules,
    })
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
