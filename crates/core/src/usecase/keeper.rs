//! The keeper's actions: a power-on hunt started, the two-stage policy set from the form, the
//! bid cap, a stopped instance kept alive, and Vast.ai's bids and price increases, each asked of
//! the provider where the context says it answers.

use std::time::Duration;

use rust_decimal::Decimal;

use super::ActionError;
use crate::account::vast_bid::{BidState, PriceIncrease};
use crate::account::{Backoff, Endpoints};
use crate::keeper::vast::{BidReport, IncreaseReport};
use crate::keeper::{
    self, HuntDeps, HuntLimits, HuntReport, KeepAliveReport, Policy, PolicyChange, Stage,
    TokioSleeper,
};
use crate::stop::StopWait;

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
    let endpoints = context.endpoints()?;
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

/// The highest bid [`bid`] may place on this Vast.ai rental; the rest of its policy stays.
pub async fn set_bid_cap(
    context: &Context<'_>,
    instance: &str,
    bid_cap: Decimal,
) -> Result<Policy, ActionError> {
    let change = PolicyChange {
        bid_cap: Some(bid_cap),
        ..PolicyChange::default()
    };
    Ok(keeper::set_policy(context.store, Some(instance), change, context.now()).await?)
}

/// How long keeping alive waits for the provider to say the instance is off again, and how
/// often it asks: a provider takes a minute or two to power a GPU box off.
const KEEP_ALIVE_WAIT: StopWait = StopWait {
    limit: Duration::from_secs(180),
    every: Duration::from_secs(2),
    command_limit: Duration::from_secs(20),
};

/// Power a stopped instance on and off again so the provider's clean-up starts over, at no more
/// than `accepted_cost` (the quote the user saw; nothing is done if it costs more now).
pub async fn keep_alive(
    context: &Context<'_>,
    instance: &str,
    accepted_cost: Decimal,
) -> Result<KeepAliveReport, ActionError> {
    let endpoints = context.endpoints()?;
    let deps = HuntDeps {
        endpoints: &endpoints,
        backoff: Backoff::default(),
        wait: KEEP_ALIVE_WAIT,
        clock: context.clock,
        sleeper: &TokioSleeper,
    };
    Ok(keeper::keep_alive(context.store, instance, accepted_cost, &deps).await?)
}

/// Whether a Vast.ai interruptible rental was outbid.
pub async fn vast_look(context: &Context<'_>, instance: &str) -> Result<BidState, ActionError> {
    let endpoints = context.endpoints()?;
    let look = keeper::vast::look(
        context.store,
        instance,
        &endpoints,
        Backoff::default(),
        context.now(),
    );
    Ok(look.await?)
}

/// Change the bid of a Vast.ai interruptible rental to `price` per GPU-hour.
pub async fn bid(
    context: &Context<'_>,
    instance: &str,
    price: Decimal,
) -> Result<BidReport, ActionError> {
    let endpoints = context.endpoints()?;
    let bid = keeper::vast::bid(
        context.store,
        instance,
        price,
        &endpoints,
        Backoff::default(),
        context.now(),
    );
    Ok(bid.await?)
}

/// The host's pending price increase on a Vast.ai rental, if any; nothing is answered.
pub async fn pending_increase(
    context: &Context<'_>,
    instance: &str,
) -> Result<Option<PriceIncrease>, ActionError> {
    let endpoints = context.endpoints()?;
    let pending = keeper::vast::pending_increase(
        context.store,
        instance,
        &endpoints,
        Backoff::default(),
        context.now(),
    );
    Ok(pending.await?)
}

/// Accept or reject the host's pending price increase on a Vast.ai rental.
pub async fn answer_increase(
    context: &Context<'_>,
    instance: &str,
    accept: bool,
) -> Result<IncreaseReport, ActionError> {
    let endpoints = context.endpoints()?;
    let answer = keeper::vast::answer_increase(
        context.store,
        instance,
        accept,
        &endpoints,
        Backoff::default(),
        context.now(),
    );
    Ok(answer.await?)
}
