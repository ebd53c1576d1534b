//! "Keep it alive": power a stopped instance on and off again through the provider's API, so
//! its clean-up clock (AutoDL: 15 days stopped) starts over. AutoDL powers on only with a GPU,
//! so this bills: [`quote`] says what before anything is done, and [`keep_alive`] refuses when
//! the price it would pay now is more than the user accepted.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::account::PowerVerb;
use crate::billing::{ledger, InstanceState};
use crate::stop;

use super::hunt::HuntDeps;
use super::KeeperError;
use crate::store::Store;

/// How long the instance stays on: the power-on confirmed, then powered off at once. Billing
/// is by the provider's unit, so at least one unit is paid.
pub const ON_FOR_SECONDS: i64 = 60;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct KeepAliveQuote {
    pub instance: String,
    /// When the provider wipes it if nothing is done.
    pub wipe_at: DateTime<Utc>,
    /// What powering it on and off again costs (at least one billing unit on).
    #[ts(type = "string")]
    pub cost: Decimal,
    pub currency: String,
    #[ts(type = "number")]
    pub billed_seconds: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct KeepAliveReport {
    pub instance: String,
    pub powered_on_at: Option<DateTime<Utc>>,
    pub powered_off_at: Option<DateTime<Utc>>,
    #[ts(type = "string")]
    pub cost: Decimal,
    pub currency: String,
    /// The provider's clean-up, counted again from the power-off.
    pub wipe_at: Option<DateTime<Utc>>,
}

/// The billed time of being on for [`ON_FOR_SECONDS`] under a billing unit of `unit_seconds`,
/// and what it costs at `hourly`. Pure.
pub fn cost_of(unit_seconds: i64, hourly: Decimal) -> (i64, Decimal) {
    let unit = unit_seconds.max(1);
    let billed = (ON_FOR_SECONDS + unit - 1) / unit * unit;
    let cost = (hourly * Decimal::from(billed) / Decimal::from(3600)).round_dp(4);
    (billed, cost)
}

/// What keeping `name` alive costs now; only for a stopped instance with a clean-up deadline.
pub async fn quote(
    store: &Store,
    name: &str,
    now: DateTime<Utc>,
) -> Result<KeepAliveQuote, KeeperError> {
    let detail = ledger::show(store, name, now).await?;
    let summary = &detail.summary;
    if summary.state != Some(InstanceState::Stopped) {
        return Err(KeeperError::NotStopped {
            name: name.to_owned(),
            state: summary
                .state
                .map_or("not yet created", InstanceState::as_str),
        });
    }
    let wipe_at = summary.wipe_at.ok_or_else(|| KeeperError::NoDeadline {
        name: name.to_owned(),
    })?;
    let hourly = summary.price_per_gpu_hour * Decimal::from(summary.gpu_count);
    let (billed_seconds, cost) = cost_of(detail.rules.granularity.seconds(), hourly);
    Ok(KeepAliveQuote {
        instance: summary.name.clone(),
        wipe_at,
        cost,
        currency: summary.currency.code().to_owned(),
        billed_seconds,
    })
}

/// Power `name` on and off again, when it costs no more than `accepted` (the quote the user
/// saw). Each change is recorded only once the provider confirms it.
pub async fn keep_alive(
    store: &Store,
    name: &str,
    accepted: Decimal,
    deps: &HuntDeps<'_>,
) -> Result<KeepAliveReport, KeeperError> {
    let quote = quote(store, name, deps.clock.now()).await?;
    if quote.cost > accepted {
        return Err(KeeperError::CostChanged {
            name: name.to_owned(),
            cost: quote.cost.to_string(),
            accepted: accepted.to_string(),
            currency: quote.currency,
        });
    }
    let on = stop::power(
        store,
        name,
        PowerVerb::On,
        deps.endpoints,
        deps.backoff,
        deps.wait,
        deps.clock,
    )
    .await?;
    let off = stop::power(
        store,
        name,
        PowerVerb::Off,
        deps.endpoints,
        deps.backoff,
        deps.wait,
        deps.clock,
    )
    .await?;
    let after = ledger::show(store, name, deps.clock.now()).await?.summary;
    Ok(KeepAliveReport {
        instance: quote.instance,
        powered_on_at: on.recorded_at,
        powered_off_at: off.recorded_at,
        cost: quote.cost,
        currency: quote.currency,
        wipe_at: after.wipe_at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    #[test]
    fn at_least_one_billing_unit_is_paid() {
        assert_eq!(cost_of(1, dec!(2.28)), (60, dec!(0.038)));
        assert_eq!(cost_of(60, dec!(2.28)), (60, dec!(0.038)));
        assert_eq!(cost_of(3600, dec!(2.28)), (3600, dec!(2.28)));
    }
}
