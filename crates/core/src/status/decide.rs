//! The pure decision: everything Leasehold knows about one instance → its [`InstanceStatus`].
//!
//! The order of trust: the ledger says what was recorded; a later answer from the machine or the
//! provider can only raise a doubt about money (a stop it contradicts, a release it never saw),
//! never quietly lower what the instance may cost. What is in doubt shows in
//! `may_cost_per_hour` and a warning; the ledger's own cost stays what the engine computes.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use rust_decimal::Decimal;

use super::codes;
use super::{Fact, FactSource, InstanceStatus, StatusAction, StatusState, StatusWarning};
use crate::billing::engine::{self, Costing};
use crate::billing::ledger::InstanceHistory;
use crate::billing::money::display_rate;
use crate::billing::{
    BillingError, BillingRules, EventKind, InstanceState, ProviderKey, StoppedBilling,
};
use crate::price_check::PriceWarning;
use crate::store::accounts::LinkRow;
use crate::store::stop_checks::StopCheckRow;
use crate::store::vast_looks::VastLookRow;
use crate::store::watchdog_looks::WatchdogLookRow;

/// How old the monitor's latest minute may be and still say how many GPUs the machine has now.
pub const GPU_LOOK_FRESH: Duration = Duration::minutes(15);

/// The monitor's latest minute: how many GPUs it saw, and how busy they were.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuLook {
    pub at: DateTime<Utc>,
    pub gpus: u32,
    /// The busiest GPU's average utilisation that minute, in percent.
    pub busiest_percent: u32,
}

/// Everything known about one instance.
#[derive(Debug, Clone, Copy)]
pub struct Known<'a> {
    /// The ledger: name, currency, events.
    pub history: &'a InstanceHistory,
    /// The ledger's provider preset (`None`: one this version does not know).
    pub provider: Option<ProviderKey>,
    /// The provider account's link: what its last listing said, what a sync held back.
    pub link: Option<&'a LinkRow>,
    /// The newest look after a stop recorded by hand.
    pub stop_check: Option<&'a StopCheckRow>,
    pub monitor: Option<GpuLook>,
    pub watchdog: Option<&'a WatchdogLookRow>,
    /// When the newest backup finished.
    pub last_backup: Option<DateTime<Utc>>,
    /// Why the rental's price looks wrong (`price_check` against the card, the budget
    /// and this user's earlier rentals), unless the renter said this price is right.
    pub price_flag: Option<&'a PriceWarning>,
    /// What Vast.ai last said of the rental's bid and of a host's pending price increase.
    pub vast: Option<&'a VastLookRow>,
    /// Leasehold brought it up itself (`hunt` or `rent`) at this time, and asked for a Verify.
    pub follow_up: Option<(&'a str, DateTime<Utc>)>,
    /// When Verify last ran on it.
    pub last_verified: Option<DateTime<Utc>>,
    /// A way in over SSH is saved (by Connect or an account sync).
    pub has_target: bool,
}

