//! The background market refresh: every [`EVERY`] while the app runs, each provider's offers
//! are fetched (core `market::refresh`, which keeps the last good offers and backs off after
//! failures and 429s), then the market alerts that now hold are sent to the saved webhooks
//! (core `market::alerts::fire_due`, at most once an hour each). The window hears of it
//! through the `market-refreshed` event (Choose GPU reloads its offers).

use std::time::Duration;

use leasehold_core::account::Endpoints;
use leasehold_core::market;
use tauri::{Emitter, Manager};

use crate::state::AppState;

pub const EVERY: Duration = Duration::from_secs(15 * 60);
pub const MARKET_REFRESHED_EVENT: &str = "market-refreshed";

/// Start the refresh loop (once the database is open); the first refresh runs at once.
pub fn start(app: tauri::AppHandle) {
    tauri::async_runtime::spawn(async move {
        let mut ticker = tokio::time::interval(EVERY);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticker.tick().await;
            let Some(state) = app.try_state::<AppState>() else {
                continue;
            };
            // A refused base URL is said where the user asks for a refresh; here it only waits.
            let Ok(endpoints) = Endpoints::checked_from_env() else {
                continue;
            };
            match market::refresh(&state.store, &endpoints, None, state.now()).await {
                Ok(report) => {
                    for failed in report.providers.iter().filter(|p| p.error.is_some()) {
                        tracing::info!(
                            provider = failed.provider.as_str(),
                            "market refresh failed; earlier offers kept"
                        );
                    }
                }
                Err(err) => {
                    tracing::warn!(%err, "market refresh failed");
                    continue;
                }
            }
            match market::alerts::fire_due(&state.store, state.now()).await {
                Ok(hits) if !hits.is_empty() => {
                    tracing::info!(alerts = hits.len(), "market alerts sent");
                }
                Ok(_) => {}
                Err(err) => tracing::warn!(%err, "market alerts could not be checked"),
            }
            if let Err(err) = app.emit(MARKET_REFRESHED_EVENT, ()) {
                tracing::debug!(%err, "no window to tell");
            }
        }
    });
}
