//! The market's actions that reach the providers: a refresh on demand (and the alerts it sets
//! off), the review's defaults, and renting an offer.

use super::{ActionError, Context};
use crate::account::Provider;
use crate::market::alerts::{self, RefreshRound};
use crate::market::rent::{self, RentDefaults, RentRequest, Rented};

/// Fetch the offers of `only` one provider, or of every one, then fire the price alerts that
/// now hold (told once an hour, webhooks too): what the Refresh button and `market refresh` do.
pub async fn refresh(
    context: &Context<'_>,
    only: Option<Provider>,
) -> Result<RefreshRound, ActionError> {
    let endpoints = context.endpoints()?;
    Ok(alerts::refresh_and_fire(context.store, &endpoints, only, context.now()).await?)
}

/// What renting on `provider` starts from: its image and disk, and this user's public key.
pub fn rent_defaults(provider: Provider) -> RentDefaults {
    rent::defaults(provider, crate::paths::home_dir().as_deref())
}

/// Rent the offer and record it as created; nothing is recorded when the provider refuses.
pub async fn rent(context: &Context<'_>, request: &RentRequest) -> Result<Rented, ActionError> {
    let endpoints = context.endpoints()?;
    Ok(rent::rent(context.store, &endpoints, request, context.now()).await?)
}
