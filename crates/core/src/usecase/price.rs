//! The second look at a typed price (New rental's review): against what this user paid before
//! for the card and what the market offers it for now. The check itself is
//! [`crate::price_check`]; this gathers what it compares with.

use super::{ActionError, Context};
use crate::price_check::{price_check, PriceCheck, PriceCheckInput};

/// [`price_check`] of `input` against the rentals in the store and the market's live prices.
pub async fn check(cx: &Context<'_>, input: &PriceCheckInput) -> Result<PriceCheck, ActionError> {
    let now = cx.clock.now();
    let earlier = crate::catalog::recommend::earlier_prices(cx.store, now).await?;
    // A market that cannot be read only leaves its band out; the other checks still speak.
    let live = crate::market::snapshot::live_prices(cx.store, now)
        .await
        .unwrap_or_else(|err| {
            tracing::warn!(%err, "market prices left out of the price check");
            Vec::new()
        });
    Ok(price_check(input, &earlier, &live))
}