/// The status of the instance in `known` at `now`.
pub fn decide(known: &Known<'_>, now: DateTime<Utc>) -> Result<InstanceStatus, BillingError> {
    let costing = engine::compute(&known.history.events, now)?;
    let rules = costing
        .rules
        .clone()
        .or_else(|| last_rules(&known.history.events));
    let ledger_state = costing.state.unwrap_or(InstanceState::Created);
    let ledger_since = costing
        .state_since
        .or(costing.created_at)
        .or_else(|| known.history.events.first().map(|e| e.at))
        .unwrap_or(now);
    let running_rate = match &rules {
        Some(rules) => engine::add(
            "hourly rate",
            rules.compute_rate()?,
            rules.fixed_fees_per_hour()?,
        )?,
        None => Decimal::ZERO,
    };
    let cost = costing.burn_rate_per_hour;
    let mut decided = Decided {
        known,
        now,
        provider_name: known
            .provider
            .map_or_else(|| "the provider".to_owned(), |p| p.preset().display_name),
        currency: known.history.currency.code().to_owned(),
        warnings: Vec::new(),
    };

    let link = known.link;
    let listed_after = |at: DateTime<Utc>| {
        link.filter(|l| l.missing_since.is_none() && l.seen_at >= at)
            .and_then(|l| listed_word(&l.remote_state))
    };
    let missing_since = link.and_then(|l| {
        l.missing_since
            .or_else(|| (l.remote_state == "missing").then_some(l.seen_at))
    });

    let (state, since, may_cost) = match ledger_state {
        InstanceState::Released => {
            let released_at = costing.released_at.unwrap_or(ledger_since);
            match listed_after(released_at) {
                Some(word) => {
                    let may = if word == "stopped" {
                        stopped_rate(rules.as_ref())?
                    } else {
                        running_rate
                    };
                    decided.released_but_listed(word, may);
                    (StatusState::ReleasedButListed, released_at, may)
                }
                None => (StatusState::Released, released_at, Decimal::ZERO),
            }
        }
        _ if missing_since.is_some() => {
            let at = missing_since.unwrap_or(now);
            decided.missing(at);
            (StatusState::MissingAtProvider, at, cost)
        }
        InstanceState::Running | InstanceState::Stopped if outbid_since(known, ledger_since) => {
            // Vast.ai says the storage bills on; the ledger may not know a stop happened.
            let storage = known.vast.and_then(VastLookRow::per_hour);
            let may = storage.map_or(cost, |s| display_rate(s).max(cost));
            decided.outbid(storage, cost);
            (StatusState::Outbid, ledger_since, may)
        }
        InstanceState::Stopped => {
            let answered = known
                .stop_check
                .filter(|c| c.answered && c.checked_at >= ledger_since);
            let provider_runs =
                listed_after(ledger_since).filter(|w| matches!(*w, "running" | "starting"));
            if answered.is_some() || provider_runs.is_some() {
                let may = running_rate.max(cost);
                decided.stop_unconfirmed(answered, provider_runs.and(link), may);
                (StatusState::StopUnconfirmed, ledger_since, may)
            } else {
                decided.storage_unknown(rules.as_ref());
                (StatusState::Stopped, ledger_since, cost)
            }
        }
        InstanceState::Created => {
            // Billed from power-on and not recorded as on: if it is on after all, it bills.
            (StatusState::Created, ledger_since, running_rate.max(cost))
        }
        InstanceState::Running => (StatusState::Running, ledger_since, cost),
        InstanceState::NoGpu => (StatusState::RunningNoGpu, ledger_since, cost),
    };

    if !matches!(
        state,
        StatusState::Released | StatusState::ReleasedButListed
    ) {
        decided.held_price(rules.as_ref())?;
        decided.currency_differs(rules.as_ref());
        if state == StatusState::Running {
            decided.gpu_count(rules.as_ref(), since)?;
            decided.not_verified(since);
        }
        if matches!(
            state,
            StatusState::Running | StatusState::RunningNoGpu | StatusState::Created
        ) {
            decided.watchdog(since);
        }
        decided.import_warning();
        decided.price_unusual();
        decided.price_increase();
    }

    let facts = facts(known, &costing, ledger_state, ledger_since);
    Ok(InstanceStatus {
        instance: known.history.name.clone(),
        state,
        since,
        currency: known.history.currency.clone(),
        cost_per_hour: display_rate(cost),
        may_cost_per_hour: display_rate(may_cost.max(cost)),
        actions: actions(state, ledger_state, rules.as_ref()),
        warnings: decided.warnings,
        facts,
    })
}

/// Whether Vast.ai's newest look, no older than the ledger's state, found it outbid.
fn outbid_since(known: &Known<'_>, ledger_since: DateTime<Utc>) -> bool {
    known
        .vast
        .is_some_and(|v| v.outbid && v.looked_at >= ledger_since)
}

/// The provider's state word when it still lists the instance (anything but gone or missing).
fn listed_word(word: &str) -> Option<&'static str> {
    Some(match word {
        "running" => "running",
        "starting" => "starting",
        "stopped" => "stopped",
        "error" => "error",
        _ => return None,
    })
}

fn last_rules(events: &[crate::billing::LedgerEvent]) -> Option<BillingRules> {
    events.iter().rev().find_map(|e| match &e.kind {
        EventKind::Created(rules) | EventKind::RuleChanged(rules) => Some(rules.as_ref().clone()),
        _ => None,
    })
}

