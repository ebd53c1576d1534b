//! The triggers: pure functions of one instance's ledger, the rules, its recent GPU samples,
//! its last backup and `now`, saying which reminders hold at `now` and since when.
//!
//! `due_at` is the moment the condition began to hold, found from the ledger alone (the cost
//! and the running time never decrease as time passes, so the crossing is found by bisection
//! over the engine's own answer), so the same question asked twice gets the same answer and
//! `remind due --at` is stateless.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Duration, Utc};
use rust_decimal::Decimal;

use super::samples::{idle_since, GpuSample};
use super::{stakes, RemindError, Reminder, ReminderKind, ReminderRules};
use crate::billing::engine::{self, Costing};
use crate::billing::ledger::InstanceHistory;
use crate::billing::money::{display_amount, display_rate};
use crate::billing::report::BUDGET_THRESHOLDS;
use crate::billing::{BillingError, InstanceState};
use crate::store::vast_looks::VastLookRow;

/// What reminders know about one instance besides its ledger: inputs other modules own.
#[derive(Debug, Clone, Copy)]
pub struct InstanceInputs<'a> {
    pub history: &'a InstanceHistory,
    /// Recent GPU utilisation (the monitor's one-minute history); empty: no `gpu_idle`.
    pub samples: &'a [GpuSample],
    /// When the instance's data was last backed up (the backup records); `None`: never.
    pub last_backup: Option<DateTime<Utc>>,
    /// The newest look, after a stop recorded by hand, at whether the machine still answers.
    pub stop_check: Option<StopCheck>,
    /// The provider still listed it at the last sync although the ledger says released.
    pub listed_after_release: Option<&'a ListedAfterRelease>,
    /// What Vast.ai last said of its bid and of a host's pending price increase.
    pub vast: Option<&'a VastLookRow>,
}

/// A sync found the provider still listing an instance the ledger released.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedAfterRelease {
    /// The provider's display name ("RunPod").
    pub provider: String,
    /// What it said of the instance (`running`, `stopped` …).
    pub state: String,
    pub seen_at: DateTime<Utc>,
}

/// A look at a stopped instance: did it still answer at `checked_at`?
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StopCheck {
    pub checked_at: DateTime<Utc>,
    pub answered: bool,
}

/// What other modules observed, by instance id: samples and last backups.
#[derive(Debug, Clone, Default)]
pub struct Observations {
    pub samples: HashMap<i64, Vec<GpuSample>>,
    pub last_backup: HashMap<i64, DateTime<Utc>>,
    pub stop_checks: HashMap<i64, StopCheck>,
    pub listed_after_release: HashMap<i64, ListedAfterRelease>,
    pub vast_looks: HashMap<i64, VastLookRow>,
}

/// Every reminder that holds at `now` for each instance, oldest due first.
pub fn due_now(
    histories: &[InstanceHistory],
    observations: &Observations,
    rules: &ReminderRules,
    now: DateTime<Utc>,
) -> Result<Vec<Reminder>, RemindError> {
    let mut all = Vec::new();
    for history in histories {
        let inputs = InstanceInputs {
            history,
            samples: observations
                .samples
                .get(&history.id)
                .map_or(&[][..], Vec::as_slice),
            last_backup: observations.last_backup.get(&history.id).copied(),
            stop_check: observations.stop_checks.get(&history.id).copied(),
            listed_after_release: observations.listed_after_release.get(&history.id),
            vast: observations.vast_looks.get(&history.id),
        };
        all.extend(due_for(&inputs, rules, now)?);
    }
    all.sort_by(|a, b| (a.due_at, &a.instance, a.kind).cmp(&(b.due_at, &b.instance, b.kind)));
    Ok(all)
}

/// The reminders that hold at `now` for one instance.
pub fn due_for(
    inputs: &InstanceInputs<'_>,
    rules: &ReminderRules,
    now: DateTime<Utc>,
) -> Result<Vec<Reminder>, RemindError> {
    let history = inputs.history;
    let costing = engine::compute(&history.events, now)?;
    let (Some(state), Some(created_at)) = (costing.state, costing.created_at) else {
        return Ok(Vec::new());
    };
    if state == InstanceState::Released {
        let mut found = Found {
            history,
            costing: &costing,
            now,
            list: Vec::new(),
        };
        found.released_but_listed(inputs.listed_after_release);
        return Ok(found.list);
    }
    let found = Found {
        history,
        costing: &costing,
        now,
        list: Vec::new(),
    };
    let mut found = found;
    found.budget(created_at)?;
    if state == InstanceState::Running {
        found.planned(created_at, rules, inputs.last_backup)?;
        found.gpu_idle(inputs.samples, rules);
    }
    if state == InstanceState::Stopped {
        found.wipe(rules);
        found.stop_contradicted(inputs.stop_check);
    }
    if let Some(vast) = inputs.vast {
        found.outbid(vast);
        found.price_increase(vast);
    }
    Ok(found.list)
}

