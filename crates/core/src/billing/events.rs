//! The ledger's events and the state machine they drive.
//!
//! An instance's whole billing history is its event list; states and costs are derived from it
//! and never stored. `record` is the one gate every new event passes: time order, a valid
//! transition, nothing after release.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::rules::{non_negative, BillingRules};
use super::BillingError;

/// What happened to the instance. `Created` and `RuleChanged` carry the rules in effect from
/// that moment on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventKind {
    Created(Box<BillingRules>),
    Started,
    Stopped,
    NoGpuStarted,
    Released,
    RuleChanged(Box<BillingRules>),
    /// Traffic the user read off the provider's console, charged at the rules' price per GB.
    TrafficRecorded(Decimal),
}

impl EventKind {
    pub fn name(&self) -> &'static str {
        match self {
            Self::Created(_) => "created",
            Self::Started => "started",
            Self::Stopped => "stopped",
            Self::NoGpuStarted => "no_gpu_started",
            Self::Released => "released",
            Self::RuleChanged(_) => "rule_changed",
            Self::TrafficRecorded(_) => "traffic_recorded",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerEvent {
    pub at: DateTime<Utc>,
    pub kind: EventKind,
}

impl LedgerEvent {
    pub fn new(at: DateTime<Utc>, kind: EventKind) -> Self {
        Self { at, kind }
    }
}

/// Where an instance stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum InstanceState {
    /// Created, not yet powered on by the user. Billed like running when billing starts at
    /// creation (providers create instances powered on), free otherwise.
    Created,
    Running,
    /// Powered on without GPU (AutoDL's 无卡模式): its own rate.
    NoGpu,
    Stopped,
    Released,
}

impl InstanceState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Created => "created",
            Self::Running => "running",
            Self::NoGpu => "no_gpu",
            Self::Stopped => "stopped",
            Self::Released => "released",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Self::Created => "created",
            Self::Running => "running",
            Self::NoGpu => "in no-GPU mode",
            Self::Stopped => "stopped",
            Self::Released => "released",
        }
    }
}

/// The state after `event`, or why `event` cannot follow. `state` is `None` before creation;
/// `rules` are those in effect just before `event`.
pub fn next_state(
    state: Option<InstanceState>,
    rules: Option<&BillingRules>,
    event: &EventKind,
) -> Result<InstanceState, BillingError> {
    use InstanceState as S;
    let kind = event.name();
    let Some(state) = state else {
        return match event {
            EventKind::Created(rules) => {
                rules.validate()?;
                Ok(S::Created)
            }
            _ => Err(BillingError::NotCreated { kind }),
        };
    };
    let invalid = || BillingError::InvalidTransition {
        kind,
        state: state.describe(),
    };
    match (event, state) {
        (_, S::Released) => Err(invalid()),
        (EventKind::Created(_), _) => Err(invalid()),
        (EventKind::Started, S::Running) => Err(invalid()),
        (EventKind::Started, _) => Ok(S::Running),
        (EventKind::Stopped, S::Stopped) => Err(invalid()),
        (EventKind::Stopped, _) => Ok(S::Stopped),
        (EventKind::NoGpuStarted, S::NoGpu) => Err(invalid()),
        (EventKind::NoGpuStarted, _) => match rules.and_then(|r| r.no_gpu_rate) {
            Some(_) => Ok(S::NoGpu),
            None => Err(BillingError::NoGpuUnavailable),
        },
        (EventKind::Released, _) => Ok(S::Released),
        (EventKind::RuleChanged(new_rules), _) => {
            new_rules.validate()?;
            if state == S::NoGpu && new_rules.no_gpu_rate.is_none() {
                return Err(BillingError::NoGpuUnavailable);
            }
            Ok(state)
        }
        (EventKind::TrafficRecorded(gb), _) => {
            non_negative("traffic_gb", *gb)?;
            Ok(state)
        }
    }
}

/// The state and rules reached after replaying `events`, checking each step.
#[derive(Debug, Clone)]
pub struct Replay<'a> {
    pub state: Option<InstanceState>,
    pub rules: Option<&'a BillingRules>,
    pub created_at: Option<DateTime<Utc>>,
    pub last: Option<(&'static str, DateTime<Utc>)>,
    pub released_at: Option<DateTime<Utc>>,
}

impl<'a> Replay<'a> {
    pub fn new() -> Self {
        Self {
            state: None,
            rules: None,
            created_at: None,
            last: None,
            released_at: None,
        }
    }

    /// Replay a whole stored ledger, checking every step.
    pub fn of(events: &'a [LedgerEvent]) -> Result<Self, BillingError> {
        let mut replay = Self::new();
        for event in events {
            replay.apply(event)?;
        }
        Ok(replay)
    }

    /// Check that `event` may follow what was replayed so far, then apply it.
    pub fn apply(&mut self, event: &'a LedgerEvent) -> Result<(), BillingError> {
        self.check(event)?;
        self.state = Some(next_state(self.state, self.rules, &event.kind)?);
        match &event.kind {
            EventKind::Created(rules) => {
                self.rules = Some(rules);
                self.created_at = Some(event.at);
            }
            EventKind::RuleChanged(rules) => self.rules = Some(rules),
            EventKind::Released => self.released_at = Some(event.at),
            _ => {}
        }
        self.last = Some((event.kind.name(), event.at));
        Ok(())
    }