/// What the rules charge per hour while stopped, fees included.
fn stopped_rate(rules: Option<&BillingRules>) -> Result<Decimal, BillingError> {
    let Some(rules) = rules else {
        return Ok(Decimal::ZERO);
    };
    let state = rules.stopped_billing.rate().unwrap_or(Decimal::ZERO);
    engine::add("hourly rate", state, rules.fixed_fees_per_hour()?)
}

/// What makes sense in `state`, most urgent first. Never Stop on a rental not recorded as on;
/// never "record a stop" first while the meter may run: Stop powers it off for real.
fn actions(
    state: StatusState,
    ledger: InstanceState,
    rules: Option<&BillingRules>,
) -> Vec<StatusAction> {
    use StatusAction as A;
    let no_gpu = rules.is_some_and(|r| r.no_gpu_rate.is_some());
    let mut list = match state {
        StatusState::Created => vec![A::RecordStart, A::PowerOn, A::RecordNoGpu, A::Release],
        StatusState::Running => vec![A::Stop, A::RecordStop, A::RecordNoGpu, A::Release],
        StatusState::RunningNoGpu => vec![A::Stop, A::RecordStart, A::RecordStop, A::Release],
        StatusState::Stopped => vec![A::PowerOn, A::RecordStart, A::RecordNoGpu, A::Release],
        StatusState::StopUnconfirmed => vec![A::CheckAgain, A::RecordStart, A::Release],
        StatusState::Outbid => vec![A::RaiseBid, A::Release],
        StatusState::MissingAtProvider => match ledger {
            InstanceState::Stopped => vec![A::Release],
            _ => vec![A::Release, A::RecordStop],
        },
        StatusState::Released | StatusState::ReleasedButListed => Vec::new(),
    };
    if !no_gpu {
        list.retain(|a| *a != A::RecordNoGpu);
    }
    list
}

struct Decided<'k, 'a> {
    known: &'k Known<'a>,
    now: DateTime<Utc>,
    provider_name: String,
    currency: String,
    warnings: Vec<StatusWarning>,
}

impl Decided<'_, '_> {
    fn warn(&mut self, code: &str, message: String, params: &[(&str, String)]) {
        self.warnings.push(StatusWarning {
            code: code.to_owned(),
            message,
            params: params
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect::<BTreeMap<_, _>>(),
        });
    }

    fn provider_key(&self) -> String {
        self.known
            .provider
            .map_or_else(|| "custom".to_owned(), |p| p.as_str().to_owned())
    }

    fn released_but_listed(&mut self, word: &str, may: Decimal) {
        let rate = display_rate(may).to_string();
        let message = format!(
            "{} still lists {}, which you released — it may still bill {rate} {}/h",
            self.provider_name, self.known.history.name, self.currency
        );
        let params = [
            ("provider", self.provider_key()),
            ("rate", rate),
            ("currency", self.currency.clone()),
            ("provider_state", word.to_owned()),
        ];
        self.warn(codes::RELEASED_BUT_LISTED, message, &params);
    }

    fn outbid(&mut self, storage: Option<Decimal>, ledger_cost: Decimal) {
        let min_bid = self.known.vast.and_then(VastLookRow::min_bid);
        let rate = storage.map(|s| display_rate(s).to_string());
        let message = format!(
            "outbid on Vast.ai: stopped, its storage still billing{}{}",
            rate.as_ref()
                .map_or(String::new(), |r| format!(" {r} {}/h", self.currency)),
            min_bid.map_or(String::new(), |b| format!(
                "; a bid of {b}/GPU-hour wins it back"
            )),
        );
        // Without Vast.ai's figure, the ledger's own is the best said.
        let shown = rate.unwrap_or_else(|| display_rate(ledger_cost).to_string());
        let mut params = vec![("currency", self.currency.clone()), ("rate", shown)];
        if let Some(bid) = min_bid {
            params.push(("min_bid", bid.normalize().to_string()));
        }
        self.warn(codes::OUTBID, message, &params);
    }