struct Found<'a> {
    history: &'a InstanceHistory,
    costing: &'a Costing,
    now: DateTime<Utc>,
    list: Vec<Reminder>,
}

/// The first whole second after `from` (or `from` itself) in `[from, to]` at which `holds` is
/// true, given that it is true at `to` and, once true, stays true.
pub(super) fn first_moment(
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    holds: impl Fn(DateTime<Utc>) -> Result<bool, BillingError>,
) -> Result<DateTime<Utc>, BillingError> {
    if holds(from)? {
        return Ok(from);
    }
    let at = |seconds: i64| (from + Duration::seconds(seconds)).min(to);
    // `holds` is false at `low` seconds after `from` and true at `high`.
    let (mut low, mut high) = (0, (to - from).num_seconds() + 1);
    while high - low > 1 {
        let middle = low + (high - low) / 2;
        if holds(at(middle))? {
            high = middle;
        } else {
            low = middle;
        }
    }
    Ok(at(high))
}

fn hours_to_seconds(hours: Decimal) -> i64 {
    (hours * Decimal::from(3600))
        .round()
        .try_into()
        .unwrap_or(i64::MAX)
}

fn minutes_ceil(seconds: i64) -> i64 {
    (seconds.max(0) + 59) / 60
}

impl Found<'_> {
    fn push(
        &mut self,
        kind: ReminderKind,
        due_at: DateTime<Utc>,
        occurrence: String,
        detail: String,
        params: &[(&str, String)],
    ) {
        self.list.push(Reminder {
            instance: self.history.name.clone(),
            instance_id: self.history.id,
            kind,
            due_at,
            occurrence,
            detail,
            params: params
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect::<BTreeMap<_, _>>(),
            currency: self.history.currency.code().to_owned(),
            burn_rate_per_hour: display_rate(self.costing.burn_rate_per_hour),
            stakes: stakes::stakes(
                kind,
                self.history.budget,
                self.costing.total().unwrap_or_default(),
                self.costing.burn_rate_per_hour,
            ),
        });
    }

    /// `released_but_listed`: released in the ledger, but the provider still listed it at a sync
    /// after the release. One occurrence per release; a sync that no longer sees it ends it.
    fn released_but_listed(&mut self, listed: Option<&ListedAfterRelease>) {
        let (Some(listed), Some(since)) = (listed, self.costing.state_since) else {
            return;
        };
        if listed.seen_at < since {
            return;
        }
        let seen = listed.seen_at.to_rfc3339();
        self.push(
            ReminderKind::ReleasedButListed,
            listed.seen_at,
            since.to_rfc3339(),
            format!(
                "released, but {} still listed it ({}) at {seen}: it may still bill",
                listed.provider, listed.state
            ),
            &[
                ("provider", listed.provider.clone()),
                ("state", listed.state.clone()),
                ("seen_at", seen),
            ],
        );
        self.may_still_bill();
    }

    /// The last reminder's burn rate as the rules bill a running instance: what the provider may
    /// really be charging while the ledger counts nothing.
    fn may_still_bill(&mut self) {
        if let (Some(reminder), Some(rules)) = (self.list.last_mut(), &self.costing.rules) {
            let running = rules
                .compute_rate()
                .and_then(|gpus| engine::add("hourly rate", gpus, rules.fixed_fees_per_hour()?));
            if let Ok(rate) = running {
                reminder.burn_rate_per_hour = display_rate(rate);
            }
        }
    }

    /// `stop_contradicted`: the stop was recorded by hand, and a look since found the machine
    /// still answering. One occurrence per stop; a later silent look ends it.
    fn stop_contradicted(&mut self, check: Option<StopCheck>) {
        let (Some(check), Some(since)) = (check, self.costing.state_since) else {
            return;
        };
        if !check.answered || check.checked_at < since {
            return;
        }
        let at = check.checked_at.to_rfc3339();
        self.push(
            ReminderKind::StopContradicted,
            check.checked_at,
            since.to_rfc3339(),
            format!("recorded as stopped, but it still answered at {at}: the provider may still be billing"),
            &[("checked_at", at)],
        );
        // The ledger bills nothing while stopped, but a machine that answers is likely billed as
        // running: the card must say what waiting may really cost, not "0 an hour".
        if let (Some(reminder), Some(rules)) = (self.list.last_mut(), &self.costing.rules) {
            let running = rules
                .compute_rate()
                .and_then(|gpus| engine::add("hourly rate", gpus, rules.fixed_fees_per_hour()?));
            if let Ok(rate) = running {
                reminder.burn_rate_per_hour = display_rate(rate);
            }
        }
    }

    /// `budget_50/80/100`: the bill reached that share of the budget.
    fn budget(&mut self, created_at: DateTime<Utc>) -> Result<(), RemindError> {
        let Some(budget) = self.history.budget else {
            return Ok(());
        };
        let total = self.costing.total()?;
        let events = &self.history.events;
        for threshold in BUDGET_THRESHOLDS {
            let target = budget * Decimal::from(threshold) / Decimal::ONE_HUNDRED;
            if total < target {
                continue;
            }
            let due_at = first_moment(created_at, self.now, |at| {
                Ok(engine::compute(events, at)?.total()? >= target)
            })?;
            let kind = match threshold {
                50 => ReminderKind::Budget50,
                80 => ReminderKind::Budget80,
                _ => ReminderKind::Budget100,
            };
            let currency = self.history.currency.code().to_owned();
            let (used, amount) = (display_amount(total), display_amount(budget));
            self.push(
                kind,
                due_at,
                budget.normalize().to_string(),
                format!("{used} {currency} spent of a {amount} {currency} budget ({threshold} % reached)"),
                &[
                    ("percent", threshold.to_string()),
                    ("used", used.to_string()),
                    ("budget", amount.to_string()),
                ],
            );
        }
        Ok(())
    }

    /// `release_due`, `over_planned` and `backup_missing` against the planned running hours.
    fn planned(
        &mut self,
        created_at: DateTime<Utc>,
        rules: &ReminderRules,
        last_backup: Option<DateTime<Utc>>,
    ) -> Result<(), RemindError> {
        let Some(hours) = self.history.planned_hours else {
            return Ok(());
        };
        let planned = hours_to_seconds(hours);
        let warn_from = planned - i64::from(rules.release_lead_minutes) * 60;
        let running = self.costing.running_seconds;
        if running < warn_from {
            return Ok(());
        }
        let events = &self.history.events;
        let reached = |seconds: i64| {
            first_moment(created_at, self.now, |at| {
                Ok(engine::compute(events, at)?.running_seconds >= seconds)
            })
        };
        let occurrence = hours.normalize().to_string();
        let warned_at = reached(warn_from.max(0))?;
        let left = planned - running;
        let release_at = self.now + Duration::seconds(left.max(0));
        if running >= planned {
            let over = running - planned;
            self.push(
                ReminderKind::OverPlanned,
                reached(planned)?,
                occurrence.clone(),
                format!(
                    "running {} min past the {} h planned",
                    minutes_ceil(over),
                    hours.normalize()
                ),
                &[
                    ("hours", hours.normalize().to_string()),
                    ("minutes", minutes_ceil(over).to_string()),
                ],
            );
        } else {
            self.push(
                ReminderKind::ReleaseDue,
                warned_at,
                occurrence.clone(),
                format!(
                    "the {} h planned run out in {} min (at {})",
                    hours.normalize(),
                    minutes_ceil(left),
                    release_at.to_rfc3339()
                ),
                &[
                    ("hours", hours.normalize().to_string()),
                    ("minutes", minutes_ceil(left).to_string()),
                    ("release_at", release_at.to_rfc3339()),
                ],
            );
        }
        let started = self.costing.state_since.unwrap_or(created_at);
        if last_backup.is_none_or(|at| at < started) {
            self.push(
                ReminderKind::BackupMissing,
                warned_at.max(started),
                occurrence,
                match last_backup {
                    None => "release is near and nothing was ever backed up".to_owned(),
                    Some(at) => format!(
                        "release is near and the last backup ({}) is older than this run",
                        at.to_rfc3339()
                    ),
                },
                &[(
                    "last_backup",
                    last_backup.map(|at| at.to_rfc3339()).unwrap_or_default(),
                )],
            );
        }
        Ok(())
    }

    /// `gpu_idle`: every GPU below the threshold for the idle time, in samples since this run
    /// began.
    fn gpu_idle(&mut self, samples: &[GpuSample], rules: &ReminderRules) {
        let since = self.costing.state_since.unwrap_or(self.now);
        let Some(start) = idle_since(samples, rules.gpu_idle_below_percent, since, self.now) else {
            return;
        };
        let idle_for = Duration::minutes(i64::from(rules.gpu_idle_minutes));
        if self.now - start < idle_for {
            return;
        }
        let minutes = (self.now - start).num_minutes();
        self.push(
            ReminderKind::GpuIdle,
            start + idle_for,
            start.to_rfc3339(),
            format!(
                "every GPU below {} % for {minutes} min while billing",
                rules.gpu_idle_below_percent
            ),
            &[
                ("minutes", minutes.to_string()),
                ("below", rules.gpu_idle_below_percent.to_string()),
            ],
        );
    }

    /// `wipe_deadline`: stopped, and the provider's wipe is within the lead days.
    fn wipe(&mut self, rules: &ReminderRules) {
        let Some(wipe_at) = self.costing.wipe_at else {
            return;
        };
        let due_at = wipe_at - Duration::days(i64::from(rules.wipe_lead_days));
        if self.now < due_at || self.now >= wipe_at {
            return;
        }
        let hours_left = (wipe_at - self.now).num_hours();
        // A second reminder on the last day, its own occurrence so it is sent even after the
        // first was dismissed, and critical: by morning the data may be gone.
        let last_day_at = wipe_at - Duration::days(1);
        let last_day = self.now >= last_day_at;
        let (due_at, occurrence) = if last_day {
            (last_day_at, format!("{}#last_day", wipe_at.to_rfc3339()))
        } else {
            (due_at, wipe_at.to_rfc3339())
        };
        self.push(
            ReminderKind::WipeDeadline,
            due_at,
            occurrence,
            format!(
                "stopped; the provider wipes it at {} ({hours_left} h left)",
                wipe_at.to_rfc3339()
            ),
            &[
                ("wipe_at", wipe_at.to_rfc3339()),
                ("hours", hours_left.to_string()),
                ("last_day", last_day.to_string()),
            ],
        );
        if last_day {
            if let Some(pushed) = self.list.last_mut() {
                pushed.stakes.urgency = stakes::Urgency::Critical;
            }
        }
    }
}