    /// Everything but the state transition: release, creation time and time order.
    fn check(&self, event: &LedgerEvent) -> Result<(), BillingError> {
        let kind = event.kind.name();
        if let Some(released_at) = self.released_at {
            return Err(BillingError::AfterRelease { released_at });
        }
        if let Some(created_at) = self.created_at {
            if event.at < created_at {
                return Err(BillingError::BeforeCreation {
                    kind,
                    at: event.at,
                    created_at,
                });
            }
        }
        if let Some((last_kind, last_at)) = self.last {
            if event.at < last_at {
                return Err(BillingError::OutOfOrder {
                    kind,
                    at: event.at,
                    last_kind,
                    last_at,
                });
            }
        }
        Ok(())
    }
}

impl Default for Replay<'_> {
    fn default() -> Self {
        Self::new()
    }
}

/// A ledger split into the events the bill is computed from and those the state machine refuses.
///
/// One laptop never stores a refused event (`record` checks first), but a team's merged log can
/// hold two that were each valid where they were recorded: two members who both released the
/// instance, or both started it, while offline. The merged log is replayed in one canonical order
/// on every laptop (time, then member, then the recording laptop's own order), the refused events
/// are left out of the bill the same way everywhere, and [`Settled::refused`] says which they
/// were so the user is shown them; none is dropped from the ledger.
#[derive(Debug)]
pub struct Settled {
    pub accepted: Vec<LedgerEvent>,
    /// Position in the replayed list and why the replay refused it.
    pub refused: Vec<(usize, BillingError)>,
}

/// Whether two members' valid logs can produce this refusal when merged (a second release, a
/// start of a running instance, an event before a creation seen through a skewed clock), as
/// opposed to a stored value this version refuses outright (invalid rules, an overflow).
fn is_merge_conflict(err: &BillingError) -> bool {
    matches!(
        err,
        BillingError::InvalidTransition { .. }
            | BillingError::AfterRelease { .. }
            | BillingError::NoGpuUnavailable
            | BillingError::NotCreated { .. }
            | BillingError::BeforeCreation { .. }
            // The canonical order sorts by time, so only a time this version reads differently
            // from the laptop that recorded it lands here: one event, not the whole ledger.
            | BillingError::OutOfOrder { .. }
    )
}

/// Replay `events` (in canonical order), keeping what the state machine accepts. A stored value
/// refused for itself (invalid rules, an amount out of range) fails the whole ledger as before.
pub fn settle(events: Vec<LedgerEvent>) -> Result<Settled, BillingError> {
    let mut refused = Vec::new();
    {
        let mut replay = Replay::new();
        for (index, event) in events.iter().enumerate() {
            // `apply` checks before it changes anything, so a refused event leaves no trace.
            if let Err(err) = replay.apply(event) {
                if !is_merge_conflict(&err) {
                    return Err(err);
                }
                refused.push((index, err));
            }
        }
    }
    if refused.is_empty() {
        return Ok(Settled {
            accepted: events,
            refused,
        });
    }
    let mut skip = refused.iter().map(|(index, _)| *index).peekable();
    let accepted = events
        .into_iter()
        .enumerate()
        .filter_map(|(index, event)| {
            if skip.peek() == Some(&index) {
                skip.next();
                None
            } else {
                Some(event)
            }
        })
        .collect();
    Ok(Settled { accepted, refused })
}

#[cfg(test)]
mod settle_tests {
    use super::*;
    use crate::billing::rules::BillingRules;
    use chrono::TimeZone;

    fn at(hour: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, 1, hour, 0, 0).unwrap()
    }

    #[test]
    fn a_second_release_is_refused_and_the_rest_is_kept() {
        let rules = BillingRules::simple(rust_decimal::Decimal::ONE, 1);
        let events = vec![
            LedgerEvent::new(at(1), EventKind::Created(Box::new(rules))),
            LedgerEvent::new(at(2), EventKind::Started),
            LedgerEvent::new(at(3), EventKind::Released),
            LedgerEvent::new(at(4), EventKind::Released),
        ];
        let settled = settle(events).unwrap();
        assert_eq!(settled.accepted.len(), 3, "the first release stands");
        assert_eq!(settled.refused.len(), 1, "the second release is reported");
        assert_eq!(settled.refused[0].0, 3, "by its position in the merged log");
    }

    #[test]
    fn a_valid_log_is_accepted_whole() {
        let rules = BillingRules::simple(rust_decimal::Decimal::ONE, 1);
        let events = vec![
            LedgerEvent::new(at(1), EventKind::Created(Box::new(rules))),
            LedgerEvent::new(at(2), EventKind::Started),
            LedgerEvent::new(at(3), EventKind::Stopped),
        ];
        let settled = settle(events.clone()).unwrap();
        assert_eq!(settled.accepted, events);
        assert!(settled.refused.is_empty());
    }
}