    /// Brought up by Leasehold (a hunt's success, a rental made in the app), on, and no Verify
    /// since: the step before working on it is to connect (no saved way in yet), then Verify.
    fn not_verified(&mut self, on_since: DateTime<Utc>) {
        let Some((reason, asked_at)) = self.known.follow_up else {
            return;
        };
        // A Verify from before this power-on says nothing about the machine now.
        if self
            .known
            .last_verified
            .is_some_and(|at| at >= asked_at.max(on_since))
        {
            return;
        }
        let message = if self.known.has_target {
            "on, and not verified since it started: run Verify before you work on it"
        } else {
            "on, with no saved way in: connect, then run Verify before you work on it"
        };
        let params = [
            ("reason", reason.to_owned()),
            ("connected", self.known.has_target.to_string()),
        ];
        self.warn(codes::NOT_VERIFIED, message.to_owned(), &params);
    }

    /// A host's pending price increase, until it is accepted or rejected.
    fn price_increase(&mut self) {
        let Some((_, old, new, seen)) = self.known.vast.and_then(VastLookRow::increase) else {
            return;
        };
        let (old, new) = (display_rate(old).to_string(), display_rate(new).to_string());
        let message = format!(
            "the host raises the price from {old} to {new} {}/h unless you reject it",
            self.currency
        );
        let params = [
            ("old", old),
            ("new", new),
            ("currency", self.currency.clone()),
            ("seen_at", seen.to_rfc3339()),
        ];
        self.warn(codes::PRICE_INCREASE_PENDING, message, &params);
    }

    fn missing(&mut self, since: DateTime<Utc>) {
        let message = format!(
            "{} no longer lists it since {}, and has not said it was released",
            self.provider_name,
            since.to_rfc3339()
        );
        let params = [
            ("provider", self.provider_key()),
            ("since", since.to_rfc3339()),
        ];
        self.warn(codes::MISSING_AT_PROVIDER, message, &params);
    }

    fn stop_unconfirmed(
        &mut self,
        answered: Option<&StopCheckRow>,
        provider_runs: Option<&LinkRow>,
        may: Decimal,
    ) {
        let rate = display_rate(may).to_string();
        let (via, at) = match (answered, provider_runs) {
            (Some(check), _) => (check.via.clone(), check.checked_at),
            (None, Some(link)) => ("provider".to_owned(), link.seen_at),
            (None, None) => ("provider".to_owned(), self.now),
        };
        let message = format!(
            "recorded as stopped, but it still answered at {} — it may still bill {rate} {}/h",
            at.to_rfc3339(),
            self.currency
        );
        let params = [
            ("checked_at", at.to_rfc3339()),
            ("via", via),
            ("rate", rate),
            ("currency", self.currency.clone()),
        ];
        self.warn(codes::STOP_UNCONFIRMED, message, &params);
    }

    /// A provider that bills a stopped instance's storage, and rules that say it costs nothing.
    fn storage_unknown(&mut self, rules: Option<&BillingRules>) {
        let bills_storage = self
            .known
            .provider
            .is_some_and(|p| p.preset().stopped_billing_kind == "storage");
        if bills_storage && rules.is_some_and(|r| r.stopped_billing == StoppedBilling::None) {
            let message = format!(
                "{} bills a stopped instance's storage, and the rules say it costs nothing: add the storage rate",
                self.provider_name
            );
            let params = [("provider", self.provider_key())];
            self.warn(codes::STORAGE_RATE_UNKNOWN, message, &params);
        }
    }

    fn held_price(&mut self, rules: Option<&BillingRules>) -> Result<(), BillingError> {
        let Some(link) = self.known.link else {
            return Ok(());
        };
        let Some(held) = link.held_price_per_hour.as_deref() else {
            return Ok(());
        };
        let from = match rules {
            Some(rules) => display_rate(rules.compute_rate()?).to_string(),
            None => String::new(),
        };
        let currency = link
            .held_currency
            .clone()
            .unwrap_or_else(|| self.currency.clone());
        let since = link.held_since.unwrap_or(link.seen_at);
        let message = format!(
            "{} now bills {held} {currency}/h (the rules say {from} {}/h) — accept the new price?",
            self.provider_name, self.currency
        );
        let mut params = vec![
            ("provider", self.provider_key()),
            ("from", from),
            ("to", held.to_owned()),
            ("currency", currency),
            ("since", since.to_rfc3339()),
        ];
        if let Some(gpus) = link.held_gpu_count {
            params.push(("gpus", gpus.to_string()));
        }
        self.warn(codes::PRICE_HELD, message, &params);
        Ok(())
    }

