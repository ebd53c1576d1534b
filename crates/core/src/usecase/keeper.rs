//! The keeper's actions that take more than one step: a power-on hunt started, the two-stage
//! policy set from the form.

use std::time::Duration;

use rust_decimal::Decimal;

use super::ActionError;
use crate::account::Endpoints;
use crate::keeper::{self, HuntLimits, HuntReport, Policy, PolicyChange, Stage};

use super::Context;

/// Start (or pick up) the power-on hunt on `instance`, at most `for_minutes` long and within
/// `max_spend`, then hand the endpoints to `run_loop`, which runs the hunt in the background
/// (one loop per instance: starting one that runs already only answers where it stands).
pub async fn start_hunt(
    context: &Context<'_>,
    instance: &str,
    for_minutes: Option<u64>,
    max_spend: Option<Decimal>,
    run_loop: impl FnOnce(Endpoints),
) -> Result<HuntReport, ActionError> {
    let mut limits = HuntLimits::default();
    if let Some(minutes) = for_minutes {
        limits.for_at_most = Duration::from_secs(minutes.saturating_mul(60));
    }
    limits.max_spend = max_spend;
    let endpoints = Endpoints::checked_from_env()?;
    let row = keeper::start(context.store, instance, limits, context.now()).await?;
    run_loop(endpoints);
    Ok(HuntReport::from_row(instance, &row))
}

/// The policy form as the user left it: a stage left empty is cleared; the bid cap stays.
#[derive(Debug, Clone, Copy)]
pub struct PolicyForm {
    pub stop_after_idle_minutes: Option<u64>,
    pub release_after_stopped_days: Option<u64>,
    pub auto_release: bool,
    pub off: bool,
}

/// Set an instance's policy (or the default one, `instance` `None`) as the form shows it.
pub async fn set_policy(
    context: &Context<'_>,
    instance: Option<&str>,
    form: PolicyForm,
) -> Result<Policy, ActionError> {
    let change = PolicyChange {
        stop_after_idle: Stage::from_form(
            form.stop_after_idle_minutes
                .map(|m| Duration::from_secs(m.saturating_mul(60))),
        ),
        release_after_stopped: Stage::from_form(
            form.release_after_stopped_days
                .map(|d| Duration::from_secs(d.saturating_mul(86_400))),
        ),
        auto_release: Some(form.auto_release),
        off: Some(form.off),
        bid_cap: None,
    };
    Ok(keeper::set_policy(context.store, instance, change, context.now()).await?)
}
