//! A rental to record and the power changes the user records, with every check that needs no
//! database: the CLI and the app run them before opening the store, so bad input leaves no trace.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::events::EventKind;
use super::money::Currency;
use super::presets::ProviderKey;
use super::rules::{at_most, limits, BillingRules};
use super::BillingError;

/// A rental to record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct NewInstance {
    pub name: String,
    /// Provider preset key (`bingxing`, `autodl`, `hengyuan`, `kuhu`, `runpod`, `vast`, `lambda`,
    /// `aliyun`, `tencent`, `huawei`, `aws`, `gcp`, `custom`).
    pub provider: String,
    pub region: Option<String>,
    pub gpu_model: String,
    /// ISO 4217 code; every amount of this instance is in it.
    pub currency: String,
    pub notes: Option<String>,
    #[ts(type = "string | null")]
    pub planned_hours: Option<Decimal>,
    #[ts(type = "string | null")]
    pub budget: Option<Decimal>,
    pub rules: BillingRules,
}

/// Longest instance name we accept; names are labels, not essays.
const MAX_NAME_CHARS: usize = 100;

impl NewInstance {
    /// Every check that needs no database: callers run it before opening the store so bad
    /// input leaves no trace at all.
    pub fn validate(&self) -> Result<Currency, BillingError> {
        let (currency, _) = validate_described(
            &self.name,
            &self.provider,
            &self.gpu_model,
            &self.currency,
            self.planned_hours,
        )?;
        if let Some(budget) = self.budget {
            validate_budget(budget)?;
        }
        self.rules.validate()?;
        Ok(currency)
    }
}

/// The instance's own fields as [`NewInstance::validate`] checks them; an instance pulled from
/// the team passes the same checks before it is written here.
pub(crate) fn validate_described(
    name: &str,
    provider: &str,
    gpu_model: &str,
    currency: &str,
    planned_hours: Option<Decimal>,
) -> Result<(Currency, ProviderKey), BillingError> {
    validate_name(name)?;
    let provider = ProviderKey::parse(provider)?;
    if gpu_model.trim().is_empty() {
        return Err(BillingError::InvalidInput {
            field: "gpu_model",
            reason: "name the GPU model, e.g. \"RTX 4090\"".into(),
        });
    }
    let currency = Currency::parse(currency)?;
    if let Some(hours) = planned_hours {
        if hours <= Decimal::ZERO {
            return Err(BillingError::InvalidInput {
                field: "planned_hours",
                reason: format!("planned hours must be greater than zero (got {hours})"),
            });
        }
        at_most("planned_hours", hours, limits::MAX_HOURS)?;
    }
    Ok((currency, provider))
}

fn validate_name(name: &str) -> Result<(), BillingError> {
    let trimmed = name.trim();
    let reason = if trimmed.is_empty() {
        "the name is empty"
    } else if trimmed != name {
        "the name starts or ends with spaces"
    } else if name.chars().count() > MAX_NAME_CHARS {
        "the name is longer than 100 characters"
    } else if name.chars().any(char::is_control) {
        "the name contains control characters"
    } else {
        return Ok(());
    };
    Err(BillingError::InvalidInput {
        field: "name",
        reason: reason.into(),
    })
}

pub(crate) fn validate_budget(budget: Decimal) -> Result<(), BillingError> {
    if budget <= Decimal::ZERO {
        return Err(BillingError::InvalidInput {
            field: "budget",
            reason: format!("a budget must be greater than zero (got {budget})"),
        });
    }
    at_most("budget", budget, limits::MAX_AMOUNT)
}

/// A power or lifecycle change the user records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum PowerAction {
    Start,
    Stop,
    NoGpu,
    Release,
}

impl PowerAction {
    pub(crate) fn event(self) -> EventKind {
        match self {
            Self::Start => EventKind::Started,
            Self::Stop => EventKind::Stopped,
            Self::NoGpu => EventKind::NoGpuStarted,
            Self::Release => EventKind::Released,
        }
    }
}