    fn currency_differs(&mut self, rules: Option<&BillingRules>) {
        let Some(link) = self.known.link else {
            return;
        };
        let (Some(price), Some(their)) = (
            link.provider_price_per_hour.as_deref(),
            link.provider_currency.as_deref(),
        ) else {
            return;
        };
        if their.eq_ignore_ascii_case(&self.currency) {
            return;
        }
        let ours = rules
            .and_then(|r| r.compute_rate().ok())
            .map(|r| display_rate(r).to_string())
            .unwrap_or_default();
        let message = format!(
            "{} bills {price} {their}/h; the rules are in {} ({ours} {}/h) and were left as they are",
            self.provider_name, self.currency, self.currency
        );
        let params = [
            ("provider", self.provider_key()),
            ("provider_price", price.to_owned()),
            ("provider_currency", their.to_owned()),
            ("price", ours),
            ("currency", self.currency.clone()),
        ];
        self.warn(codes::CURRENCY_DIFFERS, message, &params);
    }

    fn gpu_count(
        &mut self,
        rules: Option<&BillingRules>,
        running_since: DateTime<Utc>,
    ) -> Result<(), BillingError> {
        let (Some(look), Some(rules)) = (self.known.monitor, rules) else {
            return Ok(());
        };
        if look.gpus == 0
            || look.gpus == rules.gpu_count
            || look.at < running_since - Duration::minutes(1)
            || self.now - look.at > GPU_LOOK_FRESH
        {
            return Ok(());
        }
        let price = engine::mul(
            "hourly rate",
            rules.price_per_gpu_hour,
            Decimal::from(look.gpus),
        )?;
        let price = display_rate(price).to_string();
        let message = format!(
            "this machine has {} GPUs; the rental says {} — update to {} ({price} {}/h)?",
            look.gpus, rules.gpu_count, look.gpus, self.currency
        );
        let params = [
            ("seen", look.gpus.to_string()),
            ("recorded", rules.gpu_count.to_string()),
            ("price", price),
            ("currency", self.currency.clone()),
        ];
        self.warn(codes::GPU_COUNT_DIFFERS, message, &params);
        Ok(())
    }

    fn watchdog(&mut self, since: DateTime<Utc>) {
        let Some(look) = self.known.watchdog else {
            return;
        };
        if !look.installed || look.looked_at < since {
            return;
        }
        let unreadable = look.unreadable_signals();
        if look.running && !unreadable.is_empty() {
            let signals = unreadable.join(", ");
            let message = format!(
                "the watchdog cannot read {signals}: it counts that as busy and will never power this instance off"
            );
            self.warn(
                codes::WATCHDOG_NOT_PROTECTING,
                message,
                &[("signals", unreadable.join(","))],
            );
        } else if !look.running && look.phase.as_deref() != Some("powered_off") {
            self.warn(
                codes::WATCHDOG_NOT_RUNNING,
                "the watchdog is installed but not running: nothing powers this instance off when idle".to_owned(),
                &[],
            );
        }
    }

