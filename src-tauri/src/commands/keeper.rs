//! The keeper's commands: power-on hunts, the clean-up deadline kept alive, the two-stage
//! policy, Vast.ai bids and price increases. Each one call into `leasehold_core::keeper` or its
//! use cases.

use leasehold_core::account::vast_bid::{BidState, PriceIncrease};
use leasehold_core::keeper::{
    self, vast::BidReport, vast::IncreaseReport, HuntReport, KeepAliveQuote, KeepAliveReport, Kept,
    Policy,
};
use leasehold_core::usecase::{self, keeper::PolicyForm};
use leasehold_core::ApiError;
use rust_decimal::Decimal;
use tracing::instrument;

use crate::state::AppState;

/// Every instance the keeper looks after, with its hunt, deadline, policy and next step.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn keeper_list(state: tauri::State<'_, AppState>) -> Result<Vec<Kept>, ApiError> {
    Ok(keeper::list(&state.store, state.clock.now()).await?)
}

/// Start (or pick up) the power-on hunt and run it in the background; the answer is where it
/// stands now, `keeper_list` follows it.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn keeper_hunt_start(
    state: tauri::State<'_, AppState>,
    instance: String,
    for_minutes: Option<u64>,
    max_spend: Option<Decimal>,
) -> Result<HuntReport, ApiError> {
    let run_loop = |endpoints| {
        let (store, clock) = (state.store.clone(), state.clock.clone());
        state.hunts.spawn(store, clock, endpoints, instance.clone());
    };
    let context = state.context();
    Ok(usecase::keeper::start_hunt(&context, &instance, for_minutes, max_spend, run_loop).await?)
}

#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn keeper_hunt_stop(
    state: tauri::State<'_, AppState>,
    instance: String,
) -> Result<(), ApiError> {
    Ok(keeper::stop(&state.store, &instance, state.clock.now()).await?)
}

/// Set an instance's policy (or the default one, `instance` null) as the form shows it: a stage
/// left null is cleared; the bid cap stays as it was.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn keeper_set_policy(
    state: tauri::State<'_, AppState>,
    instance: Option<String>,
    stop_after_idle_minutes: Option<u64>,
    release_after_stopped_days: Option<u64>,
    auto_release: bool,
    off: bool,
) -> Result<Policy, ApiError> {
    let form = PolicyForm {
        stop_after_idle_minutes,
        release_after_stopped_days,
        auto_release,
        off,
    };
    Ok(usecase::keeper::set_policy(&state.context(), instance.as_deref(), form).await?)
}

/// The highest bid `keeper_bid` may place on this Vast.ai rental; the rest of its policy stays.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn keeper_set_bid_cap(
    state: tauri::State<'_, AppState>,
    instance: String,
    bid_cap: Decimal,
) -> Result<Policy, ApiError> {
    Ok(usecase::keeper::set_bid_cap(&state.context(), &instance, bid_cap).await?)
}

/// What keeping a stopped instance alive costs, before anything is done.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn keeper_keep_alive_quote(
    state: tauri::State<'_, AppState>,
    instance: String,
) -> Result<KeepAliveQuote, ApiError> {
    Ok(keeper::quote(&state.store, &instance, state.clock.now()).await?)
}

/// Power it on and off again at no more than the accepted cost.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn keeper_keep_alive(
    state: tauri::State<'_, AppState>,
    instance: String,
    accepted_cost: Decimal,
) -> Result<KeepAliveReport, ApiError> {
    Ok(usecase::keeper::keep_alive(&state.context(), &instance, accepted_cost).await?)
}

/// Whether a Vast.ai interruptible instance was outbid.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn keeper_vast_look(
    state: tauri::State<'_, AppState>,
    instance: String,
) -> Result<BidState, ApiError> {
    Ok(usecase::keeper::vast_look(&state.context(), &instance).await?)
}

#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn keeper_bid(
    state: tauri::State<'_, AppState>,
    instance: String,
    price: Decimal,
) -> Result<BidReport, ApiError> {
    Ok(usecase::keeper::bid(&state.context(), &instance, price).await?)
}

#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn keeper_price_increase(
    state: tauri::State<'_, AppState>,
    instance: String,
    accept: bool,
) -> Result<IncreaseReport, ApiError> {
    Ok(usecase::keeper::answer_increase(&state.context(), &instance, accept).await?)
}

/// The host's pending price increase on a Vast.ai rental, if any; nothing is answered.
#[tauri::command]
#[instrument(skip(state), err(Debug))]
pub async fn keeper_price_increase_look(
    state: tauri::State<'_, AppState>,
    instance: String,
) -> Result<Option<PriceIncrease>, ApiError> {
    Ok(usecase::keeper::pending_increase(&state.context(), &instance).await?)
}
