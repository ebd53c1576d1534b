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