impl Found<'_> {
    /// `outbid`: Vast.ai gave the GPU to a higher bid; one reminder per outbid (its start), told
    /// even in the quiet hours, what the storage bills meanwhile as the burn rate.
    fn outbid(&mut self, vast: &VastLookRow) {
        let Some(since) = vast.outbid_since.filter(|_| vast.outbid) else {
            return;
        };
        let storage = vast.per_hour().map(display_rate);
        let min_bid = vast.min_bid().map(|b| b.normalize().to_string());
        // Without Vast.ai's figure, the ledger's own is the best said.
        let rate = storage.unwrap_or_else(|| display_rate(self.costing.burn_rate_per_hour));
        let mut params = vec![("since", since.to_rfc3339()), ("rate", rate.to_string())];
        if let Some(bid) = &min_bid {
            params.push(("min_bid", bid.clone()));
        }
        self.push(
            ReminderKind::Outbid,
            since,
            since.to_rfc3339(),
            format!(
                "outbid on Vast.ai since {}: stopped, its storage still billing{}",
                since.to_rfc3339(),
                storage.map_or(String::new(), |r| format!(" {r}/h"))
            ),
            &params,
        );
        if let (Some(reminder), Some(rate)) = (self.list.last_mut(), storage) {
            reminder.burn_rate_per_hour = rate;
        }
    }

    /// `price_increase`: a host's pending price increase, once per increase.
    fn price_increase(&mut self, vast: &VastLookRow) {
        let Some((id, old, new, seen)) = vast.increase() else {
            return;
        };
        let (old, new) = (display_rate(old), display_rate(new));
        self.push(
            ReminderKind::PriceIncrease,
            seen,
            id.to_string(),
            format!("the host raises the price from {old}/h to {new}/h unless you reject it"),
            &[("old", old.to_string()), ("new", new.to_string())],
        );
    }
}