    fn price_unusual(&mut self) {
        let Some(flag) = self.known.price_flag.cloned() else {
            return;
        };
        let currency = self.currency.clone();
        let (message, params) = match flag {
            PriceWarning::FarFromEarlier { earlier, currency, times } => (
                format!("the price is {times}× what you paid for this GPU before ({earlier} {currency}/h)"),
                vec![("kind", "far_from_earlier".to_owned()), ("earlier", earlier.to_string()), ("currency", currency), ("times", times.to_string())],
            ),
            PriceWarning::FarFromMarket { low, high, offers, times, .. } => (
                format!("the price is {times}× outside what the market offers this GPU for now ({low} to {high} {currency}/h, {offers} offers)"),
                vec![("kind", "far_from_market".to_owned()), ("low", low.to_string()), ("high", high.to_string()), ("offers", offers.to_string()), ("times", times.to_string()), ("currency", currency)],
            ),
            PriceWarning::PaysForTheCard { card_price, hours, .. } => (
                format!("at this price renting pays for the card itself ({card_price} {currency}) in {hours} hours: check for a typo"),
                vec![("kind", "pays_for_the_card".to_owned()), ("card_price", card_price.to_string()), ("hours", hours.to_string()), ("currency", currency)],
            ),
            PriceWarning::OverBudget { planned_cost, budget } => (
                format!("the planned hours cost {planned_cost} {currency}, more than the budget of {budget} {currency}"),
                vec![("kind", "over_budget".to_owned()), ("planned_cost", planned_cost.to_string()), ("budget", budget.to_string()), ("currency", currency)],
            ),
            // The provider's currency has its own warning (`currency_differs`).
            PriceWarning::CurrencyDiffers { .. } => return,
        };
        let params: Vec<(&str, String)> = params;
        self.warn(codes::PRICE_UNUSUAL, message, &params);
    }

    fn import_warning(&mut self) {
        let Some(note) = self.known.link.and_then(|l| l.import_warning.clone()) else {
            return;
        };
        let message = format!("the import needs a look: {note}");
        self.warn(codes::IMPORT_NEEDS_LOOK, message, &[("note", note)]);
    }
}

/// What each source said, oldest first.
fn facts(
    known: &Known<'_>,
    costing: &Costing,
    ledger: InstanceState,
    ledger_since: DateTime<Utc>,
) -> Vec<Fact> {
    let mut facts = vec![Fact {
        source: FactSource::Ledger,
        says: format!("recorded as {}", ledger.as_str()),
        at: costing.released_at.unwrap_or(ledger_since),
    }];
    if let Some(link) = known.link {
        let says = match (link.missing_since, listed_word(&link.remote_state)) {
            (Some(_), _) => "no longer lists it".to_owned(),
            (None, Some(word)) => format!("lists it as {word}"),
            (None, None) if link.remote_state == "gone" => "says it is released".to_owned(),
            (None, None) => "no longer lists it".to_owned(),
        };
        facts.push(Fact {
            source: FactSource::Provider,
            says,
            at: link.missing_since.unwrap_or(link.seen_at),
        });
        if let (Some(held), Some(at)) = (&link.held_price_per_hour, link.held_since) {
            let currency = link.held_currency.as_deref().unwrap_or("");
            facts.push(Fact {
                source: FactSource::Provider,
                says: format!("bills {held} {currency}/h").replace(" /h", "/h"),
                at,
            });
        }
    }
    if let Some(check) = known.stop_check {
        facts.push(Fact {
            source: if check.via == "api" {
                FactSource::Provider
            } else {
                FactSource::Ssh
            },
            says: if check.answered {
                "it still answered after the stop".to_owned()
            } else {
                "no answer after the stop".to_owned()
            },
            at: check.checked_at,
        });
    }
    if let Some(look) = known.monitor {
        facts.push(Fact {
            source: FactSource::Monitor,
            says: format!(
                "{} GPUs, the busiest at {} %",
                look.gpus, look.busiest_percent
            ),
            at: look.at,
        });
    }
    if let Some(look) = known.watchdog {
        let unreadable = look.unreadable_signals();
        let says = match (look.installed, look.running) {
            (false, _) => "not installed".to_owned(),
            (true, false) => "installed, not running".to_owned(),
            (true, true) if unreadable.is_empty() => "running, every signal read".to_owned(),
            (true, true) => format!("running, cannot read {}", unreadable.join(", ")),
        };
        facts.push(Fact {
            source: FactSource::Watchdog,
            says,
            at: look.looked_at,
        });
    }
    if let Some(at) = known.last_backup {
        facts.push(Fact {
            source: FactSource::Backup,
            says: "last backup finished".to_owned(),
            at,
        });
    }
    facts.sort_by_key(|f| f.at);
    facts
}
